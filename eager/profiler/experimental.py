"""`eager.profiler.experimental` ≈ `tf.profiler.experimental`: TensorFlow's profiler names on
eager's profiler.

`start(logdir)` / `stop()` / `Profile(logdir)` record the same trace `eager.profiler.trace`
does and write it into `logdir` as a Chrome/Perfetto JSON file (`eager_trace_<pid>_<n>.json`),
not as TensorBoard's profile plugin data (XPlane protobufs, which TensorBoard's profile tab
reads): open it in https://ui.perfetto.dev. `Trace(name)` marks a span of the user's code,
shown in the trace on the lane "annotations: <thread>".
"""

from __future__ import annotations

import collections
import threading

from ..base import profile_events as _profile_events
from .tracing import start as _start
from .tracing import stop as _stop
from .tracing import trace as _trace

__all__ = ["start", "stop", "Profile", "Trace", "ProfilerOptions"]

#: ≈ `tf.profiler.experimental.ProfilerOptions`; accepted, and its fields have no effect here.
ProfilerOptions = collections.namedtuple(
    "ProfilerOptions", ["host_tracer_level", "python_tracer_level", "device_tracer_level",
                        "delay_ms"], defaults=[2, 0, 1, None])


def start(logdir, options=None) -> None:
    """Starts recording every op; `stop()` writes the trace into `logdir`. Raises
    AlreadyExistsError when a trace is already running (TensorFlow's error class)."""
    _start(logdir)


def stop(save=True):
    """Ends the running trace and writes it (always: `save=False` is not supported). Returns
    the `eager.profiler.Trace`. Raises UnavailableError when none is running."""
    if not save:
        raise NotImplementedError("eager.profiler.experimental.stop(save=False): a trace is "
                                  "always written.")
    return _stop()


def Profile(logdir, options=None):  # noqa: N802 - TensorFlow's name for its context manager
    """`with Profile(logdir):` records what runs inside, as `start`/`stop` around the block."""
    return _trace(logdir)


class Trace:
    """≈ `tf.profiler.experimental.Trace(name, **kwargs)`: a named span of user code in the
    trace (with `kwargs` as its arguments); costs one clock reading when no trace runs."""

    __slots__ = ("_name", "_args", "_start_ns")

    def __init__(self, name, **kwargs):
        self._name = str(name)
        self._args = {k: str(v) for k, v in kwargs.items()} or None
        self._start_ns = 0

    def __enter__(self):
        self._start_ns = _profile_events.now_ns()
        return self

    def __exit__(self, *exc):
        if _profile_events.RECORDER.active:
            _profile_events.add_slice(f"annotations: {threading.current_thread().name}",
                                      self._name, self._start_ns, _profile_events.now_ns(),
                                      self._args)
        return False
