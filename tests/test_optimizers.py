"""eager.optimizers (SGD, Adam ≈ Keras 3's tf.optimizers) and the fused training ops.

Numbers are checked two ways: against values produced by Keras 3.15 / TensorFlow 2.21 for fixed
cases (copied below; the script that made them ran `keras.optimizers.*.apply_gradients` on the
same inputs), and against a float64 reference of Keras 3's update rules on random problems.
"""

import contextlib
import threading
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager as tf
from eager.core.context import FAST_PATH
from eager.ops import training_ops
from eager.core.dispatch import execute
from eager.core.registry import get_op
from eager.core.specs import TensorSpec
from eager.state.trackable import Trackable
from eager import train
from eager.ops import resource_ops
from eager.devices.virtual import VirtualDevice

optimizers = tf.optimizers


def _storage(v):
    """The variable's storage, once the updates queued on its device have run (on a device
    whose kernels run later, the storage changes when the stream gets to them)."""
    tf.experimental.sync_devices()
    return v._handle.device.resources.lookup(v._handle.uid)


def _address(v):
    """Where `v`'s buffer starts, in host (numpy) or device (cupy) memory: the update kernels
    work in place (or copy on write) the same way on every device."""
    value = _storage(v).value
    interface = getattr(value, "__cuda_array_interface__", None) or value.__array_interface__
    return interface["data"][0]


# -- Keras 3 golden values --------------------------------------------------------------------

INIT = np.array([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]], np.float32)
DENSE = [np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], np.float32),
         np.array([[1.0, 0.5], [-0.25, 0.0], [0.125, -2.0]], np.float32),
         np.array([[-0.3, 0.2], [0.7, -0.1], [0.05, 0.9]], np.float32)]
SPARSE = [(np.array([[1.0, 2.0], [0.5, -1.0]], np.float32), np.array([2, 2])),
          (np.array([[0.25, -0.5]], np.float32), np.array([0])),
          (np.array([[-1.0, 1.0], [2.0, 0.5], [0.1, 0.2]], np.float32), np.array([1, 0, 1]))]
MAKERS = {"sgd": lambda: optimizers.SGD(0.1),
          "momentum": lambda: optimizers.SGD(0.1, momentum=0.9),
          "nesterov": lambda: optimizers.SGD(0.05, momentum=0.5, nesterov=True),
          "adam": lambda: optimizers.Adam(0.01),
          "amsgrad": lambda: optimizers.Adam(0.02, amsgrad=True)}
# Three steps of keras.optimizers.<...>.apply_gradients (Keras 3.15.1, TensorFlow 2.21.0).
KERAS = {
    ("sgd", "dense"): [[0.42000002, -1.05], [1.925, 0.22], [-0.7175, 1.5500001]],
    ("sgd", "sparse"): [[0.27499998, -1.0], [2.09, 0.13000001], [-0.90000004, 1.4]],
    ("momentum", "dense"): [[0.3129, -1.0608], [1.8962001, 0.1516], [-0.64325005, 1.6274]],
    ("momentum", "sparse"): [[0.2525, -0.955], [2.09, 0.13], [-1.1565, 1.229]],
    ("nesterov", "dense"): [[0.425625, -1.04], [1.94125, 0.22], [-0.7178125, 1.5512501]],
    ("nesterov", "sparse"): [[0.328125, -0.99375], [2.0675, 0.16], [-0.890625, 1.4062499]],
    ("adam", "dense"): [[0.47777987, -0.9998517], [1.9838957, 0.22982591], [-0.732311, 1.496367]],
    ("adam", "sparse"): [[0.48550686, -0.9930106], [2.0057209, 0.24248315], [-0.779355, 1.490215]],
    ("amsgrad", "dense"):
        [[0.4555597, -0.99970335], [1.9677914, 0.20965852], [-0.71462196, 1.4927341]],
    ("amsgrad", "sparse"):
        [[0.47101372, -0.98602116], [2.0114415, 0.23496631], [-0.80868715, 1.4804376]],
}
# SGD(lr, momentum=0.9) on float64 with a schedule 0.1 / (1 + step) and a callable 0.05.
KERAS_LR = {
    "schedule": [
        [0.38790000055531665, -0.9999666669453183],
        [1.9191166634636623, 0.1449333329965671],
        [-0.6280416681251179, 1.4973999947985013],
    ],
    "callable": [
        [0.40645000052601105, -1.0304000002697111],
        [1.948099998910725, 0.2007999998688698],
        [-0.6966250007618219, 1.5636999985292555],
    ],
}


def _gradient(kind, step):
    if kind == "dense":
        return tf.constant(DENSE[step])
    values, indices = SPARSE[step]
    return tf.IndexedSlices(tf.constant(values), tf.constant(indices), tf.constant([3, 2]))


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("name", list(MAKERS))
def test_three_steps_match_keras3(name, kind):
    v = tf.Variable(INIT)
    opt = MAKERS[name]()
    for step in range(3):
        opt.apply_gradients([(_gradient(kind, step), v)])
    # Equal up to one float32 rounding (TensorFlow's float32 pow differs from numpy's by 1 ulp
    # for some powers of beta).
    np.testing.assert_allclose(v.numpy(), np.float32(KERAS[name, kind]), rtol=0, atol=1.2e-7)
    assert int(opt.iterations) == 3


