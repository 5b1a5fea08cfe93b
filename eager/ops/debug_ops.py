"""Numerics checking: `debugging.enable_check_numerics` / `disable_check_numerics`, TensorFlow's
check-numerics callback, and the `CheckNumericsV2` op it runs; and `Assert`, the check a
condition makes when the graph runs (`assert_that`).

Kernels return inf and nan silently, as TensorFlow's do (`eager.base.ieee`). Checking is how to
ask for errors instead: while it is enabled on a thread, every floating-point output of every op
that thread runs through dispatch is checked, and one holding an infinity or a NaN is
TensorFlow's InvalidArgumentError, whose message names the op that made it, the output's dtype
and shape, its inputs and (eagerly) how many elements are -Inf, +Inf and NaN, ending with
" : Tensor had -Inf values" (or "+Inf", "NaN", and their combinations). As in TensorFlow it
applies to the thread that enabled it, whatever the op's inputs held, and it skips the ops that
only move values (`SKIPPED`).

How it runs in each mode. Enabling installs dispatch's output checker
(`dispatch.set_output_checker`) and holds a slow-path reason, so that every op reaches it:

* eagerly, the outputs are checked at once, and the op's call raises;
* asynchronously, a `CheckNumericsV2` op is queued behind the op, and its error surfaces at the
  next sync point like any asynchronous kernel error;
* while tracing, a `CheckNumericsV2` node is added after the op, as TensorFlow inserts one into
  graphs built while checking is on. It is stateful, so no graph pass drops or folds it, and it
  runs wherever the function runs. A function traced before checking was enabled keeps its
  unchecked graph, and one traced while it was enabled keeps checking.
"""

from __future__ import annotations

import threading
import traceback

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError
from ..base.user_code import EAGER_DIR
from ..core import context as _context
from ..core import dispatch as _dispatch
from ..core.registry import describe_inputs, register_op
from ..core.specs import TensorSpec
from ..tensor import EagerTensor

__all__ = ["enable_check_numerics", "disable_check_numerics", "CHECK_NUMERICS", "SKIPPED",
           "ASSERT", "assert_that"]

#: Ops whose outputs are not checked: TensorFlow's callback skips the ones that only move or
#: select values (its SAFE_OPS, with eager's names: `Pack` is tf.stack, `Zeros`/`Ones` are its
#: Fill, `IndexAxis`/`SliceAxis` eager's slices) and those that wrap other ops (control flow,
#: function calls, its OP_CALLBACK_SKIP_OPS).
SKIPPED = frozenset({
    "ConcatV2", "ExpandDims", "Fill", "Zeros", "Ones", "GatherV2", "Maximum", "Minimum",
    "Reshape", "Slice", "IndexAxis", "SliceAxis", "Squeeze", "Pack", "StridedSlice",
    "TensorListGetItem", "TensorListPopBack", "TensorListStack", "Transpose", "Unpack",
    "Identity", "If", "Case", "While", "PartitionedCall", "StatefulPartitionedCall",
    "DestroyResourceOp",
})


def _anomalies(xp, x):
    """TensorFlow's CheckNumericsV2 wording for what `x` holds ("-Inf", "+Inf and NaN", ...)
    and the per-kind counts, or None when every element is finite."""
    if bool(xp.isfinite(x).all()):
        return None
    infinite = xp.isinf(x)
    negative = int((infinite & (x < 0)).sum())
    positive = int((infinite & (x > 0)).sum())
    nan = int(xp.isnan(x).sum())
    found = [name for name, n in (("-Inf", negative), ("+Inf", positive), ("NaN", nan)) if n]
    if len(found) == 3:
        wording = f"{found[0]}, {found[1]}, and {found[2]}"
    else:
        wording = " and ".join(found)
    return wording, negative, positive, nan


def _check(xp, x, head, tail, counts):
    """Raises TensorFlow's InvalidArgumentError unless every element of array `x` is finite:
    `head` and `tail` are the message's parts before and after the counts (given only when
    `counts`, as TensorFlow gives them only eagerly)."""
    found = _anomalies(xp, x)
    if found is None:
        return
    wording, negative, positive, nan = found
    middle = ""
    if counts:
        for label, n in (("-Inf", negative), ("+Inf", positive), ("+NaN", nan)):
            if n:
                middle += f"  # of {label} elements: {n}\n"
    raise InvalidArgumentError(None, "CheckNumericsV2", f"{head}{middle}{tail} : Tensor had "
                                                        f"{wording} values [Op:CheckNumericsV2]")


