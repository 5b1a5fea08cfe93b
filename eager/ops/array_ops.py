"""Array manipulation: shapes (reshape, squeeze, expand_dims, transpose, shape/size/rank),
joining and splitting (concat, stack, unstack, split, tile, broadcast_to, pad), identity.

Two neighbours hold the rest of the family and are re-exported here, so that `eager.<name>` and
`Tensor.__getitem__` find everything in one place: `slicing_ops` (slice, strided_slice, gather,
gather_nd, scatter_nd, getitem) and `creation_ops` (zeros, ones, fill, range, eye, one_hot, ...).
This module also teaches `convert_to_tensor` to densify `IndexedSlices`.

Kernels may return views of their inputs: tensors are immutable, and a view keeps its base
alive, so a variable's buffer that is still viewed is seen as shared and copied before a write.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..base import dtypes as _dt
from ..tensor import IndexedSlices, Tensor
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from ..core.argument_conversion import as_tensor, same_type
from ..core.composite import CompositeTensor, dispatch_api
from .math_ops import cast
from .creation_ops import eye, fill, one_hot, ones, ones_like, zeros, zeros_like
from .creation_ops import range  # noqa: A004 - TensorFlow's name (re-exported)
from ..core.dispatch import execute, named
from .padding_ops import pad
from ..core.registry import op_error, register_op
from ..core.shapes import (UnknownDimensionError, broadcast_shapes, check_bools_in_dims,
                           normalize_axis, static_int, static_ints)
from .slicing_ops import MAX_ELEMENTS, check_non_negative, fmt_dims as _fmt, prod as _prod
from .slicing_ops import gather, gather_nd, getitem, scatter_nd, strided_slice
from .shape_arguments import read_dims, shape_argument, shape_elements
from .slicing_ops import slice  # noqa: A004 - TensorFlow's name (re-exported)

__all__ = [
    "reshape", "squeeze", "expand_dims", "concat", "stack", "unstack", "split", "tile",
    "broadcast_to", "gather", "gather_nd", "scatter_nd", "slice", "strided_slice", "pad",
    "one_hot", "zeros", "ones", "zeros_like", "ones_like", "fill", "range", "eye", "identity",
    "shape", "size", "rank", "transpose", "stop_gradient", "getitem",
]

ALL = _dt.ALL


def _same(x):
    return TensorSpec(x.shape, x.dtype)


def _spec(array) -> TensorSpec:
    """The spec of a kernel's input array, for kernels that validate with their op's inference
    (where numpy would be more lenient than TensorFlow)."""
    return TensorSpec(array.shape, _dt.BY_NUMPY[array.dtype])


# -----------------------------------------------------------------------------------------------
# Shapes: reshape, squeeze, expand_dims, transpose
# -----------------------------------------------------------------------------------------------

def _reshape_target(shape, requested):
    """The output dims of reshaping `shape` to `requested` (one -1 allowed), TensorFlow's errors
    for impossible requests; None dims where the input's are unknown."""
    _check_requested(requested)
    unknown = [i for i, d in enumerate(requested) if d == -1]
    known = _prod(d for d in requested if d != -1)
    if known > MAX_ELEMENTS:
        raise op_error("Reshape", f"Shape [{', '.join(str(d) for d in requested)}] has too many "
                                  "elements")
    n = shape.num_elements()
    if n is None:
        return tuple(None if d == -1 else d for d in requested)
    if unknown:
        # TensorFlow's rule: when the request has a zero dimension, the input's zero dimensions
        # are left out of the count the -1 is inferred from ([0, 3] -> [-1, 0] gives [3, 0]).
        has_zero = 0 in requested
        nonzero = _prod(d for d in requested if d > 0)
        counted = _prod(d for d in shape if d > 0 or not has_zero)
        missing = counted // nonzero
        target = tuple(missing if d == -1 else d for d in requested)
        if (0 in shape and has_zero) or nonzero * missing == counted:
            if _prod(target) == n:
                return target
            problem = (f"Input to reshape is a tensor with {n} values, but the requested shape "
                       f"has {_prod(target)}")
        else:
            problem = (f"Input to reshape is a tensor with {n} values, but the requested shape "
                       f"requires a multiple of {nonzero}")
    elif n != known:
        problem = (f"Input to reshape is a tensor with {n} values, but the requested shape has "
                   f"{known}")
    else:
        return requested
    raise op_error("Reshape", f"{problem} (input shape {_fmt(shape)}, requested shape "
                              f"{_fmt(requested)})")


