"""The checkpoint file: one `.npz` (a zip of `.npy` arrays) holding a JSON object graph.

Layout of a checkpoint file (the exact path `write` was given; `save` adds `-N`):

* a zip archive, every member STORED (uncompressed), timestamps fixed at 1980-01-01 so that
  equal state gives byte-identical files; `numpy.load(path, allow_pickle=False)` opens it;
* one member per variable, named `<checkpoint key>.npy` (e.g.
  `model/layer/kernel/.ATTRIBUTES/VARIABLE_VALUE.npy`): a C-order, little-endian `.npy` array
  (format 1.0 or 2.0) of a numeric or bool dtype; a string variable's member is a 1-D uint8
  array: the elements' lengths as little-endian uint64s, then their bytes, in C order (its
  metadata adds `"nbytes"`, the member's length);
* one member `_CHECKPOINTABLE_OBJECT_GRAPH.json` (UTF-8):

  ```
  {"format": "eager.train.Checkpoint", "version": 1,
   "nodes": [{"children": [["model", 1], ["save_counter", 2]]},        # node 0: the root
             {"children": [["kernel", 3]]},
             {"children": [], "variable": "save_counter/.ATTRIBUTES/VARIABLE_VALUE"}, ...],
   "variables": {"save_counter/.ATTRIBUTES/VARIABLE_VALUE":
                     {"dtype": "int64", "shape": [], "sha256": "<hex of the array bytes>",
                      "name": "save_counter:0"}, ...}}
  ```

  Children carry their *unescaped* local names (a dict key may contain "/"); keys are the
  escaped paths (see `checkpoint.py`). `name` is the variable's TF name, for people only;
* the zip comment (the file's last 94 bytes): `eager.train.Checkpoint sha256:` and the hex
  SHA-256 of every byte of the file before the comment.

Why this shape: no pickles anywhere (arrays are `.npy` with plain dtypes, metadata is JSON); one
file, so one `os.replace` makes a save atomic; and every byte is covered by a check. The
whole-file digest catches any damage at all (flipped bits, truncation, appended bytes, even in
zip fields nobody reads), the zip's CRC-32s and the per-array SHA-256s tie each member to its
metadata, so a file that was assembled by hand (digest recomputed) is still checked member by
member.

`read_checkpoint` treats the file as hostile: it reads the bytes once, checks the digest, then
the zip directory (no duplicate, compressed, encrypted, missing or unexpected members, so
nothing can expand), the metadata's schema, and each array's `.npy` header against the metadata
*before* touching array data (no allocation is sized by the file); every parsing failure becomes
a `DataLossError` naming the file. Nothing is assigned here; callers get plain arrays.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import secrets
import struct
import zipfile

import numpy as np

from ..base import dtypes as _dt
from ..base import string_arrays as _string_arrays
from ..base.errors import DataLossError, NotFoundError

FORMAT = "eager.train.Checkpoint"
VERSION = 1
METADATA = "_CHECKPOINTABLE_OBJECT_GRAPH.json"

# Element types a checkpoint may hold: the numeric and bool types of `eager.base.dtypes`.
_DTYPES = {d.name: d for d in (_dt.float16, _dt.float32, _dt.float64, _dt.int8, _dt.int16,
                               _dt.int32, _dt.int64, _dt.uint8, _dt.uint16, _dt.uint32,
                               _dt.uint64, _dt.bool, _dt.complex64, _dt.complex128)}
_EOCD = b"PK\x05\x06"
_EOCD_SIZE = 22
COMMENT_PREFIX = b"eager.train.Checkpoint sha256:"
_COMMENT_SIZE = len(COMMENT_PREFIX) + 64
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
_HEX64 = re.compile(r"[0-9a-f]{64}")


def saveable_dtype(dtype) -> bool:
    return getattr(dtype, "name", None) in _DTYPES or dtype is _dt.string


def _file_dtype(name: str) -> np.dtype:
    """The on-disk (little-endian) numpy dtype for an eager dtype name."""
    return _DTYPES[name].dtype.newbyteorder("<")


# -----------------------------------------------------------------------------------------------
# Writing
# -----------------------------------------------------------------------------------------------

def encode_checkpoint(fileobj, nodes, arrays) -> None:
    """Writes the zip to `fileobj`. `nodes` is the object graph (list of dicts as in the module
    doc, without `variables`); `arrays` maps key -> (numpy array, variable name)."""
    variables = {}
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED) as zf:
        for key, (array, name) in arrays.items():
            dtype_name = _dt.as_dtype(array.dtype).name
            if dtype_name == "string":
                data = _string_arrays.pack(array)
            else:
                data = np.require(np.asarray(array, dtype=_file_dtype(dtype_name)),
                                  requirements="C")  # (ascontiguousarray would make 0-d 1-d)
            info = zipfile.ZipInfo(key + ".npy", date_time=_ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            with zf.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, data, allow_pickle=False)
            variables[key] = {"dtype": dtype_name, "shape": list(np.shape(array)),
                              "sha256": hashlib.sha256(data).hexdigest(),
                              "name": str(name)}
            if dtype_name == "string":
                variables[key]["nbytes"] = int(data.size)
        meta = {"format": FORMAT, "version": VERSION, "nodes": nodes, "variables": variables}
        info = zipfile.ZipInfo(METADATA, date_time=_ZIP_EPOCH)
        info.external_attr = 0o644 << 16
        zf.writestr(info, json.dumps(meta, sort_keys=True, separators=(",", ":"),
                                    ensure_ascii=False).encode("utf-8"))
    _seal(fileobj)


def _seal(fileobj) -> None:
    """Appends the whole-file digest as the zip comment: sets the end record's comment length,
    hashes every byte up to the comment, and writes `COMMENT_PREFIX + hex digest`."""
    end = fileobj.seek(0, io.SEEK_END)
    fileobj.seek(end - _EOCD_SIZE)
    record = fileobj.read(_EOCD_SIZE)
    if record[:4] != _EOCD or record[-2:] != b"\0\0":
        raise AssertionError("zipfile wrote an unexpected end record")  # never: we wrote it
    fileobj.seek(end - 2)
    fileobj.write(struct.pack("<H", _COMMENT_SIZE))
    fileobj.seek(0)
    digest = hashlib.sha256()
    remaining = end
    while remaining:
        chunk = fileobj.read(min(remaining, 1 << 20))
        if not chunk:
            raise OSError("the checkpoint file shrank while it was being written")
        digest.update(chunk)
        remaining -= len(chunk)
    fileobj.seek(end)
    fileobj.write(COMMENT_PREFIX + digest.hexdigest().encode("ascii"))


def atomic_write(path: str, write) -> None:
    """Calls `write(fileobj)` on a temporary file (opened for reading too) beside `path`, makes
    it durable (flush, fsync), then renames it over `path`. A failure at any point removes the
    temporary file and leaves whatever was at `path` untouched; readers never see a partial
    file."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.tmp-{secrets.token_hex(6)}")
    # os.open with 0o666 (not mkstemp's 0o600) so the umask decides permissions, as for TF.
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "w+b") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    """Makes the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -----------------------------------------------------------------------------------------------
# Reading
# -----------------------------------------------------------------------------------------------

class CheckpointData:
    """A validated checkpoint: `nodes` (each `{"children": {name: id}, "variable": key|None}`),
    `arrays` (key -> read-only numpy array, native byte order), `names` (key -> TF name)."""

    __slots__ = ("path", "nodes", "arrays", "names")

    def __init__(self, path, nodes, arrays, names):
        self.path, self.nodes, self.arrays, self.names = path, nodes, arrays, names


class _DamagedError(Exception):
    """Internal: a reason the file is unusable, turned into DataLossError by the caller."""


def read_checkpoint(path) -> CheckpointData:
    """Reads and fully validates the checkpoint at `path` (see the module doc).

    Raises NotFoundError when there is no such file, DataLossError for anything wrong inside it.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as e:
        hint = ""
        if os.path.exists(path + ".index"):
            hint = (" (there is a TensorFlow checkpoint with this prefix; eager reads only its "
                    "own format)")
        elif os.path.isdir(path):
            hint = " (a directory: use eager.train.latest_checkpoint(directory))"
        raise NotFoundError(None, None, f"Failed to find a checkpoint file at {path}{hint}. "
                            "Please double-check that the path is correct; you may be missing "
                            "the checkpoint suffix (e.g. the '-1' in 'path/to/ckpt-1').") from e
    try:
        return _parse(path, raw)
    except DataLossError:
        raise
    except Exception as e:  # noqa: BLE001 - any parser failure on hostile bytes is data loss
        damaged = isinstance(e, _DamagedError)
        reason = str(e) if damaged else f"{type(e).__name__}: {e}"
        raise DataLossError(None, None, f"Checkpoint file {path} is damaged or is not an eager "
                            f"checkpoint: {reason}") from (None if damaged else e)


