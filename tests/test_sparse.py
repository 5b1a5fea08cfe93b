"""eager.sparse against TensorFlow 2.21 goldens (recorded from TF): values, reprs, errors;
composite round trips through eager.function; gradients w.r.t. the values against finite
differences."""

import numpy as np
import pytest

import eager as tf
from eager import errors


def _st():
    return tf.sparse.SparseTensor(indices=[[0, 1], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])


def test_repr_and_components():
    st = _st()
    assert repr(st) == (
        "SparseTensor(indices=eager.Tensor(\n[[0 1]\n [1 2]], shape=(2, 2), dtype=int64), "
        "values=eager.Tensor([1. 2.], shape=(2,), dtype=float32), "
        "dense_shape=eager.Tensor([3 4], shape=(2,), dtype=int64))")
    assert st.shape.as_list() == [3, 4] and st.dtype == tf.float32
    assert st.indices.dtype == tf.int64 and st.dense_shape.dtype == tf.int64
    assert tf.SparseTensor is tf.sparse.SparseTensor
    assert tf.sparse.SparseTensor([[0, 1]], [1], [2, 2]).dtype == tf.int32
    assert repr(tf.SparseTensorSpec([3, 4], tf.float32)) == \
        "SparseTensorSpec(TensorShape([3, 4]), eager.float32)"
    assert st._type_spec == tf.sparse.SparseTensorSpec([3, 4], tf.float32)
    with pytest.raises(ValueError, match="Dimensions 1 and 2 are not compatible"):
        tf.sparse.SparseTensor([[0, 1]], [1.0, 2.0], [2, 2])


def test_to_dense_and_from_dense():
    st = _st()
    assert tf.sparse.to_dense(st).numpy().tolist() == [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]]
    assert tf.sparse.to_dense(st, default_value=-1.0).numpy().tolist() == \
        [[-1, 1, -1, -1], [-1, -1, 2, -1], [-1, -1, -1, -1]]
    sp = tf.sparse.from_dense(tf.constant([[0, 3, 0], [4, 0, 5]]))
    assert sp.indices.numpy().tolist() == [[0, 1], [1, 0], [1, 2]]
    assert sp.values.numpy().tolist() == [3, 4, 5] and sp.values.dtype == tf.int32
    assert sp.dense_shape.numpy().tolist() == [2, 3]


def test_to_dense_errors_are_tensorflows():
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"indices\[1\] = \[0,1\] is out of order. Many sparse ops require "
                             "sorted indices."):
        tf.sparse.to_dense(tf.sparse.SparseTensor([[1, 0], [0, 1]], [1, 2], [2, 2]))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"indices\[0\] = \[0,5\] is out of bounds: need 0 <= index < "
                             r"\[2,2\]"):
        tf.sparse.to_dense(tf.sparse.SparseTensor([[0, 5]], [1.0], [2, 2]))
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = \[0,1\] is repeated"):
        tf.sparse.to_dense(tf.sparse.SparseTensor([[0, 1], [0, 1]], [1.0, 2.0], [3, 4]))


def test_reductions():
    st = _st()
    assert float(tf.sparse.reduce_sum(st)) == 3.0
    assert tf.sparse.reduce_sum(st, axis=1).numpy().tolist() == [1.0, 2.0, 0.0]
    assert tf.sparse.reduce_sum(st, axis=0, keepdims=True).numpy().tolist() == [[0, 1, 2, 0]]
    assert tf.sparse.reduce_max(st, axis=1).numpy().tolist() == [1.0, 2.0, 0.0]
    assert float(tf.sparse.reduce_max(st)) == 2.0
    neg = tf.sparse.SparseTensor([[0, 1], [1, 2]], [-1.0, -2.0], [3, 4])
    # only stored entries count; a row without any gives 0 (TF 2.21)
    assert tf.sparse.reduce_max(neg, axis=1).numpy().tolist() == [-1.0, -2.0, 0.0]
    assert float(tf.sparse.reduce_max(neg)) == -1.0
    out = tf.sparse.reduce_sum(st, axis=1, output_is_sparse=True)
    assert out.indices.numpy().tolist() == [[0], [1]] and out.values.numpy().tolist() == [1, 2]


def test_sparse_dense_matmul():
    st = _st()
    assert tf.sparse.sparse_dense_matmul(st, tf.ones([4, 2])).numpy().tolist() == \
        [[1, 1], [2, 2], [0, 0]]
    assert tf.sparse.sparse_dense_matmul(tf.ones([2, 3]), st).numpy().tolist() == \
        [[0, 1, 2, 0], [0, 1, 2, 0]]
    assert tf.sparse.sparse_dense_matmul(st, tf.ones([3, 2]), adjoint_a=True).numpy().tolist() \
        == [[0, 0], [1, 1], [2, 2], [0, 0]]
    with pytest.raises(errors.InvalidArgumentError,
                       match="Cannot multiply A and B because inner dimension does not match: "
                             "4 vs. 3."):
        tf.sparse.sparse_dense_matmul(st, tf.ones([3, 2]))


