"""eager.io: file ops, decode_raw, serialize_tensor/parse_tensor in TensorFlow's TensorProto
bytes, gfile, and TFRecord files read and written as TensorFlow's. Every byte string below
was recorded from TensorFlow 2.21."""

import gzip

import numpy as np
import pytest

import eager as tf
from eager import errors
from eager.base import record_framing

# tf.io.serialize_tensor(value).numpy().hex()
SERIALIZED = [
    (np.array([1.5, -2.0], np.float32), "080112041202080222080000c03f000000c0"),
    (np.int32(7), "08031200220407000000"),
    (np.array([[1, 2], [3, 4]], np.int64),
     "08091208120208021202080222200100000000000000020000000000000003000000000000000400000000000000"),
    (np.array([b"ab", b""], object), "0807120412020802420261624200"),
    (np.array(b"x", object), "08071200420178"),
    (np.array([True, False]), "080a12041202080222020100"),
    (np.zeros((0, 3), np.float32), "08011206120012020803"),
    (np.array([1 + 2j], np.complex64), "080812041202080122080000803f00000040"),
    (np.array([1.0], np.float16), "08131204120208012202003c"),
]

# tf.io.TFRecordWriter writing b"hello", b"", b"x" * 300: the file's first 64 bytes
TFRECORD_HEAD = ("0500000000000000eab2043e68656c6c6fbb1f1c19000000000000000029039807d8ea82a22c01"
                 "000000000000f2fe5b9d787878787878787878787878787878")


def _tensor(value):
    return tf.constant(value) if not isinstance(value, np.ndarray) or value.dtype != object \
        else tf.constant(value.tolist() if value.ndim else value[()])


@pytest.mark.parametrize("value,golden", SERIALIZED, ids=lambda v: str(getattr(v, "dtype", "")))
def test_serialize_tensor_is_tensorflows_bytes(value, golden):
    t = _tensor(value)
    assert tf.io.serialize_tensor(t).numpy().hex() == golden
    back = tf.io.parse_tensor(bytes.fromhex(golden), t.dtype)
    assert back.dtype is t.dtype and back.shape == t.shape
    np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_parse_tensor_errors_and_typed_fields():
    data = bytes.fromhex(SERIALIZED[0][1])
    with pytest.raises(errors.InvalidArgumentError, match=r"Type mismatch between parsed tensor "
                                                          r"\(float\) and dtype \(int32\)"):
        tf.io.parse_tensor(data, tf.int32)
    with pytest.raises(errors.InvalidArgumentError, match="Could not parse `serialized` as "
                                                          "TensorProto, base64: //8="):
        tf.io.parse_tensor(b"\xff\xff", tf.int32)
    # A proto with a typed field (TensorFlow's make_tensor_proto of a scalar writes float_val):
    # dtype float, shape [3], float_val [2.5] packed, repeated to fill the shape.
    proto = bytes.fromhex("0801") + bytes.fromhex("12041202" + "0803") + \
        bytes.fromhex("2a04") + np.float32(2.5).tobytes()
    np.testing.assert_array_equal(tf.io.parse_tensor(proto, tf.float32).numpy(),
                                  np.full(3, 2.5, np.float32))


def test_decode_raw():
    got = tf.io.decode_raw(tf.constant([b"\x01\x00\x02\x00", b"\x03\x00\x04\x00"]), tf.int16)
    assert got.dtype is tf.int16 and got.numpy().tolist() == [[1, 2], [3, 4]]
    assert tf.io.decode_raw(tf.constant(b"\x01\x00\x02\x00"), tf.int16,
                            little_endian=False).numpy().tolist() == [256, 512]
    assert tf.io.decode_raw(tf.constant([b"\x01\x00\x02\x00", b"\x01\x00"]), tf.int16,
                            fixed_length=4).numpy().tolist() == [[1, 2], [1, 0]]
    assert tf.io.decode_raw(tf.constant("ab"), tf.uint8).numpy().tolist() == [97, 98]
    with pytest.raises(errors.InvalidArgumentError, match="DecodeRaw requires input strings to "
                                                          "all be the same size, but element 1 "
                                                          "has size 4 != 2"):
        tf.io.decode_raw(tf.constant([b"\x01\x00\x02\x00", b"\x01\x00"]), tf.int16)


def test_read_write_matching_files(tmp_path):
    path = str(tmp_path / "sub" / "dir" / "w.txt")
    assert tf.io.write_file(path, "hé") is None  # parents made, as TF's WriteFile
    assert tf.io.read_file(path).numpy() == "hé".encode()
    assert tf.io.matching_files(str(tmp_path / "sub" / "*" / "*.txt")).numpy().tolist() == [
        path.encode()]
    assert tf.io.matching_files(str(tmp_path / "nothing*")).shape == (0,)
    with pytest.raises(errors.NotFoundError, match=r"nope; No such file or directory"):
        tf.io.read_file(str(tmp_path / "nope"))

    @tf.function
    def round_trip(name, text):
        tf.io.write_file(name, text)
        return tf.io.read_file(name)

    assert round_trip(str(tmp_path / "f.txt"), "traced").numpy() == b"traced"


