"""eager.ragged and RaggedTensor against TensorFlow 2.21 goldens (recorded from TF, as the
comments give them): values, dtypes, shapes, reprs, errors; eager.function round trips (one
trace per spec) and gradients through the flat values against finite differences."""

import numpy as np
import pytest

import eager as tf
from eager import errors


def _rt():
    return tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])


def test_constant_repr_shape_partition():
    rt = _rt()
    assert repr(rt) == "<eager.RaggedTensor [[1, 2], [3], [], [4, 5, 6]]>"
    assert rt.shape.as_list() == [4, None] and rt.dtype == tf.int32 and rt.ragged_rank == 1
    assert rt.row_splits.dtype == tf.int64
    assert rt.row_splits.numpy().tolist() == [0, 2, 3, 3, 6]
    assert rt.row_lengths().numpy().tolist() == [2, 1, 0, 3]
    assert rt.value_rowids().numpy().tolist() == [0, 0, 1, 3, 3, 3]
    assert int(rt.nrows()) == 4 and rt.nrows(out_type=tf.int32).dtype == tf.int32
    assert rt.flat_values.numpy().tolist() == [1, 2, 3, 4, 5, 6]
    assert rt.to_list() == [[1, 2], [3], [], [4, 5, 6]]
    assert rt.bounding_shape().numpy().tolist() == [4, 3]
    f = tf.ragged.constant([[1.0, 2.0], [3.0]])
    assert repr(f) == "<eager.RaggedTensor [[1.0, 2.0], [3.0]]>" and f.dtype == tf.float32
    s = tf.ragged.constant([["a", "b"], ["c"]])
    assert repr(s) == "<eager.RaggedTensor [[b'a', b'b'], [b'c']]>"


def test_constant_ranks_and_inner_shape():
    r = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert r.shape.as_list() == [2, None, 2]
    assert repr(r) == "<eager.RaggedTensor [[[1, 2],\n  [3, 4]], [[5, 6]]]>"
    r2 = tf.ragged.constant([[[1, 2], [3]], [[5, 6]]])
    assert r2.shape.as_list() == [2, None, None] and r2.ragged_rank == 2
    assert repr(r2) == "<eager.RaggedTensor [[[1, 2], [3]], [[5, 6]]]>"
    r3 = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], inner_shape=(2,))
    assert repr(r3) == "<eager.RaggedTensor [[[1, 2]], [[3, 4],\n            [5, 6]]]>"
    assert tf.ragged.constant([[1, 2], [3]], dtype=tf.float64).dtype == tf.float64
    assert tf.ragged.constant([[1, 2]], row_splits_dtype=tf.int32).row_splits.dtype == tf.int32
    empty = tf.ragged.constant([])  # no ragged level: a dense float32 vector, as TF
    assert isinstance(empty, tf.Tensor) and empty.shape.as_list() == [0]
    assert empty.dtype == tf.float32
    e2 = tf.ragged.constant([[], []])
    assert e2.shape.as_list() == [2, None] and e2.to_list() == [[], []]
    with pytest.raises(ValueError, match="all scalar values must have the same nesting depth"):
        tf.ragged.constant([[1, 2], [[3]]])


def test_factories():
    assert tf.RaggedTensor.from_row_lengths([1, 2, 3, 4], [2, 0, 2]).to_list() == \
        [[1, 2], [], [3, 4]]
    assert tf.RaggedTensor.from_value_rowids([1, 2, 3, 4], [0, 0, 2, 2], nrows=4).to_list() \
        == [[1, 2], [], [3, 4], []]
    assert tf.RaggedTensor.from_row_starts([1, 2, 3, 4], [0, 2, 2]).to_list() == \
        [[1, 2], [], [3, 4]]
    assert tf.RaggedTensor.from_row_limits([1, 2, 3, 4], [2, 2, 4]).to_list() == \
        [[1, 2], [], [3, 4]]
    dense = [[1, 0, 0], [2, 3, 0]]
    assert tf.RaggedTensor.from_tensor(dense, padding=0).to_list() == [[1], [2, 3]]
    assert tf.RaggedTensor.from_tensor(dense, lengths=[1, 3]).to_list() == [[1], [2, 3, 0]]
    assert tf.RaggedTensor.from_tensor(dense).to_list() == dense
    nested = tf.RaggedTensor.from_nested_row_lengths([1, 2, 3], [[2, 1], [1, 2, 0]])
    assert nested.to_list() == [[[1], [2, 3]], [[]]]
    with pytest.raises(ValueError, match="private"):
        tf.RaggedTensor(tf.constant([1]), tf.constant([0, 1], tf.int64))


