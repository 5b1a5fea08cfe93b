"""`eager.complex` ≈ `tf.complex`: a complex tensor from its real and imaginary parts
(TensorFlow's Complex op).

Both parts are float32 (giving complex64) or float64 (complex128), of the same dtype, else
TensorFlow's TypeError; they broadcast. The kernel writes the two parts into the result
directly, so an infinite part stays exactly where it was (`re + 1j * im` would turn 0 * inf into
a NaN real part). The gradient is TensorFlow's: the real and imaginary parts of the output
gradient, each summed over its input's broadcast axes.
"""

from __future__ import annotations

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute, named
from ..core.registry import register_op
from ..core.shapes import broadcast_shapes
from ..core.specs import TensorSpec
from . import math_ops as m
from .grad_utils import unbroadcast

__all__ = ["complex"]

_COMPLEX_OF = {_dt.float32: _dt.complex64, _dt.float64: _dt.complex128}


def _complex_infer(real, imag):
    return TensorSpec(broadcast_shapes("Complex", real.shape, imag.shape),
                      _COMPLEX_OF[real.dtype])


def _complex_kernel(xp, real, imag):
    shape = xp.broadcast(real, imag).shape
    out = xp.empty(shape, dtype=_COMPLEX_OF[_dt.as_dtype(real.dtype)].dtype)
    out.real = real
    out.imag = imag
    return out


COMPLEX = register_op("Complex", _complex_kernel, _complex_infer, dtypes=_dt.FLOATING,
                      doc="A complex tensor from real and imaginary parts.")


def complex(real, imag, name=None):  # noqa: A001 - TensorFlow's name
    """≈ `tf.complex` (see the module doc)."""
    real, imag = as_tensor(real), as_tensor(imag)
    if real.dtype != imag.dtype or real.dtype not in _COMPLEX_OF:
        raise TypeError(f"The `real` and `imag` components have incorrect types: "
                        f"{real.dtype.name} {imag.dtype.name}. They must be consistent, and one "
                        "of [tf.float32, tf.float64]")
    out = execute(COMPLEX, (real, imag))
    return out if name is None else named(out, name)


@COMPLEX.def_gradient
def _complex_grad(forward, dy):
    sx, sy = forward.input_shapes
    return unbroadcast(m.real(dy), sx, (sy,)), unbroadcast(m.imag(dy), sy, (sx,))