def test_schedules_and_callables_match_keras3_in_float64():
    class Decay(optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            return 0.1 / (1.0 + tf.cast(step, tf.float32))

    for name, lr in (("schedule", Decay()), ("callable", lambda: 0.05)):
        v = tf.Variable(INIT.astype(np.float64))
        opt = optimizers.SGD(lr, momentum=0.9)
        for step in range(3):
            opt.apply_gradients([(tf.constant(DENSE[step].astype(np.float64)), v)])
        # Exactly Keras' numbers: the learning rate reaches float64 through float32, as there.
        np.testing.assert_array_equal(v.numpy(), KERAS_LR[name])


# -- a float64 reference of Keras 3's rules, on random problems --------------------------------

def _reference(name, kwargs, init, steps):
    """Keras 3's update rules in float64 (IndexedSlices: the dense gradient, and for Adam's
    second moment the per-row sum of squared slices), with Keras' roundings: the learning rate,
    momentum and the betas inside the powers reach the variable's dtype through float32;
    1 - beta and epsilon do not."""
    var = init.astype(np.float64)
    m, v, vhat = np.zeros_like(var), np.zeros_like(var), np.zeros_like(var)
    lr = float(np.float32(kwargs.get("learning_rate", 0.01 if name == "SGD" else 0.001)))
    for t, (values, indices) in enumerate(steps, 1):
        g = np.zeros_like(var)
        g2 = np.zeros_like(var)
        if indices is None:
            g, g2 = values.astype(np.float64), values.astype(np.float64) ** 2
        else:
            np.add.at(g, indices, values)
            np.add.at(g2, indices, values.astype(np.float64) ** 2)
        if name == "SGD":
            mom = float(np.float32(kwargs.get("momentum", 0.0)))
            if mom == 0:
                var = var - lr * g
            else:
                m = m * mom - lr * g
                var = var + (m * mom - lr * g if kwargs.get("nesterov") else m)
        else:
            b1, b2 = kwargs.get("beta_1", 0.9), kwargs.get("beta_2", 0.999)
            eps = kwargs.get("epsilon", 1e-7)
            m = m + (g - m) * (1 - b1)
            v = v + (g2 - v) * (1 - b2)
            vhat = np.maximum(vhat, v)
            b1_power, b2_power = float(np.float32(b1)) ** t, float(np.float32(b2)) ** t
            alpha = lr * np.sqrt(1 - b2_power) / (1 - b1_power)
            var = var - m * alpha / (np.sqrt(vhat if kwargs.get("amsgrad") else v) + eps)
    return var


CONFIGS = [("SGD", {"learning_rate": 0.1}), ("SGD", {"learning_rate": 0.05, "momentum": 0.9}),
           ("SGD", {"learning_rate": 0.05, "momentum": 0.5, "nesterov": True}),
           ("Adam", {"learning_rate": 0.01}), ("Adam", {"learning_rate": 0.01, "amsgrad": True}),
           ("Adam", {"learning_rate": 0.002, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-3})]


@st.composite
def problems(draw):
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    element = st.floats(-2, 2, allow_nan=False, width=32)
    init = np.array(draw(st.lists(element, min_size=rows * cols, max_size=rows * cols)),
                    dtype).reshape(rows, cols)
    steps = []
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            values = np.array(draw(st.lists(element, min_size=rows * cols,
                                            max_size=rows * cols)), dtype).reshape(rows, cols)
            steps.append((values, None))
        else:
            n = draw(st.integers(0, 4))
            indices = np.array(draw(st.lists(st.integers(0, rows - 1), min_size=n, max_size=n)),
                               np.int64)
            values = np.array(draw(st.lists(element, min_size=n * cols, max_size=n * cols)),
                              dtype).reshape(n, cols)
            steps.append((values, indices))
    return draw(st.sampled_from(CONFIGS)), init, steps


@given(problems())
def test_random_problems_follow_keras3_rules(problem):
    (name, kwargs), init, steps = problem
    v = tf.Variable(init)
    opt = getattr(optimizers, name)(**kwargs)
    for values, indices in steps:
        if indices is None:
            grad = tf.constant(values)
        else:
            grad = tf.IndexedSlices(tf.constant(values), tf.constant(indices),
                                    tf.constant(list(init.shape)))
        opt.apply_gradients([(grad, v)])
    expected = _reference(name, kwargs, init, steps)
    tol = 1e-12 if init.dtype == np.float64 else 2e-5
    np.testing.assert_allclose(v.numpy(), expected, rtol=tol, atol=tol)


def test_adam_with_indexed_slices_updates_every_row_as_keras3():
    """Keras 3 densifies IndexedSlices in Adam: a row with moments but no gradient this step
    still moves (TF1's lazy sparse Adam would leave it)."""
    v = tf.Variable(np.zeros((3, 1), np.float32))
    opt = optimizers.Adam(0.1)
    opt.apply_gradients([(tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0])), v)])
    after_first = v.numpy().copy()
    opt.apply_gradients([(tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([2])), v)])
    assert v.numpy()[0, 0] != after_first[0, 0]  # row 0 moved without a gradient
    assert v.numpy()[1, 0] == 0.0  # a row that never had a gradient stays


def test_plain_sgd_with_indexed_slices_touches_only_indexed_rows():
    v = tf.Variable(np.ones((4, 2), np.float32))
    optimizers.SGD(1.0).apply_gradients(
        [(tf.IndexedSlices(tf.constant(np.ones((3, 2), np.float32)), tf.constant([1, 1, 3])), v)])
    np.testing.assert_array_equal(v.numpy(), [[1, 1], [-1, -1], [1, 1], [0, 0]])


# -- in place, copy-on-write, atomicity ---------------------------------------------------------

def _run_two_steps(opt, v, sparse=False):
    for _ in range(2):
        if sparse:
            grad = tf.IndexedSlices(tf.constant(np.ones((2, 100), np.float32)),
                                    tf.constant([0, 3]))
        else:
            grad = tf.constant(np.full(v.shape.as_list(), 0.5, np.float32))
        opt.apply_gradients([(grad, v)])


