"""Slicing and indexing: `slice`, `strided_slice`, `gather`, `gather_nd`, `scatter_nd`, and the
`Tensor.__getitem__` front end (`getitem`).

`getitem` follows TensorFlow's `_slice_helper`: a key of ints, slices, `...` and `None` becomes
one `StridedSlice` op whose begin/end/strides and masks are static attributes, so the output
shape is always inferred exactly. A scalar index tensor counts as an int when its value is
known (eagerly, or at trace time: `graph.constant_value`); one known only when a traced function
runs (a loop counter, an argument) takes its axis out with an `IndexAxis` op after the slice,
and a slice whose start or stop is known only then is cut by a `SliceAxis` op (its axis has no
static length): together, TensorFlow's StridedSlice with tensor `begin`/`end`. Slice steps
must be static. Beyond TensorFlow (which raises TypeError), one non-scalar integer index
(tensor, numpy array or list) per key gathers along its axis with numpy's rules.

This module sits below `array_ops`, which re-exports its public names, and never imports it:
the one transpose `getitem` may need is looked up in the op registry by name. It also holds the
small shape helpers (`fmt_dims`, `prod`, `check_non_negative`) its neighbours share.
"""

from __future__ import annotations

import builtins
import functools
import operator

import numpy as np

from ..base import device_checks, dtypes as _dt
from ..tensor import Tensor
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from . import math_ops as _math
from ..core.argument_conversion import as_tensor, check_dtype
from ..core.dispatch import execute
from ..core.registry import get_op, op_error, register_op
from .scatter_add import scatter_add
from ..core.shapes import UnknownDimensionError, static_int, static_ints, trace_time_value
from .shape_arguments import read_dims, shape_argument, shape_elements

__all__ = ["slice", "strided_slice", "gather", "gather_nd", "scatter_nd", "getitem"]

INDEX_DTYPES = frozenset({_dt.int16, _dt.int32, _dt.int64})


# Helpers shared by the array op modules (array_ops, creation_ops import them from here).

def fmt_dims(dims) -> str:
    """'[2,3]' (TensorFlow's way of printing a shape in op errors; '?' for unknown dims)."""
    if dims is None or getattr(dims, "rank", 0) is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def index_position(shape, flat: int) -> str:
    """'' for a scalar, '[i]' or '[i,j]' for element `flat` of an array of `shape`: how
    TensorFlow names a bad index in its messages."""
    if not shape:
        return ""
    return fmt_dims(int(i) for i in np.unravel_index(flat, shape))


def _dims(shape):
    """A hashable tuple of dims, or None for an unknown rank."""
    return tuple(shape) if shape.rank is not None else None


def prod(dims) -> int:
    """The product of a sequence of ints (1 for an empty one), without numpy's overflow."""
    n = 1
    for d in dims:
        n *= d
    return n


#: The most elements a tensor may have: TensorFlow counts them in an int64.
MAX_ELEMENTS = 2 ** 63 - 1


def check_non_negative(op_name, dims, what="shape"):
    """TensorFlow's InvalidArgumentError ("Dimension -1 must be >= 0") unless every requested
    dimension is >= 0."""
    for d in dims:
        if d < 0:
            raise op_error(op_name, f"Dimension {d} must be >= 0 (got {what} {fmt_dims(dims)})")


def check_shape(op_name, dims, what="shape"):
    """`check_non_negative`, then TensorFlow's InvalidArgumentError for a shape of more than
    2**63 - 1 elements ("Shape [...] would have more than 2**63 - 1 elements"), which no
    allocation is even tried for (numpy would fail with its own words)."""
    check_non_negative(op_name, dims, what)
    if prod(dims) > MAX_ELEMENTS:
        raise op_error(op_name, f"Shape {fmt_dims(dims)} would have more than 2**63 - 1 "
                                "elements")


