"""File sources: `TextLineDataset` (one element per line of local text files),
`TFRecordDataset` (one element per record of TFRecord files), the file names such sources read
(`filenames_node`), and `Dataset.list_files`' matches (`matched_files`).

Lines are read with Python's buffered binary `readline`, which splits on `\\n` only; as in
TensorFlow's line reader, the `\\n` is dropped and so is every `\\r` in the line (so `\\r\\n` files
read as `\\n` files), and a last line without a newline is still a line. `compression_type`
"GZIP" and "ZLIB" decompress on the fly. TFRecord files are read record by record, each
record's length and data checked against their masked CRC-32C (`eager.base.record_framing`);
a bad one is TensorFlow's DataLossError.

With `num_parallel_reads`, files are interleaved as TensorFlow's `interleave(cycle_length=n,
block_length=1)` interleaves them: `n` files open, one line from each in turn, a finished file's
slot taken by the next name. (TensorFlow reads them on parallel threads; the order is the same,
and here they are read in the consuming thread: use `prefetch` to read ahead.)

Positions are checkpointable: the names iterator's position, and for each open file its name
and the byte offset (in the decompressed stream) after the last line given.
"""

from __future__ import annotations

import os
import zlib

import numpy as np

from ..base import dtypes as _dt
from ..base import errors as _errors
from ..base import record_framing as _framing
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..ops.array_ops import reshape
from ..ops.io_ops import as_path, file_error, matching_files
from ..functions.lifting import init_scope
from ..tensor import Tensor, wrap_value
from . import structure as _st
from .node import UNKNOWN, Node, NodeIterator
from .sources import TensorSlices

__all__ = ["TextLines", "TFRecords", "filenames_node", "matched_files", "DEFAULT_BUFFER_SIZE"]

#: TensorFlow's default read buffer for text lines (256 KiB).
DEFAULT_BUFFER_SIZE = 256 * 1024
_STRING_SCALAR = TensorSpec([], _dt.string)
_COMPRESSIONS = ("", "GZIP", "ZLIB")


def filenames_node(filenames) -> Node:
    """The node giving the file names of a file source: `filenames` is a dataset's node of
    scalar strings, or a string, list of strings or string tensor of any shape (flattened), as
    TensorFlow's file datasets take them, with TensorFlow's TypeErrors otherwise."""
    if isinstance(filenames, Node):
        spec = filenames.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype is not _dt.string:
            what = spec.dtype if isinstance(spec, TensorSpec) else spec
            raise TypeError(f"The `filenames` argument must contain `tf.string` elements. Got "
                            f"a dataset of `{_tf_dtype(what)}` elements.")
        if spec.shape.rank != 0:
            raise TypeError(f"The `filenames` argument must contain `tf.string` elements of "
                            f"shape [] (i.e. scalars). Got a dataset of element shape "
                            f"TensorShape({list(spec.shape)}).")
        return filenames
    if isinstance(filenames, Tensor):
        names = filenames
    else:
        with init_scope():  # names given as Python values are eager, even inside a function
            names = convert_to_tensor(filenames)
    if names.dtype is not _dt.string:
        raise TypeError(f"The `filenames` argument must contain `tf.string` elements. Got "
                        f"`{_tf_dtype(names.dtype)}` elements.")
    with init_scope():
        return TensorSlices(reshape(names, [-1]) if names.shape.rank != 1 else names)


def _tf_dtype(dtype) -> str:
    name = getattr(dtype, "name", None)
    return f"tf.{name}" if name else str(dtype)


def _compression(compression_type) -> str:
    if compression_type is None:
        return ""
    if isinstance(compression_type, bytes):
        compression_type = compression_type.decode()
    if hasattr(compression_type, "numpy"):
        compression_type = compression_type.numpy().decode()
    return str(compression_type)


