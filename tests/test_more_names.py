"""tf.* names TensorFlow composes in Python, against TensorFlow 2.21's recorded values and
errors: nn's loss scaling, convolution/max_pool front ends, math.confusion_matrix, repeat,
saturate_cast, and config.experimental's memory growth and older device-configuration names."""

import inspect

import numpy as np
import pytest

import eager as tf


def test_compute_average_loss_is_tfs_with_one_replica():
    loss = tf.constant([1., 2, 3, 4])
    assert float(tf.nn.compute_average_loss(loss)) == 2.5
    assert float(tf.nn.compute_average_loss(loss, sample_weight=tf.constant([1., 0, 1, 0]))) == 1
    assert float(tf.nn.compute_average_loss(loss, global_batch_size=8)) == 1.25
    assert float(tf.nn.compute_average_loss(tf.constant([[1., 2], [3, 4]]))) == 5
    assert float(tf.nn.compute_average_loss(tf.constant([1., 2]), sample_weight=2.)) == 3
    assert float(tf.nn.compute_average_loss(tf.constant([1., 2]), global_batch_size=0)) == 0
    ints = tf.nn.compute_average_loss(tf.constant([1, 2]))
    assert ints.dtype == tf.float64 and float(ints) == 1.5
    with pytest.raises(ValueError, match="Expected a tensor with at least rank 1. Received "
                                         "per_example_loss=2.0 with rank 0"):
        tf.nn.compute_average_loss(tf.constant(2.))


def test_compute_average_loss_differentiates_and_traces():
    w = tf.Variable([1., 2., 3.])
    with tf.GradientTape() as g:
        loss = tf.nn.compute_average_loss(w * w)
    np.testing.assert_allclose(g.gradient(loss, w).numpy(), [2 / 3, 4 / 3, 2])
    f = tf.function(lambda x: tf.nn.compute_average_loss(x))
    assert float(f(tf.constant([2., 4.]))) == 3


def test_scale_regularization_loss_is_tfs():
    assert float(tf.nn.scale_regularization_loss(tf.constant(3.))) == 3
    assert float(tf.nn.scale_regularization_loss([tf.constant(3.), tf.constant(1.)])) == 4


