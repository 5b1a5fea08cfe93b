"""`eager.saturate_cast` ≈ `tf.saturate_cast`: a cast that clamps to the target's range instead
of wrapping, composed as TensorFlow composes it (clip, then cast), so its values and gradient are
TensorFlow's.

The bounds are TensorFlow's: the larger of the two dtypes' minimums and the smaller of their
maximums, in the input's dtype, each moved one step toward zero where rounding to the input's
dtype takes it past the target's range (float32's nearest value to int32's maximum is 2**31,
so the bound becomes 2147483520). Like TensorFlow's, the test compares as float64, so float32 to
int64 clamps at 2**63, which the cast then wraps to int64's minimum (TensorFlow's result too).
NaN casts to 0 for integer targets. Complex to real keeps the real part; complex to complex
clamps both parts. bool and string have no range: TypeError, as TensorFlow.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor
from ..core.dispatch import named
from . import math_ops as m

__all__ = ["saturate_cast"]


def _limits(dtype):
    info = np.finfo(dtype.dtype) if dtype.is_floating or dtype.is_complex else \
        np.iinfo(dtype.dtype)
    return info.min, info.max


def _bounds(in_dtype, out_real):
    """TensorFlow's clip bounds for a real input dtype and a real target dtype."""
    np_type = in_dtype.dtype.type
    in_min, in_max = _limits(in_dtype)
    out_min, out_max = _limits(out_real)
    with np.errstate(all="ignore"):
        low = np_type(np.maximum(in_min, out_min))
        if float(low) < float(out_min):  # compared as float64, as TensorFlow's numpy does
            low = np.nextafter(low, np_type(0), dtype=in_dtype.dtype)
        high = np_type(np.minimum(float(in_max), float(out_max)))
        if float(high) > float(out_max):
            high = np.nextafter(high, np_type(0), dtype=in_dtype.dtype)
    return low, high


def _real_dtype(dtype):
    return {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}.get(dtype, dtype)


def saturate_cast(value, dtype, name=None):
    """≈ `tf.saturate_cast` (see the module doc)."""
    value = as_tensor(value)
    dtype = _dt.as_dtype(dtype)
    for d in (value.dtype, dtype):
        if not (d.is_floating or d.is_integer or d.is_complex):
            raise TypeError(f"Cannot find minimum value of <dtype: '{d.name}'> with type "
                            f"<dtype: '{d.name}'>.")
    in_dtype = value.dtype
    if in_dtype.is_complex and dtype.is_complex:
        low, high = _limits(_real_dtype(dtype))
        in_low, in_high = _limits(_real_dtype(in_dtype))
        if in_low < low or in_high > high:
            part = _real_dtype(in_dtype)
            re = m.clip_by_value(m.real(value), m.cast(low, part), m.cast(high, part))
            im = m.clip_by_value(m.imag(value), m.cast(low, part), m.cast(high, part))
            unit = as_tensor(1j, dtype=dtype)  # exact: both parts are finite after the clip
            out = m.add(m.cast(re, dtype), m.multiply(m.cast(im, dtype), unit))
            return out if name is None else named(out, name)
        out = m.cast(value, dtype)
        return out if name is None else named(out, name)
    if in_dtype.is_complex:
        value, in_dtype = m.real(value), _real_dtype(in_dtype)
    low, high = _bounds(in_dtype, _real_dtype(dtype))
    if builtins.bool(low > _limits(in_dtype)[0]) or builtins.bool(high < _limits(in_dtype)[1]):
        value = m.clip_by_value(value, as_tensor(low, dtype=in_dtype),
                                as_tensor(high, dtype=in_dtype))
    out = m.cast(value, dtype)
    return out if name is None else named(out, name)
