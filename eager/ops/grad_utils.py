"""Helpers shared by the gradient rules (`*_grad.py`): undoing broadcasting, reduction shapes.

Gradient rules are written with ops, never with arrays, so the same rule runs eagerly, in a
traced graph, and under an outer tape (higher order). These helpers run in every backward pass;
with fully known shapes they call the op records directly (their arguments are already valid),
skipping the public functions' argument checks.

Shapes known only at run time: in a function traced with None dimensions, the shapes a rule
reads (`forward.input_shapes`) hold None, and for a symbolic tensor they are `RunTimeShape`s,
which remember the tensor. The helpers keep every decision the static dims settle static, and
take the rest from `shape(tensor)` when the graph runs (`shape_tensor`): a reshape or broadcast
to such a shape gets the shape as an input, undoing a broadcast that only run-time sizes decide
is one `SumToShape`, and a mean's count is computed from the shape. So a function traced once
for every batch size differentiates as TensorFlow's does.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..devices import registry as _devices
from ..tensor import EagerTensor, wrap_value
from ..base.tensor_shape import TensorShape
from .array_ops import BROADCAST_TO, EXPAND_DIMS, RESHAPE, SHAPE, SIZE
from .creation_ops import ZEROS, ZEROS_LIKE
from ..core.dispatch import execute
from ..core.shapes import UnknownDimensionError
from .math_ops import MAXIMUM, PROD, SUM, SUM_TO_SHAPE, cast, conj
from .slicing_ops import GATHER

__all__ = ["unbroadcast", "grad_conj", "restore_reduced", "reduced_keepdims_shape",
           "needs_gradient", "output_unused", "dense_shape_tensor", "shape_tensor",
           "reshape_to", "broadcast_to_shape", "zeros_of_shape", "reduced_count", "count_as",
           "is_known"]


def needs_gradient(forward, i) -> bool:
    """Whether input `i`'s gradient is wanted, so rules skip work nobody uses (a network's input
    images, a loss's labels: TensorFlow's `skip_input_indices`). The backward pass says; outside
    it (a rule called directly) every input with a tape id counts as wanted."""
    needed = forward.input_needed
    if needed is not None:
        return needed[i]
    return forward.input_ids[i] != 0


def output_unused(forward, k) -> bool:
    """Whether output k's gradient is zeros the backward pass filled in because nothing used the
    output: its terms can be dropped exactly (e.g. the cross-entropies' second output)."""
    filled = forward.output_filled
    return filled is not None and filled[k]


def dense_shape_tensor(shape):
    """IndexedSlices.dense_shape as TensorFlow gives it: an int32 vector, kept in host memory
    (densifying reads it, and a device copy would make that a synchronizing read)."""
    return wrap_value(np.array(tuple(shape), np.int32), _devices.lookup("CPU:0"))


def is_known(shape) -> bool:
    """Whether every dimension of `shape` (a TensorShape, tuple or list) is known."""
    if isinstance(shape, TensorShape):
        return shape.is_fully_defined()
    return None not in shape


def shape_tensor(shape, dtype=_dt.int32):
    """`shape` as an int vector: a constant when it is fully known, else `shape(tensor)` of the
    tensor a `RunTimeShape` remembers, computed when the graph runs. A partial shape without
    its tensor (a rule that built one itself) is an UnknownDimensionError."""
    if is_known(shape):
        return wrap_value(np.array(tuple(shape), dtype.as_numpy_dtype),
                          _devices.lookup("CPU:0"))
    tensor = getattr(shape, "tensor", None)
    if tensor is None:
        raise UnknownDimensionError(f"a gradient needs the run-time value of the shape {shape}, "
                                    "and no tensor of that shape was recorded.")
    return execute(SHAPE, (tensor,), {"out_type": dtype})


def reshape_to(t, shape):
    """`t` reshaped to the recorded `shape`: static sizes as the attribute (one unknown size
    becomes -1), else the shape read when the graph runs."""
    if is_known(shape):
        return execute(RESHAPE, (t,), {"shape": tuple(shape)})
    unknown = shape.count(None)
    if unknown == 1 and 0 not in shape:  # -1 is then that size (zeros would make it ambiguous)
        return execute(RESHAPE, (t,), {"shape": tuple(-1 if d is None else d for d in shape)})
    return execute(RESHAPE, (t, shape_tensor(shape)), {"shape": None})


def broadcast_to_shape(t, shape):
    """`t` broadcast to the recorded `shape` (static, or read when the graph runs)."""
    if is_known(shape):
        return execute(BROADCAST_TO, (t,), {"shape": tuple(shape)})
    return execute(BROADCAST_TO, (t, shape_tensor(shape)), {"shape": None})


def zeros_of_shape(shape, dtype):
    """Zeros of the recorded `shape` and `dtype` (of the remembered tensor's shape when it is
    known only at run time)."""
    if is_known(shape):
        return execute(ZEROS, (), {"shape": tuple(shape), "dtype": dtype})
    tensor = getattr(shape, "tensor", None)
    if tensor is None:
        return execute(BROADCAST_TO, (execute(ZEROS, (), {"shape": (), "dtype": dtype}),
                                      shape_tensor(shape)), {"shape": None})
    return execute(ZEROS_LIKE, (tensor,), {"dtype": dtype})


def _sum(t, axes):
    return execute(SUM, (t,), {"axes": tuple(axes), "keepdims": False})


def _shape_of(t):
    """The shape as a plain tuple (an eager tensor's array shape costs nothing to read; a
    pending one whose shape only its data decides waits for it, as `.shape` does)."""
    return t._value.shape if t.__class__ is EagerTensor else tuple(t.shape)


def unbroadcast(grad, shape, others=None):
    """Sums `grad` over the axes along which an input of `shape` was broadcast, so the result
    has `shape` (the one rule every broadcasting op's gradient needs). `others`, the shapes of
    the op's other inputs, settle statically what partial shapes leave open (module doc)."""
    gshape = _shape_of(grad)
    if shape.__class__ is not tuple and not isinstance(shape, TensorShape):
        shape = tuple(shape)
    if tuple.__eq__(gshape, shape):
        if shape.__class__ is tuple or None not in shape:
            return grad
        return _unbroadcast_partial(grad, gshape, shape, others)
    if shape.__class__ is not tuple and not is_known(shape) or None in gshape:
        return _unbroadcast_partial(grad, gshape, shape, others)
    lead = len(gshape) - len(shape)
    axes = list(range(lead))
    for i, d in enumerate(shape):
        if d == 1 and gshape[lead + i] != 1:
            axes.append(lead + i)
    if axes:
        grad = _sum(grad, axes)
    if not tuple.__eq__(_shape_of(grad), shape):
        grad = reshape_to(grad, shape)
    return grad


def _unbroadcast_partial(grad, gshape, shape, others):
    """`unbroadcast` where dimensions are known only at run time: the axes to sum are static
    where the known sizes (and the other inputs' shapes) settle them, else one `SumToShape`
    reads the shapes when the graph runs."""
    if not getattr(shape, "_rank_known", True) or not getattr(grad.shape, "_rank_known", True) \
            or len(gshape) < len(shape):
        return _sum_to_shape(grad, shape)
    lead = len(gshape) - len(shape)
    axes = list(range(lead))
    for i, d in enumerate(shape):
        g = gshape[lead + i]
        if d == 1:
            if g != 1:  # summing a dimension that is 1 at run time changes nothing
                axes.append(lead + i)
        elif d is None and g != 1 and not _only_source(len(shape) - i, others):
            return _sum_to_shape(grad, shape)
    if axes:
        grad = _sum(grad, axes)
    if any(a >= lead for a in axes):
        grad = reshape_to(grad, shape)
    return grad


def _only_source(from_right, others) -> bool:
    """Whether the dimension `from_right` places from the end of the output comes from this
    input alone: every other input lacks it or has size 1 there (so this input's size, unknown
    now, is the output's, and nothing is summed)."""
    if others is None:
        return False
    for o in others:
        if not getattr(o, "_rank_known", True):
            return False
        if len(o) >= from_right and o[len(o) - from_right] != 1:
            return False
    return True


def _sum_to_shape(grad, shape):
    return execute(SUM_TO_SHAPE, (grad, shape_tensor(shape)))


def grad_conj(x):
    """conj(x) for complex x (the chain rule for holomorphic products), x itself otherwise."""
    return conj(x) if x.dtype.is_complex else x


def reduced_keepdims_shape(input_shape, axes):
    """The shape a reduction over `axes` gives with keepdims=True."""
    if axes is None:
        return [1] * len(input_shape)
    return [1 if i in axes else d for i, d in enumerate(input_shape)]


def restore_reduced(grad, input_shape, axes, keepdims):
    """The gradient of a reduction, broadcast back to the input's shape."""
    if not is_known(input_shape):
        return _restore_reduced_partial(grad, input_shape, axes, keepdims)
    input_shape = tuple(input_shape)
    rank = len(input_shape)
    if not keepdims and (axes is None or len(axes) == rank):
        # A full reduction: the gradient is a scalar, which broadcasts as it is.
        if tuple.__eq__(_shape_of(grad), input_shape):
            return grad
        return broadcast_to_shape(grad, input_shape)
    if not keepdims:
        grad = reshape_to(grad, reduced_keepdims_shape(input_shape, axes))
    if tuple.__eq__(_shape_of(grad), input_shape):
        return grad
    return broadcast_to_shape(grad, input_shape)


def _restore_reduced_partial(grad, input_shape, axes, keepdims):
    """`restore_reduced` for an input shape known only at run time: the reduced axes put back
    as size-1 dimensions (ExpandDims, static), then one broadcast to the input's run-time
    shape unless every reduced dimension is known to be 1."""
    rank = input_shape.rank if isinstance(input_shape, TensorShape) else len(input_shape)
    if rank is None:
        return broadcast_to_shape(grad, input_shape)
    reduced = tuple(range(rank)) if axes is None else tuple(axes)
    if not keepdims and len(reduced) < rank:
        for a in sorted(reduced):
            grad = execute(EXPAND_DIMS, (grad,), {"axis": a})
    elif not keepdims:  # a scalar: it broadcasts as it is
        return broadcast_to_shape(grad, input_shape)
    if all(input_shape[a] == 1 for a in reduced):
        return grad
    return broadcast_to_shape(grad, input_shape)


def reduced_count(input_shape, axes):
    """How many elements a reduction over `axes` of an input of `input_shape` combines, at
    least 1: a Python int when the sizes are known, else an int32 scalar computed from the
    input's run-time shape."""
    rank = len(input_shape)
    reduced = tuple(range(rank)) if axes is None else tuple(axes)
    if all(input_shape[a] is not None for a in reduced):
        count = 1
        for a in reduced:
            count *= input_shape[a]
        return max(count, 1)
    tensor = getattr(input_shape, "tensor", None)
    if len(reduced) == rank and tensor is not None:  # every element: the input's size
        count = execute(SIZE, (tensor,), {"out_type": _dt.int32})
    else:
        picked = execute(GATHER, (shape_tensor(input_shape), _index_vector(reduced)),
                         {"axis": 0, "batch_dims": 0})
        count = execute(PROD, (picked,), {"axes": (0,), "keepdims": False})
    return execute(MAXIMUM, (count, _index_vector(1)))


def _index_vector(values):
    return wrap_value(np.array(values, np.int32), _devices.lookup("CPU:0"))


def count_as(count, dtype):
    """A `reduced_count` as a scalar of `dtype`, to divide by."""
    return cast(count, dtype)
