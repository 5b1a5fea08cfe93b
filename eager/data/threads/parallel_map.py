"""`ParallelMap`: `fn` applied to a source's elements by a bounded pool of worker threads.

≈ the iterator of `dataset.map(fn, num_parallel_calls=n, deterministic=d)`. Each worker loops:
reserve room, take the next element from the source (one worker at a time: iterators are not
thread-safe, and the order taken is the element's number), apply `fn` outside every lock, and
hand the outcome over. Workers compute at the same time whenever `fn`'s kernels release the GIL
(numpy's do), which is where the speed-up comes from.

* **Order.** Deterministic: outcomes are returned in the source's order; a slow element holds
  back the ones after it (which wait, finished, in the buffer). Not deterministic: in the order
  they finish, so a slow element does not hold back the others.
* **Bounded.** At most `num_parallel_calls + buffer_size` elements are taken from the source
  and not yet returned (computing, or finished and waiting); a worker that finds no room waits.
* **Errors** are outcomes like elements, as in TensorFlow: an exception raised by `fn`, or by
  the source's `next()`, is raised by the consumer's `next()` for that element, and the
  iteration goes on with the next one. A source that ends with an exception other than
  `Exception` (SystemExit) ends the iteration after it. `fn` raising StopIteration is a
  RuntimeError, as a generator's would be (it would otherwise end the iteration silently).
* **Stopping** is `lifecycle`'s: `close()`, dropping the iterator, interpreter exit.

Workers run under the device scope of the thread that started them (see `prefetch`); `fn` is
called with one argument, the element.
"""

from __future__ import annotations

import collections
import threading

from . import autotune
from .channel import Failure
from .lifecycle import PipelineIterator

__all__ = ["ParallelMap", "parallel_map"]

#: Finished elements a map holds beyond its workers' by default: with ordered outcomes, room for
#: the workers to go on past a slow element for a while.
MAP_BUFFER = 2

_MISSING = object()
_OVER = object()  # next_outcome: the iteration is over


class _MapState:
    """What the workers and the consumer share (never the `ParallelMap` itself, so that an
    abandoned one is collected). `_lock` guards the counters and outcomes and is held only for
    bookkeeping; `_source_lock` serializes taking elements (held while the source makes one,
    which only workers wait for). Lock order: `_source_lock`, then `_lock`."""

    __slots__ = ("fn", "make_source", "source", "ordered", "capacity", "_lock", "_ready",
                 "_room", "_source_lock", "taken", "reserved", "returned", "end", "closed",
                 "draining", "broken", "done", "finished", "consumers_waiting", "workers_waiting")

    def __init__(self, make_source, fn, ordered, capacity):
        self.fn = fn
        self.make_source = make_source
        self.source = None
        self.ordered = ordered
        self.capacity = capacity
        self._lock = threading.RLock()  # re-entrant: see channel's module doc
        self._ready = threading.Condition(self._lock)  # the consumer waits for an outcome
        self._room = threading.Condition(self._lock)  # workers wait for room
        self._source_lock = threading.Lock()
        self.taken = 0  # elements numbered so far (the next one's number)
        self.reserved = 0  # room reserved by workers (taken or about to be)
        self.returned = 0  # outcomes handed to the consumer
        self.end = None  # the number the source ended at, once it has
        self.closed = False
        self.draining = False  # `drain()`: workers finish the elements they took, take no more
        self.broken = None  # the error a forked child's `next()` raises
        self.done = {}  # deterministic: number -> outcome
        self.finished = collections.deque()  # not deterministic: outcomes as they finish
        self.consumers_waiting = 0
        self.workers_waiting = 0

    # -- the parts' interface (lifecycle) ------------------------------------------------------
    def close(self):
        with self._lock:
            self.closed = True
            self.done.clear()
            self.finished.clear()
            self._ready.notify_all()
            self._room.notify_all()

    def drain(self):
        with self._lock:
            self.draining = True
            self._room.notify_all()

    def leftovers(self) -> list:
        """The outcomes not returned, in the order `next()` would have returned them, errors as
        their exceptions (the workers have stopped: see `drain`)."""
        with self._lock:
            if self.ordered:
                outcomes = [self.done.pop(n) for n in sorted(self.done)]
            else:
                outcomes = list(self.finished)
                self.finished.clear()
        return [o.error if o.__class__ is Failure else o for o in outcomes]

    def break_after_fork(self, error):
        self._lock = threading.RLock()
        self._ready = threading.Condition(self._lock)
        self._room = threading.Condition(self._lock)
        self._source_lock = threading.Lock()
        self.consumers_waiting = self.workers_waiting = 0
        self.broken = error
        self.closed = True

    # -- the consumer -------------------------------------------------------------------------
    def next_outcome(self):
        """The next outcome to return, waiting for it; `_OVER` once the iteration is over."""
        with self._lock:
            while True:
                if self.closed:
                    if self.broken is not None:
                        raise self.broken
                    return _OVER
                if self.ordered:
                    outcome = self.done.pop(self.returned, _MISSING)
                else:
                    outcome = self.finished.popleft() if self.finished else _MISSING
                if outcome is not _MISSING:
                    break
                if self.end is not None and self.returned >= self.end:
                    return _OVER
                self.consumers_waiting += 1
                try:
                    self._ready.wait()
                finally:
                    self.consumers_waiting -= 1
            self.returned += 1
            if self.workers_waiting:
                self._room.notify()
            return outcome

    # -- the workers --------------------------------------------------------------------------
    def reserve(self) -> bool:
        """Waits for room for one more element; False when the worker should exit."""
        with self._lock:
            while self.reserved - self.returned >= self.capacity:
                if self.closed or self.draining or self.end is not None:
                    return False
                self.workers_waiting += 1
                try:
                    self._room.wait()
                finally:
                    self.workers_waiting -= 1
            if self.closed or self.draining or self.end is not None:
                return False
            self.reserved += 1
            return True

    def take(self):
        """(number, element or Failure) of the source's next element, with its room reserved;
        None (reservation given back) when the source has ended or the map is closed."""
        with self._source_lock:
            if self.closed or self.draining or self.end is not None:
                self._unreserve()
                return None
            number = self.taken
            try:
                source = self.source
                if source is None:
                    make, self.make_source = self.make_source, None
                    self.source = source = iter(make())
                element = next(source)
            except StopIteration:
                self._finish_source(number, unused_reservation=True)
                return None
            except Exception as exc:  # noqa: BLE001 - this element's outcome; the source goes on
                element = Failure(exc)
                if source is None:  # the source could not be made: nothing follows
                    self._finish_source(number + 1)
            except BaseException as exc:  # noqa: BLE001 - SystemExit and the like end the source
                element = Failure(exc)
                self._finish_source(number + 1)
            self.taken = number + 1
            return number, element

    def _unreserve(self):
        with self._lock:
            self.reserved -= 1

    def _finish_source(self, end, unused_reservation=False):
        """The source ends at number `end` (under `_source_lock`); the calling worker's room
        goes unused when it took no element."""
        with self._lock:
            self.end = end
            if unused_reservation:
                self.reserved -= 1
            self._ready.notify_all()
            self._room.notify_all()

    def deliver(self, number, outcome):
        with self._lock:
            if self.closed:
                return
            if self.ordered:
                self.done[number] = outcome
                if self.consumers_waiting and number == self.returned:
                    self._ready.notify()
            else:
                self.finished.append(outcome)
                if self.consumers_waiting:
                    self._ready.notify()


