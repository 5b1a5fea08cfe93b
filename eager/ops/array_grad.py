"""Gradients of the array ops: shapes, joining and splitting, slicing, gathers and scatters,
padding, fill. Every one of them moves or copies elements without arithmetic, so every gradient
moves `dy` back: a reshape undoes a reshape, a split undoes a concat, a pad undoes a slice, a
scatter undoes a gather.

Each rule is `grad(forward, *dys) -> one gradient per input` (None for indices), written with ops
so it runs eagerly, traced, and under an outer tape (the rules of this file are differentiable
again: their gradients are rules of this file). `keep_inputs` names what a rule reads: most read
only static shapes and attrs, so a tape keeps nothing alive for them; the gathers and the
scatter keep their indices, never their params (an embedding table's value would otherwise stay
alive, and the next update of its variable would have to copy it).

Hot path: reshape, transpose, broadcast_to, concat, gather and indexing run in every training
step, so their rules call `execute` with attrs computed from static shapes and skip ops that
would do nothing (a reshape to the same shape, a pad by zero). The gradient of a gather along
axis 0 is an `IndexedSlices`, as in TensorFlow, so an embedding table is never densified; a
rule that receives an IndexedSlices `dy` densifies it only when it needs a dense tensor.
"""

from __future__ import annotations

import builtins
import functools

import numpy as np

from ..base import dtypes as _dt
from ..tensor import IndexedSlices, Tensor
from ..core.tensor_conversion import convert_to_tensor
from . import math_ops as m
from .array_ops import (BROADCAST_TO, CONCAT, CONJUGATE_TRANSPOSE, PACK, RESHAPE, SHAPE, SPLIT_V,
                        TRANSPOSE, UNPACK)
from .array_ops import expand_dims, reshape, transpose
from .creation_ops import zeros
from .creation_ops import range as _range
from ..core.dispatch import execute
from .grad_utils import dense_shape_tensor, is_known, reshape_to, shape_tensor, unbroadcast
from .padding_ops import PAD, pad
from ..core.registry import get_op
from ..core.shapes import UnknownDimensionError
from .slicing_ops import (SCATTER_ND, SLICE, SLICE_AXIS, SLICE_AXIS_GRAD, STRIDED_SLICE,
                          STRIDED_SLICE_GRAD, _strided_plan, gather_nd, prod, scatter_nd)

# -- helpers ---------------------------------------------------------------------------------


def _dense(g):
    """`g` as a tensor (an IndexedSlices gradient is densified; a tensor passes through)."""
    return g if isinstance(g, Tensor) else convert_to_tensor(g)


def _reshape(g, shape):
    """`g` reshaped to a recorded shape (read when the graph runs where it is unknown now)."""
    return reshape_to(_dense(g), shape)


def _settled(shape) -> bool:
    """Whether a shape equal to `shape` is the same shape when the graph runs: all its sizes
    are known but one (two tensors with as many elements and these static shapes agree)."""
    return shape.count(None) <= 1


def _pad(g, paddings):
    """PadV2 of `g` with zeros by static `paddings` ((before, after) per dimension)."""
    g = _dense(g)
    zero = convert_to_tensor(np.zeros((), g.dtype.as_numpy_dtype))
    return execute(PAD, (g, zero), {"paddings": tuple(paddings)})


def _slice(g, begin, size):
    return execute(SLICE, (_dense(g),), {"begin": tuple(begin), "size": tuple(size)})


def _reduce_sum(g, axes):
    return execute(m.SUM, (_dense(g),), {"axes": tuple(axes), "keepdims": False})


# -- shapes ----------------------------------------------------------------------------------


@get_op("Identity").def_gradient
def _identity_grad(forward, dy):
    return dy  # an IndexedSlices stays sparse


def _reshape_back(forward, dy):
    """Reshape, Squeeze, ExpandDims: the same elements, so `dy` takes the input's shape. (A
    Reshape to a shape read at run time has that shape as a second input: no gradient.)"""
    shape = forward.input_shapes[0]
    if shape == forward.output_shapes[0] and (shape.__class__ is tuple or _settled(shape)):
        g = dy
    else:
        g = _reshape(dy, shape)
    return g if len(forward.input_ids) == 1 else (g, None)


