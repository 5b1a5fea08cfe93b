"""Runs scenarios on eager's CUDA backend over the recorded CuPy (`recording_cupy`) and prints what
they gave as JSON: `python tests/recorded_gpu_worker.py [--two-gpus]`. `test_recorded_gpu.py`
runs it in a subprocess (the recorded module must be installed before eager first asks for CuPy)
and compares the results with the same scenarios on the CPU (`scenario_values`, run there in the
test's own process)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

LR = 0.1
DIMS = (12, 8, 8, 4)
BATCH = 5


def mlp_data():
    rng = np.random.default_rng(7)
    params = []
    for a, b in zip(DIMS[:-1], DIMS[1:]):
        params += [(rng.standard_normal((a, b)) * 0.3).astype(np.float32),
                   (rng.standard_normal(b) * 0.1).astype(np.float32)]
    x = rng.standard_normal((BATCH, DIMS[0])).astype(np.float32)
    y = np.eye(DIMS[-1], dtype=np.float32)[rng.integers(0, DIMS[-1], BATCH)]
    return params, x, y


def mlp_loss(tf, params, x, y):
    w1, b1, w2, b2, w3, b3 = params
    a1 = tf.nn.relu(tf.matmul(x, w1) + b1)
    a2 = tf.nn.relu(tf.matmul(a1, w2) + b2)
    logits = tf.matmul(a2, w3) + b3
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))


def traced_sgd_step(tf, params):
    """A custom training loop's step as TF's guides write it: `assign_sub(lr * g)`."""

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = mlp_loss(tf, params, x, y)
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(LR * g)
        return loss

    return step


def many_variables(tf):
    """Eleven float32 variables (more than one grouped launch takes), two float64 ones and a
    float16 one (not grouped), of assorted shapes, empty and scalar ones among them."""
    rng = np.random.default_rng(11)
    shapes = [(3, 2), (), (5,), (0,), (2, 2, 2), (7,), (1,), (4, 3), (6,), (2,), (3,)]
    values = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    values += [rng.standard_normal(4), rng.standard_normal((2, 3)),
               rng.standard_normal(5).astype(np.float16)]
    return [tf.Variable(v) for v in values]


def many_gradients(tf, variables, k):
    """Gradients for `many_variables`: distinct per variable and per step `k`; one a transposed
    (non-contiguous) tensor, which takes the per-variable kernel."""
    grads = [tf.constant(np.linspace(-2.0 - k, 3.0 + i, int(np.prod(v.shape))).reshape(v.shape)
                         .astype(v.dtype.as_numpy_dtype)) for i, v in enumerate(variables)]
    grads[7] = tf.transpose(tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4) - k))
    return grads


def eager_sgd_step(tf, params, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = mlp_loss(tf, params, x, y)
    optimizer.apply_gradients(zip(tape.gradient(loss, params), params))
    return loss


def moving_average_step(tf, average, value):
    """Keras' moving-statistics update: an elementwise expression assigned to a variable."""

    @tf.function
    def update():
        average.assign(average * 0.9 + value * 0.1)
        return tf.sigmoid(average) * 2.0 - 1.0

    return update


def recurrence_inputs(tf, seed):
    """`(w, x)` of a recurrence `h = tanh(h w + x)`: a 3x3 variable and a (2, 3) input."""
    rng = np.random.default_rng(seed)
    return (tf.Variable(rng.standard_normal((3, 3)).astype(np.float32) * 0.5),
            tf.constant(rng.standard_normal((2, 3)).astype(np.float32)))


def recurrent_step(tf, n, with_array):
    """A traced step of an `n`-iteration recurrence `h = tanh(h W + x)` and its gradient, the
    loop optionally writing each `h` into a TensorArray (as Keras' RNN layers do)."""
    w, x = recurrence_inputs(tf, 3)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            def body(i, h, out):
                h = tf.tanh(tf.matmul(h, w) + x)
                return i + 1, h, (out.write(i, h) if with_array else out)

            start = tf.TensorArray(tf.float32, size=n) if with_array else tf.constant(0.0)
            _, h, out = tf.while_loop(lambda i, h, out: i < n, body, (0, x, start))
            loss = tf.reduce_sum(h) + (tf.reduce_sum(out.stack() ** 2) if with_array else 0.0)
        return loss, tape.gradient(loss, w)

    return step