def _check(condition, reason):
    if not condition:
        raise _DamagedError(reason)


def _parse(path, raw: bytes) -> CheckpointData:
    _check(raw[:4] == b"PK\x03\x04", "it does not start with a zip header (wrong file type, "
           "or its beginning is damaged)")
    # The file ends with the end record, then our comment: the SHA-256 of every byte before the
    # comment. Any change anywhere (truncation and appended bytes included) breaks one of these.
    _check(len(raw) >= _EOCD_SIZE + _COMMENT_SIZE
           and raw[-_COMMENT_SIZE - _EOCD_SIZE:-_COMMENT_SIZE - _EOCD_SIZE + 4] == _EOCD
           and raw[-_COMMENT_SIZE - 2:-_COMMENT_SIZE] == struct.pack("<H", _COMMENT_SIZE)
           and raw[-_COMMENT_SIZE:-64] == COMMENT_PREFIX,
           "the zip end record and checksum are not at the end of the file (truncated, or bytes "
           "appended)")
    _check(hashlib.sha256(memoryview(raw)[:-_COMMENT_SIZE]).hexdigest().encode("ascii")
           == raw[-64:], "the file does not match its SHA-256 checksum (damaged)")
    zf = zipfile.ZipFile(io.BytesIO(raw))
    infos = zf.infolist()
    names = [i.filename for i in infos]
    _check(len(set(names)) == len(names), "the zip directory lists a member twice")
    for info in infos:
        _check(info.compress_type == zipfile.ZIP_STORED,
               f"member {info.filename!r} is compressed (eager stores members uncompressed)")
        _check(not info.flag_bits & 0x1, f"member {info.filename!r} is encrypted")
        _check(info.file_size == info.compress_size
               and info.header_offset + info.compress_size <= len(raw),
               f"member {info.filename!r} has inconsistent sizes")
    _check(METADATA in names, f"the member {METADATA} (the object graph) is missing")
    meta = json.loads(zf.read(METADATA).decode("utf-8"))  # zipfile checks the CRC-32
    nodes, variables = _validate_metadata(meta)
    expected = {METADATA} | {key + ".npy" for key in variables}
    extra = sorted(set(names) - expected)
    missing = sorted(expected - set(names))
    _check(not extra, f"unexpected members {extra[:3]}")
    _check(not missing, f"missing array members {missing[:3]}")
    arrays = {key: _read_array(zf, key, spec) for key, spec in variables.items()}
    names_by_key = {key: spec.get("name", "") for key, spec in variables.items()}
    return CheckpointData(path, nodes, arrays, names_by_key)


