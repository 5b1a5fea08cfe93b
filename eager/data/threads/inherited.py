"""What a pipeline thread inherits from the thread that starts it: the device scope.

TensorFlow's functions run under the device scope they were called in, wherever the runtime
runs them. A pipeline's threads start when its iterator is first read (or made), so they take
the device scope of the thread reading it then: a map function's eager parts (a `py_function`
body, a `flat_map` function) place their ops as they would on the consumer's thread without
threads. Nothing else crosses: the threads run eagerly and synchronously, with no gradient
tapes (a pipeline's ops are never recorded for the step's gradients).
"""

from __future__ import annotations

from ...core import context as _context

__all__ = ["capture", "run_inherited"]

_NO_SCOPE = object()


def capture():
    """The calling thread's innermost device scope (its spec, merged with the outer ones), or
    a marker for none."""
    stack = _context.per_thread.state.device_stack
    return stack[-1].spec if stack else _NO_SCOPE


def run_inherited(captured, target, *args):
    """`target(*args)` under the device scope `capture` returned (on the new thread)."""
    if captured is _NO_SCOPE:
        return target(*args)
    with _context.device(captured):
        return target(*args)
