"""Discrete Fourier transforms (`eager.signal`): `fft`/`ifft` over the last 1, 2 or 3 axes of a
complex tensor, and `rfft`/`irfft` over the last 1 or 2 axes of a real one.

Each is one record under TensorFlow's op name (FFT, IFFT, FFT2D, ..., RFFT, IRFFT2D), computed
with the device's `xp.fft` (numpy's pocketfft, CuPy's cuFFT) and returned in TensorFlow's
dtypes: complex64 stays complex64 (float32 gives complex64 and back), complex128 / float64 stay
double precision. As in TensorFlow, `ifft` divides by the transform's size, `rfft` keeps the
`n // 2 + 1` non-negative frequencies of the last axis, and `fft_length` crops or zero-pads the
transformed axes first (`irfft`'s default is `2 * (n - 1)` on the last axis). `fft_length` is
an attribute here (TensorFlow's is an int32 input), so it must be known when the op runs or is
traced. The gradients are in `fft_grad`.
"""

from __future__ import annotations

import operator

import numpy as np

from ..base import dtypes as _dt
from ..base.ieee import quiet
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from ..core.argument_conversion import as_tensor, check_dtype
from ..core.dispatch import execute, named
from ..core.registry import op_error, register_op
from ..core.specs import TensorSpec

__all__ = ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d",
           "irfft2d"]

_COMPLEX = _dt.COMPLEX
_REAL = frozenset({_dt.float32, _dt.float64})
_COMPLEX_OF = {_dt.float32: _dt.complex64, _dt.float64: _dt.complex128}
_REAL_OF = {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}


def _check_rank(op_name, shape, rank):
    if shape._rank_known and len(shape) < rank:
        raise op_error(op_name, f"Input must have rank of at least {rank} but got: "
                                f"[{','.join('?' if d is None else str(d) for d in shape)}]")


# -- complex to complex ------------------------------------------------------------------------

def _c2c(op_name, rank, inverse):
    axes = tuple(range(-rank, 0))

    def infer(x):
        _check_rank(op_name, x.shape, rank)
        return TensorSpec(x.shape, x.dtype)

    def kernel(xp, x):
        _check_rank(op_name, TensorShape(x.shape), rank)
        if x.size == 0:
            return xp.zeros(x.shape, x.dtype)
        with quiet():  # inf and nan inputs give TensorFlow's inf and nan outputs, silently
            out = xp.fft.ifftn(x, axes=axes) if inverse else xp.fft.fftn(x, axes=axes)
            return out.astype(x.dtype, copy=False)

    word = "inverse " if inverse else ""
    op = register_op(op_name, kernel, infer, dtypes=_COMPLEX, infer_from_types=True,
                     doc=f"The {word}discrete Fourier transform over the last {rank} axes.")

    def api(input, name=None):  # noqa: A002 - TensorFlow's argument name
        x = as_tensor(input)
        if x.dtype not in _COMPLEX:
            check_dtype(op, x, _COMPLEX)
        out = execute(op, (x,))
        return out if name is None else named(out, name)

    api.__name__ = api.__qualname__ = op_name.lower()
    api.__doc__ = (f"≈ `tf.signal.{op_name.lower()}`: the {word}DFT over the innermost {rank} "
                   f"axes of a complex64/complex128 tensor"
                   f"{' (divided by their size)' if inverse else ''}.")
    return op, api


FFT, fft = _c2c("FFT", 1, False)
IFFT, ifft = _c2c("IFFT", 1, True)
FFT2D, fft2d = _c2c("FFT2D", 2, False)
IFFT2D, ifft2d = _c2c("IFFT2D", 2, True)
FFT3D, fft3d = _c2c("FFT3D", 3, False)
IFFT3D, ifft3d = _c2c("IFFT3D", 3, True)


# -- real to complex and back ------------------------------------------------------------------

def _with_inner(shape, rank, inner):
    """`shape` with its last `rank` dimensions replaced by `inner` (None when unknown)."""
    if not shape._rank_known:
        return UNKNOWN_SHAPE
    return TensorShape(tuple(shape)[:-rank] + tuple(inner))