for _name in ("Reshape", "Squeeze", "ExpandDims"):
    get_op(_name).def_gradient(_reshape_back)


def _inverse(perm) -> tuple:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


@get_op("Transpose").def_gradient
def _transpose_grad(forward, dy):
    perm = forward.attrs["perm"]
    if perm == tuple(builtins.range(len(perm))):
        return dy
    return execute(TRANSPOSE, (_dense(dy),), {"perm": _inverse(perm)})


@get_op("ConjugateTranspose").def_gradient
def _conjugate_transpose_grad(forward, dy):
    # y = conj(x^T): the gradient of conj is conj (TensorFlow's convention), that of a
    # transpose the inverse transpose.
    return execute(CONJUGATE_TRANSPOSE, (_dense(dy),), {"perm": _inverse(forward.attrs["perm"])})


@get_op("BroadcastTo").def_gradient
def _broadcast_to_grad(forward, dy):
    target = forward.attrs["shape"]
    if target is None:  # BroadcastTo(x, dims): the shape read at run time has no gradient
        return unbroadcast(_dense(dy), forward.input_shapes[0]), None
    return unbroadcast(_dense(dy), forward.input_shapes[0], (target,))


@get_op("Tile").def_gradient
def _tile_grad(forward, dy):
    # y viewed as [m0, d0, m1, d1, ...] holds m_i copies along each i: sum the copies.
    shape, axes = [], []
    multiples, dims = forward.attrs["multiples"], forward.input_shapes[0]
    if multiples is None:  # Tile(x, multiples): counts read at run time, dy's sizes over x's
        sizes = shape_tensor(dims)
        counts = m.floordiv(execute(SHAPE, (_dense(dy),), {"out_type": _dt.int32}),
                            m.maximum(sizes, 1))
        pairs = execute(PACK, (counts, sizes), {"axis": 1})
        flat = execute(RESHAPE, (pairs,), {"shape": (-1,)})
        axes = tuple(builtins.range(0, 2 * len(dims), 2))
        return _reduce_sum(execute(RESHAPE, (_dense(dy), flat), {"shape": None}), axes), None
    for m_i, d in zip(multiples, dims):
        if m_i != 1:
            axes.append(len(shape))
            shape.append(m_i)
        shape.append(d)
    if not axes:
        return dy
    if shape.count(None) > 1 or (None in shape and 0 in shape):
        # x's sizes are read at run time, interleaved with the copies.
        pairs = execute(PACK, (convert_to_tensor(np.array(multiples, np.int32)),
                               shape_tensor(dims)), {"axis": 1})
        flat = execute(RESHAPE, (pairs,), {"shape": (-1,)})
        axes = tuple(builtins.range(0, 2 * len(multiples), 2))
        return _reduce_sum(execute(RESHAPE, (_dense(dy), flat), {"shape": None}), axes)
    return _reduce_sum(_reshape(dy, shape), axes)


# -- joining and splitting -------------------------------------------------------------------


@get_op("ConcatV2").def_gradient
def _concat_grad(forward, dy):
    shapes = forward.input_shapes
    axis = forward.attrs["axis"] % len(shapes[0])
    sizes = tuple(s[axis] for s in shapes)
    if sizes.count(None) > 1:
        return _split_at_run_time(_dense(dy), shapes, axis)
    if None in sizes:  # SplitV infers the one unknown size
        sizes = tuple(-1 if d is None else d for d in sizes)
    return execute(SPLIT_V, (_dense(dy),), {"axis": axis, "size_splits": sizes})


def _split_at_run_time(dy, shapes, axis):
    """Concat's gradient when several inputs' sizes along `axis` are known only at run time:
    one SliceAxis per input, between running sums of the sizes."""
    grads, start = [], convert_to_tensor(np.int32(0))
    for shape in shapes:
        size = shape[axis]
        if size is None:
            size = _strided(shape_tensor(shape), (axis,), (axis + 1,), shrink=1)
        stop = m.add(start, convert_to_tensor(np.int32(size)) if isinstance(size, int) else size)
        attrs = {"axis": axis, "step": 1, "start": None, "stop": None, "dynamic": "both"}
        grads.append(execute(SLICE_AXIS, (dy, start, stop), attrs))
        start = stop
    return tuple(grads)


