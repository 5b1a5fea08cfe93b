"""The process-wide event recorder behind `eager.profiler` (lowest layer: standard library only).

Hot code pays one attribute test when no trace is running:

    if profile_events.RECORDER.active:
        t0 = profile_events.now_ns()
        ...
        profile_events.add_slice("GPU:0/compute", op_name, t0, profile_events.now_ns())

A slice is a plain tuple `(lane, name, start_ns, end_ns, args)`. A lane is a string naming
where the work ran: "host dispatch: MainThread", "executor: eager-executor-1", "GPU:0/compute".
`eager.profiler` turns lanes into Chrome trace processes and threads; this module only collects.

Appending takes a lock so that `stop()` is a clean cut: a slice that arrives after `stop()`
(from a thread that tested `active` just before) is dropped, never added to the next trace.
"""

from __future__ import annotations

import threading
import time

__all__ = ["RECORDER", "now_ns", "add_slice", "start", "stop", "register_flusher"]

#: The clock every slice is measured with (monotonic, nanoseconds, shared by all threads).
now_ns = time.perf_counter_ns


class _Recorder:
    """`active` is the flag hot code reads; `slices` and `origin_ns` belong to the running trace."""

    __slots__ = ("active", "lock", "slices", "origin_ns")

    def __init__(self):
        self.active = False
        self.lock = threading.Lock()
        self.slices = []
        self.origin_ns = 0


RECORDER = _Recorder()


def add_slice(lane: str, name: str, start_ns: int, end_ns: int, args: dict | None = None) -> None:
    """Records that `name` ran on `lane` from `start_ns` to `end_ns` (`now_ns()` readings).
    Thread-safe; does nothing when no trace is running."""
    recorder = RECORDER
    with recorder.lock:
        if recorder.active:
            recorder.slices.append((lane, name, start_ns, end_ns, args))


def start() -> int:
    """Starts collecting; returns the origin timestamp (ns) slices are later made relative to.
    Raises RuntimeError if collection is already running (one trace at a time)."""
    recorder = RECORDER
    with recorder.lock:
        if recorder.active:
            raise RuntimeError("profile events are already being recorded")
        recorder.slices = []
        recorder.origin_ns = now_ns()
        recorder.active = True
        return recorder.origin_ns


_flushers = []  # called by stop() first: sources that time work after the fact (GPU events)


def register_flusher(flush) -> None:
    """`flush()` runs at the start of every `stop()`, while recording is still on, to add the
    slices a source could only time afterwards (a CUDA stream reads its timing events once the
    work has finished)."""
    _flushers.append(flush)


def stop() -> list:
    """Stops collecting and returns the slices recorded since `start()` (empty if not running)."""
    recorder = RECORDER
    if recorder.active:
        for flush in list(_flushers):
            flush()
    with recorder.lock:
        recorder.active = False
        slices, recorder.slices = recorder.slices, []
    return slices
