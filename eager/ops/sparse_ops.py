"""Sparse operations (`eager.sparse`): conversion to and from dense tensors, reductions,
sparse-dense matmul, addition, concatenation, transposition, slicing, reordering, reshaping
and mapping over the values, with TensorFlow's results and errors.

Each is made of ordinary ops on the components (`scatter_nd` for densifying, `gather` and
`unsorted_segment_sum` for the products and merges), so gradients reach the values; where an
op has to decide which entries to keep or how to order them (slice, reorder, concat, sparse +
sparse), the decision is made on the eager indices with numpy, and only the values move
through ops.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError
from ..core.composite import register_api
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import EagerTensor
from . import math_ops as m
from .array_ops import concat as dense_concat, expand_dims, gather, gather_nd, ones_like
from .array_ops import scatter_nd, shape as _shape, transpose
from .segment_ops import unsorted_segment_sum
from .sparse_tensor import SparseTensor, SparseTensorSpec

__all__ = ["SparseTensor", "SparseTensorSpec", "from_dense", "to_dense", "reduce_sum",
           "reduce_max", "sparse_dense_matmul", "add", "concat", "transpose_sparse", "slice",
           "map_values", "reorder", "reshape"]


def _check(sp, op):
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"{op}: expected a SparseTensor, got {type(sp).__name__}.")


def _np(t):
    if t.__class__ is not EagerTensor:
        raise NotImplementedError("This sparse op decides on the indices with numpy, so it "
                                  "needs eager indices (call it outside eager.function).")
    return t.numpy()


def from_dense(tensor, name=None):
    """≈ `tf.sparse.from_dense`: the non-zero entries of `tensor`, in row-major order."""
    tensor = convert_to_tensor(tensor)
    indices = m.where(m.not_equal(tensor, m.cast(0, tensor.dtype) if not tensor.dtype.is_string
                                  else b""))
    return SparseTensor(indices, gather_nd(tensor, indices), _shape(tensor, out_type=_dt.int64))


def _validate(sp, op="SparseToDense"):
    """TensorFlow's checks of eager indices: in bounds, row-major order, no repeats."""
    if sp.indices.__class__ is not EagerTensor or sp.dense_shape.__class__ is not EagerTensor:
        return
    idx, shape = sp.indices.numpy(), sp.dense_shape.numpy()
    dims = ",".join(str(d) for d in shape)
    for i, row in enumerate(idx):
        if (row < 0).any() or (row >= shape).any():
            raise InvalidArgumentError(None, op, f"indices[{i}] = [{','.join(map(str, row))}] "
                                                 f"is out of bounds: need 0 <= index < [{dims}]")
        if i:
            prev = tuple(idx[i - 1])
            if tuple(row) == prev:
                raise InvalidArgumentError(None, op, f"indices[{i}] = "
                                                     f"[{','.join(map(str, row))}] is repeated")
            if tuple(row) < prev:
                raise InvalidArgumentError(
                    None, op, f"indices[{i}] = [{','.join(map(str, row))}] is out of order. "
                    "Many sparse ops require sorted indices.\n    Use `tf.sparse.reorder` to "
                    "create a correctly ordered copy.\n\n")


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """≈ `tf.sparse.to_dense`: the dense tensor, `default_value` (zero) where no entry is."""
    _check(sp_input, "to_dense")
    if validate_indices:
        _validate(sp_input)
    dense = scatter_nd(sp_input.indices, sp_input.values, sp_input.dense_shape)
    if default_value is None:
        return dense
    default = convert_to_tensor(default_value, dtype=sp_input.dtype)
    present = scatter_nd(sp_input.indices, _ones_per_entry(sp_input), sp_input.dense_shape)
    return m.where(m.greater(present, 0), dense, default)


def _ones_per_entry(sp):
    """An int32 1 per stored entry (counts where entries are, after a scatter)."""
    return ones_like(sp.values, dtype=_dt.int32)


