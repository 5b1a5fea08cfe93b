"""TensorBoard's `Event` protocol buffer (`tensorflow/core/util/event.proto`): the records of
an `events.out.tfevents.*` file, written field by field as TensorFlow's C++ writer writes them
so that TensorBoard (and `tf.compat.v1.train.summary_iterator`) reads eager's files.

An `Event` is `wall_time` (1, double), `step` (2, int64), then one of `file_version` (3),
`graph_def` (4) or `summary` (5), and `source_metadata` (10, the file's first event names its
writer). A `Summary` holds repeated `Value`s: `tag` (1), `tensor` (8, a TensorProto) and
`metadata` (9: `plugin_data` {`plugin_name`, `content`}). Fields at their default values are
left out, as protobuf leaves them out.

`parse_event` reads an event back into a dict (for tests and tools; nothing is executed from the
bytes). The framing of records is `eager.base.record_framing`'s.
"""

from __future__ import annotations

import struct

from .tensor_proto import ProtoError, field, fields, varint

__all__ = ["FILE_VERSION", "WRITER_NAME", "file_version_event", "summary_event",
           "graph_event", "summary_metadata", "parse_event", "parse_metadata"]

FILE_VERSION = b"brain.Event:2"
WRITER_NAME = b"tensorflow.core.util.events_writer"


def _head(wall_time: float, step: int) -> bytes:
    out = b"\x09" + struct.pack("<d", float(wall_time)) if wall_time else b""
    if step:
        out += b"\x10" + varint(int(step))
    return out


def file_version_event(wall_time: float) -> bytes:
    """The first event of every file: its format version and the writer's name."""
    return (_head(wall_time, 0) + field(3, FILE_VERSION)
            + field(10, field(1, WRITER_NAME)))


def summary_metadata(plugin_name: str, content: bytes = b"") -> bytes:
    """A `SummaryMetadata` naming the TensorBoard plugin that shows the value."""
    plugin = field(1, plugin_name.encode()) + (field(2, content) if content else b"")
    return field(1, plugin)


def summary_event(wall_time: float, step: int, tag: str, tensor_proto: bytes,
                  metadata: bytes = b"") -> bytes:
    """An event holding one `Summary.Value`: `tag`, a serialized TensorProto and a serialized
    `SummaryMetadata` (left out when empty)."""
    value = field(1, tag.encode()) + field(8, tensor_proto)
    if metadata:
        value += field(9, metadata)
    return _head(wall_time, step) + field(5, field(1, value))


def graph_event(wall_time: float, step: int, graph_def: bytes) -> bytes:
    """An event holding a serialized `GraphDef` (TensorBoard's graph dashboard)."""
    return _head(wall_time, step) + field(4, graph_def)


def parse_metadata(data: bytes) -> dict:
    """{"plugin_name", "content"} of a serialized `SummaryMetadata`."""
    out = {"plugin_name": "", "content": b""}
    for number, wire, value in fields(data):
        if number == 1 and wire == 2:
            for n, w, v in fields(value):
                if n == 1 and w == 2:
                    out["plugin_name"] = v.decode()
                elif n == 2 and w == 2:
                    out["content"] = v
    return out


def parse_event(data: bytes) -> dict:
    """An event as a dict: "wall_time", "step", and "file_version", "source_writer",
    "graph_def" or "values" (a list of {"tag", "tensor" (TensorProto bytes), "metadata"})."""
    out = {"wall_time": 0.0, "step": 0}
    for number, wire, value in fields(data):
        if number == 1 and wire == 1:
            out["wall_time"] = struct.unpack("<d", value)[0]
        elif number == 2 and wire == 0:
            out["step"] = value - (1 << 64) if value >= 1 << 63 else value
        elif number == 3 and wire == 2:
            out["file_version"] = value.decode()
        elif number == 4 and wire == 2:
            out["graph_def"] = value
        elif number == 10 and wire == 2:
            out["source_writer"] = b"".join(v for n, _, v in fields(value) if n == 1).decode()
        elif number == 5 and wire == 2:
            values = out.setdefault("values", [])
            for n, w, v in fields(value):
                if n != 1 or w != 2:
                    continue
                entry = {"tag": "", "tensor": b"", "metadata": parse_metadata(b"")}
                for n2, w2, v2 in fields(v):
                    if n2 == 1 and w2 == 2:
                        entry["tag"] = v2.decode()
                    elif n2 == 8 and w2 == 2:
                        entry["tensor"] = v2
                    elif n2 == 9 and w2 == 2:
                        entry["metadata"] = parse_metadata(v2)
                values.append(entry)
        elif wire not in (0, 1, 2, 5):
            raise ProtoError(f"wire type {wire}")
    return out
