"""Ragged and sparse elements through `eager.data`: goldens recorded from TensorFlow 2.21
(element specs, values), eagerly and inside `eager.function`."""

import numpy as np

import eager as tf


def _rt():
    return tf.ragged.constant([[1, 2], [3], [4, 5, 6]])


def test_from_tensor_slices_ragged_rows_are_dense_at_ragged_rank_1():
    ds = tf.data.Dataset.from_tensor_slices(_rt())
    assert ds.element_spec.shape.as_list() == [None]
    assert [x.numpy().tolist() for x in ds] == [[1, 2], [3], [4, 5, 6]]


def test_from_tensor_slices_ragged_rank_2_rows_are_ragged():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[[1], [2, 3]], [[4]]]))
    assert repr(ds.element_spec) == \
        "RaggedTensorSpec(TensorShape([None, None]), eager.int32, 1, eager.int64)"
    assert [x.to_list() for x in ds] == [[[1], [2, 3]], [[4]]]
    batched = ds.batch(2)
    assert repr(batched.element_spec) == \
        "RaggedTensorSpec(TensorShape([None, None, None]), eager.int32, 2, eager.int64)"
    assert [x.to_list() for x in batched] == [[[[1], [2, 3]], [[4]]]]


def test_from_tensors_ragged_and_sparse_specs():
    assert repr(tf.data.Dataset.from_tensors(_rt()).element_spec) == \
        "RaggedTensorSpec(TensorShape([3, None]), eager.int32, 1, eager.int64)"
    st = tf.sparse.SparseTensor([[0, 0], [1, 2]], [1., 2.], [2, 3])
    ds = tf.data.Dataset.from_tensors(st)
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([2, 3]), eager.float32)"
    (got,) = list(ds)
    np.testing.assert_array_equal(tf.sparse.to_dense(got).numpy(), [[1, 0, 0], [0, 0, 2]])
    r = tf.data.Dataset.from_tensors(_rt()).repeat(2).batch(2)
    assert repr(r.element_spec) == \
        "RaggedTensorSpec(TensorShape([None, 3, None]), eager.int32, 2, eager.int64)"
    assert [x.to_list() for x in r] == [[[[1, 2], [3], [4, 5, 6]]] * 2]


def test_from_tensor_slices_sparse_rows():
    st = tf.sparse.SparseTensor([[0, 0], [1, 2]], [1., 2.], [2, 3])
    ds = tf.data.Dataset.from_tensor_slices(st)
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([3]), eager.float32)"
    rows = list(ds)
    assert [r.indices.numpy().tolist() for r in rows] == [[[0]], [[2]]]
    assert [r.values.numpy().tolist() for r in rows] == [[1.0], [2.0]]
    assert [r.dense_shape.numpy().tolist() for r in rows] == [[3], [3]]


def _sparse_ds():
    return tf.data.Dataset.range(3).map(
        lambda x: tf.sparse.SparseTensor([[0]], tf.reshape(x, [1]), tf.reshape(x + 1, [1])))


def test_map_returning_sparse_and_batch_of_sparse():
    ds = _sparse_ds()
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([None]), eager.int64)"
    b = ds.batch(2)
    assert repr(b.element_spec) == "SparseTensorSpec(TensorShape([None, None]), eager.int64)"
    got = list(b)
    assert [g.indices.numpy().tolist() for g in got] == [[[0, 0], [1, 0]], [[0, 0]]]
    assert [g.values.numpy().tolist() for g in got] == [[0, 1], [2]]
    assert [g.dense_shape.numpy().tolist() for g in got] == [[2, 2], [1, 3]]


def test_map_strings_split_returns_ragged():
    ds = tf.data.Dataset.from_tensor_slices(["a b c", "d", "e f"]).batch(2).map(
        tf.strings.split)
    assert repr(ds.element_spec) == \
        "RaggedTensorSpec(TensorShape([None, None]), eager.string, 1, eager.int64)"
    assert [x.to_list() for x in ds] == [[[b"a", b"b", b"c"], [b"d"]], [[b"e", b"f"]]]


def test_ragged_batch_and_dense_to_ragged_batch():
    d = tf.data.Dataset.range(5).map(lambda x: tf.range(x))
    want = [[[], [0]], [[0, 1], [0, 1, 2]], [[0, 1, 2, 3]]]
    for b in (d.ragged_batch(2), d.apply(tf.data.experimental.dense_to_ragged_batch(2))):
        assert repr(b.element_spec) == \
            "RaggedTensorSpec(TensorShape([None, None]), eager.int64, 1, eager.int64)"
        assert [x.to_list() for x in b] == want
    b = d.ragged_batch(2, drop_remainder=True, row_splits_dtype=tf.int32)
    assert repr(b.element_spec) == \
        "RaggedTensorSpec(TensorShape([2, None]), eager.int64, 1, eager.int32)"
    assert [x.to_list() for x in b] == want[:2]
    d2 = tf.data.Dataset.range(3).map(lambda x: tf.fill([x, 2], x)).ragged_batch(2)
    assert repr(d2.element_spec) == \
        "RaggedTensorSpec(TensorShape([None, None, 2]), eager.int64, 1, eager.int64)"
    assert [x.to_list() for x in d2] == [[[], [[1, 1]]], [[[2, 2], [2, 2]]]]
    r = tf.data.Dataset.from_tensor_slices(_rt()).ragged_batch(2)
    assert [x.to_list() for x in r] == [[[1, 2], [3]], [[4, 5, 6]]]


def test_composite_elements_iterate_inside_function():
    ds = tf.data.Dataset.from_tensors(_rt()).repeat(3).map(lambda r: r * 2)
    sp = _sparse_ds().batch(2)

    @tf.function
    def ragged_sum():
        s = tf.constant(0)
        for r in ds:
            s += tf.reduce_sum(r.flat_values)
        return s

    @tf.function
    def sparse_sum():
        s = tf.constant(0, tf.int64)
        for b in sp:
            s += tf.reduce_sum(tf.sparse.to_dense(b))
        return s

    assert int(ragged_sum()) == 3 * 42
    assert int(sparse_sum()) == 3