def test_factory_errors_are_tensorflows():
    with pytest.raises(errors.InvalidArgumentError,
                       match="Arguments to from_row_splits do not form a valid "
                             "RaggedTensor:zero"):
        tf.RaggedTensor.from_row_splits([1, 2, 3], [1, 3])
    with pytest.raises(errors.InvalidArgumentError,
                       match="Arguments to _from_row_partition do not form a valid "
                             "RaggedTensor"):
        tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2])
    with pytest.raises(errors.InvalidArgumentError, match="RaggedTensor:monotonic"):
        tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 1, 3])
    with pytest.raises(errors.InvalidArgumentError,
                       match="from_row_lengths do not form a valid RowPartition"):
        tf.RaggedTensor.from_row_lengths([1, 2, 3], [4, -1])
    with pytest.raises(errors.InvalidArgumentError, match="_from_row_partition"):
        tf.RaggedTensor.from_row_lengths([1, 2, 3], [1, 1])


def test_to_tensor():
    rt = _rt()
    assert rt.to_tensor().numpy().tolist() == [[1, 2, 0], [3, 0, 0], [0, 0, 0], [4, 5, 6]]
    assert rt.to_tensor().dtype == tf.int32
    assert rt.to_tensor(default_value=-1, shape=[3, 2]).numpy().tolist() == \
        [[1, 2], [3, -1], [-1, -1]]
    assert rt.to_tensor(shape=[None, 5]).shape.as_list() == [4, 5]
    r2 = tf.ragged.constant([[[1, 2], [3]], [[5, 6]]])
    assert r2.to_tensor().numpy().tolist() == [[[1, 2], [3, 0]], [[5, 6], [0, 0]]]


def test_indexing():
    rt = _rt()
    assert rt[0].numpy().tolist() == [1, 2]
    assert int(rt[3, 1]) == 5
    assert rt[-1].numpy().tolist() == [4, 5, 6]
    assert rt[1:3].to_list() == [[3], []]
    assert rt[::-1].to_list() == [[4, 5, 6], [], [3], [1, 2]]
    assert rt[:, :1].to_list() == [[1], [3], [], [4]]
    assert tf.ragged.constant([[1, 2], [3]])[:, 1:].to_list() == [[2], []]
    assert tf.ragged.constant([[[1], [2, 3]], [[4]]])[1].to_list() == [[4]]
    with pytest.raises(IndexError, match="Row key 7 out of bounds"):
        rt[7]
    with pytest.raises(ValueError, match="Cannot index into an inner ragged dimension."):
        rt[:, 1]
    assert [r.numpy().tolist() for r in tf.ragged.constant([[1, 2], [3]])] == [[1, 2], [3]]


def test_elementwise_operators():
    rt = _rt()
    assert (rt + 1).to_list() == [[2, 3], [4], [], [5, 6, 7]]
    assert (rt * 2).to_list() == [[2, 4], [6], [], [8, 10, 12]]
    assert (rt / 2).to_list() == [[0.5, 1.0], [1.5], [], [2.0, 2.5, 3.0]]
    assert (rt + rt).to_list() == [[2, 4], [6], [], [8, 10, 12]]
    assert (1 - rt).to_list() == [[0, -1], [-2], [], [-3, -4, -5]]
    assert (rt == rt).to_list() == [[True, True], [True], [], [True, True, True]]
    f = tf.ragged.constant([[1.0, 2.0], [3.0]])
    assert (f + tf.constant([[1.0], [2.0]])).to_list() == [[2.0, 3.0], [5.0]]
    assert (-f).to_list() == [[-1.0, -2.0], [-3.0]]
    assert abs(-f).to_list() == [[1.0, 2.0], [3.0]]
    assert tf.math.square(f).to_list() == [[1.0, 4.0], [9.0]]
    c = tf.cast(rt, tf.float32)
    assert c.dtype == tf.float32 and c.to_list() == [[1.0, 2.0], [3.0], [], [4.0, 5.0, 6.0]]
    assert tf.ragged.map_flat_values(tf.ones_like, rt).to_list() == [[1, 1], [1], [], [1, 1, 1]]
    with pytest.raises(errors.InvalidArgumentError, match="Condition x == y did not hold"):
        f + tf.ragged.constant([[1.0], [2.0, 3.0]])
    with pytest.raises(errors.InvalidArgumentError):
        f + tf.constant([1.0, 2.0])  # TF: InvalidArgumentError (not broadcastable)


def test_reductions():
    rt = _rt()
    assert tf.reduce_sum(rt, axis=1).numpy().tolist() == [3, 3, 0, 15]
    assert tf.reduce_sum(rt, axis=0).numpy().tolist() == [8, 7, 6]
    assert int(tf.reduce_sum(rt)) == 21
    assert tf.reduce_max(rt, axis=1).numpy().tolist() == [2, 3, -2147483648, 6]
    assert tf.reduce_max(rt, axis=0).numpy().tolist() == [4, 5, 6]
    g = tf.ragged.constant([[1.0, 2.0], [], [3.0]])
    mean = tf.reduce_mean(g, axis=1).numpy()
    assert mean[0] == 1.5 and np.isnan(mean[1]) and mean[2] == 3.0
    assert tf.reduce_max(g, axis=1).numpy().tolist() == [2.0, np.finfo(np.float32).min, 3.0]
    assert tf.reduce_min(g, axis=1).numpy().tolist() == [1.0, np.finfo(np.float32).max, 3.0]


