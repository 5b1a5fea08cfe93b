"""Converting an op's Python arguments to tensors, with TensorFlow's typing rules.

* Tensors keep their dtype; all inputs bound to one type parameter must agree, or the op fails:
  `InvalidArgumentError` eagerly, `TypeError` while tracing (TensorFlow does the same).
* Python and numpy values adopt the dtype of the op's tensor inputs (`x * 1.5` with float16 `x`
  is float16); a value that cannot be represented raises TypeError (`int_tensor * 1.5`), as
  TensorFlow's Python wrappers do when they convert with `dtype=`. TensorFlow 2.21 converts some
  ops' arguments differently, and so does `same_type` (verified against TF 2.21):

  - `add` and `matmul` (and `+`, `@`) convert the first argument by itself and the others with
    its dtype as a *hint*: a value that does not fit converts by its own rules and the op fails
    with InvalidArgumentError (`int_tensor + 1.5`, `add(3, 2.5)`). A Python value *before* the
    first tensor (`1.5 + int_tensor`, the reflected operator) is converted strictly (TypeError),
    as TensorFlow's reflected operators do. (So `add(1.5, int_tensor)` is a TypeError too, where
    TensorFlow's `add` converts 1.5 by itself and fails in AddV2: the reflected operators call
    the same function, and they are the common case.)
  - `tensordot` and `sigmoid_cross_entropy_with_logits` convert every argument by itself
    (`tensordot(float_tensor, [[1], [2]])` is an InvalidArgumentError, int32 against float32).
  - `clip_by_value` converts `t` by itself, then the bounds strictly with its dtype
    (`clip_by_value(1.5, int_tensor, 3)` is an InvalidArgumentError, `clip_by_value(int_tensor,
    0.5, 3)` a TypeError).
  - ops with one fixed input dtype (the logical ops: bool) convert every Python value with that
    dtype first (`logical_and(t, 1.5)` is a TypeError), then reject tensors of another dtype
    (InvalidArgumentError).

* A dtype outside the op's accepted set (`OpDef.dtypes`) is an `InvalidArgumentError` eagerly
  (TensorFlow: "Value for attr 'T' of int32 is not in the list of allowed values"), except for
  the dtypes the op declares in `OpDef.no_kernel_dtypes`: TensorFlow lists them but has no CPU
  kernel, which is a `NotFoundError`. While tracing (symbolic inputs) both are TypeError.
"""

from __future__ import annotations

import numpy as np

from ..base.errors import InvalidArgumentError, NotFoundError
from ..tensor import EagerTensor, Tensor
from .context import executing_eagerly
from .registry import describe_inputs
from .tensor_conversion import conversion_functions_for, convert_to_tensor

__all__ = ["is_tensorlike", "as_tensor", "same_type", "check_dtype", "dtype_error",
           "unsupported_dtype"]


def is_tensorlike(value) -> bool:
    """A tensor, or a value a registered conversion function turns into one (a Variable)."""
    return isinstance(value, Tensor) or bool(conversion_functions_for(value.__class__))


def as_tensor(value, dtype=None) -> Tensor:
    return value if isinstance(value, Tensor) and dtype is None else convert_to_tensor(value, dtype)


def _symbolic(tensors) -> bool:
    """Whether a dtype error is a graph's (a TypeError, as TensorFlow's graph building raises):
    a symbolic input, or a function being traced on this thread (where even a constant the
    traced code made, still an eager tensor here, is a graph constant in TensorFlow)."""
    return any(t.is_symbolic for t in tensors) or not executing_eagerly()


# How TensorFlow 2.21's Python wrapper of an op converts its non-tensor arguments (see the module
# doc); ops not named here convert them strictly with the tensors' dtype.
_HINT = "hint"                # first argument alone, the others with its dtype as a hint
_INDEPENDENT = "independent"  # every argument alone
_FIRST = "first"              # first argument alone, the others strictly with its dtype
_CONVERSION = {
    "AddV2": _HINT,           # math_ops.add / Tensor.__add__: convert_to_tensor(y, dtype_hint=)
    "MatMul": _HINT,          # math_ops.matmul: convert_to_tensor(b, dtype_hint=a.dtype)
    "Tensordot": _INDEPENDENT,
    "SigmoidCrossEntropyWithLogits": _INDEPENDENT,
    "ClipByValue": _FIRST,    # minimum(t, clip_value_max), then maximum(.., clip_value_min)
}


