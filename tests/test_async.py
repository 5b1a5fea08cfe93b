"""Asynchronous dispatch: pending tensors, program order, errors at sync points, recovery,
threads, sync_devices, and resource lifetime under async execution."""

import gc
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager as tf
from eager.core import context
from eager.tensor import EagerTensor
from eager.async_exec import PendingTensor, _current_executor
from eager.runtime.explorer import outcome_of

async_scope = tf.experimental.async_scope


def _slow(n=300):
    """A tensor whose computation takes a moment (so later results are still pending)."""
    a = tf.constant(np.random.default_rng(0).standard_normal((n, n)))
    for _ in range(3):
        a = tf.matmul(a, a) / n
    return a


def test_ops_return_pending_tensors_whose_type_is_known_at_once():
    x = tf.constant([1.0, 2.0, 3.0], tf.float64)
    with async_scope():
        slow = _slow()
        y = tf.reduce_sum(slow) * x + 1.0
        assert isinstance(y, tf.Tensor)
        assert (y.shape, y.dtype, y.device, y.ndim, len(y)) == ((3,), tf.float64, x.device, 1, 3)
        if not _launched(y):  # (on a GPU: launched, the device computing it meanwhile)
            assert isinstance(y, PendingTensor)
            assert y._resolved is None  # still running: the type came from shape inference
        value = y.numpy()  # waits
    assert value.shape == (3,)
    assert tf.config.experimental.get_synchronous_execution()


def _launched(t):
    """Whether async dispatch launched the op that made `t` from the issuing thread: on a GPU,
    an op on computed operands issued with nothing queued is launched at once (the device runs
    it later), its result an ordinary tensor."""
    return t.__class__ is EagerTensor and not t._meta.device.inline


def _done_on_device(t):
    return t._meta.device.ready_event(t._value).query()


def test_set_synchronous_execution_switches_this_thread():
    tf.config.experimental.set_synchronous_execution(False)
    try:
        assert not tf.config.experimental.get_synchronous_execution()
        y = tf.constant([1.0, 2.0]) * 3.0
        assert isinstance(y, PendingTensor) or _launched(y)
        where = "" if y.device == "CPU:0" else f", device={y.device}"
        assert repr(y) == (f"<eager.Tensor: shape=(2,), dtype=float32{where}, "
                           "numpy=array([3., 6.], dtype=float32)>")
        assert float(tf.reduce_sum(y)) == 9.0 and bool(y[0] > 1.0)
    finally:
        tf.config.experimental.set_synchronous_execution(True)
    assert tf.config.experimental.get_synchronous_execution()
    assert not isinstance(tf.constant([1.0]) * 2.0, PendingTensor)


_PROGRAM_OPS = ["add", "mul", "exp", "matmul", "sum0", "transpose", "reshape", "tanh", "sub",
                "maximum", "square", "concat"]


def _run_program(program, x0):
    return [v.numpy() for v in _program_values(program, tf.constant(x0))]


def _program_values(program, x):
    values = [x]
    for name, i, j in program:
        a, b = values[i % len(values)], values[j % len(values)]
        if name == "add":
            r = a + b
        elif name == "sub":
            r = a - b
        elif name == "mul":
            r = a * b
        elif name == "maximum":
            r = tf.maximum(a, b)
        elif name == "exp":
            r = tf.exp(a * 0.1)
        elif name == "tanh":
            r = tf.tanh(a)
        elif name == "square":
            r = tf.square(a) * 0.01
        elif name == "matmul":
            r = tf.matmul(a, b) * 0.1
        elif name == "sum0":
            r = tf.broadcast_to(tf.reduce_sum(a, axis=0, keepdims=True), [4, 4])
        elif name == "transpose":
            r = tf.transpose(a)
        elif name == "reshape":
            r = tf.reshape(tf.reshape(a, [16]), [4, 4])
        else:
            r = tf.concat([a[:2], b[2:]], axis=0)
        values.append(r)
    return values


@given(program=st.lists(st.tuples(st.sampled_from(_PROGRAM_OPS), st.integers(0, 20),
                                  st.integers(0, 20)), min_size=1, max_size=25),
       seed=st.integers(0, 1000))
def test_async_and_sync_give_identical_results(program, seed):
    x0 = np.random.default_rng(seed).uniform(-1, 1, (4, 4))
    sync = _run_program(program, x0)
    with async_scope():
        asynchronous = _run_program(program, x0)
    for s, a in zip(sync, asynchronous):
        np.testing.assert_array_equal(s, a)