def _reshape_infer(x, dims=None, shape=None):
    if shape is None:  # the shape is the input `dims`, read when the op runs
        known = shape_elements("Reshape", dims)
        if known is None:
            return TensorSpec(UNKNOWN_SHAPE, x.dtype)
        if None in known:
            # TensorFlow's inference: the sizes known now, and -1 unknown beside unknown sizes.
            _check_requested([0 if d is None else d for d in known])
            return TensorSpec([None if d is None or d == -1 else d for d in known], x.dtype)
        shape = known
    if x.shape.rank is None:
        return TensorSpec([None if d == -1 else d for d in shape], x.dtype)
    return TensorSpec(_reshape_target(x.shape, shape), x.dtype)


def _check_requested(requested):
    """TensorFlow's errors for sizes no input could have: two -1s, a size below -1."""
    unknown = [i for i, d in enumerate(requested) if d == -1]
    if len(unknown) > 1:
        raise op_error("Reshape", f"Only one input size may be -1, not both {unknown[0]} and "
                                  f"{unknown[1]}")
    for i, d in enumerate(requested):
        if d < -1:
            raise op_error("Reshape", f"Size {i} must be non-negative, not {d}")


def _reshape_kernel(xp, x, dims=None, shape=None):
    # numpy's reshape is as strict as TensorFlow's for the common cases (on failure dispatch
    # asks the inference for TensorFlow's message); sizes below -1 (which numpy takes as -1) and
    # a -1 beside zero sizes follow TensorFlow's rules in _reshape_target.
    if shape is None:  # the shape is the input `dims` (`shape_arguments`)
        shape = read_dims("Reshape", dims)
        _check_requested(shape)
        if x.size and min(shape, default=0) >= -1:
            try:
                return xp.reshape(x, shape)
            except ValueError:  # TensorFlow's message (inference cannot see run-time values)
                _reshape_target(TensorShape(x.shape), shape)
                raise
    if x.size == 0 or min(shape, default=0) < -1:
        shape = _reshape_target(TensorShape(x.shape), shape)
    return xp.reshape(x, shape)


#: Reshape(x) to the `shape` attribute, or, with `shape=None`, Reshape(x, dims) to a shape
#: known only when the op runs (`shape_arguments`).
RESHAPE = register_op("Reshape", _reshape_kernel, _reshape_infer, dtypes=_dt.ALL_AND_STRING,
                      host_inputs=(1,))


def reshape(tensor, shape, name=None):
    """≈ `tf.reshape`: the same elements in row-major order with a new shape; one dimension may
    be -1 (inferred). A size mismatch raises InvalidArgumentError naming both shapes. In a
    traced function the shape may be known only when it runs (`[tf.shape(x)[0], -1]`)."""
    shape, dims = shape_argument("Reshape", shape, "shape")
    x = as_tensor(tensor)
    if dims is None:
        out = execute(RESHAPE, (x,), {"shape": shape})
    else:
        out = execute(RESHAPE, (x, dims), {"shape": None})
    return out if name is None else named(out, name)


def _squeeze_dims(shape, axis):
    if shape.rank is None:
        return None
    if axis is None:
        if None in shape:
            return None  # which unknown dims are 1 is not known
        return tuple(d for d in shape if d != 1)
    drop = set()
    for a in axis:
        if not -shape.rank <= a < max(shape.rank, 1) or shape.rank == 0:
            raise op_error("Squeeze", f"Tried to squeeze dim index {a} for tensor with "
                                      f"{shape.rank} dimensions.")
        a %= shape.rank
        if shape[a] not in (1, None):
            raise op_error("Squeeze", f"Can not squeeze dim[{a}], expected a dimension of 1, "
                                      f"got {shape[a]}")
        drop.add(a)
    return tuple(d for i, d in enumerate(shape) if i not in drop)


