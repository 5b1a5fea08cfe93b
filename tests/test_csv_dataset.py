"""`eager.data.experimental.CsvDataset` and `make_csv_dataset` over local files, against
TensorFlow 2.21's elements, specs (column type inference) and errors."""

import collections

import pytest

import eager as tf


@pytest.fixture
def csv_files(tmp_path):
    first = tmp_path / "d1.csv"
    first.write_text('a,b,name,y\n1,2.5,x,0\n3,,"q,r",1\n5,7.25,z,0\n')
    second = tmp_path / "d2.csv"
    second.write_text("a,b,name,y\n9,1.0,w,1\n")
    return str(first), str(second)


def _spec(dtype, shape=()):
    return tf.TensorSpec(shape, dtype)


def test_csv_dataset_matches_tensorflow(csv_files):
    ds = tf.data.experimental.CsvDataset(list(csv_files), [tf.int32, [0.0], tf.string, tf.int64],
                                         header=True)
    assert ds.element_spec == (_spec(tf.int32), _spec(tf.float32), _spec(tf.string),
                               _spec(tf.int64))
    assert [tuple(v.tolist() if hasattr(v, "tolist") else v for v in e)
            for e in ds.as_numpy_iterator()] == [
        (1, 2.5, b"x", 0), (3, 0.0, b"q,r", 1), (5, 7.25, b"z", 0), (9, 1.0, b"w", 1)]


def test_csv_dataset_select_cols(csv_files):
    ds = tf.data.experimental.CsvDataset(csv_files[0], [[0], ["?"]], header=True,
                                         select_cols=[0, 2])
    assert [(int(a), n) for a, n in ds.as_numpy_iterator()] == [(1, b"x"), (3, b"q,r"),
                                                                (5, b"z")]


def test_csv_dataset_field_count_error(csv_files):
    ds = tf.data.experimental.CsvDataset(csv_files[0], [[0], [0.0]], header=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 2 fields but have"):
        list(ds)


def test_make_csv_dataset_with_label_matches_tensorflow(csv_files):
    ds = tf.data.experimental.make_csv_dataset(list(csv_files), batch_size=2, label_name="y",
                                               shuffle=False, num_epochs=1)
    features, label = ds.element_spec
    assert isinstance(features, collections.OrderedDict)
    assert list(features) == ["a", "b", "name"]
    assert features["a"] == _spec(tf.int32, [None]) and features["b"] == _spec(tf.float32, [None])
    assert features["name"] == _spec(tf.string, [None]) and label == _spec(tf.int32, [None])
    batches = [(f["a"].numpy().tolist(), f["b"].numpy().tolist(), f["name"].numpy().tolist(),
                y.numpy().tolist()) for f, y in ds]
    assert batches == [([1, 3], [2.5, 0.0], [b"x", b"q,r"], [0, 1]),
                       ([5, 9], [7.25, 1.0], [b"z", b"w"], [0, 1])]


def test_make_csv_dataset_select_defaults_epochs_names(csv_files):
    ds = tf.data.experimental.make_csv_dataset(csv_files[0], batch_size=3, shuffle=False,
                                               num_epochs=2, select_columns=["a", "name"],
                                               column_defaults=[0, ""])
    assert list(ds.element_spec) == ["a", "name"]
    out = [(b["a"].tolist(), b["name"].tolist()) for b in ds.as_numpy_iterator()]
    assert out == [([1, 3, 5], [b"x", b"q,r", b"z"])] * 2
    named = tf.data.experimental.make_csv_dataset(csv_files[0], batch_size=2, shuffle=False,
                                                  num_epochs=1, column_names=["A", "B", "N", "Y"])
    assert list(named.element_spec) == ["A", "B", "N", "Y"]
    assert named.element_spec["Y"] == _spec(tf.int32, [None])
    shuffled = tf.data.experimental.make_csv_dataset(csv_files[0], batch_size=3, shuffle_seed=1,
                                                     num_epochs=1)
    assert sorted(next(iter(shuffled))["a"].numpy().tolist()) == [1, 3, 5]
    forever = tf.data.experimental.make_csv_dataset(csv_files[0], batch_size=2)
    assert int(forever.cardinality()) == -1


def test_make_csv_dataset_field_delim_and_errors(tmp_path, csv_files):
    path = tmp_path / "semi.csv"
    path.write_text("k;v\n1;2.5\n2;x\n")
    ds = tf.data.experimental.make_csv_dataset(str(path), batch_size=2, field_delim=";",
                                               shuffle=False, num_epochs=1)
    batch = next(iter(ds))
    assert batch["k"].dtype == tf.int32 and batch["v"].dtype == tf.string
    assert batch["v"].numpy().tolist() == [b"2.5", b"x"]
    with pytest.raises(ValueError, match=r"`label_name` provided must be one of the columns: "
                                         r"\['a', 'b', 'name', 'y'\]. Received: nope."):
        tf.data.experimental.make_csv_dataset(csv_files[0], batch_size=2, label_name="nope")
