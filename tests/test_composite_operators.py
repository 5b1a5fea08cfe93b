"""A dense tensor's operators with a ragged or sparse operand (`dense + ragged`, reflected and
comparisons) and `eager.is_tensor` of composites, against TensorFlow 2.21's results."""

import operator

import pytest

import eager as tf

# TensorFlow: op(tf.constant([[10], [20]]), r) and op(tf.constant(2), r), r = [[1], [2, 3]].
GOLDEN = {
    "add": ([[11], [22, 23]], [[3], [4, 5]]), "sub": ([[9], [18, 17]], [[1], [0, -1]]),
    "mul": ([[10], [40, 60]], [[2], [4, 6]]), "floordiv": ([[10], [10, 6]], [[2], [1, 0]]),
    "mod": ([[0], [0, 2]], [[0], [0, 2]]), "pow": ([[10], [400, 8000]], [[2], [4, 8]]),
    "lt": ([[False], [False, False]], [[False], [False, True]]),
    "le": ([[False], [False, False]], [[False], [True, True]]),
    "gt": ([[True], [True, True]], [[True], [False, False]]),
    "ge": ([[True], [True, True]], [[True], [True, False]]),
    "eq": ([[False], [False, False]], [[False], [True, False]]),
    "ne": ([[True], [True, True]], [[True], [False, True]]),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_dense_operator_ragged_matches_tensorflow(name):
    op = getattr(operator, name)
    r = tf.ragged.constant([[1], [2, 3]])
    column, scalar = GOLDEN[name]
    out = op(tf.constant([[10], [20]]), r)
    assert isinstance(out, tf.RaggedTensor) and out.to_list() == column
    assert op(tf.constant(2), r).to_list() == scalar


def test_dense_truediv_and_logical_ragged():
    rf = tf.ragged.constant([[1.0], [2.0, 4.0]])
    assert (tf.constant([[10.0], [20.0]]) / rf).to_list() == [[10.0], [10.0, 5.0]]
    assert (tf.constant(2.0) / rf).to_list() == [[2.0], [1.0, 0.5]]
    b, rb = tf.constant([[True], [False]]), tf.ragged.constant([[True], [True, False]])
    assert (b & rb).to_list() == [[True], [False, False]]
    assert (b | rb).to_list() == [[True], [True, False]]
    assert (b ^ rb).to_list() == [[False], [True, False]]


def test_dense_operator_ragged_in_a_function():
    @tf.function
    def f(d, r):
        return d + r, d * r
    added, multiplied = f(tf.constant(10), tf.ragged.constant([[1], [2, 3]]))
    assert added.to_list() == [[11], [12, 13]] and multiplied.to_list() == [[10], [20, 30]]


def test_dense_times_sparse_and_unsupported_sparse_sum():
    sp = tf.sparse.from_dense(tf.constant([[1.0, 0.0], [0.0, 2.0]]))
    out = tf.constant(2.0) * sp
    assert isinstance(out, tf.SparseTensor)
    assert out.values.numpy().tolist() == [2.0, 4.0]
    assert out.indices.numpy().tolist() == [[0, 0], [1, 1]]
    with pytest.raises(ValueError, match="Attempt to convert a value"):  # as TF
        tf.constant([[1.0, 1.0], [1.0, 1.0]]) + sp


def test_is_tensor_of_composites():
    assert tf.is_tensor(tf.ragged.constant([[1], [2, 3]]))
    assert tf.is_tensor(tf.sparse.from_dense(tf.constant([[1.0, 0.0]])))
    assert not tf.is_tensor(tf.RaggedTensorSpec([None, None], tf.int32))
    assert not tf.is_tensor([1, 2])
