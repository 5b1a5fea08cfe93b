"""Simulated GPUs: asynchronous launches, stream order, events between streams and devices,
buffer lifetimes across streams, errors at synchronization, and async dispatch on top.

The simulated device runs the same ordering code as the CuPy backend (`Device.ready_event`,
`Stream.wait_event`, `KeepAlive`); its memory pool reuses freed blocks at once, so a buffer
released too early really is overwritten, and these tests would see wrong values.
"""

import gc
import threading
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager as tf
from eager.core.context import _reset_for_tests
from eager.core.registry import get_op
from eager.devices import host_memory, registry
from eager.devices.virtual import VirtualArray, VirtualDevice, VirtualStream
from eager.ops import list_ops


@pytest.fixture
def gpus():
    """`configure(n, logical=None)`: n simulated GPUs for one test (GPU:0 becomes the default
    device); `logical` splits the first into that many logical GPUs instead."""

    def configure(n, logical=None):
        _reset_for_tests()
        tf.config.experimental.set_simulated_gpus(n)
        if logical:
            gpu = tf.config.list_physical_devices("GPU")[0]
            tf.config.set_logical_device_configuration(
                gpu, [tf.config.LogicalDeviceConfiguration() for _ in range(logical)])
        return [registry.lookup(d.name.split("device:")[1])
                for d in tf.config.list_logical_devices("GPU")]

    yield configure
    tf.experimental.sync_devices()
    _reset_for_tests()
    registry.devices()


def _ready(t):
    return t._value._ready.query()


def test_simulated_gpus_are_configured_like_gpus_and_only_before_initialization(gpus):
    devices = gpus(2)
    assert [d.name for d in devices] == ["GPU:0", "GPU:1"]
    assert [p.name for p in tf.config.list_physical_devices("GPU")] == [
        "/physical_device:GPU:0", "/physical_device:GPU:1"]
    assert tf.config.experimental.get_simulated_gpus() == 2
    assert tf.constant(1.0).device == "GPU:0"  # the default device, as a real GPU would be
    with pytest.raises(RuntimeError, match="initialized"):
        tf.config.experimental.set_simulated_gpus(3)
    tf.config.experimental.set_simulated_gpus(2)  # unchanged: allowed
    with pytest.raises(ValueError):
        registry.set_simulated_gpus(-1)
    split = gpus(1, logical=3)
    assert [d.name for d in split] == ["GPU:0", "GPU:1", "GPU:2"]


def test_each_gpu_has_its_own_compute_and_copy_streams_on_worker_threads(gpus):
    g0, g1 = gpus(2)
    streams = [g0.compute_stream, g0.copy_stream, g1.compute_stream, g1.copy_stream]
    assert all(isinstance(s, VirtualStream) for s in streams)
    assert len({id(s._worker) for s in streams}) == 4
    assert not g0.inline


def test_a_launch_returns_before_its_kernel_runs_with_shape_and_dtype_known(gpus):
    (g0,) = gpus(1)
    x = tf.constant(np.arange(6.0).reshape(2, 3))
    with g0.compute_stream.paused():
        y = tf.matmul(x, x, transpose_b=True) + 1.0
        assert isinstance(y._value, VirtualArray)
        assert (y.shape, y.dtype, y.device) == ((2, 2), tf.float64, "GPU:0")
        assert not _ready(y)  # the kernel has not run: the stream is held
        assert g0.compute_stream.pending >= 2
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(y.numpy(), a @ a.T + 1.0)  # waits for the stream
    assert _ready(y)


def test_events_order_work_between_streams_without_blocking_the_host():
    a, b = VirtualStream("A"), VirtualStream("B")
    try:
        out, seen = [], []
        with a.paused():
            a.launch(out.append, 1)
            after_a = a.record_event()
            assert not after_a.query()
            b.wait_event(after_a)  # queued on B: returns at once
            b.launch(lambda: seen.append(list(out)))
            time.sleep(0.05)
            assert seen == [] and not b.record_event().query()  # B waits for A
        b.synchronize()
        assert after_a.query() and seen == [[1]]
        a.synchronize()
    finally:
        a.close()
        b.close()


