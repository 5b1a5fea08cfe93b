"""TensorFlow's `TensorProto` wire format, for `eager.io.serialize_tensor` / `parse_tensor`:
bytes that TensorFlow's `tf.io.parse_tensor` reads, and that eager reads back from TensorFlow.

Written as TensorFlow writes it: `dtype` (field 1), `tensor_shape` (field 2: one `dim` message
per dimension holding its `size`), then the values: strings as repeated `string_val` (field 8),
everything else as raw little-endian `tensor_content` (field 4), left out when empty. Read: the
same, plus the typed repeated fields TensorFlow also accepts (`float_val`, `int_val`, ...,
packed or not; fewer values than elements repeat the last, as TensorFlow fills them). Protocol
buffers are decoded by hand (a few varints and lengths); nothing is imported, nothing runs.
"""

from __future__ import annotations

import numpy as np

__all__ = ["encode", "decode", "ProtoError", "varint", "field", "fields", "read_varint"]


class ProtoError(ValueError):
    """The bytes are not a TensorProto eager can read."""


def varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def encode(array, enum: int) -> bytes:
    """The TensorProto of `array` (numeric, bool or an object array of bytes) whose TensorFlow
    dtype number is `enum`."""
    array = np.asarray(array)
    shape = b"".join(field(2, (varint(1 << 3) + varint(d)) if d else b"")
                     for d in array.shape)
    out = varint(1 << 3) + varint(enum) + field(2, shape)
    if array.dtype.hasobject:
        return out + b"".join(field(8, bytes(item)) for item in array.reshape(-1))
    if array.size:
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
        out += field(4, data)
    return out


def read_varint(data, at):
    shift = result = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ProtoError("a varint runs past the end")
        byte = data[at]
        at += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, at


def fields(data):
    """(field number, wire type, value) of a message: ints for varints, bytes otherwise."""
    at = 0
    while at < len(data):
        key, at = read_varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = read_varint(data, at)
        elif wire == 2:
            size, at = read_varint(data, at)
            if at + size > len(data):
                raise ProtoError("a field runs past the end")
            value, at = bytes(data[at:at + size]), at + size
        elif wire == 5:
            value, at = bytes(data[at:at + 4]), at + 4
        elif wire == 1:
            value, at = bytes(data[at:at + 8]), at + 8
        else:
            raise ProtoError(f"wire type {wire}")
        if at > len(data):
            raise ProtoError("a field runs past the end")
        yield number, wire, value


# typed value fields: number -> (numpy dtype of one value, how it is stored)
_TYPED = {5: ("<f4", "fixed"), 6: ("<f8", "fixed"), 7: ("int", "varint"),
          9: ("<f4", "fixed"), 10: ("int", "varint"), 11: ("int", "varint"),
          12: ("<f8", "fixed"), 13: ("int", "varint"), 16: ("int", "varint"),
          17: ("int", "varint")}


def decode(data: bytes, dtypes_by_enum: dict):
    """(enum, array) read from a TensorProto; `dtypes_by_enum` maps TensorFlow dtype numbers
    to numpy dtypes (object for strings). ProtoError for anything else."""
    enum = 0
    dims = []
    content = None
    strings = []
    typed = []
    for number, wire, value in fields(data):
        if number == 1 and wire == 0:
            enum = value
        elif number == 2 and wire == 2:
            for n, w, v in fields(value):
                if n == 2 and w == 2:
                    size = 0
                    for n2, w2, v2 in fields(v):
                        if n2 == 1 and w2 == 0:
                            size = v2 - (1 << 64) if v2 >= 1 << 63 else v2
                    if size < 0:
                        raise ProtoError("a dimension is unknown")
                    dims.append(size)
                elif n == 3 and w == 0 and v:
                    raise ProtoError("the shape is unknown")
        elif number == 4 and wire == 2:
            content = value
        elif number == 8 and wire == 2:
            strings.append(value)
        elif number in _TYPED:
            typed.append((number, wire, value))
    dtype = dtypes_by_enum.get(enum)
    if dtype is None:
        raise ProtoError(f"dtype {enum}")
    count = 1
    for d in dims:
        count *= d
    if dtype.hasobject:
        values = strings
    elif content is not None:
        item = dtype.newbyteorder("<")
        if len(content) != count * item.itemsize:
            raise ProtoError("tensor_content has the wrong size")
        return enum, np.frombuffer(content, item).astype(dtype).reshape(dims)
    else:
        values = _typed_values(typed, dtype)
    if dtype.kind == "c":  # pairs of reals
        values = [complex(values[i], values[i + 1]) for i in range(0, len(values) - 1, 2)]
    if count and not values:
        values = [b"" if dtype.hasobject else 0]
    if len(values) > count:
        raise ProtoError("more values than elements")
    values = list(values) + [values[-1]] * (count - len(values)) if count else []
    if dtype.hasobject:
        out = np.empty(count, dtype=object)
        out[:] = values
        return enum, out.reshape(dims)
    if dtype == np.float16:
        return enum, np.array(values, np.uint16).view(np.float16).reshape(dims)
    return enum, np.array(values).astype(dtype).reshape(dims)


def _typed_values(fields, dtype):
    values = []
    for number, wire, value in fields:
        kind, storage = _TYPED[number]
        if storage == "varint":
            if wire == 0:
                raw = [value]
            else:
                raw, at = [], 0
                while at < len(value):
                    v, at = read_varint(value, at)
                    raw.append(v)
            if dtype.kind == "i":  # two's complement in 64 bits
                raw = [v - (1 << 64) if v >= 1 << 63 else v for v in raw]
            values.extend(raw)
        else:
            values.extend(np.frombuffer(value, kind).tolist())
    return values