# -----------------------------------------------------------------------------------------------
# StridedSlice
# -----------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def _strided_plan(dims, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                  shrink_axis_mask):
    """TensorFlow's strided-slice semantics (the sparse spec expanded against the input's rank).

    Returns `(index, out_dims)`: `index` is a numpy basic index (ints, slices, None) that does
    exactly what the op does, and `out_dims` the output dims (None where unknown), or
    `(None, None)` when the input's rank is unknown. Python slices clamp exactly as TensorFlow's
    canonicalization does, so the kernel can hand `index` to numpy. Cached: loops index the same
    way again and again.
    """
    n = len(begin)
    if not len(end) == n == len(strides):
        raise op_error("StridedSlice", f"Expected begin, end, and strides to be 1D equal size "
                                       f"tensors, but got shapes [{n}], [{len(end)}], and "
                                       f"[{len(strides)}] instead.")
    if ellipsis_mask & (ellipsis_mask - 1):
        raise op_error("StridedSlice", "Multiple ellipses in slice spec not allowed")
    for i, s in enumerate(strides):
        if s == 0 and not (ellipsis_mask | new_axis_mask) >> i & 1:
            raise op_error("StridedSlice", f"strides[{i}] must be non-zero")
    if dims is None:
        return None, None
    rank = len(dims)
    if not ellipsis_mask & ((1 << n) - 1):
        ellipsis_mask |= 1 << n  # no ellipsis: TensorFlow appends one
        n += 1
    index, out, dim = [], [], 0
    for i in builtins.range(n):
        bit = 1 << i
        if ellipsis_mask & bit:
            after = sum(1 for j in builtins.range(i + 1, n) if not new_axis_mask >> j & 1)
            while dim < rank - after:
                index.append(builtins.slice(None))
                out.append(dims[dim])
                dim += 1
            continue
        if new_axis_mask & bit:
            index.append(None)
            out.append(1)
            continue
        if dim >= rank:
            raise op_error("StridedSlice", f"Index out of range using input dim {dim}; input "
                                           f"has only {rank} dims")
        d = dims[dim]
        if shrink_axis_mask & bit:
            b = begin[i]
            if d is not None:
                b = b + d if b < 0 else b
                if not 0 <= b < d:
                    raise op_error("StridedSlice",
                                   f"slice index {b} of dimension {dim} out of bounds.")
            index.append(b)
        else:
            sl = builtins.slice(None if begin_mask & bit else begin[i],
                                None if end_mask & bit else end[i], strides[i])
            index.append(sl)
            out.append(None if d is None else len(builtins.range(*sl.indices(d))))
        dim += 1
    return tuple(index), tuple(out)


def _strided_slice_infer(x, **attrs):
    _, out = _strided_plan(_dims(x.shape), **attrs)
    return TensorSpec(UNKNOWN_SHAPE if out is None else out, x.dtype)


def _strided_slice_kernel(xp, x, **attrs):
    index, _ = _strided_plan(x.shape, **attrs)
    return x[index]


STRIDED_SLICE = register_op("StridedSlice", _strided_slice_kernel, _strided_slice_infer,
                            dtypes=_dt.ALL_AND_STRING)


def _index_axis_infer(x, index, axis):
    if index.shape.rank not in (0, None):
        raise op_error("IndexAxis", f"index must be a scalar, got shape {index.shape}")
    shape = x.shape
    if not shape._rank_known:
        return TensorSpec(UNKNOWN_SHAPE, x.dtype)
    if not 0 <= axis < len(shape):
        raise op_error("IndexAxis", f"axis {axis} is out of range for rank {len(shape)}")
    return TensorSpec(TensorShape(tuple(shape)[:axis] + tuple(shape)[axis + 1:]), x.dtype)


def _index_axis_kernel(xp, x, index, axis):
    n, i = x.shape[axis], int(index)
    if not -n <= i < n:  # TensorFlow's StridedSlice message
        raise op_error("IndexAxis", f"slice index {i} of dimension {axis} out of bounds.")
    return x[(builtins.slice(None),) * axis + (i,)]


#: `x[..., i, ...]` for a scalar index tensor whose value is known only when the op runs (a loop
#: counter, an argument): TensorFlow's StridedSlice with a tensor `begin`. Static slices stay
#: StridedSlice with attributes; this op exists so that an index need not be static. Its
#: gradient is dense, as StridedSlice's is (a gather's would be IndexedSlices).
INDEX_AXIS = register_op("IndexAxis", _index_axis_kernel, _index_axis_infer,
                         dtypes=_dt.ALL_AND_STRING)


def _check_bounds(op_name, bounds):
    for b in bounds:
        if b.shape.rank not in (0, None) or not b.dtype.is_integer:
            raise op_error(op_name, f"slice bounds must be integer scalars, got {b.dtype.name}"
                                    f"{list(b.shape) if b.shape.rank is not None else '[?]'}")


def _axis_slice(bounds, step, start, stop, dynamic):
    """The Python slice a SliceAxis op (or its gradient) takes, with its run-time bounds read."""
    values = iter([int(b) for b in bounds])
    lo = next(values) if dynamic in ("start", "both") else start
    hi = next(values) if dynamic in ("stop", "both") else stop
    return builtins.slice(lo, hi, step)


def _slice_axis_infer(x, *bounds, axis, step, start, stop, dynamic):
    _check_bounds("SliceAxis", bounds)
    shape = x.shape
    if not shape._rank_known:
        return TensorSpec(UNKNOWN_SHAPE, x.dtype)
    dims = list(shape)
    dims[axis] = None  # decided by the bounds' values
    return TensorSpec(TensorShape(dims), x.dtype)


def _slice_axis_kernel(xp, x, *bounds, axis, step, start, stop, dynamic):
    return x[(builtins.slice(None),) * axis + (_axis_slice(bounds, step, start, stop, dynamic),)]


#: `x[..., a:b:step, ...]` where `a` or `b` is a scalar tensor known only when the op runs:
#: TensorFlow's StridedSlice with tensor `begin`/`end`. Bounds clamp as Python's and
#: StridedSlice's do; the static bound (or None for an open end) is an attribute, `dynamic`
#: says which bounds are inputs ("start", "stop" or "both", in that order). The sliced axis has
#: no static length. Gradient: `SliceAxisGrad`, dense.
SLICE_AXIS = register_op("SliceAxis", _slice_axis_kernel, _slice_axis_infer,
                         dtypes=_dt.ALL_AND_STRING)


