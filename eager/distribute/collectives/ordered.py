"""One engine's collectives, in one order, from any thread: a FIFO communication thread.

Why: overlapping an all-reduce with the backward pass means starting it and carrying on, so the
exchange runs on another thread. But processes match collectives by their order, and an engine
whose calls could come from two threads at once (a started all-reduce on the communication
thread, a synchronous broadcast from the caller) could issue them in different orders on
different workers, which deadlocks or pairs the wrong buffers. So every call of an engine goes
through one `OrderedCalls`: started calls (`submit`) queue for its thread and run one at a time
in submission order; a synchronous call (`call`) runs at once on the caller's thread when
nothing is queued or running (no hand-off cost for the common case), else queues behind the
started ones and waits. The order of issue on the caller's thread is the order of the
exchanges, on every worker.

Results and errors come back through `concurrent.futures.Future`s: a started call's error is
raised where its result is asked for (`Future.result()`), never lost on the thread.
"""

from __future__ import annotations

import collections
import threading
from concurrent.futures import Future

__all__ = ["OrderedCalls"]


class OrderedCalls:
    """Runs functions one at a time in the order they were given (see the module doc).

    `name` names the thread (debuggers and `threading.enumerate` show it). The thread starts
    on the first `submit` and ends at `close()`; it is a daemon, so a process that exits with
    calls still queued is not held up by them.
    """

    __slots__ = ("_name", "_lock", "_wake", "_queue", "_busy", "_owner", "_thread", "_closed",
                 "submitted")

    def __init__(self, name: str = "eager-collectives"):
        self._name = name
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._queue = collections.deque()  # (fn, future), oldest first
        self._busy = False  # a call is running (on the thread or inline on a caller)
        self._owner = None  # the ident of the thread running it: its own calls run at once
        self._thread = None
        self._closed = False
        self.submitted = 0  # calls given to `submit` so far (synchronous ones queued included)

    def submit(self, fn) -> Future:
        """Queues `fn()` to run after every call given before it; its Future holds the result
        (or the exception it raised)."""
        future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self._name}: the communication thread was closed.")
            self._queue.append((fn, future))
            self.submitted += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=self._name,
                                                daemon=True)
                self._thread.start()
            self._wake.notify()
        return future

    def call(self, fn):
        """`fn()`, after every call given before it; its result, or its exception raised. A
        call made by a running call (a started function calling the engine) runs at once: it
        is part of the call already in its turn."""
        me = threading.get_ident()
        if self._owner == me:
            return fn()
        with self._lock:
            inline = not self._busy and not self._queue
            if inline:
                self._busy = True
                self._owner = me
        if not inline:
            return self.submit(fn).result()
        try:
            return fn()
        finally:
            with self._lock:
                self._busy = False
                self._owner = None
                self._wake.notify()

    def pending(self) -> int:
        """How many calls are queued or running."""
        with self._lock:
            return len(self._queue) + self._busy

    def close(self) -> None:
        """Runs what is queued, then ends the thread. Idempotent; later calls are errors."""
        with self._lock:
            self._closed = True
            self._wake.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _serve(self) -> None:
        while True:
            with self._lock:
                while self._busy or not self._queue:
                    if self._closed and not self._queue:
                        return
                    self._wake.wait()
                fn, future = self._queue.popleft()
                self._busy = True
                self._owner = threading.get_ident()
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        result = fn()
                    except BaseException as e:  # noqa: BLE001 - handed to the waiter
                        future.set_exception(e)
                    else:
                        future.set_result(result)
            finally:
                with self._lock:
                    self._busy = False
                    self._owner = None
                    self._wake.notify_all()