def _validate_metadata(meta):
    """Checks every field's type and every reference; returns (nodes, variables)."""
    _check(isinstance(meta, dict), "the metadata is not a JSON object")
    _check(meta.get("format") == FORMAT, f"the metadata's format is not {FORMAT!r}")
    version = meta.get("version")
    _check(type(version) is int, "the metadata has no integer version")
    _check(version <= VERSION, f"format version {version} is newer than this eager "
           f"understands ({VERSION})")
    raw_nodes, variables = meta.get("nodes"), meta.get("variables")
    _check(isinstance(raw_nodes, list) and raw_nodes, "the object graph has no nodes")
    _check(isinstance(variables, dict), "the metadata has no variable table")
    for key, spec in variables.items():
        _check(isinstance(spec, dict), f"variable {key!r} has no description")
        _check(spec.get("dtype") in _DTYPES or spec.get("dtype") == "string",
               f"variable {key!r} has an unsupported dtype {spec.get('dtype')!r}")
        if spec.get("dtype") == "string":
            nbytes = spec.get("nbytes")
            _check(type(nbytes) is int and nbytes >= 0,
                   f"variable {key!r} has an invalid byte count {nbytes!r}")
        shape = spec.get("shape")
        _check(isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape),
               f"variable {key!r} has an invalid shape {shape!r}")
        digest = spec.get("sha256")
        _check(isinstance(digest, str) and _HEX64.fullmatch(digest) is not None,
               f"variable {key!r} has an invalid checksum field")
        _check(isinstance(spec.get("name", ""), str), f"variable {key!r} has an invalid name")
    nodes = []
    used = set()
    for index, node in enumerate(raw_nodes):
        _check(isinstance(node, dict), f"object graph node {index} is not an object")
        children = node.get("children", [])
        _check(isinstance(children, list), f"node {index}'s children are not a list")
        table = {}
        for child in children:
            _check(isinstance(child, list) and len(child) == 2 and isinstance(child[0], str)
                   and type(child[1]) is int and 0 <= child[1] < len(raw_nodes),
                   f"node {index} has an invalid child reference {child!r}")
            _check(child[0] not in table, f"node {index} has two children named {child[0]!r}")
            table[child[0]] = child[1]
        key = node.get("variable")
        if key is not None:
            _check(isinstance(key, str) and key in variables,
                   f"node {index} refers to an unknown variable {key!r}")
            _check(key not in used, f"variable {key!r} belongs to two nodes")
            used.add(key)
        nodes.append({"children": table, "variable": key})
    orphans = sorted(set(variables) - used)
    _check(not orphans, f"variables {orphans[:3]} belong to no node of the object graph")
    return nodes, variables