def _slice_axis_grad_infer(dy, *bounds, axis, step, start, stop, dynamic, shape):
    if shape is None:  # the shape is the last input
        bounds, shape_tensor = bounds[:-1], bounds[-1]
        known = shape_elements("SliceAxisGrad", shape_tensor)
        shape = UNKNOWN_SHAPE if known is None else known
    _check_bounds("SliceAxisGrad", bounds)
    return TensorSpec(TensorShape(shape), dy.dtype)


def _slice_axis_grad_kernel(xp, dy, *bounds, axis, step, start, stop, dynamic, shape):
    if shape is None:
        bounds, shape = bounds[:-1], read_dims("SliceAxisGrad", bounds[-1])
    out = xp.zeros(shape, dy.dtype)
    out[(builtins.slice(None),) * axis + (_axis_slice(bounds, step, start, stop, dynamic),)] = dy
    return out


#: The gradient of SliceAxis: zeros of the input's `shape` with `dy` in the slice. The shape is
#: the attribute, or, with `shape=None`, a last input read when the op runs (`shape_arguments`).
SLICE_AXIS_GRAD = register_op("SliceAxisGrad", _slice_axis_grad_kernel, _slice_axis_grad_infer,
                              dtypes=_dt.ALL)


def _strided_slice_grad_infer(shape, dy, **attrs):
    known = shape_elements("StridedSliceGrad", shape)
    return TensorSpec(UNKNOWN_SHAPE if known is None else known, dy.dtype)


def _strided_slice_grad_kernel(xp, shape, dy, **attrs):
    dims = read_dims("StridedSliceGrad", shape)
    index, _ = _strided_plan(dims, **attrs)
    out = xp.zeros(dims, dy.dtype)
    out[index] = dy
    return out


#: StridedSliceGrad(shape, dy): zeros of `shape` (an int vector read when the op runs) with `dy`
#: where StridedSlice with the same attributes takes its elements from. The gradient of a
#: strided slice of an input whose shape a traced function knows only when it runs (static
#: shapes put dy back with reshapes and pads, `array_grad`).
STRIDED_SLICE_GRAD = register_op("StridedSliceGrad", _strided_slice_grad_kernel,
                                 _strided_slice_grad_infer, dtypes=_dt.ALL, host_inputs=(0,))


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """≈ `tf.strided_slice`: elements `begin[i]:end[i]:strides[i]` per dimension, with
    TensorFlow's masks (bit i of `begin_mask`/`end_mask` ignores `begin[i]`/`end[i]`;
    `ellipsis_mask` marks `...`, `new_axis_mask` inserts a dimension of 1, `shrink_axis_mask`
    takes index `begin[i]` and drops the dimension). Out-of-range bounds clamp as in Python."""
    if var is not None:
        raise NotImplementedError("strided_slice: `var` (slice assignment to a variable) is not "
                                  "supported; use Variable.scatter_update.")
    x = as_tensor(input_)
    begin = static_ints("StridedSlice", begin, "begin")
    end = static_ints("StridedSlice", end, "end")
    strides = (1,) * len(begin) if strides is None else static_ints("StridedSlice", strides,
                                                                    "strides")
    attrs = {"begin": begin, "end": end, "strides": strides}
    for key, value in (("begin_mask", begin_mask), ("end_mask", end_mask),
                       ("ellipsis_mask", ellipsis_mask), ("new_axis_mask", new_axis_mask),
                       ("shrink_axis_mask", shrink_axis_mask)):
        attrs[key] = static_int("StridedSlice", value, key)
    return execute(STRIDED_SLICE, (x,), attrs)


# -----------------------------------------------------------------------------------------------
# Slice
# -----------------------------------------------------------------------------------------------

def _slice_plan(dims, begin, size):
    if dims is None:
        return None, None
    if not len(begin) == len(size) == len(dims):
        raise op_error("Slice", f"Expected begin and size arguments to be 1-D tensors of size "
                                f"{len(dims)}, but got shapes [{len(begin)}] and [{len(size)}] "
                                "instead.")
    index, out = [], []
    for i, (d, b, s) in enumerate(zip(dims, begin, size)):
        if d is None:
            index.append(None)
            out.append(None if s == -1 else s)
            continue
        if not 0 <= b <= d:
            raise op_error("Slice", f"Expected begin[{i}] in [0, {d}], but got {b}")
        if s == -1:
            s = d - b
        if not 0 <= s <= d - b:
            raise op_error("Slice", f"Expected size[{i}] in [0, {d - b}], but got {s}")
        index.append(builtins.slice(b, b + s))
        out.append(s)
    return tuple(index), tuple(out)


def _slice_infer(x, begin, size):
    _, out = _slice_plan(_dims(x.shape), begin, size)
    return TensorSpec(UNKNOWN_SHAPE if out is None else out, x.dtype)


def _slice_kernel(xp, x, begin, size):
    index, _ = _slice_plan(x.shape, begin, size)
    return x[index]


