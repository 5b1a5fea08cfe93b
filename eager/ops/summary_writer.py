"""The event file behind `eager.summary.create_file_writer`, and each thread's summary state
(default writer, default step, recording condition).

`EventFile` owns one `events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix>` file in a log
directory, named and begun as TensorFlow's events writer does: the first record is the file
version event (`eager.base.event_proto`), every record TFRecord-framed
(`eager.base.record_framing`). Events wait in memory until `max_queue` of them are pending or
`flush_millis` have passed since the last flush, and are written at `flush()`, `close()`, when
the writer is collected, and at interpreter exit: the same batching TensorFlow's writer does,
so a training loop does not pay a system call per scalar.

The writer is an attribute of the summary ops (compared by identity), so a traced function
writes to the writer that was the default when it was traced, as TensorFlow's captured writer
resource does.
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
import weakref

from ..base import event_proto, record_framing

__all__ = ["EventFile", "summary_state", "DEFAULT_MAX_QUEUE", "DEFAULT_FLUSH_MILLIS"]

DEFAULT_MAX_QUEUE = 10
DEFAULT_FLUSH_MILLIS = 120_000
_FILE_NUMBERS = itertools.count()


def _write_out(state):
    """Writes the pending records of `state` ([file, records]) and flushes the file."""
    stream, records = state
    if stream is None or stream.closed:
        return
    if records:
        stream.write(b"".join(records))
        records.clear()
    stream.flush()


def _close_stream(state):
    _write_out(state)
    if state[0] is not None and not state[0].closed:
        state[0].close()


class EventFile:
    """One open event file with pending records (see the module doc). Thread-safe."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        self.logdir = os.fspath(logdir.decode() if isinstance(logdir, bytes) else logdir)
        self.max_queue = DEFAULT_MAX_QUEUE if max_queue is None else int(max_queue)
        self.flush_millis = DEFAULT_FLUSH_MILLIS if flush_millis is None else int(flush_millis)
        self.filename_suffix = ".v2" if filename_suffix is None else str(filename_suffix)
        self._lock = threading.Lock()
        self._state = [None, []]  # [stream, pending framed records]: what the finalizer needs
        self._finalizer = None
        self._last_flush = 0.0
        self.path = None

    @property
    def closed(self) -> bool:
        return self._state[0] is None

    def open(self):
        """Creates the log directory and a new event file beginning with its version event
        (a no-op while one is open)."""
        with self._lock:
            if self._state[0] is not None:
                return
            os.makedirs(self.logdir, exist_ok=True)
            now = time.time()
            name = (f"events.out.tfevents.{int(now):010d}.{socket.gethostname()}."
                    f"{os.getpid()}.{next(_FILE_NUMBERS)}{self.filename_suffix}")
            self.path = os.path.join(self.logdir, name)
            stream = open(self.path, "wb")
            stream.write(record_framing.frame(event_proto.file_version_event(float(int(now)))))
            stream.flush()
            self._state = [stream, []]
            self._last_flush = time.monotonic()
            self._finalizer = weakref.finalize(self, _close_stream, self._state)

    def write(self, event: bytes) -> bool:
        """Queues one serialized event; False (nothing written) when the file is closed."""
        with self._lock:
            state = self._state
            if state[0] is None:
                return False
            state[1].append(record_framing.frame(event))
            if (len(state[1]) >= self.max_queue
                    or (time.monotonic() - self._last_flush) * 1000 >= self.flush_millis):
                _write_out(state)
                self._last_flush = time.monotonic()
            return True

    def flush(self):
        with self._lock:
            _write_out(self._state)
            self._last_flush = time.monotonic()

    def close(self):
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()  # writes, flushes, closes; never runs again
                self._finalizer = None
            self._state = [None, []]


class _SummaryState(threading.local):
    """A thread's summary settings, as TensorFlow keeps them per thread: the default writer,
    the default step (None, an int, a tensor or a variable) and the recording condition (a
    bool, a tensor, or a callable returning either)."""

    def __init__(self):
        self.writer = None
        self.step = None
        self.is_recording = True


summary_state = _SummaryState()
