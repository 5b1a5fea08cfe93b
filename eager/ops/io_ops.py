"""File and byte ops (`eager.io`): `MatchingFiles`, `ReadFile`, `WriteFile` on local paths,
`DecodeRaw`, and `SerializeTensor` / `ParseTensor` (TensorFlow's TensorProto bytes, see
`eager.base.tensor_proto`), with TensorFlow's names and errors; and the glob they share with
`eager.io.gfile` and `eager.data`'s file sources.

They are stateful (they read or change the file system), so no graph pass folds, merges or
prunes them, and they run on the CPU: their inputs and outputs are strings, which live in host
memory.

Globbing (`match_files`) follows TensorFlow's `GetMatchingPaths` where it matters to users: a
pattern without wildcards names itself (when it exists), `*`, `?` and `[...]` match within one
path component, hidden files match `*`, a pattern with no directory gives `./name`, and the
results of several patterns are sorted together. Python's `glob` does the matching, so
TensorFlow's backslash escapes inside patterns are not supported.
"""

from __future__ import annotations

import base64
import glob as _glob
import os

import numpy as np

from ..base import dtypes as _dt
from ..base import tensor_proto as _tensor_proto
from ..base.errors import NotFoundError, PermissionDeniedError, UnknownError
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute, named
from ..core.registry import op_error, register_op
from ..core.specs import TensorSpec
from ..base.tensor_shape import TensorShape

__all__ = ["match_files", "string_array", "as_path", "file_error", "matching_files",
           "read_file", "write_file", "decode_raw", "serialize_tensor", "parse_tensor"]

_WILDCARDS = frozenset("*?[")
_HOST = frozenset({"CPU"})


def string_array(items, shape=None) -> np.ndarray:
    """An object array of `bytes` (a string tensor's value) holding `items`, in `shape`."""
    items = list(items)
    out = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        out[i] = item if isinstance(item, bytes) else str(item).encode("utf-8")
    return out.reshape(shape if shape is not None else (len(items),))


def as_path(value) -> str:
    """A file name as Python's `os` takes it (`bytes` decoded as UTF-8, as TensorFlow reads
    them)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return os.fspath(value)


def file_error(op_name, exc, path):
    """TensorFlow's error for a failed file operation on `path`: NotFoundError "<path>; No such
    file or directory", PermissionDeniedError, else UnknownError, naming the op."""
    reason = exc.strerror or str(exc)
    text = f"{path}; {reason} [Op:{op_name}]"
    if isinstance(exc, FileNotFoundError):
        return NotFoundError(None, op_name, text)
    if isinstance(exc, PermissionError):
        return PermissionDeniedError(None, op_name, text)
    return UnknownError(None, op_name, text)


def match_files(patterns) -> list:
    """The paths matching any of `patterns` (str), sorted (see the module doc)."""
    found = []
    for pattern in patterns:
        if not _WILDCARDS.intersection(pattern):
            if os.path.lexists(pattern):
                found.append(pattern)
            continue
        matches = _glob.glob(pattern, include_hidden=True)
        if not os.path.dirname(pattern):
            matches = [os.path.join(".", m) for m in matches]
        found.extend(matches)
    return sorted(found)


# -- MatchingFiles -------------------------------------------------------------------------------
def _matching_files_kernel(xp, pattern):
    patterns = [as_path(p) for p in np.asarray(pattern, dtype=object).reshape(-1)]
    return string_array(match_files(patterns))


def _matching_files_infer(pattern):
    if pattern.shape.rank is not None and pattern.shape.rank > 1:
        raise op_error("MatchingFiles", f"Input patterns tensor must be scalar or vector, but "
                                        f"had shape: {pattern.shape}", [pattern])
    return TensorSpec(TensorShape([None]), _dt.string)


MATCHING_FILES = register_op("MatchingFiles", _matching_files_kernel, _matching_files_infer,
                             dtypes=frozenset({_dt.string}), stateful=True,
                             differentiable=False, device_types=_HOST,
                             doc="The sorted paths matching glob patterns.")


def matching_files(pattern, name=None):
    """≈ `tf.io.matching_files`: the sorted paths (a 1-D string tensor) matching a pattern or a
    vector of patterns (see the module doc for the glob's rules)."""
    pattern = _string_input("MatchingFiles", pattern)
    out = execute(MATCHING_FILES, (pattern,))
    return out if name is None else named(out, name)


