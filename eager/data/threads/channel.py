"""A bounded buffer between one producer thread and its consumers, and the outcomes it carries.

What travels is the sequence of outcomes the producer's `next()` calls had: elements, then
`Failure`s (an exception a `next()` raised, to be raised again at the consumer's matching
`next()`), and `END` once the source is exhausted. A consumer thus sees exactly what calling
`next()` on the source itself would have given, in the same order: TensorFlow's iterators
report an element's error at that element and go on with the next one.

Hand-offs between threads are what costs (about 15 microseconds each: a wake-up and a GIL
switch), so a producer that found the buffer full is woken only once the consumer has taken it
down to half: it then makes half a buffer in one go, instead of one element per wake-up.

Why not `queue.Queue`: closing must wake a producer blocked on a full buffer at once (a queue
would need polling with timeouts), and an autotuned buffer grows while in use.

Locking. One re-entrant lock guards the buffer and is held only for a few list operations,
never while an element is made or used, so a producer never holds what a consumer needs. It is
re-entrant because the collector may run an abandoned pipeline's finalizer, which closes its
channel, inside an allocation made under that very lock. Blocks take the lock itself (`with
self._lock`), not the Condition, whose Python `__enter__` a Ctrl-C could cut after the acquire
(the simulated GPU streams do the same).
"""

from __future__ import annotations

import collections
import threading

__all__ = ["Channel", "Failure", "END", "CLOSED"]


class Failure:
    """An exception a producer's `next()` (or a map function) raised, for the consumer to raise.

    Hot path note: consumers test `item.__class__ is Failure`, one comparison per element."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


#: The source is exhausted: the consumer's `next()` raises StopIteration.
END = _Marker("END")
#: `get` on a closed channel (the pipeline was closed): also the end of iteration.
CLOSED = _Marker("CLOSED")


class Channel:
    """A bounded FIFO of outcomes from one producer. `capacity` items at most; an autotuned
    channel starts at `capacity` and may double up to `limit` (see `autotune`'s module doc)
    when a consumer finds it empty after the producer had filled it."""

    __slots__ = ("_items", "_lock", "_not_empty", "_not_full", "capacity", "limit", "closed",
                 "draining", "_filled", "_getters", "_putters", "broken")

    def __init__(self, capacity: int, limit: int | None = None):
        self._items = collections.deque()
        self._lock = threading.RLock()  # re-entrant: see the module doc
        self._not_empty = threading.Condition(self._lock)
        self._not_full = threading.Condition(self._lock)
        self.capacity = max(1, capacity)
        self.limit = max(self.capacity, limit or 0)
        self.closed = False
        self.draining = False  # `drain()`: the producer stops after the element it is making
        self.broken = None  # an error every later `get` raises (a forked child's pipelines)
        self._filled = False  # the producer reached `capacity` since the last growth
        self._getters = 0  # threads waiting in `get`
        self._putters = 0  # threads waiting in `put`

    def wait_for_room(self) -> bool:
        """Waits until the buffer has room for one more item (the producer calls it before
        making the item, so that no element is made beyond the capacity). False when the
        producer should stop instead: the channel is closed or draining."""
        with self._lock:
            while len(self._items) >= self.capacity:
                if self.closed or self.draining:
                    return False
                self._filled = True
                self._putters += 1
                try:
                    self._not_full.wait()
                finally:
                    self._putters -= 1
            return not (self.closed or self.draining)

    def put(self, item) -> bool:
        """Appends `item` (made after `wait_for_room`: there is room, the producer being the
        only one to add). False when the producer should stop: the channel is closed (the item
        is dropped) or draining (the item is kept: it was made, and the source has moved past
        it)."""
        with self._lock:
            if self.closed:
                return False
            self._items.append(item)
            if self._getters:
                self._not_empty.notify()
            return not self.draining

    def get(self):
        """The oldest item, waiting while there is none; `CLOSED` once the channel is closed
        (items still buffered are dropped with it). A producer waiting for room is woken when
        the buffer is down to half (see the module doc). Hot: one call per element consumed."""
        with self._lock:
            items = self._items
            while not items:
                if self.closed:
                    if self.broken is not None:
                        raise self.broken
                    return CLOSED
                if self._filled and self.capacity < self.limit:  # drained: deepen the buffer
                    self.capacity = min(self.capacity * 2, self.limit)
                    self._filled = False
                    if self._putters:
                        self._not_full.notify_all()
                self._getters += 1
                try:
                    self._not_empty.wait()
                finally:
                    self._getters -= 1
            if self.closed:
                return CLOSED
            item = items.popleft()
            if self._putters and len(items) <= self.capacity >> 1:
                self._not_full.notify()
            return item

    def close(self) -> None:
        """Drops what is buffered and wakes every waiting thread: producers' `put` returns
        False, consumers' `get` returns `CLOSED`. Safe from any thread, and from a finalizer."""
        with self._lock:
            self.closed = True
            self._items.clear()
            self._not_full.notify_all()
            self._not_empty.notify_all()

    def drain(self) -> None:
        """Asks the producer to stop after the element it is making (kept: see `put`)."""
        with self._lock:
            self.draining = True
            self._not_full.notify_all()

    def leftovers(self) -> list:
        """What was made and not consumed, in order, errors as their exceptions (the producer
        has stopped: see `drain`); the end marker is not an item."""
        with self._lock:
            items = [item.error if item.__class__ is Failure else item
                     for item in self._items if item.__class__ is not _Marker]
            self._items.clear()
        return items

    def break_after_fork(self, error: BaseException) -> None:
        """In a forked child, where the producer thread does not exist: fresh locks (the
        parent's may have been held by a thread that is gone), closed, every `get` raising
        `error`."""
        self._lock = threading.RLock()
        self._not_empty = threading.Condition(self._lock)
        self._not_full = threading.Condition(self._lock)
        self._items = collections.deque()
        self._getters = self._putters = 0
        self.broken = error
        self.closed = True

    def __len__(self):
        return len(self._items)