def test_range_concat_stack_boolean_mask():
    assert tf.ragged.range([3, 1, 0]).to_list() == [[0, 1, 2], [0], []]
    assert tf.ragged.range([0, 2], [3, 5], [1, 2]).to_list() == [[0, 1, 2], [2, 4]]
    rt = _rt()
    assert tf.concat([rt, rt[:2]], axis=0).to_list() == \
        [[1, 2], [3], [], [4, 5, 6], [1, 2], [3]]
    f = tf.ragged.constant([[1.0, 2.0], [3.0]])
    assert tf.concat([f, f], axis=1).to_list() == [[1.0, 2.0, 1.0, 2.0], [3.0, 3.0]]
    st = tf.stack([f, f], axis=0)
    assert st.to_list() == [[[1.0, 2.0], [3.0]], [[1.0, 2.0], [3.0]]]
    assert repr(st) == "<eager.RaggedTensor [[[1.0, 2.0], [3.0]],\n [[1.0, 2.0], [3.0]]]>"
    mask = tf.ragged.constant([[True, False], [True], [], [False, True, True]])
    assert tf.ragged.boolean_mask(rt, mask).to_list() == [[1], [3], [], [5, 6]]
    assert tf.ragged.boolean_mask([[1, 2], [3, 4]], [[True, False], [True, True]]).to_list() \
        == [[1], [3, 4]]


def test_spec():
    spec = tf.RaggedTensorSpec([None, None], tf.int32)
    assert repr(spec) == "RaggedTensorSpec(TensorShape([None, None]), eager.int32, 1, eager.int64)"
    assert repr(_rt()._type_spec) == \
        "RaggedTensorSpec(TensorShape([4, None]), eager.int32, 1, eager.int64)"
    assert tf.RaggedTensorSpec.from_value(_rt()) == _rt()._type_spec
    assert spec.is_compatible_with(_rt())
    assert tf.ragged.RaggedTensorSpec is tf.RaggedTensorSpec


def test_function_arguments_results_and_trace_once_per_spec():
    traces = []

    @tf.function
    def f(rt, s):
        traces.append(1)
        return rt * s + 1.0, tf.reduce_sum(rt, axis=1)

    a = tf.ragged.constant([[1.0, 2.0], [3.0]])
    b = tf.ragged.constant([[1.0], [3.0, 4.0, 5.0]])
    out, sums = f(a, 2.0)
    assert isinstance(out, tf.RaggedTensor) and out.to_list() == [[3.0, 5.0], [7.0]]
    assert sums.numpy().tolist() == [3.0, 3.0]
    out, sums = f(b, 2.0)  # same spec (2 rows): no new trace
    assert out.to_list() == [[3.0], [7.0, 9.0, 11.0]] and len(traces) == 1
    f(tf.ragged.constant([[1.0], [3.0], []]), 2.0)  # 3 rows: another spec
    assert len(traces) == 2


def test_function_input_signature():
    traces = []

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32)])
    def g(rt):
        traces.append(1)
        return rt.row_lengths(), rt.to_tensor()

    lengths, dense = g(tf.ragged.constant([[1.0, 2.0], [3.0]]))
    assert lengths.numpy().tolist() == [2, 1] and dense.numpy().tolist() == [[1, 2], [3, 0]]
    lengths, dense = g(tf.ragged.constant([[1.0], [3.0], []]))
    assert lengths.numpy().tolist() == [1, 1, 0] and len(traces) == 1
    assert g.get_concrete_function().structured_input_signature == \
        ((tf.RaggedTensorSpec([None, None], tf.float32),), {})
    with pytest.raises(TypeError, match="Can not cast RaggedTensorSpec"):
        g(tf.ragged.constant([[1, 2]]))


def _finite_difference(fn, x, eps=1e-3):
    x = np.asarray(x, np.float64)
    grad = np.zeros_like(x)
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        grad.flat[i] = (fn(x + d) - fn(x - d)) / (2 * eps)
    return grad


def test_gradients_reach_flat_values():
    weights = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)

    def loss_of(values):
        rt = tf.RaggedTensor.from_row_lengths(values, [2, 1])
        padded = rt.to_tensor(shape=[2, 3]) * weights
        return tf.reduce_sum(padded) + tf.reduce_sum(tf.reduce_max(rt * rt, axis=1))

    x0 = np.array([0.5, -1.5, 2.0], np.float32)
    v = tf.Variable(x0)
    with tf.GradientTape() as tape:
        loss = loss_of(v * 1.0)
    got = tape.gradient(loss, v).numpy()
    want = _finite_difference(lambda x: float(loss_of(tf.constant(x, tf.float32))), x0)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)

    @tf.function
    def through_function(rt):
        return tf.reduce_sum(rt, axis=1)

    with tf.GradientTape() as tape:
        rt = tf.RaggedTensor.from_row_lengths(v * 1.0, [2, 1])
        total = tf.reduce_sum(through_function(rt) * tf.constant([1.0, 10.0]))
    assert tape.gradient(total, v).numpy().tolist() == [1.0, 1.0, 10.0]
