"""Batching: `batch`, `padded_batch`, `unbatch`.

A batch is made with one `numpy.stack` per component over the elements' host arrays, not one
op per element. `from_tensor_slices(...).batch(...)` never gets here: it is fused into slices
(`sources.SliceBatches`). `batch(num_parallel_calls=n)` gathers the elements on the consumer's
side and stacks the groups in `background.parallel_map`.
"""

from __future__ import annotations

import numpy as np

from ..base import errors as _errors
from ..base.tensor_shape import TensorShape, as_shape
from ..core.specs import TensorSpec
from ..ops import ragged_tensor as _ragged
from ..ops import sparse_tensor as _sparse
from ..tensor import wrap_value
from . import structure as _st
from .functional import ParallelMapIterator, check_parallel_calls
from .node import INFINITE, UNKNOWN, Node, NodeIterator

__all__ = ["Batch", "PaddedBatch", "Unbatch", "check_batch_size", "padded_shapes_of",
           "padding_values_of"]


def check_batch_size(batch_size, op="BatchDatasetV2") -> int:
    batch_size = int(batch_size)
    if batch_size <= 0:
        raise _errors.InvalidArgumentError(None, op, f"Batch size must be greater than zero. "
                                                     f"[Op:{op}]")
    return batch_size


def _batch_cardinality(n, batch_size, drop_remainder):
    if n < 0:
        return n
    return n // batch_size if drop_remainder else -(-n // batch_size)


class _Grouping(Node):
    """What `batch` and `padded_batch` share: groups of `batch_size` input elements."""

    def cardinality(self):
        return _batch_cardinality(self.inputs[0].cardinality(), self.batch_size,
                                  self.drop_remainder)

    def make_iterator(self):
        groups = _GroupIterator(self.inputs[0].make_iterator(), self.batch_size,
                                self.drop_remainder)
        if self.num_parallel_calls is None:
            return _BatchIterator(groups, self.combine)
        return ParallelMapIterator(groups, self.combine, self.num_parallel_calls,
                                   self.deterministic, self.element_spec)


class _GroupIterator(NodeIterator):
    """Lists of up to `size` consecutive input elements (exactly `size` when `drop`)."""

    __slots__ = ("_input", "_size", "_drop", "_done")

    def __init__(self, source, size, drop):
        self._input, self._size, self._drop = source, size, drop
        self._done = False

    def __next__(self):
        if self._done:
            raise StopIteration
        group = []
        source = self._input
        try:
            for _ in range(self._size):
                group.append(next(source))
        except StopIteration:
            self._done = True
            if not group or self._drop:
                raise
        return group

    def save(self):
        return {"done": self._done, "input": self._input.save()}

    def restore(self, state):
        self._done = bool(state["done"])
        self._input.restore(state["input"])

    def close(self):
        self._input.close()


class _BatchIterator(NodeIterator):
    __slots__ = ("_groups", "_combine")

    def __init__(self, groups, combine):
        self._groups, self._combine = groups, combine

    def __next__(self):
        return self._combine(next(self._groups))

    def save(self):
        return self._groups.save()

    def restore(self, state):
        self._groups.restore(state)

    def close(self):
        self._groups.close()


class Batch(_Grouping):
    tf_name = "_BatchDataset"

    def __init__(self, node, batch_size, drop_remainder, num_parallel_calls=None,
                 deterministic=None):
        self.inputs = (node,)
        self.batch_size = check_batch_size(batch_size)
        self.drop_remainder = bool(drop_remainder)
        self.num_parallel_calls = check_parallel_calls(num_parallel_calls, "ParallelBatchDataset")
        self.deterministic = deterministic  # None: the pipeline's options decide
        if self.num_parallel_calls is not None:
            self.tf_name = "_ParallelBatchDataset"
        self.element_spec = _st.batched_spec(node.element_spec,
                                             self.batch_size if self.drop_remainder else None)
        self._structure = node.element_spec
        self._composite = _st.has_composites(node.element_spec)

    def combine(self, group):
        """One batch: each component's arrays stacked (TensorFlow's error when shapes differ)."""
        if self._composite:
            return _combine_composites(self._structure, self.element_spec, group)
        device = _st.cpu_device()
        structure = self._structure
        if structure.__class__ is tuple and not any(_st.is_structure(s) for s in structure):
            columns = zip(*group)  # a flat tuple: the elements are their own leaves
        elif not _st.is_structure(structure):
            columns = (group,)
        else:
            columns = zip(*[_st.flatten(element) for element in group])
        flat = []
        for column in columns:
            arrays = [_st.host_array(t) for t in column]
            first = arrays[0].shape
            for a in arrays[1:]:
                if a.shape != first:
                    raise _errors.InvalidArgumentError(
                        None, "IteratorGetNext", f"Cannot add tensor to the batch: number of "
                        f"elements does not match. Shapes are: [tensor]: "
                        f"[{','.join(map(str, a.shape))}], [batch]: "
                        f"[{','.join(map(str, first))}] [Op:IteratorGetNext]")
            flat.append(wrap_value(np.stack(arrays), device))
        return _st.pack(self._structure, flat)