def test_a_consumer_on_another_device_sees_the_value_its_producer_is_still_computing(gpus):
    g0, g1 = gpus(2)
    host = np.random.default_rng(0).standard_normal((64, 64))
    x = tf.constant(host)
    with g0.compute_stream.paused():
        y = tf.tanh(x) * 2.0  # not computed yet
        with tf.device("GPU:1"):
            z = y + 1.0  # GPU:1's copy stream waits for y's event; the host does not
        assert not _ready(y) and not _ready(z)
    with tf.device("CPU:0"):
        w = y - 1.0  # the host waits for y
    expected = np.tanh(host) * 2.0
    np.testing.assert_allclose(z.numpy(), expected + 1.0)
    assert z.device == "GPU:1"
    np.testing.assert_allclose(w.numpy(), expected - 1.0)


def test_the_pool_reuses_a_freed_block_at_once(gpus):
    """The hazard is real in the simulation: a dropped array's block is handed out again."""
    (g0,) = gpus(1)
    x = tf.constant(np.ones((32, 32))) * 3.0
    block = x._value._block
    del x
    before = g0.pool.reused
    c = tf.constant(np.ones((32, 32)))
    y = c * 5.0
    assert g0.pool.reused > before
    assert block is c._value._block or block is y._value._block
    np.testing.assert_array_equal(y.numpy(), np.full((32, 32), 5.0))


def test_a_buffer_borrowed_by_another_stream_is_not_freed_before_it_is_read(gpus):
    g0, g1 = gpus(2)
    original = np.arange(1024.0).reshape(32, 32)
    x = tf.constant(original) * 1.0
    with g1.copy_stream.paused():  # the copy to GPU:1 is queued but cannot run yet
        with tf.device("GPU:1"):
            moved = tf.identity(x)
        del x  # the only Python reference to the source goes away
        # New arrays of the same size on GPU:0: each would get the source's block, were it free.
        garbage = [tf.constant(np.full((32, 32), -7.0)) * 1.0 for _ in range(4)]
        g0.compute_stream.synchronize()  # all of it has run, overwriting any freed block
    np.testing.assert_array_equal(moved.numpy(), original)
    for g in garbage:
        np.testing.assert_array_equal(g.numpy(), np.full((32, 32), -7.0))
    g1.synchronize()
    assert len(g1._copy_holds) == 0  # released once the copy completed


def test_a_result_known_only_after_its_kernel_is_stored_in_stream_order(gpus):
    """An op with a data-dependent shape waits for its kernel, then stores the result in a
    block from the pool. That block may have been freed by another host thread whose kernel,
    queued after the waited-for one, still reads it: the store must run after that kernel."""
    (g0,) = gpus(1)
    stream = g0.compute_stream
    mask = tf.constant([True] * 21)
    x = tf.constant(np.full((21, 1), 5, np.int64))  # the shape and dtype tf.where(mask) gives
    found = {}
    first = stream.paused()
    first.__enter__()
    try:
        where = threading.Thread(target=lambda: found.setdefault("where", tf.where(mask)))
        where.start()
        deadline = time.monotonic() + 30.0
        while not any(name == "Where" for _, (_, _, name) in list(stream._queue)):
            assert time.monotonic() < deadline, "the Where kernel was never queued"
            time.sleep(0.001)
        with stream.paused():  # queued after the Where kernel
            read = x + 1  # reads x's block once the stream gets here
            del x  # the block goes back to the pool while the read is still queued
            first.__exit__(None, None, None)  # the Where kernel runs; its result is stored
            where.join()
    finally:
        first.__exit__(None, None, None)
    np.testing.assert_array_equal(read.numpy(), np.full((21, 1), 6))
    np.testing.assert_array_equal(found["where"].numpy(), np.arange(21).reshape(21, 1))


def test_sync_devices_waits_for_simulated_stream_work(gpus):
    (g0,) = gpus(1)
    x = tf.constant(np.ones((8, 8)))
    gate = g0.compute_stream.paused()
    gate.__enter__()
    y = tf.exp(x)
    releaser = threading.Timer(0.1, gate.__exit__, args=(None, None, None))
    releaser.start()
    assert not _ready(y)
    tf.experimental.sync_devices()
    assert _ready(y) and g0.compute_stream.pending == 0
    releaser.join()


