"""`eager.io.gfile` ≈ `tf.io.gfile` for local paths: Python's `os`, `shutil` and `glob` with
TensorFlow's errors (`NotFoundError` "<path>; No such file or directory", `AlreadyExistsError`
"file already exists", ...) and TensorFlow's glob (`eager.ops.io_ops.match_files`, without the
"./" TensorFlow's op adds: `gfile.glob` returns names as Python's glob does). Paths may be `str`,
`bytes` or `os.PathLike`; other file systems (gs://, hdfs://) are not supported."""

from __future__ import annotations

import glob as _glob
import os
import shutil

from ..base.errors import AlreadyExistsError, NotFoundError, PermissionDeniedError, UnknownError
from ..ops.io_ops import as_path

__all__ = ["exists", "glob", "makedirs", "mkdir", "listdir", "rmtree", "remove", "isdir",
           "copy", "rename", "join", "GFile", "Open", "stat", "walk"]


def _error(exc, path):
    text = f"{path}; {exc.strerror or exc}"
    if isinstance(exc, FileNotFoundError):
        return NotFoundError(None, None, text)
    if isinstance(exc, FileExistsError):
        return AlreadyExistsError(None, None, text)
    if isinstance(exc, PermissionError):
        return PermissionDeniedError(None, None, text)
    return UnknownError(None, None, text)


def _path(path) -> str:
    return as_path(path.numpy() if hasattr(path, "numpy") else path)


def exists(path) -> bool:
    return os.path.exists(_path(path))


def isdir(path) -> bool:
    return os.path.isdir(_path(path))


def join(path, *paths) -> str:
    return os.path.join(_path(path), *(_path(p) for p in paths))


def glob(pattern) -> list:
    """The paths matching `pattern` (or each of a list of patterns), hidden files included."""
    patterns = [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) else list(pattern)
    found = []
    for p in patterns:
        found.extend(_glob.glob(_path(p), include_hidden=True))
    return sorted(found)


def listdir(path) -> list:
    path = _path(path)
    if not os.path.isdir(path):
        raise NotFoundError(None, None, f"Could not find directory {path}")
    return os.listdir(path)


def makedirs(path) -> None:
    try:
        os.makedirs(_path(path), exist_ok=True)
    except OSError as exc:
        raise _error(exc, _path(path)) from None


def mkdir(path) -> None:
    try:
        os.mkdir(_path(path))
    except OSError as exc:
        raise _error(exc, _path(path)) from None


def remove(path) -> None:
    try:
        os.remove(_path(path))
    except OSError as exc:
        raise _error(exc, _path(path)) from None


def rmtree(path) -> None:
    path = _path(path)
    if not os.path.exists(path):
        raise NotFoundError(None, None, f"{path} not found")
    shutil.rmtree(path)


def copy(src, dst, overwrite=False) -> None:
    src, dst = _path(src), _path(dst)
    if not overwrite and os.path.exists(dst):
        raise AlreadyExistsError(None, None, "file already exists")
    try:
        shutil.copyfile(src, dst)
    except OSError as exc:
        raise _error(exc, src) from None


def rename(src, dst, overwrite=False) -> None:
    src, dst = _path(src), _path(dst)
    if not overwrite and os.path.exists(dst):
        raise AlreadyExistsError(None, None, "file already exists")
    try:
        os.replace(src, dst)
    except OSError as exc:
        raise _error(exc, src) from None


def stat(path):
    """An object with `length`, `mtime_nsec` and `is_directory`, as TensorFlow's FileStatistics."""
    path = _path(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _error(exc, path) from None

    class FileStatistics:
        length = st.st_size
        mtime_nsec = st.st_mtime_ns
        is_directory = os.path.isdir(path)

    return FileStatistics()


def walk(top, topdown=True, onerror=None):
    yield from os.walk(_path(top), topdown=topdown, onerror=onerror)


class GFile:
    """≈ `tf.io.gfile.GFile(name, mode="r")`: a local file; text modes read and write UTF-8
    `str`, binary modes `bytes`. A missing file is TensorFlow's NotFoundError."""

    def __init__(self, name, mode="r"):
        self.name = _path(name)
        self.mode = mode
        binary = "b" in mode
        try:
            self._file = open(self.name, mode if binary else mode.replace("t", ""),
                              encoding=None if binary else "utf-8", newline=None if binary
                              else "")
        except OSError as exc:
            raise _error(exc, self.name) from None

    def read(self, n=-1):
        return self._file.read(n)

    def readline(self):
        return self._file.readline()

    def readlines(self):
        return self._file.readlines()

    def write(self, data):
        self._file.write(data)

    def seek(self, offset=None, whence=0, position=None):
        self._file.seek(position if position is not None else offset, whence)

    def tell(self):
        return self._file.tell()

    def size(self):
        return os.path.getsize(self.name)

    def flush(self):
        self._file.flush()

    def close(self):
        self._file.close()

    def __iter__(self):
        return iter(self._file)

    def __next__(self):
        return next(self._file)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


Open = GFile
