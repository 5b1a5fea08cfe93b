"""eager.data's file sources: TextLineDataset and Dataset.list_files over local files. Goldens
recorded from TensorFlow 2.21 on the same files (values, element specs, cardinalities, reprs,
interleave orders and errors)."""

import gzip
import os
import zlib

import pytest

import eager as tf
from eager import errors

D = tf.data.Dataset
STRING_SCALAR = tf.TensorSpec([], tf.string)


@pytest.fixture
def files(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_bytes(b"a1\na2\r\n\na4")
    (tmp_path / "b.txt").write_bytes(b"b1\nb2\nb3\n")
    (tmp_path / "c.txt").write_bytes(b"")
    (tmp_path / "d.csv").write_bytes(b"d1\n")
    (tmp_path / "r.txt").write_bytes(b"x\ry\r\nz\r")
    (tmp_path / ".hid.txt").write_bytes(b".h\n")
    with gzip.open(tmp_path / "g.txt.gz", "wb") as f:
        f.write(b"g1\ng2\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lines(ds):
    return list(ds.as_numpy_iterator())


def test_lines_without_newlines_and_carriage_returns(files):
    assert lines(tf.data.TextLineDataset("a.txt")) == [b"a1", b"a2", b"", b"a4"]
    # TF drops every "\r" of a line, not only a trailing one.
    assert lines(tf.data.TextLineDataset("r.txt")) == [b"xy", b"z"]
    assert lines(tf.data.TextLineDataset(["a.txt", "b.txt", "c.txt"])) == [
        b"a1", b"a2", b"", b"a4", b"b1", b"b2", b"b3"]
    assert lines(tf.data.TextLineDataset("a.txt", buffer_size=1)) == [b"a1", b"a2", b"", b"a4"]
    assert lines(tf.data.TextLineDataset(tf.constant([["a.txt"]]))) == [b"a1", b"a2", b"",
                                                                      b"a4"]
    names = D.from_tensor_slices(["b.txt", "a.txt"])
    assert lines(tf.data.TextLineDataset(names)) == [b"b1", b"b2", b"b3", b"a1", b"a2", b"",
                                                   b"a4"]


def test_spec_cardinality_repr(files):
    ds = tf.data.TextLineDataset("a.txt")
    assert isinstance(ds, D)
    assert ds.element_spec == STRING_SCALAR
    assert int(ds.cardinality()) == -2  # UNKNOWN_CARDINALITY
    assert repr(ds) == ("<TextLineDatasetV2 element_spec=TensorSpec(shape=(), "
                        "dtype=eager.string, name=None)>")
    assert int(tf.data.TextLineDataset(["a.txt"], num_parallel_reads=2).cardinality()) == -2
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(ds)


def test_parallel_reads_interleave_as_tensorflow(files):
    assert lines(tf.data.TextLineDataset(["a.txt", "b.txt"], num_parallel_reads=2)) == [
        b"a1", b"b1", b"a2", b"b2", b"", b"b3", b"a4"]
    assert lines(tf.data.TextLineDataset(["a.txt", "b.txt", "d.csv"], num_parallel_reads=2)) == [
        b"a1", b"b1", b"a2", b"b2", b"", b"b3", b"a4", b"d1"]


def test_compression(files):
    assert lines(tf.data.TextLineDataset("g.txt.gz", compression_type="GZIP")) == [b"g1", b"g2"]
    (files / "z.txt").write_bytes(zlib.compress(b"z1\nz2"))
    assert lines(tf.data.TextLineDataset("z.txt", compression_type="ZLIB")) == [b"z1", b"z2"]
    with pytest.raises(errors.InvalidArgumentError, match="Unsupported compression_type."):
        lines(tf.data.TextLineDataset("g.txt.gz", compression_type="BZ"))


def test_errors(files):
    # TF: NotFoundError "nope.txt; No such file or directory" at the first next().
    ds = tf.data.TextLineDataset("nope.txt")
    with pytest.raises(errors.NotFoundError, match="nope.txt; No such file or directory"):
        next(iter(ds))
    with pytest.raises(TypeError, match=r"^The `filenames` argument must contain `tf.string` "
                                        r"elements. Got `tf.int32` elements.$"):
        tf.data.TextLineDataset(1)
    with pytest.raises(TypeError, match=r"^The `filenames` argument must contain `tf.string` "
                                        r"elements. Got a dataset of `tf.int64` elements.$"):
        tf.data.TextLineDataset(D.range(3))
    with pytest.raises(TypeError, match=r"elements of shape \[\] \(i.e. scalars\). Got a dataset "
                                        r"of element shape TensorShape\(\[1\]\).$"):
        tf.data.TextLineDataset(D.from_tensor_slices([["a.txt"]]))


def test_list_files_matches_sorted(files):
    assert lines(D.list_files("*.txt", shuffle=False)) == [
        b"./.hid.txt", b"./a.txt", b"./b.txt", b"./c.txt", b"./r.txt"]
    assert lines(D.list_files(["b*.txt", "a*.txt", "*.csv"], shuffle=False)) == [
        b"./a.txt", b"./b.txt", b"./d.csv"]
    assert lines(D.list_files(["a.txt", "a.txt"], shuffle=False)) == [b"a.txt", b"a.txt"]
    assert lines(D.list_files("?.txt", shuffle=False)) == [b"./a.txt", b"./b.txt", b"./c.txt",
                                                         b"./r.txt"]
    assert lines(D.list_files("[ab].txt", shuffle=False)) == [b"./a.txt", b"./b.txt"]
    absolute = str(files / "[ab].txt")
    assert lines(D.list_files(absolute, shuffle=False)) == [
        str(files / "a.txt").encode(), str(files / "b.txt").encode()]


def test_list_files_spec_cardinality_repr(files):
    ds = D.list_files("*.txt")
    assert ds.element_spec == STRING_SCALAR and int(ds.cardinality()) == 5
    assert repr(ds).startswith("<_ShuffleDataset ")
    assert repr(D.list_files("*.txt", shuffle=False)).startswith("<_TensorSliceDataset ")


def test_list_files_shuffles_reproducibly(files):
    everything = sorted(lines(D.list_files("*", shuffle=False)))
    first = lines(D.list_files("*", seed=3))
    assert sorted(first) == everything
    assert lines(D.list_files("*", seed=3)) == first
    ds = D.list_files("*", seed=3)
    epochs = [lines(ds) for _ in range(4)]
    assert all(sorted(e) == everything for e in epochs)
    assert len({tuple(e) for e in epochs}) > 1  # reshuffled each iteration


def test_list_files_with_no_match_is_tensorflows_error(files):
    with pytest.raises(errors.InvalidArgumentError) as info:
        D.list_files("zz*.txt")
    assert str(info.value) == ("Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. "
                               "Summarized data: b'No files matched pattern: zz*.txt'")
    with pytest.raises(errors.InvalidArgumentError, match=r"No files matched pattern: zz\*.txt, "
                                                          r"yy\*'$"):
        D.list_files(["zz*.txt", "yy*"])


def test_list_files_feeds_text_lines(files):
    ds = tf.data.TextLineDataset(D.list_files("[ab].txt", shuffle=False))
    assert lines(ds) == [b"a1", b"a2", b"", b"a4", b"b1", b"b2", b"b3"]


@pytest.mark.parametrize("parallel", [None, 2])
def test_iterator_position_is_checkpointed(files, tmp_path, parallel):
    ds = tf.data.TextLineDataset(["a.txt", "b.txt"], num_parallel_reads=parallel)
    it = iter(ds)
    head = [next(it).numpy() for _ in range(3)]
    ckpt = tf.train.Checkpoint(it=it)
    path = ckpt.save(str(tmp_path / "ckpt" / "it"))
    rest = [t.numpy() for t in it]
    assert head + rest == lines(ds)
    ckpt.restore(path)
    assert [t.numpy() for t in it] == rest
    fresh = iter(ds)
    tf.train.Checkpoint(it=fresh).restore(path)
    assert [t.numpy() for t in fresh] == rest


def test_gzip_position_is_checkpointed(files, tmp_path):
    it = iter(tf.data.TextLineDataset("g.txt.gz", compression_type="GZIP"))
    next(it)
    ckpt = tf.train.Checkpoint(it=it)
    path = ckpt.save(str(tmp_path / "ckpt" / "g"))
    assert [t.numpy() for t in it] == [b"g2"]
    ckpt.restore(path)
    assert [t.numpy() for t in it] == [b"g2"]


def test_shuffled_lines_checkpoint(files, tmp_path):
    it = iter(tf.data.TextLineDataset(["a.txt", "b.txt"]).shuffle(3, seed=1).batch(2))
    next(it)
    ckpt = tf.train.Checkpoint(it=it)
    path = ckpt.save(str(tmp_path / "ckpt" / "s"))
    rest = [t.numpy().tolist() for t in it]
    ckpt.restore(path)
    assert [t.numpy().tolist() for t in it] == rest


def test_iterating_inside_a_function(files):
    ds = tf.data.TextLineDataset(["a.txt", "b.txt"])

    @tf.function
    def joined():
        out = tf.constant("")
        for line in ds:
            out = out + line + ","
        return out

    assert joined().numpy() == b"a1,a2,,a4,b1,b2,b3,"
    assert joined().numpy() == b"a1,a2,,a4,b1,b2,b3,"

    @tf.function
    def count():  # the dataset made inside the function, as TF allows
        n = tf.constant(0)
        for line in tf.data.TextLineDataset("b.txt"):
            n += tf.size(tf.expand_dims(line, 0))
        return n

    assert int(count()) == 3


def test_prefetched_lines(files):
    ds = tf.data.TextLineDataset(["a.txt", "b.txt"]).map(lambda s: s + "!").prefetch(2)
    assert lines(ds) == [b"a1!", b"a2!", b"!", b"a4!", b"b1!", b"b2!", b"b3!"]


def test_names_with_non_ascii(files):
    (files / "é.txt").write_bytes("ligne é\n".encode())
    assert lines(tf.data.TextLineDataset("é.txt")) == ["ligne é".encode()]
    assert lines(D.list_files("é*", shuffle=False)) == [os.path.join(".", "é.txt").encode()]