def _check_kernel(xp, x, head, tail, counts):
    _check(xp, x, head, tail, counts)
    return x


CHECK_NUMERICS = register_op(
    "CheckNumericsV2", _check_kernel, lambda x, head, tail, counts: TensorSpec(x.shape, x.dtype),
    dtypes=_dt.FLOATING, stateful=True, differentiable=False,
    doc="Passes its input through; an InvalidArgumentError if it holds inf or nan.")


def _assert_infer(condition, *data, message, labels=(), summarize=3):
    if condition.dtype != _dt.bool or (condition.shape.rank not in (None, 0)):
        raise InvalidArgumentError(None, "Assert", f"In[0] is not a scalar bool: "
                                                   f"{condition.dtype.name} {condition.shape}")
    return ()


def summarize_value(x, summarize) -> str:
    """An array as TensorFlow's Assert shows it: "[1 2 3]", its first `summarize` elements
    then "..."."""
    flat = x.reshape(-1).tolist()
    shown = " ".join(_item(v) for v in flat[:summarize])
    if len(flat) > summarize:
        shown += "..."
    return f"[{shown}]"


def _item(v) -> str:
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, float):
        return format(v, ".6g")
    return str(v)


def _assert_kernel(xp, condition, *data, message, labels=(), summarize=3):
    if not bool(condition):
        lead = message if isinstance(message, tuple) else (message,)
        parts = [f"[{m}]" for m in lead]
        for label, value in zip(labels, data):
            if label is not None:
                parts.append(f"[{label}]")
            host = value.get() if hasattr(value, "get") else value
            parts.append(summarize_value(host, summarize))
        raise InvalidArgumentError(None, "Assert", "assertion failed: " + " ".join(parts))
    return ()


# TensorFlow's Assert, with the message and the labels of the data tensors after the condition as
# attributes (TF's string inputs), each datum shown as "[label] [values]". Stateful,
# so it runs wherever its function runs, even though nothing reads it; a host op (its condition
# in host memory, as TensorFlow's), so its error is the call's, not a later sync point's.
ASSERT = register_op("Assert", _assert_kernel, _assert_infer, stateful=True, num_outputs=0,
                     differentiable=False,
                     device_types=frozenset({"CPU"}),
                     doc="An InvalidArgumentError 'assertion failed: [message]' unless its "
                         "scalar bool input is true.")


def assert_that(condition, message: str, data=(), labels=(), summarize=3) -> None:
    """Runs `Assert`: eagerly it raises at once when `condition` is false; traced, when the
    graph runs (TensorFlow's `tf.debugging.Assert` with the string `message` (or a tuple of
    strings) as its first data, then each tensor of `data` after its label in `labels`)."""
    attrs = {"message": message}
    if data:
        attrs.update(labels=tuple(labels), summarize=summarize)
    _dispatch.execute(ASSERT, (condition, *data), attrs)


# -----------------------------------------------------------------------------------------------
# The message (TensorFlow's `get_check_numerics_error_message`)
# -----------------------------------------------------------------------------------------------

def _shown(t) -> str:
    """An input as the message shows it: a host tensor or a traced one as its repr, anything
    else as its dtype and shape (a pending tensor is never waited for, nor a GPU's copied)."""
    if ((t.__class__ is EagerTensor and t._meta.device.inline)
            or getattr(t, "is_symbolic", False)):
        return repr(t)
    return describe_inputs((t,))


def _message_parts(op, slot, n_outputs, output, inputs, graph, limits):
    """(head, tail) of the error message for output `slot` of `op` (see `_check`)."""
    kind = "graph" if graph is not None else "eagerly-executing"
    head = (f"\n\n!!! Detected Infinity or NaN in output {slot} of {kind} op \"{op.name}\" "
            f"(# of outputs: {n_outputs}) !!!\n"
            f"  dtype: <dtype: '{output.dtype.name}'>\n"
            f"  shape: {output.shape}\n")
    tail = ""
    if len(inputs) > 1:
        tail += f"\n  Input tensors ({len(inputs)}):\n"
        tail += "".join(f"         {i}: {_shown(t)}\n" for i, t in enumerate(inputs))
    elif inputs:
        tail += f"\n  Input tensor: {_shown(inputs[0])}\n"
    if graph is not None:
        name = getattr(graph, "name", None)
        if name:
            tail += f"  Graph name: \"{name}\"\n"
        tail += _creation_stack(*limits)
    return head, tail + "\n"