def test_a_failing_kernel_is_reported_at_the_next_synchronization_naming_the_op(gpus):
    gpus(1)
    # (int64: small int32 values live in host memory, where their arithmetic raises at once)
    x = tf.constant([1, 2, 3], tf.int64)
    bad = tf.math.floordiv(x, tf.constant([1, 0, 1], tf.int64))  # fails on the stream, later
    assert bad.shape == (3,)
    with pytest.raises(tf.errors.InvalidArgumentError, match="FloorDiv"):
        bad.numpy()
    np.testing.assert_array_equal((x + 1).numpy(), [2, 3, 4])  # reported once; work goes on


def test_the_ops_run_on_the_host_are_registered_ops():
    # (a renamed op would silently leave the host and make its loop read the device again)
    for name in host_memory.HOST_OPS | host_memory.ALWAYS_HOST_OPS:
        assert get_op(name).name == name


def test_small_int32_values_live_in_host_memory_as_on_a_real_gpu(gpus):
    # As TensorFlow keeps a GPU's int32 tensors in host memory (`eager/devices/host_memory`):
    # their arithmetic runs on the host, so its error is raised at once; a kernel reading one
    # on the device gets a copy; larger int32 arrays and other dtypes are device arrays.
    gpus(1)
    i = tf.constant(3)
    assert i.device.endswith("GPU:0") and type(i._value) is np.ndarray
    assert type((i * 2 < 7)._value) is np.ndarray
    assert type(tf.constant([True, False])._value) is np.ndarray  # small bools: flags
    assert type(tf.constant(np.ones(9, bool))._value) is VirtualArray
    assert type(tf.shape(tf.zeros((2, 5)))._value) is np.ndarray
    for t in (tf.constant(np.arange(9, dtype=np.int32)), tf.constant(3.0),
              tf.constant(3, tf.int64), tf.cast(i, tf.float32)):
        assert type(t._value) is VirtualArray, t
    with pytest.raises(tf.errors.InvalidArgumentError, match="FloorDiv"):
        tf.math.floordiv(tf.constant([1, 2, 3]), tf.constant([1, 0, 1]))  # at once
    np.testing.assert_array_equal(tf.gather(tf.constant([5.0, 6.0, 7.0]), i - 1).numpy(), 7.0)
    np.testing.assert_array_equal(tf.zeros(tf.shape(tf.ones((2, 1))) * 2).numpy(),
                                  np.zeros((4, 2)))


def test_ops_with_data_dependent_shapes_and_non_array_outputs_wait_for_their_kernel(gpus):
    gpus(1)
    mask = tf.constant([True, False, True, True])
    np.testing.assert_array_equal(tf.where(mask).numpy(), [[0], [2], [3]])
    values = tf.constant([3.0, 1.0, 3.0, 2.0])
    np.testing.assert_array_equal(tf.gather(values, tf.where(mask)[:, 0]).numpy(),
                                  [3.0, 3.0, 2.0])
    # A TensorList (variant output) keeps its elements: they must be its own copies, never
    # pool blocks that later arrays reuse.
    lst = list_ops.tensor_list_from_tensor(values * 1.0, element_shape=[])
    assert lst.device == "GPU:0"
    for _ in range(3):
        lst = list_ops.tensor_list_push_back(lst, tf.constant(7.0) * 1.0)
    churn = [tf.constant([0.0, 0.0, 0.0, 0.0]) * 1.0 for _ in range(4)]  # reuses freed blocks
    stacked = list_ops.tensor_list_stack(lst, tf.float32)
    np.testing.assert_array_equal(stacked.numpy(), [3.0, 1.0, 3.0, 2.0, 7.0, 7.0, 7.0])
    assert all(c.numpy().sum() == 0.0 for c in churn)


def test_a_list_op_on_a_gpu_takes_a_cpu_index_as_it_is(gpus, monkeypatch):
    # TensorListGetItem/SetItem read their index on the host (`OpDef.host_inputs`): a counter
    # kept on the CPU reaches the GPU kernel without a copy to the device and back.
    (g0,) = gpus(1)
    lst = list_ops.tensor_list_from_tensor(tf.constant([[1.0], [2.0], [3.0]]), element_shape=[1])
    with tf.device("CPU:0"):
        index = tf.constant(2)
    new_item = tf.constant([30.0])
    copies = []
    from_host = VirtualDevice.from_host
    monkeypatch.setattr(VirtualDevice, "from_host",
                        lambda self, array: copies.append(array) or from_host(self, array))
    item = list_ops.tensor_list_get_item(lst, index, tf.float32)
    changed = list_ops.tensor_list_set_item(lst, index, new_item)
    assert item.device.endswith("GPU:0") and changed.device.endswith("GPU:0")
    assert copies == []
    np.testing.assert_array_equal(item.numpy(), [3.0])
    np.testing.assert_array_equal(list_ops.tensor_list_stack(changed, tf.float32).numpy(),
                                  [[1.0], [2.0], [30.0]])