class RaggedBatch(Batch):
    """`Dataset.ragged_batch`: like `batch`, but dense components of rank >= 1 batch into ragged
    tensors (their rows may differ in length), with `row_splits_dtype` row splits."""

    tf_name = "_DenseToRaggedDataset"

    def __init__(self, node, batch_size, drop_remainder, row_splits_dtype):
        super().__init__(node, batch_size, drop_remainder)
        rows = self.batch_size if self.drop_remainder else None

        def leaf(s):
            if isinstance(s, _ragged.RaggedTensorSpec):
                return _ragged.RaggedTensorSpec(TensorShape([rows]).concatenate(s.shape),
                                                s.dtype, s.ragged_rank + 1, row_splits_dtype)
            if isinstance(s, TensorSpec) and s.shape.rank != 0:
                return _ragged.RaggedTensorSpec(TensorShape([rows]).concatenate(s.shape),
                                                s.dtype, 1, row_splits_dtype)
            return _st.batched_spec(s, rows)
        self.element_spec = _st.map_structure(leaf, node.element_spec)
        self._composite = True


def _combine_composites(structure, batched, group):
    """A batch of elements with composite leaves (or a `ragged_batch`), leaf by leaf: dense
    leaves stacked, ragged ones merged one level deeper, sparse ones given a batch index."""
    columns = zip(*[_st.flatten(element) for element in group])
    flat = []
    for column, spec in zip(columns, _st.flatten(batched)):
        if isinstance(spec, _ragged.RaggedTensorSpec):
            flat.append(_ragged_rows(list(column), spec))
        elif isinstance(spec, _sparse.SparseTensorSpec):
            flat.append(_sparse_rows(list(column)))
        else:
            flat.append(_stack(list(column)))
    return _st.pack(structure, flat)


def _stack(column):
    arrays = [_st.host_array(t) for t in column]
    first = arrays[0].shape
    for a in arrays[1:]:
        if a.shape != first:
            raise _errors.InvalidArgumentError(
                None, "IteratorGetNext", f"Cannot add tensor to the batch: number of "
                f"elements does not match. Shapes are: [tensor]: "
                f"[{','.join(map(str, a.shape))}], [batch]: "
                f"[{','.join(map(str, first))}] [Op:IteratorGetNext]")
    return wrap_value(np.stack(arrays), _st.cpu_device())


def _ragged_rows(column, spec):
    """Elements (ragged, or dense of rank >= 1) as the rows of one ragged tensor of `spec`."""
    device = _st.cpu_device()
    splits_dtype = spec.row_splits_dtype.as_numpy_dtype
    levels = spec.ragged_rank - 1  # the elements' own ragged levels
    flat_values, nested = [], [[] for _ in range(levels)]
    lengths = []
    for t in column:
        if isinstance(t, _ragged.RaggedTensor):
            flat_values.append(_st.host_array(t.flat_values))
            for k, s in enumerate(t.nested_row_splits):
                nested[k].append(_st.host_array(s))
            lengths.append(int(t.nrows().numpy()))
        else:
            a = _st.host_array(t)
            flat_values.append(a)
            lengths.append(a.shape[0])
    inner = {a.shape[1:] for a in flat_values}
    if len(inner) > 1:
        raise _errors.InvalidArgumentError(
            None, "IteratorGetNext", "Cannot batch ragged elements whose inner dimensions "
            f"differ: {sorted(inner)} [Op:IteratorGetNext]")
    splits = [np.concatenate([[0], np.cumsum(lengths)]).astype(splits_dtype)]
    for level in nested:
        merged, offset = [np.zeros(1, splits_dtype)], 0
        for s in level:
            merged.append((s[1:] + offset).astype(splits_dtype))
            offset += int(s[-1])
        splits.append(np.concatenate(merged))
    values = np.concatenate(flat_values) if flat_values else np.zeros((0,), np.float32)
    return spec.from_components([wrap_value(values, device)]
                                + [wrap_value(s, device) for s in splits])


