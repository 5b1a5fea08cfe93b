"""Sources: datasets made from values (`from_tensor_slices`, `from_tensors`, `range`) and from a
Python generator (`from_generator`).

`TensorSlices` keeps its components as host arrays and gives row `i` as views (`array[i, ...]`,
never a copy: tensors are immutable, and buffer reuse never writes into a view). Batching it is
fused (`SliceBatches`): a batch is `array[i:i + b]`, one view per component, so that
`from_tensor_slices((x, y)).batch(128)` costs two slices and two tensor wrappers per batch,
about what a hand-written numpy loop costs. That iterator is a hot path and written for speed.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base import errors as _errors
from ..base.tensor_shape import TensorShape
from ..core.composite import CompositeTensor
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..ops import ragged_tensor as _ragged
from ..ops import sparse_tensor as _sparse
from ..tensor import METAS, EagerTensor, Tensor, wrap_value
from . import structure as _st
from .node import INFINITE, Node, NodeIterator, not_checkpointable

__all__ = ["TensorSlices", "SliceBatches", "Tensors", "Range", "Counter", "Generator"]


class TensorSlices(Node):
    """`from_tensor_slices(tensors)`: one element per row of every component."""

    tf_name = "_TensorSliceDataset"

    def __init__(self, tensors):
        element = _st.normalize(tensors, "tensors")
        flat = _st.flatten(element)
        if not flat:
            raise ValueError("Invalid `element`. `element` should not be empty.")
        if any(_st.is_dataset(t) for t in flat):
            raise TypeError("from_tensor_slices does not take datasets; use Dataset.zip or "
                            "Dataset.from_tensors.")
        if any(isinstance(t, CompositeTensor) for t in flat):
            self._init_composite(element, flat)
            return
        self.composite_rows = None
        rows = None
        for t in flat:
            if t.shape.rank == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
            if rows is None:
                rows = t.shape[0]
            elif t.shape[0] != rows:
                raise ValueError(f"Dimensions {rows} and {t.shape[0]} are not compatible")
        self.structure = element
        self.arrays = [_st.host_array(t) for t in flat]
        self.rows = rows
        self.element_spec = _st.pack(element, [TensorSpec(t.shape[1:], t.dtype) for t in flat])

    def _init_composite(self, element, flat):
        """Rows of an element with ragged or sparse leaves: computed per element (`row_of`),
        not the fused array views of the dense case."""
        rows = None
        specs = []
        for t in flat:
            n = _leading_dim(t)
            if n is None:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
            if rows is None:
                rows = n
            elif n != rows:
                raise ValueError(f"Dimensions {rows} and {n} are not compatible")
            specs.append(_row_spec(t))
        self.structure = element
        self.composite_rows = flat
        self.arrays = None
        self.rows = rows
        self.element_spec = _st.pack(element, specs)

    @property
    def fusable(self) -> bool:
        """Whether `batch` can be `batched` (array views): not for composite leaves."""
        return self.composite_rows is None

    def cardinality(self):
        return self.rows

    def make_iterator(self):
        if self.composite_rows is not None:
            return _CompositeSliceIterator(self)
        return _SliceIterator(self, 1, False, batched=False)

    def batched(self, batch_size, drop_remainder) -> "SliceBatches":
        """The fused batches (dense components only: see `fusable`)."""
        return SliceBatches(self, batch_size, drop_remainder)


def _leading_dim(t):
    """The number of rows of a leaf (None for a scalar)."""
    if isinstance(t, _ragged.RaggedTensor):
        return int(t.nrows().numpy())
    if isinstance(t, _sparse.SparseTensor):
        shape = _st.host_array(t.dense_shape)
        return int(shape[0]) if shape.size else None
    return t.shape[0] if t.shape.rank else None


def _row_spec(t):
    """The spec of one row of leaf `t`: a ragged tensor's rows are ragged one level less (dense
    tensors of unknown length at ragged rank 1), a sparse tensor's rows are sparse."""
    if isinstance(t, _ragged.RaggedTensor):
        shape = t.shape[1:]
        if t.ragged_rank == 1:
            return TensorSpec(shape, t.dtype)
        return _ragged.RaggedTensorSpec(shape, t.dtype, t.ragged_rank - 1, t.row_splits_dtype)
    if isinstance(t, _sparse.SparseTensor):
        return _sparse.SparseTensorSpec(t.shape[1:], t.dtype)
    return TensorSpec(t.shape[1:], t.dtype)


