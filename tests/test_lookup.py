"""`eager.lookup` against TensorFlow 2.21: static hash and vocabulary tables, their
initializers, out-of-vocabulary ids (TF's Fingerprint64 buckets), errors, and lookups inside
traced functions and `Dataset.map`."""

import pytest

import eager as tf


@pytest.fixture
def vocab_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("emerson\nlake\npalmer\n")
    return str(path)


def _letters():
    return tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], [1, 2, 3]), -1)


def test_static_hash_table_lookup_size_export():
    table = _letters()
    assert table.key_dtype == tf.string and table.value_dtype == tf.int32
    assert int(table.default_value) == -1 and table.default_value.dtype == tf.int32
    size = table.size()
    assert size.dtype == tf.int64 and int(size) == 3
    out = table.lookup(tf.constant([["a", "z"], ["c", "b"]]))
    assert out.dtype == tf.int32 and out.numpy().tolist() == [[1, -1], [3, 2]]
    assert table[tf.constant(["a"])].numpy().tolist() == [1]
    keys, values = table.export()
    assert dict(zip(keys.numpy().tolist(), values.numpy().tolist())) == \
        {b"a": 1, b"b": 2, b"c": 3}


def test_static_hash_table_integer_keys_and_float_values():
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer([1, 2, 3], [1.0, 2.0, 3.0]), 0.0)
    assert table.key_dtype == tf.int32 and table.value_dtype == tf.float32
    assert table.lookup(tf.constant([1, 5])).numpy().tolist() == [1.0, 0.0]
    with pytest.raises(TypeError, match="Dtype of argument `keys` must be <dtype: 'int32'>, "
                                        "received: <dtype: 'int64'>"):
        table.lookup(tf.constant([1, 5], tf.int64))


def test_static_hash_table_errors_are_tensorflows():
    table = _letters()
    with pytest.raises(TypeError, match="Dtype of argument `keys` must be <dtype: 'string'>, "
                                        "received: <dtype: 'int32'>"):
        table.lookup(tf.constant([1]))
    with pytest.raises(TypeError, match="Cannot convert -1.5 to EagerTensor of dtype int32"):
        tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a"], [1]), -1.5)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Expected shape \[2\] for value, got \[3\]"):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2, 3]), -1)
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="HashTable has different value for same key. Key a has 1 and "
                             "trying to add value 2"):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "a"], [1, 2]), -1)


def test_text_file_initializer(tmp_path, vocab_file):
    kv = tmp_path / "kv.txt"
    kv.write_text("a\t10\nb\t20\nc\t30\n")
    table = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(str(kv), tf.string, 0, tf.int64, 1, delimiter="\t"), -1)
    assert table.lookup(tf.constant(["a", "c", "q"])).numpy().tolist() == [10, 30, -1]
    assert int(table.size()) == 3
    lines = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        vocab_file, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER), -1)
    assert lines.lookup(tf.constant(["lake"])).numpy().tolist() == [1]
    first_two = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        vocab_file, tf.string, -2, tf.int64, -1, vocab_size=2), -1)
    assert int(first_two.size()) == 2
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Invalid vocab_size in .*vocab.txt: expected 5 but got 3"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            vocab_file, tf.string, -2, tf.int64, -1, vocab_size=5), -1)
    with pytest.raises(tf.errors.NotFoundError, match="nope.txt; No such file or directory"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            str(tmp_path / "nope.txt"), tf.string, -2, tf.int64, -1), -1)


def test_static_vocabulary_table_oov_buckets_are_tensorflows(vocab_file):
    table = tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(
        vocab_file, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER), num_oov_buckets=5)
    assert int(table.size()) == 8
    out = table.lookup(tf.constant(["emerson", "lake", "palmer", "king", "crimson", "x", ""]))
    assert out.dtype == tf.int64 and out.numpy().tolist() == [0, 1, 2, 6, 7, 3, 6]
    assert int(table.lookup(tf.constant("king"))) == 6
    ragged = table.lookup(tf.ragged.constant([["king", "lake"], ["x"]]))
    assert ragged.to_list() == [[6, 1], [3]]
    sparse = table.lookup(tf.sparse.from_dense(tf.constant([["king", ""], ["", "x"]])))
    assert sparse.values.numpy().tolist() == [6, 3]
    assert sparse.indices.numpy().tolist() == [[0, 0], [1, 1]]


def test_static_vocabulary_table_integer_keys_hash_their_text():
    table = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([10, 20], tf.int64), [0, 1], value_dtype=tf.int64), num_oov_buckets=7)
    assert int(table.size()) == 9
    out = table.lookup(tf.constant([10, 20, 30, 40, -1, 12345678901], tf.int64))
    assert out.numpy().tolist() == [0, 1, 2, 7, 6, 5]


def test_static_vocabulary_table_errors_are_tensorflows():
    init = tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20], tf.int64), [0, 1])
    with pytest.raises(ValueError, match="`num_oov_buckets` must be > 0; use StaticHashTable."):
        tf.lookup.StaticVocabularyTable(init, num_oov_buckets=0)
    with pytest.raises(TypeError, match="Invalid `value_dtype`, expected <dtype: 'int64'> but "
                                        "got <dtype: 'int32'>."):
        tf.lookup.StaticVocabularyTable(init, num_oov_buckets=2)
    with pytest.raises(TypeError, match=r"Invalid `key_dtype`, expected one of \(tf.int64, "
                                        r"tf.string\), but got <dtype: 'int32'>."):
        tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            [10, 20], tf.constant([0, 1], tf.int64)), num_oov_buckets=2)


def test_lookup_in_function_and_dataset_map(vocab_file):
    table = _letters()

    @tf.function
    def find(keys):
        return table.lookup(keys)
    assert find(tf.constant(["b"])).numpy().tolist() == [2]
    assert find(tf.constant(["c", "z"])).numpy().tolist() == [3, -1]
    ds = tf.data.Dataset.from_tensor_slices(["a", "b", "q"]).map(table.lookup)
    assert ds.element_spec == tf.TensorSpec([], tf.int32)
    assert [int(v) for v in ds] == [1, 2, -1]
    vocab = tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(
        vocab_file, tf.string, -2, tf.int64, -1), num_oov_buckets=5)
    words = tf.data.Dataset.from_tensor_slices([["king", "lake"]]).map(vocab.lookup)
    assert [v.numpy().tolist() for v in words] == [[6, 1]]