def _squeeze_infer(x, axis):
    dims = _squeeze_dims(x.shape, axis)
    return TensorSpec(UNKNOWN_SHAPE if dims is None else dims, x.dtype)


def _squeeze_kernel(xp, x, axis):
    if axis is None:
        return xp.squeeze(x)
    return xp.reshape(x, _squeeze_dims(TensorShape(x.shape), axis))


SQUEEZE = register_op("Squeeze", _squeeze_kernel, _squeeze_infer, dtypes=_dt.ALL_AND_STRING)


def squeeze(input, axis=None, name=None):  # noqa: A002 - TensorFlow's argument name
    """≈ `tf.squeeze`: removes dimensions of size 1 (all of them, or those in `axis`, which must
    have size 1)."""
    x = as_tensor(input)
    axis = None if axis is None else static_ints("Squeeze", axis, "axis")
    return execute(SQUEEZE, (x,), {"axis": axis})


def _expand_infer(x, axis):
    rank = x.shape.rank
    if rank is None:
        return TensorSpec(UNKNOWN_SHAPE, x.dtype)
    if not -rank - 1 <= axis <= rank:
        raise op_error("ExpandDims", f"Tried to expand dim index {axis} for tensor with {rank} "
                                     "dimensions.")
    axis %= rank + 1
    return TensorSpec(x.shape[:axis] + (1,) + x.shape[axis:], x.dtype)


def _expand_kernel(xp, x, axis):
    at = axis + x.ndim + 1 if axis < 0 else axis
    if not 0 <= at <= x.ndim:
        _expand_infer(_spec(x), axis)  # raises TensorFlow's error
    return xp.reshape(x, x.shape[:at] + (1,) + x.shape[at:])


EXPAND_DIMS = register_op("ExpandDims", _expand_kernel, _expand_infer, dtypes=_dt.ALL_AND_STRING)


def expand_dims(input, axis, name=None):  # noqa: A002
    """≈ `tf.expand_dims`: inserts a dimension of size 1 at `axis` (in [-rank-1, rank]); as in
    TensorFlow, `axis` may also be a one-element list or tensor."""
    x = as_tensor(input)
    if axis is None:
        raise ValueError("ExpandDims: `axis` must be an int, got None.")
    if not isinstance(axis, (int, np.integer)):
        axes = static_ints("ExpandDims", axis, "axis") if not isinstance(axis, (list, tuple)) \
            else static_ints("ExpandDims", np.asarray(axis).reshape(-1), "axis")
        if len(axes) != 1:
            raise op_error("ExpandDims", f"'dim' must be a tensor with a single value, got "
                                         f"{axis!r}")
        axis = axes[0]
    return execute(EXPAND_DIMS, (x,), {"axis": static_int("ExpandDims", axis, "axis")})


def _transpose_infer(x, perm):
    rank = x.shape.rank
    if rank is None:
        return TensorSpec([None] * len(perm), x.dtype)
    if len(perm) != rank:
        raise op_error("Transpose", f"transpose expects a vector of size {rank}. But input(1) is "
                                    f"a vector of size {len(perm)}")
    seen = set()
    for p in perm:
        if not 0 <= p < rank:
            raise op_error("Transpose", f"{p} is out of range [0 .. {rank})")
        if p in seen:
            raise op_error("Transpose", f"{p} is duplicated in perm")
        seen.add(p)
    return TensorSpec([x.shape[p] for p in perm], x.dtype)


def _transpose_kernel(xp, x, perm):
    if sorted(perm) != list(builtins.range(x.ndim)):  # numpy would accept negative axes
        _transpose_infer(_spec(x), perm)
    return xp.transpose(x, perm)


TRANSPOSE = register_op("Transpose", _transpose_kernel, _transpose_infer, dtypes=_dt.ALL_AND_STRING)
CONJUGATE_TRANSPOSE = register_op("ConjugateTranspose",
                                  lambda xp, x, perm: xp.conj(_transpose_kernel(xp, x, perm)),
                                  _transpose_infer, dtypes=_dt.COMPLEX)