def test_a_list_read_from_another_device_is_copied_there_once(gpus, monkeypatch):
    # A loop body on the GPU reading, at every iteration, an element of a TensorArray that lives
    # on the CPU: the list's copy on the GPU is kept with it, not made again per read.
    gpus(1)
    with tf.device("CPU:0"):
        lst = list_ops.tensor_list_from_tensor(tf.constant([[1.0], [2.0], [3.0]]),
                                               element_shape=[1])
        indices = [tf.constant(i) for i in (2, 0, 1, 2)]
    copies = []
    from_host = VirtualDevice.from_host
    monkeypatch.setattr(VirtualDevice, "from_host",
                        lambda self, array: copies.append(array) or from_host(self, array))
    items = [list_ops.tensor_list_get_item(lst, i, tf.float32) for i in indices]
    assert all(item.device.endswith("GPU:0") for item in items)
    assert len(copies) == 3  # each element once
    np.testing.assert_array_equal([item.numpy() for item in items], [[3.0], [1.0], [2.0], [3.0]])


def test_variables_on_a_simulated_gpu_keep_program_order_and_snapshots(gpus):
    (g0,) = gpus(1)
    v = tf.Variable(np.zeros(4))
    assert v.device == "GPU:0"
    with g0.compute_stream.paused():
        v.assign([1.0, 2.0, 3.0, 4.0])
        first = v.read_value()
        v.assign_add([1.0, 1.0, 1.0, 1.0])
        second = v.read_value() * 1.0
        v.scatter_update(tf.IndexedSlices(tf.constant([9.0], tf.float64), tf.constant([0])))
    np.testing.assert_array_equal(first.numpy(), [1.0, 2.0, 3.0, 4.0])  # a snapshot
    np.testing.assert_array_equal(second.numpy(), [2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(v.numpy(), [9.0, 3.0, 4.0, 5.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * v)
    np.testing.assert_array_equal(tape.gradient(loss, v).numpy(), 2 * np.array([9.0, 3, 4, 5]))


_OPS = ["add", "mul", "tanh", "matmul", "sum0", "concat_split", "to_cpu_and_back", "to_gpu1"]


def test_a_random_program_on_simulated_gpus_matches_the_cpu(gpus):
    """Sync or async dispatch, values hopping between GPUs and the host: same results as numpy."""
    gpus(2)

    @given(program=st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 9),
                                      st.integers(0, 9)), min_size=1, max_size=12),
           use_async=st.booleans())
    def check(program, use_async):
        x0 = np.random.default_rng(len(program)).standard_normal((4, 4))

        def run(device_of):
            values = [tf.constant(x0)]
            for name, i, j in program:
                a, b = values[i % len(values)], values[j % len(values)]
                if name == "add":
                    r = a + b
                elif name == "mul":
                    r = a * b * 0.5
                elif name == "tanh":
                    r = tf.tanh(a)
                elif name == "matmul":
                    r = tf.matmul(a, b) * 0.25
                elif name == "sum0":
                    r = tf.broadcast_to(tf.reduce_sum(a, axis=0, keepdims=True), [4, 4])
                elif name == "concat_split":
                    r = tf.split(tf.concat([a, b], axis=0), 2, axis=0)[1]
                elif name == "to_cpu_and_back":
                    with tf.device(device_of("CPU:0")):
                        r = a - 1.0
                else:
                    with tf.device(device_of("GPU:1")):
                        r = a + 2.0
                values.append(r)
            return [v.numpy() for v in values]

        with tf.device("CPU:0"):
            expected = run(lambda name: "CPU:0")
        if use_async:
            with tf.experimental.async_scope():
                got = run(lambda name: name)
        else:
            got = run(lambda name: name)
        assert got[-1].shape == expected[-1].shape
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)

    check()