@pytest.fixture(params=["dispatch", "fast path"])
def path(request):
    """Runs a test through full dispatch (the suite's default) and on the fast path, where the
    optimizer calls the kernels directly (only with one CPU device: `cpu_only`)."""
    if request.param == "fast path":
        request.getfixturevalue("cpu_only")
        request.getfixturevalue("no_inference_check")
        assert FAST_PATH.kernel_only
    return request.param


@pytest.mark.parametrize("make,sparse", [
    (lambda: optimizers.SGD(0.1), False), (lambda: optimizers.SGD(0.1), True),
    (lambda: optimizers.SGD(0.1, momentum=0.9), False),
    (lambda: optimizers.SGD(0.1, momentum=0.9, nesterov=True), True),
    (lambda: optimizers.Adam(0.1), False), (lambda: optimizers.Adam(0.1, amsgrad=True), True)])
def test_steps_on_unshared_variables_update_their_buffers_in_place(make, sparse, path):
    v = tf.Variable(np.ones((5, 100), np.float32))
    opt = make()
    _run_two_steps(opt, v, sparse)  # the first apply creates the slots
    watched = [v] + [s for s in opt.variables if s.shape == v.shape]
    before = [_address(x) for x in watched]
    values_before = v.numpy().copy()
    _run_two_steps(opt, v, sparse)
    assert [_address(x) for x in watched] == before, "an unshared buffer was reallocated"
    assert not np.array_equal(v.numpy(), values_before)


@pytest.mark.parametrize("make", [lambda: optimizers.SGD(0.1),
                                  lambda: optimizers.SGD(0.1, momentum=0.9),
                                  lambda: optimizers.Adam(0.1)])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_value_read_before_a_step_never_changes(make, sparse, path):
    v = tf.Variable(np.ones((5, 100), np.float32))
    opt = make()
    _run_two_steps(opt, v, sparse)
    held = v.read_value()  # exactly one outside reference to the buffer
    snapshot = held.numpy().copy()
    _run_two_steps(opt, v, sparse)
    np.testing.assert_array_equal(held.numpy(), snapshot)
    assert not np.array_equal(v.numpy(), snapshot)


@pytest.mark.parametrize("make", [lambda: optimizers.SGD(0.1),
                                  lambda: optimizers.SGD(0.1, momentum=0.9),
                                  lambda: optimizers.Adam(0.1)])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.cpu_only(reason="asserts that a read shares the variable's buffer, so the next "
                              "step copies; a simulated GPU's read copies into a new pool "
                              "block, so nothing shares it")
def test_a_step_after_a_read_copies_the_shared_buffer(make, sparse, path):
    v = tf.Variable(np.ones((5, 100), np.float32))
    opt = make()
    _run_two_steps(opt, v, sparse)
    held = v.read_value()  # exactly one outside reference to the buffer
    address = _address(v)
    _run_two_steps(opt, v, sparse)
    assert _address(v) != address  # copy-on-write
    assert held.numpy().shape == (5, 100)


def _large_steps(name, kind, grad_layout="contiguous"):
    """Three steps of optimizer `name` on a (301, 250) float32 variable (more elements than
    `training_ops._in_blocks` updates in one call, and not a whole number of its blocks)."""
    rng = np.random.default_rng(7)
    v = tf.Variable(rng.standard_normal((301, 250)).astype(np.float32))
    opt = MAKERS[name]()
    for _ in range(3):
        if kind == "sparse":
            rows = rng.integers(0, 301, 200)
            grad = tf.IndexedSlices(
                tf.constant(rng.standard_normal((200, 250)).astype(np.float32)),
                tf.constant(rows), tf.constant([301, 250]))
        elif grad_layout == "transposed":  # not C-contiguous: updated in one call
            grad = tf.constant(np.asfortranarray(
                rng.standard_normal((301, 250)).astype(np.float32)))
        else:
            grad = tf.constant(rng.standard_normal((301, 250)).astype(np.float32))
        opt.apply_gradients([(grad, v)])
    return [v.numpy()] + [s.numpy() for s in opt.variables if s.shape == v.shape]


@pytest.mark.parametrize("kind,layout", [("dense", "contiguous"), ("dense", "transposed"),
                                         ("sparse", "contiguous")])
@pytest.mark.parametrize("name", list(MAKERS))
def test_large_updates_in_blocks_equal_whole_array_updates_exactly(name, kind, layout,
                                                                   monkeypatch, cpu_only):
    # Blocks are a CPU strategy (a GPU updates in one kernel), and on a GPU the sparse cases'
    # repeated rows are summed by atomics in no fixed order, so bit equality is a CPU property.
    blocked = _large_steps(name, kind, layout)
    monkeypatch.setattr(training_ops, "_BLOCK", 10 ** 9)  # one call over the whole arrays
    whole = _large_steps(name, kind, layout)
    assert len(blocked) == len(whole) > 0
    for got, want in zip(blocked, whole):
        np.testing.assert_array_equal(got, want)


def test_large_sgd_updates_reuse_one_scratch_buffer_and_equal_the_blocked_ones(monkeypatch,
                                                                              cpu_only):
    """A plain SGD update above the block threshold computes `lr * grad` into a per-thread
    scratch buffer: the same values as in blocks, and no new temporary after the first step.
    (Host memory: a CPU strategy, as blocks are.)"""
    with_scratch = _large_steps("sgd", "dense")
    monkeypatch.setattr(training_ops, "_SCRATCH_MAX_BYTES", 0)  # in blocks instead
    blocked = _large_steps("sgd", "dense")
    np.testing.assert_array_equal(with_scratch[0], blocked[0])
    monkeypatch.undo()
    v = tf.Variable(np.ones((301, 250), np.float32))
    grad = tf.constant(np.full((301, 250), 2.0, np.float32))
    opt = tf.optimizers.SGD(0.25)
    opt.apply_gradients([(grad, v)])  # the first step may allocate the scratch buffer
    tracemalloc.start()
    opt.apply_gradients([(grad, v)])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    np.testing.assert_array_equal(v.numpy()[:2, :2], 0.0)
    assert peak < 301 * 250 * 4 // 4, f"a step allocated {peak} bytes"


