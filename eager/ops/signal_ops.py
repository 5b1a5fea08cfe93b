"""Signal processing composed of other ops, as TensorFlow composes it (`eager.signal`): windows,
framing, short-time Fourier transforms, mel filter banks and MFCCs.

Being compositions, they run eagerly, trace, and differentiate through their parts' gradients:

* `hann_window` / `hamming_window`: a - b cos(2 pi k / n) computed in the window's dtype, with
  TensorFlow's n (`length - 1`, plus one for a periodic window of even length only: a periodic
  window of odd length equals the symmetric one, as in TF).
* `frame`: a gather of overlapping windows along an axis (optionally padding the end);
  `overlap_and_add`: its adjoint, a segment sum of each frame's samples into the output
  position they cover.
* `stft` = rfft(frame(signal) * window); `inverse_stft` = overlap_and_add(irfft(stfts) *
  window), with `inverse_stft_window_fn` giving the window that makes the pair invert exactly.
* `linear_to_mel_weight_matrix`: triangular filters on the HTK mel scale (1127 ln(1 + f/700)),
  the DC bin zeroed; `mfccs_from_log_mel_spectrograms` = dct(x) / sqrt(2 n), with `dct` (type
  II) as a matrix product.

Framing needs the framed axis's length when it runs (or is traced).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError
from ..core.argument_conversion import as_tensor
from ..core.dispatch import named
from . import math_ops as m
from .array_ops import reshape, transpose
from .fft_ops import irfft, rfft
from .padding_ops import pad
from .product_ops import matmul
from .segment_ops import unsorted_segment_sum
from .slicing_ops import gather

__all__ = ["hann_window", "hamming_window", "frame", "overlap_and_add", "stft", "inverse_stft",
           "inverse_stft_window_fn", "linear_to_mel_weight_matrix",
           "mfccs_from_log_mel_spectrograms", "dct"]


def _int(value, what):
    if hasattr(value, "numpy"):
        value = value.numpy()
    try:
        return operator.index(np.asarray(value).item() if hasattr(value, "shape") else value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {value!r}.") from None


def _float_dtype(dtype):
    dtype = _dt.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype!r}")
    return dtype


# -- windows -----------------------------------------------------------------------------------

def _raised_cosine(window_length, periodic, dtype, a, b, name):
    dtype = _float_dtype(dtype)
    length = _int(window_length, "window_length")
    if length < 0:
        raise InvalidArgumentError(None, "Range", f"Requires start <= limit when delta > 0: "
                                                  f"0/{length} [Op:Range]")
    if length == 1:
        out = np.ones([1], dtype.dtype)
    else:
        even = 1 - length % 2
        n = dtype.dtype.type(length + int(bool(periodic)) * even - 1)
        count = np.arange(length, dtype=dtype.dtype)
        with np.errstate(all="ignore"):
            angle = dtype.dtype.type(2 * np.pi) * count / n
            out = (dtype.dtype.type(a) - dtype.dtype.type(b) * np.cos(angle)).astype(dtype.dtype)
    out = as_tensor(out)
    return out if name is None else named(out, name)


def hann_window(window_length, periodic=True, dtype=_dt.float32, name=None):
    """≈ `tf.signal.hann_window`: 0.5 - 0.5 cos(2 pi k / n), k < window_length."""
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5, name)


def hamming_window(window_length, periodic=True, dtype=_dt.float32, name=None):
    """≈ `tf.signal.hamming_window`: 0.54 - 0.46 cos(2 pi k / n), k < window_length."""
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46, name)


# -- framing -----------------------------------------------------------------------------------

def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """≈ `tf.signal.frame`: windows of `frame_length` samples every `frame_step` samples along
    `axis`, which becomes two axes (frames, samples). With `pad_end`, the signal is padded with
    `pad_value` so that every sample starts a frame's worth of coverage."""
    x = as_tensor(signal)
    frame_length = _int(frame_length, "frame_length")
    frame_step = _int(frame_step, "frame_step")
    rank = len(x.shape)
    if rank < 1:
        raise ValueError(f"Shape {x.shape} must have rank at least 1")
    axis = _int(axis, "axis")
    if not -rank <= axis < rank:
        raise ValueError(f"frame: axis {axis} is out of range for a signal of rank {rank}.")
    axis %= rank
    length = x.shape[axis]
    if length is None:
        raise ValueError(f"frame: the length of axis {axis} must be known, got shape "
                         f"{x.shape}.")
    if frame_step <= 0 or frame_length < 0:
        raise InvalidArgumentError(None, "Frame", f"frame: frame_step must be positive and "
                                                  f"frame_length non-negative, got "
                                                  f"frame_length={frame_length}, "
                                                  f"frame_step={frame_step}.")
    if pad_end:
        frames = -(-length // frame_step)
        extra = max(0, (frames - 1) * frame_step + frame_length - length)
        if extra:
            paddings = [[0, 0]] * rank
            paddings[axis] = [0, extra]
            x = pad(x, paddings, constant_values=pad_value)
    else:
        frames = max(0, (length - frame_length + frame_step) // frame_step)
    index = (np.arange(frames, dtype=np.int64)[:, None] * frame_step
             + np.arange(frame_length, dtype=np.int64)[None, :])
    index = as_tensor(index.astype(np.int32))
    if axis == 0:
        # Gathered along axis 1 of a [1, ...] view: a gather along axis 0 has an IndexedSlices
        # gradient, and the signal's gradient should be dense, as TensorFlow's frame gives.
        out = gather(x[None], index, axis=1)[0]
    else:
        out = gather(x, index, axis=axis)
    return out if name is None else named(out, name)


def overlap_and_add(signal, frame_step, name=None):
    """≈ `tf.signal.overlap_and_add`: frames [..., frames, frame_length] summed back into a
    signal of (frames - 1) * frame_step + frame_length samples, each frame starting
    frame_step samples after the previous one."""
    x = as_tensor(signal)
    frame_step = _int(frame_step, "frame_step")
    rank = len(x.shape)
    if rank < 2:
        raise ValueError(f"Shape {x.shape} must have rank at least 2")
    frames, frame_length = x.shape[-2], x.shape[-1]
    if frames is None or frame_length is None or None in tuple(x.shape)[:-2]:
        raise ValueError(f"overlap_and_add: the signal's shape must be known, got {x.shape}.")
    if frame_step <= 0:
        raise InvalidArgumentError(None, "OverlapAndAdd", f"overlap_and_add: frame_step must "
                                                          f"be positive, got {frame_step}.")
    outer = tuple(x.shape)[:-2]
    length = (frames - 1) * frame_step + frame_length if frames else 0
    ids = (np.arange(frames, dtype=np.int64)[:, None] * frame_step
           + np.arange(frame_length, dtype=np.int64)[None, :]).reshape(-1)
    flat = reshape(transpose(x, [rank - 2, rank - 1] + list(range(rank - 2))),
                   [frames * frame_length] + list(outer))
    summed = unsorted_segment_sum(flat, as_tensor(ids.astype(np.int32)), length)
    out = transpose(summed, list(range(1, rank - 1)) + [0])
    return out if name is None else named(out, name)


# -- short-time Fourier transforms -------------------------------------------------------------

def _default_fft_length(frame_length):
    return 1 << max(0, math.ceil(math.log2(frame_length))) if frame_length > 0 else 1


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """≈ `tf.signal.stft`: rfft of windowed frames, [..., frames, fft_length // 2 + 1]
    (fft_length defaults to the smallest power of 2 holding a frame)."""
    x = as_tensor(signals)
    if x.dtype not in (_dt.float32, _dt.float64):
        raise ValueError(f"stft: signals must be float32 or float64, got {x.dtype.name}.")
    frame_length = _int(frame_length, "frame_length")
    fft_length = (_default_fft_length(frame_length) if fft_length is None
                  else _int(fft_length, "fft_length"))
    framed = frame(x, frame_length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * window_fn(frame_length, dtype=framed.dtype)
    out = rfft(framed, [fft_length])
    return out if name is None else named(out, name)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """≈ `tf.signal.inverse_stft_window_fn`: a window function giving, for `inverse_stft`, the
    forward window divided by the sum of its squares over the frames overlapping each sample,
    so that inverse_stft(stft(x)) reproduces x where frames fully overlap."""
    frame_step = _int(frame_step, "frame_step")

    def window(frame_length, dtype):
        forward = forward_window_fn(frame_length, dtype=dtype)
        overlaps = -(-frame_length // frame_step)
        denom = pad(m.square(forward), [[0, overlaps * frame_step - frame_length]])
        denom = m.reduce_sum(reshape(denom, [overlaps, frame_step]), axis=0)
        denom = reshape(denom[None, :] + m.cast(np.zeros([overlaps, 1]), denom.dtype),
                        [overlaps * frame_step])
        return forward / denom[:frame_length]

    return window


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None):
    """≈ `tf.signal.inverse_stft`: overlap_and_add of the windowed irfft of each frame. For
    exact reconstruction pass `window_fn=inverse_stft_window_fn(frame_step)`."""
    x = as_tensor(stfts)
    if not x.dtype.is_complex:
        raise ValueError(f"inverse_stft: stfts must be complex64 or complex128, got "
                         f"{x.dtype.name}.")
    frame_length = _int(frame_length, "frame_length")
    fft_length = (_default_fft_length(frame_length) if fft_length is None
                  else _int(fft_length, "fft_length"))
    frames = irfft(x, [fft_length])
    if frame_length < fft_length:
        frames = frames[..., :frame_length]
    elif frame_length > fft_length:
        paddings = [[0, 0]] * (len(frames.shape) - 1) + [[0, frame_length - fft_length]]
        frames = pad(frames, paddings)
    if window_fn is not None:
        frames = frames * window_fn(frame_length, dtype=frames.dtype)
    out = overlap_and_add(frames, frame_step)
    return out if name is None else named(out, name)


# -- mel scale, DCT, MFCCs ---------------------------------------------------------------------

_MEL_BREAK_HZ = 700.0
_MEL_HIGH_Q = 1127.0


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=_dt.float32, name=None):
    """≈ `tf.signal.linear_to_mel_weight_matrix`: [num_spectrogram_bins, num_mel_bins] weights
    turning a linear-frequency spectrogram into a mel one (triangular filters with edges evenly
    spaced in mel between the two edge frequencies; the DC bin gets no weight)."""
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz} >= upper_edge_hertz "
                         f"{upper_edge_hertz}")
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError(f"upper_edge_hertz must not be larger than the Nyquist frequency "
                         f"(sample_rate / 2). Got {upper_edge_hertz} for sample_rate: "
                         f"{sample_rate}")
    dtype = _dt.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype!r}")
    t = dtype.dtype.type

    def to_mel(hz):
        return t(_MEL_HIGH_Q) * np.log1p(hz / t(_MEL_BREAK_HZ))

    with np.errstate(all="ignore"):
        linear = np.linspace(t(0), t(sample_rate / 2), num_spectrogram_bins,
                             dtype=dtype.dtype)[1:]
        bins = to_mel(linear)[:, None]
        edges = np.linspace(to_mel(t(lower_edge_hertz)), to_mel(t(upper_edge_hertz)),
                            num_mel_bins + 2, dtype=dtype.dtype)
        lower, center, upper = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
        rising = (bins - lower) / (center - lower)
        falling = (upper - bins) / (upper - center)
        weights = np.maximum(t(0), np.minimum(rising, falling))
    weights = np.concatenate([np.zeros([1, num_mel_bins], dtype.dtype), weights], axis=0)
    out = as_tensor(weights[:num_spectrogram_bins].astype(dtype.dtype))
    return out if name is None else named(out, name)


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's names
    """≈ `tf.signal.dct` for type II over the last axis: y[k] = 2 sum x[n] cos(pi k (2n + 1) /
    2N), scaled to an orthonormal transform by `norm="ortho"`. Other types, `n` and `axis`
    are not supported here (a clear error)."""
    x = as_tensor(input)
    if type != 2 or n is not None or axis != -1:
        raise NotImplementedError("eager.signal.dct supports type=2 over axis=-1 without n; "
                                  f"got type={type}, n={n}, axis={axis}.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    if x.dtype not in (_dt.float32, _dt.float64):
        raise ValueError(f"dct: input must be float32 or float64, got {x.dtype.name}.")
    size = x.shape[-1]
    if size is None:
        raise ValueError(f"dct: the last dimension must be known, got shape {x.shape}.")
    k = np.arange(size)[None, :]
    j = np.arange(size)[:, None]
    basis = 2.0 * np.cos(np.pi * k * (2 * j + 1) / (2 * size))
    if norm == "ortho":
        scale = np.full(size, np.sqrt(1.0 / (2 * size)) if size else 0.0)
        if size:
            scale[0] = np.sqrt(1.0 / (4 * size))
        basis = basis * scale[None, :]
    out = matmul(x, as_tensor(basis.astype(x.dtype.dtype)))
    return out if name is None else named(out, name)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """≈ `tf.signal.mfccs_from_log_mel_spectrograms`: the type-II DCT of the last axis divided
    by sqrt(2 * num_mel_bins) (an orthonormal DCT except for the first coefficient, as TF)."""
    x = as_tensor(log_mel_spectrograms)
    size = x.shape[-1] if len(x.shape) else None
    if size is None:
        raise ValueError(f"mfccs_from_log_mel_spectrograms: the last dimension must be known, "
                         f"got shape {x.shape}.")
    out = dct(x) * float(1.0 / np.sqrt(2.0 * size))
    return out if name is None else named(out, name)
