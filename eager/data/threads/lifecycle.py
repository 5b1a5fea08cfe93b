"""How a pipeline's threads are stopped: by `close()`, when its iterator is abandoned, at
interpreter exit, and in a forked child.

Every iterator that owns threads (`PipelineIterator`) keeps a `Shutdown`: the parts to close
(channels, a parallel map's shared state) and the threads. Stopping is two steps:

* **signal**: close every part. A producer blocked on a full buffer wakes at once and exits; a
  consumer blocked on an empty one gets the end of iteration; a producer inside user code (a
  map function, a generator) finishes its current element, finds the part closed and exits,
  dropping the element. The upstream pipeline a producer reads from, when it is one of ours, is
  signalled too, so a producer waiting on it wakes.
* **join**: wait, for at most `CLOSE_TIMEOUT_S` in all, until the threads have exited. A thread
  still inside user code then is left to finish its element on its own (it is a daemon, so it
  never keeps the interpreter alive); nothing else runs after `close()` returns.

Who stops what:

* `close()` (also leaving a `with` block): signal and join.
* An iterator collected without `close()` (a `break` out of a loop, a dropped iterator): its
  finalizer only signals. The collector may run it in any thread, at any allocation, while that
  thread holds a lock a producer needs (a device stream's, the fast-path switch's), so waiting
  there for the producer could deadlock. The threads exit on their own right after.
* Interpreter exit: every live pipeline is signalled, then joined with one overall bound,
  before the async executors drain (this module registers its `atexit` hook after theirs, and
  `atexit` runs hooks in reverse).
* A forked child has none of its parent's threads: an iterator made before the fork raises
  FailedPreconditionError at its next `next()` instead of waiting forever.

Threads never refer to the iterator that owns them (they get its parts and the zero-argument
callable that makes their source, taken out of a box so that the `Thread` object does not keep
it either), so an abandoned iterator really is collected.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
import weakref

from ...base.errors import FailedPreconditionError
from . import inherited

__all__ = ["PipelineIterator", "Shutdown", "CLOSE_TIMEOUT_S", "live_threads"]

#: How long `close()` (and interpreter exit, for all pipelines together) waits for threads to
#: exit. A producer blocked on a buffer exits at once; only one inside slow user code is waited
#: for, and past this bound left to finish its element alone.
CLOSE_TIMEOUT_S = 2.0

#: How many wrapping iterators (`pipeline_source` links) signalling looks through for a pipeline.
_MAX_WRAPPERS = 64

_live = set()  # Shutdowns whose threads may be running
_live_lock = threading.Lock()


class Shutdown:
    """Stops one pipeline's threads (see the module doc). `parts` have `close()` and
    `break_after_fork(error)`; `upstream` is the source a producer is reading, set by that
    producer while it reads: when it is a pipeline of ours, or an iterator leading to one through
    `pipeline_source` attributes (an iterator that wraps another names it so), that pipeline is
    signalled along."""

    __slots__ = ("parts", "threads", "upstream", "__weakref__")

    def __init__(self, parts, threads):
        self.parts = tuple(parts)
        self.threads = tuple(threads)
        self.upstream = None

    def signal(self, cascade=True) -> list:
        """Closes every part, and with `cascade` the pipeline upstream; returns the threads to
        join (safe from any thread and from a finalizer: it takes only the parts' re-entrant
        locks, briefly)."""
        for part in self.parts:
            part.close()
        threads = list(self.threads)
        if not cascade:
            return threads
        upstream = self.upstream
        for _ in range(_MAX_WRAPPERS):
            if upstream is None or isinstance(upstream, PipelineIterator):
                break
            upstream = getattr(upstream, "pipeline_source", None)
        if isinstance(upstream, PipelineIterator):
            threads.extend(upstream._shutdown.signal())
        return threads

    def stop(self, timeout: float) -> None:
        """Signals, then waits up to `timeout` seconds for the threads to exit."""
        _join(self.signal(), timeout)

    def drain(self) -> list:
        """Lets the threads finish the elements they are making, waiting for them however long
        that takes, and stops them; returns what was made and not consumed, in order. Upstream
        is neither signalled nor read further: its iterator stays usable where it is."""
        for part in self.parts:
            part.drain()
        _join(self.threads, None)
        items = [item for part in self.parts for item in part.leftovers()]
        _join(self.signal(cascade=False), 0.0)
        return items

    def alive(self) -> bool:
        return any(t.is_alive() for t in self.threads)


def _join(threads, timeout):
    """Waits for `threads` to exit, `timeout` seconds at most in all (None: no bound)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    me = threading.current_thread()
    for thread in threads:
        if thread is me:
            continue  # close() called by a map function or a source, on a pipeline thread
        thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))


