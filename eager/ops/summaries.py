"""`eager.summary`'s writers and summary functions, with TensorFlow 2's API and TensorBoard's
formats: `create_file_writer`, `SummaryWriter.as_default(step)`, `scalar`, `histogram`,
`image`, `text`, `audio`, `write`, `flush`, `record_if`, `should_record_summaries`, and the
default step (`get_step` / `set_step`).

Each summary function returns a bool tensor: False, writing nothing, when there is no default
writer or the recording condition is False; otherwise it runs `WriteSummary`
(`eager.ops.summary_ops`), which returns the condition. Values are stored as TensorBoard's
plugins store them (scalars as float32 scalars, histograms as [buckets, 3] float64, images as
PNG strings, text as strings, audio as WAV strings), tagged with the current name scope.

Inside a traced function the writer, the condition and the step are read when the function is
traced (a step variable or a condition tensor is read each time the function runs), as in
TensorFlow.
"""

from __future__ import annotations

import contextlib

from ..base import dtypes as _dt
from ..base import event_proto
from ..core.argument_conversion import as_tensor
from ..core.context import per_thread, wait_for_pending_work
from ..core.tensor_conversion import constant
from ..tensor import Tensor
from .math_ops import cast
from .summary_ops import DEFAULT_BUCKET_COUNT, flush_writer, write_event
from .summary_writer import EventFile, summary_state

__all__ = ["SummaryWriter", "create_file_writer", "create_noop_writer", "write", "scalar",
           "histogram", "image", "text", "audio", "flush", "record_if",
           "should_record_summaries", "get_step", "set_step"]


# -- writers -------------------------------------------------------------------------------------
class SummaryWriter:
    """≈ `tf.summary.SummaryWriter`: the interface of summary writers."""

    def set_as_default(self, step=None):
        """Makes this the thread's default writer (and `step`, when given, its default step)
        until another is set."""
        self._check_open()
        summary_state.writer = self
        if step is not None:
            summary_state.step = step

    @contextlib.contextmanager
    def as_default(self, step=None):
        """A scope in which this is the default writer (and `step`, when given, the default
        step); on leaving it the previous ones come back and this writer is flushed."""
        self._check_open()
        old_writer, old_step = summary_state.writer, summary_state.step
        summary_state.writer = self
        if step is not None:
            summary_state.step = step
        try:
            yield self
        finally:
            summary_state.writer = old_writer
            if step is not None:
                summary_state.step = old_step
            self.flush()

    def _check_open(self):
        pass

    def init(self):
        """Opens the writer's file (again, after `close`)."""

    def flush(self):
        """Writes pending events to the file."""

    def close(self):
        """Flushes and closes the file."""


class FileSummaryWriter(SummaryWriter):
    """The writer `create_file_writer` returns: events go to one `EventFile`."""

    def __init__(self, event_file: EventFile):
        self.event_file = event_file
        self._closed = False
        event_file.open()

    @property
    def logdir(self):
        return self.event_file.logdir

    def _check_open(self):
        if self._closed:
            raise RuntimeError(f"SummaryWriter {self!r} is already closed")

    def init(self):
        self.event_file.open()
        self._closed = False

    def flush(self):
        # An op: in a traced function it runs with the function, under async execution after
        # the writes queued before it.
        flush_writer(self.event_file)

    def close(self):
        wait_for_pending_work()  # writes still queued by async execution go in first
        self.event_file.close()
        self._closed = True


class NoopSummaryWriter(SummaryWriter):
    """`create_noop_writer()`: `as_default` changes nothing, so summaries record nothing."""

    def set_as_default(self, step=None):
        pass

    @contextlib.contextmanager
    def as_default(self, step=None):
        yield self


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None, experimental_trackable=False, experimental_mesh=None):
    """≈ `tf.summary.create_file_writer`: a writer of a new event file in `logdir` (made if
    missing). Events are written once `max_queue` (10) are pending or `flush_millis` (120000)
    have passed, and at `flush`, `close` and exit."""
    if logdir is None:
        raise ValueError("Argument `logdir` cannot be None")
    if experimental_mesh is not None:
        raise NotImplementedError("create_file_writer: experimental_mesh is not supported.")
    if isinstance(logdir, Tensor):
        logdir = logdir.numpy()
    return FileSummaryWriter(EventFile(logdir, max_queue, flush_millis, filename_suffix))


def create_noop_writer():
    """≈ `tf.summary.create_noop_writer`: a writer that writes nothing."""
    return NoopSummaryWriter()


def flush(writer=None, name=None):
    """≈ `tf.summary.flush`: flushes `writer` (default: the default writer, if any)."""
    writer = summary_state.writer if writer is None else writer
    if writer is not None:
        writer.flush()
    return None


# -- step and condition --------------------------------------------------------------------------
def get_step():
    """≈ `tf.summary.experimental.get_step`: the default step (None, an int, a tensor or a
    variable) of this thread."""
    return summary_state.step


def set_step(step):
    """≈ `tf.summary.experimental.set_step`: the default step of this thread's summaries (an
    int, a tensor or a variable, read when a summary is written; None clears it)."""
    summary_state.step = step


@contextlib.contextmanager
def record_if(condition):
    """≈ `tf.summary.record_if`: summaries in this scope are written only while `condition`
    (a bool, a bool tensor, or a callable returning either) holds."""
    old = summary_state.is_recording
    summary_state.is_recording = condition
    try:
        yield
    finally:
        summary_state.is_recording = old


