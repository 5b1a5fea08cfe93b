"""`tensor_scatter_nd_*`: a copy of a tensor with updates applied at `indices`.

`tensor_scatter_nd_add` and `tensor_scatter_nd_sub` are composed as TensorFlow's semantics define
them: tensor +/- scatter_nd(indices, updates, shape(tensor)). Duplicate indices accumulate, as
in TF; the gradient is the output gradient for `tensor` and its gather at `indices` for
`updates`, through scatter_nd's rule. Indices outside the tensor are ScatterNd's
InvalidArgumentError.

`tensor_scatter_nd_update`, `_max` and `_min` are ops (TensorScatterUpdate/Max/Min): the update
replaces the slices at `indices` (for a repeated index the last update wins, as in TensorFlow's
CPU kernel, on a GPU too: `scatter_update`; TF leaves that order unspecified), max and min
combine each slice with its updates. `updates` has shape
`indices.shape[:-1] + tensor.shape[indices.shape[-1]:]`; an index outside the tensor is
TensorFlow's InvalidArgumentError ("indices[0] = [5] does not index into shape [4]"). Gradients
are TensorFlow's: the update's flows to `tensor` where nothing was written and to `updates`
gathered at `indices`; max and min share it between `tensor` and the updates equal to the
result.
"""

from __future__ import annotations

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor, check_dtype
from ..core.dispatch import execute, named
from ..core.registry import op_error, register_op
from ..core.specs import TensorSpec
from ..base.tensor_shape import TensorShape
from . import math_ops as m
from .array_ops import shape as _shape
from .creation_ops import zeros_like
from .scatter_add import scatter_reduce, scatter_update
from .slicing_ops import (INDEX_DTYPES, _check_nd_range, fmt_dims, gather_nd, prod,
                          scatter_nd)

__all__ = ["tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_update",
           "tensor_scatter_nd_max", "tensor_scatter_nd_min"]


def _scattered(tensor, indices, updates):
    tensor = as_tensor(tensor)
    updates = as_tensor(updates, dtype=None if hasattr(updates, "dtype") else tensor.dtype)
    dims = list(tensor.shape) if tensor.shape.is_fully_defined() else _shape(tensor)
    return tensor, scatter_nd(indices, updates, dims)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """≈ `tf.tensor_scatter_nd_add`: `tensor` with `updates` added at `indices`."""
    tensor, scattered = _scattered(tensor, indices, updates)
    return m.add(tensor, scattered)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """≈ `tf.tensor_scatter_nd_sub`: `tensor` with `updates` subtracted at `indices`."""
    tensor, scattered = _scattered(tensor, indices, updates)
    return m.subtract(tensor, scattered)


# -----------------------------------------------------------------------------------------------
# TensorScatterUpdate / Max / Min
# -----------------------------------------------------------------------------------------------

def _check_shapes(op_name, t, i, u):
    """TensorFlow's shape checks of TensorScatter* on (possibly partial) shapes."""
    if i.rank == 0:
        raise op_error(op_name, "Indices shape must have rank at least one. Found: []")
    if t.rank is None or i.rank is None or u.rank is None or i[-1] is None:
        return
    depth = i[-1]
    if depth > t.rank:
        raise op_error(op_name, f"Index innermost dimension length must be <= tensor rank; saw: "
                                f"{depth} vs. {t.rank}")
    expected = i[:-1] + t[depth:]
    if not expected.is_compatible_with(u):
        raise op_error(op_name, f"Outer dimensions of indices and update must match. Indices "
                                f"shape: {fmt_dims(i)}, updates shape:{fmt_dims(u)} (updates "
                                f"must have shape {fmt_dims(expected)} for tensor shape "
                                f"{fmt_dims(t)})")