def _sparse_rows(column):
    """Sparse elements as one sparse tensor with a leading batch dimension (its dense shape
    the largest of each dimension, as TensorFlow's batching of SparseTensors)."""
    device = _st.cpu_device()
    shapes = [_st.host_array(t.dense_shape) for t in column]
    if len({s.size for s in shapes}) > 1:
        raise _errors.InvalidArgumentError(
            None, "IteratorGetNext", "Cannot batch SparseTensors of different ranks "
            "[Op:IteratorGetNext]")
    indices = [np.concatenate([np.full((len(i), 1), b, np.int64), i], axis=1)
               for b, i in enumerate(_st.host_array(t.indices) for t in column)]
    values = np.concatenate([_st.host_array(t.values) for t in column])
    dense = np.concatenate([[len(column)], np.max(np.stack(shapes), axis=0)]).astype(np.int64)
    return _sparse.SparseTensor(wrap_value(np.concatenate(indices), device),
                                wrap_value(values, device), wrap_value(dense, device))


# -- padded_batch ----------------------------------------------------------------------------------
def padded_shapes_of(spec, padded_shapes):
    """The flat shapes to pad to (None dims: the longest in the batch), from `padded_shapes`
    given alike the element's structure (a shape per component), or from the spec."""
    flat_specs = _st.flatten(spec)
    if padded_shapes is None:
        for s in flat_specs:
            if s.shape.rank is None:
                raise ValueError("You must provide `padded_shapes` argument because component "
                                 "has unknown rank.")
        return [s.shape for s in flat_specs]
    shapes = _flatten_up_to(spec, padded_shapes, "padded_shapes")
    out = []
    for s, shape in zip(flat_specs, shapes):
        shape = as_shape([None if d is None or d == -1 else int(d) for d in _dims(shape)])
        if not shape.is_compatible_with(s.shape) and s.shape.rank is not None:
            if shape.rank != s.shape.rank:
                raise ValueError(f"The padded shape {shape} is not compatible with the shape "
                                 f"{s.shape} of the corresponding input component.")
        out.append(shape)
    return out


def _dims(shape):
    if isinstance(shape, TensorShape):
        return list(shape) if shape.rank is not None else []
    if hasattr(shape, "numpy"):
        return [int(d) for d in np.asarray(shape.numpy()).reshape(-1)]
    return list(shape)


def _flatten_up_to(spec, values, what):
    """`values` flattened as far as `spec`'s structure goes (a shape is a leaf even when it is
    a list or tuple)."""
    if isinstance(spec, dict):
        if not isinstance(values, dict) or set(values) != set(spec):
            raise ValueError(f"`{what}` must have the same structure as the dataset elements.")
        out = []
        for key in sorted(spec):
            out.extend(_flatten_up_to(spec[key], values[key], what))
        return out
    if isinstance(spec, tuple):
        if not isinstance(values, (tuple, list)) or len(values) != len(spec):
            raise ValueError(f"`{what}` must have the same structure as the dataset elements.")
        out = []
        for s, v in zip(spec, values):
            out.extend(_flatten_up_to(s, v, what))
        return out
    return [values]


def padding_values_of(spec, padding_values):
    """One numpy scalar per component: the given padding value (broadcast when a single value
    is given for a structure), else zero of the component's dtype."""
    flat_specs = _st.flatten(spec)
    if padding_values is None:
        values = [None] * len(flat_specs)
    elif isinstance(spec, (tuple, dict)) and isinstance(padding_values, (tuple, dict, list)):
        values = _flatten_up_to(spec, padding_values, "padding_values")
    else:
        values = [padding_values] * len(flat_specs)
    out = []
    for s, v in zip(flat_specs, values):
        if v is None:
            out.append(np.zeros((), s.dtype.as_numpy_dtype))
            continue
        array = np.asarray(v.numpy() if hasattr(v, "numpy") else v)
        if array.shape != ():
            raise ValueError(f"Invalid `padding_values`: each padding value must be a scalar, "
                             f"got shape {array.shape}.")
        if hasattr(v, "dtype") and hasattr(v, "numpy") and v.dtype != s.dtype:
            raise TypeError(f"Invalid `padding_values`. `padding_values` values should have the "
                            f"same dtype as the input element, but got {v.dtype.name} and "
                            f"{s.dtype.name}.")
        out.append(array.astype(s.dtype.as_numpy_dtype))
    return out