def _creation_stack(stack_height_limit, path_length_limit) -> str:
    """Where the traced op was created, TensorFlow's way: the innermost frames up to the
    user's line that made the op (eager's own frames past it say nothing), user code marked
    with "->"."""
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(EAGER_DIR):
        frames.pop()
    text = "\n  Stack trace of op's creation (\"->\": inferred user code):\n"
    if stack_height_limit is not None and len(frames) > stack_height_limit:
        text += f"    + ... (Omitted {len(frames) - stack_height_limit} frames)\n"
        frames = frames[-stack_height_limit:]
    for frame in frames:
        path = frame.filename
        if path_length_limit is not None and len(path) > path_length_limit:
            path = "..." + path[len(path) - path_length_limit:]
        marker = "    " if frame.filename.startswith(EAGER_DIR) else " -> "
        text += f"    + {path} (L{frame.lineno}) {frame.name}\n"
        if frame.line:
            text += f"{marker}|   {frame.line}\n"
    return text


# -----------------------------------------------------------------------------------------------
# Enabling, per thread
# -----------------------------------------------------------------------------------------------

class _Checking:
    """This thread's numerics checking: its message limits, and the process-wide hold it has
    (the output checker installed, a slow-path reason). Kept in a `threading.local`, so a
    thread that ends with checking on gives the hold back."""

    __slots__ = ("limits", "held")

    def __init__(self, limits):
        self.limits = limits
        self.held = True
        _hold(+1)

    def release(self):
        if self.held:
            self.held = False
            _hold(-1)

    def __del__(self):
        try:
            self.release()
        except Exception:  # noqa: BLE001 - at interpreter exit the modules may be gone
            pass


_threads = threading.local()
_holders = [0]
_holders_lock = threading.Lock()


def _hold(delta):
    with _holders_lock:
        _holders[0] += delta
        _dispatch.set_output_checker(_check_outputs if _holders[0] else None)
    if delta > 0:
        _context.enter_slow_path()
    else:
        _context.leave_slow_path()


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """≈ `tf.debugging.enable_check_numerics`: from now on, on this thread, an op whose
    floating-point output holds an infinity or a NaN raises InvalidArgumentError naming the op
    (module doc), eagerly, asynchronously and in functions traced from now on. Idempotent. The
    limits shape the stack trace in a traced op's message."""
    if getattr(_threads, "checking", None) is None:
        _threads.checking = _Checking((stack_height_limit, path_length_limit))


def disable_check_numerics():
    """≈ `tf.debugging.disable_check_numerics`: ends this thread's checking (functions traced
    meanwhile keep their checks). Idempotent; a no-op when checking is off."""
    checking = getattr(_threads, "checking", None)
    if checking is not None:
        checking.release()
        _threads.checking = None


def _check_outputs(op, inputs, outputs):
    """Dispatch's output checker (module doc)."""
    checking = getattr(_threads, "checking", None)
    if checking is None or op is CHECK_NUMERICS or op.name in SKIPPED:
        return
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    for slot, out in enumerate(outputs):
        if not out.dtype.is_floating:
            continue
        if out.__class__ is EagerTensor and out._meta.device.inline:
            # Eagerly on the host: checked now, the message made only if needed.
            if _anomalies(out._meta.device.xp, out._value) is not None:
                head, tail = _message_parts(op, slot, len(outputs), out, inputs, None,
                                            checking.limits)
                _check(out._meta.device.xp, out._value, head, tail, True)
            continue
        graph = out.graph if getattr(out, "is_symbolic", False) else None
        head, tail = _message_parts(op, slot, len(outputs), out, inputs, graph, checking.limits)
        _dispatch.execute(CHECK_NUMERICS, (out,), {"head": head, "tail": tail,
                                                   "counts": graph is None})
