"""TensorFlow's `tf.train.Example` protocol buffers (`Example`, `Features`, `Feature`,
`BytesList`, `FloatList`, `Int64List`) as plain Python classes that read and write the wire
format by hand, with the generated classes' API: keyword constructors, attribute and map
access (`ex.features.feature["x"].int64_list.value`), `SerializeToString`, `FromString`,
`ParseFromString`, `WhichOneof`, `CopyFrom`, equality.

Written as TensorFlow's protobuf writes them: floats and int64s packed, map entries in insertion
order (TensorFlow's C++ and upb writers also keep one order per map; readers never depend on
it). Nothing is imported or executed from the bytes.
"""

from __future__ import annotations

import struct

import numpy as np

from .tensor_proto import ProtoError, field, fields, read_varint, varint

__all__ = ["Example", "Features", "Feature", "BytesList", "FloatList", "Int64List",
           "ProtoError"]


class _Message:
    """What every message class shares: parsing entry points and equality."""

    @classmethod
    def FromString(cls, data):  # noqa: N802 - protobuf's name
        msg = cls()
        msg.ParseFromString(data)
        return msg

    def ParseFromString(self, data):  # noqa: N802
        self.Clear()
        self.MergeFromString(data)
        return len(data)

    def SerializePartialToString(self):  # noqa: N802
        return self.SerializeToString()

    def CopyFrom(self, other):  # noqa: N802
        self.ParseFromString(other.SerializeToString())

    def ByteSize(self):  # noqa: N802
        return len(self.SerializeToString())

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    __hash__ = None


class _ValueList(_Message):
    """A message with one repeated field `value`."""

    def __init__(self, value=()):
        self.value = [self._convert(v) for v in value]

    def Clear(self):  # noqa: N802
        self.value = []

    def _key(self):
        return list(self.value)

    def __repr__(self):
        return f"{type(self).__name__}(value={self.value!r})"


class BytesList(_ValueList):
    """≈ `tf.train.BytesList`: repeated bytes (not str, as TensorFlow's)."""

    @staticmethod
    def _convert(v):
        if isinstance(v, (bytes, bytearray, np.bytes_)):
            return bytes(v)
        raise TypeError(f"expected bytes, {type(v).__name__} found")

    def SerializeToString(self):  # noqa: N802
        return b"".join(field(1, v) for v in self.value)

    def MergeFromString(self, data):  # noqa: N802
        for number, wire, value in fields(data):
            if number == 1 and wire == 2:
                self.value.append(value)


class FloatList(_ValueList):
    """≈ `tf.train.FloatList`: repeated float32, packed."""

    @staticmethod
    def _convert(v):
        if isinstance(v, (bool, str, bytes)):
            raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int, "
                            f"float")
        return float(np.float32(v))

    def SerializeToString(self):  # noqa: N802
        if not self.value:
            return b""
        return field(1, np.asarray(self.value, "<f4").tobytes())

    def MergeFromString(self, data):  # noqa: N802
        for number, wire, value in fields(data):
            if number != 1:
                continue
            if wire == 2:
                self.value.extend(np.frombuffer(value, "<f4").astype(float).tolist())
            elif wire == 5:
                self.value.append(struct.unpack("<f", value)[0])


class Int64List(_ValueList):
    """≈ `tf.train.Int64List`: repeated int64, packed."""

    @staticmethod
    def _convert(v):
        if isinstance(v, (float, np.floating, str, bytes)):
            raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int")
        v = int(v)
        if not -2 ** 63 <= v < 2 ** 63:
            raise ValueError(f"Value out of range: {v}")
        return v

    def SerializeToString(self):  # noqa: N802
        if not self.value:
            return b""
        return field(1, b"".join(varint(v) for v in self.value))

    def MergeFromString(self, data):  # noqa: N802
        for number, wire, value in fields(data):
            if number != 1:
                continue
            if wire == 2:
                at = 0
                while at < len(value):
                    v, at = read_varint(value, at)
                    self.value.append(v - (1 << 64) if v >= 1 << 63 else v)
            elif wire == 0:
                self.value.append(value - (1 << 64) if value >= 1 << 63 else value)


