"""Gradients of the Fourier transforms (`fft_ops`), in TensorFlow's complex convention (the
gradient of a real loss with respect to z is dL/dRe(z) + i dL/dIm(z)):

    fft' = n * ifft(dy)        ifft' = fft(dy) / n        (n: the transformed axes' size)
    rfft' = Re(n * ifft(dy padded with zeros to the full spectrum)), fitted to the input's size
    irfft' = rfft(dy) * [1, 2, ..., 2, 1 when n is even] / n, fitted to the input's size

rfft's rule sums the dropped negative frequencies back through the padded inverse (TensorFlow
writes the same sum as an irfft plus correction terms); irfft's doubles the frequencies that
stand for a conjugate pair. "Fitted" undoes `fft_length`'s crop or zero-padding: the gradient
is sliced to, or zero-padded up to, the input's inner sizes.
"""

from __future__ import annotations

import numpy as np

from ..core.argument_conversion import as_tensor
from . import fft_ops as f
from . import math_ops as m
from .array_ops import shape as _shape
from .padding_ops import pad

_FORWARD = {1: f.fft, 2: f.fft2d, 3: f.fft3d}
_INVERSE = {1: f.ifft, 2: f.ifft2d, 3: f.ifft3d}
_RFFT = {1: f.rfft, 2: f.rfft2d}


def _size(shape, rank):
    n = 1
    for d in tuple(shape)[-rank:]:
        n *= d
    return n


def _fit_axis(t, rank_of_t, axis, have, want):
    """t with axis `axis` (negative) cropped or zero-padded from size `have` to `want`."""
    if have > want:
        index = [slice(None)] * rank_of_t
        index[axis] = slice(0, want)
        return t[tuple(index)]
    if have < want:
        paddings = [[0, 0]] * rank_of_t
        paddings[axis] = [0, want - have]
        return pad(t, paddings)
    return t


def _fit(t, got, want):
    """t (inner shape `got`) fitted to the inner shape `want`, axis by axis from the end."""
    rank = len(t.shape)
    for i in range(1, len(want) + 1):
        t = _fit_axis(t, rank, -i, got[-i], want[-i])
    return t


def _transform_size(forward, dy, rank):
    """The transformed axes' element count: a Python number when known, else a tensor of dy's
    dtype read from its shape (traced with unknown sizes)."""
    inner = tuple(forward.input_shapes[0])[-rank:]
    if None not in inner:
        return float(_size(inner, rank))
    return m.cast(m.reduce_prod(_shape(dy)[-rank:]), dy.dtype)


def _c2c_grad(op, rank, inverse):
    @op.def_gradient
    def grad(forward, dy):
        n = _transform_size(forward, dy, rank)
        if inverse:
            # (an empty transform has an empty gradient: its scale does not matter)
            return _FORWARD[rank](dy) / n if not isinstance(n, float) else \
                _FORWARD[rank](dy) * (1.0 / n if n else 0.0)
        return _INVERSE[rank](dy) * n
    return grad


for _rank, (_op, _inv) in {1: (f.FFT, f.IFFT), 2: (f.FFT2D, f.IFFT2D),
                           3: (f.FFT3D, f.IFFT3D)}.items():
    _c2c_grad(_op, _rank, False)
    _c2c_grad(_inv, _rank, True)


def _rfft_grad(op, rank):
    @op.def_gradient
    def grad(forward, dy):
        length = forward.attrs["fft_length"]
        full = _fit(dy, f.half_spectrum(length), length)
        dx = m.real(_INVERSE[rank](full) * float(_size(length, rank)))
        return _fit(dx, length, tuple(forward.input_shapes[0])[-rank:])
    return grad


def _irfft_grad(op, rank):
    @op.def_gradient
    def grad(forward, dy):
        length = forward.attrs["fft_length"]
        spectrum = _RFFT[rank](dy, fft_length=length)
        n = length[-1]
        half = f.half_spectrum(length)[-1]
        weights = np.full(half, 2.0)
        weights[0] = 1.0
        if n % 2 == 0 and half > 1:
            weights[-1] = 1.0
        weights /= _size(length, rank)
        dz = spectrum * as_tensor(weights.astype(spectrum.dtype.dtype))
        return _fit(dz, f.half_spectrum(length), tuple(forward.input_shapes[0])[-rank:])
    return grad


_rfft_grad(f.RFFT, 1)
_rfft_grad(f.RFFT2D, 2)
_irfft_grad(f.IRFFT, 1)
_irfft_grad(f.IRFFT2D, 2)