def test_in_blocks_visits_every_element_once_in_order():
    seen = []
    a = np.arange(5 * training_ops._BLOCK + 7, dtype=np.float32).reshape(-1, 1)
    b = np.zeros_like(a)
    training_ops._in_blocks(np, lambda x, y: (seen.append(x.size), np.add(y, x, out=y)), (a, b))
    assert len(seen) == 6 and seen[-1] == 7
    np.testing.assert_array_equal(b, a)
    seen.clear()
    small = np.ones((3, 4), np.float32)
    training_ops._in_blocks(np, lambda x: seen.append(x.shape), (small,))
    assert seen == [(3, 4)]  # small arrays: one call, on the arrays themselves


def test_a_gradient_aliasing_the_variable_is_read_before_it_is_overwritten():
    v = tf.Variable(np.full(8, 2.0, np.float32))
    optimizers.SGD(0.5).apply_gradients([(v.read_value(), v)])
    np.testing.assert_array_equal(v.numpy(), np.ones(8))


def test_concurrent_steps_lose_no_update():
    v = tf.Variable(np.zeros(16, np.float32))
    opt = optimizers.SGD(1.0)
    minus_one = tf.constant(np.full(16, -1.0, np.float32))

    def worker():
        for _ in range(500):
            opt.apply_gradients([(minus_one, v)])

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(v.numpy(), np.full(16, 2000.0))
    assert int(opt.iterations) == 2000