_KINDS = (("bytes_list", BytesList, 1), ("float_list", FloatList, 2),
          ("int64_list", Int64List, 3))


class Feature(_Message):
    """≈ `tf.train.Feature`: one of `bytes_list`, `float_list`, `int64_list`."""

    def __init__(self, bytes_list=None, float_list=None, int64_list=None):
        given = [(n, v) for n, v in (("bytes_list", bytes_list), ("float_list", float_list),
                                     ("int64_list", int64_list)) if v is not None]
        self._kind = None
        self._lists = {}
        for name, value in given:  # the last one set wins, as with a oneof
            setattr(self, name, value)

    def Clear(self):  # noqa: N802
        self._kind, self._lists = None, {}

    def WhichOneof(self, group):  # noqa: N802
        if group != "kind":
            raise ValueError(f'Protocol message has no oneof "{group}" field.')
        return self._kind

    def HasField(self, name):  # noqa: N802
        return self._kind == name

    def _key(self):
        return (self._kind, self._lists[self._kind]._key() if self._kind else None)

    def SerializeToString(self):  # noqa: N802
        for name, _, number in _KINDS:
            if self._kind == name:
                return field(number, self._lists[name].SerializeToString())
        return b""

    def MergeFromString(self, data):  # noqa: N802
        for number, wire, value in fields(data):
            for name, cls, num in _KINDS:
                if number == num and wire == 2:
                    if self._kind != name:
                        self._kind, self._lists = name, {name: cls()}
                    self._lists[name].MergeFromString(value)

    def __repr__(self):
        return f"Feature({self._kind}={self._lists.get(self._kind)!r})" if self._kind else \
            "Feature()"


def _list_property(name, cls):
    def get(self):
        if name not in self._lists:
            # Reading an unset oneof member gives an empty default without setting it.
            return self._lists.get(name) if self._kind == name else cls()
        return self._lists[name]

    def set_(self, value):
        if not isinstance(value, cls):
            raise TypeError(f"Feature.{name} must be a {cls.__name__}, got "
                            f"{type(value).__name__}")
        self._kind, self._lists = name, {name: cls(value.value)}

    return property(get, set_)


for _name, _cls, _ in _KINDS:
    setattr(Feature, _name, _list_property(_name, _cls))


class Features(_Message):
    """≈ `tf.train.Features`: `feature`, a map from names to `Feature`s."""

    def __init__(self, feature=None):
        self.feature = {}
        for key, value in (feature or {}).items():
            if not isinstance(value, Feature):
                raise TypeError(f"Features.feature values must be Feature, got "
                                f"{type(value).__name__} for {key!r}")
            self.feature[str(key)] = value

    def Clear(self):  # noqa: N802
        self.feature = {}

    def _key(self):
        return {k: v._key() for k, v in self.feature.items()}

    def SerializeToString(self):  # noqa: N802
        return b"".join(field(1, field(1, k.encode("utf-8")) + field(2, v.SerializeToString()))
                        for k, v in self.feature.items())

    def MergeFromString(self, data):  # noqa: N802
        for number, wire, value in fields(data):
            if number != 1 or wire != 2:
                continue
            key, feature = "", Feature()
            for n, w, v in fields(value):
                if n == 1 and w == 2:
                    key = v.decode("utf-8")
                elif n == 2 and w == 2:
                    feature = Feature.FromString(v)
            self.feature[key] = feature

    def __repr__(self):
        return f"Features(feature={self.feature!r})"


class Example(_Message):
    """≈ `tf.train.Example`: `features`, a `Features`."""

    def __init__(self, features=None):
        self.features = features if features is not None else Features()

    def Clear(self):  # noqa: N802
        self.features = Features()

    def _key(self):
        return self.features._key()

    def SerializeToString(self):  # noqa: N802
        body = self.features.SerializeToString()
        return field(1, body) if self.features.feature else b""

    def MergeFromString(self, data):  # noqa: N802
        for number, wire, value in fields(data):
            if number == 1 and wire == 2:
                self.features.MergeFromString(value)

    def __repr__(self):
        return f"Example(features={self.features!r})"