def counted_array_loop(tf, n):
    """A traced `n`-iteration recurrence writing each `h` into a TensorArray, whose body also
    counts its iterations in a variable (a stateful op: the body graph's outputs then wait for
    it through control edges); returns (the function, the counter)."""
    rng = np.random.default_rng(5)
    w = tf.Variable(rng.standard_normal((3, 3)).astype(np.float32) * 0.5)
    x = tf.constant(rng.standard_normal((2, 3)).astype(np.float32))
    counter = tf.Variable(0.0)

    @tf.function
    def run():
        def body(i, h, out):
            counter.assign_add(1.0)
            h = tf.tanh(tf.matmul(h, w) + x)
            return i + 1, h, out.write(i, h)

        start = (0, x, tf.TensorArray(tf.float32, size=n))
        _, _, out = tf.while_loop(lambda i, h, out: i < n, body, start)
        return tf.reduce_sum(out.stack() ** 2)

    return run, counter


def condition_loops(tf, n):
    """Traced loops whose condition the host reads at every iteration: a `while_loop` with a
    constant condition stopped by `maximum_iterations`, and a loop over a dataset's `n`
    batches; returns the two functions."""
    x = tf.constant(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
    bounded = tf.function(lambda: tf.while_loop(lambda i, h: True, lambda i, h: (i + 1, h * 0.5),
                                                (0, x), maximum_iterations=n)[1])
    batches = tf.data.Dataset.from_tensor_slices(
        np.arange(n * 6, dtype=np.float32).reshape(n * 2, 3)).batch(2)

    @tf.function
    def summed():
        total = tf.zeros(3)
        for batch in batches:
            total += tf.reduce_sum(batch, axis=0)
        return total

    return bounded, summed


def gradient_penalty_step(tf, n):
    """An eager tape over a traced function that differentiates an `n`-iteration recurrence
    reading a variable (a gradient penalty): the outer tape replays the function's ops, the
    accumulating loop among them."""
    w, x = recurrence_inputs(tf, 7)

    @tf.function
    def penalty():
        with tf.GradientTape() as inner:
            _, h = tf.while_loop(lambda i, h: i < n,
                                 lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w) + x)), (0, x))
            loss = tf.reduce_sum(h)
        g = inner.gradient(loss, w)
        return tf.reduce_sum(g * g)

    def step():
        with tf.GradientTape() as tape:
            value = penalty()
        return value, tape.gradient(value, w)

    return step