def test_add_concat_transpose_slice_reorder_reshape_map_values():
    st = _st()
    st2 = tf.sparse.SparseTensor([[0, 1], [2, 0]], [10.0, 20.0], [3, 4])
    s = tf.sparse.add(st, st2)
    assert s.indices.numpy().tolist() == [[0, 1], [1, 2], [2, 0]]
    assert s.values.numpy().tolist() == [11.0, 2.0, 20.0]
    assert tf.sparse.add(st, tf.ones([3, 4])).numpy().tolist() == \
        [[1, 2, 1, 1], [1, 1, 3, 1], [1, 1, 1, 1]]
    c0 = tf.sparse.concat(0, [st, st2])
    assert c0.indices.numpy().tolist() == [[0, 1], [1, 2], [3, 1], [5, 0]]
    assert c0.dense_shape.numpy().tolist() == [6, 4]
    c1 = tf.sparse.concat(1, [st, st2])
    assert c1.indices.numpy().tolist() == [[0, 1], [0, 5], [1, 2], [2, 4]]
    assert c1.values.numpy().tolist() == [1.0, 10.0, 2.0, 20.0]
    t = tf.sparse.transpose(st)
    assert t.indices.numpy().tolist() == [[1, 0], [2, 1]] and t.dense_shape.numpy().tolist() \
        == [4, 3]
    sl = tf.sparse.slice(st, [0, 1], [2, 2])
    assert sl.indices.numpy().tolist() == [[0, 0], [1, 1]]
    assert sl.dense_shape.numpy().tolist() == [2, 2]
    r = tf.sparse.reorder(tf.sparse.SparseTensor([[1, 0], [0, 1]], [1, 2], [2, 2]))
    assert r.indices.numpy().tolist() == [[0, 1], [1, 0]] and r.values.numpy().tolist() == [2, 1]
    rs = tf.sparse.reshape(st, [4, 3])
    assert rs.indices.numpy().tolist() == [[0, 1], [2, 0]]
    assert tf.sparse.map_values(tf.math.square, st).values.numpy().tolist() == [1.0, 4.0]
    assert (st * 2.0).values.numpy().tolist() == [2.0, 4.0]
    assert tf.math.abs(st * -1.0).values.numpy().tolist() == [1.0, 2.0]


def test_function_round_trip_and_signature():
    traces = []

    @tf.function
    def f(sp, d):
        traces.append(1)
        return tf.sparse.sparse_dense_matmul(sp, d), sp.with_values(sp.values * 2.0)

    product, doubled = f(_st(), tf.ones([4, 2]))
    assert product.numpy().tolist() == [[1, 1], [2, 2], [0, 0]]
    assert isinstance(doubled, tf.SparseTensor) and doubled.values.numpy().tolist() == [2, 4]
    product, _ = f(tf.sparse.SparseTensor([[2, 3]], [5.0], [3, 4]), tf.ones([4, 2]))
    assert product.numpy().tolist() == [[0, 0], [0, 0], [5, 5]] and len(traces) == 1

    @tf.function(input_signature=[tf.SparseTensorSpec([None, 4], tf.float32)])
    def g(sp):
        return tf.sparse.reduce_sum(sp, axis=1)

    assert g(_st()).numpy().tolist() == [1.0, 2.0, 0.0]
    with pytest.raises(TypeError):
        g(tf.sparse.SparseTensor([[0, 1]], [1], [2, 4]))  # int32 values


def test_gradients_wrt_values():
    b = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    w = np.arange(12.0, dtype=np.float32).reshape(3, 4)

    def loss_of(values):
        sp = tf.sparse.SparseTensor([[0, 1], [1, 2]], values, [3, 4])
        return tf.reduce_sum(tf.sparse.sparse_dense_matmul(sp, b) ** 2) + \
            tf.reduce_sum(tf.sparse.to_dense(sp) * w)

    x0 = np.array([1.0, -2.0], np.float32)
    v = tf.Variable(x0)
    with tf.GradientTape() as tape:
        loss = loss_of(v * 1.0)
    got = tape.gradient(loss, v).numpy()
    eps = 1e-3
    want = [(float(loss_of(tf.constant(x0 + d))) - float(loss_of(tf.constant(x0 - d)))) /
            (2 * eps) for d in np.eye(2, dtype=np.float32) * eps]
    np.testing.assert_allclose(got, want, rtol=1e-2)
