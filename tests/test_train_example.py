"""`eager.train.Example` and friends (protobuf wire format by hand), `eager.io.parse_example`
/ `parse_single_example` with `FixedLenFeature`, and `eager.io.decode_csv`: bytes and results
recorded from TensorFlow 2.21, in eager, traced and `Dataset.map` use."""

import numpy as np
import pytest

import eager
from eager.errors import InvalidArgumentError

T = eager.train
F = eager.io.FixedLenFeature

# tf.train.Example(...).SerializeToString() in TensorFlow 2.21.
TF_INT64 = (b"\n\x1f\n\x1d\n\x01i\x12\x18\x1a\x16\n\x14\x80\x80\x80\x80\x80\x80\x80\x80@\xff"
            b"\xff\xff\xff\xff\xff\xff\xff\xff\x01\x00")
TF_FLOAT = b"\n\x13\n\x11\n\x01x\x12\x0c\x12\n\n\x08\x00\x00\x80>\x9ab\x02\xd1"
TF_BYTES = b"\n\x0f\n\r\n\x01s\x12\x08\n\x06\n\x02hi\n\x00"
TF_THREE = (b"\n<\n\x16\n\x01a\x12\x11\x1a\x0f\n\r\x01\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01"
            b"\xac\x02\n\x0f\n\x01c\x12\n\n\x08\n\x02hi\n\x02yo\n\x11\n\x01b\x12\x0c\x12\n\n\x08"
            b"\x00\x00\xc0?\x00\x00\x00@")


def _example(**features):
    return T.Example(features=T.Features(feature=features))


def _three():
    return _example(a=T.Feature(int64_list=T.Int64List(value=[1, -2, 300])),
                    b=T.Feature(float_list=T.FloatList(value=[1.5, 2])),
                    c=T.Feature(bytes_list=T.BytesList(value=[b"hi", b"yo"])))


def test_serialize_as_tensorflow():
    assert _example(i=T.Feature(int64_list=T.Int64List(value=[2 ** 62, -1, 0]))
                    ).SerializeToString() == TF_INT64
    assert _example(x=T.Feature(float_list=T.FloatList(value=[0.25, -3.5e10]))
                    ).SerializeToString() == TF_FLOAT
    assert _example(s=T.Feature(bytes_list=T.BytesList(value=[b"hi", b""]))
                    ).SerializeToString() == TF_BYTES
    assert T.Example().SerializeToString() == b"" and T.Feature().SerializeToString() == b""


def test_parse_tensorflows_bytes_and_round_trip():
    ex = T.Example.FromString(TF_THREE)  # TF writes map entries in its own order
    assert ex == _three()
    feature = ex.features.feature
    assert feature["a"].int64_list.value == [1, -2, 300]
    assert feature["b"].float_list.value == [1.5, 2.0]
    assert feature["c"].bytes_list.value == [b"hi", b"yo"]
    assert feature["a"].WhichOneof("kind") == "int64_list"
    assert feature["a"].float_list.value == []  # an unset member reads as empty
    again = T.Example()
    again.ParseFromString(_three().SerializeToString())
    assert again == _three()
    assert T.Example.FromString(TF_INT64).features.feature["i"].int64_list.value == [
        2 ** 62, -1, 0]


def test_field_type_errors_as_tensorflow():
    with pytest.raises(TypeError, match="expected bytes, str found"):
        T.BytesList(value=["x"])
    with pytest.raises(TypeError):
        T.Int64List(value=[1.5])


SPECS = {"a": F([3], eager.int64), "b": F([2], eager.float32), "c": F([2], eager.string),
         "d": F([], eager.float32, default_value=7.)}


def test_parse_single_example():
    out = eager.io.parse_single_example(TF_THREE, SPECS)
    np.testing.assert_array_equal(out["a"].numpy(), [1, -2, 300])
    assert out["a"].dtype == eager.int64 and out["b"].dtype == eager.float32
    np.testing.assert_array_equal(out["b"].numpy(), [1.5, 2.])
    assert out["c"].numpy().tolist() == [b"hi", b"yo"]
    assert out["d"].numpy() == 7. and out["d"].shape == ()


def test_parse_example_batch_and_shapes():
    out = eager.io.parse_example([TF_THREE, TF_THREE],
                                 {"a": F([3], eager.int64), "b": F([1, 2], eager.float32)})
    assert out["a"].shape == (2, 3) and out["b"].shape == (2, 1, 2)
    np.testing.assert_array_equal(out["b"].numpy()[1, 0], [1.5, 2.])


def test_parse_errors_as_tensorflow():
    with pytest.raises(InvalidArgumentError, match=r"Feature: z \(data type: float\) is "
                                                   r"required but could not be found\."):
        eager.io.parse_single_example(TF_THREE, {"z": F([], eager.float32)})
    with pytest.raises(InvalidArgumentError, match="Key: a.  Data types don't match. Data type: "
                                                   "int64 but expected type: float"):
        eager.io.parse_single_example(TF_THREE, {"a": F([3], eager.float32)})
    with pytest.raises(InvalidArgumentError, match="Key: a."):
        eager.io.parse_single_example(TF_THREE, {"a": F([2], eager.int64)})
    with pytest.raises(TypeError, match="'Tdense' of int32"):
        eager.io.parse_single_example(TF_THREE, {"a": F([3], eager.int32)})


def test_tfrecord_pipeline(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    with eager.io.TFRecordWriter(path) as writer:
        for i in range(3):
            writer.write(_example(x=T.Feature(float_list=T.FloatList(value=[i, i + .5])),
                                  y=T.Feature(int64_list=T.Int64List(value=[i]))
                                  ).SerializeToString())
    spec = {"x": F([2], eager.float32), "y": F([], eager.int64)}
    ds = eager.data.TFRecordDataset(path).map(lambda s: eager.io.parse_single_example(s, spec))
    rows = [(d["x"].numpy().tolist(), int(d["y"])) for d in ds]
    assert rows == [([0., .5], 0), ([1., 1.5], 1), ([2., 2.5], 2)]
    batched = eager.data.TFRecordDataset(path).batch(3).map(
        lambda s: eager.io.parse_example(s, spec))
    (only,) = list(batched)
    np.testing.assert_array_equal(only["y"].numpy(), [0, 1, 2])


def test_decode_csv():
    a, b, c = eager.io.decode_csv(["1,2.5,hi", ",3,yo"], [[0], [0.0], ["x"]])
    assert a.dtype == eager.int32 and b.dtype == eager.float32 and c.dtype == eager.string
    np.testing.assert_array_equal(a.numpy(), [1, 0])  # TF 2.21: [1, 0], [2.5, 3.]
    np.testing.assert_array_equal(b.numpy(), [2.5, 3.])
    assert c.numpy().tolist() == [b"hi", b"yo"]
    p, q = eager.io.decode_csv('a;"b;c"', [[""], [""]], field_delim=";")
    assert (p.numpy(), q.numpy()) == (b"a", b"b;c")
    with pytest.raises(InvalidArgumentError, match="Expect 1 fields but have 2 in record 0"):
        eager.io.decode_csv(["1,2"], [[0]])
    with pytest.raises(InvalidArgumentError, match="Field 0 in record 0 is not a valid int32: "
                                                   "a"):
        eager.io.decode_csv(["a"], [[0]])