def transpose(a, perm=None, conjugate=False, name="transpose"):
    """≈ `tf.transpose`: permutes dimensions (`perm` defaults to reversing them);
    `conjugate=True` also conjugates complex values."""
    x = as_tensor(a)
    if perm is None:
        rank = x.shape.rank
        if rank is None:
            raise ValueError("transpose: the default perm needs the input's rank, which is "
                             "unknown; pass perm.")
        perm = tuple(builtins.range(rank - 1, -1, -1))
    else:
        perm = static_ints("Transpose", perm, "perm")
        rank = x.shape.rank
        if rank is not None:  # as TensorFlow, negative entries count from the end
            perm = tuple(p + rank if -rank <= p < 0 else p for p in perm)
    op = CONJUGATE_TRANSPOSE if conjugate and x.dtype.is_complex else TRANSPOSE
    return execute(op, (x,), {"perm": perm})


# -----------------------------------------------------------------------------------------------
# Identity, stop_gradient, shape, size, rank
# -----------------------------------------------------------------------------------------------

IDENTITY = register_op("Identity", lambda xp, x: x, _same)
STOP_GRADIENT = register_op("StopGradient", lambda xp, x: x, _same, differentiable=False)


def identity(input, name=None):  # noqa: A002
    """≈ `tf.identity`: the same value. No copy on the same device; under a device scope the
    result lives on that device (dispatch copies the input there)."""
    out = execute(IDENTITY, (as_tensor(input),))
    return out if name is None else named(out, name)


def stop_gradient(input, name=None):  # noqa: A002
    """≈ `tf.stop_gradient`: the same value, through which no gradient flows."""
    return execute(STOP_GRADIENT, (as_tensor(input),))


def _out_type(op_name, out_type):
    out_type = _dt.int32 if out_type is None else _dt.as_dtype(out_type)
    if out_type not in (_dt.int32, _dt.int64):  # TF: attr out_type not in its list
        raise op_error(op_name, f"out_type must be int32 or int64, got {out_type.name}")
    return out_type


SHAPE = register_op(
    "Shape", lambda xp, x, out_type: xp.asarray(x.shape, dtype=out_type.dtype),
    lambda x, out_type: TensorSpec([x.shape.rank], out_type), differentiable=False)
SIZE = register_op(
    "Size", lambda xp, x, out_type: xp.asarray(_prod(x.shape), dtype=out_type.dtype),
    lambda x, out_type: TensorSpec([], out_type), differentiable=False)
RANK = register_op("Rank", lambda xp, x: xp.asarray(x.ndim, dtype=np.int32),
                   lambda x: TensorSpec([], _dt.int32), differentiable=False)


def shape(input, out_type=None, name=None):  # noqa: A002
    """≈ `tf.shape`: the dynamic shape as a 1-D int32 (or `out_type`) tensor."""
    return execute(SHAPE, (as_tensor(input),), {"out_type": _out_type("Shape", out_type)})


def size(input, out_type=None, name=None):  # noqa: A002
    """≈ `tf.size`: the number of elements as an int32 (or `out_type`) scalar. As in TensorFlow,
    any dtype `out_type` works (the count is cast: True for a non-empty bool)."""
    x = as_tensor(input)
    out = _dt.int32 if out_type is None else _dt.as_dtype(out_type)
    if out not in (_dt.int32, _dt.int64) and out in ALL:
        return cast(execute(SIZE, (x,), {"out_type": _dt.int64}), out)
    return execute(SIZE, (x,), {"out_type": _out_type("Size", out_type)})


def rank(input, name=None):  # noqa: A002
    """≈ `tf.rank`: the number of dimensions as an int32 scalar."""
    return execute(RANK, (as_tensor(input),))


# -----------------------------------------------------------------------------------------------
# Joining and splitting: concat, stack, unstack, split
# -----------------------------------------------------------------------------------------------