def test_convolution_and_max_pool_dispatch_by_rank():
    np.testing.assert_array_equal(
        tf.nn.max_pool(tf.reshape(tf.range(16.), [1, 4, 4, 1]), 2, 2, "VALID").numpy().ravel(),
        [5, 7, 13, 15])
    np.testing.assert_array_equal(
        tf.nn.max_pool1d(tf.reshape(tf.range(8.), [1, 8, 1]), 2, 2, "VALID").numpy().ravel(),
        [1, 3, 5, 7])
    np.testing.assert_array_equal(
        tf.nn.max_pool(tf.reshape(tf.range(8.), [1, 8, 1]), 2, 2, "VALID").numpy().ravel(),
        [1, 3, 5, 7])
    np.testing.assert_array_equal(
        tf.nn.convolution(tf.ones([1, 5, 1]), tf.ones([3, 1, 1]), padding="SAME").numpy().ravel(),
        [2, 3, 3, 3, 2])
    assert tf.nn.convolution(tf.ones([1, 4, 4, 1]), tf.ones([3, 3, 1, 2]), strides=1,
                             padding="VALID").shape == (1, 2, 2, 2)
    x = np.random.default_rng(0).standard_normal((2, 7, 3)).astype(np.float32)
    k = np.random.default_rng(1).standard_normal((3, 3, 4)).astype(np.float32)
    ref = np.stack([np.einsum("bkc,kco->bo", x[:, i:i + 3], k) for i in range(0, 5, 2)], 1)
    np.testing.assert_allclose(tf.nn.conv1d(x, k, 2, "VALID").numpy(), ref, rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(ValueError, match="rank 3 or 4"):
        tf.nn.max_pool(tf.ones([1, 2, 2, 2, 1]), 2, 2, "VALID")


def test_confusion_matrix_is_tfs():
    np.testing.assert_array_equal(
        tf.math.confusion_matrix([1, 2, 4], [2, 2, 4]).numpy(),
        [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]])
    m = tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], num_classes=6, weights=[1, 2, 3],
                                 dtype=tf.float32)
    assert m.dtype == tf.float32 and m.shape == (6, 6)
    assert m.numpy()[1, 2] == 1 and m.numpy()[2, 2] == 2 and m.numpy()[4, 4] == 3
    with pytest.raises(tf.errors.InvalidArgumentError, match="`labels` contains negative"):
        tf.math.confusion_matrix([1, -2], [2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="`predictions` out of bound"):
        tf.math.confusion_matrix([1, 2], [2, 5], num_classes=3)


def test_repeat_is_tfs():
    np.testing.assert_array_equal(tf.repeat([1, 2, 3], 2).numpy(), [1, 1, 2, 2, 3, 3])
    np.testing.assert_array_equal(tf.repeat([[1, 2], [3, 4]], [1, 2], axis=0).numpy(),
                                  [[1, 2], [3, 4], [3, 4]])
    np.testing.assert_array_equal(tf.repeat([[1, 2], [3, 4]], 2, axis=1).numpy(),
                                  [[1, 1, 2, 2], [3, 3, 4, 4]])
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        tf.repeat([[1, 2], [3, 4]], [1, 2, 3], axis=0)


def test_saturate_cast_is_tfs():
    out = tf.saturate_cast([-1., 300., 3.7], tf.uint8)
    assert out.dtype == tf.uint8 and out.numpy().tolist() == [0, 255, 3]
    # float32 cannot hold 2**31 - 1: TF clamps to the largest float32 below it
    assert tf.saturate_cast([1e10, -1e10], tf.int32).numpy().tolist() == [2147483520,
                                                                          -2147483648]
    assert tf.saturate_cast(tf.constant([70000, -5]), tf.int16).numpy().tolist() == [32767, -5]
    big = tf.saturate_cast(tf.constant([1e300, -1e300], tf.float64), tf.float32).numpy()
    assert np.isfinite(big).all() and big[0] == np.finfo(np.float32).max


def test_memory_growth_and_older_device_configuration_names():
    cpu = tf.config.list_physical_devices("CPU")[0]
    with pytest.raises(ValueError, match="Cannot set memory growth on non-GPU and "
                                         "non-Pluggable devices"):
        tf.config.experimental.set_memory_growth(cpu, True)
    assert tf.config.experimental.VirtualDeviceConfiguration is \
        tf.config.LogicalDeviceConfiguration
    # the same function (public functions carry eager's traceback-filtering wrapper)
    assert inspect.unwrap(tf.config.experimental.set_virtual_device_configuration) is \
        inspect.unwrap(tf.config.set_logical_device_configuration)
    gpu = tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")
    tf.config.experimental.set_memory_growth(gpu, True)
    assert tf.config.experimental.get_memory_growth(gpu) is True


def test_graph_is_tfs_graph_building_class():
    g = tf.Graph()
    assert tf.Graph is tf.graph.Graph
    with g.as_default():
        assert not tf.executing_eagerly()
        b = tf.constant(2.0) * 3.0
    assert tf.executing_eagerly() and b.graph is g
    assert [op.type for op in g.get_operations()] == ["Const", "Const", "Mul"]
    assert tf.Session(graph=g).run(b) == 6.0


def test_profiler_experimental_names_record_the_trace(tmp_path):
    tf.profiler.experimental.start(str(tmp_path))
    with tf.profiler.experimental.Trace("train", step_num=1):
        tf.matmul(tf.ones((2, 2)), tf.ones((2, 2)))
    trace = tf.profiler.experimental.stop()
    names = [s.name for s in trace.slices]
    assert "train" in names and "MatMul" in names
    assert trace.path.startswith(str(tmp_path))
    with tf.profiler.experimental.Profile(str(tmp_path)) as session:
        tf.ones(2) + 1.0
    assert session.path is not None
    with pytest.raises(tf.errors.UnavailableError):
        tf.profiler.experimental.stop()
