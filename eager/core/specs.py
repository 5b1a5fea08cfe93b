"""`TensorSpec`: the type of a tensor (shape with unknown dimensions allowed, and dtype).

Shape inference returns TensorSpecs (`OpDef.infer`), function signatures are made of them and
asynchronous and symbolic tensors carry one; none of those needs a value, so this module needs
only dtypes and shapes.
"""

from __future__ import annotations

from ..base import dtypes as _dt
from ..base.dtypes import DType
from ..base.tensor_shape import TensorShape, as_shape

__all__ = ["TensorSpec"]


class TensorSpec:
    """≈ `tf.TensorSpec(shape, dtype=float32, name=None)`: the type of a tensor (None dims allowed).

    Also what shape inference returns: op records infer `TensorSpec`s from their inputs' shapes
    and dtypes without touching data.
    """

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=_dt.float32, name=None):
        self._shape = as_shape(shape)
        self._dtype = _dt.as_dtype(dtype)
        self._name = name

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def name(self):
        return self._name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tensor.shape, tensor.dtype, name)

    @classmethod
    def from_spec(cls, spec, name=None):
        return cls(spec.shape, spec.dtype, name if name is not None else spec.name)

    def is_compatible_with(self, spec_or_tensor) -> bool:
        return (_dt.as_dtype(spec_or_tensor.dtype) == self._dtype
                and self._shape.is_compatible_with(spec_or_tensor.shape))

    def most_specific_compatible_type(self, other) -> "TensorSpec":
        if other.dtype != self._dtype:
            raise ValueError(f"No TensorSpec is compatible with both {self} and {other}.")
        return TensorSpec(self._shape.most_specific_compatible_shape(other.shape), self._dtype)

    def __eq__(self, other):
        return (type(other) is type(self) and self._shape == other._shape
                and self._dtype == other._dtype and self._name == other._name)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self._shape, self._dtype, self._name))

    def __repr__(self):
        return (f"TensorSpec(shape={self._shape}, dtype=eager.{self._dtype.name}, "
                f"name={self._name!r})")

    def __reduce__(self):
        return TensorSpec, (None if self._shape.rank is None else list(self._shape),
                            self._dtype.name, self._name)
