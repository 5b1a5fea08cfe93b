"""`RaggedTensor` (≈ `tf.RaggedTensor`): rows of different lengths, as `values` cut by
`row_splits`, and `RaggedTensorSpec`, its type.

Representation, as TensorFlow's: a ragged tensor of ragged rank k is `values` (a ragged tensor
of rank k - 1, or for k = 1 a dense tensor, the `flat_values`) and an int64 (or int32) vector
`row_splits`, where row `i` is `values[row_splits[i]:row_splits[i + 1]]`. Row lengths, value
row ids and the row count are derived from the splits (and cached). The components, for
`eager.function` and datasets, are the flat values then each level's row splits, outermost
first (`eager.core.composite`).

Every operation is made of ordinary ops on the components (gathers, cumulative sums, segment
sums), so ragged tensors work inside traced functions and gradients reach the flat values.
Checks of the partition (splits start at 0, never decrease, end at the number of values) run
when the splits are eager; a traced function trusts them.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError
from ..base.tensor_shape import TensorShape, as_shape
from ..core.composite import CompositeTensor, TypeSpec
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import EagerTensor, Tensor
from . import math_ops as m
from .array_ops import concat, expand_dims, range as _range, reshape, shape as _shape
from .cumulative_ops import cumsum
from .segment_ops import unsorted_segment_sum
from .composite_ops import boolean_mask
from .ragged_dense import to_dense
from .ragged_indexing import getitem
from . import ragged_math as _math

__all__ = ["RaggedTensor", "RaggedTensorSpec", "is_ragged"]

_SPLITS_DTYPES = (_dt.int32, _dt.int64)


def is_ragged(value) -> bool:
    return isinstance(value, RaggedTensor)


def _as_values(values, name="values"):
    if isinstance(values, RaggedTensor):
        return values
    return convert_to_tensor(values)


def _as_splits(value, dtype, what):
    """A row-partition vector (splits, lengths, ids) as an int32/int64 tensor; the dtype of a
    tensor given is kept, a Python list takes `dtype`."""
    if isinstance(value, Tensor):
        t = value
    else:
        t = convert_to_tensor(value, dtype=dtype or _dt.int64)
    if t.dtype not in _SPLITS_DTYPES:
        raise ValueError(f"{what} must have dtype int32 or int64, got {t.dtype.name}.")
    if t.shape.rank is not None and t.shape.rank != 1:
        raise ValueError(f"Shape {t.shape} must have rank 1 ({what}).")
    return t


def _nvals(values):
    """The number of rows of `values` (a tensor of its row-splits dtype where unknown)."""
    if isinstance(values, RaggedTensor):
        return values.nrows()
    n = values.shape[0] if values.shape.rank else None
    return n


def _invalid(op, message, x, y=None, kind="=="):
    """TensorFlow's InvalidArgumentError for a partition that fails a check (its wording:
    the assertion's condition and the offending elements)."""
    if kind == ">=":
        text = (f"Arguments to {op} do not form a valid {message}.  \nCondition x >= 0 did "
                f"not hold element-wise:\nx (shape={tuple(np.shape(x))} dtype=int64) = \n"
                f"{[str(v) for v in np.asarray(x).tolist()]}")
    else:
        text = (f"Arguments to {op} do not form a valid {message}\nCondition x == y did not "
                f"hold.\nFirst 1 elements of x:\n[{x}]\nFirst 1 elements of y:\n[{y}]")
    return InvalidArgumentError(None, None, text)


def _check_splits(op, splits, values, zero_message=True):
    """The eager partition checks (see the module doc)."""
    if splits.__class__ is not EagerTensor:
        return
    s = splits.numpy()
    if s.shape[0] == 0:
        raise ValueError(f"{op}: row_splits must have at least one element (0), got [].")
    if s[0] != 0:
        raise _invalid(op, "RaggedTensor:zero", s[0], 0)
    diff = s[1:] - s[:-1]
    if (diff < 0).any():
        raise _invalid(op, "RaggedTensor:monotonic", diff, kind=">=")
    n = _static_nvals(values)
    if n is not None and s[-1] != n:
        raise _invalid("_from_row_partition", "RaggedTensor", s[-1], n)


def _static_nvals(values):
    if isinstance(values, RaggedTensor):
        splits = values._row_splits
        if splits.__class__ is EagerTensor:
            return int(splits.numpy()[-1])
        return None
    return values.shape[0] if values.shape.rank else None