SLICE = register_op("Slice", _slice_kernel, _slice_infer, dtypes=_dt.ALL_AND_STRING)


def slice(input_, begin, size, name=None):  # noqa: A001 - TensorFlow's name
    """≈ `tf.slice`: the block of `size[i]` elements from `begin[i]` in each dimension
    (`size[i] == -1` means "to the end"). Unlike strided slicing, bounds never clamp."""
    x = as_tensor(input_)
    return execute(SLICE, (x,), {"begin": static_ints("Slice", begin, "begin"),
                                 "size": static_ints("Slice", size, "size")})


# -----------------------------------------------------------------------------------------------
# Gather
# -----------------------------------------------------------------------------------------------

def _gather_infer(params, indices, axis, batch_dims):
    p, i = params.shape, indices.shape
    if p.rank is None or i.rank is None:
        return TensorSpec(UNKNOWN_SHAPE, params.dtype)
    if p.rank == 0:
        raise op_error("GatherV2", "params must be at least 1 dimensional", [params, indices])
    if not 0 <= axis < p.rank:
        raise op_error("GatherV2", f"Expected axis in the range [{-p.rank}, {p.rank}), but got "
                                   f"{axis}")
    if batch_dims:
        if not 0 <= batch_dims <= i.rank:
            raise op_error("GatherV2", f"Expected batch_dims in the range [{-i.rank}, "
                                       f"{i.rank}], but got {batch_dims}")
        if batch_dims > axis:
            raise op_error("GatherV2", f"batch_dims ({batch_dims}) must be less than or equal "
                                       f"to axis ({axis}).")
        for k in builtins.range(batch_dims):
            if p[k] is not None and i[k] is not None and p[k] != i[k]:
                raise op_error("GatherV2", f"params.shape[{k}]: {p[k]} should be equal to "
                                           f"indices.shape[{k}]: {i[k]}")
    return TensorSpec(p[:axis] + i[batch_dims:] + p[axis + 1:], params.dtype)


def _check_range(op_name, xp, indices, n):
    """TensorFlow's CPU check: every index in [0, n), else InvalidArgumentError naming the first
    bad one ("indices[1] = 7 is not in [0, 3)"). On a GPU it stays on the device and a failure
    is raised at the next synchronization (`device_checks`: gathers only write their output)."""
    bad = (indices < 0) | (indices >= n)

    def error():
        flat = int(xp.argmax(bad.reshape(-1)))
        value = int(indices.reshape(-1)[flat])
        return op_error(op_name, f"indices{index_position(indices.shape, flat)} = {value} is "
                                 f"not in [0, {n})")

    device_checks.require(xp, bad.any(), error)


def _spec(array) -> TensorSpec:
    return TensorSpec(array.shape, _dt.BY_NUMPY[array.dtype])


def _gather_kernel(xp, params, indices, axis, batch_dims):
    params, indices = xp.asarray(params), xp.asarray(indices)
    if batch_dims:
        _gather_infer(_spec(params), _spec(indices), axis, batch_dims)
    n = params.shape[axis]
    _check_range("GatherV2", xp, indices, n)
    if not batch_dims:
        return xp.take(params, indices, axis=axis)
    # Batched: gather row b of params with row b of indices, for every batch position at once.
    batch, mid, rest = params.shape[:batch_dims], params.shape[batch_dims:axis], \
        params.shape[axis + 1:]
    nb, nm = prod(batch), prod(mid)
    flat_params = params.reshape(nb, nm, n, prod(rest))
    flat_indices = indices.reshape(nb, 1, prod(indices.shape[batch_dims:]))
    out = flat_params[xp.arange(nb)[:, None, None], xp.arange(nm)[None, :, None], flat_indices]
    return out.reshape(batch + mid + indices.shape[batch_dims:] + rest)


GATHER = register_op("GatherV2", _gather_kernel, _gather_infer, dtypes=_dt.ALL_AND_STRING)


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """≈ `tf.gather`: slices of `params` along `axis` at `indices`; the output's shape is
    `params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]`. With
    `batch_dims`, the first `batch_dims` dimensions are batch dimensions of both arguments.
    Indices outside [0, n) raise InvalidArgumentError (TensorFlow's CPU behaviour; its GPU
    kernel writes zeros instead), on a GPU at its next synchronization (`device_checks`).
    `validate_indices` is ignored, as in TensorFlow. A variable gathered along axis 0 gives its
    rows through `sparse_read` (`ResourceGather`, which reads only those rows), as in
    TensorFlow."""
    batch_dims = static_int("GatherV2", batch_dims, "batch_dims")
    if axis is not None:
        axis = static_int("GatherV2", axis, "axis")
    sparse_read = getattr(params, "sparse_read", None)  # a variable (TensorFlow's own test)
    if sparse_read is not None and (batch_dims if axis is None else axis) == 0:
        return sparse_read(indices)
    params = as_tensor(params)
    indices = as_tensor(indices)
    check_dtype(GATHER, indices, INDEX_DTYPES, "indices")
    if batch_dims < 0 and indices.shape.rank is not None:
        batch_dims += indices.shape.rank
    if axis is None:
        axis = batch_dims
    rank = params.shape.rank
    if rank and -rank <= axis < 0:
        axis += rank
    return execute(GATHER, (params, indices), {"axis": axis, "batch_dims": batch_dims})