def _concat_infer(*values, axis):
    shapes = [v.shape for v in values]
    known = [s for s in shapes if s.rank is not None]
    if not known:
        return TensorSpec(UNKNOWN_SHAPE, values[0].dtype)
    rank = known[0].rank
    if rank == 0:
        raise op_error("ConcatV2", "Can't concatenate scalars (use tf.stack instead)")
    if not -rank <= axis < rank:
        raise op_error("ConcatV2", f"ConcatOp : Expected concatenating dimensions in the range "
                                   f"[{-rank}, {rank}), but got {axis}")
    axis %= rank
    out = list(known[0])
    out[axis] = 0
    for i, s in enumerate(shapes):
        if s.rank is None:
            out[axis] = None
            continue
        if s.rank != rank:
            raise op_error("ConcatV2", f"ConcatOp : Ranks of all input tensors should match: "
                                       f"shape[0] = {_fmt(known[0])} vs. shape[{i}] = {_fmt(s)}")
        for j, d in enumerate(s):
            if j == axis:
                out[j] = None if d is None or out[j] is None else out[j] + d
            elif out[j] is None:
                out[j] = d
            elif d is not None and d != out[j]:
                raise op_error("ConcatV2", f"ConcatOp : Dimension {j} in both shapes must be "
                                           f"equal: shape[0] = {_fmt(known[0])} vs. shape[{i}] "
                                           f"= {_fmt(s)}")
    return TensorSpec(out, values[0].dtype)


CONCAT = register_op("ConcatV2", lambda xp, *values, axis: xp.concatenate(values, axis=axis),
                     _concat_infer, dtypes=_dt.ALL_AND_STRING)


def _first_composite(values):
    """The first ragged/sparse value of a list given to concat or stack, or None."""
    if isinstance(values, (list, tuple)):
        for v in values:
            if isinstance(v, CompositeTensor):
                return v
    return None


def _tensor_list(op, values, what):
    if isinstance(values, Tensor):
        values = [values]
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"{op.name}: {what} must be a list or tuple of tensors, got "
                        f"{type(values).__name__}.")
    if not values:  # TensorFlow: no kernel for N=0
        raise op_error(op.name, f"{what} must hold at least one tensor")
    return same_type(op, *values)


def concat(values, axis, name="concat"):
    """≈ `tf.concat`: joins tensors along an existing dimension `axis`."""
    try:
        values = _tensor_list(CONCAT, values, "values")
    except (TypeError, ValueError):
        composite = _first_composite(values)  # ragged (eager.core.composite), checked only
        if composite is not None:             # when conversion fails: no cost otherwise
            return dispatch_api("concat", composite, values, axis, name)
        raise
    axis = static_int("ConcatV2", axis, "axis")
    if len(values) == 1:
        return identity(values[0])  # as TensorFlow: no check of axis for a single value
    return execute(CONCAT, tuple(values), {"axis": axis})


def _stack_infer(*values, axis):
    merged = values[0].shape
    for i, v in enumerate(values):
        if not merged.is_compatible_with(v.shape):
            raise op_error("Pack", f"Shapes of all inputs must match: values[0].shape = "
                                   f"{_fmt(values[0].shape)} != values[{i}].shape = "
                                   f"{_fmt(v.shape)}")
        merged = merged.merge_with(v.shape)
    if merged.rank is None:
        return TensorSpec(UNKNOWN_SHAPE, values[0].dtype)
    axis %= merged.rank + 1
    return TensorSpec(merged[:axis] + (len(values),) + merged[axis:], values[0].dtype)


PACK = register_op("Pack", lambda xp, *values, axis: xp.stack(values, axis=axis), _stack_infer,
                   dtypes=_dt.ALL_AND_STRING)


def _holds_tensor(values) -> bool:
    return any(isinstance(v, Tensor) or (isinstance(v, (list, tuple)) and _holds_tensor(v))
               for v in values)


def stack(values, axis=0, name="stack"):
    """≈ `tf.stack`: joins equally shaped tensors along a new dimension `axis`. As in
    TensorFlow, along axis 0 a value without tensors is converted as a whole (so
    `stack([1, 2.5])` is float32 and `stack([])` an empty float32 vector), and a tensor is
    unstacked along its first dimension first (so `stack(t)` is `t`)."""
    axis = static_int("Pack", axis, "axis")
    composite = _first_composite(values)
    if composite is not None:  # ragged (eager.core.composite)
        return dispatch_api("stack", composite, values, axis, name)
    if isinstance(values, Tensor):
        if axis == 0:
            return values
        values = unstack(values)
    elif axis == 0 and isinstance(values, (list, tuple)) and not _holds_tensor(values):
        try:
            return convert_to_tensor(values)
        except (TypeError, ValueError):
            pass  # e.g. ragged: Pack reports it
    values = _tensor_list(PACK, values, "values")
    rank = values[0].shape.rank
    if rank is not None and not -rank - 1 <= axis <= rank:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-rank - 1}, {rank + 1})")
    return execute(PACK, tuple(values), {"axis": axis})