def test_gfile(tmp_path):
    gf = tf.io.gfile
    root = str(tmp_path)
    gf.makedirs(gf.join(root, "m", "n"))
    assert gf.isdir(gf.join(root, "m", "n")) and gf.exists(root)
    with gf.GFile(gf.join(root, "t.txt"), "w") as f:
        f.write("héllo\nworld")
    with gf.GFile(gf.join(root, "t.txt")) as f:
        assert f.read() == "héllo\nworld"
    with gf.GFile(gf.join(root, "t.txt"), "rb") as f:
        assert f.readline() == b"h\xc3\xa9llo\n" and list(f) == [b"world"]
    assert sorted(gf.listdir(root)) == ["m", "t.txt"]
    assert gf.glob(gf.join(root, "*.txt")) == [gf.join(root, "t.txt")]
    assert gf.join("a", "b", "c") == "a/b/c"
    gf.copy(gf.join(root, "t.txt"), gf.join(root, "u.txt"))
    with pytest.raises(errors.AlreadyExistsError, match="file already exists"):
        gf.copy(gf.join(root, "t.txt"), gf.join(root, "u.txt"))
    with pytest.raises(errors.AlreadyExistsError, match="file already exists"):
        gf.rename(gf.join(root, "t.txt"), gf.join(root, "u.txt"))
    gf.rename(gf.join(root, "t.txt"), gf.join(root, "v.txt"))
    gf.remove(gf.join(root, "v.txt"))
    with pytest.raises(errors.NotFoundError, match=r"nope; No such file or directory"):
        gf.remove(gf.join(root, "nope"))
    with pytest.raises(errors.NotFoundError, match=r"^Could not find directory .*nope$"):
        gf.listdir(gf.join(root, "nope"))
    with pytest.raises(errors.NotFoundError, match=r"nope not found$"):
        gf.rmtree(gf.join(root, "nope"))
    with pytest.raises(errors.NotFoundError, match=r"nope; No such file or directory"):
        gf.GFile(gf.join(root, "nope")).read()
    gf.rmtree(gf.join(root, "m"))
    assert not gf.exists(gf.join(root, "m"))


def test_tfrecord_framing_is_tensorflows(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        w.write(b"hello")
        w.write(b"")
        w.write(b"x" * 300)
    data = open(path, "rb").read()
    assert data[:64].hex() == TFRECORD_HEAD
    assert len(data) == 3 * 16 + 5 + 300
    # ... and TensorFlow's file reads back here.
    (tmp_path / "tf.tfrecord").write_bytes(data)
    got = list(tf.data.TFRecordDataset(str(tmp_path / "tf.tfrecord")).as_numpy_iterator())
    assert got == [b"hello", b"", b"x" * 300]


def test_crc32c_known_values():
    # RFC 3720's check value, and TF's masked CRC of an 8-byte length of 5 (from the golden).
    assert record_framing.crc32c(b"123456789") == 0xE3069283
    assert record_framing.masked_crc32c((5).to_bytes(8, "little")) == 0x3E04B2EA


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_tfrecord_round_trip(tmp_path, compression):
    path = str(tmp_path / f"r{compression}.tfrecord")
    records = [b"g1", b"", "é".encode(), bytes(range(256)) * 5]
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=compression)) as w:
        for r in records:
            w.write(r)
    if compression == "GZIP":
        assert gzip.decompress(open(path, "rb").read())[:8] == (2).to_bytes(8, "little")
    ds = tf.data.TFRecordDataset(path, compression_type=compression)
    assert ds.element_spec == tf.TensorSpec([], tf.string) and int(ds.cardinality()) == -2
    assert repr(ds) == ("<TFRecordDatasetV2 element_spec=TensorSpec(shape=(), "
                        "dtype=eager.string, name=None)>")
    assert list(ds.as_numpy_iterator()) == records
    it = iter(ds)
    next(it)
    ckpt = tf.train.Checkpoint(it=it)
    saved = ckpt.save(str(tmp_path / "ck" / "it"))
    rest = [t.numpy() for t in it]
    ckpt.restore(saved)
    assert [t.numpy() for t in it] == rest == records[1:]


def test_tfrecord_gzip_from_tensorflow(tmp_path):
    # TF 2.21 wrote b"g1", b"g2" with GZIP: the framed stream, gzip-compressed.
    framed = record_framing.frame(b"g1") + record_framing.frame(b"g2")
    (tmp_path / "b.gz").write_bytes(gzip.compress(framed))
    ds = tf.data.TFRecordDataset(str(tmp_path / "b.gz"), compression_type="GZIP")
    assert list(ds.as_numpy_iterator()) == [b"g1", b"g2"]


def test_damaged_tfrecords_are_data_loss(tmp_path):
    data = bytes.fromhex(TFRECORD_HEAD)[:17 + 4]  # the first record, whole
    (tmp_path / "trunc").write_bytes(data[:20])
    with pytest.raises(errors.DataLossError, match=r"truncated record at 0' failed with Read "
                                                   r"less bytes than requested"):
        list(tf.data.TFRecordDataset(str(tmp_path / "trunc")))
    flipped = bytearray(data)
    flipped[14] ^= 1
    (tmp_path / "crc").write_bytes(bytes(flipped))
    with pytest.raises(errors.DataLossError, match=r"corrupted record at 12"):
        list(tf.data.TFRecordDataset(str(tmp_path / "crc")))
