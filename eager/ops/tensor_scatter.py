"""`tensor_scatter_nd_add` and `tensor_scatter_nd_sub`: a tensor with updates added (or
subtracted) at `indices`, composed as TensorFlow's semantics define them: tensor +/-
scatter_nd(indices, updates, shape(tensor)). Duplicate indices accumulate, as in TF; the
gradient is the output gradient for `tensor` and its gather at `indices` for `updates`, through
scatter_nd's rule. Indices outside the tensor are ScatterNd's InvalidArgumentError."""

from __future__ import annotations

from ..core.argument_conversion import as_tensor
from . import math_ops as m
from .array_ops import shape as _shape
from .slicing_ops import scatter_nd

__all__ = ["tensor_scatter_nd_add", "tensor_scatter_nd_sub"]


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
