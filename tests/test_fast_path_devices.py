"""The fast path on every device: ops whose operands all live on the default device run there
without placement (`FAST_PATH.placed_and_tapes`), on a simulated GPU (the dispatch path CuPy
takes) as on a CPU among several devices; everything else takes the general path.

Speed is not tested; the path taken is, by counting calls of dispatch's `place`, and the fast
path is compared with the general one (a device scope forces it) on values, devices, dtypes,
errors and gradients.
"""

import numpy as np
import pytest

import eager as tf
from eager.base.errors import InvalidArgumentError
from eager.core import context, dispatch
from eager.core.context import _reset_for_tests
from eager.devices import registry


@pytest.fixture
def placements(monkeypatch):
    """A list that gets one entry (the op's name) per call of dispatch's `place`."""
    seen = []
    place = dispatch.place

    def counting(op, inputs, st, attrs=dispatch.NO_ATTRS):
        seen.append(op.name)
        return place(op, inputs, st, attrs)

    monkeypatch.setattr(dispatch, "place", counting)
    return seen


def _binary_ops():
    return {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
            "/": lambda a, b: a / b, "add": tf.add, "maximum": tf.maximum,
            "matmul": lambda a, b: tf.matmul(tf.reshape(a, (2, 2)), tf.reshape(b, (2, 2)))}


def test_ops_on_one_gpus_tensors_skip_placement_and_match_the_general_path(
        simulated_gpu, no_inference_check, placements):
    xn = np.array([1.5, -2.0, 3.0, 4.0], np.float32)
    yn = np.array([0.5, 4.0, -1.0, 8.0], np.float32)
    x, y = tf.constant(xn), tf.constant(yn)
    assert x.device == "GPU:0"
    placements.clear()
    fast = {name: fn(x, y) for name, fn in _binary_ops().items()}
    fast["exp"] = tf.exp(x)
    fast["sum"] = tf.reduce_sum(x)
    assert placements == []  # no op was placed
    with tf.device("GPU:0"):  # a scope: the general path, placement included
        general = {name: fn(x, y) for name, fn in _binary_ops().items()}
        general["exp"] = tf.exp(x)
        general["sum"] = tf.reduce_sum(x)
    assert placements  # the general path places
    for name, t in fast.items():
        g = general[name]
        assert (t.device, t.dtype, t.shape) == (g.device, g.dtype, g.shape) == (
            "GPU:0", g.dtype, g.shape), name
        np.testing.assert_array_equal(t.numpy(), g.numpy(), err_msg=name)
    np.testing.assert_array_equal(fast["/"].numpy(), xn / yn)


def test_integer_operators_on_a_gpu_skip_placement(simulated_gpu, no_inference_check,
                                                   placements):
    x, y = tf.constant([7, -3, 4], tf.int32), tf.constant([2, 5, -4], tf.int32)
    placements.clear()
    s, d, p = x + y, x - y, x * y
    assert placements == []
    assert s.dtype == tf.int32 and s.device == "GPU:0"
    np.testing.assert_array_equal(s.numpy(), [9, 2, 0])
    np.testing.assert_array_equal(d.numpy(), [5, -8, 8])
    np.testing.assert_array_equal(p.numpy(), [14, -15, -16])
    q = x / y  # TensorFlow's truediv of integers: cast to float64 first, the general path
    assert q.dtype == tf.float64
    np.testing.assert_allclose(q.numpy(), [3.5, -0.6, -1.0])


def test_mixed_device_operands_take_the_general_path(simulated_gpu, no_inference_check,
                                                     placements):
    with tf.device("CPU:0"):
        c = tf.constant([1.0, 2.0])
    g = tf.constant([10.0, 20.0])
    assert (c.device, g.device) == ("CPU:0", "GPU:0")
    placements.clear()
    s, t = c + g, tf.add(g, c)
    assert placements == ["AddV2", "AddV2"]
    assert s.device == t.device == "GPU:0"  # the default device, the CPU operand copied there
    np.testing.assert_array_equal(s.numpy(), [11.0, 22.0])
    np.testing.assert_array_equal(t.numpy(), [11.0, 22.0])


def test_operands_on_another_gpu_run_on_the_default_one(no_inference_check, placements):
    _reset_for_tests()
    tf.config.experimental.set_simulated_gpus(2)
    try:
        with tf.device("GPU:1"):
            a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
        placements.clear()
        s, t = a + b, tf.multiply(a, b)
        assert placements == ["AddV2", "Mul"]  # not on the default device: placed
        assert s.device == t.device == "GPU:0"  # as placement decides without a scope
        np.testing.assert_array_equal(s.numpy(), [4.0, 6.0])
        np.testing.assert_array_equal(t.numpy(), [3.0, 8.0])
    finally:
        tf.experimental.sync_devices()
        _reset_for_tests()
        registry.devices()