def _unpack_infer(x, num, axis):
    s = x.shape
    if s.rank is None:
        return tuple(TensorSpec(UNKNOWN_SHAPE, x.dtype) for _ in builtins.range(num))
    if s[axis] is not None and s[axis] != num:
        raise op_error("Unpack", f"Input shape axis {axis} must equal {num}, got shape {_fmt(s)}")
    part = s[:axis] + s[axis + 1:]
    return tuple(TensorSpec(part, x.dtype) for _ in builtins.range(num))


def _unpack_kernel(xp, x, num, axis):
    if x.shape[axis] != num:
        raise op_error("Unpack", f"Input shape axis {axis} must equal {num}, got shape "
                                 f"{_fmt(x.shape)}")
    lead = (builtins.slice(None),) * axis
    return tuple(x[lead + (i,)] for i in builtins.range(num))


# num_outputs=None: the number of outputs varies per call (inference's tuple says how many).
UNPACK = register_op("Unpack", _unpack_kernel, _unpack_infer, dtypes=_dt.ALL_AND_STRING,
                     num_outputs=None)


def unstack(value, num=None, axis=0, name="unstack"):
    """≈ `tf.unstack`: the list of slices of `value` along `axis`."""
    x = as_tensor(value)
    axis = static_int("Unpack", axis, "axis")
    rank = x.shape.rank
    if rank is not None:
        if not -rank <= axis < rank:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-rank}, {rank})")
        axis %= rank
    if num is None:
        num = None if rank is None else x.shape[axis]
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
    num = static_int("Unpack", num, "num")
    return list(execute(UNPACK, (x,), {"num": num, "axis": axis}))


