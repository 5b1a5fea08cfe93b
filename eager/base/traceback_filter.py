"""Tracebacks that point at the user: eager's own frames hidden from the errors users see.

An error raised by an op, a traced function or a sync point passes through ten to twenty of
eager's frames (dispatch, the kernel, the compiled program, the executor) before it reaches the
user's line, which a notebook then shows buried at the top. As TensorFlow does, the public entry
points re-raise what escapes them with those frames removed (`filter_traceback`, and the same
`except` clause written inline where a hot path cannot afford a wrapper's call), keeping the
user's frames, the frames of user code eager called (a traced function's body, a layer's
`call`), and the message. An internal exception chained to the error (numpy's, which the
message already quotes) is dropped from the chain; a chained exception that has user frames is
kept, filtered the same way.

`disable_traceback_filtering()` (≈ `tf.debugging.disable_traceback_filtering`) shows everything
again, for debugging eager itself. The switch is process-wide (TensorFlow's is per thread): a
notebook's cells and the threads they start see one setting.

Costs nothing until an exception escapes: the wrapper is one call, and Python's `try` is free.
Stdlib only; any layer may import it.
"""

from __future__ import annotations

import functools
import os
import sys
import types

from .user_code import EAGER_DIR

__all__ = ["filter_traceback", "filtered", "enable_traceback_filtering",
           "disable_traceback_filtering", "is_traceback_filtering_enabled",
           "filter_public_functions"]


class _Switch:
    __slots__ = ("enabled",)

    def __init__(self):
        self.enabled = True


#: Whether errors leaving eager's public entry points have eager's frames removed.
SWITCH = _Switch()

#: Generated code (compiled programs, fused kernels) is compiled under `<eager ...#n>` names
#: (`eager.runtime.source_names`): eager's frames as much as its files' are.
_GENERATED_PREFIX = "<eager "

#: Libraries whose frames in a chained exception make it eager's internal business: a numpy
#: error a kernel raised, which the eager error's message already quotes.
_NUMPY_DIR = None


def _numpy_dir():
    global _NUMPY_DIR
    if _NUMPY_DIR is None:
        numpy = sys.modules.get("numpy")  # (eager imports it: there by the time errors come)
        if numpy is None:
            return EAGER_DIR
        _NUMPY_DIR = os.path.dirname(os.path.abspath(numpy.__file__))
    return _NUMPY_DIR


def enable_traceback_filtering() -> None:
    """≈ `tf.debugging.enable_traceback_filtering()`: errors from eager's public API show the
    user's frames only (the default)."""
    SWITCH.enabled = True


def disable_traceback_filtering() -> None:
    """≈ `tf.debugging.disable_traceback_filtering()`: errors keep eager's own frames and
    chained internal exceptions (for debugging eager itself)."""
    SWITCH.enabled = False


def is_traceback_filtering_enabled() -> bool:
    """≈ `tf.debugging.is_traceback_filtering_enabled()`."""
    return SWITCH.enabled


def _is_eager_frame(filename: str) -> bool:
    return filename.startswith(EAGER_DIR) or filename.startswith(_GENERATED_PREFIX)


def _kept_frames(tb):
    """`tb` rebuilt from its frames outside eager (None when none is)."""
    kept = []
    while tb is not None:
        if not _is_eager_frame(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    rebuilt = None
    for entry in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt


def _internal(exc) -> bool:
    """Whether every frame of `exc`'s traceback is eager's or numpy's (a kernel's numpy
    error), so the user learns nothing from it that the eager error does not say."""
    numpy_dir = _numpy_dir()
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not (_is_eager_frame(filename) or filename.startswith(numpy_dir)):
            return False
        tb = tb.tb_next
    return True


def filtered(exc, _seen=None):
    """`exc` with eager's frames removed from its traceback, and from those of the exceptions
    chained to it; a chained exception with no frame of the user's is unchained (module doc).
    Returns `exc` itself, changed in place, ready for `raise`."""
    seen = set() if _seen is None else _seen
    if id(exc) in seen:
        return exc
    seen.add(id(exc))
    exc.__traceback__ = _kept_frames(exc.__traceback__)
    cause, context = exc.__cause__, exc.__context__
    if cause is not None:
        if _internal(cause):
            exc.__cause__ = None
            exc.__suppress_context__ = True
        else:
            filtered(cause, seen)
    if context is not None and context is not cause and not exc.__suppress_context__:
        if _internal(context):
            exc.__suppress_context__ = True
        else:
            filtered(context, seen)
    return exc


_WRAPPED = {}  # function -> its filtering wrapper: one per function, so `tf.add is tf.math.add`


def filter_traceback(fn):
    """`fn` as a public entry point: an exception escaping it is raised again `filtered` while
    filtering is enabled. One wrapper per function (the same function exported under two names
    stays one object)."""
    wrapper = _WRAPPED.get(fn)
    if wrapper is not None:
        return wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if SWITCH.enabled:
                raise filtered(exc)  # noqa: B904 - `filtered` decides the chain
            raise

    wrapper._eager_filters_tracebacks = True
    _WRAPPED[fn] = wrapper
    return wrapper


def filter_public_functions(namespace: dict) -> None:
    """Wraps (`filter_traceback`) each function a public namespace module exports (its
    `__all__`, else its names without a leading underscore) that eager defines: called at the
    end of each public module, so eager's internal callers keep calling the plain functions."""
    names = namespace.get("__all__")
    if names is None:
        names = [n for n in namespace if not n.startswith("_")]
    for name in names:
        value = namespace.get(name)
        if (value.__class__ is types.FunctionType
                and _is_eager_frame(value.__code__.co_filename)
                and not getattr(value, "_eager_filters_tracebacks", False)):
            namespace[name] = filter_traceback(value)