def row_of(t, i):
    """Row `i` of leaf `t` (a tensor, ragged tensor or sparse tensor), on the host."""
    if isinstance(t, _ragged.RaggedTensor):
        return t[i]
    if isinstance(t, _sparse.SparseTensor):
        indices = _st.host_array(t.indices)
        keep = indices[:, 0] == i
        device = _st.cpu_device()
        return _sparse.SparseTensor(
            wrap_value(np.ascontiguousarray(indices[keep, 1:]), device),
            wrap_value(_st.host_array(t.values)[keep], device),
            wrap_value(_st.host_array(t.dense_shape)[1:], device))
    return wrap_value(_st.host_array(t)[i, ...], _st.cpu_device())


class _CompositeSliceIterator(NodeIterator):
    """Rows of an element with composite leaves, one `row_of` per leaf; the position is stored
    for checkpoints."""

    __slots__ = ("_slices", "position")

    def __init__(self, slices):
        self._slices = slices
        self.position = 0

    def __next__(self):
        slices = self._slices
        i = self.position
        if i >= slices.rows:
            raise StopIteration
        self.position = i + 1
        return _st.pack(slices.structure, [row_of(t, i) for t in slices.composite_rows])

    def save(self):
        return {"position": self.position}

    def restore(self, state):
        self.position = int(state["position"])


class SliceBatches(Node):
    """`from_tensor_slices(t).batch(b)` fused: each batch is one slice of every component."""

    tf_name = "_BatchDataset"

    def __init__(self, slices, batch_size, drop_remainder):
        self.inputs = (slices,)
        self.slices = slices
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self.element_spec = _st.batched_spec(slices.element_spec,
                                             batch_size if drop_remainder else None)

    def signature(self):
        return "TensorSlices/Batch"  # the same pipeline as the unfused one

    def cardinality(self):
        n, b = self.slices.rows, self.batch_size
        return n // b if self.drop_remainder else -(-n // b)

    def make_iterator(self):
        return _SliceIterator(self.slices, self.batch_size, self.drop_remainder, batched=True)


class _SliceIterator(NodeIterator):
    """Rows (`step` 1: `array[i, ...]`) or batches (`array[i:i + step]`) of host arrays, made by
    a generator (`next_function` hands its `__next__` to the owning iterator). Hot path: the
    generator keeps everything in locals and builds the tensors slot by slot (as dispatch's
    hot constructors do; `wrap_value`'s call would cost as much as the slicing), with one loop
    for the common two-component tuple; the position is stored for checkpoints."""

    __slots__ = ("_slices", "_step", "_batched", "_end", "position", "_generator")

    def __init__(self, slices, step, drop_remainder, batched):
        self._slices = slices
        self._step = step
        self._batched = batched
        rows = slices.rows
        self._end = rows - rows % step if drop_remainder else rows
        self.position = 0
        self._generator = None

    def next_function(self):
        if self._generator is None:
            self._generator = _slice_generator(self, self._slices, self._step, self._end,
                                               self._batched)
        return self._generator.__next__

    def __next__(self):
        return self.next_function()()

    def save(self):
        return {"position": self.position}

    def restore(self, state):
        self.position = int(state["position"])
        self._generator = None


def _slice_generator(owner, slices, step, end, batched):
    metas = METAS[_st.cpu_device()]
    arrays = slices.arrays
    structure = slices.structure
    pair = structure.__class__ is tuple and len(structure) == 2 and \
        not any(_st.is_structure(x) for x in structure)
    i = owner.position
    if pair and batched:
        a, b = arrays
        meta_a, meta_b = metas[a.dtype], metas[b.dtype]
        while i < end:
            j = i + step
            owner.position = j
            t = EagerTensor()
            t._value = a[i:j]
            t._meta = meta_a
            t._tape_id = 0
            u = EagerTensor()
            u._value = b[i:j]
            u._meta = meta_b
            u._tape_id = 0
            yield (t, u)
            i = j
        return
    if pair:
        a, b = arrays
        meta_a, meta_b = metas[a.dtype], metas[b.dtype]
        while i < end:
            owner.position = i + 1
            t = EagerTensor()
            t._value = a[i, ...]
            t._meta = meta_a
            t._tape_id = 0
            u = EagerTensor()
            u._value = b[i, ...]
            u._meta = meta_b
            u._tape_id = 0
            yield (t, u)
            i += 1
        return
    leaf_metas = [metas[a.dtype] for a in arrays]
    while i < end:
        j = i + step
        owner.position = j
        index = slice(i, j) if batched else (i, Ellipsis)
        flat = []
        for a, meta in zip(arrays, leaf_metas):
            t = EagerTensor()
            t._value = a[index]
            t._meta = meta
            t._tape_id = 0
            flat.append(t)
        yield _st.pack(structure, flat)
        i = j


