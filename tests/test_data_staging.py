"""`prefetch_to_device` / `copy_to_device` (≈ tf.data.experimental's): elements arrive on the
device (simulated GPUs here), values unchanged; on a machine without the device they stay on the
CPU (soft placement, as TensorFlow's do); cardinality is TensorFlow 2.21's UNKNOWN."""

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