def _strided(t, begin, end, shrink=0, end_mask=0):
    """StridedSlice of `t` with static bounds and stride 1."""
    return execute(STRIDED_SLICE, (t,), {
        "begin": begin, "end": end, "strides": (1,) * len(begin), "begin_mask": 0,
        "end_mask": end_mask, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": shrink})


@get_op("Pack").def_gradient
def _pack_grad(forward, dy):
    n = len(forward.input_shapes)
    axis = forward.attrs["axis"] % (len(forward.input_shapes[0]) + 1)
    return execute(UNPACK, (_dense(dy),), {"num": n, "axis": axis})


@get_op("Unpack").def_gradient
def _unpack_grad(forward, *dys):
    return execute(PACK, tuple(_dense(g) for g in dys), {"axis": forward.attrs["axis"]})


def _split_grad(forward, *dys):
    if len(dys) == 1:
        return dys[0]
    return execute(CONCAT, tuple(_dense(g) for g in dys), {"axis": forward.attrs["axis"]})


get_op("Split").def_gradient(_split_grad)
get_op("SplitV").def_gradient(_split_grad)


# -- slicing and padding ---------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _unslice_plan(dims, out_dims, begin, end, strides, begin_mask, end_mask, ellipsis_mask,
                  new_axis_mask, shrink_axis_mask):
    """How to put a strided slice's `dy` back in place, from static shapes (cached: a training
    loop slices the same way every step). Returns None when the slice is empty (the gradient
    is all zeros), else the steps, each None when it would do nothing:

    1. `shape`: reshape dy to one dimension per input dimension (new axes dropped, shrunk ones
       kept as 1), with a 1 after each dimension taken with a step |s| > 1;
    2. `flip`: strided-slice attrs reversing the dimensions taken with a negative step;
    3. `pads`: pad: each |s| > 1 dimension's extra 1 by (0, |s| - 1), so that merging the two
       (step 4) leaves |s| - 1 zeros after each element; every other dimension to its full
       size at once;
    4. `merged`: reshape merging each |s| > 1 dimension with its extra one;
    5. `trim`: Slice sizes dropping zeros past the input's end (`x[::2]` of odd length);
    6. `pads2`: pad the |s| > 1 dimensions into place.
    """
    index, _ = _strided_plan(dims, begin, end, strides, begin_mask, end_mask, ellipsis_mask,
                             new_axis_mask, shrink_axis_mask)
    index = [k for k in index if k is not None]  # new axes: size 1 in dy, nothing in x
    shape, pads, flipped, merged, trim, pads2 = [], [], [], [], [], []
    for d, k in zip(dims, index):
        if not isinstance(k, builtins.slice):  # an int: shrunk to size 1
            shape.append(1)
            pads.append((k, d - k - 1))
            merged.append(d)
            trim.append(d)
            pads2.append((0, 0))
            continue
        start, stop, step = k.indices(d)
        n = len(builtins.range(start, stop, step))
        if n == 0:
            return None
        if n == 1:
            step = 1
        elif step < 0:
            flipped.append(len(shape))
            start, step = start + (n - 1) * step, -step
        shape.append(n)
        if step == 1:
            pads.append((start, d - start - n))
            merged.append(d)
            trim.append(d)
            pads2.append((0, 0))
        else:
            shape.append(1)
            pads.extend(((0, 0), (0, step - 1)))
            merged.append(n * step)
            span = min(n * step, d - start)
            trim.append(span)
            pads2.append((start, d - start - span))
    flip = None
    if flipped:
        bits = (1 << len(shape)) - 1
        flip = {"begin": (0,) * len(shape), "end": (0,) * len(shape),
                "strides": tuple(-1 if i in flipped else 1 for i in builtins.range(len(shape))),
                "begin_mask": bits, "end_mask": bits, "ellipsis_mask": 0, "new_axis_mask": 0,
                "shrink_axis_mask": 0}
    interleaved = len(shape) != len(dims)
    return (None if tuple(shape) == out_dims else tuple(shape), flip,
            None if not any(a or b for a, b in pads) else tuple(pads),
            tuple(merged) if interleaved else None,
            tuple(trim) if interleaved and tuple(trim) != tuple(merged) else None,
            tuple(pads2) if interleaved and any(a or b for a, b in pads2) else None)


@get_op("StridedSlice").def_gradient
def _strided_slice_grad(forward, dy):
    a = forward.attrs
    dims = forward.input_shapes[0]
    if not is_known(dims):  # the input's shape is read when the graph runs
        return execute(STRIDED_SLICE_GRAD, (shape_tensor(dims), _dense(dy)), a)
    plan = _unslice_plan(tuple(dims), tuple(forward.output_shapes[0]), a["begin"], a["end"],
                         a["strides"], a["begin_mask"], a["end_mask"], a["ellipsis_mask"],
                         a["new_axis_mask"], a["shrink_axis_mask"])
    if plan is None:
        return zeros(dims, dy.dtype)
    shape, flip, pads, merged, trim, pads2 = plan
    g = dy
    if shape is not None:
        g = _reshape(g, shape)
    if flip is not None:
        g = execute(STRIDED_SLICE, (_dense(g),), flip)
    if pads is not None:
        g = _pad(g, pads)
    if merged is not None:
        g = _reshape(g, merged)
        if trim is not None:
            g = _slice(g, (0,) * len(trim), trim)
        if pads2 is not None:
            g = _pad(g, pads2)
    return g


@get_op("Slice").def_gradient
def _slice_grad(forward, dy):
    dims = forward.input_shapes[0]
    if not is_known(dims):  # x[begin : begin + size] put back into zeros of x's run-time shape
        begin, size = forward.attrs["begin"], forward.attrs["size"]
        ends = tuple(0 if n == -1 else b + n for b, n in zip(begin, size))
        mask = sum(1 << i for i, n in enumerate(size) if n == -1)
        attrs = {"begin": tuple(begin), "end": ends, "strides": (1,) * len(begin),
                 "begin_mask": 0, "end_mask": mask, "ellipsis_mask": 0, "new_axis_mask": 0,
                 "shrink_axis_mask": 0}
        return execute(STRIDED_SLICE_GRAD, (shape_tensor(dims), _dense(dy)), attrs)
    pads = tuple((b, d - b - s) for b, d, s in zip(forward.attrs["begin"], forward.input_shapes[0],
                                                   forward.output_shapes[0]))
    if not any(a or b for a, b in pads):
        return dy
    return _pad(dy, pads)


@get_op("PadV2").def_gradient(keep_inputs=(2,))
def _pad_grad(forward, dy):
    # As in TensorFlow, the padding value gets no gradient.
    paddings = forward.attrs["paddings"]
    if paddings is None:  # PadV2(x, constant, paddings): amounts read at run time
        return _unpad_at_run_time(_dense(dy), forward.inputs[2], forward.input_shapes[0]), \
            None, None
    if not any(a or b for a, b in paddings):
        return dy, None
    dims = forward.input_shapes[0]
    if not is_known(dims):  # dy[a : -b] along each axis: x's size, whatever it is
        mask = sum(1 << i for i, (_, b) in enumerate(paddings) if not b)
        return _strided(_dense(dy), tuple(a for a, _ in paddings),
                        tuple(-b for _, b in paddings), 0, mask), None
    return _slice(dy, tuple(a for a, _ in paddings), dims), None


def _unpad_at_run_time(g, amounts, shape):
    """dy[before : before + size] along every axis, the amounts and sizes read at run time."""
    amounts = m.cast(amounts, _dt.int32)
    for axis in builtins.range(len(shape)):
        start = _strided(amounts, (axis, 0), (axis + 1, 1), shrink=3)
        stop = m.add(start, _size_at(shape, axis, _dt.int32))
        attrs = {"axis": axis, "step": 1, "start": None, "stop": None, "dynamic": "both"}
        g = execute(SLICE_AXIS, (g, start, stop), attrs)
    return g


@get_op("MirrorPad").def_gradient
def _mirror_pad_grad(forward, dy):
    """Each padded border is a mirror image of a strip of x: fold it back onto that strip.
    REFLECT mirrors about the edge element (x[1..a] before, x[d-1-b..d-2] after), SYMMETRIC
    includes it (x[0..a-1], x[d-b..d-1]). Axes are folded one at a time."""
    shift = 1 if forward.attrs["mode"] == "REFLECT" else 0
    g = _dense(dy)
    rank = len(forward.input_shapes[0])
    shape = forward.input_shapes[0]
    for axis, (d, (a, b)) in enumerate(zip(shape, forward.attrs["paddings"])):
        if not a and not b:
            continue
        if d is None:  # a size known only at run time: the same folds, sizes read then
            g = _fold_mirrored_at_run_time(g, axis, a, b, shift, _size_at(shape, axis,
                                                                           _dt.int32), rank)
            continue
        total = _along(g, axis, builtins.slice(a, a + d))
        if a:  # the border before, reversed, lands on x[shift : shift + a]
            border = _along(g, axis, builtins.slice(a - 1, None, -1))
            total = total + _pad(border, _at(rank, axis, (shift, d - shift - a)))
        if b:  # the border after, reversed, lands on x[d - shift - b : d - shift]
            border = _along(g, axis, builtins.slice(a + d + b - 1, a + d - 1, -1))
            total = total + _pad(border, _at(rank, axis, (d - shift - b, shift)))
        g = total
    return g


def _fold_mirrored_at_run_time(g, axis, a, b, shift, d, rank):
    """One axis of `_mirror_pad_grad` with its size `d` a run-time scalar: the middle cut by a
    SliceAxis, the borders padded by amounts read when the graph runs."""
    attrs = {"axis": axis, "step": 1, "start": a, "stop": None, "dynamic": "stop"}
    total = execute(SLICE_AXIS, (g, m.add(d, a)), attrs)
    if a:
        border = _along(g, axis, builtins.slice(a - 1, None, -1))
        total = total + pad(border, _at(rank, axis, (shift, d - shift - a)))
    if b:
        border = _along(g, axis, builtins.slice(-1, -b - 1, -1))
        total = total + pad(border, _at(rank, axis, (d - shift - b, shift)))
    return total


def _along(g, axis, piece):
    """g[:, ..., piece, ...] with `piece` (a slice) at `axis`: one StridedSlice."""
    return g[(builtins.slice(None),) * axis + (piece,)]


def _at(rank, axis, pair):
    """Paddings that pad only `axis`, by `pair`."""
    return tuple(pair if i == axis else (0, 0) for i in builtins.range(rank))


def _into_shape(shape):
    """SliceAxisGrad's `shape` attribute and extra input for the recorded input `shape`: the
    static dims, or None and the shape read when the graph runs."""
    if is_known(shape):
        return tuple(shape), ()
    return None, (shape_tensor(shape),)


def _size_at(shape, axis, dtype):
    """The size of `shape` along `axis` as a scalar of `dtype` (read at run time if unknown)."""
    d = shape[axis]
    if d is not None:
        return m.cast(d, dtype)
    return m.cast(_strided(shape_tensor(shape), (axis,), (axis + 1,), shrink=1), dtype)


@get_op("IndexAxis").def_gradient(keep_inputs=(1,))
def _index_axis_grad(forward, dy):
    """Dense, as StridedSlice's: dy placed at the index along `axis` of zeros of the input's
    shape. That is SliceAxisGrad of dy with the axis restored, over the one-element slice
    index:index + 1, the index counted from the front first (-1 + 1 would be 0)."""
    shape = forward.input_shapes[0]
    axis = forward.attrs["axis"]
    index = forward.inputs[1]
    index = m.where(m.less(index, 0), m.add(index, _size_at(shape, axis, index.dtype)), index)
    dims, extra = _into_shape(shape)
    attrs = {"axis": axis, "step": 1, "start": None, "stop": None, "dynamic": "both",
             "shape": dims}
    bounds = (index, m.add(index, m.cast(1, index.dtype)))
    return execute(SLICE_AXIS_GRAD, (expand_dims(_dense(dy), axis), *bounds, *extra),
                   attrs), None


@get_op("SliceAxis").def_gradient(keep_inputs=(1, 2))
def _slice_axis_grad(forward, dy):
    """Dense, as StridedSlice's: dy placed back into zeros of the input's shape."""
    dims, extra = _into_shape(forward.input_shapes[0])
    bounds = forward.inputs[1:]
    attrs = dict(forward.attrs, shape=dims)
    return (execute(SLICE_AXIS_GRAD, (_dense(dy), *bounds, *extra), attrs),) + (
        None,) * len(bounds)


@get_op("SliceAxisGrad").def_gradient(keep_inputs=(1, 2))
def _slice_axis_grad_grad(forward, ddx):
    n = len(forward.input_ids) - 1  # the bounds, and the shape when it is an input
    bounds = forward.inputs[1:3 if forward.attrs["dynamic"] == "both" else 2]
    attrs = {k: v for k, v in forward.attrs.items() if k != "shape"}
    return (execute(SLICE_AXIS, (_dense(ddx), *bounds), attrs),) + (None,) * n


# -- gathers and scatters --------------------------------------------------------------------


@get_op("GatherV2").def_gradient(keep_inputs=(1,))
def _gather_grad(forward, dy):
    indices = forward.inputs[1]
    params_shape = forward.input_shapes[0]
    axis, batch_dims = forward.attrs["axis"], forward.attrs["batch_dims"]
    if axis == 0 and batch_dims == 0:
        # Rows dy[k] belong to params[indices[k]]: an IndexedSlices, never a dense table.
        values = dy
        known = is_known(params_shape)
        if len(forward.input_shapes[1]) != 1:
            if known or None not in params_shape[1:]:
                values = _reshape(dy, (-1,) + tuple(params_shape[1:]))
            else:  # rows of the params' run-time shape
                rows = execute(CONCAT, (convert_to_tensor(np.array([-1], np.int32)), _strided(
                    shape_tensor(params_shape), (1,), (0,), end_mask=1)), {"axis": 0})
                values = execute(RESHAPE, (_dense(dy), rows), {"shape": None})
            indices = execute(RESHAPE, (indices,), {"shape": (-1,)})
        dense_shape = dense_shape_tensor(params_shape) if known else shape_tensor(params_shape)
        return IndexedSlices(_dense(values), indices, dense_shape), None
    return _gather_dense_grad(dy, indices, params_shape, forward.input_shapes[1], axis,
                              batch_dims), None


def _gather_dense_grad(dy, indices, params_shape, indices_shape, axis, batch_dims):
    """Gather along `axis` with `batch_dims`: params [B, M, n, R] (batch, middle, gathered,
    rest, each flattened) and dy [B, M, I, R]; scatter rows (b, indices[b, i]) of dy (moved to
    [B*I, M, R]) into [B*n, M, R], then move n back between M and R."""
    if not (is_known(params_shape) and is_known(indices_shape)):
        return _gather_dense_grad_at_run_time(dy, indices, params_shape, indices_shape, axis,
                                              batch_dims)
    n = params_shape[axis]
    nb = prod(params_shape[:batch_dims])
    nm = prod(params_shape[batch_dims:axis])
    nr = prod(params_shape[axis + 1:])
    ni = prod(indices_shape[batch_dims:])
    if not (n and ni):
        return zeros(params_shape, dy.dtype)
    g = _reshape(dy, (nb, nm, ni, nr))
    if nm > 1 and ni > 1:
        g = execute(TRANSPOSE, (g,), {"perm": (0, 2, 1, 3)})
    g = _reshape(g, (nb * ni, nm, nr))
    if nb > 1:  # row b of the batch scatters into rows [b*n, (b+1)*n)
        idx = execute(RESHAPE, (m.cast(indices, _dt.int64),), {"shape": (nb, ni)})
        offsets = execute(RESHAPE, (_range(0, nb * n, n, dtype=_dt.int64),), {"shape": (nb, 1)})
        indices = m.add(idx, offsets)
    indices = execute(RESHAPE, (indices,), {"shape": (nb * ni, 1)})
    out = execute(SCATTER_ND, (indices, g), {"shape": (nb * n, nm, nr)})
    if nm > 1 and n > 1:
        out = execute(TRANSPOSE, (_reshape(out, (nb, n, nm, nr)),), {"perm": (0, 2, 1, 3)})
    return _reshape(out, params_shape)


def _gather_dense_grad_at_run_time(dy, indices, params_shape, indices_shape, axis, batch_dims):
    """`_gather_dense_grad` for shapes known only at run time: the same steps, with the sizes
    the trace does not know read from the shapes when the graph runs (and every step taken,
    since whether a size is 1 is not known)."""
    n = _run_time_prod(params_shape, axis, axis + 1)
    nb = _run_time_prod(params_shape, 0, batch_dims)
    nm = _run_time_prod(params_shape, batch_dims, axis)
    nr = _run_time_prod(params_shape, axis + 1, None)
    ni = _run_time_prod(indices_shape, batch_dims, None)
    g = transpose(reshape(_dense(dy), [nb, nm, ni, nr]), (0, 2, 1, 3))
    g = reshape(g, [nb * ni, nm, nr])
    idx = reshape(m.cast(indices, _dt.int64), [nb, ni])
    offsets = reshape(_range(0, m.cast(nb * n, _dt.int64), m.cast(n, _dt.int64),
                             dtype=_dt.int64), [nb, 1])
    indices = reshape(m.add(idx, offsets), [nb * ni, 1])
    out = scatter_nd(indices, g, [nb * n, nm, nr])
    out = transpose(reshape(out, [nb, n, nm, nr]), (0, 2, 1, 3))
    return reshape(out, shape_tensor(params_shape))


def _run_time_prod(shape, start, stop):
    """The product of `shape[start:stop]`: an int when those sizes are known, else an int32
    scalar computed from the run-time shape."""
    dims = tuple(shape)[start:stop]
    if None not in dims:
        return prod(dims)
    end = len(shape) if stop is None else stop
    return m.reduce_prod(_strided(shape_tensor(shape), (start,), (end,)))


@get_op("GatherNd").def_gradient(keep_inputs=(1,))
def _gather_nd_grad(forward, dy):
    indices = forward.inputs[1]
    params_shape = forward.input_shapes[0]
    batch_dims = forward.attrs["batch_dims"]
    g = _dense(dy)
    if not is_known(params_shape):
        if batch_dims:
            raise UnknownDimensionError(
                "GatherNd: the gradient with batch_dims needs the params' shape, and "
                f"{params_shape} is only partly known; give the traced function a more "
                "specific input_signature.")
        dims = shape_tensor(params_shape)
        return execute(SCATTER_ND, (indices, g, dims), {"shape": None}), None
    params_shape = tuple(params_shape)
    if batch_dims:
        # Prefix every coordinate with its batch position, flattened: [B, rows, 1 + depth]
        # into params viewed as [B] + params.shape[batch_dims:].
        nb = prod(params_shape[:batch_dims])
        ishape = forward.input_shapes[1]
        rows, depth = prod(ishape[batch_dims:-1]), ishape[-1]
        idx = execute(RESHAPE, (m.cast(indices, _dt.int64),), {"shape": (nb, rows, depth)})
        batch = execute(BROADCAST_TO, (execute(RESHAPE, (_range(nb, dtype=_dt.int64),),
                                               {"shape": (nb, 1, 1)}),),
                        {"shape": (nb, rows, 1)})
        indices = execute(CONCAT, (batch, idx), {"axis": 2})
        g = _reshape(g, (nb, rows) + params_shape[batch_dims + depth:])
        out = execute(SCATTER_ND, (indices, g), {"shape": (nb,) + params_shape[batch_dims:]})
        return _reshape(out, params_shape), None
    return execute(SCATTER_ND, (indices, g), {"shape": params_shape}), None


@get_op("ScatterNd").def_gradient(keep_inputs=(0,))
def _scatter_nd_grad(forward, dy):
    g = gather_nd(dy, forward.inputs[0])
    return (None, g) if forward.attrs["shape"] is not None else (None, g, None)


# -- creation --------------------------------------------------------------------------------


@get_op("Fill").def_gradient
def _fill_grad(forward, dy):
    g = execute(m.SUM, (_dense(dy),), {"axes": None, "keepdims": False})
    return g if forward.attrs["dims"] is not None else (None, g)


@STRIDED_SLICE_GRAD.def_gradient
def _strided_slice_grad_grad(forward, ddx):
    return None, execute(STRIDED_SLICE, (_dense(ddx),), forward.attrs)


del _name