def _read_array(zf, key, spec):
    data = zf.read(key + ".npy")  # zipfile checks the member's CRC-32 here
    stream = io.BytesIO(data)
    version = np.lib.format.read_magic(stream)
    _check(version in ((1, 0), (2, 0)), f"array {key!r} has npy format version {version}")
    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                   else np.lib.format.read_array_header_2_0)
    shape, fortran_order, dtype = read_header(stream)
    strings = spec["dtype"] == "string"
    want_dtype = np.dtype(np.uint8) if strings else _file_dtype(spec["dtype"])
    want_shape = (spec["nbytes"],) if strings else tuple(spec["shape"])
    _check(dtype == want_dtype and not fortran_order and tuple(shape) == want_shape,
           f"array {key!r}: the .npy header ({dtype.str}, {tuple(shape)}) does not match the "
           f"metadata ({want_dtype.str}, {want_shape})")
    count = 1
    for d in want_shape:
        count *= d
    body = memoryview(data)[stream.tell():]
    _check(len(body) == count * want_dtype.itemsize,
           f"array {key!r} holds {len(body)} bytes, its shape and dtype need "
           f"{count * want_dtype.itemsize}")
    _check(hashlib.sha256(body).hexdigest() == spec["sha256"],
           f"array {key!r} does not match its SHA-256 checksum")
    if strings:
        try:
            return _string_arrays.unpack(body, tuple(spec["shape"]))
        except ValueError as exc:
            _check(False, f"array {key!r}: {exc}")
    array = np.frombuffer(body, dtype=want_dtype, count=count).reshape(want_shape)
    return array.astype(_DTYPES[spec["dtype"]].dtype, copy=False)