# -----------------------------------------------------------------------------------------------
# GatherNd and ScatterNd
# -----------------------------------------------------------------------------------------------

def _gather_nd_infer(params, indices, batch_dims):
    p, i = params.shape, indices.shape
    if i.rank == 0:
        raise op_error("GatherNd", "indices must be at least a vector", [params, indices])
    if p.rank is None or i.rank is None or i[-1] is None:
        return TensorSpec(UNKNOWN_SHAPE, params.dtype)
    if not 0 <= batch_dims < min(p.rank, i.rank):
        raise op_error("GatherNd", f"batch_dims must be in [0, {min(p.rank, i.rank)}) for "
                                   f"params of shape {fmt_dims(p)} and indices of shape "
                                   f"{fmt_dims(i)}, got {batch_dims}")
    for k in builtins.range(batch_dims):
        if p[k] is not None and i[k] is not None and p[k] != i[k]:
            raise op_error("GatherNd", f"params.shape[{k}] ({p[k]}) must equal indices.shape"
                                       f"[{k}] ({i[k]}) for batch dimension {k}")
    depth = i[-1]
    if depth > p.rank - batch_dims:
        raise op_error("GatherNd", f"index innermost dimension length must be <= params rank; "
                                   f"saw: {depth} vs. {p.rank - batch_dims}")
    return TensorSpec(i[:-1] + p[batch_dims + depth:], params.dtype)


def _check_nd_range(op_name, xp, indices, dims, what, defer=False):
    """Every row of `indices` (shape [..., depth]) must index into `dims`, else TensorFlow's
    "indices[1] = [2, 0] does not index into param shape [2,2]". With `defer` (a kernel that
    only writes its output), on a GPU the check stays on the device (`device_checks`), and the
    indices to use are returned wrapped into `dims` (no read or write lands outside them: the
    output is unspecified until the error surfaces). Returns the indices to use."""
    depth = indices.shape[-1]
    if not depth or not indices.size:
        return indices
    limits = xp.asarray(dims[:depth], dtype=np.int64)
    bad = ((indices < 0) | (indices >= limits)).any(axis=-1)

    def error():
        flat = int(xp.argmax(bad.reshape(-1)))
        row = indices.reshape(-1, depth)[flat]
        values = ", ".join(str(int(v)) for v in row.tolist())
        return op_error(op_name, f"indices{index_position(indices.shape[:-1], flat)} = [{values}] "
                                 f"does not index into {what} {fmt_dims(dims)}")

    if defer and xp is not np and all(dims[:depth]):
        device_checks.require(xp, bad.any(), error)
        return indices % limits
    if bool(bad.any()):
        raise error()
    return indices


def _gather_nd_kernel(xp, params, indices, batch_dims):
    params, indices = xp.asarray(params), xp.asarray(indices)
    _gather_nd_infer(_spec(params), _spec(indices), batch_dims)
    batch = params.shape[:batch_dims]
    depth = indices.shape[-1]
    # (The indices as they are: CuPy's integer array indexing wraps them into range already.)
    _check_nd_range("GatherNd", xp, indices, params.shape[batch_dims:], "param shape",
                    defer=True)
    nb = prod(batch)
    rows = prod(indices.shape[batch_dims:-1])
    flat_params = params.reshape((nb,) + params.shape[batch_dims:])
    flat_indices = indices.reshape(nb, rows, depth)
    key = (xp.arange(nb)[:, None],) + tuple(flat_indices[..., k] for k in builtins.range(depth))
    out = flat_params[key]
    tail = params.shape[batch_dims + depth:]
    out = xp.broadcast_to(out, (nb, rows) + tail)  # depth 0 selects whole slices
    return out.reshape(indices.shape[:-1] + tail)


GATHER_ND = register_op("GatherNd", _gather_nd_kernel, _gather_nd_infer, dtypes=_dt.ALL_AND_STRING)


def gather_nd(params, indices, batch_dims=0, name=None):
    """≈ `tf.gather_nd`: `indices[..., :]` are coordinates into `params` (the innermost dimension
    of `indices` is the coordinate depth); the output's shape is `indices.shape[:-1] +
    params.shape[batch_dims + depth:]`. Out-of-range coordinates raise InvalidArgumentError."""
    params = as_tensor(params)
    indices = as_tensor(indices)
    check_dtype(GATHER_ND, indices, INDEX_DTYPES, "indices")
    batch_dims = static_int("GatherNd", batch_dims, "batch_dims")
    return execute(GATHER_ND, (params, indices), {"batch_dims": batch_dims})