@settings(max_examples=40, deadline=None)
@given(program=st.lists(st.tuples(st.sampled_from(_PROGRAM_OPS), st.integers(0, 20),
                                  st.integers(0, 20)), min_size=1, max_size=25),
       seed=st.integers(0, 1000))
def test_traced_programs_called_under_async_match_eager(program, seed):
    """A traced function's call under async dispatch (one queued node on one device: the
    first call runs op by op on the worker, later ones the compiled, fused program) gives
    what the same ops give eagerly."""
    x0 = np.random.default_rng(seed).uniform(-1, 1, (4, 4))
    expected = _run_program(program, x0)
    traced = tf.function(lambda x: _program_values(program, x))
    with async_scope():
        calls = [traced(tf.constant(x0)) for _ in range(3)]
    for values in calls:
        for e, got in zip(expected, values):
            np.testing.assert_allclose(got.numpy(), e, rtol=1e-12, atol=1e-15)


def test_resource_ops_stay_in_program_order():
    v = tf.Variable(0.0)
    with async_scope():
        _slow()
        v.assign(1.0)
        v.assign_add(2.0)
        read = v.read_value()
        v.assign(10.0)
        v.assign_sub(tf.constant(4.0))
        final = v.read_value()
    assert (float(read), float(final), float(v)) == (3.0, 6.0, 6.0)


@pytest.mark.cpu_only(reason="tests the async executor's handling of a kernel that fails "
                              "while the executor runs it; on a device whose kernels run later "
                              "the failure is the stream's (test_virtual_gpu tests that)")
def test_a_kernel_error_surfaces_at_the_next_sync_point_naming_op_and_line():
    x = tf.constant([1.0, 2.0, 3.0])
    v = tf.Variable(0.0)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        with async_scope():
            line = sys._getframe().f_lineno + 1
            bad = tf.gather(x, [7])  # out of range: only the kernel can tell
            later = bad * 2.0  # fails fast: never runs
            v.assign_add(1.0)  # poisoned executor: never happens
            assert isinstance(later, PendingTensor)
    message = str(info.value)
    assert "GatherV2" in message and f"test_async.py:{line})" in message
    assert "indices" in message
    tf.experimental.async_clear_error()
    assert float(v) == 0.0  # the assign after the error did not run


@pytest.mark.cpu_only(reason="tests the async executor's handling of a kernel that fails "
                              "while the executor runs it; on a device whose kernels run later "
                              "the failure is the stream's (test_virtual_gpu tests that)")
def test_errors_surface_at_numpy_and_async_wait_and_clear_recovers():
    x = tf.constant([1, 2])
    tf.config.experimental.set_synchronous_execution(False)
    try:
        bad = tf.math.floordiv(x, tf.constant([0, 1]))  # integer division by zero
        with pytest.raises(tf.errors.InvalidArgumentError, match="FloorDiv"):
            bad.numpy()
        tf.experimental.async_wait()  # global mode: raised once, at the first sync point
        with pytest.raises(tf.errors.InvalidArgumentError, match="division by zero"):
            bad.numpy()  # the failed op's own output: its error again
        failed_fast = x + 1
        with pytest.raises(tf.errors.InvalidArgumentError, match="still poisoned"):
            failed_fast.numpy()
        tf.experimental.async_clear_error()
        ok = x + 1
        np.testing.assert_array_equal(ok.numpy(), [2, 3])
        tf.experimental.async_wait()
    finally:
        tf.experimental.async_clear_error()
        tf.config.experimental.set_synchronous_execution(True)


def test_tensors_computed_before_an_error_keep_their_values():
    x = tf.constant([1.0, 2.0])
    tf.config.experimental.set_synchronous_execution(False)
    try:
        good = x * 5.0
        tf.experimental.async_wait()
        with tf.device("CPU:0"):  # the executor's error (a GPU's would be its stream's)
            bad = tf.gather(x, [9])
        np.testing.assert_array_equal(good.numpy(), [5.0, 10.0])
        with pytest.raises(tf.errors.InvalidArgumentError):
            bad.numpy()
    finally:
        tf.experimental.async_clear_error()
        tf.config.experimental.set_synchronous_execution(True)