class Tensors(Node):
    """`from_tensors(tensors)`: the whole structure as one element."""

    tf_name = "_TensorDataset"

    def __init__(self, tensors):
        self.element = _st.normalize(tensors, "tensors")
        self.element_spec = _st.spec_of(self.element)

    def cardinality(self):
        return 1

    def make_iterator(self):
        return _OnceIterator(self.element)


class _OnceIterator(NodeIterator):
    __slots__ = ("_element", "_done")

    def __init__(self, element):
        self._element = element
        self._done = False

    def __next__(self):
        if self._done:
            raise StopIteration
        self._done = True
        return self._element

    def save(self):
        return {"done": self._done}

    def restore(self, state):
        self._done = bool(state["done"])


class Range(Node):
    """`range(stop)`, `range(start, stop[, step])`: integers, int64 unless `output_type`."""

    tf_name = "_RangeDataset"

    def __init__(self, args, output_type=_dt.int64):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid `args`. The length of `args` should be between 1 and 3 "
                             f"but was {len(args)}.")
        names = ("stop",) if len(args) == 1 else ("start", "stop", "step")
        values = dict(start=0, step=1)
        for name, value in zip(names, args):
            values[name] = _int_argument(value, name)
        if values["step"] == 0:
            raise _errors.InvalidArgumentError(None, "RangeDataset", "step must be a non-zero "
                                               "integer. [Op:RangeDataset]")
        self.start, self.stop, self.step = values["start"], values["stop"], values["step"]
        self.dtype = _dt.as_dtype(output_type)
        self.element_spec = TensorSpec([], self.dtype)

    def cardinality(self):
        return len(range(self.start, self.stop, self.step))

    def make_iterator(self):
        return _RangeIterator(self)