def _scatter_nd_infer(indices, updates, dims=None, shape=None):
    if shape is None:  # ScatterNd(indices, updates, shape): read when the op runs
        known = shape_elements("ScatterNd", dims)
        if known is None or None in known:
            check_non_negative("ScatterNd", [d for d in known or () if d is not None])
            return TensorSpec(UNKNOWN_SHAPE if known is None else known, updates.dtype)
        shape = known
    i, u = indices.shape, updates.shape
    check_non_negative("ScatterNd", shape)
    if i.rank == 0:
        raise op_error("ScatterNd", "indices must be at least a vector", [indices, updates])
    if i.rank is None or u.rank is None or i[-1] is None:
        return TensorSpec(shape, updates.dtype)
    depth = i[-1]
    if depth > len(shape):
        raise op_error("ScatterNd", f"indices.shape[-1] ({depth}) must be <= the rank of shape "
                                    f"{fmt_dims(shape)}")
    expected = i[:-1] + TensorShape(shape[depth:])
    if not expected.is_compatible_with(u):
        raise op_error("ScatterNd", f"updates must have shape indices.shape[:-1] + "
                                    f"shape[indices.shape[-1]:] = {fmt_dims(expected)}, got "
                                    f"{fmt_dims(u)} (indices {fmt_dims(i)}, shape "
                                    f"{fmt_dims(shape)})")
    if prod(shape) == 0 and u.num_elements():
        raise op_error("ScatterNd", f"Indices and updates specified for empty output shape "
                                    f"{fmt_dims(shape)}")
    return TensorSpec(shape, updates.dtype)


def _scatter_nd_kernel(xp, indices, updates, dims=None, shape=None):
    if shape is None:
        shape = read_dims("ScatterNd", dims)
    indices, updates = xp.asarray(indices), xp.asarray(updates)
    _scatter_nd_infer(_spec(indices), _spec(updates), shape=shape)
    depth = indices.shape[-1]
    indices = _check_nd_range("ScatterNd", xp, indices, shape, "shape", defer=True)
    rows = prod(indices.shape[:-1])
    flat_indices = indices.reshape(rows, depth).astype(np.int64)
    strides = np.cumprod((1,) + tuple(shape[depth - 1:0:-1]))[::-1] if depth else ()
    linear = xp.zeros(rows, dtype=np.int64)
    for k in builtins.range(depth):
        linear = linear + flat_indices[:, k] * int(strides[k])
    inner = prod(shape[depth:])
    out = xp.zeros((prod(shape[:depth]), inner), dtype=updates.dtype)
    scatter_add(xp, out, linear, updates.reshape(rows, inner))
    return out.reshape(shape)


#: ScatterNd(indices, updates) into the `shape` attribute, or, with `shape=None`,
#: ScatterNd(indices, updates, shape) into a shape read when the op runs (`shape_arguments`).
SCATTER_ND = register_op("ScatterNd", _scatter_nd_kernel, _scatter_nd_infer, dtypes=_dt.ALL,
                         host_inputs=(2,))


def scatter_nd(indices, updates, shape, name=None):
    """≈ `tf.scatter_nd`: a zero tensor of `shape` with `updates` added at the coordinates
    `indices` (duplicate coordinates are summed, as in TensorFlow)."""
    updates = as_tensor(updates)
    indices = as_tensor(indices)
    check_dtype(SCATTER_ND, indices, INDEX_DTYPES, "indices")
    try:
        shape = static_ints("ScatterNd", shape, "shape")
    except UnknownDimensionError:  # a shape known only when the traced function runs
        _, dims = shape_argument("ScatterNd", shape, "shape")
        return execute(SCATTER_ND, (indices, updates, dims), {"shape": None})
    check_non_negative("ScatterNd", shape)
    return execute(SCATTER_ND, (indices, updates), {"shape": shape})


# -----------------------------------------------------------------------------------------------
# Tensor.__getitem__
# -----------------------------------------------------------------------------------------------

_VALID = ("Only integers, slices (`:`), ellipsis (`...`), None (newaxis), scalar integer tensors "
          "and (beyond TensorFlow) one integer tensor, array or list per key are valid indices")


def _bool_index_error(k):
    if isinstance(k, (bool, np.bool_)) or getattr(k, "ndim", None) == 0:  # TF: ValueError
        return ValueError(f"Boolean index {_short(k)}: mask cannot be scalar.")
    return TypeError(f"Boolean index {_short(k)}: masking is not an index here. Use "
                     "eager.where(mask) for the coordinates of true elements (and eager.gather_nd "
                     "with them), or eager.where(mask, x, y) to select elementwise.")


def _short(k) -> str:
    text = repr(k)
    return text if len(text) <= 80 else text[:77] + "..."