class PaddedBatch(_Grouping):
    tf_name = "_PaddedBatchDataset"

    def __init__(self, node, batch_size, padded_shapes, padding_values, drop_remainder):
        self.inputs = (node,)
        spec = node.element_spec
        for s in _st.flatten(spec):
            if isinstance(s, _st.DatasetSpec):
                raise TypeError("padded_batch does not take elements that are datasets.")
        self.batch_size = check_batch_size(batch_size, "PaddedBatchDatasetV2")
        self.drop_remainder = bool(drop_remainder)
        self.num_parallel_calls = None
        self.deterministic = None
        self.shapes = padded_shapes_of(spec, padded_shapes)
        self.values = padding_values_of(spec, padding_values)
        lead = self.batch_size if self.drop_remainder else None
        self.element_spec = _st.pack(spec, [
            TensorSpec(TensorShape([lead]).concatenate(shape), s.dtype)
            for s, shape in zip(_st.flatten(spec), self.shapes)])
        self._structure = spec

    def combine(self, group):
        device = _st.cpu_device()
        columns = zip(*[_st.flatten(element) for element in group])
        flat = []
        for column, shape, value in zip(columns, self.shapes, self.values):
            arrays = [_st.host_array(t) for t in column]
            flat.append(wrap_value(pad_and_stack(arrays, shape, value), device))
        return _st.pack(self._structure, flat)


def pad_and_stack(arrays, shape, value):
    """The arrays padded with `value` to `shape` (None dims: the batch's longest) and stacked;
    TensorFlow's DataLossError for an element larger than a fixed padded dim."""
    rank = arrays[0].ndim
    for a in arrays[1:]:
        if a.ndim != rank:
            raise _errors.InvalidArgumentError(
                None, "IteratorGetNext", f"All elements in a batch must have the same rank as "
                f"the padded shape for component: expected rank {rank} but got element with "
                f"rank {a.ndim} [Op:IteratorGetNext]")
    longest = [max(a.shape[d] for a in arrays) for d in range(rank)]
    target = [longest[d] if d >= len(shape) or shape[d] is None else shape[d]
              for d in range(rank)]
    if any(longest[d] > target[d] for d in range(rank)):
        raise _errors.DataLossError(None, "IteratorGetNext", "Attempted to pad to a smaller size "
                                    "than the input element. [Op:IteratorGetNext]")
    out = np.full([len(arrays)] + target, value, dtype=arrays[0].dtype)
    for i, a in enumerate(arrays):
        out[(i,) + tuple(slice(0, n) for n in a.shape)] = a
    return out


# -- unbatch ---------------------------------------------------------------------------------------
class Unbatch(Node):
    tf_name = "_UnbatchDataset"

    def __init__(self, node):
        self.inputs = (node,)
        for s in _st.flatten(node.element_spec):
            if isinstance(s, _st.DatasetSpec):
                raise TypeError("unbatch does not take elements that are datasets.")
        self.element_spec = _st.unbatched_spec(node.element_spec)
        leads = {s.shape[0] if s.shape.rank else None for s in _st.flatten(node.element_spec)}
        self._rows = leads.pop() if len(leads) == 1 else None

    def cardinality(self):
        n = self.inputs[0].cardinality()
        if n == INFINITE or n == 0:
            return n
        if n < 0 or self._rows is None:
            return UNKNOWN
        return n * self._rows

    def make_iterator(self):
        return _UnbatchIterator(self)


class _UnbatchIterator(NodeIterator):
    __slots__ = ("_input", "_structure", "_arrays", "_row", "_rows", "_device")

    def __init__(self, node):
        self._input = node.inputs[0].make_iterator()
        self._structure = node.element_spec
        self._arrays = None
        self._row = self._rows = 0
        self._device = _st.cpu_device()

    def __next__(self):
        while self._row >= self._rows:
            arrays = [_st.host_array(t) for t in _st.flatten(next(self._input))]
            rows = arrays[0].shape[0]
            for k, a in enumerate(arrays[1:], 1):
                if a.shape[0] != rows:
                    raise _errors.InvalidArgumentError(
                        None, "IteratorGetNext", f"Input element must have the same batch size "
                        f"in each component. Component 0 had size {rows} but component {k} had "
                        f"size {a.shape[0]}. [Op:IteratorGetNext]")
            self._arrays, self._row, self._rows = arrays, 0, rows
        i = self._row
        self._row = i + 1
        device = self._device
        return _st.pack(self._structure, [wrap_value(a[i, ...], device) for a in self._arrays])

    def save(self):
        rest = [] if self._arrays is None or self._row >= self._rows else \
            [np.asarray(a[self._row:], order="C") for a in self._arrays]
        return {"rest": rest, "input": self._input.save()}

    def restore(self, state):
        rest = [np.asarray(a) for a in state["rest"]]
        self._arrays = rest or None
        self._row = 0
        self._rows = rest[0].shape[0] if rest else 0
        self._input.restore(state["input"])

    def close(self):
        self._input.close()
