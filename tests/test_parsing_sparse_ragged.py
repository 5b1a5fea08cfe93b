"""`eager.io.parse_example` / `parse_single_example` with `VarLenFeature` (SparseTensor),
`RaggedFeature` (RaggedTensor) and `SparseFeature`, against TensorFlow 2.21's results and
errors on the same serialized Examples."""

import pytest

import eager as tf

# tf.train.Example(a=[1, 2, 3], s=[b"x"], f=[1.5], idx=[0, 3], val=[1.0, 2.0]), then
# (a=[4], f=[2.5, 3.5], idx=[2], val=[5.0]), then (s=[b"y", b"z"]), serialized by TensorFlow.
E1 = (b"\nM\n\n\n\x01s\x12\x05\n\x03\n\x01x\n\x0c\n\x01a\x12\x07\x1a\x05\n\x03\x01\x02\x03\n\x13"
      b"\n\x03val\x12\x0c\x12\n\n\x08\x00\x00\x80?\x00\x00\x00@\n\r\n\x01f\x12\x08\x12\x06\n\x04"
      b"\x00\x00\xc0?\n\r\n\x03idx\x12\x06\x1a\x04\n\x02\x00\x03")
E2 = (b"\n>\n\n\n\x01a\x12\x05\x1a\x03\n\x01\x04\n\x0f\n\x03val\x12\x08\x12\x06\n\x04\x00\x00"
      b"\xa0@\n\x11\n\x01f\x12\x0c\x12\n\n\x08\x00\x00 @\x00\x00`@\n\x0c\n\x03idx\x12\x05\x1a"
      b"\x03\n\x01\x02")
E3 = b"\n\x0f\n\r\n\x01s\x12\x08\n\x06\n\x01y\n\x01z"


def _features():
    return {"a": tf.io.VarLenFeature(tf.int64), "s": tf.io.VarLenFeature(tf.string),
            "r": tf.io.RaggedFeature(tf.float32, value_key="f"),
            "ri": tf.io.RaggedFeature(tf.int64, value_key="idx", row_splits_dtype=tf.int64)}


def _sparse(st):
    return st.indices.numpy().tolist(), st.values.numpy().tolist(), st.dense_shape.numpy().tolist()


def test_parse_example_var_len_and_ragged_match_tensorflow():
    out = tf.io.parse_example([E1, E2, E3], _features())
    assert sorted(out) == ["a", "r", "ri", "s"]
    assert isinstance(out["a"], tf.SparseTensor)
    assert _sparse(out["a"]) == ([[0, 0], [0, 1], [0, 2], [1, 0]], [1, 2, 3, 4], [3, 3])
    assert out["a"].dtype == tf.int64
    assert _sparse(out["s"]) == ([[0, 0], [2, 0], [2, 1]], [b"x", b"y", b"z"], [3, 2])
    assert isinstance(out["r"], tf.RaggedTensor)
    assert out["r"].to_list() == [[1.5], [2.5, 3.5], []]
    assert out["r"].dtype == tf.float32 and out["r"].row_splits.dtype == tf.int32
    assert out["ri"].to_list() == [[0, 3], [2], []] and out["ri"].row_splits.dtype == tf.int64


def test_parse_single_example_var_len_and_ragged_match_tensorflow():
    out = tf.io.parse_single_example(E1, _features())
    assert _sparse(out["a"]) == ([[0], [1], [2]], [1, 2, 3], [3])
    assert _sparse(out["s"]) == ([[0]], [b"x"], [1])
    assert isinstance(out["r"], tf.Tensor) and out["r"].numpy().tolist() == [1.5]
    assert out["ri"].numpy().tolist() == [0, 3]


def test_sparse_feature_matches_tensorflow():
    spec = {"sp": tf.io.SparseFeature("idx", "val", tf.float32, 5)}
    out = tf.io.parse_example([E1, E2], spec)["sp"]
    assert _sparse(out) == ([[0, 0], [0, 3], [1, 2]], [1.0, 2.0, 5.0], [2, 5])
    single = tf.io.parse_single_example(E1, spec)["sp"]
    assert _sparse(single) == ([[0], [3]], [1.0, 2.0], [5])
    assert _sparse(tf.io.parse_example([E1, E3], spec)["sp"]) == \
        ([[0, 0], [0, 3]], [1.0, 2.0], [2, 5])


def test_mixed_with_fixed_len_and_empty_batch():
    out = tf.io.parse_example([E1, E2], {"a": tf.io.VarLenFeature(tf.int64),
                                         "f0": tf.io.FixedLenFeature([], tf.float32, 0.0)})
    assert out["f0"].numpy().tolist() == [0.0, 0.0]
    empty = tf.io.parse_example(tf.constant([], tf.string),
                                {"a": tf.io.VarLenFeature(tf.int64),
                                 "r": tf.io.RaggedFeature(tf.float32, value_key="f")})
    assert _sparse(empty["a"]) == ([], [], [0, 0])
    assert empty["a"].indices.shape == [0, 2]
    assert empty["r"].to_list() == []


def test_var_len_parsing_in_a_function():
    @tf.function
    def parse(serialized):
        out = tf.io.parse_example(serialized, _features())
        return tf.sparse.to_dense(out["a"]), out["r"].row_lengths()
    dense, lengths = parse(tf.constant([E1, E2, E3]))
    assert dense.numpy().tolist() == [[1, 2, 3], [4, 0, 0], [0, 0, 0]]
    assert lengths.numpy().tolist() == [1, 2, 0]


def test_errors_are_tensorflows():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Key: a, Index: 0.  Data types don't match. Expected type: float, "
                             "Actual type: int64"):
        tf.io.parse_example([E1], {"a": tf.io.VarLenFeature(tf.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Key: f, Index: 0.  Data types don't match. Expected type: int64, "
                             "Actual type: float"):
        tf.io.parse_example([E1], {"f": tf.io.RaggedFeature(tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Value for attr 'sparse_types' of int32 is not in the list of "
                             "allowed values: float, int64, string"):
        tf.io.parse_example([E1], {"a": tf.io.VarLenFeature(tf.int32)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Expected serialized to be a scalar or vector, got shape: \[1,2\]"):
        tf.io.parse_example(tf.constant([[E1, E2]]), {"a": tf.io.VarLenFeature(tf.int64)})
