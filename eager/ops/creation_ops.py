"""Tensors made from attributes: zeros, ones, fill, range, eye, one_hot, zeros_like, ones_like.

Ops without tensor inputs (zeros, ones, range, eye) are placed by dispatch like any other op: on
the innermost device scope's device, else the default device. Re-exported by `array_ops`.
"""

from __future__ import annotations

import builtins
import numbers

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError, NotFoundError
from ..tensor import Tensor
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor, host_number, is_host_number
from ..base.tensor_shape import UNKNOWN_SHAPE
from ..core.argument_conversion import as_tensor, check_dtype, unsupported_dtype
from ..core.dispatch import execute
from ..core.registry import get_op, op_error, register_op
from ..core.shapes import (TENSOR_SHAPE, UnknownDimensionError, known_elements, static_array,
                           static_int, static_ints, trace_time_value)
from .shape_arguments import read_dims, shape_argument, shape_elements, size_argument
from .slicing_ops import MAX_ELEMENTS, check_non_negative, check_shape, fmt_dims as _fmt

__all__ = ["zeros", "ones", "zeros_like", "ones_like", "fill", "range", "eye", "one_hot"]

ALL = _dt.ALL


def _dtype_arg(op_name, dtype):
    dtype = _dt.as_dtype(dtype)
    if dtype not in ALL:
        raise TypeError(f"{op_name}: cannot make a tensor of dtype {dtype.name}.")
    return dtype


def _shape_arg(op_name, shape):
    """zeros/ones convert `shape` with dtype int32 in TensorFlow: floats are a TypeError (and
    None, or an int beyond int64, the conversion's ValueError: `static_dims`). A list is read as
    a TensorShape first, so Python bools are sizes anywhere in it (TENSOR_SHAPE). Returns
    `shape_argument`'s pair: static dims, or a shape tensor known only at run time."""
    if isinstance(shape, (list, tuple)) and any(isinstance(d, float) for d in shape):
        raise TypeError(f"{op_name}: Cannot convert {shape!r} to EagerTensor of dtype int32.")
    return shape_argument(op_name, shape, "shape", scalar_is_vector=True,
                          conversion=TENSOR_SHAPE)


def _constant_infer(op_name):
    def infer(shape, dtype):
        check_shape(op_name, shape)
        return TensorSpec(shape, dtype)
    return infer


ZEROS = register_op("Zeros", lambda xp, shape, dtype: xp.zeros(shape, dtype=dtype.dtype),
                    _constant_infer("Zeros"), dtypes=ALL, differentiable=False)
ONES = register_op("Ones", lambda xp, shape, dtype: xp.ones(shape, dtype=dtype.dtype),
                   _constant_infer("Ones"), dtypes=ALL, differentiable=False)


def _filled(op, shape, dtype):
    """`op` (Zeros or Ones) of `shape`; for a shape known only when a traced function runs,
    Fill of that shape with the scalar `op` makes, as TensorFlow's zeros and ones build it."""
    dims, dynamic = _shape_arg(op.name, shape)
    dtype = _dtype_arg(op.name, dtype)
    if dynamic is None:
        return execute(op, (), {"shape": dims, "dtype": dtype})
    value = execute(op, (), {"shape": (), "dtype": dtype})
    return execute(FILL, (dynamic, value), {"dims": None})


def zeros(shape, dtype=_dt.float32, name=None):
    """≈ `tf.zeros`: a tensor of `shape` filled with zeros (False for bool), on the current
    device."""
    return _filled(ZEROS, shape, dtype)


def ones(shape, dtype=_dt.float32, name=None):
    """≈ `tf.ones`: a tensor of `shape` filled with ones (True for bool), on the current device."""
    return _filled(ONES, shape, dtype)


def _like_infer(x, dtype):
    return TensorSpec(x.shape, dtype)


def _zeros_like_kernel(xp, x, dtype):
    if dtype.is_string:  # TensorFlow's zero string is the empty one
        out = xp.empty(x.shape, dtype=object)
        out[...] = b""
        return out
    return xp.zeros(x.shape, dtype=dtype.dtype)


ZEROS_LIKE = register_op("ZerosLike", _zeros_like_kernel, _like_infer,
                         dtypes=_dt.ALL_AND_STRING, differentiable=False)