def _classify(k):
    """('int', i) | ('array', tensor-or-ndarray) for one non-slice, non-None, non-... index."""
    if isinstance(k, (bool, np.bool_)):
        raise _bool_index_error(k)
    if isinstance(k, Tensor):
        if k.dtype.is_bool:
            raise _bool_index_error(k)
        if not k.dtype.is_integer:
            raise TypeError(f"{_VALID}; got a {k.dtype.name} tensor {_short(k)}.")
        if k.shape.rank == 0:
            if k.dtype not in INDEX_DTYPES:  # TensorFlow: int16/int32/int64 scalars only
                raise TypeError(f"{_VALID}; got a {k.dtype.name} scalar tensor {_short(k)}.")
            if getattr(k, "is_symbolic", False):
                known = trace_time_value(k)
                return ("scalar", k) if known is None else ("int", int(known))
            return "int", static_int("StridedSlice", k, "a scalar index")
        return "array", k
    if isinstance(k, (np.ndarray, list, tuple)):
        try:
            arr = np.asarray(k)
        except ValueError:
            arr = np.asarray(k, dtype=object)
        if arr.dtype.kind == "b":
            raise _bool_index_error(k)
        if arr.size == 0 and arr.dtype.kind == "f" and not isinstance(k, np.ndarray):
            arr = arr.astype(np.int32)  # [] is an empty integer index, as in numpy
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{_VALID}; got {_short(k)}.")
        if arr.ndim == 0:
            return "int", int(arr)
        return "array", arr
    try:
        return "int", operator.index(k)
    except TypeError:
        raise TypeError(f"{_VALID}; got {_short(k)} of type {type(k).__name__}.") from None