def _condition():
    """The recording condition: a Python bool, or a bool tensor (symbolic while tracing)."""
    cond = summary_state.is_recording
    if callable(cond):
        cond = cond()
    if isinstance(cond, Tensor):
        if cond.is_symbolic:
            return cast(cond, _dt.bool) if cond.dtype is not _dt.bool else cond
        return bool(cond.numpy())
    return bool(cond)


def should_record_summaries():
    """≈ `tf.summary.should_record_summaries`: a bool tensor, False without a default writer,
    else the recording condition."""
    if summary_state.writer is None or isinstance(summary_state.writer, NoopSummaryWriter):
        return constant(False)
    cond = _condition()
    return cond if isinstance(cond, Tensor) else constant(cond)


def _step_tensor(step):
    if step is None:
        step = summary_state.step
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument "
                         "or through tf.summary.experimental.set_step()")
    step = as_tensor(step)
    return step if step.dtype is _dt.int64 else cast(step, _dt.int64)


# -- writing -------------------------------------------------------------------------------------
def _write(tag, data, step, metadata, kind=("tensor",)):
    writer = summary_state.writer
    if writer is None or not isinstance(writer, FileSummaryWriter):
        return constant(False)
    cond = _condition()
    if cond is False:
        return constant(False)
    step = _step_tensor(step)
    if callable(data):
        data = data()
    data = as_tensor(data)
    should = cond if isinstance(cond, Tensor) else constant(True)
    return write_event(writer.event_file, step, data, constant(tag, _dt.string), should,
                       metadata, kind)


def _tag(name):
    return per_thread.state.name_scope + str(name)


def _metadata(plugin_name, description=None, content=b""):
    out = event_proto.summary_metadata(plugin_name, content)
    if description:
        out += event_proto.field(3, str(description).encode())
    return out


def write(tag, tensor, step=None, metadata=None, name=None):
    """≈ `tf.summary.write`: `tensor` (or what the callable `tensor` returns) as the value of
    one event, with `metadata` (serialized `SummaryMetadata` bytes, or an object with
    `SerializeToString`)."""
    if metadata is None:
        metadata = b""
    elif not isinstance(metadata, bytes):
        metadata = metadata.SerializeToString()
    if isinstance(tag, Tensor):
        tag = tag.numpy()
    tag = tag.decode() if isinstance(tag, bytes) else str(tag)
    return _write(tag, tensor, step, metadata)


def scalar(name, data, step=None, description=None):
    """≈ `tf.summary.scalar`: `data` (a scalar) as float32, for TensorBoard's scalars."""
    data = as_tensor(data)
    if data.shape.rank is not None and data.shape.rank != 0:
        raise ValueError(f"Expected scalar shape, saw shape: {tuple(data.shape.as_list())}.")
    if data.dtype is not _dt.float32:
        data = cast(data, _dt.float32)
    return _write(_tag(name), data, step, _metadata("scalars", description))


def histogram(name, data, step=None, buckets=None, description=None):
    """≈ `tf.summary.histogram`: TensorBoard's histogram of `data`'s elements (`buckets`
    equal-width buckets, 30 by default)."""
    buckets = DEFAULT_BUCKET_COUNT if buckets is None else int(buckets)
    return _write(_tag(name), as_tensor(data), step, _metadata("histograms", description),
                  ("histogram", buckets))


def image(name, data, step=None, max_outputs=3, description=None):
    """≈ `tf.summary.image`: the first `max_outputs` images of `data` [k, h, w, c] (c 1, 3 or
    4; floats in [0, 1]) as PNGs, for TensorBoard's images."""
    data = as_tensor(data)
    rank = data.shape.rank
    if rank is not None and rank != 4:
        raise ValueError(f"Tensor  must have rank 4.  Received rank {rank}, shape "
                         f"{tuple(data.shape.as_list())}")
    return _write(_tag(name), data, step, _metadata("images", description),
                  ("image", int(max_outputs)))


def text(name, data, step=None, description=None):
    """≈ `tf.summary.text`: a string tensor, for TensorBoard's text dashboard."""
    data = as_tensor(data)
    if data.dtype is not _dt.string:
        raise TypeError(f"tensor must be of type tf.string; got tf.{data.dtype.name}")
    return _write(_tag(name), data, step, _metadata("text", description))


_AUDIO_PLUGIN_WAV = b"\x10\x0b"  # AudioPluginData{encoding: WAV}


def audio(name, data, sample_rate, step=None, max_outputs=3, encoding=None, description=None):
    """≈ `tf.summary.audio`: the first `max_outputs` clips of `data` [k, t, c] (float32 in
    [-1, 1]) as WAV files at `sample_rate`, for TensorBoard's audio dashboard."""
    if encoding not in (None, "wav"):
        raise ValueError(f"Unknown encoding: {encoding!r}")
    data = as_tensor(data)
    if data.shape.rank is not None and data.shape.rank != 3:
        raise ValueError(f"audio: data must have rank 3, got shape "
                         f"{tuple(data.shape.as_list())}")
    if data.dtype is not _dt.float32:
        data = cast(data, _dt.float32)
    if isinstance(sample_rate, Tensor):
        sample_rate = sample_rate.numpy()
    return _write(_tag(name), data, step, _metadata("audio", description, _AUDIO_PLUGIN_WAV),
                  ("audio", int(sample_rate), int(max_outputs)))
