"""Which strategy is current, and whether this thread is in replica or cross-replica context.

Per thread, a stack of (strategy, replica context or None): `strategy.scope()` pushes
(strategy, None) — cross-replica context; each replica thread of `strategy.run` pushes
(strategy, its ReplicaContext); a `merge_call` pushes (strategy, None) for the merge function.
With nothing pushed the default strategy and its replica context are current (TF's rule).
"""

from __future__ import annotations

import contextlib
import threading

_LOCAL = threading.local()


def _stack() -> list:
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    return stack


@contextlib.contextmanager
def entered(strategy, replica_context=None):
    stack = _stack()
    stack.append((strategy, replica_context))
    try:
        yield
    finally:
        stack.pop()


def current():
    """(strategy, replica context or None), or (None, None) with nothing entered."""
    stack = _stack()
    return stack[-1] if stack else (None, None)


def entries() -> list:
    return list(_stack())


def set_entries(entries_) -> None:
    """A replica thread starts with its parent's stack (then pushes its own replica)."""
    _LOCAL.stack = list(entries_)