def half_spectrum(fft_length):
    """The inner shape of rfft's result: the last length n becomes n // 2 + 1 (0 stays 0, as
    TensorFlow's empty transform)."""
    n = fft_length[-1]
    return tuple(fft_length[:-1]) + (n // 2 + 1 if n else 0,)


def _rfft_infer(op_name, rank):
    def infer(x, fft_length):
        _check_rank(op_name, x.shape, rank)
        return TensorSpec(_with_inner(x.shape, rank, half_spectrum(fft_length)),
                          _COMPLEX_OF[x.dtype])
    return infer


def _irfft_infer(op_name, rank):
    def infer(x, fft_length):
        _check_rank(op_name, x.shape, rank)
        return TensorSpec(_with_inner(x.shape, rank, fft_length), _REAL_OF[x.dtype])
    return infer


def _rfft_kernel(op_name, rank):
    axes = tuple(range(-rank, 0))

    def kernel(xp, x, fft_length):
        _check_rank(op_name, TensorShape(x.shape), rank)
        out_dtype = _COMPLEX_OF[_dt.as_dtype(x.dtype)].dtype
        shape = x.shape[:-rank] + half_spectrum(fft_length)
        if 0 in shape or 0 in fft_length or 0 in x.shape[-rank:]:
            # An empty transform (or one of zero-padding alone) is zeros, as TensorFlow's.
            return xp.zeros(shape, out_dtype)
        with quiet():
            return xp.fft.rfftn(x, s=fft_length, axes=axes).astype(out_dtype, copy=False)
    return kernel


def _irfft_kernel(op_name, rank):
    axes = tuple(range(-rank, 0))

    def kernel(xp, x, fft_length):
        _check_rank(op_name, TensorShape(x.shape), rank)
        out_dtype = _REAL_OF[_dt.as_dtype(x.dtype)].dtype
        shape = x.shape[:-rank] + tuple(fft_length)
        if 0 in shape or 0 in x.shape[-rank:]:
            return xp.zeros(shape, out_dtype)
        with quiet():
            return xp.fft.irfftn(x, s=fft_length, axes=axes).astype(out_dtype, copy=False)
    return kernel


def _fft_length(op_name, x, rank, fft_length, inverse):
    """TensorFlow's `fft_length` as a tuple of ints: given, or from x's static shape (the
    inner sizes; for the inverse, `2 * (n - 1)` on the last axis)."""
    if fft_length is None:
        shape = x.shape
        if not shape._rank_known or len(shape) < rank:
            _check_rank(op_name, shape, rank)
            raise ValueError(f"{op_name}: fft_length is needed for an input of unknown rank.")
        inner = list(shape)[-rank:]
        if None in inner:
            raise ValueError(f"{op_name}: fft_length is needed when the input's innermost "
                             f"{rank} dimensions are unknown, got shape {shape}.")
        if inverse:
            inner[-1] = max(2 * (inner[-1] - 1), 0)
        return tuple(inner)
    if hasattr(fft_length, "numpy"):
        fft_length = fft_length.numpy()
    values = np.asarray(fft_length)
    if values.shape != (rank,):
        raise op_error(op_name, f"fft_length must have shape [{rank}]")
    try:
        return tuple(operator.index(v) for v in values.tolist())
    except TypeError:
        raise TypeError(f"{op_name}: fft_length must be integers, got "
                        f"{values.tolist()}.") from None


def _r2c(op_name, api_name, rank, inverse):
    infer = (_irfft_infer if inverse else _rfft_infer)(op_name, rank)
    kernel = (_irfft_kernel if inverse else _rfft_kernel)(op_name, rank)
    dtypes = _COMPLEX if inverse else _REAL
    what = ("real signal whose Hermitian half-spectrum is the input" if inverse
            else "non-negative frequencies of the DFT of a real signal")
    op = register_op(op_name, kernel, infer, dtypes=dtypes, infer_from_types=True,
                     doc=f"The {what}, over the last {rank} axes.")

    def api(input_tensor, fft_length=None, name=None):
        x = as_tensor(input_tensor)
        if x.dtype not in dtypes:
            need = "tf.complex64 or tf.complex128" if inverse else "tf.float32 or tf.float64"
            raise ValueError(f"{op_name.replace('2D', '')} requires {need} inputs, got: {x!r}")
        length = _fft_length(op_name, x, rank, fft_length, inverse)
        if any(n < 0 for n in length):
            raise op_error(op_name, f"fft_length must be non-negative, got {list(length)}")
        out = execute(op, (x,), {"fft_length": length})
        return out if name is None else named(out, name)

    api.__name__ = api.__qualname__ = api_name
    api.__doc__ = (f"≈ `tf.signal.{api_name}(input_tensor, fft_length=None)`: the {what} "
                   f"over the innermost {rank} axes, cropped or zero-padded to `fft_length`.")
    return op, api


RFFT, rfft = _r2c("RFFT", "rfft", 1, False)
IRFFT, irfft = _r2c("IRFFT", "irfft", 1, True)
RFFT2D, rfft2d = _r2c("RFFT2D", "rfft2d", 2, False)
IRFFT2D, irfft2d = _r2c("IRFFT2D", "irfft2d", 2, True)