def test_async_dispatch_onto_a_simulated_gpu_and_errors_from_its_stream(gpus):
    (g0,) = gpus(1)
    with tf.experimental.async_scope():
        y = tf.reduce_sum(tf.constant(np.ones((16, 16))) * 2.0)
        assert y.shape == () and y.device == "GPU:0"
        assert float(y) == 512.0
    bad = None
    with pytest.raises(tf.errors.InvalidArgumentError, match="FloorDiv"):
        with tf.experimental.async_scope():
            bad = tf.math.floordiv(tf.constant([1]), tf.constant([0]))
            tf.experimental.sync_devices()
    assert bad is not None
    assert float(tf.reduce_sum(tf.constant([1.0, 2.0]))) == 3.0  # recovered


@pytest.mark.parametrize("traced", [False, True], ids=["op by op", "traced function"])
def test_leaving_an_async_scope_raises_a_kernel_failure_on_the_gpu_stream(gpus, traced):
    """As TensorFlow's `async_wait` when an async scope ends: the kernel failed on the GPU's
    stream after the executor had launched it, and leaving the scope reports it, in TensorFlow's
    words, once (the next scope starts clean), not at some later read or never."""
    gpus(1)
    divide = tf.function(tf.math.floordiv) if traced else tf.math.floordiv
    a = tf.constant([7, 1])
    np.testing.assert_array_equal(divide(a, tf.constant([2, 1])).numpy(), [3, 1])  # (traces)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        with tf.experimental.async_scope():
            failed = divide(a, tf.constant([0, 1]))
    assert failed.device == "GPU:0"
    with tf.experimental.async_scope():
        fine = divide(a, tf.constant([1, 7]))
    np.testing.assert_array_equal(fine.numpy(), [7, 0])


def test_async_wait_raises_a_kernel_failure_on_the_gpu_stream(gpus):
    gpus(1)
    with tf.experimental.async_scope():  # (int64: in device memory, see above)
        tf.math.floormod(tf.constant([7, 1], tf.int64), tf.constant([0, 1], tf.int64))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
            tf.experimental.async_wait()
        tf.experimental.async_wait()  # reported once
        np.testing.assert_array_equal(tf.math.floormod(tf.constant([7]), 4).numpy(), [3])


def test_a_dropped_variable_is_destroyed_after_the_stream_work_that_uses_it(gpus):
    (g0,) = gpus(1)
    live = tf.experimental.live_resource_count()
    v = tf.Variable(np.ones(8))
    with g0.compute_stream.paused():
        v.assign_add(np.full(8, 2.0))
        read = v.read_value() * 1.0  # queued: reads the variable later, on the stream
        del v
        gc.collect()
        # The device's own count, as it is now (live_resource_count would wait for the
        # stream): the destroy is queued behind the read.
        assert g0.resources.live_count() == live + 1
    np.testing.assert_array_equal(read.numpy(), np.full(8, 3.0))
    assert tf.experimental.live_resource_count() == live  # waits for the queued destroy


def test_a_finalizer_launching_on_a_stream_inside_a_launch_neither_deadlocks_nor_reorders():
    """A collected variable's deleter launches its destroy on the device's stream from a GC
    finalizer, which runs at any allocation: also inside a launch on that stream, while the
    launching thread holds the stream's lock. (The whole suite on simulated GPUs hung there.)
    GC is made to run at every allocation, with a callback launching as the deleter does;
    every launch must come back, and the stream must run the work in the order it was
    issued."""
    stream = VirtualStream("finalizer-test")
    ran = []
    nested = []

    def finalizer(phase, info):
        if phase == "start" and len(nested) < 20:
            nested.append(len(nested))
            stream.launch(ran.append, ("finalizer", len(nested)))

    def launches():
        for i in range(20):
            stream.launch(ran.append, ("launch", i))
        stream.synchronize()

    threshold = gc.get_threshold()
    gc.callbacks.append(finalizer)
    gc.set_threshold(1)
    try:
        worker = threading.Thread(target=launches, daemon=True)
        worker.start()
        worker.join(timeout=20)
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(finalizer)
    assert not worker.is_alive(), "a launch from a finalizer deadlocked the stream"
    stream.synchronize()
    assert [item for item in ran if item[0] == "launch"] == [("launch", i) for i in range(20)]
    assert sorted(item[1] for item in ran if item[0] == "finalizer") == list(range(1, 21))
    assert stream.pending == 0