class TextLines(Node):
    """`TextLineDataset(filenames, compression_type, buffer_size, num_parallel_reads)`."""

    tf_name = "TextLineDatasetV2"
    reader = None  # the class reading one file's elements (set below the readers)

    def __init__(self, names: Node, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        self.inputs = (names,)
        self.compression = _compression(compression_type)
        self.buffer_size = DEFAULT_BUFFER_SIZE if buffer_size is None else int(buffer_size)
        if self.buffer_size < 0:
            raise _errors.InvalidArgumentError(None, "TextLineDataset", "`buffer_size` must be "
                                               ">= 0 (0 == default). [Op:TextLineDataset]")
        self.cycle = 1 if num_parallel_reads is None else int(num_parallel_reads)
        if self.cycle == -1:  # AUTOTUNE: one slot per CPU, as TensorFlow's interleave
            self.cycle = os.cpu_count() or 1
        if self.cycle <= 0:
            raise _errors.InvalidArgumentError(None, "TextLineDataset", "num_parallel_reads "
                                               "must be greater than zero. [Op:TextLineDataset]")
        self.element_spec = _STRING_SCALAR

    def cardinality(self):
        return UNKNOWN  # lines are known only by reading the files, as in TensorFlow

    def make_iterator(self):
        return _TextLinesIterator(self)


def _open_stream(path, compression, buffer_size, offset):
    """`path`'s (decompressed) bytes from `offset` on, as a binary stream."""
    try:
        raw = open(path, "rb", buffering=buffer_size or DEFAULT_BUFFER_SIZE)
    except OSError as exc:
        raise file_error("IteratorGetNext", exc, path) from None
    stream = _framing.open_compressed_reader(raw, compression)
    if offset:
        if compression == "ZLIB":
            stream.read(offset)
        else:
            stream.seek(offset)
    return stream


class _LineReader:
    """One open text file: its lines, and the offset after the last one given."""

    __slots__ = ("name", "offset", "_file")

    def __init__(self, name: bytes, compression: str, buffer_size: int, offset: int = 0):
        self.name = name
        self.offset = offset
        path = as_path(name)
        if compression not in _COMPRESSIONS:
            raise _errors.InvalidArgumentError(None, "IteratorGetNext",
                                               "Unsupported compression_type. "
                                               "[Op:IteratorGetNext]")
        self._file = _open_stream(path, compression, buffer_size, offset)

    def next_item(self):
        """The next line without its newline and carriage returns, or None at the end."""
        try:
            line = self._file.readline()
        except (OSError, EOFError, zlib.error) as exc:
            raise _errors.DataLossError(None, "IteratorGetNext",
                                        f"{as_path(self.name)}: {exc} [Op:IteratorGetNext]") \
                from None
        if not line:
            self.close()
            return None
        self.offset += len(line)
        if line.endswith(b"\n"):
            line = line[:-1]
        if b"\r" in line:
            line = line.replace(b"\r", b"")
        return line

    def close(self):
        self._file.close()


class _RecordReader:
    """One open TFRecord file: its records, checked (`eager.base.record_framing`), and the
    offset after the last one given."""

    __slots__ = ("name", "offset", "_file", "_records")

    def __init__(self, name: bytes, compression: str, buffer_size: int, offset: int = 0):
        self.name = name
        if compression not in _COMPRESSIONS:
            raise _errors.InvalidArgumentError(None, "IteratorGetNext",
                                               "Unsupported compression_type. "
                                               "[Op:IteratorGetNext]")
        self._file = _open_stream(as_path(name), compression, buffer_size, offset)
        self._records = _framing.RecordReader(self._file, offset)
        self.offset = offset

    def next_item(self):
        try:
            record = self._records.next_record()
        except _framing.RecordCorruptedError as bad:
            what = (f"truncated record at {bad.offset}' failed with Read less bytes than "
                    f"requested" if bad.truncated else f"corrupted record at {bad.offset}")
            raise _errors.DataLossError(None, "IteratorGetNext",
                                        f"{what} [Op:IteratorGetNext]") from None
        except (OSError, EOFError, zlib.error) as exc:
            raise _errors.DataLossError(None, "IteratorGetNext",
                                        f"{as_path(self.name)}: {exc} [Op:IteratorGetNext]") \
                from None
        if record is None:
            self.close()
            return None
        self.offset = self._records.offset
        return record

    def close(self):
        self._file.close()


TextLines.reader = _LineReader


class TFRecords(TextLines):
    """`TFRecordDataset(filenames, compression_type, buffer_size, num_parallel_reads)`: one
    scalar string per record, files read and interleaved as `TextLines` reads them."""

    tf_name = "TFRecordDatasetV2"
    reader = _RecordReader


class _TextLinesIterator(NodeIterator):
    """Lines of `cycle` open files in turn (one file at a time when `cycle` is 1)."""

    __slots__ = ("_node", "_input", "_slots", "_turn", "_input_done", "_device")

    def __init__(self, node):
        self._node = node
        self._input = node.inputs[0].make_iterator()
        self._slots = [None] * node.cycle
        self._turn = 0
        self._input_done = False
        self._device = _st.cpu_device()

    def _open(self, name: bytes, offset: int = 0):
        node = self._node
        return node.reader(name, node.compression, node.buffer_size, offset)

    def _next_name(self):
        try:
            element = next(self._input)
        except StopIteration:
            self._input_done = True
            return None
        return bytes(_st.host_array(element)[()])

    def __next__(self):
        slots = self._slots
        cycle = len(slots)
        while True:
            reader = slots[self._turn]
            if reader is None and not self._input_done:
                name = self._next_name()
                if name is not None:
                    reader = slots[self._turn] = self._open(name)
            if reader is not None:
                line = reader.next_item()
                if line is not None:
                    self._turn = (self._turn + 1) % cycle
                    return self._tensor(line)
                slots[self._turn] = None
                continue  # this slot takes the next file at once, as interleave's does
            if self._input_done and not any(slots):
                raise StopIteration
            self._turn = (self._turn + 1) % cycle  # an empty slot passes the turn on

    def _tensor(self, line: bytes):
        value = np.empty((), dtype=object)
        value[()] = line
        return wrap_value(value, self._device)

    def save(self):
        return {"names": self._input.save(), "turn": self._turn,
                "input_done": self._input_done,
                "slots": [None if r is None else [r.name.decode("utf-8", "surrogateescape"),
                                                  r.offset] for r in self._slots]}

    def restore(self, state):
        self.close()
        self._input.restore(state["names"])
        self._turn = int(state["turn"])
        self._input_done = bool(state["input_done"])
        slots = state["slots"]
        if len(slots) != len(self._slots):
            raise _errors.InvalidArgumentError(None, "DeserializeIterator",
                                               "The saved iterator has another number of "
                                               "parallel reads. [Op:DeserializeIterator]")
        self._slots = [None if s is None else self._open(
            str(s[0]).encode("utf-8", "surrogateescape"), int(s[1])) for s in slots]

    def close(self):
        for reader in self._slots:
            if reader is not None:
                reader.close()
        self._slots = [None] * len(self._slots)


def matched_files(file_pattern):
    """`Dataset.list_files`' names: the sorted matches of a pattern or patterns, as a 1-D
    string tensor; none is TensorFlow's InvalidArgumentError (its assertion's words)."""
    patterns = convert_to_tensor(file_pattern)
    if patterns.dtype is not _dt.string:
        raise TypeError(f"Cannot convert {file_pattern!r} to EagerTensor of dtype string")
    patterns = reshape(patterns, [-1])
    matches = matching_files(patterns)
    if matches.shape[0] == 0:
        listed = ", ".join(bytes(p).decode("utf-8", "replace") for p in patterns.numpy())
        raise _errors.InvalidArgumentError(
            None, "Assert", f"Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. "
                            f"Summarized data: b'No files matched pattern: {listed}'")
    return matches
