"""File ops on local paths: `MatchingFiles`, `ReadFile`, `WriteFile` (TensorFlow's names and
errors), and the glob they share with `eager.io.gfile` and `eager.data`'s file sources.

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

import glob as _glob
import os

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import NotFoundError, PermissionDeniedError, UnknownError
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute, named
from ..core.registry import op_error, register_op
from ..core.specs import TensorSpec
from ..base.tensor_shape import TensorShape

__all__ = ["match_files", "string_array", "file_error", "matching_files", "read_file",
           "write_file", "MATCHING_FILES", "READ_FILE", "WRITE_FILE"]

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
