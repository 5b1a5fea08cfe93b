"""`SparseTensor` (≈ `tf.sparse.SparseTensor`): the non-default entries of a tensor, as
`indices` (int64 `[N, rank]`), `values` (`[N]`) and `dense_shape` (int64 `[rank]`), and
`SparseTensorSpec`, its type.

The three are the components `eager.function` feeds (`eager.core.composite`). Operations
(`eager.ops.sparse_ops`) are made of ordinary ops on them, so gradients reach `values`.
"""

from __future__ import annotations

from ..base import dtypes as _dt
from ..base.tensor_shape import TensorShape, as_shape
from ..core.composite import CompositeTensor, TypeSpec
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import EagerTensor
from . import math_ops as m

__all__ = ["SparseTensor", "SparseTensorSpec"]


class SparseTensor(CompositeTensor):
    """≈ `tf.sparse.SparseTensor(indices, values, dense_shape)` (see the module doc). As in
    TensorFlow, the indices are not checked here (bounds and order are checked by the ops that
    need them, such as `eager.sparse.to_dense`); their count must match the values'."""

    __slots__ = ("_indices", "_values", "_dense_shape", "_static_shape", "__weakref__")

    def __init__(self, indices, values, dense_shape):
        indices = convert_to_tensor(indices, dtype=_dt.int64) if not hasattr(indices, "dtype") \
            else m.cast(indices, _dt.int64)
        values = convert_to_tensor(values)
        dense_shape = convert_to_tensor(dense_shape, dtype=_dt.int64) \
            if not hasattr(dense_shape, "dtype") else m.cast(dense_shape, _dt.int64)
        if indices.shape.rank is not None and indices.shape.rank != 2:
            raise ValueError(f"Shape {indices.shape} must have rank 2 (indices).")
        if values.shape.rank is not None and values.shape.rank != 1:
            raise ValueError(f"Shape {values.shape} must have rank 1 (values).")
        n_idx = indices.shape[0] if indices.shape.rank else None
        n_val = values.shape[0] if values.shape.rank else None
        if n_idx is not None and n_val is not None and n_idx != n_val:
            raise ValueError(f"Dimensions {n_idx} and {n_val} are not compatible")
        self._indices = indices
        self._values = values
        self._dense_shape = dense_shape
        self._static_shape = None  # what a traced function's spec knows (`from_components`)

    @classmethod
    def from_value(cls, value):
        return value

    @property
    def indices(self):
        return self._indices

    @property
    def values(self):
        return self._values

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def device(self):
        return self._values.device

    @property
    def shape(self) -> TensorShape:
        ds = self._dense_shape
        if ds.__class__ is EagerTensor:
            return TensorShape([int(d) for d in ds.numpy()])
        if self._static_shape is not None:
            return self._static_shape
        rank = ds.shape[0] if ds.shape.rank else None
        return TensorShape(None if rank is None else [None] * rank)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def _type_spec(self):
        return SparseTensorSpec(self.shape, self.dtype)

    def with_values(self, new_values):
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def __repr__(self):
        return (f"SparseTensor(indices={self._indices}, values={self._values}, "
                f"dense_shape={self._dense_shape})")

    __str__ = __repr__

    # Elementwise with a scalar or dense operand of broadcastable shape: TF's sparse-dense
    # cwise ops keep the sparsity (only the stored values change).
    def __mul__(self, other):
        return self.with_values(m.multiply(self._values, _scalar(other, self.dtype)))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self.with_values(m.truediv(self._values, _scalar(other, self.dtype)))

    def __neg__(self):
        return self.with_values(m.negative(self._values))

    def __abs__(self):
        return self.with_values(m.abs(self._values))


def _scalar(value, dtype):
    t = convert_to_tensor(value, dtype=dtype) if not hasattr(value, "dtype") else value
    if t.shape.rank != 0:
        raise NotImplementedError("SparseTensor operators take a scalar; for a dense operand "
                                  "use eager.sparse.to_dense first.")
    return t


class SparseTensorSpec(TypeSpec):
    """≈ `tf.SparseTensorSpec(shape, dtype)`: the type of a sparse tensor (dense shape with None
    dims allowed, values dtype). Components: indices `[None, rank]`, values `[None]`, dense
    shape `[rank]`."""

    __slots__ = ("_shape", "_dtype")

    value_type = SparseTensor

    def __init__(self, shape=None, dtype=_dt.float32):
        self._shape = as_shape(shape)
        self._dtype = _dt.as_dtype(dtype)

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @classmethod
    def from_value(cls, value):
        return value._type_spec

    @property
    def component_specs(self) -> list:
        rank = self._shape.rank
        return [TensorSpec([None, rank], _dt.int64), TensorSpec([None], self._dtype),
                TensorSpec([rank], _dt.int64)]

    def to_components(self, value) -> list:
        if not isinstance(value, SparseTensor):
            raise TypeError(f"{value!r:.80} is not compatible with {self!r}")
        return [value.indices, value.values, value.dense_shape]

    def from_components(self, tensors):
        indices, values, dense_shape = tensors
        value = SparseTensor(indices, values, dense_shape)
        if dense_shape.__class__ is not EagerTensor:  # symbolic: the spec's dims are known
            value._static_shape = self._shape
        return value

    def _key(self) -> tuple:
        rank = self._shape.rank
        return (None if rank is None else tuple(self._shape.as_list()), self._dtype)

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value if isinstance(spec_or_value, SparseTensorSpec) else \
            getattr(spec_or_value, "_type_spec", None)
        return (isinstance(other, SparseTensorSpec) and other._dtype == self._dtype
                and self._shape.is_compatible_with(other._shape))

    def __repr__(self):
        dims = "None" if self._shape.rank is None else str(self._shape.as_list())
        return f"SparseTensorSpec(TensorShape({dims}), eager.{self._dtype.name})"
