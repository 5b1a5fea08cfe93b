"""`experimental_enable_numpy_behavior`: numpy's methods on eager tensors, as TensorFlow's.

TensorFlow's call installs numpy's array methods on `tf.Tensor` (`.T`, `.reshape(2, 3)`,
`.ravel()`, `.transpose()`, `.astype()`, `.clip()`, `.tolist()`, `.size`) and switches its
operators to numpy's type promotion. This one installs the same methods on `eager.Tensor`
(the one place eager adds attributes to the tensor class after import: the call exists to do
exactly that, and until it is made the methods do not exist, as in TF). The operators' type
promotion is not switched: mixing dtypes in `+`, `*`, ... stays TensorFlow's error, so the
operators' fast path is the same with or without the call; the `eager.experimental.numpy`
functions (`tnp.add`, ...) promote as numpy does.
"""

from __future__ import annotations

import numpy as np

from ...base import dtypes as _dt
from ...ops import array_ops as _array
from ...ops import math_ops as _math
from ...tensor import Tensor

__all__ = ["experimental_enable_numpy_behavior", "default_float_type"]

_state = {"float": np.float64}


def default_float_type():
    """numpy's float64, or float32 after `experimental_enable_numpy_behavior(prefer_float32=True)`:
    the dtype tnp gives Python floats and `ones`/`zeros`."""
    return _state["float"]


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)) or \
            len(shape) == 1 and isinstance(shape[0], Tensor):
        return shape[0]
    return list(shape)


def _reshape(self, *shape, order="C"):
    """numpy's `a.reshape(2, 3)` / `a.reshape((2, 3))` (row-major order only)."""
    if order != "C":
        raise NotImplementedError(f"reshape: only order='C' is supported, got {order!r}.")
    return _array.reshape(self, _shape_args(shape))


def _transpose(self, *axes):
    """numpy's `a.transpose()` / `a.transpose(1, 0)` / `a.transpose((1, 0))`."""
    return _array.transpose(self, perm=_shape_args(axes) if axes else None)


def _ravel(self):
    return _array.reshape(self, [-1])


def _astype(self, dtype):
    return _math.cast(self, _dt.as_dtype(dtype))


def _clip(self, a_min=None, a_max=None):
    out = self
    if a_min is not None:
        out = _math.maximum(out, _math.cast(a_min, self.dtype))
    if a_max is not None:
        out = _math.minimum(out, _math.cast(a_max, self.dtype))
    return out


def _tolist(self):
    return self.numpy().tolist()


def _size(self):
    return np.int64(np.prod(self.shape, dtype=np.int64)) if None not in tuple(self.shape) \
        else _array.size(self, out_type=_dt.int64)


_METHODS = {
    "T": property(lambda self: _array.transpose(self)),
    "reshape": _reshape, "transpose": _transpose, "ravel": _ravel, "astype": _astype,
    "clip": _clip, "tolist": _tolist, "size": property(_size),
}


def experimental_enable_numpy_behavior(prefer_float32=False, dtype_conversion_mode="legacy"):
    """≈ `tf.experimental.numpy.experimental_enable_numpy_behavior`: installs numpy's methods
    (`T`, `reshape`, `transpose`, `ravel`, `astype`, `clip`, `tolist`, `size`) on tensors, and
    with `prefer_float32` makes tnp give Python floats float32. Operator type promotion is not
    changed (see the module doc)."""
    _state["float"] = np.float32 if prefer_float32 else np.float64
    for name, method in _METHODS.items():
        setattr(Tensor, name, method)
