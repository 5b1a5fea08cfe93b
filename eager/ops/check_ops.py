"""`eager.debugging`'s checks: `check_numerics`, `Assert` and the `assert_*` functions, with
TensorFlow 2's behaviour in each mode.

* Eagerly a failed check raises at once: TensorFlow's InvalidArgumentError with its eager
  wording ("Condition x == y did not hold." then the first differing indices and values), and
  the function returns None.
* Traced, a check whose answer the trace already knows (a rank, a static shape, a dtype) raises
  while tracing (ValueError/TypeError, TF's wording); the others add a stateful `Assert` node
  that runs with the function and raises TensorFlow's graph wording when it fails:
  "assertion failed: [Condition x == y did not hold element-wise:] [x (x:0) = ] [1 2 3] ...".

`check_numerics` is TensorFlow's `CheckNumerics` op (message ": Tensor had Inf values"); its
gradient passes the upstream gradient through the same check.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute
from ..core.registry import get_op, op_error, register_op
from ..core.specs import TensorSpec
from ..tensor import Tensor
from . import array_ops
from . import math_ops as _math
from .debug_ops import assert_that

__all__ = ["check_numerics", "Assert", "assert_equal", "assert_none_equal", "assert_less",
           "assert_less_equal", "assert_greater", "assert_greater_equal", "assert_near",
           "assert_positive", "assert_negative", "assert_non_negative", "assert_non_positive",
           "assert_rank", "assert_shapes", "assert_type", "assert_all_finite",
           "assert_proper_iterable", "is_numeric_tensor"]


# -----------------------------------------------------------------------------------------------
# check_numerics
# -----------------------------------------------------------------------------------------------

def _check_numerics_kernel(xp, x, message):
    if not bool(xp.isfinite(x).all()):
        has_inf, has_nan = bool(xp.isinf(x).any()), bool(xp.isnan(x).any())
        found = "Inf and NaN" if has_inf and has_nan else "Inf" if has_inf else "NaN"
        raise InvalidArgumentError(None, "CheckNumerics", f"{message} : Tensor had {found} "
                                                          f"values [Op:CheckNumerics]")
    return x


def _check_numerics_infer(x, message):
    if not x.dtype.is_floating:
        raise op_error("CheckNumerics", f"tensor must be a floating-point tensor, got "
                                        f"{x.dtype.name}")
    return TensorSpec(x.shape, x.dtype)


# Stateful, as TensorFlow's: a traced check nobody reads still runs with its function.
CHECK_NUMERICS = register_op("CheckNumerics", _check_numerics_kernel, _check_numerics_infer,
                             stateful=True, dtypes=_dt.FLOATING,
                             doc="Passes its input through; TensorFlow's InvalidArgumentError "
                                 "'<message> : Tensor had Inf values' if it holds inf or nan.")


@get_op("CheckNumerics").def_gradient
def _check_numerics_grad(forward, dy):
    message = ("Not a number (NaN) or infinity (Inf) values detected in gradient. "
               + forward.attrs["message"])
    return execute(CHECK_NUMERICS, (dy,), {"message": message})


def check_numerics(tensor, message, name=None):
    """≈ `tf.debugging.check_numerics`: `tensor` itself, or TensorFlow's InvalidArgumentError
    "<message> : Tensor had Inf values" (or "NaN", "Inf and NaN") when it holds any."""
    tensor = as_tensor(tensor)
    if not tensor.dtype.is_floating:
        raise TypeError(f"CheckNumerics: Value for attr 'T' of {tensor.dtype.name} is not in "
                        f"the list of allowed values: bfloat16, half, float, double")
    return execute(CHECK_NUMERICS, (tensor,), {"message": str(message)})


def assert_all_finite(x, message, name=None):
    """≈ `tf.debugging.assert_all_finite`: `check_numerics(x, message)`."""
    return check_numerics(x, message)


# -----------------------------------------------------------------------------------------------
# Assert and the comparison asserts
# -----------------------------------------------------------------------------------------------

def _symbolic(*tensors):
    return any(isinstance(t, Tensor) and t.is_symbolic for t in tensors)


def _host(t):
    return t.numpy()


def _label(t, fallback):
    """'x (x:0)' for a traced tensor (TensorFlow's graph name), else the fallback's."""
    try:
        return f"{fallback} ({t.name})"
    except AttributeError:
        return fallback


def _pretty(item, summarize):
    """TensorFlow's eager rendering of one datum of a failed assert."""
    if isinstance(item, Tensor):
        arr = item.numpy()
        if arr.ndim == 0:
            return str(arr)
        flat = arr.reshape(-1)
        shown = [str(v) for v in flat[:summarize]]
        if len(shown) < flat.size:
            shown.append("...")
        return str(shown)
    return str(item)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TensorFlow's name
    """≈ `tf.debugging.Assert`: raises InvalidArgumentError when the scalar bool `condition` is
    false, showing `data` (strings and tensors, each tensor's first `summarize` elements)."""
    summarize = 3 if summarize is None else int(summarize)
    condition = as_tensor(condition)
    data = list(data)
    if not _symbolic(condition, *data):
        if not bool(condition.numpy()):
            shown = []
            for d in data:
                if isinstance(d, (str, bytes)):
                    shown.append(repr(d.encode() if isinstance(d, str) else d))
                else:
                    flat = np.asarray(as_tensor(d).numpy()).reshape(-1)
                    shown.append(", ".join(str(v) for v in flat[:summarize]))
            raise InvalidArgumentError(None, "Assert", f"Expected '{condition!s}' to be true. "
                                                       f"Summarized data: {chr(10).join(shown)}")
        return None
    _graph_assert(condition, data, summarize)
    return None


def _graph_assert(condition, data, summarize):
    """An `Assert` node for TensorFlow's data list: the strings before the first tensor lead
    (the last of them labels that tensor), and a string before any later tensor labels it."""
    pending, lead, tensors, labels = [], (), [], []
    for d in data:
        if isinstance(d, (str, bytes)):
            pending.append(d.decode() if isinstance(d, bytes) else d)
            continue
        if not tensors:
            lead = tuple(pending[:-1])
        tensors.append(as_tensor(d))
        labels.append(pending[-1] if pending else None)
        pending = []
    if not tensors:
        lead = tuple(pending)
    assert_that(condition, lead, tuple(tensors), tuple(labels), summarize)


def _binary_assert(op_fn, symbol, x, y, message, summarize, data=None):
    """TensorFlow's `_binary_assert`: all(op_fn(x, y)), else an error showing the values."""
    x, y = as_tensor(x), as_tensor(y)
    if x.dtype != y.dtype and not _symbolic(x, y):
        y = _math.cast(y, x.dtype) if isinstance(y, Tensor) and y.shape.rank == 0 else y
    summarize = 3 if summarize is None else int(summarize)
    condition = _math.reduce_all(op_fn(x, y))
    if not _symbolic(condition):
        if bool(condition.numpy()):
            return None
        if data is not None:
            raise InvalidArgumentError(None, None, "\n".join(_pretty(d, summarize)
                                                             for d in data))
        xv, yv = _host(x), _host(y)
        lines = [] if message is None else [str(message)]
        lines.append(f"Condition x {symbol} y did not hold.")
        if xv.shape == yv.shape and xv.ndim:
            held = _host(op_fn(x, y))
            bad = np.argwhere(~held)[:summarize]
            lines += [f"Indices of first {len(bad)} different values:", str(bad),
                      "Corresponding x values:", str(xv[tuple(bad.T)]),
                      "Corresponding y values:", str(yv[tuple(bad.T)])]
        for label, v in (("x", xv), ("y", yv)):
            flat = v.reshape(-1)[:summarize]
            lines += [f"First {flat.size} elements of {label}:", str(flat)]
        raise InvalidArgumentError(None, None, "\n".join(lines))
    if data is not None:
        _graph_assert(condition, data, summarize)
        return None
    lead = (() if message is None else (str(message),)) + (
        f"Condition x {symbol} y did not hold element-wise:",)
    assert_that(condition, lead, (x, y), (f"{_label(x, 'x')} = ", f"{_label(y, 'y')} = "),
                summarize)
    return None


def assert_equal(x, y, message=None, summarize=None, name=None):
    """≈ `tf.debugging.assert_equal`: all(x == y) (broadcasting), else InvalidArgumentError."""
    return _binary_assert(_math.equal, "==", x, y, message, summarize)


def assert_none_equal(x, y, summarize=None, message=None, name=None):
    """≈ `tf.debugging.assert_none_equal`: all(x != y)."""
    return _binary_assert(_math.not_equal, "!=", x, y, message, summarize)


def assert_less(x, y, message=None, summarize=None, name=None):
    """≈ `tf.debugging.assert_less`: all(x < y)."""
    return _binary_assert(_math.less, "<", x, y, message, summarize)


def assert_less_equal(x, y, message=None, summarize=None, name=None):
    """≈ `tf.debugging.assert_less_equal`: all(x <= y)."""
    return _binary_assert(_math.less_equal, "<=", x, y, message, summarize)


def assert_greater(x, y, message=None, summarize=None, name=None):
    """≈ `tf.debugging.assert_greater`: all(x > y)."""
    return _binary_assert(_math.greater, ">", x, y, message, summarize)


def assert_greater_equal(x, y, message=None, summarize=None, name=None):
    """≈ `tf.debugging.assert_greater_equal`: all(x >= y)."""
    return _binary_assert(_math.greater_equal, ">=", x, y, message, summarize)


def _sign_assert(op_fn, text, x, message, summarize):
    """assert_positive and friends: TensorFlow words them as a comparison with zero."""
    x = as_tensor(x)
    zero = array_ops.zeros([], x.dtype)
    name = _label(x, "x") if _symbolic(x) else f"shape={x.shape} dtype={x.dtype.name}"
    name = name[len("x ("):-1] if name.startswith("x (") else name
    data = ["" if message is None else str(message),
            f"Condition x {text} did not hold element-wise:", f"x ({name}) = ", x]
    return _binary_assert(lambda a, b: op_fn(b, a), "", zero, x, None, summarize, data)


def assert_positive(x, message=None, summarize=None, name=None):
    """≈ `tf.debugging.assert_positive`: all(x > 0)."""
    return _sign_assert(_math.greater, "> 0", x, message, summarize)


def assert_negative(x, message=None, summarize=None, name=None):
    """≈ `tf.debugging.assert_negative`: all(x < 0)."""
    return _sign_assert(_math.less, "< 0", x, message, summarize)


def assert_non_negative(x, message=None, summarize=None, name=None):
    """≈ `tf.debugging.assert_non_negative`: all(x >= 0)."""
    return _sign_assert(_math.greater_equal, ">= 0", x, message, summarize)


def assert_non_positive(x, message=None, summarize=None, name=None):
    """≈ `tf.debugging.assert_non_positive`: all(x <= 0)."""
    return _sign_assert(_math.less_equal, "<= 0", x, message, summarize)


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """≈ `tf.debugging.assert_near`: all(|x - y| <= atol + rtol * |y|), with TensorFlow's
    default tolerances of 10 machine epsilons of the dtype."""
    x = as_tensor(x)
    y = as_tensor(y, dtype=x.dtype) if not isinstance(y, Tensor) else y
    eps = float(np.finfo(x.dtype.dtype).eps) if x.dtype.is_floating else 0.0
    rtol = as_tensor(10 * eps if rtol is None else rtol, dtype=x.dtype)
    atol = as_tensor(10 * eps if atol is None else atol, dtype=x.dtype)
    diff = _math.abs(_math.subtract(x, y))
    tol = _math.add(atol, _math.multiply(rtol, _math.abs(y)))
    condition = _math.reduce_all(_math.less_equal(diff, tol))
    data = ["" if message is None else str(message),
            f"x and y not equal to tolerance rtol = {rtol!s}, atol = {atol!s}",
            f"x (shape={x.shape} dtype={x.dtype.name}) = ", x,
            f"y (shape={y.shape} dtype={y.dtype.name}) = ", y]
    return Assert(condition, data, summarize=summarize)


# -----------------------------------------------------------------------------------------------
# Static checks: rank, shapes, dtype
# -----------------------------------------------------------------------------------------------

def _name_of(t):
    try:
        return t.name
    except AttributeError:
        return ""


def assert_rank(x, rank, message=None, name=None):
    """≈ `tf.debugging.assert_rank`: a ValueError while tracing (or at once eagerly) when the
    rank is known and wrong; a run-time check when it is not."""
    x = as_tensor(x)
    rank = int(rank.numpy() if isinstance(rank, Tensor) else rank)
    message = "" if message is None else f"{message}  "
    if x.shape.rank is not None:
        if x.shape.rank != rank:
            raise ValueError(f"{message}Tensor {_name_of(x)} must have rank {rank}.  Received "
                             f"rank {x.shape.rank}, shape {x.shape}")
        return None
    condition = _math.equal(array_ops.rank(x), rank)
    assert_that(condition, (f"{message}Tensor {_name_of(x)} must have rank", ),
                (array_ops.rank(x),), ("Received rank",))
    return None


def _describe(t):
    return t.name if _symbolic(t) else f"shape={t.shape} dtype={t.dtype.name}"


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """≈ `tf.debugging.assert_shapes`: each (tensor, spec) pair's dimensions agree with its spec,
    where an int is a size, a string a symbol that must have one size across all tensors, and
    "." any size. Checked statically where the shapes are known (ValueError, TF's wording),
    at run time otherwise."""
    items = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    message = "" if message is None else f"{message}  "
    sizes = {}  # symbol -> (size or a run-time size tensor, description of where it was set)
    for tensor, spec in items:
        tensor = as_tensor(tensor)
        spec = [spec] if isinstance(spec, (str, int)) and spec != "" and not (
            isinstance(spec, str) and len(spec) > 1) else list(spec)
        if tensor.shape.rank is not None and tensor.shape.rank != len(spec):
            raise ValueError(f"{message}Specified explicitly.  Tensor {_describe(tensor)} must "
                             f"have rank {len(spec)}.  Received rank {tensor.shape.rank}, "
                             f"shape {tensor.shape}")
        for i, want in enumerate(spec):
            if want in (".", None):
                continue
            got = tensor.shape[i] if tensor.shape.rank is not None else None
            where = f"Tensor {_describe(tensor)} dimension {i}"
            if isinstance(want, str):
                if want not in sizes:
                    sizes[want] = (got if got is not None else array_ops.shape(tensor)[i],
                                   f"Specified by tensor {_describe(tensor)} dimension {i}.")
                    continue
                target, origin = sizes[want]
            else:
                target, origin = int(want), "Specified explicitly."
            if got is not None and isinstance(target, int):
                if got != target:
                    raise ValueError(f"{message}{origin}  {where} must have size {target}.  "
                                     f"Received size {got}, shape {tensor.shape}")
                continue
            actual = got if got is not None else array_ops.shape(tensor)[i]
            assert_that(_math.equal(actual, target),
                        (f"{message}{origin}  {where} must have the specified size",),
                        (as_tensor(actual), as_tensor(target)), ("Received size", "Wanted"))
    return None


def assert_type(tensor, tf_type, message=None, name=None):
    """≈ `tf.debugging.assert_type`: a TypeError unless `tensor`'s dtype is `tf_type`."""
    dtype = _dt.as_dtype(tf_type)
    got = tensor.dtype if hasattr(tensor, "dtype") else as_tensor(tensor).dtype
    if got != dtype:
        prefix = "" if message is None else f"{message}, "
        raise TypeError(f"{prefix}tensor must be of type tf.{dtype.name}; got tf.{got.name}")
    return None


def assert_proper_iterable(values):
    """≈ `tf.debugging.assert_proper_iterable`: a TypeError for a tensor, an array or a string
    where an iterable of values is expected."""
    if isinstance(values, (Tensor, np.ndarray, str, bytes)):
        raise TypeError(f"Expected argument \"values\" to be a \"proper\" iterable.  Found: "
                        f"{type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f"Expected argument \"values\" to be iterable.  Found: {type(values)}")


def is_numeric_tensor(tensor):
    """≈ `tf.debugging.is_numeric_tensor`."""
    return isinstance(tensor, Tensor) and tensor.dtype in _NUMERIC


_NUMERIC = _dt.NUMERIC