def _split_sizes(op_name, dim, axis, num_split=None, size_splits=None):
    """The piece sizes along the split dimension (None entries where `dim` is unknown)."""
    if num_split is not None:
        if num_split < 1:
            raise op_error(op_name, f"Number of ways to split should be >= 1, got {num_split}")
        if dim is None:
            return (None,) * num_split
        if dim % num_split:
            raise op_error(op_name, f"Number of ways to split should evenly divide the split "
                                    f"dimension, but got split_dim {axis} (size = {dim}) and "
                                    f"num_split {num_split}")
        return (dim // num_split,) * num_split
    free = [i for i, s in enumerate(size_splits) if s == -1]
    if len(free) > 1:
        raise op_error(op_name, f"Only one dimensions can have a value of -1. Second one found "
                                f"at dimension {free[1]}")
    if any(s < -1 for s in size_splits):
        raise op_error(op_name, f"size_splits must be non-negative (or -1), got "
                                f"{list(size_splits)}")
    total = sum(s for s in size_splits if s != -1)
    if dim is None:
        return tuple(None if s == -1 else s for s in size_splits)
    if (free and total > dim) or (not free and total != dim):
        raise op_error(op_name, "Determined shape must either match input shape along split_dim "
                                "exactly if fully specified, or be less than the size of the "
                                f"input along split_dim if not fully specified.  Got: {total} "
                                f"(split dimension {axis} has size {dim})")
    return tuple(dim - total if s == -1 else s for s in size_splits)


def _split_infer(op_name):
    def infer(x, axis, **sizes):
        s = x.shape
        count = sizes.get("num_split") or len(sizes.get("size_splits") or ())
        if s.rank is None:
            return tuple(TensorSpec(UNKNOWN_SHAPE, x.dtype) for _ in builtins.range(count))
        axis = normalize_axis(op_name, axis, s.rank)
        parts = _split_sizes(op_name, s[axis], axis, **sizes)
        return tuple(TensorSpec(s[:axis] + (p,) + s[axis + 1:], x.dtype) for p in parts)
    return infer


def _split_kernel(op_name):
    def kernel(xp, x, axis, **sizes):
        parts = _split_sizes(op_name, x.shape[axis], axis, **sizes)
        bounds = np.cumsum(parts[:-1]).tolist()
        return tuple(xp.split(x, bounds, axis=axis))
    return kernel


SPLIT = register_op("Split", _split_kernel("Split"), _split_infer("Split"),
                    dtypes=_dt.ALL_AND_STRING, num_outputs=None)
SPLIT_V = register_op("SplitV", _split_kernel("SplitV"), _split_infer("SplitV"),
                      dtypes=_dt.ALL_AND_STRING, num_outputs=None)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """≈ `tf.split`: an int splits `value` into that many equal pieces along `axis`; a list of
    sizes (one may be -1, meaning the rest) splits it into pieces of those sizes. Returns a
    list."""
    x = as_tensor(value)
    if x.shape.rank == 0:
        raise op_error("Split", "-input rank(-0) <= split_dim < input rank (0), but got 0: the "
                                "input must have rank at least 1")
    axis = static_int("Split", axis, "axis")
    if x.shape.rank is not None:
        axis = normalize_axis("Split", axis, x.shape.rank)
    if isinstance(num_or_size_splits, (int, np.integer)) and not isinstance(
            num_or_size_splits, (bool, np.bool_)):
        pieces = execute(SPLIT, (x,), {"axis": axis, "num_split": int(num_or_size_splits)})
        return list(pieces)
    if isinstance(num_or_size_splits, Tensor) and num_or_size_splits.shape.rank == 0:
        raise ValueError("Rank-0 tensors are not supported as the num_or_size_splits argument "
                         f"to split. Argument provided: {num_or_size_splits!r}")
    sizes = static_ints("SplitV", num_or_size_splits, "num_or_size_splits")
    if num is not None and static_int("SplitV", num, "num") != len(sizes):
        raise ValueError(f"split: num={num} does not match the {len(sizes)} sizes given.")
    return list(execute(SPLIT_V, (x,), {"axis": axis, "size_splits": sizes}))


# -----------------------------------------------------------------------------------------------
# Tile, broadcast_to (pad lives in padding_ops)
# -----------------------------------------------------------------------------------------------

def _tile_infer(x, counts=None, multiples=None):
    if multiples is None:  # Tile(x, counts): the multiples are read when the op runs
        multiples = shape_elements("Tile", counts, "multiples")
        if multiples is None:
            return TensorSpec([None] * x.shape.rank if x.shape.rank is not None else None,
                              x.dtype)
    for i, m in enumerate(multiples):
        if m is not None and m < 0:
            raise op_error("Tile", f"Expected multiples[{i}] >= 0, but got {m}")
    rank = x.shape.rank
    if rank is None:
        return TensorSpec([None] * len(multiples), x.dtype)
    if len(multiples) != rank:
        raise op_error("Tile", f"Expected multiples argument to be a vector of length {rank} "
                               f"but got length {len(multiples)}")
    return TensorSpec([None if d is None or m is None else d * m
                       for d, m in zip(x.shape, multiples)], x.dtype)


def _tile_kernel(xp, x, counts=None, multiples=None):
    if multiples is None:
        multiples = read_dims("Tile", counts, "multiples")
    _tile_infer(_spec(x), multiples=multiples)  # numpy's tile accepts any number of multiples
    if not multiples:
        return xp.asarray(x).copy()
    return xp.tile(x, multiples)


#: Tile(x) by the `multiples` attribute, or, with `multiples=None`, Tile(x, multiples) by
#: counts read when the op runs (`shape_arguments`).
TILE = register_op("Tile", _tile_kernel, _tile_infer, dtypes=_dt.ALL_AND_STRING,
                   host_inputs=(1,))


def tile(input, multiples, name=None):  # noqa: A002
    """≈ `tf.tile`: repeats `input` `multiples[i]` times along dimension i (counts a traced
    function may know only when it runs)."""
    x = as_tensor(input)
    check_bools_in_dims("Tile", multiples, "multiples")
    try:
        counts = static_ints("Tile", multiples, "multiples")
    except UnknownDimensionError:
        _, counts = shape_argument("Tile", multiples, "multiples")
        return execute(TILE, (x, counts), {"multiples": None})
    return execute(TILE, (x,), {"multiples": counts})


def _broadcast_to_infer(x, dims=None, shape=None):
    if shape is None:  # the shape is the input `dims`, read when the op runs
        known = shape_elements("BroadcastTo", dims)
        if known is None:
            return TensorSpec(UNKNOWN_SHAPE, x.dtype)
        if None in known:
            check_non_negative("BroadcastTo", [d for d in known if d is not None])
            return TensorSpec(_partly_broadcast(x.shape, known), x.dtype)
        shape = known
    check_non_negative("BroadcastTo", shape)
    rank = x.shape.rank
    if rank is not None:
        ok = rank <= len(shape)
        if ok:
            try:
                ok = TensorShape(shape).is_compatible_with(
                    broadcast_shapes("BroadcastTo", x.shape, TensorShape(shape)))
            except Exception:  # noqa: BLE001 - reported below with both shapes
                ok = False
        if not ok:
            raise op_error("BroadcastTo", f"Unable to broadcast tensor of shape {_fmt(x.shape)} "
                                          f"to tensor of shape {_fmt(shape)}")
    return TensorSpec(shape, x.dtype)


def _partly_broadcast(x_shape, known):
    """The output shape of broadcasting x to sizes of which some are known only at run time
    (None): the known ones, and where a size is unknown, x's own size when it is known and not
    1 (the only size x broadcasts to there)."""
    dims = list(known)
    if x_shape.rank is not None and x_shape.rank <= len(dims):
        offset = len(dims) - x_shape.rank
        for i, d in enumerate(x_shape):
            if dims[offset + i] is None and d is not None and d != 1:
                dims[offset + i] = d
    return TensorShape(dims)


def _broadcast_to_kernel(xp, x, dims=None, shape=None):
    # An empty buffer filled by one broadcasting assignment: several times faster than
    # broadcast_to(...).copy(), and this op runs in the gradient of every reduction.
    if shape is None:  # the shape is the input `dims` (`shape_arguments`)
        shape = read_dims("BroadcastTo", dims)
        try:
            return _broadcast_to_kernel(xp, x, shape=shape)
        except ValueError:  # TensorFlow's message (inference cannot see run-time values)
            _broadcast_to_infer(_spec(x), shape=shape)
            raise
    if len(shape) < x.ndim:
        xp.broadcast_to(x, shape)  # raises numpy's error; dispatch explains it
    out = xp.empty(shape, dtype=x.dtype)
    out[...] = x
    return out


#: BroadcastTo(x) to the `shape` attribute, or, with `shape=None`, BroadcastTo(x, dims) to a
#: shape known only when the op runs (`shape_arguments`).
BROADCAST_TO = register_op("BroadcastTo", _broadcast_to_kernel, _broadcast_to_infer,
                           dtypes=_dt.ALL_AND_STRING, host_inputs=(1,))


def broadcast_to(input, shape, name=None):  # noqa: A002
    """≈ `tf.broadcast_to`: `input` repeated along dimensions of size 1 (and new leading ones)
    to `shape`, with numpy's broadcasting rules. In a traced function the shape may be known
    only when it runs."""
    x = as_tensor(input)
    shape, dims = shape_argument("BroadcastTo", shape, "shape")
    if dims is None:
        return execute(BROADCAST_TO, (x,), {"shape": shape})
    return execute(BROADCAST_TO, (x, dims), {"shape": None})


# -----------------------------------------------------------------------------------------------
# IndexedSlices -> dense
# -----------------------------------------------------------------------------------------------

def _indexed_slices_to_tensor(value, dtype=None, name=None, as_ref=False):
    """Densifies an IndexedSlices (TensorFlow's conversion): rows `values` scattered into zeros
    of `dense_shape`, rows with the same index summed."""
    values = as_tensor(value.values)
    if dtype is not None and dtype is not values.dtype:
        raise ValueError(f"Incompatible tensor conversion requested to dtype {dtype.name} for "
                         f"IndexedSlices with dtype {values.dtype.name}")
    if value.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: "
                         f"{value!r}")
    indices = expand_dims(as_tensor(value.indices), -1)
    return scatter_nd(indices, values, value.dense_shape)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)