def _tensor_scatter_op(op_name, reducer, dtypes):
    def infer(tensor, indices, updates):
        _check_shapes(op_name, tensor.shape, indices.shape, updates.shape)
        return TensorSpec(tensor.shape, tensor.dtype)

    def kernel(xp, tensor, indices, updates):
        _check_shapes(op_name, TensorShape(tensor.shape), TensorShape(indices.shape),
                      TensorShape(updates.shape))
        indices = _check_nd_range(op_name, xp, indices, tensor.shape, "shape", defer=True)
        depth = indices.shape[-1]
        rows = prod(indices.shape[:-1])
        inner = prod(tensor.shape[depth:])
        out = tensor.reshape(prod(tensor.shape[:depth]), inner).copy()
        if rows:
            flat = xp.ravel_multi_index(tuple(indices.reshape(rows, depth).T),
                                        tensor.shape[:depth]) if depth else \
                xp.zeros(rows, dtype="int64")
            values = updates.reshape(rows, inner)
            if reducer is None:
                scatter_update(xp, out, flat, values)  # a repeated index: the last one wins
            else:
                scatter_reduce(xp, reducer, out, flat, values)
        return out.reshape(tensor.shape)

    return register_op(op_name, kernel, infer, dtypes=dtypes,
                       doc=f"A copy of a tensor with updates applied at indices ({op_name}).")


TENSOR_SCATTER_UPDATE = _tensor_scatter_op("TensorScatterUpdate", None, _dt.ALL_AND_STRING)
TENSOR_SCATTER_MAX = _tensor_scatter_op("TensorScatterMax", "maximum", _dt.REAL)
TENSOR_SCATTER_MIN = _tensor_scatter_op("TensorScatterMin", "minimum", _dt.REAL)


def _tensor_scatter(op, tensor, indices, updates, name):
    tensor = as_tensor(tensor)
    indices = as_tensor(indices)
    updates = as_tensor(updates, dtype=None if hasattr(updates, "dtype") else tensor.dtype)
    check_dtype(op, tensor, op.dtypes, "tensor")
    check_dtype(op, indices, INDEX_DTYPES, "indices")
    if updates.dtype != tensor.dtype:
        raise op_error(op.name, f"updates must have the tensor's dtype {tensor.dtype.name}, got "
                                f"{updates.dtype.name}", [tensor, indices, updates])
    out = execute(op, (tensor, indices, updates))
    return out if name is None else named(out, name)


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """≈ `tf.tensor_scatter_nd_update`: `tensor` with the slices at `indices` replaced by
    `updates` (see the module doc)."""
    return _tensor_scatter(TENSOR_SCATTER_UPDATE, tensor, indices, updates, name)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """≈ `tf.tensor_scatter_nd_max`: `tensor` with each slice at `indices` the maximum of itself
    and its updates."""
    return _tensor_scatter(TENSOR_SCATTER_MAX, tensor, indices, updates, name)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """≈ `tf.tensor_scatter_nd_min`: `tensor` with each slice at `indices` the minimum of itself
    and its updates."""
    return _tensor_scatter(TENSOR_SCATTER_MIN, tensor, indices, updates, name)


@TENSOR_SCATTER_UPDATE.def_gradient(keep_inputs=(1, 2))
def _tensor_scatter_update_grad(forward, dy):
    indices, updates = forward.inputs[1], forward.inputs[2]
    return (tensor_scatter_nd_update(dy, indices, zeros_like(updates)), None,
            gather_nd(dy, indices))


def _min_or_max_grad(forward, dy):
    tensor, indices, updates = forward.inputs
    out = forward.outputs[0]
    from_tensor = m.cast(m.equal(tensor, out), dy.dtype)
    from_updates = m.cast(m.equal(updates, gather_nd(out, indices)), dy.dtype)
    winners = m.add(from_tensor, tensor_scatter_nd_add(zeros_like(dy), indices, from_updates))
    share = m.divide(dy, winners)  # every entry has a winner: >= 1
    return m.multiply(share, from_tensor), None, m.multiply(gather_nd(share, indices),
                                                            from_updates)


for _op in (TENSOR_SCATTER_MAX, TENSOR_SCATTER_MIN):
    _op.def_gradient(keep_inputs=True, keep_outputs=True)(_min_or_max_grad)