ONES_LIKE = register_op("OnesLike", lambda xp, x, dtype: xp.ones(x.shape, dtype=dtype.dtype),
                        _like_infer, dtypes=ALL, differentiable=False)


def zeros_like(input, dtype=None, name=None):  # noqa: A002
    """≈ `tf.zeros_like`: zeros with the shape of `input` and its dtype (or `dtype`)."""
    x = as_tensor(input)
    dtype = x.dtype if dtype is None else _dtype_arg("ZerosLike", dtype)
    return execute(ZEROS_LIKE, (x,), {"dtype": dtype})


def ones_like(input, dtype=None, name=None):  # noqa: A002
    """≈ `tf.ones_like`: ones with the shape of `input` and its dtype (or `dtype`)."""
    x = as_tensor(input)
    dtype = x.dtype if dtype is None else _dtype_arg("OnesLike", dtype)
    if x.dtype.is_string:  # TensorFlow's OnesLike has no string kernel
        raise unsupported_dtype(ONES_LIKE, x.dtype, [x])
    return execute(ONES_LIKE, (x,), {"dtype": dtype})


def _fill_infer(*inputs, dims):
    if dims is None:  # Fill(dims, value): the shape is known only when the op runs
        shape_tensor, value = inputs
        known = shape_elements("Fill", shape_tensor, "dims")
        if known is not None:
            check_shape("Fill", [d for d in known if d is not None], "dims")
        dims = UNKNOWN_SHAPE if known is None else known
    else:
        (value,) = inputs
        check_shape("Fill", dims, "dims")
    if value.shape.rank not in (0, None):
        raise op_error("Fill", f"value must be a scalar, got shape {_fmt(value.shape)}")
    return TensorSpec(dims, value.dtype)


def _fill_kernel(xp, *inputs, dims):
    if dims is None:
        shape_tensor, value = inputs
        dims = read_dims("Fill", shape_tensor, "dims")
        check_shape("Fill", dims, "dims")
    else:
        (value,) = inputs
    if value.ndim:
        raise op_error("Fill", f"value must be a scalar, got shape {_fmt(value.shape)}")
    out = xp.empty(dims, dtype=value.dtype)
    out[...] = xp.asarray(value)  # (a value taken on the host, `host_inputs`, is copied here)
    return out


#: Fill(value) of the `dims` attribute, or, with `dims=None`, Fill(dims, value) of a shape known
#: only when the op runs (TensorFlow's input order; `shape_arguments`).
FILL = register_op("Fill", _fill_kernel, _fill_infer, dtypes=_dt.ALL_AND_STRING,
                   host_inputs=(0,))  # dims, or the value when dims is an attribute


def fill(dims, value, name=None):
    """≈ `tf.fill`: a tensor of shape `dims` filled with the scalar `value` (whose dtype it
    takes: `fill([2], 9)` is int32, `fill([2], 9.)` float32). `value` is an input, so the
    result is differentiable with respect to it, as in TensorFlow. In a traced function `dims`
    may be known only when it runs."""
    dims, dynamic = shape_argument("Fill", dims, "dims")
    value = as_tensor(value)
    if dynamic is None:
        return execute(FILL, (value,), {"dims": dims})
    return execute(FILL, (dynamic, value), {"dims": None})


# TensorFlow's Range kernels, and its order for inferring a dtype from the arguments.
# TensorFlow's Range: CPU kernels for these; int8, int16 and the unsigned types past uint8 are
# declared without a CPU kernel (NotFoundError); anything else is InvalidArgumentError.
RANGE_DTYPES = frozenset({_dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64})
_RANGE_DECLARED = RANGE_DTYPES | {_dt.int8, _dt.int16, _dt.uint16, _dt.uint32, _dt.uint64}
_RANGE_ORDER = (_dt.int32, _dt.int64, _dt.float16, _dt.float32, _dt.float64)


