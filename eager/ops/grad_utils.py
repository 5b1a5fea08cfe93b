"""Helpers shared by the gradient rules (`*_grad.py`): undoing broadcasting, reduction shapes.

Gradient rules are written with ops, never with arrays, so the same rule runs eagerly, in a
traced graph, and under an outer tape (higher order). These helpers run in every backward pass;
with fully known shapes they call the op records directly (their arguments are already valid),
skipping the public functions' argument checks.
"""

from __future__ import annotations

import numpy as np

from ..devices import registry as _devices
from ..tensor import EagerTensor, wrap_value
from ..base.tensor_shape import TensorShape
from .array_ops import BROADCAST_TO, RESHAPE, broadcast_to, reshape
from ..core.dispatch import execute
from .math_ops import SUM, conj

__all__ = ["unbroadcast", "grad_conj", "restore_reduced", "reduced_keepdims_shape",
           "needs_gradient", "output_unused", "dense_shape_tensor"]


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


def _known(shape) -> bool:
    return None not in shape


def _reshape(t, shape):
    if _known(shape):
        return execute(RESHAPE, (t,), {"shape": tuple(shape)})
    return reshape(t, [-1 if d is None else d for d in shape])


def _broadcast_to(t, shape):
    if _known(shape):
        return execute(BROADCAST_TO, (t,), {"shape": tuple(shape)})
    return broadcast_to(t, list(shape))


def _sum(t, axes):
    return execute(SUM, (t,), {"axes": tuple(axes), "keepdims": False})


def _shape_of(t):
    """The shape as a plain tuple (an eager tensor's array shape costs nothing to read; a
    pending one whose shape only its data decides waits for it, as `.shape` does)."""
    return t._value.shape if t.__class__ is EagerTensor else tuple(t.shape)


def unbroadcast(grad, shape):
    """Sums `grad` over the axes along which an input of `shape` was broadcast, so the result
    has `shape` (the one rule every broadcasting op's gradient needs)."""
    gshape = _shape_of(grad)
    if shape.__class__ is not tuple and shape.__class__ is not TensorShape:
        shape = tuple(shape)
    if tuple.__eq__(gshape, shape):
        return grad
    lead = len(gshape) - len(shape)
    axes = list(range(lead))
    for i, d in enumerate(shape):
        if d == 1 and gshape[lead + i] != 1:
            axes.append(lead + i)
    if axes:
        grad = _sum(grad, axes)
    if not tuple.__eq__(_shape_of(grad), shape):
        grad = _reshape(grad, shape)
    return grad


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
    input_shape = tuple(input_shape)
    rank = len(input_shape)
    if not keepdims and (axes is None or len(axes) == rank):
        # A full reduction: the gradient is a scalar, which broadcasts as it is.
        if tuple.__eq__(_shape_of(grad), input_shape):
            return grad
        return _broadcast_to(grad, input_shape)
    if not keepdims:
        grad = _reshape(grad, reduced_keepdims_shape(input_shape, axes))
    if tuple.__eq__(_shape_of(grad), input_shape):
        return grad
    return _broadcast_to(grad, input_shape)