def same_type(op, *values, dtype_hint=None):
    """Converts `values` to tensors of one dtype (see module doc); checks it against `op.dtypes`.

    Returns a sequence of tensors.
    """
    # Hot path: every input already an EagerTensor of one accepted dtype.
    first = values[0]
    if first.__class__ is EagerTensor:
        dtype = first._meta.dtype
        for v in values:
            if v.__class__ is not EagerTensor or v._meta.dtype is not dtype:
                break
        else:
            if op.dtypes is None or dtype in op.dtypes:
                return values
    converted = _operands_read(values)
    if converted is not None:
        # Variables among tensors (`matmul(x, w)`): each read once, here; then as tensors
        # (the hot path above, or the rules below; nothing is left to read).
        return same_type(op, *converted, dtype_hint=dtype_hint)
    mode = _CONVERSION.get(op.name)
    if mode is None and op.dtypes is not None and len(op.dtypes) == 1:
        tensors = _convert_fixed(op, values, next(iter(op.dtypes)))
    elif mode is _HINT and (is_tensorlike(first)
                            or not any(is_tensorlike(v) for v in values)):
        tensors = _convert_in_order(op, values, dtype_hint, hint=True)
    elif mode is _INDEPENDENT:
        tensors = _convert_in_order(op, values, dtype_hint, hint=False)
    elif mode is _FIRST:
        tensors = _convert_first(op, values, dtype_hint)
    else:
        tensors = _convert_strict(op, values, dtype_hint)
    dtype = tensors[0].dtype
    if op.dtypes is not None and dtype not in op.dtypes:
        raise unsupported_dtype(op, dtype, tensors)
    return tensors


def _operands_read(values):
    """`values` with every object that has a registered conversion (a Variable) converted, as
    `convert_to_tensor` would; None when some value is neither (a Python or numpy value: the
    full conversion rules apply), or when nothing needed converting."""
    out = None
    for i, v in enumerate(values):
        if isinstance(v, Tensor):
            continue
        functions = conversion_functions_for(v.__class__)
        if not functions:
            return None
        t = convert_to_tensor(v)
        if out is None:
            out = list(values)
        out[i] = t
    return out


def _mismatch(op, i, expected, t, tensors, first):
    return dtype_error(op, f"cannot compute {op.name} as input #{i}(zero-based) was expected to "
                           f"be a {expected.name} tensor but is a {t.dtype.name} tensor",
                       [x for x in tensors if x is not None],
                       symbolic=_symbolic([first, t]))


def _convert_strict(op, values, dtype_hint):
    """Tensors first (they must agree); Python values then take their dtype (TypeError if they
    cannot); with no tensor, the first Python value fixes the dtype (with `dtype_hint`)."""
    tensors = [None] * len(values)
    dtype = None
    first = None
    for i, v in enumerate(values):
        if is_tensorlike(v):
            t = v if isinstance(v, Tensor) else convert_to_tensor(v)
            tensors[i] = t
            if dtype is None:
                dtype, first = t.dtype, t
            elif t.dtype is not dtype:
                raise _mismatch(op, i, dtype, t, tensors, first)
    for i, v in enumerate(values):
        if tensors[i] is None:
            if dtype is None:
                t = convert_to_tensor(v, dtype_hint=dtype_hint)
                dtype = t.dtype
            else:
                t = convert_to_tensor(v, dtype)
            tensors[i] = t
    return tensors


def _convert_hinted(value, dtype):
    """`value` with `dtype` if it fits, else with its own dtype (TensorFlow's `dtype_hint`).
    Only a kind mismatch (TypeError: 1.5 for int32) falls back; an out-of-range value (300 for
    int8) stays eager's ValueError."""
    try:
        return convert_to_tensor(value, dtype)
    except TypeError:
        return convert_to_tensor(value)