def test_no_deadlock_when_results_are_dropped_unread_or_threads_exit_with_work():
    with async_scope():
        for _ in range(50):
            tf.exp(tf.constant(np.ones(1000)))  # dropped unread
    results = []

    def executor_workers():
        return [t for t in threading.enumerate() if t.name.startswith("eager-executor-")]

    with async_scope():
        tf.constant(1.0) + 1.0  # this thread's executor exists: the count below is not vacuous
    workers_before = len(executor_workers())
    assert workers_before >= 1
    slow_path_reasons_before = context.FAST_PATH.reasons

    def worker():
        tf.config.experimental.set_synchronous_execution(False)
        y = _slow(200)
        results.append(y)  # leaves with work pending, still in async mode; never waits

    t = threading.Thread(target=worker)
    t.start()
    t.join(timeout=30)
    assert not t.is_alive()
    tf.experimental.sync_devices()  # waits for the other thread's executor too
    assert (_done_on_device(results[0]) if _launched(results[0])
            else results[0]._resolved is not None)
    assert results[0].shape == (200, 200)
    # The ended thread gave back the process-wide fast path, and its worker finished and exited.
    assert context.FAST_PATH.reasons == slow_path_reasons_before
    for _ in range(500):  # (up to 10 s: a loaded CI machine may start the exit late)
        if len(executor_workers()) == workers_before:
            break
        threading.Event().wait(0.02)
    assert len(executor_workers()) == workers_before


def test_interpreter_exit_with_pending_work_does_not_hang():
    code = ("import eager as tf, numpy as np\n"
            "tf.config.experimental.set_synchronous_execution(False)\n"
            "a = tf.constant(np.ones((300, 300)))\n"
            "for _ in range(20): a = tf.matmul(a, a) / 300.0\n"
            "v = tf.Variable(1.0); v.assign_add(1.0)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr


def test_two_threads_dispatch_concurrently_with_their_own_executors():
    out = {}

    def work(k):
        with async_scope():
            a = tf.constant(np.full((50, 50), float(k)))
            for _ in range(20):
                a = a * 1.0 + 0.0
            out[k] = (tf.reduce_sum(a), tf.experimental.async_wait())

    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert float(out[1][0]) == 2500.0 and float(out[2][0]) == 5000.0


def test_sync_devices_waits_for_everything_queued():
    tf.config.experimental.set_synchronous_execution(False)
    try:
        y = _slow(250)
        z = tf.reduce_sum(y)
        tf.experimental.sync_devices()
        # finished without anyone asking for the value
        assert (_done_on_device(z) if _launched(z) else z._resolved is not None)
    finally:
        tf.config.experimental.set_synchronous_execution(True)
    assert tf.test.experimental.sync_devices is tf.experimental.sync_devices


def test_a_dropped_variable_is_destroyed_after_its_pending_uses():
    gc.collect()
    tf.experimental.sync_devices()  # destroys queued by earlier tests land before the count
    base = tf.experimental.live_resource_count()
    with async_scope():
        v = tf.Variable(np.ones((200, 200)))
        slow = _slow(250)
        total = tf.reduce_sum(v.read_value()) + tf.reduce_sum(slow) * 0.0
        for _ in range(5):
            v.assign_add(tf.constant(np.ones((200, 200))))
        last = v.read_value()
        del v
        gc.collect()
        # The destroy waits behind the queued reads and updates, which all succeed.
    assert float(total) == 40000.0
    np.testing.assert_array_equal(last.numpy()[:1, :2], [[6.0, 6.0]])
    tf.experimental.sync_devices()
    assert tf.experimental.live_resource_count() == base


def test_gradients_under_async_match_sync():
    w = np.linspace(-1, 1, 12).reshape(3, 4)

    def grads():
        x = tf.constant(w)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.tanh(tf.matmul(x, tf.transpose(x))))
        return tape.gradient(y, x).numpy()

    sync = grads()
    with async_scope():
        asynchronous = grads()
    np.testing.assert_allclose(asynchronous, sync, rtol=1e-12)


def test_async_shapes_follow_values_where_inference_reads_them_and_cache_where_it_does_not():
    """Inference results are reused only for ops whose inference reads types and shapes
    (elementwise, matmul); value-dependent shapes are inferred every time."""
    with async_scope():
        a = tf.reshape(tf.range(6), tf.constant([2, 3]))
        b = tf.reshape(tf.range(6), tf.constant([3, 2]))
        assert (a.shape, b.shape) == ((2, 3), (3, 2))
        x, y = tf.constant([1.0, 2.0]), tf.constant([[1.0], [2.0]])
        assert (x + x).shape == (2,) and (x + y).shape == (2, 2) and (x * x).shape == (2,)
        assert (tf.constant([1, 2]) + tf.constant([3, 4])).dtype == tf.int32
        for _ in range(2):  # a failing inference is never remembered as a success
            with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
                tf.constant([1.0, 2.0, 3.0]) + x
        np.testing.assert_array_equal(b.numpy(), np.arange(6).reshape(3, 2))
        np.testing.assert_array_equal((x + y).numpy(), [[2.0, 3.0], [3.0, 4.0]])