def test_locks_are_taken_in_uid_order_so_crossed_updates_cannot_deadlock():
    """Two threads run momentum updates on the same pair of storages with the roles swapped
    (a as variable and b as accumulator, and the reverse). Locking in argument order would
    deadlock; uid order cannot."""
    a = tf.Variable(np.zeros(4, np.float32))
    b = tf.Variable(np.zeros(4, np.float32))
    lr, momentum = tf.constant(0.0), tf.constant(1.0)
    grad = tf.constant(np.zeros(4, np.float32))
    done = []

    def worker(var, accum):
        for _ in range(3000):
            execute(training_ops.APPLY_KERAS_MOMENTUM, (var.handle, accum.handle, lr, grad,
                                                        momentum), {"use_nesterov": False})
        done.append(True)

    threads = [threading.Thread(target=worker, args=pair, daemon=True)
               for pair in ((a, b), (b, a))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(done) == 2, "crossed updates deadlocked"


def test_fast_path_and_dispatch_give_identical_results(cpu_only, no_inference_check):
    assert FAST_PATH.kernel_only
    results = []
    for use_tape in (False, True):
        v = tf.Variable(INIT)
        w = tf.Variable(INIT)
        opt = optimizers.Adam(0.01)
        for step in range(3):
            pairs = [(_gradient("dense", step), v), (_gradient("sparse", step), w)]
            if use_tape:
                with tf.GradientTape():  # forces every op through dispatch
                    assert not FAST_PATH.kernel_only
                    opt.apply_gradients(pairs)
            else:
                opt.apply_gradients(pairs)
        results.append((v.numpy(), w.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


# -- slots, variables, checkpoints children -------------------------------------------------------

def test_slots_are_created_lazily_non_trainable_and_named_as_keras():
    w = tf.Variable(np.ones((2, 2), np.float32), name="w")
    b = tf.Variable(np.ones(2, np.float32), name="b")
    opt = optimizers.Adam()
    assert [x.name for x in opt.variables] == ["iteration:0", "learning_rate:0"]
    opt.apply_gradients([(tf.ones((2, 2)), w), (tf.ones(2), b)])
    names = [x.name for x in opt.variables]
    assert names == ["iteration:0", "learning_rate:0", "w_0_momentum:0", "w_0_velocity:0",
                     "b_0_momentum:0", "b_0_velocity:0"]
    assert not any(x.trainable for x in opt.variables)
    assert opt.iterations.dtype == tf.int64
    assert [x.shape for x in opt.variables[2:]] == [(2, 2), (2, 2), (2,), (2,)]


def test_amsgrad_creates_velocity_hats_after_the_other_slots_as_keras():
    w, b = tf.Variable(np.ones(2, np.float32), name="w"), tf.Variable(1.0, name="b")
    opt = optimizers.Adam(amsgrad=True)
    opt.build([w, b])
    assert [x.name for x in opt.variables[2:]] == [
        "w_0_momentum:0", "w_0_velocity:0", "b_0_momentum:0", "b_0_velocity:0",
        "w_0_velocity_hat:0", "b_0_velocity_hat:0"]


def test_plain_sgd_has_no_slots_and_momentum_sgd_one():
    v = tf.Variable([1.0, 2.0])
    plain, heavy = optimizers.SGD(), optimizers.SGD(momentum=0.5)
    for opt in (plain, heavy):
        opt.apply_gradients([(tf.constant([1.0, 1.0]), v)])
    assert len(plain.variables) == 2 and len(heavy.variables) == 3


def test_slots_live_on_their_variables_device(logical_cpus):
    logical_cpus(2)
    with tf.device("CPU:1"):
        v = tf.Variable(np.ones(3, np.float32))
    opt = optimizers.SGD(0.1, momentum=0.9)
    opt.apply_gradients([(tf.constant(np.ones(3, np.float32)), v)])
    assert opt.variables[-1].device == "CPU:1"
    np.testing.assert_allclose(v.numpy(), 0.9)


def test_trackable_children_name_the_step_the_rate_and_the_slots():
    w, b = tf.Variable(np.ones(2, np.float32)), tf.Variable(np.ones(3, np.float32))
    opt = optimizers.Adam(0.1)
    opt.apply_gradients([(tf.ones(2), w), (tf.ones(3), b)])
    children = opt._trackable_children()
    assert list(children) == ["iterations", "learning_rate", "momentum", "velocity"]
    assert children["iterations"] is opt.iterations
    assert [x is y for x, y in zip(children["momentum"], opt.variables[2::2])] == [True, True]
    assert children["velocity"][0] is opt.variables[3] and children["velocity"][1].shape == (3,)
    sgd = optimizers.SGD(lambda: 0.1)
    assert list(sgd._trackable_children()) == ["iterations"]
    assert isinstance(opt, Trackable) and isinstance(sgd, Trackable)


def _adam_steps(opt, variables, steps, start=0):
    for step in range(start, start + steps):
        grads = [tf.constant(np.full(v.shape.as_list(), 0.1 * (step + 1) * (i + 1), np.float32))
                 for i, v in enumerate(variables)]
        opt.apply_gradients(zip(grads, variables))


def test_slots_created_after_a_restore_get_the_saved_values(tmp_path):
    """As in TensorFlow: restoring into an optimizer that has no slots yet keeps the values,
    and the first apply (which creates the slots) continues exactly where the saved one was."""
    model = [tf.Variable(np.ones((2, 2), np.float32)), tf.Variable(np.ones(3, np.float32))]
    opt = optimizers.Adam(0.1)
    _adam_steps(opt, model, 3)
    path = train.Checkpoint(model=model, opt=opt).write(str(tmp_path / "ck"))
    assert ("opt/velocity/1/.ATTRIBUTES/VARIABLE_VALUE", [3]) in train.list_variables(path)

    model2 = [tf.Variable(np.zeros((2, 2), np.float32)), tf.Variable(np.zeros(3, np.float32))]
    opt2 = optimizers.Adam(0.1)
    opt2.build(model2[:1])  # slots for the first variable only: the rest must wait
    status = train.Checkpoint(model=model2, opt=opt2).read(path)
    assert int(opt2.iterations) == 3
    _adam_steps(opt, model, 2, start=3)
    _adam_steps(opt2, model2, 2, start=3)  # creates the second variable's slots
    status.assert_consumed()
    for a, b in zip(model + opt.variables, model2 + opt2.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_build_fixes_the_slot_order_before_the_first_step():
    w, b = tf.Variable(1.0, name="w"), tf.Variable(2.0, name="b")
    opt = optimizers.SGD(momentum=0.9)
    opt.build([b, w])
    opt.apply_gradients([(tf.constant(1.0), w), (tf.constant(1.0), b)])
    assert [x.name for x in opt.variables[2:]] == ["b_0_momentum:0", "w_0_momentum:0"]


def test_new_variables_get_slots_on_later_steps():
    """Keras 3 refuses variables it was not built with; eager creates their slots (the Keras 2
    behaviour TensorFlow users relied on)."""
    w, b = tf.Variable(1.0), tf.Variable(2.0)
    opt = optimizers.Adam(0.1)
    opt.apply_gradients([(tf.constant(1.0), w)])
    opt.apply_gradients([(tf.constant(1.0), w), (tf.constant(1.0), b)])
    assert len(opt.variables) == 6
    assert float(b) < 2.0


# -- learning rates and hyperparameters ---------------------------------------------------------

def test_learning_rate_is_a_float32_variable_settable_like_keras():
    opt = optimizers.SGD(0.5)
    assert isinstance(opt.learning_rate, tf.Variable)
    assert opt.learning_rate.dtype == tf.float32
    opt.learning_rate = 0.25
    assert float(opt.learning_rate) == 0.25
    v = tf.Variable([1.0])
    opt.apply_gradients([(tf.constant([1.0]), v)])
    assert float(v[0]) == 0.75
    opt.learning_rate = lambda: 0.5  # a callable replaces the variable
    assert opt.learning_rate == 0.5 and len(opt.variables) == 1
    opt.apply_gradients([(tf.constant([1.0]), v)])
    assert float(v[0]) == 0.25


def test_schedules_get_the_step_and_cannot_be_overwritten_with_a_float():
    seen = []

    def schedule(step):
        seen.append(int(step))
        return 0.5

    opt = optimizers.SGD(schedule)
    v = tf.Variable([1.0])
    for _ in range(3):
        opt.apply_gradients([(tf.constant([1.0]), v)])
    assert seen == [0, 1, 2] and float(v[0]) == -0.5

    class Constant(optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            return 0.1

    scheduled = optimizers.Adam(Constant())
    with pytest.raises(TypeError, match="not settable"):
        scheduled.learning_rate = 0.2
    with pytest.raises(NotImplementedError, match="__call__"):
        optimizers.schedules.LearningRateSchedule()(0)


@pytest.mark.parametrize("bad", [1, "0.1", np.float32(0.1), None])
def test_learning_rate_must_be_a_float_as_in_keras(bad):
    with pytest.raises(ValueError, match="learning_rate"):
        optimizers.SGD(bad)


def test_hyperparameter_validation():
    with pytest.raises(ValueError, match="momentum"):
        optimizers.SGD(0.1, momentum=1.5)
    with pytest.raises(ValueError, match="momentum"):
        optimizers.SGD(0.1, momentum=1)
    with pytest.raises(ValueError, match="not recognized"):
        optimizers.Adam(foo=1)
    with pytest.raises(TypeError, match="beta_1"):
        optimizers.Adam(beta_1="0.9")
    with pytest.warns(UserWarning, match="decay"):
        optimizers.SGD(decay=0.1)


def test_names_and_configs_follow_keras():
    first, second = optimizers.SGD(), optimizers.SGD()
    assert first.name.startswith("sgd") and second.name != first.name
    assert optimizers.Adam(name="mine").name == "mine"
    config = optimizers.Adam(0.5, beta_1=0.8, amsgrad=True, name="a").get_config()
    assert config == {"name": "a", "learning_rate": 0.5, "weight_decay": None, "clipnorm": None,
                      "global_clipnorm": None, "clipvalue": None, "use_ema": False,
                      "ema_momentum": 0.99, "ema_overwrite_frequency": None,
                      "loss_scale_factor": None, "gradient_accumulation_steps": None,
                      "beta_1": 0.8, "beta_2": 0.999, "epsilon": 1e-7, "amsgrad": True}
    clone = optimizers.Adam.from_config(config)
    assert clone.get_config() == config and clone.amsgrad
    assert optimizers.SGD(0.1, 0.5, True).get_config()["nesterov"] is True


# -- gradients: None, casting, errors -----------------------------------------------------------

def test_none_gradients_are_skipped_with_keras_warning():
    a, b = tf.Variable(1.0, name="a"), tf.Variable(1.0, name="b")
    opt = optimizers.SGD(0.5)
    with pytest.warns(UserWarning, match=r"Gradients do not exist for variables \['b:0'\]"):
        result = opt.apply_gradients([(tf.constant(1.0), a), (None, b)])
    assert result is opt.iterations and int(result) == 1
    assert (float(a), float(b)) == (0.5, 1.0)
    with pytest.raises(ValueError, match="No gradients provided"):
        opt.apply_gradients([(None, a)])
    with pytest.raises(ValueError, match="No gradients provided"):
        opt.apply_gradients([])


def test_gradients_are_cast_to_the_variables_dtype_as_keras():
    v = tf.Variable(np.ones(2, np.float32))
    opt = optimizers.SGD(0.5)
    opt.apply_gradients([(np.array([1.0, 2.0]), v)])  # float64 numpy
    opt.apply_gradients([([1, 1], v)])  # int32 list
    opt.apply_gradients([(tf.IndexedSlices(tf.constant([[2.0]], tf.float64), tf.constant([0])),
                          tf.Variable(np.ones((1, 1), np.float32)))])
    np.testing.assert_array_equal(v.numpy(), [0.0, -0.5])
    assert v.dtype == tf.float32


@pytest.mark.parametrize("make", list(MAKERS.values()), ids=list(MAKERS))
def test_float16_variables_train_in_float16(make):
    v = tf.Variable(np.array([1.0, -2.0], np.float16))
    opt = make()
    opt.apply_gradients([(tf.constant([1.0, -1.0]), v)])  # a float32 gradient is cast
    assert v.dtype == tf.float16 and opt.variables[-1].dtype in (tf.float16, tf.float32)
    assert v.numpy()[0] < 1.0 and v.numpy()[1] > -2.0


def test_mismatched_shapes_are_clear_errors_and_change_nothing():
    w, b = tf.Variable(np.ones((2, 2), np.float32), name="w"), tf.Variable([1.0, 1.0], name="b")
    opt = optimizers.Adam(0.1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"w:0 has shape \[3, 2\].*\[2, 2\]"):
        opt.apply_gradients([(tf.ones(2), b), (tf.ones((3, 2)), w)])
    assert int(opt.iterations) == 0 and b.numpy().tolist() == [1.0, 1.0]  # nothing half-done
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"IndexedSlices values"):
        opt.apply_gradients([(tf.IndexedSlices(tf.ones((1, 3)), tf.constant([0])), w)])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[0\] = 5 is not in \[0, 2\)"):
        opt.apply_gradients([(tf.IndexedSlices(tf.ones((1, 2)), tf.constant([5])), w)])
        tf.experimental.sync_devices()  # (a device whose kernels run later reports it here)
    with pytest.raises(TypeError, match="indices"):
        opt.apply_gradients([(tf.IndexedSlices(tf.ones((1, 2)), tf.constant([0.0])), w)])


def test_non_variables_and_non_pairs_are_type_errors():
    opt = optimizers.SGD()
    with pytest.raises(TypeError, match="expected eager.Variable"):
        opt.apply_gradients([(tf.ones(2), tf.ones(2))])
    with pytest.raises(TypeError, match="pairs"):
        opt.apply_gradients([3])
    with pytest.raises(TypeError, match="pairs"):
        opt.apply_gradients([(tf.ones(2), tf.Variable([1.0, 2.0]), None)])
    with pytest.raises(TypeError, match="int32; optimizers update float"):
        opt.apply_gradients([(tf.constant([1]), tf.Variable([2]))])
    with pytest.raises(TypeError, match="string"):
        opt.apply_gradients([(tf.constant(["a"]), tf.Variable([1.0]))])


def test_constraints_run_after_the_update():
    v = tf.Variable([0.5, -0.5], constraint=lambda x: tf.clip_by_value(x, 0.0, 1.0))
    optimizers.SGD(1.0).apply_gradients([(tf.constant([-1.0, -1.0]), v)])
    np.testing.assert_array_equal(v.numpy(), [1.0, 0.5])


def test_apply_matches_keras_apply():
    w, b = tf.Variable(1.0), tf.Variable(2.0)
    opt = optimizers.SGD(0.5)
    with pytest.raises(ValueError, match="build"):
        opt.apply([tf.constant(1.0)])
    opt.apply([tf.constant(1.0), tf.constant(1.0)], [w, b])
    opt.apply([tf.constant(1.0), tf.constant(2.0)])
    assert (float(w), float(b)) == (0.0, 0.5)
    with pytest.raises(ValueError, match="one-to-one"):
        opt.apply([tf.constant(1.0)])


def test_training_a_linear_model_converges():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.25
    w, b = tf.Variable(np.zeros((3, 1), np.float32)), tf.Variable(np.zeros(1, np.float32))
    opt = optimizers.Adam(0.05)
    for _ in range(300):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x), w) + b - y))
        opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
    np.testing.assert_allclose(w.numpy().ravel(), [1.0, -2.0, 0.5], atol=2e-2)
    np.testing.assert_allclose(b.numpy(), [0.25], atol=2e-2)