# -- ReadFile, WriteFile -------------------------------------------------------------------------
def _scalar_path(op_name, array) -> str:
    return as_path(np.asarray(array, dtype=object)[()])


def _read_file_kernel(xp, filename):
    path = _scalar_path("ReadFile", filename)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise file_error("ReadFile", exc, path) from None
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def _scalar_infer(op_name, *inputs):
    for t in inputs:
        if t.shape.rank not in (0, None):
            raise op_error(op_name, f"Input filename tensor must be scalar, but had shape: "
                                    f"{t.shape}", list(inputs))


def _read_file_infer(filename):
    _scalar_infer("ReadFile", filename)
    return TensorSpec([], _dt.string)


READ_FILE = register_op("ReadFile", _read_file_kernel, _read_file_infer,
                        dtypes=frozenset({_dt.string}), stateful=True, differentiable=False,
                        device_types=_HOST, doc="The bytes of a file.")


def _write_file_kernel(xp, filename, contents):
    path = _scalar_path("WriteFile", filename)
    data = np.asarray(contents, dtype=object)[()]
    try:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)  # TensorFlow's WriteFile makes the parents
        with open(path, "wb") as f:
            f.write(data)
    except OSError as exc:
        raise file_error("WriteFile", exc, path) from None
    return ()


def _write_file_infer(filename, contents):
    if contents.shape.rank not in (0, None):
        raise op_error("WriteFile", f"Contents tensor must be scalar, but had shape: "
                                    f"{contents.shape}", [filename, contents])
    _scalar_infer("WriteFile", filename)
    return ()


WRITE_FILE = register_op("WriteFile", _write_file_kernel, _write_file_infer,
                         dtypes=frozenset({_dt.string}), stateful=True, differentiable=False,
                         num_outputs=0, device_types=_HOST,
                         doc="Writes bytes to a file (its directories made).")


def _string_input(op_name, value):
    t = as_tensor(value) if not isinstance(value, (str, bytes, list, tuple)) else as_tensor(
        value, _dt.string)
    if t.dtype is not _dt.string:
        raise op_error(op_name, f"expected a string tensor, got {t.dtype.name}", [t])
    return t


def read_file(filename, name=None):
    """≈ `tf.io.read_file`: a file's bytes as a scalar string tensor."""
    out = execute(READ_FILE, (_string_input("ReadFile", filename),))
    return out if name is None else named(out, name)


def write_file(filename, contents, name=None):
    """≈ `tf.io.write_file`: writes the scalar string `contents` to `filename` (parent
    directories are made, an existing file replaced). Returns None eagerly."""
    execute(WRITE_FILE, (_string_input("WriteFile", filename),
                         _string_input("WriteFile", contents)))


# -- DecodeRaw -----------------------------------------------------------------------------------
_RAW_TYPES = frozenset({_dt.float16, _dt.float32, _dt.float64, _dt.int8, _dt.int16, _dt.int32,
                        _dt.int64, _dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64, _dt.complex64,
                        _dt.complex128, _dt.bool})


def _decode_raw_kernel(xp, data, out_type, little_endian, fixed_length):
    strings = np.asarray(data, dtype=object)
    item = np.dtype(out_type.dtype).newbyteorder("<" if little_endian else ">")
    flat = strings.reshape(-1)
    if fixed_length is not None:
        width = fixed_length // item.itemsize
        rows = [bytes(s)[:fixed_length].ljust(fixed_length, b"\0") for s in flat]
    else:
        first = len(flat[0]) if flat.size else 0
        for i, s in enumerate(flat):
            if len(s) != first:
                raise op_error("DecodeRaw", f"DecodeRaw requires input strings to all be the "
                                            f"same size, but element {i} has size {first} != "
                                            f"{len(s)}")
        if first % item.itemsize:
            raise op_error("DecodeRaw", f"Input to DecodeRaw has length {first} that is not a "
                                        f"multiple of {item.itemsize}, the size of "
                                        f"{out_type.name}")
        width = first // item.itemsize
        rows = [bytes(s) for s in flat]
    values = np.frombuffer(b"".join(rows), item).astype(out_type.dtype)
    return values.reshape(strings.shape + (width,))