def test_generator_state_reads_wait_for_queued_ops():
    g = tf.random.Generator.from_seed([1, 2, 3])
    with async_scope():
        g.uniform([1000, 100])  # queued: advances the state when its kernel runs
        copy = tf.random.Generator(copy_from=g)  # must see the advanced state
        state = g.state
    ref = tf.random.Generator.from_seed([1, 2, 3])
    ref.uniform([1000, 100])
    np.testing.assert_array_equal(state.numpy(), ref.state.numpy())
    np.testing.assert_array_equal(copy.uniform([4]).numpy(), ref.uniform([4]).numpy())


def test_async_placement_follows_scopes_and_logging_after_the_same_op_was_placed(logical_cpus,
                                                                                 capfd):
    # The executor remembers where a binary op on given operand types goes; a device scope,
    # placement logging or another operand device must still decide for themselves.
    logical_cpus(2)
    x, y = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    with tf.experimental.async_scope():
        first = tf.add(x, y)
        assert first.device.endswith("CPU:0")
        with tf.device("CPU:1"):
            scoped = tf.add(x, y)
        assert scoped.device.endswith("CPU:1")
        moved = tf.add(scoped, scoped)  # operands on CPU:1, no scope: the default device
        assert moved.device.endswith("CPU:0")
        capfd.readouterr()
        tf.debugging.set_log_device_placement(True)
        try:
            tf.add(x, y)
            tf.add(x, y)
        finally:
            tf.debugging.set_log_device_placement(False)
        assert capfd.readouterr().err.count("Executing op AddV2") == 2
        np.testing.assert_array_equal(first.numpy(), [4.0, 6.0])
        np.testing.assert_array_equal(scoped.numpy(), [4.0, 6.0])
        np.testing.assert_array_equal(moved.numpy(), [8.0, 12.0])


def test_a_variable_made_under_async_dispatch_is_initialized_for_other_threads():
    """Another thread's ops do not queue behind this thread's, so a variable's initial value
    is assigned when the constructor returns, even with slow work queued ahead: workers that
    update (or read) it at once find it initialized, and their updates are not overwritten by
    an initial value landing late."""
    seen, errors = [], []
    with tf.experimental.async_scope():
        _slow()  # keeps this thread's executor busy while the workers run
        v = tf.Variable(np.zeros(8, np.float32))
        opt = tf.optimizers.SGD(1.0)
        minus_one = tf.constant(np.full(8, -1.0, np.float32))

        def worker():
            try:
                seen.append(v.numpy().copy())
                for _ in range(100):
                    opt.apply_gradients([(minus_one, v)])
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
    assert all(s.shape == (8,) for s in seen)
    np.testing.assert_array_equal(v.numpy(), np.full(8, 200.0))
    assert int(opt.iterations) == 200


def test_gradients_through_shapes_known_only_from_data():
    """Under async dispatch a data-dependent op's output shape is unknown until it has run;
    the tape records the pending tensor and gradient rules that need the shape wait for it."""
    x = tf.constant(np.arange(6.0).reshape(2, 3))

    def gradient():
        with tf.GradientTape() as tape:
            tape.watch(x)
            kept = tf.gather_nd(x, tf.where(x > 1.5))  # how many: the data says
            loss = tf.reduce_sum(kept * kept) + tf.reduce_mean(kept)
        return tape.gradient(loss, x)

    expected = gradient().numpy()
    with async_scope():
        result = gradient()
    np.testing.assert_allclose(result.numpy(), expected)
    np.testing.assert_allclose(expected, np.where(np.arange(6.0).reshape(2, 3) > 1.5,
                                                  2 * np.arange(6.0).reshape(2, 3) + 0.25, 0))


