"""`prefetch_to_device` / `copy_to_device` (≈ tf.data.experimental's): elements arrive on the
device (simulated GPUs here), values unchanged; on a machine without the device they stay on the
CPU (soft placement, as TensorFlow's do); cardinality is TensorFlow 2.21's UNKNOWN."""

import threading

import numpy as np

import eager as tf

D = tf.data.Dataset


def test_prefetch_to_device_puts_batches_on_the_gpu(simulated_gpu):
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    ds = D.from_tensor_slices((x, np.arange(6))).batch(4).apply(
        tf.data.experimental.prefetch_to_device("GPU:0", buffer_size=2))
    assert repr(ds).startswith("<_PrefetchDataset ")
    assert int(ds.cardinality()) == -2
    batches = list(ds)
    assert all(t.device.endswith("GPU:0") for b in batches for t in b)
    assert np.array_equal(np.concatenate([b[0].numpy() for b in batches]), x)
    step = tf.function(lambda xb: tf.reduce_sum(xb * 2.0))
    assert [float(step(b[0])) for b in batches] == [2 * float(x[:4].sum()), 2 * float(x[4:].sum())]


def test_copy_to_device(simulated_gpu):
    ds = D.range(3).apply(tf.data.experimental.copy_to_device("/gpu:0"))
    assert repr(ds).startswith("<_CopyToDeviceDataset ")
    out = list(ds)
    assert [t.device.endswith("GPU:0") for t in out] == [True] * 3
    assert [int(t) for t in out] == [0, 1, 2]


def test_without_the_device_elements_stay_on_the_cpu(cpu_only):
    out = list(D.range(3).apply(tf.data.experimental.prefetch_to_device("/gpu:0")))
    assert [int(t) for t in out] == [0, 1, 2]
    assert all(t.device.endswith("CPU:0") for t in out)


def test_a_staged_copy_does_not_wait_for_the_busy_compute_stream(simulated_gpu):
    """The compute stream is held at a gate (unrelated work queued behind it); the staging
    thread's copy of the next batch still lands, because it waits only for its source."""
    gpu = simulated_gpu
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    ds = D.from_tensor_slices(x).batch(2).apply(
        tf.data.experimental.prefetch_to_device("GPU:0", buffer_size=2))
    it = iter(ds)
    got = []
    a = tf.ones((4, 4))
    gpu.synchronize()
    with gpu.compute_stream.paused():
        busy = a * 3.0  # a kernel queued behind the gate
        reader = threading.Thread(target=lambda: got.append(next(it)), daemon=True)
        reader.start()
        reader.join(timeout=30)
        landed = not reader.is_alive() and got[0]._value._ready.query()
        compute_still_blocked = not busy._value._ready.query()
    reader.join(timeout=30)
    assert landed, "the staged copy waited for the compute stream"
    assert compute_still_blocked
    assert got[0]._value._ready._stream is gpu.copy_stream
    np.testing.assert_array_equal(got[0].numpy(), x[:2])
    np.testing.assert_array_equal(np.concatenate([b.numpy() for b in it]), x[2:])


def test_pipeline_threads_run_under_the_device_scope_the_dataset_is_iterated_in(simulated_gpu):
    """A map function's eager part (a py_function body) places its ops as it would on the
    consumer's thread: under the consumer's device scope, with or without pipeline threads."""
    seen = []

    def body(v):
        y = tf.cast(v, tf.float32) * 2.0
        seen.append(y.device)
        return y

    def f(x):
        return tf.py_function(body, [x], tf.float32)

    pipelines = {"sequential": lambda: D.range(3).map(f),
                 "parallel": lambda: D.range(3).map(f, num_parallel_calls=2),
                 "prefetched": lambda: D.range(3).map(f).prefetch(2),
                 "flat_map prefetched": lambda: D.range(3).flat_map(
                     lambda x: D.from_tensors(tf.py_function(body, [x], tf.float32))).prefetch(1)}
    for name, make in pipelines.items():
        for scope, expected in (("CPU:0", "CPU:0"), ("GPU:0", "GPU:0")):
            ds = make()
            seen.clear()  # (flat_map calls its function once as the dataset is built)
            with tf.device(scope):
                out = [float(v) for v in ds]
            assert out == [0.0, 2.0, 4.0], name
            assert seen == [expected] * 3, (name, scope, seen)
        ds = make()
        seen.clear()
        assert [float(v) for v in ds] == [0.0, 2.0, 4.0]
        assert seen == ["GPU:0"] * 3, (name, "no scope")  # the default device