def test_resource_ops_elsewhere_and_ops_without_a_gpu_kernel_are_placed(
        simulated_gpu, no_inference_check, placements):
    v = tf.Variable([1.0, 2.0])  # on the default device, GPU:0
    placements.clear()
    v.assign_add(tf.constant([1.0, 1.0]))
    np.testing.assert_array_equal(v.read_value().numpy(), [2.0, 3.0])
    assert placements == []  # the handle and the value live where placement would run it
    with tf.device("CPU:0"):
        w = tf.Variable([1.0, 2.0])
    placements.clear()
    w.assign_add(tf.constant([1.0, 1.0]))  # the value on GPU:0, the variable on the CPU
    assert placements == ["AssignAddVariableOp"]
    np.testing.assert_array_equal(w.read_value().numpy(), [2.0, 3.0])
    assert w.device.endswith("CPU:0") and v.device.endswith("GPU:0")
    placements.clear()
    s = tf.strings.as_string(tf.constant([1, 2]))  # strings live in host memory
    assert s.device == "CPU:0"
    assert placements


def test_errors_on_the_fast_path_are_the_general_paths(simulated_gpu, no_inference_check):
    x, y = tf.constant([1.0, 2.0, 3.0]), tf.constant([1.0, 2.0])
    for fn in (lambda: x + y, lambda: tf.add(x, y), lambda: x * y):
        with pytest.raises(InvalidArgumentError) as fast:
            fn()
        with tf.device("GPU:0"), pytest.raises(InvalidArgumentError) as general:
            fn()
        assert str(fast.value) == str(general.value)
        assert "Incompatible shapes" in str(fast.value)
    with pytest.raises(InvalidArgumentError):  # dtypes differ: the op library's error
        x + tf.constant([1, 2, 3])


def test_tapes_record_the_fast_paths_ops_on_a_gpu(simulated_gpu, no_inference_check,
                                                  placements):
    xn = np.array([0.5, -1.5, 2.0], np.float32)
    w = tf.constant(xn)
    placements.clear()
    with tf.GradientTape() as tape:
        tape.watch(w)
        y = tf.reduce_sum(w * w / (w + tf.exp(w)) - w)
    grad = tape.gradient(y, w)
    assert placements == []
    with tf.device("GPU:0"), tf.GradientTape() as tape:
        tape.watch(w)
        y2 = tf.reduce_sum(w * w / (w + tf.exp(w)) - w)
    grad2 = tape.gradient(y2, w)
    assert grad.device == "GPU:0"
    np.testing.assert_array_equal(y.numpy(), y2.numpy())
    np.testing.assert_array_equal(grad.numpy(), grad2.numpy())


def test_the_switch_follows_scopes_and_the_default_device(simulated_gpu, no_inference_check):
    tf.constant(0.0)
    fast = context.FAST_PATH
    assert fast.placed_and_tapes and fast.default is simulated_gpu
    assert not fast.kernel_only  # several devices: the single-device switches stay off
    x = tf.constant([1.0])
    assert x._meta.launch_arith and not x._meta.fast_arith
    with tf.device("CPU:0"):
        assert not fast.placed_and_tapes and not x._meta.launch_arith
    assert fast.placed_and_tapes and x._meta.launch_arith


def test_several_cpus_run_ops_on_the_default_one_without_placement(
        logical_cpus, no_inference_check, placements):
    logical_cpus(2)
    x, y = tf.constant([1.0, 2.0]), tf.constant([3.0, 5.0])
    placements.clear()
    s, t = x + y, tf.subtract(x, y)
    assert placements == []
    assert s.device == t.device == "CPU:0"
    np.testing.assert_array_equal(s.numpy(), [4.0, 7.0])
    with tf.device("CPU:1"):
        a, b = tf.constant([1.0]), tf.constant([2.0])
    placements.clear()
    assert (a + b).device == "CPU:0"  # not on the default device: placed there
    assert placements == ["AddV2"]


def test_simulated_gpus_that_only_launch_give_zeros_of_the_right_type(no_inference_check):
    _reset_for_tests()
    tf.config.experimental.set_simulated_gpus(1)
    registry.set_simulated_kernels(False)
    try:
        x = tf.constant([1.0, 2.0, 3.0])
        s = tf.matmul(tf.reshape(x, (3, 1)), tf.reshape(x, (1, 3))) + 1.0
        assert (s.device, s.dtype, s.shape) == ("GPU:0", tf.float32, (3, 3))
        np.testing.assert_array_equal(s.numpy(), np.zeros((3, 3), np.float32))
        with pytest.raises(RuntimeError, match="initialized"):
            registry.set_simulated_kernels(True)
    finally:
        _reset_for_tests()
        registry.devices()
    assert registry._state.simulated_kernels  # a reset runs kernels again