def _tf_number(value, dtype) -> str:
    """A number as TensorFlow's messages print it: an integer as it is, a float with the
    fewest of 6 or 9 significant digits (15 or 17 for float64) that read back the same
    ("0.1", "-2", "inf", "nan")."""
    if dtype.is_integer:
        return str(int(value))
    t, digits = (np.float64, (15, 17)) if dtype is _dt.float64 else (np.float32, (6, 9))
    text = f"{value:.{digits[0]}g}"
    if np.isfinite(value) and t(float(text)) != t(value):
        text = f"{value:.{digits[1]}g}"
    return text


def _range_size(start, limit, delta, dtype):
    """The element count, computed and checked as TensorFlow's kernel does (in the output
    dtype, each comparison as written there, so a NaN fails it; a count past int64, as from an
    infinite or NaN bound, is its "Requires ((limit - start) / delta) <= ..." error)."""
    if delta == 0:
        raise op_error("Range", f"Requires delta != 0: {_tf_number(delta, dtype)}")
    if delta > 0:
        if not start <= limit:
            raise op_error("Range", f"Requires start <= limit when delta > 0: "
                                    f"{_tf_number(start, dtype)}/{_tf_number(limit, dtype)}")
    elif not start >= limit:
        raise op_error("Range", f"Requires start >= limit when delta < 0: "
                                f"{_tf_number(start, dtype)}/{_tf_number(limit, dtype)}")
    if dtype.is_integer:
        return (builtins.abs(limit - start) + builtins.abs(delta) - 1) // builtins.abs(delta)
    t = dtype.dtype.type
    with np.errstate(all="ignore"):  # inf - inf is nan here, whatever the user's settings
        size = np.ceil(np.abs((t(limit) - t(start)) / t(delta)))
    if not size <= MAX_ELEMENTS:
        raise op_error("Range", f"Requires ((limit - start) / delta) <= {MAX_ELEMENTS}")
    return int(size)


def _range_kernel(xp, *bounds, start=None, limit=None, delta=None, dtype):
    if bounds:  # Range(start, limit, delta): bounds known only when the op runs
        start, limit, delta = (b.item() for b in bounds)
    n = _range_size(start, limit, delta, dtype)
    t = dtype.dtype.type
    return xp.arange(n, dtype=dtype.dtype) * t(delta) + t(start)


def _range_infer(*bounds, start=None, limit=None, delta=None, dtype):
    if bounds:
        known = []
        for b, what in zip(bounds, ("start", "limit", "delta")):
            if b.shape.rank not in (0, None):
                raise op_error("Range", f"{what} must be a scalar, not shape {_fmt(b.shape)}")
            if b.dtype is not dtype:
                raise op_error("Range", f"{what} must be {dtype.name}, got {b.dtype.name}")
            value = known_elements(b)
            known.append(None if value is None else value[0])
        if None in known:
            return TensorSpec([None], dtype)
        start, limit, delta = known
    return TensorSpec([_range_size(start, limit, delta, dtype)], dtype)


#: Range of the `start`, `limit` and `delta` attributes, or, when they are left out, Range(start,
#: limit, delta) of scalar inputs of `dtype` known only when the op runs (`shape_arguments`).
RANGE = register_op("Range", _range_kernel, _range_infer, dtypes=RANGE_DTYPES,
                    differentiable=False, host_inputs=(0, 1, 2))