def getitem(x, key):
    """`x[key]` (≈ TensorFlow's `_slice_helper`; see the module doc).

    Hot for `x[i]` and iteration: a plain int goes straight to the op.
    """
    if not isinstance(x, Tensor):
        x = as_tensor(x)
    if key.__class__ is int:
        return execute(STRIDED_SLICE, (x,), {
            "begin": (key,), "end": (key + 1,), "strides": (1,), "begin_mask": 0, "end_mask": 0,
            "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 1})
    items = key if isinstance(key, tuple) else (key,)
    begin, end, strides = [], [], []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
             "shrink_axis_mask": 0}
    kinds = []  # per item: "slice", "full", "int", "new", "ellipsis", "array", "scalar"
    advanced = None  # (item position, index)
    # (item position, "scalar" or "dslice", what it needs) for items known only at run time
    run_time = []
    for i, k in enumerate(items):
        bit = 1 << i
        if k is None:
            kind, b, e, s = "new", 0, 0, 1
            masks["new_axis_mask"] |= bit
        elif k is Ellipsis:
            kind, b, e, s = "ellipsis", 0, 0, 1
            masks["ellipsis_mask"] |= bit
        elif isinstance(k, builtins.slice):
            kind = "full" if k.start is None and k.stop is None and k.step is None else "slice"
            dynamic = _run_time_bounds(k)
            if dynamic is None:
                b, e, s = _slice_bounds(k, bit, masks)
            else:  # a full slice here; SliceAxis cuts it after
                kind, (b, e, s) = "dslice", _full_slice(bit, masks)
                run_time.append((i, kind, dynamic))
        else:
            kind, value = _classify(k)
            if kind == "int":
                b, e, s = value, value + 1, 1
                masks["shrink_axis_mask"] |= bit
            elif kind == "scalar":  # a full slice here; IndexAxis picks the element after
                b, e, s = _full_slice(bit, masks)
                run_time.append((i, kind, value))
            else:
                if advanced is not None:
                    raise TypeError(f"At most one integer tensor, array or list may index a "
                                    f"tensor at a time (numpy's multi-array indexing is not "
                                    f"supported); got {_short(advanced[1])} and {_short(k)}. "
                                    "Index in two steps, or use eager.gather_nd.")
                advanced = (i, value)
                b, e, s = _full_slice(bit, masks)
        kinds.append(kind)
        begin.append(b)
        end.append(e)
        strides.append(s)
    attrs = {"begin": tuple(begin), "end": tuple(end), "strides": tuple(strides), **masks}
    if run_time:
        if advanced is not None:
            raise TypeError(f"An integer tensor, array or list index cannot be combined with an "
                            f"index or slice bound known only when the function runs (item "
                            f"{run_time[0][0]} of the key); index in two steps.")
        return _run_time_getitem(x, kinds, run_time, attrs)
    if advanced is None:
        return execute(STRIDED_SLICE, (x,), attrs)
    return _advanced_getitem(x, kinds, advanced, attrs)


def _run_time_getitem(x, kinds, run_time, attrs):
    """`x[key]` where some scalar indices or slice bounds are known only at run time: the
    StridedSlice of the key with those places taken by `:`, then one IndexAxis or SliceAxis per
    such item, the last first (so that removing an axis never moves the axes still to come)."""
    rank = x.shape.rank
    if rank is None and "ellipsis" in kinds:
        raise TypeError("Indexing with `...` and an index known only at run time needs the "
                        "tensor's rank, which is unknown here.")
    consuming = sum(1 for k in kinds if k in ("slice", "full", "int", "scalar", "dslice"))
    covered = 0 if rank is None else rank - consuming  # dims an Ellipsis stands for
    if (all(k in ("full", "ellipsis", "scalar", "dslice") for k in kinds)
            and kinds.count("ellipsis") <= 1):
        out = x  # nothing to slice
    else:
        out = execute(STRIDED_SLICE, (x,), attrs)
    for position, kind, payload in reversed(run_time):
        axis = sum({"new": 1, "slice": 1, "full": 1, "scalar": 1, "dslice": 1,
                    "ellipsis": covered}.get(k, 0) for k in kinds[:position])
        if kind == "scalar":
            out = execute(INDEX_AXIS, (out, payload), {"axis": axis})
        else:
            bounds, slice_attrs = payload
            out = execute(SLICE_AXIS, (out, *bounds), {"axis": axis, **slice_attrs})
    return out


def _run_time_bounds(k):
    """For a slice whose start or stop is a symbolic tensor the trace cannot evaluate: (bound
    tensors, SliceAxis attributes); else None (a static slice). The step must be static."""
    start, stop = k.start, k.stop
    if (start is None or start.__class__ is int) and (stop is None or stop.__class__ is int):
        return None  # the usual slice, at once
    found = {}
    for name, bound in (("start", start), ("stop", stop)):
        if getattr(bound, "is_symbolic", False):
            known = trace_time_value(bound)
            if known is None:
                found[name] = bound
    if not found:
        return None
    step = 1 if k.step is None else static_int("StridedSlice", k.step, "a slice step")
    if step == 0:
        raise op_error("StridedSlice", "strides must be non-zero")
    static = {name: (None if getattr(k, name) is None
                     else static_int("StridedSlice", getattr(k, name), f"a slice {name}"))
              for name in ("start", "stop") if name not in found}
    dynamic = "both" if len(found) == 2 else next(iter(found))
    bounds = tuple(found[name] for name in ("start", "stop") if name in found)
    attrs = {"step": step, "start": static.get("start"), "stop": static.get("stop"),
             "dynamic": dynamic}
    return bounds, attrs


def _full_slice(bit, masks):
    """(begin, end, stride) of `:` at the key item `bit` marks: the place an index taken after
    the StridedSlice (a gather, IndexAxis, SliceAxis) holds in it."""
    masks["begin_mask"] |= bit
    masks["end_mask"] |= bit
    return 0, 0, 1


def _slice_bounds(k, bit, masks):
    if k.start is None:
        masks["begin_mask"] |= bit
    if k.stop is None:
        masks["end_mask"] |= bit
    b = 0 if k.start is None else static_int("StridedSlice", k.start, "a slice start")
    e = 0 if k.stop is None else static_int("StridedSlice", k.stop, "a slice stop")
    s = 1 if k.step is None else static_int("StridedSlice", k.step, "a slice step")
    return b, e, s


def _advanced_getitem(x, kinds, advanced, attrs):
    """`x[key]` with one integer array in the key: slice with the array's place taken by `:`,
    gather along the axis that place became, then, as numpy does, move the gathered dimensions to
    the front when ints and the array are not adjacent in the key (`x[1, :, [0, 1]]`)."""
    position, index = advanced
    rank = x.shape.rank
    if rank is None:
        raise TypeError("Indexing with an integer array needs the tensor's rank, which is "
                        "unknown here; use eager.gather.")
    consuming = sum(1 for k in kinds if k in ("slice", "full", "int", "array"))
    plain = all(k in ("full", "ellipsis", "array") for k in kinds)
    if plain and consuming <= rank and kinds.count("ellipsis") <= 1:
        sliced = x  # nothing to slice: `x[idx]`, `x[:, idx]`, `x[..., idx]`
    else:
        sliced = execute(STRIDED_SLICE, (x,), attrs)
    covered = rank - consuming  # dims an Ellipsis stands for
    before = kinds[:position]
    axis = sum({"new": 1, "slice": 1, "full": 1, "ellipsis": covered}.get(k, 0) for k in before)
    source_axis = sum({"slice": 1, "full": 1, "int": 1, "ellipsis": covered}.get(k, 0)
                      for k in before)
    index = _index_tensor(index, x.shape[source_axis])
    out = gather(sliced, index, axis=axis)
    places = [i for i, k in enumerate(kinds) if k in ("int", "array")]
    if places[-1] - places[0] + 1 != len(places) and axis:
        width = index.shape.rank
        out_rank = out.shape.rank
        perm = (tuple(builtins.range(axis, axis + width)) + tuple(builtins.range(axis))
                + tuple(builtins.range(axis + width, out_rank)))
        out = execute(get_op("Transpose"), (out,), {"perm": perm})
    return out


def _index_tensor(index, dim):
    """An int32/int64 index tensor with negative entries counted from the end (as numpy does)
    where `dim` is known; entries below -dim stay negative so gather reports them as given."""
    if isinstance(index, np.ndarray):
        if index.dtype not in (np.int32, np.int64):
            index = index.astype(np.int64)
        if dim is not None:
            index = np.where((index < 0) & (index >= -dim), index + dim, index)
        return convert_to_tensor(index)
    if index.dtype not in (_dt.int32, _dt.int64):
        index = _math.cast(index, _dt.int64)
    if dim is None:
        return index
    wrap = _math.logical_and(_math.less(index, 0), _math.greater_equal(index, -dim))
    return _math.where(wrap, _math.add(index, dim), index)
