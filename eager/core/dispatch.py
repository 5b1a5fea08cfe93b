"""Dispatch: running an op record on tensors, in whichever mode this thread is in.

`execute(op, inputs, attrs)` is the one entry point every op goes through. With no interpreter
installed it runs the op eagerly and synchronously: choose the device, bring inputs there, run
the kernel, wrap the outputs. Tracing and asynchronous execution install an interpreter on the
thread state instead; active gradient tapes are told about every op, whichever mode ran it,
through the recorder autodiff installs at import (`set_recorder`).

The interface for interpreters and runners. The async executor, the graph runtime's compiled
programs and runners, constant folding and the semantics explorer run ops themselves (they have
already placed them, or run them on a worker thread), and they use these parts of the eager path
so that a kernel runs, fails and is typed the same way whoever runs it:

* `place(op, inputs, state, attrs)`: TensorFlow's eager placement (a resource input's device,
  else the innermost device scope, else the default device; soft placement; strings on the
  CPU).
* `run_kernel(op, inputs, attrs, device)`: the synchronous interpreter's core: inputs brought to
  `device` (pending ones waited for), the kernel run, a failure explained in the op's terms
  (`kernel_error`), outputs wrapped, inference verified when `check_inference` is on. A pure
  kernel's floating-point signal (inf or nan made an exception by the user's warning filters or
  `np.seterr`) is answered with its IEEE result (`eager.base.ieee`). It never places and never
  records on tapes.
* `wrap_output(value, device, op)`: an EagerTensor for one kernel output.
* `resolve_input(t, op)`: the EagerTensor behind an input that is not one (a pending tensor
  waits; a symbolic one is a TypeError naming the op).
* `kernel_error(op, inputs, attrs, exc, device)`, `verify_inference(op, inputs, attrs, outputs)`
  and `hooks` (`.record`, the tapes' recorder; `.check_inference`, the debug mode's switch;
  `.check_outputs`, numerics checking).

Skipping placement. While nothing but gradient tapes is open anywhere, an op whose operands
all live on the default device (a GPU's tensors on a machine with one) runs there at once, as
placement would decide (`FAST_PATH.placed_and_tapes`, `_on_default_device`); mixed-device
operands, resource ops and ops without a kernel there take the general path.

Skipping dispatch. Where dispatch would do nothing but run the kernel (`FAST_PATH`, see
`eager.core.context`), a few hot APIs skip it, through helpers kept here so that the knowledge
of "what dispatch would have done" stays in this module: `kernel_only()` and `run_bare` (an
optimizer's fused updates), and `run_bare_unary` (a whole-tensor reduction such as a loss's
`reduce_sum`, telling the tapes as `execute` would). The tensor operators' fast path lives with
the operators (`eager.tensor`), below this module.

Hot path: `execute` and `run_kernel` run for every op; keep them flat.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from ..base import dtypes as _dtypes
from ..base import profile_events as _profile_events
from ..base.ieee import FP_SIGNALS, quietly
from ..base.errors import InternalError, InvalidArgumentError, NotFoundError, OpError
from ..devices import registry as _devices
from ..devices.base import transfer as _transfer
from ..tensor import METAS, EagerTensor, Tensor, meta_for
from . import context as _context
from .registry import NO_ATTRS, describe_inputs, out_of_memory_error

__all__ = ["execute", "named", "place", "run_kernel", "wrap_output", "resolve_input",
           "kernel_error", "verify_inference", "check_inference", "hooks", "set_recorder",
           "kernel_only", "run_bare", "run_bare_unary", "eager_values", "set_output_checker"]

_per_thread = _context.per_thread
_FAST_PATH = _context.FAST_PATH
_config = _context.placement_config
_PROFILE = _profile_events.RECORDER  # `.active` while an eager.profiler trace runs
_STRING = _dtypes.string


class Hooks:
    """What other layers install into dispatch: `record(tapes, op, inputs, attrs, outputs)`,
    the gradient tapes' recorder (autodiff's, through `set_recorder`); `check_inference`, the
    debug mode's switch (`check_inference(True)`); and `check_outputs(op, inputs, outputs)`,
    called after every op off the fast paths while numerics checking is enabled on some thread
    (`set_output_checker`; the op library's `debug_ops` installs it)."""

    __slots__ = ("record", "check_inference", "check_outputs")

    def __init__(self):
        self.record = None
        self.check_inference = False
        self.check_outputs = None


hooks = Hooks()


def check_inference(enabled: bool) -> None:
    """Debug mode (the test suite turns it on): after every eagerly run op, compare the op's
    shape/dtype inference with the kernel's actual outputs and raise InternalError on any
    disagreement. Tracing and async dispatch trust inference, so this keeps it honest. The
    operators' fast path is disabled meanwhile so that every op is checked."""
    enabled = bool(enabled)
    if enabled == hooks.check_inference:
        return
    hooks.check_inference = enabled
    if enabled:
        _context.enter_slow_path()
    else:
        _context.leave_slow_path()


def verify_inference(op, inputs, attrs, outputs):
    """Raises InternalError unless `op`'s shape inference agrees with the `outputs` its kernel
    made from `inputs` (the check `check_inference(True)` runs after every eager op)."""
    try:
        inferred = op.infer(*inputs, **attrs)
    except Exception as exc:  # noqa: BLE001
        raise InternalError(None, op.name, f"{op.name}: inference raised {exc!r} although the "
                            f"kernel succeeded (inputs: {describe_inputs(inputs)}, attrs: "
                            f"{attrs})") from exc
    inferred = inferred if isinstance(inferred, tuple) else (inferred,)
    actual = outputs if isinstance(outputs, tuple) else (outputs,)
    if len(inferred) != len(actual):
        raise InternalError(None, op.name, f"{op.name}: inference gave {len(inferred)} outputs, "
                                           f"the kernel {len(actual)}")
    for spec, out in zip(inferred, actual):
        if spec.dtype is not out.dtype or not spec.shape.is_compatible_with(out.shape):
            raise InternalError(None, op.name,
                                f"{op.name}: inference says {spec.dtype.name}{list(spec.shape)} "
                                f"but the kernel made {out.dtype.name}{list(out.shape)} "
                                f"(inputs: {describe_inputs(inputs)}, attrs: {attrs})")


def set_recorder(record) -> None:
    """Installs `record(tapes, op, inputs, attrs, outputs)`, called for every op while a tape is
    active on the thread (autodiff installs it; dispatch never imports autodiff)."""
    hooks.record = record


def set_output_checker(check) -> None:
    """Installs `check(op, inputs, outputs)` (None removes it), called after every op that
    goes through `execute` off its fast paths, in every mode (its outputs are eager, pending or
    symbolic tensors). Whoever installs it holds a slow-path reason meanwhile
    (`context.enter_slow_path`), so that every op comes here."""
    hooks.check_outputs = check


def execute(op, inputs, attrs=NO_ATTRS):
    """Runs `op` on `inputs` (a tuple of Tensors) with `attrs`; returns a Tensor, or a tuple of
    Tensors for ops with several outputs."""
    if _FAST_PATH.kernel_only:
        # No thread has a tape, scope or interpreter, and there is one device: nothing to do
        # but run the kernel there.
        return run_kernel(op, inputs, attrs, _FAST_PATH.device)
    if _FAST_PATH.kernel_and_tapes:
        # Tapes, but nothing else, are open (in some thread): run the kernel there and tell
        # this thread's tapes, if any of them could follow an input.
        outputs = run_kernel(op, inputs, attrs, _FAST_PATH.device)
        tapes = _per_thread.state.tapes
        if tapes:
            hooks.record(tapes, op, inputs, attrs, outputs)
        return outputs
    if _FAST_PATH.placed_and_tapes:
        # Several devices, and nothing but tapes open: an op whose operands all live on the
        # default device runs there without placement (`_on_default_device`).
        device = _on_default_device(op, inputs, attrs)
        if device is not None:
            outputs = run_kernel(op, inputs, attrs, device)
            tapes = _per_thread.state.tapes
            if tapes:
                hooks.record(tapes, op, inputs, attrs, outputs)
            return outputs
    if _PROFILE.active:
        return _execute_profiled(op, inputs, attrs)
    return _execute_slow(op, inputs, attrs)


def _on_default_device(op, inputs, attrs):
    """The default device when `place` would choose it for `op` and every input already lives
    there, else None (the general path then places the op and copies what must move): `op`
    has a kernel there, no input is pending or symbolic (an op on a resource then runs where
    its resource lives: here), and, off the CPU, it neither reads nor makes strings. Asked only
    while `FAST_PATH.placed_and_tapes` holds (no scope, interpreter or placement logging
    anywhere). Hot path: every op on a GPU, variable reads and updates included."""
    device = _FAST_PATH.default
    if device.device_type not in op.device_types:
        return None
    for t in inputs:
        if t.__class__ is not EagerTensor or t._meta.device is not device:
            return None
    if attrs and device.device_type != "CPU" and attrs.get("dtype") is _STRING:
        return None  # strings live in host memory (TF's HostMemory)
    return device


def kernel_only() -> bool:
    """Whether ops need nothing from dispatch right now but their kernel run on the one host
    device: no tape, device scope, interpreter or placement logging in any thread, and one
    device (`FAST_PATH.kernel_only`). APIs that then skip dispatch (`run_bare`) ask once per
    call."""
    return _FAST_PATH.kernel_only


def run_bare(op, values, attrs=NO_ATTRS):
    """`op`'s kernel on raw `values` (arrays of the one host device, resource handles), as
    `execute` would run it while `kernel_only()` holds, without making tensors: returns what
    the kernel returns. Only call it after `kernel_only()` said True."""
    return op.kernel(_FAST_PATH.device.xp, *values, **attrs) if attrs else op.kernel(
        _FAST_PATH.device.xp, *values)


def run_bare_unary(op, x, attrs, kernel):
    """`op` with `attrs` on the eager tensor `x`, computed as `kernel(array)` without dispatch,
    or None when dispatch would do more than that (the caller then calls `execute`).

    For APIs whose op, on a floating or complex tensor, is `kernel` of its array and keeps its
    dtype and device (a whole-tensor `reduce_sum`: a loss). It applies when `x`'s TensorMeta
    says the fast path is open for its dtype on its device (`fast_inexact`: nothing but tapes
    anywhere), and tells this thread's tapes when `x` is followed, exactly as `execute` would:
    a test compares both paths' values, records and gradients. A kernel that raises (a
    floating-point signal: `eager.base.ieee`) also returns None, and `execute` gives the
    result. Hot path: the result is made inline (see `eager.tensor`).
    """
    meta = x._meta
    if not meta.fast_inexact:
        return None
    try:
        value = kernel(x._value)
    except Exception:  # noqa: BLE001 - `execute` gives the IEEE result or the op's error
        return None
    t = EagerTensor()
    t._value = value
    t._meta = meta  # the same dtype, on the same device
    t._tape_id = 0
    if x._tape_id and not _FAST_PATH.kernel_only:  # followed, and tapes exist somewhere
        tapes = _per_thread.state.tapes
        if tapes:
            hooks.record(tapes, op, (x,), attrs, t)
    return t


def named(result, name):
    """`result` (what an op's API function returns), with the op that made it named `name` when
    a graph is being built (TensorFlow's `name=` argument: "total" names the op "total", made
    unique as graph names are). Eagerly, names mean nothing and this returns at once. API
    functions call it only when given a name: `out if name is None else named(out, name)`."""
    if name:
        rename = getattr(_per_thread.state.interpreter, "name_output", None)
        if rename is not None:
            rename(result, name)
    return result


def _execute_slow(op, inputs, attrs):
    """The full path: place and run (or hand to the thread's interpreter), then tell tapes."""
    st = _per_thread.state
    interpreter = st.interpreter
    if interpreter is None:
        outputs = run_kernel(op, inputs, attrs, place(op, inputs, st, attrs))
    else:
        outputs = interpreter.execute(op, inputs, attrs)
    tapes = st.tapes
    if tapes:
        hooks.record(tapes, op, inputs, attrs, outputs)
    if hooks.check_outputs is not None:
        hooks.check_outputs(op, inputs, outputs)
    return outputs


def _execute_profiled(op, inputs, attrs):
    """`_execute_slow`, timed from entry to return (tape recording included) as a slice on this
    thread's host-dispatch lane; recorded even when the op fails. Kept out of `execute` so that
    not profiling costs one attribute test."""
    t0 = _profile_events.now_ns()
    try:
        return _execute_slow(op, inputs, attrs)
    finally:
        _profile_events.add_slice(f"host dispatch: {threading.current_thread().name}", op.name,
                                  t0, _profile_events.now_ns())


def place(op, inputs, st, attrs=NO_ATTRS):
    """TensorFlow's eager placement: a resource input's device, else the scope's, else the
    default device; soft placement moves ops without a kernel on the chosen device to the CPU,
    and ops on strings run on the CPU (`touches_strings`).
    With one device and nothing but gradient tapes open anywhere (`FAST_PATH.kernel_and_tapes`),
    every rule gives that device: the common case under a tape, answered at once."""
    if _FAST_PATH.kernel_and_tapes:
        return _FAST_PATH.device
    if op.resource_reads or op.resource_writes:
        index = (op.resource_reads or op.resource_writes)[0]
        device = inputs[index]._meta.device
    elif st.device_stack:
        device = st.device_stack[-1].device()
    else:
        device = _devices.default_device()
    if device.device_type not in op.device_types:
        # Only an explicitly requested device can make placement fail; an op with no kernel
        # on the default device quietly runs on the CPU, as in TensorFlow.
        if st.device_stack and not _config.soft_placement:
            raise NotFoundError(None, op.name,
                                f"{op.name}: no kernel for device {device.name} (kernels exist "
                                f"for {', '.join(sorted(op.device_types))}); enable soft "
                                f"placement or run it under eager.device('CPU:0'). "
                                f"[Op:{op.name}]")
        device = _devices.lookup("CPU:0")
    if device.device_type != "CPU" and touches_strings(inputs, attrs):
        device = _devices.lookup("CPU:0")  # strings live in host memory (TF's HostMemory)
    if _config.log_placement:
        print(f"Executing op {op.name} in device {device.full_name}", file=sys.stderr)
    return device


def touches_strings(inputs, attrs) -> bool:
    """Whether an op reads a string tensor or is asked to make strings (a `dtype` attribute):
    TensorFlow keeps strings in host memory, so such an op runs on the CPU whatever device was
    chosen. Asked only off the CPU."""
    for t in inputs:
        if t.dtype is _STRING:
            return True
    return attrs.get("dtype") is _STRING if attrs else False


def run_kernel(op, inputs, attrs, device):
    """Runs the kernel on `device` now. Hot path: one or two eager inputs already on the device
    (most ops) give their arrays without a loop, ops without attributes skip keyword
    unpacking, and a single output is wrapped inline."""
    n = len(inputs)
    if n == 1:
        a = inputs[0]
        if a.__class__ is EagerTensor and a._meta.device is device:
            arrays = (a._value,)
        else:
            arrays = _arrays_on(inputs, device, op)
    elif n == 2:
        a, b = inputs
        if (a.__class__ is EagerTensor and b.__class__ is EagerTensor
                and a._meta.device is device and b._meta.device is device):
            arrays = (a._value, b._value)
        else:
            arrays = _arrays_on(inputs, device, op)
    else:
        arrays = _arrays_on(inputs, device, op)
    try:
        if device.inline:
            out = op.kernel(device.xp, *arrays, **attrs) if attrs else op.kernel(device.xp,
                                                                                  *arrays)
        else:
            out = device.run(op, arrays, attrs, inputs)
    except OpError:
        raise
    except Exception as exc:  # noqa: BLE001 - an IEEE signal, or a failure to explain
        out = _after_kernel_exception(op, inputs, arrays, attrs, device, exc)
    if op.num_outputs == 1:
        t = EagerTensor()
        t._value = out
        t._tape_id = 0
        try:
            t._meta = METAS[device][out.dtype]
        except (KeyError, AttributeError):
            _special_output(t, out, device, op)
        outputs = t
    elif op.returns_tensors:
        outputs = tuple([_kept_output(o) if o.__class__ is EagerTensor else
                         wrap_output(o, device, op) for o in out])
    else:
        outputs = tuple([wrap_output(o, device, op) for o in out])
    if hooks.check_inference:
        verify_inference(op, inputs, attrs, outputs)
    return outputs


def _after_kernel_exception(op, inputs, arrays, attrs, device, exc):
    """What `run_kernel` makes of a kernel that raised `exc`: for a floating-point signal (the
    user's warning filters or `np.seterr` turned inf or nan into an exception) from a pure
    kernel, the kernel's IEEE result, computed again quietly (`eager.base.ieee`); for anything
    else, or from a stateful kernel (never run twice), the op's error. Off the hot path: only a
    kernel that raised gets here."""
    if isinstance(exc, FP_SIGNALS) and not op.stateful:
        try:
            if device.inline:
                return quietly(op.kernel, device.xp, *arrays, **attrs)
            return quietly(device.run, op, arrays, attrs, inputs)
        except OpError:
            raise
        except Exception as again:  # noqa: BLE001 - explained below like the first failure
            exc = again
    raise kernel_error(op, inputs, attrs, exc, device) from exc


def _arrays_on(inputs, device, op) -> list:
    """The inputs' arrays on `device`: pending tensors waited for, others transferred (for the
    few ops with host inputs or that keep their inputs' devices, `_arrays_for`)."""
    if op.host_inputs or op.keeps_input_devices:
        return _arrays_for(inputs, device, op)
    arrays = []
    for t in inputs:
        if t.__class__ is not EagerTensor:
            t = resolve_input(t, op)
        meta = t._meta
        if meta.device is device:
            arrays.append(t._value)
        else:
            arrays.append(_transfer(t._value, meta.device, device))
    return arrays


def _arrays_for(inputs, device, op) -> list:
    """`_arrays_on` for an op with host inputs (`op.host_inputs`: host arrays, as they are on a
    CPU) or that keeps its inputs' devices (`op.keeps_input_devices`: the tensors of those on
    other devices)."""
    arrays = []
    host = op.host_inputs
    keep = op.keeps_input_devices
    for k, t in enumerate(inputs):
        if t.__class__ is not EagerTensor:
            t = resolve_input(t, op)
        meta = t._meta
        if meta.device is device:
            arrays.append(t._value)
        elif keep:
            arrays.append(t)
        elif k in host:
            arrays.append(t._value if meta.device.inline else meta.device.to_host(t._value))
        else:
            arrays.append(_transfer(t._value, meta.device, device))
    return arrays


def wrap_output(value, device, op):
    """An EagerTensor for `value`, an output of `op`'s kernel on `device` (an array, or a value
    that names its own eager dtype: a TensorList, a resource handle). Hot: slots set inline."""
    t = EagerTensor()
    t._value = value
    t._tape_id = 0
    try:
        t._meta = METAS[device][value.dtype]
    except (KeyError, AttributeError):
        _special_output(t, value, device, op)
    return t


def _kept_output(tensor):
    """An output an op's kernel returned as a tensor (`OpDef.returns_tensors`): a new tensor
    of its value, on its device. New, because an op's outputs are never its inputs' objects
    (a loop that ran no iteration returns its inputs): tapes follow tensors by identity."""
    t = EagerTensor()
    t._value = tensor._value
    t._meta = tensor._meta
    t._tape_id = 0
    return t


def _special_output(t, value, device, op):
    """Types `t`, the tensor for a kernel output `value` that is not a numeric array: a string
    element (numpy gives a rank-0 pick of an object array as the bare `bytes`) becomes a rank-0
    string array; a TensorList or resource handle names its own eager dtype."""
    if value.__class__ is bytes:
        array = np.empty((), dtype=object)
        array[()] = value
        t._value = array
        t._meta = METAS[device][array.dtype]
        return
    t._meta = _special_meta(value, device, op)


def _special_meta(value, device, op):
    """A non-array value (a TensorList, a resource handle) names its own eager dtype."""
    dtype = getattr(value, "eager_dtype", None)
    if dtype is None:
        raise InternalError(None, op.name, f"{op.name}: kernel returned {type(value).__name__} "
                            f"{getattr(value, 'dtype', '')}, which is not a supported array.")
    return meta_for(dtype, device)


def resolve_input(t, op):
    """The EagerTensor for a non-eager tensor input of `op` (None: no op, a plain read): a
    pending one waits; a symbolic one is a TypeError, since it belongs to a graph being
    traced."""
    resolve = getattr(t, "_resolve", None)
    if resolve is not None:
        return resolve()
    who = "reading a tensor" if op is None else op.name
    if isinstance(t, Tensor):
        raise TypeError(f"{who}: an input is a symbolic tensor of a traced function "
                        f"({t!r}), used outside that function. Return it from the function "
                        "instead of keeping it.")
    raise TypeError(f"{who}: expected tensor inputs, got {type(t).__name__}.")


def kernel_error(op, inputs, attrs, exc, device=None):
    """The OpError for a failed kernel: the op's own inference error when it has one (it names
    the rule that was broken); TensorFlow's ResourceExhaustedError ("OOM when allocating
    tensor with shape[...] and type ... on <device>") when memory ran out (`device`: where the
    kernel ran, when known); else the kernel's message with the op and inputs."""
    specs = None
    try:
        specs = op.infer(*inputs, **attrs)
    except (OpError, TypeError, ValueError) as inferred:
        if isinstance(inferred, OpError):
            return inferred
        return InvalidArgumentError(None, op.name, f"{inferred} [Op:{op.name}]")
    except Exception:  # noqa: BLE001 - inference itself broke; report the kernel's error
        pass
    if _out_of_memory(exc):
        return _oom_error(op, exc, specs, device)
    return InvalidArgumentError(None, op.name, f"{op.name}: {type(exc).__name__}: {exc} "
                                               f"(inputs: {describe_inputs(inputs)}) "
                                               f"[Op:{op.name}]")


# numpy's ValueErrors for an allocation whose byte count (or one dimension) does not fit its
# index type: memory that cannot exist, TensorFlow's OOM as much as a failed malloc is.
_TOO_BIG = ("array is too big", "Maximum allowed size exceeded",
            "Maximum allowed dimension exceeded")


def _out_of_memory(exc) -> bool:
    return isinstance(exc, MemoryError) or (isinstance(exc, ValueError)
                                            and str(exc).startswith(_TOO_BIG))


def _oom_error(op, exc, specs, device):
    """TensorFlow's OOM error, for the allocation that failed: numpy's MemoryError carries its
    shape and dtype; else the op's largest output's."""
    shape, dtype = getattr(exc, "shape", None), getattr(exc, "dtype", None)
    if shape is None and specs is not None:
        outputs = specs if isinstance(specs, tuple) else (specs,)
        known = [s for s in outputs if s.shape.is_fully_defined()]
        if known:
            largest = max(known, key=lambda s: s.shape.num_elements())
            shape, dtype = tuple(largest.shape), largest.dtype
    return out_of_memory_error(op.name, shape, dtype, device)


def eager_values(tensors):
    """The arrays of EagerTensors (waiting for pending ones)."""
    return [t._value if t.__class__ is EagerTensor else resolve_input(t, None)._value
            for t in tensors]
