"""eager.experimental.numpy (tnp) against TensorFlow 2.21's tnp: numpy's conversions and result
dtypes over eager tensors, and the methods experimental_enable_numpy_behavior installs (checked
in a fresh process, since the call changes the tensor class for the rest of the process)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import eager as tf
import eager.experimental.numpy as tnp


def check(t, dtype, values):
    assert isinstance(t, tnp.ndarray) and isinstance(t, tf.Tensor)
    assert t.dtype == dtype, (t.dtype, dtype)
    np.testing.assert_allclose(t.numpy(), values)


# (TF 2.21's results, recorded)
def test_conversions_and_creation_follow_numpy():
    check(tnp.asarray([1, 2, 3]), tf.int64, [1, 2, 3])
    check(tnp.asarray([1., 2.]), tf.float64, [1, 2])
    check(tnp.array([1, 2], dtype=tnp.float32), tf.float32, [1, 2])
    check(tnp.ones([2, 2]), tf.float64, np.ones([2, 2]))
    check(tnp.ones((2,), dtype=tnp.int32), tf.int32, [1, 1])
    check(tnp.zeros(3), tf.float64, [0, 0, 0])
    check(tnp.arange(5), tf.int64, range(5))
    check(tnp.arange(1., 3., 0.5), tf.float64, [1, 1.5, 2, 2.5])
    check(tnp.copy([1, 2]), tf.int64, [1, 2])
    check(tnp.expand_dims([1, 2], 0), tf.int64, [[1, 2]])
    assert tnp.newaxis is None
    assert tnp.float32 is np.float32 and tnp.int64 is np.int64
    x = tf.constant([1.0])
    assert tnp.asarray(x) is x


def test_math_promotes_as_numpy():
    check(tnp.sum(tnp.ones([2, 3]), axis=0), tf.float64, [2, 2, 2])
    check(tnp.sum([1, 2, 3]), tf.int64, 6)
    check(tnp.sum(tf.constant([1, 2], tf.int32)), tf.int64, 3)
    check(tnp.square([1, 2]), tf.int64, [1, 4])
    check(tnp.sqrt([4, 9]), tf.float64, [2, 3])
    check(tnp.exp([0, 1]), tf.float64, [1, np.e])
    check(tnp.add([1, 2], [1.5, 2]), tf.float64, [2.5, 4])
    check(tnp.add(tf.constant([1., 2.]), 1.5), tf.float32, [2.5, 3.5])  # a weak Python scalar
    check(tnp.maximum([1, 5], [3, 2]), tf.int64, [3, 5])
    check(tnp.matmul(tnp.ones([2, 3]), tnp.ones([3, 2])), tf.float64, np.full([2, 2], 3.))
    check(tnp.matmul(tf.ones([2, 2]), tnp.ones([2, 2])), tf.float64, np.full([2, 2], 2.))


def test_tnp_results_differentiate():
    x = tnp.asarray([1.0, 4.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = tnp.sum(tnp.sqrt(x))
    np.testing.assert_allclose(g.gradient(y, x).numpy(), [0.5, 0.25])


def test_random_draws_are_float64_and_seeded():
    tnp.random.seed(3)
    a = tnp.random.randn(2, 3)
    tnp.random.seed(3)
    b = tnp.random.randn(2, 3)
    assert a.dtype == tf.float64 and a.shape == (2, 3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    u = tnp.random.rand(100)
    assert u.dtype == tf.float64 and 0 <= float(tf.reduce_min(u)) < float(tf.reduce_max(u)) < 1


def test_numpy_methods_exist_only_after_enabling():
    assert not hasattr(tf.constant([1]), "T")
    script = textwrap.dedent("""
        import eager as tf
        import eager.experimental.numpy as tnp
        tf.experimental.numpy.experimental_enable_numpy_behavior()
        x = tf.constant([[1, 2, 3], [4, 5, 6]])
        print(x.T.numpy().tolist(), x.reshape(3, 2).shape, x.reshape((3, 2)).shape,
              x.ravel().numpy().tolist(), x.transpose().shape, x.astype(tnp.float32).dtype.name,
              x.size, x.tolist(), x.clip(2, 4).numpy().tolist(), x.transpose(1, 0).shape)
        tnp.experimental_enable_numpy_behavior(prefer_float32=True)
        print(tnp.asarray([1.5]).dtype.name, tnp.ones(2).dtype.name)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == ("[[1, 4], [2, 5], [3, 6]] (3, 2) (3, 2) [1, 2, 3, 4, 5, 6] (3, 2) "
                        "float32 6 [[1, 2, 3], [4, 5, 6]] [[2, 2, 3], [4, 4, 4]] (3, 2)")
    assert lines[1] == "float32 float32"


def test_reshape_order_other_than_c_is_refused():
    with pytest.raises(NotImplementedError, match="order='C'"):
        tnp.reshape([1, 2], [2, 1], order="F")
