"""`eager.dtypes` ≈ `tf.dtypes`: the element types (defined in `eager.base.dtypes`), and
`complex`, which TensorFlow also places here."""

from .base.dtypes import (DType, as_dtype, bool, complex64, complex128, double,  # noqa: A004
                          float16, float32, float64, half, int8, int16, int32, int64, resource,
                          string, uint8, uint16, uint32, uint64, variant)
from .ops.complex_ops import complex  # noqa: A004 - TensorFlow's name

__all__ = ["DType", "as_dtype", "float16", "float32", "float64", "int8", "int16", "int32",
           "int64", "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128",
           "string", "resource", "variant", "half", "double", "complex"]