def _range_scalar(value, dtype, what):
    """(number or None, dtype, tensor) for one argument of `range`: tensors keep their dtype,
    Python numbers take TensorFlow's (int32 or int64, float32) unless `dtype` is given. The
    number is None for a symbolic tensor whose value is known only when the function runs.
    A Python or numpy number is converted on the host: made into a GPU's tensor, its value
    would be read back from the device (a wait for the GPU) by every `tf.range(5.0)`. (Other
    classes go through `as_tensor`, and so through their registered conversions.)"""
    if is_host_number(value):
        array = host_number(value, dtype)
        return array, _dt.as_dtype(array.dtype), value
    if not isinstance(value, Tensor):
        value = as_tensor(value, dtype)
    if value.shape.rank != 0:
        raise op_error("Range", f"{what} must be a scalar, not shape {_fmt(value.shape)}")
    if value.is_symbolic and trace_time_value(value) is None:
        if not (value.dtype.is_integer or value.dtype.is_floating):
            raise TypeError(f"Range: {what} must be a number, got dtype {value.dtype.name}.")
        return None, value.dtype, value
    return static_array("Range", value, what), value.dtype, value


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """≈ `tf.range`: `start, start + delta, ...` up to but excluding `limit`; `range(n)` counts
    from 0. The dtype is `dtype`, else the widest of the arguments' (ints give int32, any
    float gives float32). Unlike Python's range, an empty direction (start > limit with a
    positive delta) is an InvalidArgumentError, as in TensorFlow."""
    if limit is None:
        start, limit = 0, start
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
    args = [_range_scalar(v, dtype, what)
            for v, what in ((start, "start"), (limit, "limit"), (delta, "delta"))]
    if dtype is None:
        for _, d, _ in args:
            if d not in _RANGE_ORDER:
                raise TypeError(f"Range: cannot infer a dtype from a {d.name} argument; pass "
                                "dtype.")
        dtype = max((d for _, d, _ in args), key=_RANGE_ORDER.index)
    if dtype not in RANGE_DTYPES:
        raise op_error("Range", f"Range has no kernel for dtype {dtype.name} (supported: "
                                f"{', '.join(sorted(d.name for d in RANGE_DTYPES))})",
                       cls=NotFoundError if dtype in _RANGE_DECLARED else InvalidArgumentError)
    if any(v is None for v, _, _ in args):
        # A bound known only when the function runs: the bounds become the op's inputs.
        bounds = tuple(size_argument("Range", t if isinstance(t, Tensor) else as_tensor(t, d),
                                     dtype, what)
                       for (_, d, t), what in zip(args, ("start", "limit", "delta")))
        return execute(RANGE, bounds, {"dtype": dtype})
    cast = int if dtype.is_integer else float
    start, limit, delta = (cast(dtype.dtype.type(v)) for v, _, _ in args)
    return execute(RANGE, (), {"start": start, "limit": limit, "delta": delta, "dtype": dtype})


def _eye_infer(num_rows, num_columns, batch_shape, dtype):
    dims = batch_shape + (num_rows, num_columns)
    check_non_negative("Eye", dims, "shape")
    n = 1
    for d in dims:  # TensorFlow's words, from building the matrices' shape
        if n * d > MAX_ELEMENTS:
            raise op_error("Eye", f"Encountered overflow when multiplying {n} with {d}, "
                                  "result: -1")
        n *= d
    return TensorSpec(dims, dtype)


def _eye_kernel(xp, num_rows, num_columns, batch_shape, dtype):
    matrix = xp.eye(num_rows, num_columns, dtype=dtype.dtype)
    if not batch_shape:
        return matrix
    return xp.broadcast_to(matrix, batch_shape + matrix.shape).copy()


EYE = register_op("Eye", _eye_kernel, _eye_infer, dtypes=ALL, differentiable=False)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dt.float32, name=None):
    """≈ `tf.eye`: identity matrices of shape `batch_shape + [num_rows, num_columns]`
    (square by default). Sizes that are neither integers nor tensors are TensorFlow's
    TypeError."""
    columns = num_rows if num_columns is None else num_columns
    if not isinstance(num_rows, Tensor) and not isinstance(columns, Tensor):
        if not all(isinstance(v, (numbers.Integral, np.integer)) for v in (num_rows, columns)):
            raise TypeError(f"Arguments `num_rows` and `num_columns` must be positive integer "
                            f"values. Received: num_rows={num_rows}, num_columns={columns}")
    try:
        num_rows = static_int("Eye", num_rows, "num_rows")
        num_columns = num_rows if num_columns is None else static_int("Eye", num_columns,
                                                                      "num_columns")
        batch_shape = () if batch_shape is None else static_ints("Eye", batch_shape,
                                                                 "batch_shape")
    except UnknownDimensionError:
        return _eye_at_run_time(num_rows, columns, batch_shape, _dtype_arg("Eye", dtype))
    return execute(EYE, (), {"num_rows": num_rows, "num_columns": num_columns,
                             "batch_shape": batch_shape, "dtype": _dtype_arg("Eye", dtype)})