def _decode_raw_infer(data, out_type, little_endian, fixed_length):
    return TensorSpec(data.shape.concatenate([None]) if data.shape.rank is not None
                      else TensorShape(None), out_type)


DECODE_RAW = register_op("DecodeRaw", _decode_raw_kernel, _decode_raw_infer,
                         dtypes=frozenset({_dt.string}), differentiable=False,
                         device_types=_HOST, doc="Bytes reinterpreted as numbers.")


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """≈ `tf.io.decode_raw`: each string's bytes as a vector of `out_type` (a new last axis);
    strings must share a length unless `fixed_length` cuts or zero-pads them to it."""
    out_type = _dt.as_dtype(out_type)
    if out_type not in _RAW_TYPES:
        raise TypeError(f"DecodeRaw: out_type {out_type.name} is not supported.")
    x = _string_input("DecodeRaw", input_bytes)
    out = execute(DECODE_RAW, (x,), {"out_type": out_type, "little_endian": bool(little_endian),
                                     "fixed_length": None if fixed_length is None
                                     else int(fixed_length)})
    return out if name is None else named(out, name)


# -- SerializeTensor, ParseTensor ------------------------------------------------------------------
_ENUMS = {d._enum: d for d in (_dt.float16, _dt.float32, _dt.float64, _dt.int8, _dt.int16,
                               _dt.int32, _dt.int64, _dt.uint8, _dt.uint16, _dt.uint32,
                               _dt.uint64, _dt.bool, _dt.complex64, _dt.complex128, _dt.string)}
_TF_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _serialize_kernel(xp, x):
    array = np.asarray(x)
    dtype = _dt.BY_NUMPY[array.dtype]
    out = np.empty((), dtype=object)
    out[()] = _tensor_proto.encode(array, dtype._enum)
    return out


SERIALIZE_TENSOR = register_op("SerializeTensor", _serialize_kernel,
                               lambda x: TensorSpec([], _dt.string),
                               dtypes=frozenset(_ENUMS.values()),
                               differentiable=False, device_types=_HOST,
                               doc="A tensor as TensorFlow's TensorProto bytes.")


def _parse_kernel(xp, serialized, out_type):
    data = bytes(np.asarray(serialized, dtype=object)[()])
    try:
        enum, array = _tensor_proto.decode(data, {e: d.dtype for e, d in _ENUMS.items()})
    except _tensor_proto.ProtoError:
        shown = base64.b64encode(data[:64]).decode()
        raise op_error("ParseTensor", f"Could not parse `serialized` as TensorProto, base64: "
                                      f"{shown}") from None
    found = _ENUMS[enum]
    if found is not out_type:
        raise op_error("ParseTensor", f"Type mismatch between parsed tensor "
                                      f"({_TF_NAMES.get(found.name, found.name)}) and dtype "
                                      f"({_TF_NAMES.get(out_type.name, out_type.name)})")
    return array


def _parse_infer(serialized, out_type):
    if serialized.shape.rank not in (0, None):
        raise op_error("ParseTensor", f"Expected `serialized` to be a scalar, got shape: "
                                      f"{serialized.shape}", [serialized])
    return TensorSpec(TensorShape(None), out_type)


PARSE_TENSOR = register_op("ParseTensor", _parse_kernel, _parse_infer,
                           dtypes=frozenset({_dt.string}), differentiable=False,
                           device_types=_HOST, doc="A tensor from TensorProto bytes.")


def serialize_tensor(tensor, name=None):
    """≈ `tf.io.serialize_tensor`: TensorFlow's TensorProto bytes of a tensor (a scalar
    string), which `tf.io.parse_tensor` reads."""
    x = as_tensor(tensor)
    if x.dtype not in _ENUMS.values():
        raise TypeError(f"SerializeTensor: cannot serialize a {x.dtype.name} tensor.")
    out = execute(SERIALIZE_TENSOR, (x,))
    return out if name is None else named(out, name)


def parse_tensor(serialized, out_type, name=None):
    """≈ `tf.io.parse_tensor`: the tensor of dtype `out_type` in TensorProto bytes (those of
    `serialize_tensor`, or of TensorFlow's)."""
    out_type = _dt.as_dtype(out_type)
    out = execute(PARSE_TENSOR, (_string_input("ParseTensor", serialized),),
                  {"out_type": out_type})
    return out if name is None else named(out, name)