class RaggedTensor(CompositeTensor):
    """≈ `tf.RaggedTensor` (see the module doc). Build one with `eager.ragged.constant` or the
    `from_*` class methods, not with the constructor."""

    __slots__ = ("_values", "_row_splits", "_lengths", "_rowids", "__weakref__")

    def __init__(self, values, row_splits, internal=False):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the "
                             "factory methods instead (e.g., RaggedTensor.from_row_lengths())")
        self._values = values
        self._row_splits = row_splits
        self._lengths = None
        self._rowids = None

    # -- factories -------------------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        values = _as_values(values)
        splits = _as_splits(row_splits, _splits_dtype_of(values), "row_splits")
        if validate:
            _check_splits("from_row_splits", splits, values)
        return cls(values, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        values = _as_values(values)
        lengths = _as_splits(row_lengths, _splits_dtype_of(values), "row_lengths")
        if validate and lengths.__class__ is EagerTensor:
            lv = lengths.numpy()
            if (lv < 0).any():
                raise _invalid("from_row_lengths", "RowPartition", lv, kind=">=")
        splits = concat([m.cast([0], lengths.dtype), cumsum(lengths)], 0)
        if validate:
            _check_splits("from_row_lengths", splits, values)
        rt = cls(values, splits, internal=True)
        rt._lengths = lengths
        return rt

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        values = _as_values(values)
        rowids = _as_splits(value_rowids, _splits_dtype_of(values), "value_rowids")
        if nrows is None:
            if rowids.__class__ is EagerTensor:
                ids = rowids.numpy()
                nrows = int(ids[-1]) + 1 if ids.size else 0
            else:
                nrows = m.add(m.reduce_max(concat([m.cast([-1], rowids.dtype), rowids], 0)), 1)
        nrows_t = m.cast(nrows, rowids.dtype)
        if validate and rowids.__class__ is EagerTensor:
            ids = rowids.numpy()
            diff = ids[1:] - ids[:-1]
            if (diff < 0).any():
                raise _invalid("from_value_rowids", "RowPartition", diff, kind=">=")
            if ids.size and (ids[0] < 0 or ids[-1] >= int(nrows_t.numpy())):
                raise InvalidArgumentError(None, None, "Arguments to from_value_rowids do not "
                                           "form a valid RowPartition: value_rowids must be in "
                                           f"[0, nrows={int(nrows_t.numpy())}), got "
                                           f"{ids.tolist()}")
        lengths = unsorted_segment_sum(m.cast(m.greater_equal(rowids, 0), rowids.dtype),
                                       rowids, nrows_t)
        splits = concat([m.cast([0], rowids.dtype), cumsum(lengths)], 0)
        if validate:
            _check_splits("from_value_rowids", splits, values)
        rt = cls(values, splits, internal=True)
        rt._lengths = lengths
        rt._rowids = rowids
        return rt

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        values = _as_values(values)
        starts = _as_splits(row_starts, _splits_dtype_of(values), "row_starts")
        n = _nvals(values)
        splits = concat([starts, m.cast(reshape(n, [1]), starts.dtype)], 0)
        return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        values = _as_values(values)
        limits = _as_splits(row_limits, _splits_dtype_of(values), "row_limits")
        splits = concat([m.cast([0], limits.dtype), limits], 0)
        return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None, validate=True,
                                name=None):
        """Rows of `uniform_row_length` values each (`nrows` of them: by default as many as the
        values fill)."""
        values = _as_values(values)
        dtype = _splits_dtype_of(values) or _dt.int64
        length = m.cast(uniform_row_length, dtype)
        if nrows is None:
            n = m.cast(_nvals(values), dtype)
            nrows = m.floordiv(n, m.maximum(length, m.cast(1, dtype)))
        splits = m.multiply(_range(0, m.add(m.cast(nrows, dtype), 1), dtype=dtype), length)
        return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=_dt.int64):
        """The rows of a 2-D `SparseTensor` (indices in row-major order): row `i` holds the
        values whose index starts with `i`, in order (the column positions are dropped)."""
        if st_input.indices.shape.rank is None or st_input.dense_shape.shape[0] != 2:
            raise ValueError("rank(st_input) must be 2.")
        rowids = m.cast(st_input.indices[:, 0], row_splits_dtype)
        return cls.from_value_rowids(st_input.values, rowids,
                                     nrows=m.cast(st_input.dense_shape[0], row_splits_dtype),
                                     validate=False)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        result = _as_values(flat_values)
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits, validate=validate)
        return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None,
                                validate=True):
        result = _as_values(flat_values)
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths, validate=validate)
        return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None,
                    row_splits_dtype=_dt.int64):
        """≈ `tf.RaggedTensor.from_tensor`: rows of a dense tensor, cut at `lengths`, or before
        the trailing elements equal to `padding`, or kept whole."""
        tensor = convert_to_tensor(tensor)
        if lengths is not None and padding is not None:
            raise ValueError("Specify lengths or padding, but not both")
        if ragged_rank != 1:
            raise NotImplementedError("RaggedTensor.from_tensor: ragged_rank > 1 is not "
                                      "supported; build the inner levels with from_row_lengths.")
        rank = tensor.shape.rank
        if rank is None or rank < 2:
            raise ValueError(f"ragged_rank must be smaller than rank, got ragged_rank={ragged_rank}"
                             f" and rank={rank}")
        splits_dtype = _dt.as_dtype(row_splits_dtype)
        dims = _shape(tensor, out_type=splits_dtype)
        nrows, ncols = dims[0], dims[1]
        columns = _range(1, m.add(ncols, 1), dtype=splits_dtype)
        if padding is not None:
            padding = convert_to_tensor(padding, dtype=tensor.dtype)
            kept = m.not_equal(tensor, padding)
            if rank > 2:
                kept = m.reduce_any(kept, axis=list(range(2, rank)))
            lengths = m.reduce_max(m.where(kept, expand_dims(columns, 0),
                                           m.cast(0, splits_dtype)), axis=1)
            lengths = m.maximum(lengths, m.cast(0, splits_dtype))
        if lengths is None:
            flat = reshape(tensor, concat([m.cast([-1], splits_dtype), dims[2:]], 0)
                           if rank > 2 else [-1])
            splits = m.multiply(_range(0, m.add(nrows, 1), dtype=splits_dtype), ncols)
            return cls(flat, splits, internal=True)
        lengths = m.cast(convert_to_tensor(lengths), splits_dtype)
        lengths = m.minimum(lengths, ncols)
        mask = m.less(expand_dims(m.subtract(columns, 1), 0), expand_dims(lengths, 1))
        values = boolean_mask(tensor, mask)
        return cls.from_row_lengths(values, lengths, validate=False)

    # -- components ------------------------------------------------------------------------------
    @property
    def values(self):
        return self._values

    @property
    def row_splits(self):
        return self._row_splits

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def nested_row_splits(self) -> tuple:
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt._row_splits)
            rt = rt._values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        return 1 + (self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self):
        return self._row_splits.dtype

    @property
    def shape(self) -> TensorShape:
        n = self._row_splits.shape[0] if self._row_splits.shape.rank else None
        nrows = None if n is None else n - 1
        return TensorShape([nrows] + [None] * self.ragged_rank).concatenate(
            self.flat_values.shape[1:])

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def device(self):
        return self.flat_values.device

    @property
    def _type_spec(self):
        return RaggedTensorSpec(self.shape, self.dtype, self.ragged_rank, self.row_splits_dtype,
                                flat_values_spec=None)

    # -- derived partition -----------------------------------------------------------------------
    def row_lengths(self, axis=1, name=None):
        """The length of each row (`axis=1`), or of each row of an inner level."""
        if axis == 1:
            if self._lengths is None:
                s = self._row_splits
                self._lengths = m.subtract(s[1:], s[:-1])
            return self._lengths
        if axis < 1 or not isinstance(self._values, RaggedTensor):
            raise ValueError(f"axis={axis} out of bounds: expected 1 <= axis < "
                             f"{1 + self.ragged_rank}")
        return self.with_values(self._values.row_lengths(axis - 1))

    def nested_row_lengths(self, name=None) -> tuple:
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.row_lengths())
            rt = rt._values
        return tuple(out)

    def value_rowids(self, name=None):
        """The row of each value (a run of `i` repeated `row_lengths()[i]` times)."""
        if self._rowids is None:
            s = self._row_splits
            inner = s[1:-1]
            n = _nvals(self._values)
            if n is None:
                n = s[-1]
            marks = unsorted_segment_sum(m.cast(m.greater_equal(inner, 0), s.dtype), inner,
                                         m.add(m.cast(n, s.dtype), 1))
            self._rowids = cumsum(marks)[:-1]
        return self._rowids

    def nrows(self, out_type=None, name=None):
        n = self._row_splits.shape[0] if self._row_splits.shape.rank else None
        dtype = self._row_splits.dtype if out_type is None else _dt.as_dtype(out_type)
        if n is not None:
            return convert_to_tensor(n - 1, dtype=dtype)
        return m.cast(m.subtract(_shape(self._row_splits)[0], 1), dtype)

    def row_starts(self, name=None):
        return self._row_splits[:-1]

    def row_limits(self, name=None):
        return self._row_splits[1:]

    def bounding_shape(self, axis=None, name=None, out_type=None):
        """The smallest dense shape holding every row: [nrows, longest row, ...]."""
        dtype = self._row_splits.dtype if out_type is None else _dt.as_dtype(out_type)
        dims = [m.cast(reshape(self.nrows(), [1]), dtype)]
        rt = self
        while isinstance(rt, RaggedTensor):
            lengths = rt.row_lengths()
            longest = m.reduce_max(concat([m.cast([0], lengths.dtype), lengths], 0))
            dims.append(m.cast(reshape(longest, [1]), dtype))
            rt = rt._values
        dims.append(m.cast(_shape(rt)[1:], dtype))
        out = concat(dims, 0)
        return out if axis is None else out[axis]

    def with_values(self, new_values):
        return RaggedTensor(new_values, self._row_splits, internal=True)._share(self)

    def with_flat_values(self, new_values):
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(convert_to_tensor(new_values))

    def with_row_splits_dtype(self, dtype):
        dtype = _dt.as_dtype(dtype)
        values = self._values
        if isinstance(values, RaggedTensor):
            values = values.with_row_splits_dtype(dtype)
        return RaggedTensor(values, m.cast(self._row_splits, dtype), internal=True)

    def _share(self, other):
        """Takes `other`'s cached lengths and row ids (same partition)."""
        self._lengths = other._lengths
        self._rowids = other._rowids
        return self

    # -- conversion ------------------------------------------------------------------------------
    def to_tensor(self, default_value=None, name=None, shape=None):
        """≈ `tf.RaggedTensor.to_tensor`: a dense tensor, rows padded with `default_value`
        (zero) to the longest row, or cut/padded to `shape` where given."""
        return to_dense(self, default_value, shape)

    def numpy(self):
        """TensorFlow's: rows of uniform length stacked, else an object array of rows."""
        values = self._values.numpy()
        splits = self._row_splits.numpy()
        rows = [values[splits[i]:splits[i + 1]] for i in range(len(splits) - 1)]
        if not rows:
            return np.zeros((0, 0) + tuple(np.shape(values)[1:]), dtype=np.asarray(values).dtype)
        if all(len(r) == len(rows[0]) for r in rows):
            try:
                return np.array(rows)
            except ValueError:
                pass  # inner rows of different lengths: an object array of rows
        out = np.empty(len(rows), dtype=object)
        for i, r in enumerate(rows):
            out[i] = r
        return out

    def to_list(self):
        """The rows as nested Python lists of Python scalars (bytes for strings)."""
        if self._row_splits.__class__ is not EagerTensor:
            raise ValueError("RaggedTensor.to_list() is only supported in eager mode.")
        values = self._values
        values = values.to_list() if isinstance(values, RaggedTensor) else \
            values.numpy().tolist()
        splits = self._row_splits.numpy().tolist()
        return [values[splits[i]:splits[i + 1]] for i in range(len(splits) - 1)]

    def __repr__(self):
        if self._row_splits.__class__ is EagerTensor and self.flat_values.__class__ is EagerTensor:
            with np.printoptions(formatter={"all": _element_text}):
                text = _element_text(self.numpy())
            return f"<eager.RaggedTensor {text}>"
        return f"eager.RaggedTensor(values={self._values}, row_splits={self._row_splits})"

    __str__ = __repr__

    def __bool__(self):
        raise TypeError("RaggedTensor may not be used as a boolean.")

    def __getitem__(self, key):
        return getitem(self, key)

    # Elementwise operators (`eager.ops.ragged_math`): on the flat values.
    __add__, __radd__ = _math.binary(m.add)
    __sub__, __rsub__ = _math.binary(m.subtract)
    __mul__, __rmul__ = _math.binary(m.multiply)
    __truediv__, __rtruediv__ = _math.binary(m.truediv)
    __floordiv__, __rfloordiv__ = _math.binary(m.floordiv)
    __mod__, __rmod__ = _math.binary(m.floormod)
    __pow__, __rpow__ = _math.binary(m.pow)
    __and__, __rand__ = _math.binary(m.logical_and)
    __or__, __ror__ = _math.binary(m.logical_or)
    __xor__, __rxor__ = _math.binary(m.logical_xor)
    __lt__ = _math.binary(m.less)[0]
    __le__ = _math.binary(m.less_equal)[0]
    __gt__ = _math.binary(m.greater)[0]
    __ge__ = _math.binary(m.greater_equal)[0]
    __eq__ = _math.binary(m.equal)[0]
    __ne__ = _math.binary(m.not_equal)[0]
    __hash__ = None
    __neg__ = _math.unary(m.negative)
    __abs__ = _math.unary(m.abs)
    __invert__ = _math.unary(m.logical_not)