def _recurrence_gradient(np_w, np_x, n):
    """numpy: loss = sum(h_n ** 2) for h_{k+1} = tanh(h_k w + x), h_0 = x, and d loss / d w."""
    hs = [np_x]
    for _ in range(n):
        hs.append(np.tanh(hs[-1] @ np_w + np_x))
    grad, delta = np.zeros_like(np_w), 2 * hs[-1]
    for k in range(n, 0, -1):
        pre = delta * (1 - hs[k] ** 2)
        grad += hs[k - 1].T @ pre
        delta = pre @ np_w.T
    return float(np.sum(hs[-1] ** 2)), grad


def test_a_traced_loop_and_its_gradient_keep_their_values_on_the_gpu(gpus, monkeypatch):
    # `While` returns its results as tensors of the device its body made them on, and its
    # accumulated values as lists on that device; the gradient loop reads each one there. So
    # a traced recurrence on a GPU and its gradient read nothing back to the host, and copy
    # to the device only what does not depend on the iteration count (the simulated GPU's
    # `_Send` hands a value to another partition as a host copy). Before, the loop's results
    # and accumulated values were read back after the loop, and each gradient iteration
    # copied one value per accumulator to the device.
    gpus(1)
    np_w = np.array([[0.5, -0.2], [0.1, 0.4]], np.float32)
    np_x = np.array([[1.0, -1.0]], np.float32)
    w, x = tf.Variable(np_w), tf.constant(np_x)

    @tf.function
    def step(n):
        with tf.GradientTape() as tape:
            _, h = tf.while_loop(lambda i, h: i < n, lambda i, h: (i + 1, tf.tanh(h @ w + x)),
                                 (0, x))
            loss = tf.reduce_sum(h * h)
        return loss, tape.gradient(loss, w)

    counts = {n: tf.constant(n) for n in (2, 4, 8)}
    step(counts[2])
    step(counts[2])  # (a loop body is compiled on its second run)
    reads, uploads = [], []
    to_host, upload = VirtualDevice.to_host, VirtualDevice._upload
    monkeypatch.setattr(VirtualDevice, "to_host", lambda self, a: (
        reads.append(a) if isinstance(a, VirtualArray) else None) or to_host(self, a))
    monkeypatch.setattr(VirtualDevice, "_upload",
                        lambda self, a: uploads.append(a) or upload(self, a))
    results, per_call = {}, []
    for n in (4, 8):
        before = len(uploads)
        results[n] = step(counts[n])
        per_call.append(len(uploads) - before)
    assert reads == []
    assert per_call[0] == per_call[1], per_call
    monkeypatch.undo()
    for n, (loss, grad) in results.items():
        assert loss.device.endswith("GPU:0") and grad.device.endswith("GPU:0")
        want_loss, want_grad = _recurrence_gradient(np_w, np_x, n)
        np.testing.assert_allclose(loss.numpy(), want_loss, rtol=1e-5)
        np.testing.assert_allclose(grad.numpy(), want_grad, rtol=1e-4, atol=1e-6)


def _recorded_uploads(monkeypatch) -> list:
    """The host arrays the simulated GPUs copy to device memory from now on (copies of them)."""
    uploads = []
    upload = VirtualDevice._upload
    monkeypatch.setattr(VirtualDevice, "_upload",
                        lambda self, a: uploads.append(a.copy()) or upload(self, a))
    return uploads


def test_a_host_value_read_on_the_device_is_copied_there_once_per_value(gpus, monkeypatch):
    # A small bool or int32 value of a GPU lives in host memory; a kernel reading it on the
    # device gets a copy (`host_memory.DeviceCopies`), made once per value: a traced program's
    # folded constant is not copied again at every call, nor an eager step's new host values
    # equal to the last step's (a mean's `cast(size, float32)`, `divide_no_nan`'s zero).
    (g0,) = gpus(1)
    uploads = _recorded_uploads(monkeypatch)
    x = tf.constant([1.0, -2.0])
    flip = tf.function(lambda x: tf.where(tf.size(x) > 1, -x, x))  # a folded bool constant
    flip(x)
    flip(x)
    before = len(uploads)
    results = [flip(x) for _ in range(3)]
    assert len(uploads) == before  # the constant's copy is reused
    for r in results:
        np.testing.assert_array_equal(r.numpy(), [-1.0, 2.0])
    for _ in range(3):  # a new host value per iteration, equal each time
        flag = tf.constant(True)
        np.testing.assert_array_equal(tf.where(flag, x, -x).numpy(), [1.0, -2.0])
        np.testing.assert_array_equal(tf.where(~flag, x, -x).numpy(), [-1.0, 2.0])
    # False, once: True's copy is the one the function's folded constant got.
    assert [(u.dtype, u.tolist()) for u in uploads[before:]] == [(np.bool_, False)]
    before = len(uploads)
    means = [tf.reduce_mean(x) / tf.cast(tf.size(x), tf.float32) for _ in range(3)]
    assert [m.numpy() for m in means] == [-0.25] * 3
    assert [u.tolist() for u in uploads[before:]] == [2.0]  # the float32 size, once
    monkeypatch.setattr(host_memory, "SCALAR_COPIES", 4)
    for k in range(10):  # a new value per iteration: the kept copies stay bounded
        count = tf.constant([k, k + 1])
        np.testing.assert_array_equal(tf.cast(count, tf.float32).numpy() * 0 + tf.cast(
            count, tf.float32), [k, k + 1])
    assert len(g0._host_copies._values) <= 4