def _int_argument(value, name) -> int:
    if isinstance(value, Tensor) and value.is_symbolic:
        raise TypeError(f"Dataset.counter needs eager values; {name} is {value!r}, a symbolic "
                        f"tensor (inside eager.function, only from_tensor_slices, from_tensors "
                        f"and range take the function's symbolic tensors).")
    if isinstance(value, Tensor):
        value = convert_to_tensor(value, _dt.int64) if value.dtype != _dt.int64 else value
        if value.dtype != _dt.int64:
            raise ValueError(f"{name}: Tensor conversion requested dtype int64 for Tensor with "
                             f"dtype {value.dtype.name}: {value!r}")
        return int(value.numpy())
    if isinstance(value, (bool, float)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype int64")
    return int(value)


class _RangeIterator(NodeIterator):
    __slots__ = ("_next", "_stop", "_step", "_dtype", "_device")

    def __init__(self, node):
        self._next, self._stop, self._step = node.start, node.stop, node.step
        self._dtype = node.dtype.dtype
        self._device = _st.cpu_device()

    def __next__(self):
        value = self._next
        if (value >= self._stop) if self._step > 0 else (value <= self._stop):
            raise StopIteration
        self._next = value + self._step
        return wrap_value(np.array(value, self._dtype), self._device)

    def save(self):
        return {"next": self._next}

    def restore(self, state):
        self._next = int(state["next"])


class Counter(Node):
    """`Dataset.counter(start, step, dtype)`: `start`, `start + step`, ... forever."""

    tf_name = "_ScanDataset"  # TensorFlow builds it as a scan over an infinite repeat

    def __init__(self, start, step, dtype):
        self.start = _int_argument(start, "start")
        self.step = _int_argument(step, "step")
        self.dtype = _dt.as_dtype(dtype)
        self.element_spec = TensorSpec([], self.dtype)

    def cardinality(self):
        return INFINITE

    def make_iterator(self):
        return _CounterIterator(self)


class _CounterIterator(NodeIterator):
    __slots__ = ("_next", "_step", "_dtype", "_device")

    def __init__(self, node):
        self._next, self._step = node.start, node.step
        self._dtype = node.dtype.dtype
        self._device = _st.cpu_device()

    def __next__(self):
        value = self._next
        self._next = value + self._step
        return wrap_value(np.array(value).astype(self._dtype), self._device)

    def save(self):
        return {"next": self._next}

    def restore(self, state):
        self._next = int(state["next"])


class Generator(Node):
    """`from_generator(generator, output_signature=..., args=...)`: the elements a Python
    generator yields, converted and checked against the signature."""

    tf_name = "_FlatMapDataset"

    def __init__(self, generator, output_signature, args):
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        self.generator = generator
        self.args = args
        self.element_spec = output_signature

    def make_iterator(self):
        return _GeneratorIterator(self)


class _GeneratorIterator(NodeIterator):
    __slots__ = ("_node", "_iterator", "_flat_specs")

    def __init__(self, node):
        self._node = node
        self._iterator = None
        self._flat_specs = _st.flatten(node.element_spec)

    def __next__(self):
        if self._iterator is None:
            self._iterator = iter(self._node.generator(*self._node.args))
        try:
            value = next(self._iterator)
        except StopIteration:
            raise
        except Exception as exc:  # noqa: BLE001 - the generator's failure is the op's error
            raise _generator_error(exc, _errors.UnknownError) from exc
        return self._converted(value)

    def _converted(self, value):
        spec = self._node.element_spec
        if isinstance(value, list) and not isinstance(spec, list):
            value = tuple(value) if isinstance(spec, tuple) else value
        try:
            _st.assert_same_structure(spec, value, "from_generator")
        except TypeError:
            exc = TypeError(f"`generator` yielded an element that did not match the expected "
                            f"structure. The expected structure was "
                            f"{_st.describe_types(spec)}, but the yielded element was {value!r}.")
            raise _generator_error(exc, _errors.InvalidArgumentError) from None
        device = _st.cpu_device()
        flat = []
        for s, v in zip(self._flat_specs, _st.flatten(value)):
            try:
                array = np.asarray(v.numpy() if isinstance(v, Tensor) else v,
                                   dtype=s.dtype.as_numpy_dtype)
            except (TypeError, ValueError) as exc:
                exc = TypeError(f"`generator` yielded an element that could not be converted "
                                f"to the expected type. The expected type was {s.dtype.name}, "
                                f"but the yielded element was {v!r}.")
                raise _generator_error(exc, _errors.InvalidArgumentError) from None
            if not s.shape.is_compatible_with(array.shape):
                exc = TypeError(f"`generator` yielded an element of shape "
                                f"{TensorShape(array.shape)} where an element of shape "
                                f"{s.shape} was expected.")
                raise _generator_error(exc, _errors.InvalidArgumentError) from None
            flat.append(wrap_value(array, device))
        return _st.pack(spec, flat)

    def save(self):
        raise not_checkpointable("PyFunc")

    def restore(self, state):
        raise not_checkpointable("PyFunc")


def _generator_error(exc, cls):
    """TensorFlow's error for a failure inside the generator (or of what it yielded): the class
    for the Python exception, the exception's type and text as the message."""
    if isinstance(exc, (ValueError, TypeError)) and cls is _errors.UnknownError:
        cls = _errors.InvalidArgumentError
    return cls(None, "IteratorGetNext",
               f"{type(exc).__name__}: {exc} [Op:IteratorGetNext]")


def generator_signature(output_types, output_shapes, output_signature):
    """The element spec `from_generator` checks against, from either way of giving it."""
    if output_signature is not None:
        if output_types is not None:
            raise TypeError("The `output_types` argument can not be used together with the "
                            "`output_signature` argument.")
        if output_shapes is not None:
            raise TypeError("The `output_shapes` argument can not be used together with the "
                            "`output_signature` argument.")
        for leaf in _st.flatten(output_signature):
            if not isinstance(leaf, (TensorSpec, _st.DatasetSpec)):
                raise TypeError(f"`output_signature` must contain objects that are subclass of "
                                f"`tf.TypeSpec` but found {type(leaf)} which is not.")
        return output_signature
    if output_types is None:
        raise TypeError("To specify the output signature you need to provide either the "
                        "`output_signature` argument or the `output_types` argument.")
    if output_shapes is None:
        return _st.map_structure(lambda t: TensorSpec(None, t), output_types)
    flat_types = _st.flatten(output_types)
    flat_shapes = _flat_shapes(output_shapes, len(flat_types))
    return _st.pack(output_types, [TensorSpec(s, t) for t, s in zip(flat_types, flat_shapes)])


def _flat_shapes(shapes, n):
    if n == 1 and not isinstance(shapes, (tuple, dict)):
        return [shapes]
    flat = _st.flatten(shapes)
    if len(flat) != n:
        raise ValueError("`output_shapes` must have the same structure as `output_types`.")
    return flat