def _element_text(x):
    """TensorFlow's ragged formatter: arrays with ", " between elements (an empty one as its
    nested lists), other values as `str`."""
    if isinstance(x, np.ndarray):
        if x.size:
            return np.array2string(x, separator=", ")
        return repr(x.tolist())
    return str(x)


def _splits_dtype_of(values):
    return values.row_splits_dtype if isinstance(values, RaggedTensor) else None


class RaggedTensorSpec(TypeSpec):
    """≈ `tf.RaggedTensorSpec(shape, dtype, ragged_rank, row_splits_dtype)`: the type of a
    ragged tensor. The outer dimension may be known (then a function traced from it takes
    only tensors with that many rows), the ragged ones are None. Components: the flat values
    (shape `[None] + inner dims`), then each level's row splits."""

    __slots__ = ("_shape", "_dtype", "_ragged_rank", "_row_splits_dtype")

    value_type = RaggedTensor

    def __init__(self, shape=None, dtype=_dt.float32, ragged_rank=None,
                 row_splits_dtype=_dt.int64, flat_values_spec=None):
        self._shape = as_shape(shape)
        self._dtype = _dt.as_dtype(dtype)
        self._row_splits_dtype = _dt.as_dtype(row_splits_dtype)
        rank = self._shape.rank
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = rank - 1
        if rank is not None and not 0 < ragged_rank < max(rank, 1):
            if ragged_rank >= rank:
                raise ValueError(f"ragged_rank must be less than rank, got ragged_rank="
                                 f"{ragged_rank} and rank={rank}")
        if ragged_rank < 1:
            raise ValueError(f"RaggedTensorSpec: ragged_rank must be at least 1, got "
                             f"{ragged_rank}.")
        self._ragged_rank = ragged_rank
        if self._row_splits_dtype not in _SPLITS_DTYPES:
            raise ValueError("row_splits_dtype must be int32 or int64.")

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def ragged_rank(self):
        return self._ragged_rank

    @property
    def row_splits_dtype(self):
        return self._row_splits_dtype

    @classmethod
    def from_value(cls, value):
        return value._type_spec

    @property
    def component_specs(self) -> list:
        rank = self._shape.rank
        inner = [] if rank is None else self._shape.as_list()[self._ragged_rank + 1:]
        flat = TensorSpec(None if rank is None else [None] + inner, self._dtype)
        outer = None if rank is None else self._shape.as_list()[0]
        splits = [TensorSpec([None if outer is None else outer + 1], self._row_splits_dtype)]
        splits += [TensorSpec([None], self._row_splits_dtype)
                   for _ in range(self._ragged_rank - 1)]
        return [flat, *splits]

    def to_components(self, value) -> list:
        if not isinstance(value, RaggedTensor) or value.ragged_rank != self._ragged_rank:
            raise TypeError(f"{value!r:.80} is not compatible with {self!r}")
        return [value.flat_values, *value.nested_row_splits]

    def from_components(self, tensors):
        flat, *splits = tensors
        result = flat
        for s in reversed(splits):
            result = RaggedTensor(result, s, internal=True)
        return result

    def _key(self) -> tuple:
        rank = self._shape.rank
        return (None if rank is None else tuple(self._shape.as_list()), self._dtype,
                self._ragged_rank, self._row_splits_dtype)

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value if isinstance(spec_or_value, RaggedTensorSpec) else \
            getattr(spec_or_value, "_type_spec", None)
        return (isinstance(other, RaggedTensorSpec) and other._dtype == self._dtype
                and other._ragged_rank == self._ragged_rank
                and other._row_splits_dtype == self._row_splits_dtype
                and self._shape.is_compatible_with(other._shape))

    def __repr__(self):
        return (f"RaggedTensorSpec(TensorShape({_dims_text(self._shape)}), "
                f"eager.{self._dtype.name}, {self._ragged_rank}, "
                f"eager.{self._row_splits_dtype.name})")


def _dims_text(shape):
    return "None" if shape.rank is None else str(shape.as_list())
