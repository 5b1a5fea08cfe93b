"""`eager.profiler` ≈ `tf.profiler.experimental` (simpler): record every op into a Chrome trace.

    with eager.profiler.trace("/tmp/traces") as t:
        ...                          # run ops, synchronously or in eager.experimental.async_scope()
    print(t.path)                    # open it in https://ui.perfetto.dev or chrome://tracing

The trace has one row (a Chrome "thread") per lane, grouped into Chrome "processes":

* `host dispatch` — one lane per Python thread that issued ops; a slice spans the whole of
  `execute()` for one op (placement, copies, the kernel when synchronous, tape recording);
* `executor` — one lane per async executor worker; a slice is the kernel run of a queued op;
* one process per device (`GPU:0`), one lane per stream (`compute`, `copy`), where backends
  record their stream work.

Every slice is named after the op (`AddV2`, `MatMul`). Lanes are strings recorded by
`eager.base.profile_events`; a lane is split into process and thread at its first "/" or ": " (so
"GPU:0/compute" is process "GPU:0", thread "compute", and "host dispatch: MainThread" is process
"host dispatch", thread "MainThread").

While a trace runs, profiling is a slow-path reason (see `eager.core.context`): the fast paths
(operators, variable reads, fused optimizer updates) skip dispatch, and so would skip the
recording.
"""

from __future__ import annotations

import collections
import contextlib
import gzip
import itertools
import json
import os
import threading

from .. import async_exec as _async_exec
from ..core import context as _context
from ..base import profile_events as _profile_events
from ..base.errors import AlreadyExistsError, UnavailableError

__all__ = ["trace", "start", "stop", "Trace", "Slice"]

#: One recorded slice; `start_ns`/`end_ns` are nanoseconds since the trace started.
Slice = collections.namedtuple("Slice", ["lane", "name", "start_ns", "end_ns", "args"])

# Chrome process order: where ops are issued, then where they run asynchronously, then devices.
_PROCESS_ORDER = {"host dispatch": 0, "executor": 1}

_lock = threading.Lock()  # guards _session; held while a session starts or finishes
_session = None  # the running Trace, or None
_file_numbers = itertools.count(1)


class Trace:
    """One profiling session. `path` (the file written), `events` (the Chrome trace events, as
    in the file) and `slices` (the recorded `Slice`s) are set when the session ends."""

    __slots__ = ("requested_path", "path", "events", "slices", "_origin_ns")

    def __init__(self, requested_path):
        self.requested_path = os.fspath(requested_path)
        self.path = None
        self.events = None
        self.slices = None
        self._origin_ns = 0  # the recorder's clock at start: slices are made relative to it

    def slices_per_lane(self) -> dict:
        """{lane: number of slices}, lanes in the order they first appear."""
        counts = {}
        for s in self.slices or ():
            counts[s.lane] = counts.get(s.lane, 0) + 1
        return counts

    def __repr__(self):
        if self.path is None:
            return f"<eager.profiler.Trace to {self.requested_path!r}, running>"
        return f"<eager.profiler.Trace {self.path!r}: {len(self.slices)} slices>"


@contextlib.contextmanager
def trace(path):
    """Records every op run inside (in every thread) and writes a Chrome/Perfetto JSON trace.

    `path` ending in ".json" (or ".json.gz", compressed) is the file to write; any other path is
    a directory (created if needed) that receives `eager_trace_<pid>_<n>.json`. On exit the
    trace first waits for all pending asynchronous work (`sync_devices()`), so queued kernels are
    in it; if that raises, the file is still written and the error then propagates.

    Yields a `Trace`; its `path`, `events` and `slices` are available after the block.
    Raises AlreadyExistsError if a trace is already running.
    """
    session = _begin(path)
    try:
        yield session
    finally:
        with _lock:
            if _session is session:  # not already ended by stop() inside the block
                _finish(session)


def start(path) -> None:
    """≈ `tf.profiler.experimental.start(logdir)`: starts a trace that `stop()` writes to `path`
    (a file or directory, as in `trace`). Raises AlreadyExistsError if one is running."""
    _begin(path)


