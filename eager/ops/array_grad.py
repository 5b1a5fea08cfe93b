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
from .array_ops import (BROADCAST_TO, CONCAT, CONJUGATE_TRANSPOSE, PACK, RESHAPE, SPLIT_V,
                        TRANSPOSE, UNPACK)
from .array_ops import expand_dims
from .creation_ops import zeros
from .creation_ops import range as _range
from ..core.dispatch import execute
from .grad_utils import dense_shape_tensor, unbroadcast
from .padding_ops import PAD
from ..core.registry import get_op
from ..core.shapes import UnknownDimensionError
from .slicing_ops import (SCATTER_ND, SLICE, SLICE_AXIS, SLICE_AXIS_GRAD, STRIDED_SLICE,
                          _strided_plan, gather_nd, prod)

# -- helpers ---------------------------------------------------------------------------------


def _dense(g):
    """`g` as a tensor (an IndexedSlices gradient is densified; a tensor passes through)."""
    return g if isinstance(g, Tensor) else convert_to_tensor(g)


def _dims(shape) -> tuple:
    """A static shape as reshape's attr: one unknown dimension becomes -1 (inferred)."""
    if None not in shape:
        return tuple(shape)
    if shape.count(None) > 1:
        raise ValueError(f"The gradient needs the input's shape, and {shape} has more than one "
                         "unknown dimension; give the traced function a more specific "
                         "input_signature.")
    return tuple(-1 if d is None else d for d in shape)


def _reshape(g, shape):
    return execute(RESHAPE, (_dense(g),), {"shape": _dims(shape)})


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
    """Reshape, Squeeze, ExpandDims: the same elements, so `dy` takes the input's shape."""
    shape = forward.input_shapes[0]
    if shape == forward.output_shapes[0]:
        return dy
    return _reshape(dy, shape)


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
    return unbroadcast(_dense(dy), forward.input_shapes[0])


@get_op("Tile").def_gradient
def _tile_grad(forward, dy):
    # y viewed as [m0, d0, m1, d1, ...] holds m_i copies along each i: sum the copies.
    shape, axes = [], []
    for m_i, d in zip(forward.attrs["multiples"], forward.input_shapes[0]):
        if m_i != 1:
            axes.append(len(shape))
            shape.append(m_i)
        shape.append(d)
    if not axes:
        return dy
    return _reduce_sum(_reshape(dy, shape), axes)


# -- joining and splitting -------------------------------------------------------------------


@get_op("ConcatV2").def_gradient
def _concat_grad(forward, dy):
    shapes = forward.input_shapes
    axis = forward.attrs["axis"] % len(shapes[0])
    sizes = tuple(s[axis] for s in shapes)
    return execute(SPLIT_V, (_dense(dy),), {"axis": axis, "size_splits": sizes})


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
    pads = tuple((b, d - b - s) for b, d, s in zip(forward.attrs["begin"], forward.input_shapes[0],
                                                   forward.output_shapes[0]))
    if not any(a or b for a, b in pads):
        return dy
    return _pad(dy, pads)


@get_op("PadV2").def_gradient
def _pad_grad(forward, dy):
    # As in TensorFlow, the padding value gets no gradient.
    paddings = forward.attrs["paddings"]
    if not any(a or b for a, b in paddings):
        return dy, None
    return _slice(dy, tuple(a for a, _ in paddings), forward.input_shapes[0]), None


@get_op("MirrorPad").def_gradient
def _mirror_pad_grad(forward, dy):
    """Each padded border is a mirror image of a strip of x: fold it back onto that strip.
    REFLECT mirrors about the edge element (x[1..a] before, x[d-1-b..d-2] after), SYMMETRIC
    includes it (x[0..a-1], x[d-b..d-1]). Axes are folded one at a time."""
    shift = 1 if forward.attrs["mode"] == "REFLECT" else 0
    g = _dense(dy)
    rank = len(forward.input_shapes[0])
    for axis, (d, (a, b)) in enumerate(zip(forward.input_shapes[0], forward.attrs["paddings"])):
        if not a and not b:
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


def _along(g, axis, piece):
    """g[:, ..., piece, ...] with `piece` (a slice) at `axis`: one StridedSlice."""
    return g[(builtins.slice(None),) * axis + (piece,)]