def test_a_large_host_value_is_copied_to_the_device_once_while_it_lives(gpus, monkeypatch):
    # A host value of more elements than `of_value` keys by value gets one copy for its
    # lifetime, dropped with it (the copy is keyed by the host array, not by its contents).
    (g0,) = gpus(1)
    uploads = _recorded_uploads(monkeypatch)
    value = np.arange(20, dtype=np.int32)
    kept = len(g0._host_copies._copies)
    before = len(uploads)
    for _ in range(3):
        assert g0.in_device_memory(value) is g0.in_device_memory(value)
    assert len(uploads) == before + 1
    assert len(g0._host_copies._copies) == kept + 1
    del value
    gc.collect()
    assert len(g0._host_copies._copies) == kept


def test_a_python_number_becomes_one_device_copy_per_value(gpus, monkeypatch):
    # `x * 1.5` converts 1.5 to a constant of the GPU: its copy to the device is made once per
    # value and dtype and shared (device arrays are never written), instead of a copy launched
    # with every such op. Values are told apart by their bytes: -0.0 is not 0.0.
    (g0,) = gpus(1)
    uploads = _recorded_uploads(monkeypatch)
    x = tf.constant([1.0, -2.0])
    before = len(uploads)
    results = [x * 1.5, tf.maximum(x, 0.0), x * 1.5, tf.maximum(x, 0.0), x + 1.5]
    assert len(uploads) == before + 2  # 1.5 and 0.0 as float32, once each
    np.testing.assert_array_equal(results[2].numpy(), [1.5, -3.0])
    np.testing.assert_array_equal(results[3].numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(results[4].numpy(), [2.5, -0.5])
    assert np.signbit((tf.constant(-0.0) * 1.0).numpy())  # not the cached +0.0
    assert (tf.constant(1.5, tf.float64) * 2.0).numpy() == 3.0  # its own dtype's copy
    monkeypatch.setattr(host_memory, "SCALAR_COPIES", 4)
    for k in range(10):  # a new number per iteration: the kept copies stay bounded
        assert (x * float(k + 10)).numpy()[0] == k + 10
    assert len(g0._host_copies._values) <= 4


def _outcome(fn, *args):
    try:
        value = fn(*args).numpy()
    except Exception as exc:  # noqa: BLE001 - compared as the op library's own outcome
        return type(exc), str(exc)
    return value.dtype, value.shape, value.tobytes()  # bits: signed zeros and NaNs too


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
def test_operators_with_a_python_number_on_a_gpu_give_the_op_librarys_results(gpus, dtype):
    # `x * 1.5` on a GPU launches with the number's constant kept per value; the op library
    # (`tf.multiply(x, 1.5)`) converts it anew. Same values, signs of zeros, dtypes and errors.
    gpus(1)
    x = tf.cast(tf.constant([1.5, -2.0, 0.25, 0.0]), dtype)
    operators = {tf.add: lambda a, b: a + b, tf.subtract: lambda a, b: a - b,
                 tf.multiply: lambda a, b: a * b, tf.divide: lambda a, b: a / b}
    for number in (1.5, 2, -3, 0.0, -0.0, float("nan"), float("inf"), 1e30, 10**40, 7, 1.5):
        for library, operator in operators.items():
            assert _outcome(operator, x, number) == _outcome(library, x, number), \
                (library, number)
            assert _outcome(operator, number, x) == _outcome(library, number, x), \
                (library, number)