def stop() -> Trace:
    """≈ `tf.profiler.experimental.stop()`: ends the running trace, writes it and returns its
    `Trace`. Raises UnavailableError if no trace is running."""
    with _lock:
        session = _session
        if session is None:
            raise UnavailableError(None, None, "Cannot export profiling results. No profiler is "
                                               "running.")
        _finish(session)
    return session


def _begin(path) -> Trace:
    global _session
    session = Trace(path)
    with _lock:
        if _session is not None:
            raise AlreadyExistsError(None, None, "Another profiler session is running "
                                                 f"(writing to {_session.requested_path!r}).")
        session._origin_ns = _profile_events.start()
        _context.enter_slow_path()
        _session = session
    return session


def _finish(session: Trace) -> None:
    """Ends `session` (the caller holds `_lock`): waits for pending work, stops recording,
    gives the fast path back and writes the file, each step even if an earlier one raised."""
    global _session
    try:
        _async_exec.sync_devices()
    finally:
        _session = None
        raw = _profile_events.stop()
        _context.leave_slow_path()
        origin_ns = session._origin_ns
        session.slices = [Slice(lane, name, start - origin_ns, end - origin_ns, args)
                          for lane, name, start, end, args in raw]
        session.events = chrome_trace_events(session.slices)
        session.path = _write(session.requested_path, session.events)


def chrome_trace_events(slices) -> list:
    """Chrome trace events for `slices`: metadata ("M") events naming and ordering processes and
    threads, then one complete ("X") event per slice, `ts`/`dur` in microseconds."""
    lanes = {}  # lane -> (process, thread), in order of first slice
    for s in sorted(slices, key=lambda s: s.start_ns):
        if s.lane not in lanes:
            lanes[s.lane] = split_lane(s.lane)
    processes = sorted({p for p, _ in lanes.values()},
                       key=lambda p: (_PROCESS_ORDER.get(p, len(_PROCESS_ORDER)), p))
    pids = {p: i + 1 for i, p in enumerate(processes)}
    events, ids, next_tid = [], {}, collections.Counter()
    for process in processes:
        pid = pids[process]
        events.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                       "args": {"name": process}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                       "args": {"sort_index": pid}})
    for lane, (process, thread) in lanes.items():
        pid = pids[process]
        next_tid[pid] += 1
        tid = next_tid[pid]
        ids[lane] = pid, tid
        events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                       "args": {"name": thread}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                       "args": {"sort_index": tid}})
    for s in sorted(slices, key=lambda s: s.start_ns):
        pid, tid = ids[s.lane]
        event = {"name": s.name, "ph": "X", "pid": pid, "tid": tid, "ts": s.start_ns / 1000.0,
                 "dur": max(s.end_ns - s.start_ns, 0) / 1000.0}
        if s.args:
            event["args"] = s.args
        events.append(event)
    return events


def split_lane(lane: str) -> tuple:
    """(process, thread) of a lane: split at the first "/" or ": ", whichever comes first (a
    colon alone does not split, so device names like "GPU:0" stay whole); a lane with neither
    is its own process and thread."""
    cut, width = len(lane), 0
    colon = lane.find(": ")
    if colon >= 0:
        cut, width = colon, 2
    slash = lane.find("/")
    if 0 <= slash < cut:
        cut, width = slash, 1
    if not width:
        return lane, lane
    return lane[:cut].strip(), lane[cut + width:].strip()


def _write(requested: str, events: list) -> str:
    """Writes the trace to `requested` (a file, or a directory that gets a fresh file name);
    returns the file's path."""
    if requested.endswith((".json", ".json.gz")):
        path = requested
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
    else:
        os.makedirs(requested, exist_ok=True)
        while True:  # never overwrite an earlier trace in the same directory
            path = os.path.join(requested, f"eager_trace_{os.getpid()}_{next(_file_numbers)}.json")
            if not os.path.exists(path):
                break
    document = {"traceEvents": events, "displayTimeUnit": "ms"}
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as f:
        json.dump(document, f, separators=(",", ":"), default=str)
    return path