def _at(rank, axis, pair):
    """Paddings that pad only `axis`, by `pair`."""
    return tuple(pair if i == axis else (0, 0) for i in builtins.range(rank))


def _static_dims(op_name, shapes):
    dims = tuple(shapes[0])
    if None in dims:
        raise UnknownDimensionError(f"{op_name}: the gradient needs the input's shape, and "
                                    f"{list(dims)} is only partly known.")
    return dims


@get_op("IndexAxis").def_gradient(keep_inputs=(1,))
def _index_axis_grad(forward, dy):
    """Dense, as StridedSlice's: dy placed at the index along `axis` of zeros of the input's
    (static) shape. That is SliceAxisGrad of dy with the axis restored, over the one-element
    slice index:index + 1, the index counted from the front first (-1 + 1 would be 0)."""
    dims = _static_dims("IndexAxis", forward.input_shapes)
    axis = forward.attrs["axis"]
    index = forward.inputs[1]
    index = m.where(m.less(index, 0), m.add(index, m.cast(dims[axis], index.dtype)), index)
    attrs = {"axis": axis, "step": 1, "start": None, "stop": None, "dynamic": "both",
             "shape": dims}
    bounds = (index, m.add(index, m.cast(1, index.dtype)))
    return execute(SLICE_AXIS_GRAD, (expand_dims(_dense(dy), axis), *bounds), attrs), None


@get_op("SliceAxis").def_gradient(keep_inputs=(1, 2))
def _slice_axis_grad(forward, dy):
    """Dense, as StridedSlice's: dy placed back into zeros of the input's shape (which must be
    static: a `None` dimension makes the function trace per call shape)."""
    dims = _static_dims("SliceAxis", forward.input_shapes)
    bounds = forward.inputs[1:]
    attrs = dict(forward.attrs, shape=dims)
    return (execute(SLICE_AXIS_GRAD, (_dense(dy), *bounds), attrs),) + (None,) * len(bounds)


@get_op("SliceAxisGrad").def_gradient(keep_inputs=(1, 2))
def _slice_axis_grad_grad(forward, ddx):
    bounds = forward.inputs[1:]
    attrs = {k: v for k, v in forward.attrs.items() if k != "shape"}
    return (execute(SLICE_AXIS, (_dense(ddx), *bounds), attrs),) + (None,) * len(bounds)


# -- gathers and scatters --------------------------------------------------------------------


@get_op("GatherV2").def_gradient(keep_inputs=(1,))
def _gather_grad(forward, dy):
    indices = forward.inputs[1]
    params_shape = forward.input_shapes[0]
    axis, batch_dims = forward.attrs["axis"], forward.attrs["batch_dims"]
    if axis == 0 and batch_dims == 0:
        # Rows dy[k] belong to params[indices[k]]: an IndexedSlices, never a dense table.
        values = dy
        if len(forward.input_shapes[1]) != 1:
            values = _reshape(dy, (-1,) + tuple(params_shape[1:]))
            indices = execute(RESHAPE, (indices,), {"shape": (-1,)})
        return IndexedSlices(_dense(values), indices, dense_shape_tensor(params_shape)), None
    return _gather_dense_grad(dy, indices, params_shape, forward.input_shapes[1], axis,
                              batch_dims), None


def _gather_dense_grad(dy, indices, params_shape, indices_shape, axis, batch_dims):
    """Gather along `axis` with `batch_dims`: params [B, M, n, R] (batch, middle, gathered,
    rest, each flattened) and dy [B, M, I, R]; scatter rows (b, indices[b, i]) of dy (moved to
    [B*I, M, R]) into [B*n, M, R], then move n back between M and R."""
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


@get_op("GatherNd").def_gradient(keep_inputs=(1,))
def _gather_nd_grad(forward, dy):
    indices = forward.inputs[1]
    params_shape = tuple(forward.input_shapes[0])
    batch_dims = forward.attrs["batch_dims"]
    g = _dense(dy)
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
    return None, gather_nd(dy, forward.inputs[0])


# -- creation --------------------------------------------------------------------------------


@get_op("Fill").def_gradient
def _fill_grad(forward, dy):
    return execute(m.SUM, (_dense(dy),), {"axes": None, "keepdims": False})


del _name