def reduce_sum(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """≈ `tf.sparse.reduce_sum`: the sum of the entries (missing ones are zero) over `axis`;
    with `output_is_sparse`, the result's non-zero entries as a SparseTensor."""
    _check(sp_input, "reduce_sum")
    out = m.reduce_sum(to_dense(sp_input, validate_indices=False), axis=axis,
                       keepdims=bool(keepdims))
    return from_dense(out) if output_is_sparse else out


def reduce_max(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """≈ `tf.sparse.reduce_max`: the largest *stored* entry over `axis` (missing entries take no
    part; a group with none gives zero, as TensorFlow's)."""
    _check(sp_input, "reduce_max")
    dtype = sp_input.dtype
    lowest = np.finfo(dtype.as_numpy_dtype).min if dtype.is_floating else \
        np.iinfo(dtype.as_numpy_dtype).min
    dense = to_dense(sp_input, default_value=lowest, validate_indices=False)
    counts = scatter_nd(sp_input.indices, _ones_per_entry(sp_input), sp_input.dense_shape)
    keep = bool(keepdims)
    out = m.reduce_max(dense, axis=axis, keepdims=keep)
    present = m.greater(m.reduce_sum(counts, axis=axis, keepdims=keep), 0)
    out = m.where(present, out, m.cast(0, dtype))
    return from_dense(out) if output_is_sparse else out


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """≈ `tf.sparse.sparse_dense_matmul`: `sp_a @ b` (or a dense `sp_a` times a sparse `b`)
    without densifying: each stored entry's row of `b`, scaled, summed into its output row."""
    if not isinstance(sp_a, SparseTensor):  # dense @ sparse = (sparse^T @ dense^T)^T
        return transpose(sparse_dense_matmul(b, sp_a, adjoint_a=not adjoint_b,
                                             adjoint_b=not adjoint_a))
    b = convert_to_tensor(b, dtype=sp_a.dtype)
    if adjoint_b:
        b = m.conj(transpose(b)) if b.dtype.is_complex else transpose(b)
    rows, cols = sp_a.indices[:, 0], sp_a.indices[:, 1]
    n_rows, n_inner = sp_a.dense_shape[0], sp_a.dense_shape[1]
    if adjoint_a:
        rows, cols, n_rows, n_inner = cols, rows, n_inner, n_rows
    values = m.conj(sp_a.values) if adjoint_a and sp_a.dtype.is_complex else sp_a.values
    if n_inner.__class__ is EagerTensor and b.shape.rank == 2 and b.shape[0] is not None and \
            int(n_inner) != b.shape[0]:
        dims = [int(d) for d in _np(sp_a.dense_shape)]
        raise InvalidArgumentError(
            None, "SparseTensorDenseMatMul",
            f"Cannot multiply A and B because inner dimension does not match: {int(n_inner)} "
            f"vs. {b.shape[0]}.  Did you forget a transpose?  Dimensions of A: [{dims[0]}, "
            f"{dims[1]}).  Dimensions of B: [{b.shape[0]},{b.shape[1]}]")
    contributions = m.multiply(expand_dims(values, 1), gather(b, cols))
    if n_rows.__class__ is not EagerTensor:  # traced: the row count the spec knows, if any
        known = sp_a.shape[1 if adjoint_a else 0] if sp_a.shape.rank else None
        n_rows = n_rows if known is None else known
    return unsorted_segment_sum(contributions, rows, n_rows)


def _linear(indices, shape):
    """Row-major linear positions of `indices` in a tensor of `shape` (numpy)."""
    strides = np.cumprod([1] + list(shape[::-1][:-1]))[::-1]
    return (indices * strides).sum(axis=1) if indices.size else np.zeros(0, np.int64)


def add(a, b, threshold=0, name=None):
    """≈ `tf.sparse.add`: sparse + dense is dense; sparse + sparse is sparse, entries at the
    same index summed (row-major order)."""
    if not isinstance(a, SparseTensor):
        a, b = b, a
    _check(a, "add")
    if not isinstance(b, SparseTensor):
        return m.add(to_dense(a, validate_indices=False), convert_to_tensor(b, dtype=a.dtype))
    shape = _np(a.dense_shape)
    if list(shape) != list(_np(b.dense_shape)):
        raise InvalidArgumentError(None, "SparseAdd", f"Operands do not have the same ranks; "
                                   f"got shapes: [{shape}] and [{_np(b.dense_shape)}]")
    idx = np.concatenate([_np(a.indices), _np(b.indices)]).reshape(-1, len(shape))
    linear = _linear(idx, shape)
    unique, first, segments = np.unique(linear, return_index=True, return_inverse=True)
    values = unsorted_segment_sum(_concat0([a.values, b.values]), segments, len(unique))
    indices = idx[first]
    if threshold:
        keep = np.abs(values.numpy()) >= threshold
        indices, values = indices[keep], gather(values, np.flatnonzero(keep))
    return SparseTensor(indices, values, shape)


def _concat0(values):
    return dense_concat(values, 0)


def reorder(sp_input, name=None):
    """≈ `tf.sparse.reorder`: the entries in row-major order."""
    _check(sp_input, "reorder")
    idx, shape = _np(sp_input.indices), _np(sp_input.dense_shape)
    order = np.argsort(_linear(idx, shape), kind="stable")
    return SparseTensor(idx[order], gather(sp_input.values, order), shape)


def concat(axis, sp_inputs, expand_nonconcat_dims=False, name=None):
    """≈ `tf.sparse.concat`: the inputs joined along `axis` (their other dimensions equal, or
    the largest with `expand_nonconcat_dims`)."""
    sp_inputs = list(sp_inputs)
    shapes = [_np(s.dense_shape) for s in sp_inputs]
    rank = len(shapes[0])
    axis = int(axis) + rank if int(axis) < 0 else int(axis)
    out_shape = np.max(shapes, axis=0) if expand_nonconcat_dims else shapes[0].copy()
    for s in shapes[1:]:
        others = [d for d in range(rank) if d != axis]
        if not expand_nonconcat_dims and (s[others] != shapes[0][others]).any():
            raise InvalidArgumentError(None, "SparseConcat", f"Input shapes must match: "
                                       f"expected {shapes[0]} but got {s} (except axis {axis})")
    offsets = np.concatenate([[0], np.cumsum([s[axis] for s in shapes])])
    out_shape[axis] = offsets[-1]
    parts = []
    for s, off in zip(sp_inputs, offsets):
        idx = _np(s.indices).copy()
        idx[:, axis] += off
        parts.append(idx)
    joined = SparseTensor(np.concatenate(parts), _concat0([s.values for s in sp_inputs]),
                          out_shape)
    return reorder(joined)


def transpose_sparse(sp_input, perm=None, name=None):
    """≈ `tf.sparse.transpose`: dimensions permuted by `perm` (reversed by default),
    entries reordered."""
    _check(sp_input, "transpose")
    idx, shape = _np(sp_input.indices), _np(sp_input.dense_shape)
    perm = list(range(len(shape)))[::-1] if perm is None else [int(p) for p in perm]
    return reorder(SparseTensor(idx[:, perm], sp_input.values, shape[perm]))


def slice(sp_input, start, size, name=None):  # noqa: A001 - TensorFlow's name
    """≈ `tf.sparse.slice`: the entries inside `[start, start + size)`, re-indexed from
    `start`, the shape cut to what lies inside the input."""
    _check(sp_input, "slice")
    idx, shape = _np(sp_input.indices), _np(sp_input.dense_shape)
    start = np.asarray(start, np.int64)
    stop = np.minimum(start + np.asarray(size, np.int64), shape)
    keep = np.all((idx >= start) & (idx < stop), axis=1) if idx.size else np.zeros(0, bool)
    kept = np.flatnonzero(keep)
    return SparseTensor((idx[kept] - start).reshape(-1, len(shape)),
                        gather(sp_input.values, kept), np.maximum(stop - start, 0))


def reshape(sp_input, shape, name=None):
    """≈ `tf.sparse.reshape`: the same entries in a tensor of `shape` (one dim may be -1)."""
    _check(sp_input, "reshape")
    idx, old = _np(sp_input.indices), _np(sp_input.dense_shape)
    new = np.asarray(shape, np.int64).copy()
    total = int(np.prod(old))
    if (new == -1).sum() == 1:
        new[new == -1] = total // max(1, int(np.prod(new[new != -1])))
    if int(np.prod(new)) != total:
        raise InvalidArgumentError(None, "SparseReshape", f"Input to reshape is a SparseTensor "
                                   f"with {total} dense values, but the requested shape has "
                                   f"{int(np.prod(new))}")
    linear = _linear(idx, old)
    new_idx = np.stack(np.unravel_index(linear, new), axis=1) if linear.size else \
        np.zeros((0, len(new)), np.int64)
    return SparseTensor(new_idx, sp_input.values, new)


def map_values(op, *args, **kwargs):
    """≈ `tf.sparse.map_values`: `op` on the values of the sparse arguments (which must share
    their indices), the indices and shape kept."""
    found = []

    def values_of(x):
        if isinstance(x, SparseTensor):
            found.append(x)
            return x.values
        return x

    args = [values_of(a) for a in args]
    kwargs = {k: values_of(v) for k, v in kwargs.items()}
    if not found:
        raise ValueError("No SparseTensor in argument list of map_values")
    first = found[0]
    return SparseTensor(first.indices, op(*args, **kwargs), first.dense_shape)


register_api("elementwise", SparseTensor, lambda fn, x: x.with_values(fn(x.values)))
register_api("cast", SparseTensor, lambda x, dtype, name=None: x.with_values(m.cast(x.values,
                                                                                    dtype)))