# -- the op records -------------------------------------------------------------------------------

OPS = [training_ops.APPLY_GRADIENT_DESCENT, training_ops.SPARSE_APPLY_GRADIENT_DESCENT,
       training_ops.APPLY_KERAS_MOMENTUM, training_ops.SPARSE_APPLY_KERAS_MOMENTUM,
       training_ops.APPLY_ADAM, training_ops.APPLY_ADAM_WITH_AMSGRAD,
       training_ops.SPARSE_APPLY_ADAM, training_ops.SPARSE_APPLY_ADAM_WITH_AMSGRAD]


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_records_write_every_updated_handle_and_are_not_differentiable(op):
    n_handles = {"ResourceApplyKerasMomentum": 2, "ResourceSparseApplyKerasMomentum": 2,
                 "ResourceApplyAdam": 3, "ResourceSparseApplyAdam": 3,
                 "ResourceApplyAdamWithAmsgrad": 4, "ResourceSparseApplyAdamWithAmsgrad": 4}
    assert op.stateful and not op.differentiable and op.num_outputs == 0
    assert op.resource_writes == tuple(range(n_handles.get(op.name, 1)))
    assert get_op(op.name) is op


def test_op_kernel_and_inference_errors_name_the_op():
    v = tf.Variable(np.ones((3, 2), np.float32), name="v")
    m = tf.Variable(np.ones((2, 2), np.float32), name="m")
    lr, grad = tf.constant(0.1), tf.constant(np.ones((3, 2), np.float32))
    mismatched = r"ResourceApplyKerasMomentum: slot m \(float32\[2, 2\]\) does not match " \
                 r"the variable v \(float32\[3, 2\]\)"

    def mismatched_slot():
        execute(training_ops.APPLY_KERAS_MOMENTUM, (v.handle, m.handle, lr, grad, lr),
                {"use_nesterov": False})

    with pytest.raises(tf.errors.InvalidArgumentError, match=mismatched):
        mismatched_slot()  # the kernel's check
    with tf.experimental.async_scope():
        with pytest.raises(tf.errors.InvalidArgumentError, match=mismatched):
            mismatched_slot()  # inference's, at the call (not at the scope's end)
    with pytest.raises(tf.errors.InvalidArgumentError, match=mismatched):
        tf.function(mismatched_slot)()  # inference's, at trace time

    def twice():
        execute(training_ops.APPLY_KERAS_MOMENTUM, (v.handle, v.handle, lr, grad, lr),
                {"use_nesterov": False})

    for run in (twice, tf.function(twice)):  # eagerly (kernel and inference), traced
        with pytest.raises(tf.errors.InvalidArgumentError, match="passed twice"):
            run()
    with tf.experimental.async_scope():
        with pytest.raises(tf.errors.InvalidArgumentError, match="passed twice"):
            twice()  # at the call (not at the scope's end)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"ResourceApplyGradientDescent: var 'v' and grad .*\[3, 2\] vs"):
        execute(training_ops.APPLY_GRADIENT_DESCENT, (v.handle, lr, tf.ones((2, 2))))
    for op, inputs in ((training_ops.APPLY_GRADIENT_DESCENT, (lr, tf.ones((3, 2), tf.float64))),
                       (training_ops.SPARSE_APPLY_GRADIENT_DESCENT,
                        (lr, tf.ones((1, 2), tf.float64), tf.constant([0])))):
        with pytest.raises(tf.errors.InvalidArgumentError, match="grad must be float32"):
            execute(op, (v.handle,) + inputs)
    scalar = tf.Variable(1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank >= 1"):
        execute(training_ops.SPARSE_APPLY_GRADIENT_DESCENT,
                (scalar.handle, lr, tf.ones(1), tf.constant([0])))
    np.testing.assert_array_equal(v.numpy(), np.ones((3, 2)))
    # Inference (what tracing trusts) rejects what the kernels reject, by types alone.
    infer = training_ops.APPLY_GRADIENT_DESCENT.infer
    assert infer(v.handle, TensorSpec([], tf.float32), TensorSpec([3, 2], tf.float32)) == ()
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be float32"):
        infer(v.handle, TensorSpec([], tf.float64), TensorSpec([3, 2], tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be a scalar"):
        infer(v.handle, TensorSpec([2], tf.float32), TensorSpec([3, 2], tf.float32))
    # Worded as the kernel's (a device that infers before it runs the kernel reports these).
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"ResourceApplyGradientDescent: var 'v' and grad do not have the "
                             r"same shape: \[3, 2\] vs. \[3, 3\]"):
        infer(v.handle, TensorSpec([], tf.float32), TensorSpec([3, 3], tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"grad must be float32 \(the dtype of var 'v'\), got float64"):
        infer(v.handle, TensorSpec([], tf.float32), TensorSpec([3, 2], tf.float64))
    with pytest.raises(tf.errors.InvalidArgumentError, match="resource handle"):
        infer(lr, TensorSpec([], tf.float32), TensorSpec([3, 2], tf.float32))
    sparse = training_ops.SPARSE_APPLY_ADAM.infer
    scalars = [TensorSpec([], tf.float32)] * 6
    slots = [tf.Variable(np.zeros((3, 2), np.float32)).handle for _ in range(2)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="indices.shape"):
        sparse(v.handle, *slots, *scalars, TensorSpec([4, 3], tf.float32),
               TensorSpec([4], tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="integers"):
        sparse(v.handle, *slots, *scalars, TensorSpec([4, 2], tf.float32),
               TensorSpec([4], tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="passed twice"):
        sparse(v.handle, slots[0], slots[0], *scalars, TensorSpec([4, 2], tf.float32),
               TensorSpec([4], tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="float16, float32 or float64"):
        training_ops.APPLY_GRADIENT_DESCENT.infer(tf.Variable([1, 2]).handle,
                                                  TensorSpec([], tf.int32),
                                                  TensorSpec([2], tf.int32))


def test_updating_a_destroyed_variable_is_a_clear_error():
    v = tf.Variable([1.0])
    execute(resource_ops.DESTROY, (v.handle,))
    with pytest.raises(tf.errors.NotFoundError, match="does not exist"):
        optimizers.SGD(momentum=0.5).apply_gradients([(tf.constant([1.0]), v)])
        tf.experimental.sync_devices()  # (a device whose kernels run later reports it here)


def test_no_warning_when_every_gradient_exists():
    v = tf.Variable([1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optimizers.SGD().apply_gradients([(tf.constant([1.0]), v)])


# -- on an accelerator --------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: optimizers.SGD(0.1),
                                  lambda: optimizers.SGD(0.1, momentum=0.9, nesterov=True),
                                  lambda: optimizers.Adam(0.01),
                                  lambda: optimizers.Adam(0.01, amsgrad=True)],
                         ids=["SGD", "momentum", "Adam", "AMSGrad"])
@pytest.mark.parametrize("dispatch", ["sync", "async"])
def test_steps_on_a_gpu_neither_wait_for_it_nor_copy_the_rate_per_variable(simulated_gpu,
                                                                            monkeypatch, make,
                                                                            dispatch):
    # The learning rate and the step counter live on the GPU. Reading them back every step
    # would wait for everything queued there, so the step's scalars are computed there; the
    # constant ones (Adam's betas, SGD's momentum) are copied in once, not per variable.
    gpu = simulated_gpu
    rng = np.random.default_rng(0)
    start = [rng.normal(size=(3, 2)).astype(np.float32), rng.normal(size=2).astype(np.float32)]
    grads = [rng.normal(size=(3, 2)).astype(np.float32), rng.normal(size=2).astype(np.float32)]
    variables = [tf.Variable(v) for v in start]
    opt = make()
    assert variables[0].device.endswith("GPU:0") and opt.iterations.device.endswith("GPU:0")
    g = [tf.constant(x) for x in grads]
    counts = {"to_host": 0, "from_host": 0}
    # Under async dispatch the step counter's reads are pending tensors: the same holds.
    with tf.experimental.async_scope() if dispatch == "async" else contextlib.nullcontext():
        opt.apply_gradients(zip(g, variables))
        opt.apply_gradients(zip(g, variables))
        for name in counts:
            original = getattr(VirtualDevice, name)

            def counted(self, array, _original=original, _name=name):
                counts[_name] += self is gpu
                return _original(self, array)

            monkeypatch.setattr(VirtualDevice, name, counted)
        opt.apply_gradients(zip(g, variables))
        opt.apply_gradients(zip(g, variables))
        assert counts == {"to_host": 0, "from_host": 0}
        opt.learning_rate = 0.05  # a change is seen at once (the new value is copied in once)
        opt.apply_gradients(zip(g, variables))
        opt.apply_gradients(zip(g, variables))
        assert counts == {"to_host": 0, "from_host": 1}
    # The same updates on the CPU give the same values.
    reference = [tf.Variable(v) for v in start]
    with tf.device("CPU:0"):
        cpu_opt = make()
        cpu_g = [tf.constant(x) for x in grads]
        for _ in range(4):
            cpu_opt.apply_gradients(zip(cpu_g, reference))
        cpu_opt.learning_rate = 0.05
        for _ in range(2):
            cpu_opt.apply_gradients(zip(cpu_g, reference))
    for v, r in zip(variables, reference):
        np.testing.assert_allclose(v.numpy(), r.numpy(), rtol=1e-6, atol=1e-7)


def test_a_schedule_computed_on_a_gpu_stays_there(simulated_gpu, monkeypatch):
    # A schedule of the step counter (a GPU variable) gives a GPU tensor: using it as it is
    # keeps the step free of device reads, and the values are the CPU's.
    def schedule(step):
        return 0.5 / (1.0 + tf.cast(step, tf.float32))

    rng = np.random.default_rng(1)
    start, grad = rng.normal(size=(4, 3)).astype(np.float32), np.ones((4, 3), np.float32)
    variable, opt = tf.Variable(start), optimizers.SGD(schedule)
    g = tf.constant(grad)
    opt.apply_gradients([(g, variable)])
    reads = []
    original = VirtualDevice.to_host

    def counted(self, array):
        reads.append(self is simulated_gpu)
        return original(self, array)

    monkeypatch.setattr(VirtualDevice, "to_host", counted)
    for _ in range(3):
        opt.apply_gradients([(g, variable)])
    assert not any(reads)
    expected = start.copy()
    for step in range(4):
        expected -= np.float32(0.5) / (np.float32(1.0) + np.float32(step)) * grad
    np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6)