def test_a_computed_tensor_keeps_its_pending_tensors_identity_on_tapes():
    """Kernels that call ops (control flow) carry on with the computed tensor in place of the
    pending one: a tape must see one tensor, not an unconnected copy."""
    with async_scope(), tf.device("CPU:0"):  # queued on a GPU machine too: `y` is pending
        x = tf.constant(3.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            z = y._resolve() * 2.0
        assert float(tape.gradient(z, x)) == 12.0


def test_jacobians_of_targets_whose_shape_only_the_data_says():
    x_np = np.arange(6.0).reshape(2, 3)
    x = tf.constant(x_np)

    def jacobians():
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            kept = tf.gather_nd(x, tf.where(x > 1.5))  # 4 of the 6, which the data decides
            y = kept * kept
            pairs = tf.reshape(kept, [2, 2])
            rows = pairs * pairs
        return tape.jacobian(y, x), tape.batch_jacobian(rows, pairs)

    expected = [j.numpy() for j in jacobians()]
    with async_scope():
        result = jacobians()
    for got, want in zip(result, expected):
        np.testing.assert_allclose(got.numpy(), want)
    assert expected[0].shape == (4, 2, 3) and expected[1].shape == (2, 2, 2)
    np.testing.assert_allclose(expected[0][0, 0, 2], 4.0)  # d(x02**2)/dx02 at x02 = 2


def test_shapes_only_the_data_decides_wait_but_their_consumers_dispatch_at_once():
    """As TensorFlow's async handles: `.shape`, `ndim` and `len` of a pending tensor whose
    shape inference left a dimension open wait for the computed shape; the ops that consume
    it infer from the partial shape and are queued without waiting."""
    data = np.random.default_rng(1).standard_normal(90000)
    count = int(np.sum(data > 0.0))
    with async_scope():
        slow = _slow()  # keeps the executor busy while the ops below are issued
        flat = tf.reshape(slow, [-1]) * 0.0 + tf.constant(data)
        found = tf.where(flat > 0.0)
        doubled = found * 2
        assert doubled._shape.as_list() == [None, 1]  # inferred without waiting for `found`
        assert doubled.shape == (count, 1)  # waits
        assert (doubled.ndim, len(doubled), len(found)) == (2, count, count)
        assert (doubled + 1)._shape == (count, 1)  # later ops infer from the exact shape
        np.testing.assert_array_equal(doubled.numpy()[:, 0], 2 * np.flatnonzero(data > 0.0))


def test_a_traced_functions_relaxed_output_shape_is_exact_on_the_pending_result():
    @tf.function
    def pick(p):
        return tf.cond(p, lambda: tf.zeros([2, 3]), lambda: tf.ones([4, 3]))

    with async_scope():
        small, large = pick(tf.constant(True)), pick(tf.constant(False))
        assert isinstance(small, PendingTensor)
        assert (small.shape, large.shape, len(large)) == ((2, 3), (4, 3), 4)


def test_an_error_reported_where_async_dispatch_ends_does_not_fail_the_next_period(cpu_only):
    """The error surfaces once, where async dispatch ends; the thread's next async period
    runs its ops (TensorFlow gives the thread a fresh executor there)."""
    x = tf.constant([1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="GatherV2"):
        with async_scope():
            tf.gather(x, [9])
    with async_scope():
        y = x + 1.0
    np.testing.assert_array_equal(y.numpy(), [2.0, 3.0])
    tf.config.experimental.set_synchronous_execution(False)
    tf.gather(x, [7])
    with pytest.raises(tf.errors.InvalidArgumentError, match="GatherV2"):
        tf.config.experimental.set_synchronous_execution(True)
    assert tf.config.experimental.get_synchronous_execution()
    with async_scope():
        z = x * 3.0
    np.testing.assert_array_equal(z.numpy(), [3.0, 6.0])


def test_a_traced_function_call_is_one_queued_node_running_its_compiled_program(cpu_only):
    """As TensorFlow enqueues one PartitionedCall: under async dispatch the call returns
    pending outputs at once and the worker runs the function's compiled program (on one
    device; with several, calls go op by op: the next test but one)."""
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def step(x, scale):
        v.assign_add(x * scale)
        kept = tf.gather_nd(x, tf.where(x > 1.5))  # a shape only the data decides
        return {"sum": tf.reduce_sum(v), "kept": kept, "twice": (x * 2.0, scale)}

    x = tf.constant([1.0, 3.0])
    expected = [step(x, 2.0) for _ in range(3)]  # compiled from the second call on
    v.assign([1.0, 2.0])
    with async_scope():
        got = []
        for _ in range(3):
            before = _current_executor()._issued
            got.append(step(x, 2.0))
            assert _current_executor()._issued == before + 1  # one node per call, not per op
        out = got[-1]
        assert isinstance(out["sum"], PendingTensor) and out["twice"][1] == 2.0
        assert out["kept"]._shape.as_list() == [None] and out["kept"].shape == (1,)
    for want, have in zip(expected, got):
        assert float(have["sum"]) == float(want["sum"])
        np.testing.assert_array_equal(have["kept"].numpy(), want["kept"].numpy())
        np.testing.assert_array_equal(have["twice"][0].numpy(), want["twice"][0].numpy())
    np.testing.assert_array_equal(v.numpy(), [1.0 + 3 * 2.0, 2.0 + 3 * 6.0])
    assert step.get_concrete_function(x, 2.0)._executable is not None


def test_an_error_inside_a_queued_function_call_surfaces_at_the_sync_point_naming_the_call(
        cpu_only):
    @tf.function
    def pick(params, i):
        return tf.gather(params, i) * 2.0

    params = tf.constant([1.0, 2.0])
    pick(params, tf.constant(1))
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        with async_scope():
            bad = pick(params, tf.constant(9))  # the line the error names
            later = bad + 1.0  # fails fast: never runs
    assert "GatherV2" in str(info.value) and "test_async.py" in str(info.value)
    with pytest.raises(tf.errors.InvalidArgumentError):
        later.numpy()


def test_function_calls_across_several_devices_still_run_op_by_op_under_async(logical_cpus):
    """Where a call's outputs land is decided op by op on several devices, and ops issued
    after the call are placed by it: such calls are not queued whole."""
    logical_cpus(2)

    @tf.function
    def f(x):
        with tf.device("CPU:1"):
            y = x * 2.0
        return y + 1.0, y

    x = tf.constant([1.0, 2.0])
    expected = [t.numpy() for t in f(x)]
    with async_scope():
        first, second = f(x)
        assert second.device.endswith("CPU:1")
        np.testing.assert_array_equal(first.numpy(), expected[0])
        np.testing.assert_array_equal(second.numpy(), expected[1])


def test_an_outcome_read_under_async_dispatch_sees_the_queued_updates():
    v = tf.Variable(1.0, name="v")

    @tf.function
    def bump(x):
        v.assign_add(x)
        return v.read_value()

    with async_scope():
        for _ in range(3):
            v.assign(1.0)
            outcome = outcome_of(bump(tf.constant(2.0)), [v])
            assert outcome.fetches == (3.0,) and outcome.variable("v") == 3.0


def test_switching_to_synchronous_inside_an_async_scope_leaves_it_cleanly():
    reasons = context.FAST_PATH.reasons  # why the operators' fast path is off, counted
    with async_scope():
        y = tf.constant([1.0]) * 2.0
        assert isinstance(y, PendingTensor) or _launched(y)
        tf.config.experimental.set_synchronous_execution(True)
        assert not isinstance(tf.constant([1.0]) * 2.0, PendingTensor)
    assert tf.config.experimental.get_synchronous_execution()
    with async_scope():
        tf.config.experimental.set_synchronous_execution(True)
        tf.config.experimental.set_synchronous_execution(False)  # and back: the scope ends it
        y = tf.constant([1.0]) * 2.0
        assert isinstance(y, PendingTensor) or _launched(y)
    assert tf.config.experimental.get_synchronous_execution()
    assert context.FAST_PATH.reasons == reasons  # no slow-path reason left behind


def test_a_traced_training_step_is_one_queued_node_and_trains_as_synchronously(cpu_only):
    """TF 2's usual loop: the whole step (tape and optimizer inside) is one traced function;
    under async dispatch each call is one node, and training follows the synchronous run."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((32, 4)).astype(np.float32))
    y = tf.constant(rng.standard_normal((32, 1)).astype(np.float32))

    def make():
        w = tf.Variable(np.ones((4, 1), np.float32))
        b = tf.Variable(np.zeros(1, np.float32))
        opt = tf.optimizers.SGD(0.1, momentum=0.9)

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
            return loss

        return w, step

    w_sync, step_sync = make()
    expected = [float(step_sync(x, y)) for _ in range(5)]
    w_async, step_async = make()
    with async_scope():
        losses = []
        for _ in range(5):
            before = _current_executor()._issued
            losses.append(step_async(x, y))
            assert _current_executor()._issued == before + 1
    np.testing.assert_allclose([float(v) for v in losses], expected, rtol=1e-6)
    assert expected[-1] < expected[0]
    np.testing.assert_allclose(w_async.numpy(), w_sync.numpy(), rtol=1e-6)
