"""`eager.dtypes` ≈ `tf.dtypes`: the element types (defined in `eager.base.dtypes`)."""

from .base.dtypes import (DType, as_dtype, bool, complex64, complex128, double,  # noqa: A004
                          float16, float32, float64, half, int8, int16, int32, int64, resource,
                          uint8, uint16, uint32, uint64, variant)
from .base.dtypes import __all__  # noqa: F401 - the same public names