def _work(state, shutdown):
    """A worker thread (see the module doc)."""
    fn = state.fn
    while state.reserve():
        taken = state.take()
        if taken is None:
            return
        number, element = taken
        if shutdown.upstream is None:  # stopping this map signals a pipeline it reads
            shutdown.upstream = state.source
        if element.__class__ is Failure:
            state.deliver(number, element)
            continue
        try:
            outcome = fn(element)
        except StopIteration as exc:
            outcome = Failure(RuntimeError(f"The map function raised StopIteration: {exc!r}"))
            outcome.error.__cause__ = exc
        except BaseException as exc:  # noqa: BLE001 - this element's outcome, raised by next()
            outcome = Failure(exc)
        del element
        state.deliver(number, outcome)
        del outcome


class ParallelMap(PipelineIterator):
    """An iterator over `fn(element)` for the elements of `make_iterator()`, computed by
    `num_parallel_calls` worker threads (`AUTOTUNE`: see `autotune`), in the source's order when
    `deterministic`, else as they finish. At most `num_parallel_calls + buffer_size` elements
    are in flight or waiting (`buffer_size` defaults to `MAP_BUFFER`). See the module
    doc for errors and stopping."""

    __slots__ = ("_state", "num_parallel_calls")

    def __init__(self, make_iterator, fn, num_parallel_calls=autotune.AUTOTUNE,
                 deterministic=True, buffer_size=None):
        if not callable(make_iterator):
            raise TypeError(f"ParallelMap needs a zero-argument callable returning an iterator, "
                            f"got {type(make_iterator).__name__}.")
        if not callable(fn):
            raise TypeError(f"ParallelMap needs a callable map function, got "
                            f"{type(fn).__name__}.")
        n = autotune.parallel_calls(num_parallel_calls)
        extra = MAP_BUFFER if buffer_size is None else autotune.prefetch_buffer(buffer_size)[0]
        self.num_parallel_calls = n
        state = _MapState(make_iterator, fn, bool(deterministic), n + extra)
        self._state = state
        self._start((state,), [(f"eager-data map {i}", _work, (state,)) for i in range(n)])

    def __next__(self):
        # Hot: once per element.
        outcome = self._state.next_outcome()
        if outcome is _OVER:
            raise StopIteration
        if outcome.__class__ is Failure:
            raise outcome.error
        return outcome


def parallel_map(make_iterator, fn, num_parallel_calls=autotune.AUTOTUNE, deterministic=True,
                 buffer_size=None) -> ParallelMap:
    """`ParallelMap(make_iterator, fn, num_parallel_calls, deterministic, buffer_size)`."""
    return ParallelMap(make_iterator, fn, num_parallel_calls, deterministic, buffer_size)