def _convert_in_order(op, values, dtype_hint, hint):
    """The first value converts by itself (with `dtype_hint`); each later non-tensor by itself
    too, or with the first's dtype as a hint; then every dtype must agree."""
    first = as_tensor(values[0]) if is_tensorlike(values[0]) else convert_to_tensor(
        values[0], dtype_hint=dtype_hint)
    dtype = first.dtype
    tensors = [first] + [None] * (len(values) - 1)
    for i in range(1, len(values)):
        v = values[i]
        if is_tensorlike(v):
            tensors[i] = as_tensor(v)
        else:
            tensors[i] = _convert_hinted(v, dtype) if hint else convert_to_tensor(v)
    for i in range(1, len(values)):
        if tensors[i].dtype is not dtype:
            raise _mismatch(op, i, dtype, tensors[i], tensors, first)
    return tensors


def _convert_first(op, values, dtype_hint):
    """The first value converts by itself; the others, last first (TensorFlow's clip_by_value
    applies the upper bound first), must be tensors of its dtype or Python values that fit it."""
    first = as_tensor(values[0]) if is_tensorlike(values[0]) else convert_to_tensor(
        values[0], dtype_hint=dtype_hint)
    dtype = first.dtype
    tensors = [first] + [None] * (len(values) - 1)
    for i in range(len(values) - 1, 0, -1):
        v = values[i]
        if is_tensorlike(v):
            t = as_tensor(v)
            if t.dtype is not dtype:
                tensors[i] = t
                raise _mismatch(op, i, dtype, t, tensors, first)
        else:
            t = convert_to_tensor(v, dtype)
        tensors[i] = t
    return tensors


def _convert_fixed(op, values, dtype):
    """An op whose input has one fixed dtype (TensorFlow: no type attr, e.g. LogicalAnd's bool):
    every Python value converts with it (TypeError if it cannot), then tensors of another dtype
    are rejected (InvalidArgumentError), then numpy values convert with it. (TensorFlow
    force-casts numpy values, so only eager's stricter rule can fail there: it comes last.)"""
    tensors = [None] * len(values)
    for i, v in enumerate(values):
        if is_tensorlike(v):
            tensors[i] = as_tensor(v)
        elif not isinstance(v, (np.ndarray, np.generic)):
            tensors[i] = convert_to_tensor(v, dtype)
    for i, t in enumerate(tensors):
        if t is not None and t.dtype is not dtype:
            raise _mismatch(op, i, dtype, t, tensors, t)
    for i, v in enumerate(values):
        if tensors[i] is None:
            tensors[i] = convert_to_tensor(v, dtype)
    return tensors


def check_dtype(op, tensor, allowed, what="input"):
    """Raises unless `tensor.dtype` is in `allowed`."""
    if tensor.dtype not in allowed:
        raise unsupported_dtype(op, tensor.dtype, [tensor], allowed, what)


def unsupported_dtype(op, dtype, tensors, allowed=None, what="input"):
    """The error for an op input of a dtype outside `allowed` (default: `op.dtypes`):
    NotFoundError for the op's main input dtypes in `op.no_kernel_dtypes` (TensorFlow declares
    them but has no CPU kernel), else InvalidArgumentError; TypeError while tracing."""
    allowed = op.dtypes if allowed is None else allowed
    names = ", ".join(sorted(d.name for d in allowed))
    inputs = describe_inputs(tensors)
    no_kernel = what == "input" and dtype in op.no_kernel_dtypes
    if no_kernel:
        message = (f"{op.name}: could not find a CPU kernel for {what} dtype {dtype.name} "
                   f"(kernels exist for: {names}); cast with eager.cast first")
    elif len(allowed) == 1:  # a fixed input dtype (LogicalNot, Any): TensorFlow's wording
        message = (f"{op.name}: {what} dtype {dtype.name} is not allowed: it was expected to be "
                   f"a {names} tensor but is a {dtype.name} tensor; cast with eager.cast first")
    else:
        message = (f"{op.name}: {what} dtype {dtype.name} is not in the list of allowed "
                   f"values: {names}; cast with eager.cast first")
    if _symbolic(tensors):
        return TypeError(f"{message}. (inputs: {inputs})")
    cls = NotFoundError if no_kernel else InvalidArgumentError
    return cls(None, op.name, f"{message}. (inputs: {inputs}) [Op:{op.name}]")


def dtype_error(op, message, tensors, symbolic=False):
    text = f"{message} (inputs: {describe_inputs(tensors)})"
    if symbolic:
        return TypeError(text)
    return InvalidArgumentError(None, op.name, f"{text} [Op:{op.name}]")