def lstm_fit(tf, steps):
    """A Keras LSTM model fitted for one epoch of two batches of `steps`-long sequences; returns
    (the fit, the model)."""
    rng = np.random.default_rng(9)
    sequences = rng.standard_normal((8, steps, 3)).astype(np.float32)
    labels = rng.integers(0, 4, 8)
    tf.keras.utils.set_random_seed(4)
    model = tf.keras.Sequential([tf.keras.Input((steps, 3)), tf.keras.layers.LSTM(5),
                                 tf.keras.layers.Dense(4)])
    model.compile(optimizer="adam",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return (lambda: model.fit(sequences, labels, batch_size=4, epochs=1, verbose=0)), model


def host_int32_values(tf):
    """Small int32 values on the default device (host memory on a GPU) meeting device kernels
    and loops: the same numbers on any device."""
    out = {}
    i = tf.constant(0)
    for _ in range(5):
        i = i + 2
    out["counter"] = [int(i), bool(i < 20), int(tf.maximum(i, 3) // 4)]
    loop = tf.function(lambda x: tf.while_loop(lambda k, x: k < 7, lambda k, x: (k + 1, x * 1.5),
                                               (tf.constant(0), x)))
    k, x = loop(tf.constant([1.0, -2.0]))
    out["while loop"] = [int(k), x.numpy().tolist()]
    v = tf.Variable(3)
    v.assign_add(tf.constant(4))
    v.assign_add(2)
    out["int32 variable"] = int(v.read_value())
    scaled = tf.function(lambda x, n: x * tf.cast(n, tf.float32)
                         + tf.cast(tf.shape(x)[0], tf.float32))
    out["int32 argument"] = [scaled(tf.constant([1.0, 2.0]), tf.constant(n)).numpy().tolist()
                             for n in (3, 5)]
    table = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    rows = tf.constant([5, 0])
    out["mixed"] = [tf.gather(table, rows).numpy().tolist(),
                    tf.reshape(table, tf.stack([tf.constant(3), 4])).numpy().tolist(),
                    tf.one_hot(rows, 6).numpy().tolist(),
                    (tf.cast(tf.range(tf.constant(10)), tf.float32) * 0.5).numpy().tolist(),
                    (tf.constant(np.arange(9, dtype=np.int32)) + rows[0]).numpy().tolist()]
    return out


def _slice_gradient(tf, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x[:, 1:, ::2] * 3.0
    return tape.gradient(y, x)


def dynamic_shape_functions(tf):
    """Traced functions whose shapes are known only when they run: each computes a shape
    (`tf.shape`, `tf.range`) and gives it to an op that reads it."""
    signature = [tf.TensorSpec([None, None, None], tf.float32)]
    cases = {
        "reshape": lambda x: tf.reshape(x, [tf.shape(x)[0], -1]),
        "fill": lambda x: tf.fill(tf.shape(x), 2.0),
        "zeros": lambda x: tf.zeros([tf.shape(x)[0], 5]),
        "range": lambda x: tf.cast(tf.range(tf.shape(x)[2]), tf.float32) * 2.0,
        "broadcast_to": lambda x: tf.broadcast_to(tf.constant([1.0, 2.0, 3.0, 4.0]),
                                                  tf.shape(x)),
        "tile": lambda x: tf.tile(x, tf.stack([1, tf.shape(x)[0], 1])),
        "strided slice gradient": lambda x: _slice_gradient(tf, x)}
    return {name: tf.function(fn, input_signature=signature) for name, fn in cases.items()}


def number_argument_functions(tf):
    """Ops taking Python numbers their kernels read on the host (range's bounds, linspace's,
    an integer draw's bounds), eager and traced."""
    cases = {
        "range of floats": lambda: tf.range(0.0, 1.0, 0.25),
        "range of int64": lambda: tf.range(2, 11, 3, dtype=tf.int64),
        "linspace": lambda: tf.linspace(0.0, 1.0, 5),
        "integer draw": lambda: tf.random.uniform([64], 3, 7, dtype=tf.int64) - 3}
    traced = {f"{name}, traced": tf.function(fn) for name, fn in cases.items()}
    return {**cases, **traced}


def number_argument_values(tf):
    """What `number_argument_functions` give: values, or for draws the values they took."""
    return {name: sorted(set(f().numpy().tolist())) if "draw" in name else f().numpy().tolist()
            for name, f in number_argument_functions(tf).items()}


def dynamic_shape_values(tf):
    x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    return {name: f(x).numpy().tolist() for name, f in dynamic_shape_functions(tf).items()}


def _storage_value(tf, v):
    tf.experimental.sync_devices()
    return v._handle.device.resources.lookup(v._handle.uid).value


def scenario_values(tf):
    """The scenarios' numbers (the same on any device): three traced SGD steps, three eager
    ones with `optimizers.SGD`, a traced moving average, a function with a host-only op."""
    np_params, xn, yn = mlp_data()
    x, y = tf.constant(xn), tf.constant(yn)
    out = {}
    params = [tf.Variable(p) for p in np_params]
    step = traced_sgd_step(tf, params)
    out["traced losses"] = [float(step(x, y)) for _ in range(3)]
    out["traced weights"] = [p.numpy().tolist() for p in params]
    params = [tf.Variable(p) for p in np_params]
    optimizer = tf.optimizers.SGD(LR)
    out["eager losses"] = [float(eager_sgd_step(tf, params, optimizer, x, y)) for _ in range(3)]
    out["eager weights"] = [p.numpy().tolist() for p in params]
    for name, make in (("many variables", lambda: tf.optimizers.SGD(LR)),
                       ("many variables with Adam", lambda: tf.optimizers.Adam(0.01)),
                       ("many variables with Nesterov momentum",
                        lambda: tf.optimizers.SGD(LR, momentum=0.9, nesterov=True))):
        many = many_variables(tf)
        optimizer = make()
        for k in range(2):
            optimizer.apply_gradients(zip(many_gradients(tf, many, k), many))
        out[name] = [v.numpy().tolist() for v in many]
        traced_many = many_variables(tf)
        traced_optimizer = make()
        traced_apply = tf.function(lambda grads, variables=traced_many, opt=traced_optimizer:
                                   opt.apply_gradients(zip(grads, variables)))
        for k in range(2):
            traced_apply(many_gradients(tf, traced_many, k))
        out[name + ", traced"] = [v.numpy().tolist() for v in traced_many]
    for with_array in (False, True):
        loss, grad = recurrent_step(tf, 6, with_array)()
        out["recurrence" + (" with a TensorArray" if with_array else "")] = [
            float(loss), grad.numpy().tolist()]
    out["condition loops"] = [f().numpy().tolist() for f in condition_loops(tf, 3)]
    value, grad = gradient_penalty_step(tf, 4)()
    out["gradient penalty"] = [float(value), grad.numpy().tolist()]
    counted, counter = counted_array_loop(tf, 6)
    out["counted TensorArray loop"] = [float(counted()), float(counted()), float(counter)]
    fit, model = lstm_fit(tf, 6)
    for _ in range(2):
        fit()
    out["LSTM weights"] = [w.numpy().tolist() for w in model.weights]
    average = tf.Variable(np.linspace(-1, 1, 6).astype(np.float32))
    update = moving_average_step(tf, average, tf.constant(np.arange(6, dtype=np.float32)))
    out["moving average"] = [update().numpy().tolist() for _ in range(2)]
    out["host int32"] = host_int32_values(tf)
    out["dynamic shapes"] = dynamic_shape_values(tf)
    out["number arguments"] = number_argument_values(tf)
    out["moving average variable"] = average.numpy().tolist()

    @tf.function
    def checked(v):
        tf.debugging.assert_greater(v, 0.0)  # `Assert` has only a host kernel
        return tf.sqrt(v) * 3.0

    checked(tf.constant([1.0, 1.0]))  # (a first call runs op by op; later ones compiled)
    out["host op"] = checked(tf.constant([4.0, 9.0])).numpy().tolist()
    try:
        checked(tf.constant([-1.0]))
        out["host op error"] = None
    except tf.errors.InvalidArgumentError as exc:
        out["host op error"] = type(exc).__name__

    @tf.function
    def with_constant(v):  # values folded to constants: fetched as the constants' tensors
        return v * 2.0, tf.ones([2]) + 1.0, tf.cast(tf.shape(v), tf.float32)

    with_constant(tf.constant([3.0, 4.0]))  # (a first call runs op by op; later ones compiled)
    out["fetched constant"] = [t.numpy().tolist() for t in with_constant(tf.constant([3.0, 4.0]))]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def reshaped(v):  # the size is known only when it runs: the kernel's error
        return tf.reshape(v * 2.0, [7])

    reshaped(tf.constant(np.ones(7, np.float32)))  # the first call runs op by op; not this
    try:
        reshaped(tf.constant(np.ones(6, np.float32)))
        out["reshape error"] = None
    except tf.errors.InvalidArgumentError as exc:
        out["reshape error"] = str(exc).splitlines()[0]
        out["reshape error notes"] = [note.split(" defined at ")[0]
                                      for note in getattr(exc, "__notes__", [])]
    return out


def lookup_and_sparse_loss_step(tf):
    """A training step that gathers its inputs' features (`tf.gather` of a table, an embedding
    lookup) and takes a sparse cross-entropy: ops that check their indices or labels. Returns
    (the step, traced step)."""
    rng = np.random.default_rng(5)
    table = tf.constant(rng.standard_normal((10, 4)).astype(np.float32))
    embedding = tf.Variable(rng.standard_normal((10, 4)).astype(np.float32))
    w = tf.Variable(rng.standard_normal((4, 3)).astype(np.float32))
    ids, labels = tf.constant([[1, 2], [3, 9], [0, 0]]), tf.constant([0, 2, 1])
    optimizer = tf.optimizers.SGD(LR)

    def step():
        with tf.GradientTape() as tape:
            features = tf.reduce_mean(tf.gather(table, ids) + tf.nn.embedding_lookup(
                embedding, ids), axis=1)
            logits = tf.matmul(tf.gather_nd(features, [[2], [0], [1]]), w)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
        optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        return loss

    return step, tf.function(step)


def bad_checks(tf):
    """(name, a call whose labels or indices are out of range), for `failed_checks`."""
    return (("labels", lambda: tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.constant([0, 7]), logits=tf.zeros([2, 3]))),
            ("indices", lambda: tf.gather(tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 5]))),
            ("nd indices", lambda: tf.gather_nd(tf.constant([[1.0], [2.0]]),
                                                tf.constant([[1], [2]]))),
            ("variable indices", lambda: tf.nn.embedding_lookup(
                tf.Variable([[1.0], [2.0]]), tf.constant([1, -1]))),
            ("scatter_nd indices", lambda: tf.scatter_nd(tf.constant([[0], [5]]),
                                                         tf.constant([1.0, 2.0]), [3])),
            ("tensor_scatter_nd_update indices", lambda: tf.tensor_scatter_nd_update(
                tf.zeros([3, 2]), tf.constant([[1, 0], [-1, 1]]), tf.constant([1.0, 2.0]))))


def sparse_writes(tf):
    """(name, make) of the ops that write rows of a variable: `make()` builds the variable (and
    its optimizer) and returns `(state, write, steps)`, `state()` the variable and slots as
    numpy arrays, `write(rows)` one write at `rows`, `steps` the optimizer's step counter (or
    None). For `gated_sparse_writes`."""
    def scatter(method, dtype=np.float32):
        def make():
            v = tf.Variable((np.arange(12).reshape(4, 3) - 5).astype(dtype))
            return (lambda: [v.numpy()],
                    lambda rows: getattr(v, method)(tf.IndexedSlices(
                        tf.constant(np.full((len(rows), 3), 1.5).astype(dtype)),
                        tf.constant(rows))), None)
        return make

    def optimizer(build, dtype=np.float32):
        def make():
            v = tf.Variable((np.arange(12).reshape(4, 3) / 7.0 - 0.6).astype(dtype))
            opt = build()

            def write(rows):
                values = tf.constant(np.linspace(-1.0, 1.0, len(rows) * 3).reshape(-1, 3)
                                     .astype(dtype))
                opt.apply_gradients([(tf.IndexedSlices(values, tf.constant(rows),
                                                       tf.constant([4, 3])), v)])

            return (lambda: [v.numpy()] + [w.numpy() for w in opt.variables
                                           if w.shape == v.shape]), write, opt.iterations
        return make

    return (("scatter_add", scatter("scatter_add")),
            ("scatter_update", scatter("scatter_update")),
            ("scatter_add, int32", scatter("scatter_add", np.int32)),
            ("SGD", optimizer(lambda: tf.optimizers.SGD(0.1))),
            ("momentum", optimizer(lambda: tf.optimizers.SGD(0.1, momentum=0.9))),
            ("Nesterov", optimizer(lambda: tf.optimizers.SGD(0.1, momentum=0.9,
                                                             nesterov=True))),
            ("Adam", optimizer(lambda: tf.optimizers.Adam(0.1))),
            ("AMSGrad", optimizer(lambda: tf.optimizers.Adam(0.1, amsgrad=True))),
            ("Adam, float16", optimizer(lambda: tf.optimizers.Adam(0.1), np.float16)),
            ("Adagrad", optimizer(lambda: tf.optimizers.Adagrad(0.1))),
            ("Adadelta", optimizer(lambda: tf.optimizers.Adadelta(0.1))))


def gated_sparse_writes(tf, device_checks):
    """For each of `sparse_writes`: a good write, a write with an out-of-range row, then a
    good one. Where the bad write raised (at the op on the CPU; on a GPU at the next read),
    its words, whether it changed anything (bit for bit), the checks that waited, the steps
    the optimizer counted, and the state after the last write."""
    out = {}
    for name, make in sparse_writes(tf):
        state, write, steps = make()
        write([1, 3, 1])
        before = state()
        entry = out[name] = {}
        try:
            write([0, 4, 2])
            entry["pending"] = device_checks.pending_checks()
            tf.constant([1.0]).numpy()  # any read: the next synchronization
        except tf.errors.InvalidArgumentError as exc:
            entry["raised"] = str(exc)
        entry["unchanged"] = all(a.tobytes() == b.tobytes() for a, b in zip(state(), before))
        if steps is not None:  # on a GPU the optimizer ran on past the failed op: undone here
            entry["steps"] = int(steps.numpy())
            steps.assign(1)
        write([2, 0])
        entry["after"] = [a.astype(np.float64).tolist() for a in state()]
    return out


def failed_checks(tf, device_checks):
    """Out-of-range labels and indices on the GPU: whether each op raised at once, how many
    checks waited, and the error its first read raised (the CPU's words)."""
    out = {}
    for name, make in bad_checks(tf):
        try:
            result = make()
        except tf.errors.InvalidArgumentError as exc:
            out[name] = {"at the op": str(exc)}
            continue
        entry = out[name] = {"pending": device_checks.pending_checks()}
        try:
            tf.constant([1.0, 2.0]).numpy()  # any read: the next synchronization
        except tf.errors.InvalidArgumentError as exc:
            entry["at the next read"] = str(exc)
        entry["pending after"] = device_checks.pending_checks()
        entry["then"] = (tf.constant([1.0]) + 1.0).numpy().tolist()  # reported once
        del result
    return out


def launches(fn, recorder):
    """Launches and stream entries of one call of `fn` (after three to warm up)."""
    for _ in range(3):
        fn()
    recorder.reset()
    fn()
    return {"launches": recorder.launch_count(), "stream entries": recorder.STREAM_ENTRIES[0],
            "device entries": recorder.DEVICE_ENTRIES[0], "kinds": dict(recorder.LAUNCHES)}


def copies(fn, recorder, warmup=2):
    """[host reads, copies to the device] of one call of `fn`, after `warmup` calls (traced,
    then compiled)."""
    for _ in range(warmup):
        fn()
    recorder.reset()
    fn()
    return [recorder.HOST_READS[0], recorder.HOST_WRITES[0]]


def main(argv):
    import recording_cupy  # noqa: PLC0415 - installed before eager asks for CuPy

    cupy = recording_cupy.install(device_count=2 if "--two-gpus" in argv else 1)
    import eager as tf  # noqa: PLC0415
    from bench.cases_autodiff import mlp_gradients  # noqa: PLC0415 - after CuPy is installed

    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    report = {"default device": tf.constant(1.0).device,
              "backend": type(tf.devices.registry.lookup("GPU:0")).__name__,
              "x + y": launches(lambda: a + b, recording_cupy)}
    if "--two-gpus" in argv:
        with tf.device("GPU:1"):
            c, d = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])

        def on_gpu1():
            with tf.device("GPU:1"):
                return c + d

        report["x + y on GPU:1"] = launches(on_gpu1, recording_cupy)
        print(json.dumps(report))
        return
    report["values"] = scenario_values(tf)
    np_params, xn, yn = mlp_data()
    x, y = tf.constant(xn), tf.constant(yn)
    params = [tf.Variable(p) for p in np_params]
    step = traced_sgd_step(tf, params)
    report["traced step"] = launches(lambda: step(x, y), recording_cupy)
    compiled = step.experimental_get_program(x, y)._executable
    report["device form"] = sorted(d.name for d, fn in compiled._device_fns.items() if fn)
    eager_params = [tf.Variable(p) for p in np_params]
    optimizer = tf.optimizers.SGD(LR)
    report["eager step"] = launches(lambda: eager_sgd_step(tf, eager_params, optimizer, x, y),
                                    recording_cupy)
    many = many_variables(tf)
    many_grads = many_gradients(tf, many, 0)
    report["many variables step"] = launches(
        lambda: optimizer.apply_gradients(zip(many_grads, many)), recording_cupy)
    adam_many = many_variables(tf)
    adam = tf.optimizers.Adam(0.01)
    report["many variables Adam step"] = launches(
        lambda: adam.apply_gradients(zip(many_grads, adam_many)), recording_cupy)
    traced_adam_many = many_variables(tf)
    traced_adam = tf.optimizers.Adam(0.01)
    apply = tf.function(lambda grads: traced_adam.apply_gradients(zip(grads,
                                                                      traced_adam_many)))
    report["many variables Adam step, traced"] = launches(lambda: apply(many_grads),
                                                          recording_cupy)
    momentum_many = many_variables(tf)
    momentum = tf.optimizers.SGD(LR, momentum=0.9)
    report["many variables momentum step"] = launches(
        lambda: momentum.apply_gradients(zip(many_grads, momentum_many)), recording_cupy)
    from eager.base import device_checks  # noqa: PLC0415 - after CuPy is installed

    for name, lookup_step in zip(("lookup step", "lookup step, traced"),
                                 lookup_and_sparse_loss_step(tf)):
        for _ in range(3):
            lookup_step()
        recording_cupy.reset()
        loss = lookup_step()
        report[name] = {"host reads": recording_cupy.HOST_READS[0],
                        "pending checks": device_checks.pending_checks()}
        report[name]["loss"] = float(loss)  # a read: the checks are done
        report[name]["pending after a read"] = device_checks.pending_checks()
    report["failed checks"] = failed_checks(tf, device_checks)
    report["gated sparse writes"] = gated_sparse_writes(tf, device_checks)
    for with_array in (False, True):
        report["recurrence copies" + (" with a TensorArray" if with_array else "")] = [
            copies(recurrent_step(tf, n, with_array), recording_cupy) for n in (5, 10, 20)]
    report["counted TensorArray loop copies"] = [
        copies(counted_array_loop(tf, n)[0], recording_cupy) for n in (5, 10)]
    report["gradient penalty copies"] = [
        copies(gradient_penalty_step(tf, n), recording_cupy) for n in (5, 10)]
    report["condition loop reads"] = [copies(f, recording_cupy)[0] for n in (4, 8)
                                      for f in condition_loops(tf, n)]
    reads = []
    for batches in (4, 8):
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
        rows = np.ones((batches * 4, 3), np.float32)
        reads.append(copies(lambda m=model, r=rows: m.predict(r, batch_size=4, verbose=0),
                            recording_cupy)[0])
    report["predict reads"] = reads
    writes = []
    for steps in (4, 8):
        rng = np.random.default_rng(2)
        # (Batches of 9: a batch's labels are more than the few values a device keeps one
        # copy of per value, `host_memory.DeviceCopies.of_value`, so each step copies them.)
        images = rng.standard_normal((steps * 9, 6, 6, 2)).astype(np.float32)
        labels = rng.integers(0, 3, steps * 9)
        model = tf.keras.Sequential([
            tf.keras.Input((6, 6, 2)), tf.keras.layers.Conv2D(3, 3, activation="relu"),
            tf.keras.layers.BatchNormalization(), tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(3)])
        model.compile(optimizer="sgd", metrics=["accuracy"],
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        writes.append(copies(lambda m=model, x=images, y=labels: m.fit(x, y, batch_size=9,
                                                                        verbose=0),
                             recording_cupy)[1])
    report["fit writes"] = writes
    report["LSTM fit copies"] = [copies(lstm_fit(tf, steps)[0], recording_cupy)
                                 for steps in (4, 8)]
    embedding = tf.Variable(np.ones((10, 3), np.float32))
    adam = tf.optimizers.Adam(0.01)
    rows = tf.constant([[4, 1], [1, 7]])

    def sparse_adam_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.embedding_lookup(embedding, rows) ** 2)
        adam.apply_gradients(zip(tape.gradient(loss, [embedding]), [embedding]))

    for _ in range(3):
        sparse_adam_step()
    embedding.numpy()  # a read: the checks so far are done
    recording_cupy.reset()
    sparse_adam_step()
    report["sparse Adam step"] = {"host reads": recording_cupy.HOST_READS[0],
                                  "pending checks": device_checks.pending_checks()}
    counter = tf.constant(0)
    recording_cupy.reset()
    while bool(counter < 10):
        counter = counter + tf.constant(1)
    x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    shape_reads = {}
    for name, f in dynamic_shape_functions(tf).items():
        for _ in range(3):  # traced, then compiled (optimizing reads constants once)
            f(x)
        tf.experimental.sync_devices()
        recording_cupy.reset()
        f(x)
        shape_reads[name] = recording_cupy.HOST_READS[0]
    report["dynamic shape reads"] = shape_reads
    number_reads = {}
    for name, f in number_argument_functions(tf).items():
        number_reads[name] = copies(f, recording_cupy)[0]
    report["number argument reads"] = number_reads
    report["host int32"] = {
        "counter loop reads": recording_cupy.HOST_READS[0], "counter device": counter.device,
        "kinds": {name: type(t._value).__name__ for name, t in (
            ("int32 scalar", tf.constant(3)), ("int32 shape", tf.shape(tf.zeros((2, 3)))),
            ("nine int32", tf.constant(np.arange(9, dtype=np.int32))),
            ("float scalar", tf.constant(3.0)), ("int64 scalar", tf.constant(3, tf.int64)),
            ("comparison", tf.constant(3) < 4), ("float comparison", tf.constant(3.0) < 4.0),
            ("bool flag", tf.constant(True)))},
        "int32 variable storage": type(_storage_value(tf, tf.Variable(5))).__name__}
    c_params = [cupy.asarray(p) for p in np_params]
    cx, cy = cupy.asarray(xn), cupy.asarray(yn)

    def raw_step():  # the GPU benchmark's floor: the step written by hand in CuPy (counted only)
        _, grads = mlp_gradients(cupy, c_params, cx, cy, with_loss=False)
        for p, g in zip(c_params, grads):
            p -= LR * g

    report["hand-written CuPy step"] = launches(raw_step, recording_cupy)
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
