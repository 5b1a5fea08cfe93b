"""The summary ops: `WriteSummary` (one TensorBoard event) and `FlushSummaryWriter`.

Both are stateful host ops, so in a traced function they run on every call, in program order
with the other stateful ops (automatic control dependencies keep them; no pass prunes them),
and the step is an input read when the op runs (a step variable's current value).

`WriteSummary`'s inputs are the step (int64 scalar), the data, the tag (string scalar) and the
recording condition (bool scalar); its attributes the `EventFile`, the serialized
`SummaryMetadata` and `kind`, what the kernel makes of the data before storing it as the
event's TensorProto, so that work done per event (a histogram's buckets, PNG or WAV encoding)
runs when the op runs, as TensorBoard's summary functions make TensorFlow run it:

- `("tensor",)`: the data as it is (`tf.summary.write`);
- `("histogram", buckets)`: TensorBoard's [buckets, 3] float64 (left edge, right edge, count);
- `("image", max_outputs)`: [width, height, PNG...] strings of the first `max_outputs` images;
- `("audio", sample_rate, max_outputs)`: [clips, 2] strings (WAV file, empty label).

The op returns the condition: True when an event was written.
"""

from __future__ import annotations

import time

import numpy as np

from ..base import dtypes as _dt
from ..base import event_proto, ieee, tensor_proto
from ..core.dispatch import execute
from ..core.registry import register_op
from ..core.specs import TensorSpec
from . import png
from .audio_ops import write_wav

__all__ = ["WRITE_SUMMARY", "FLUSH_SUMMARY_WRITER", "write_event", "flush_writer",
           "histogram_buckets", "image_strings", "DEFAULT_BUCKET_COUNT"]

DEFAULT_BUCKET_COUNT = 30
_HOST = frozenset({"CPU"})


def histogram_buckets(data, bucket_count=DEFAULT_BUCKET_COUNT) -> np.ndarray:
    """TensorBoard's histogram of `data`'s elements: [bucket_count, 3] float64 rows of (left
    edge, right edge, count). Equal-width buckets from the minimum to the maximum, the maximum
    counted in the last; all zeros for no data; one value puts its count in the last bucket,
    every edge equal to it."""
    count = max(0, int(bucket_count))
    data = np.asarray(data)
    data = (data.real if data.dtype.kind == "c" else data).astype(np.float64).reshape(-1)
    if data.size == 0 or count == 0:
        return np.zeros((count, 3), np.float64)
    low, high = data.min(), data.max()
    span = high - low
    if span == 0:
        out = np.zeros((count, 3), np.float64)
        out[:, :2] = high
        out[-1, 2] = data.size
        return out
    width = span / count
    index = np.floor((data - low) / width)
    # A value whose index is not a finite number >= 0 (NaN, or any value once an infinity
    # makes the width infinite) is counted nowhere, as TensorFlow's one_hot of its cast
    # index counts it nowhere.
    index = np.minimum(index[np.isfinite(index) & (index >= 0)], count - 1).astype(np.int64)
    counts = np.bincount(index, minlength=count).astype(np.float64)
    edges = low + width * np.arange(count + 1, dtype=np.float64)
    edges[0], edges[-1] = low, high  # (TensorFlow's linspace starts at its start exactly)
    return np.stack([edges[:-1], edges[1:], counts], axis=1)


def _to_uint8(images):
    """`convert_image_dtype(images, uint8, saturate=True)` on an array."""
    kind = images.dtype.kind
    if images.dtype == np.uint8:
        return images
    if kind == "f":
        scaled = images.astype(np.float64) * 255.5
        return np.clip(np.nan_to_num(scaled), 0, 255).astype(np.uint8)
    if kind in "iu":
        info = np.iinfo(images.dtype)
        shift = (int(info.max) + 1) // 256
        return np.clip(images // shift, 0, 255).astype(np.uint8)
    return images.astype(np.uint8)  # bool: 0 and 1


def image_strings(images, max_outputs) -> np.ndarray:
    """[width, height, PNG of each of the first `max_outputs` images] (bytes)."""
    images = np.asarray(images)
    pixels = _to_uint8(images[:max(0, max_outputs)])
    out = [str(images.shape[2]).encode(), str(images.shape[1]).encode()]
    out += [png.encode(np.ascontiguousarray(image)) for image in pixels]
    return _strings(out, (len(out),))


def _audio_strings(audio, sample_rate, max_outputs):
    audio = np.asarray(audio)[:max(0, max_outputs)]
    flat = []
    for clip in audio:
        flat += [write_wav(clip, int(sample_rate)), b""]
    return _strings(flat, (len(audio), 2))


def _strings(items, shape):
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def _stored(data, kind):
    name = kind[0]
    if name == "histogram":
        return histogram_buckets(data, kind[1])
    if name == "image":
        return image_strings(data, kind[1])
    if name == "audio":
        return _audio_strings(data, kind[1], kind[2])
    return data


def _enum(array) -> int:
    if array.dtype.hasobject:
        return _dt.string.as_datatype_enum
    return _dt.as_dtype(array.dtype).as_datatype_enum


def _write_kernel(xp, step, data, tag, should_record, writer, metadata, kind):
    if not bool(should_record):
        return np.array(False)
    stored = ieee.quietly(_stored, np.asarray(data), kind)  # (pure: numpy's signals off)
    event = event_proto.summary_event(
        time.time(), int(step), bytes(np.asarray(tag, dtype=object)[()]).decode("utf-8"),
        tensor_proto.encode(stored, _enum(stored)), metadata)
    return np.array(writer.write(event))


def _write_infer(step, data, tag, should_record, writer, metadata, kind):
    return TensorSpec([], _dt.bool)


WRITE_SUMMARY = register_op("WriteSummary", _write_kernel, _write_infer, stateful=True,
                            differentiable=False, device_types=_HOST,
                            doc="Writes one TensorBoard event to a summary writer's file.")


def _flush_kernel(xp, writer):
    writer.flush()
    return ()


def _flush_infer(writer):
    return ()


FLUSH_SUMMARY_WRITER = register_op("FlushSummaryWriter", _flush_kernel, _flush_infer,
                                   stateful=True, num_outputs=0, differentiable=False,
                                   device_types=_HOST,
                                   doc="Writes a summary writer's pending events to its file.")


def write_event(writer, step, data, tag, should_record, metadata=b"", kind=("tensor",)):
    """Runs `WriteSummary` (tensors for step, data, tag and should_record); the bool result."""
    return execute(WRITE_SUMMARY, (step, data, tag, should_record),
                   {"writer": writer, "metadata": metadata, "kind": kind})


def flush_writer(writer):
    execute(FLUSH_SUMMARY_WRITER, (), {"writer": writer})