def _eye_at_run_time(num_rows, num_columns, batch_shape, dtype):
    """`eye` of sizes a traced function knows only when it runs: row index == column index,
    from two run-time ranges, broadcast over the batch shape."""
    op = get_op
    rows = execute(op("ExpandDims"), (range(num_rows, dtype=_dt.int32),), {"axis": 1})
    cols = execute(op("ExpandDims"), (range(num_columns, dtype=_dt.int32),), {"axis": 0})
    matrix = execute(op("Cast"), (execute(op("Equal"), (rows, cols), {"incompatible_shape_error":
                                                                      True}),),
                     {"dtype": dtype})
    if batch_shape is None:
        return matrix
    dims, dynamic = shape_argument("Eye", batch_shape, "batch_shape")
    if dynamic is None:
        dynamic = convert_to_tensor(np.array(dims, np.int32))
    shape = execute(op("ConcatV2"), (dynamic if dynamic.dtype is _dt.int32 else execute(
        op("Cast"), (dynamic,), {"dtype": _dt.int32}), execute(op("Shape"), (matrix,), {
            "out_type": _dt.int32})), {"axis": 0})
    return execute(op("BroadcastTo"), (matrix, shape), {"shape": None})


ONE_HOT_INDICES = frozenset({_dt.uint8, _dt.int8, _dt.int32, _dt.int64})


def _one_hot_infer(indices, on_value, off_value, depth, axis):
    for what, v in (("on_value", on_value), ("off_value", off_value)):
        if v.shape.rank not in (0, None):
            raise op_error("OneHot", f"{what} must be a scalar, but got: {_fmt(v.shape)}")
    if depth < 0:
        raise op_error("OneHot", f"depth must be non-negative, got: {depth}")
    rank = indices.shape.rank
    if rank is None:
        return TensorSpec(UNKNOWN_SHAPE, on_value.dtype)
    if not -1 <= axis <= rank:
        raise op_error("OneHot", f"Expected axis to be -1 or between [0, {rank + 1}).  But "
                                 f"received: {axis}")
    axis = rank if axis == -1 else axis
    return TensorSpec(indices.shape[:axis] + (depth,) + indices.shape[axis:], on_value.dtype)


def _one_hot_kernel(xp, indices, on_value, off_value, depth, axis):
    if depth < 0 or on_value.ndim or off_value.ndim:
        _one_hot_infer(TensorSpec(indices.shape, _dt.int32), TensorSpec(on_value.shape),
                       TensorSpec(off_value.shape), depth, axis)
    hot = xp.asarray(indices)[..., None] == xp.arange(depth)
    out = xp.where(hot, on_value, off_value).astype(on_value.dtype, copy=False)
    return out if axis == -1 else xp.moveaxis(out, -1, axis)


ONE_HOT = register_op("OneHot", _one_hot_kernel, _one_hot_infer, dtypes=ALL,
                      differentiable=False)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """≈ `tf.one_hot`: `on_value` where the new dimension's position equals the index,
    `off_value` elsewhere; indices outside [0, depth) give rows of `off_value`. The dtype is
    `dtype`, else `on_value`'s or `off_value`'s, else float32 (as TensorFlow infers it)."""
    indices = as_tensor(indices)
    check_dtype(ONE_HOT, indices, ONE_HOT_INDICES, "indices")
    dtype = None if dtype is None else _dt.as_dtype(dtype)
    on = None if on_value is None else convert_to_tensor(on_value, dtype_hint=dtype)
    off = None if off_value is None else convert_to_tensor(off_value, dtype_hint=dtype)
    if on is not None and off is not None and on.dtype is not off.dtype:
        raise TypeError(f"dtype {on.dtype.name} of on_value does not match dtype "
                        f"{off.dtype.name} of off_value")
    for what, v in (("on_value", on), ("off_value", off)):
        if v is not None and dtype is not None and v.dtype is not dtype:
            raise TypeError(f"dtype {v.dtype.name} of {what} does not match dtype parameter "
                            f"{dtype.name}")
    dtype = dtype or (on.dtype if on is not None else off.dtype if off is not None
                      else _dt.float32)
    on = as_tensor(1, dtype) if on is None else on
    off = as_tensor(0, dtype) if off is None else off
    axis = -1 if axis is None else static_int("OneHot", axis, "axis")
    return execute(ONE_HOT, (indices, on, off),
                   {"depth": static_int("OneHot", depth, "depth"), "axis": axis})