class PipelineIterator:
    """An iterator whose elements are made on threads of its own: it starts them, and stops
    them on `close()`, when collected, and at exit (see the module doc). Subclasses call
    `_start(parts, workers)` once, from `__init__`."""

    __slots__ = ("_shutdown", "_finalizer", "__weakref__")

    def _start(self, parts, workers=()) -> None:
        """Registers the stopping of `parts` and starts one daemon thread per `(name, target,
        args)` of `workers`, running `target(*args, shutdown)` under the calling thread's device
        scope (`inherited`; a producer publishes the source it reads on the `Shutdown`, so that
        stopping reaches it)."""
        shutdown = Shutdown(parts, ())
        scope = inherited.capture()
        shutdown.threads = tuple(threading.Thread(target=inherited.run_inherited,
                                                  args=(scope, target, *args, shutdown),
                                                  name=name, daemon=True)
                                 for name, target, args in workers)
        self._shutdown = shutdown
        finalizer = weakref.finalize(self, shutdown.signal)
        finalizer.atexit = False  # exit has its own hook, which also joins
        self._finalizer = finalizer
        if not shutdown.threads:
            return
        with _live_lock:
            for old in [s for s in _live if not s.alive()]:
                _live.discard(old)
            _live.add(shutdown)
        for thread in shutdown.threads:
            thread.start()

    def __iter__(self):
        return self

    def close(self, drain=False, timeout=CLOSE_TIMEOUT_S):
        """Stops the threads; later `next()` calls raise StopIteration. Idempotent.

        Without `drain`, what is buffered is dropped, the pipeline upstream is stopped too,
        and this returns once the threads have exited, or after `timeout` seconds (a thread
        inside slow user code then finishes its element alone). With `drain` (to checkpoint a
        position), the threads first finish the elements they are making, waited for without
        bound; the return value is the list of elements made and not consumed, in the order
        `next()` would have returned them, errors as their exception objects; and the source's
        iterator is left as it is, positioned after those elements, for a new pipeline to go
        on reading.
        """
        self._finalizer.detach()
        shutdown = self._shutdown
        if drain:
            items = shutdown.drain()
        else:
            items = None
            shutdown.stop(timeout)
        with _live_lock:
            _live.discard(shutdown)
        return items

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def live_threads() -> list:
    """The threads of every pipeline not yet stopped (tests check none is left running)."""
    with _live_lock:
        shutdowns = list(_live)
    return [t for s in shutdowns for t in s.threads if t.is_alive()]


def _stop_all_at_exit():
    with _live_lock:
        shutdowns = list(_live)
        _live.clear()
    threads = []
    for shutdown in shutdowns:
        threads.extend(shutdown.signal())
    _join(threads, CLOSE_TIMEOUT_S)


def _break_after_fork():
    error = FailedPreconditionError(
        None, None, "This dataset iterator was made before the process forked; its threads "
                    "exist only in the parent. Make a new iterator in the child process.")
    global _live_lock  # noqa: PLW0603 - the parent's lock may have been held by a lost thread
    _live_lock = threading.Lock()
    for shutdown in list(_live):
        for part in shutdown.parts:
            part.break_after_fork(error)
    _live.clear()


atexit.register(_stop_all_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_break_after_fork)
