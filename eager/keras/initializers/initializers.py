"""Keras 3's initializers: objects called with `(shape, dtype=None)` that return a tensor.

Values are computed on the host with numpy and become one constant: an initializer runs once per
weight, when a layer is built, so there is nothing to gain from a device kernel, and host numbers
make seeded initializers reproducible on every device (see `eager.keras.seed_generator`). The
arithmetic (fans, the 0.8796 truncation correction, Orthogonal's sign fix) is Keras 3's.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.tensor_conversion import convert_to_tensor
from .. import backend
from ..seed_generator import SeedGenerator, make_default_seed, numpy_generator

__all__ = ["Initializer", "Constant", "Zeros", "Ones", "Identity", "RandomNormal",
           "RandomUniform", "TruncatedNormal", "VarianceScaling", "GlorotUniform",
           "GlorotNormal", "HeUniform", "HeNormal", "LecunUniform", "LecunNormal", "Orthogonal",
           "compute_fans"]


def _shape(shape) -> tuple:
    try:
        shape = tuple(int(d) for d in (shape if isinstance(shape, (tuple, list)) else
                                       tuple(shape)))
    except TypeError:
        raise ValueError(f"Initializers need a fully defined shape. Received: shape={shape}") \
            from None
    return shape


def _as_tensor(array, dtype):
    return convert_to_tensor(np.asarray(array).astype(dtype, copy=False), dtype=dtype)


class Initializer:
    """≈ `keras.initializers.Initializer`: subclass and define `__call__(shape, dtype=None)`."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError("Initializer subclasses must implement the `__call__()` "
                                  "method.")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def clone(self):
        return type(self).from_config(self.get_config())


class Constant(Initializer):
    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        dtype = backend.standardize_dtype(dtype)
        return _as_tensor(np.broadcast_to(np.asarray(self.value, dtype=dtype), _shape(shape)),
                          dtype)

    def get_config(self):
        value = self.value
        if isinstance(value, np.ndarray) or hasattr(value, "numpy"):
            value = np.asarray(value).tolist()
        return {"value": value}


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        dtype = backend.standardize_dtype(dtype)
        return _as_tensor(np.zeros(_shape(shape), dtype=dtype), dtype)


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        dtype = backend.standardize_dtype(dtype)
        return _as_tensor(np.ones(_shape(shape), dtype=dtype), dtype)


class Identity(Initializer):
    """`gain` times the identity matrix; only for 2-D shapes, as in Keras."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        shape = _shape(shape)
        if len(shape) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices. "
                             f"Received: shape={shape} of rank {len(shape)}.")
        dtype = backend.standardize_dtype(dtype)
        return _as_tensor(self.gain * np.eye(*shape), dtype)

    def get_config(self):
        return {"gain": self.gain}


class RandomInitializer(Initializer):
    """A seeded draw (see `eager.keras.seed_generator` for what the seed means)."""

    def __init__(self, seed=None):
        self._init_seed = seed
        if seed is None:
            seed = make_default_seed()
        elif isinstance(seed, dict):
            seed = SeedGenerator.from_config(seed.get("config", seed))
        elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer, SeedGenerator)):
            raise ValueError("`seed` argument should be an instance of "
                             "`keras.random.SeedGenerator()` or an integer. "
                             f"Received: seed={seed}")
        self.seed = seed

    def _generator(self):
        return numpy_generator(self.seed)

    def get_config(self):
        seed = self._init_seed
        if isinstance(seed, SeedGenerator):
            seed = {"class_name": "SeedGenerator", "config": seed.get_config()}
        return {"seed": seed}


def _float_dtype(dtype, who):
    dtype = backend.standardize_dtype(dtype)
    if not backend.is_float_dtype(dtype):
        raise ValueError(f"{who} only supports floating-point dtypes. Received: dtype={dtype}")
    return dtype


def _truncated_normal(rng, shape, mean, stddev):
    """Normal draws outside two standard deviations are drawn again (Keras's rule)."""
    size = math.prod(shape)
    kept = np.empty(0)
    while kept.size < size:
        batch = rng.normal(loc=mean, scale=stddev, size=size)
        kept = np.append(kept, batch[(batch >= mean - 2 * stddev) & (batch <= mean + 2 * stddev)])
    return kept[:size].reshape(shape)


class RandomNormal(RandomInitializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean = mean
        self.stddev = stddev
        super().__init__(seed=seed)

    def __call__(self, shape, dtype=None):
        dtype = _float_dtype(dtype, type(self).__name__)
        return _as_tensor(self._generator().normal(self.mean, self.stddev, _shape(shape)), dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, **super().get_config()}


class TruncatedNormal(RandomInitializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean = mean
        self.stddev = stddev
        super().__init__(seed=seed)

    def __call__(self, shape, dtype=None):
        dtype = _float_dtype(dtype, type(self).__name__)
        return _as_tensor(_truncated_normal(self._generator(), _shape(shape), self.mean,
                                            self.stddev), dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, **super().get_config()}


class RandomUniform(RandomInitializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval = minval
        self.maxval = maxval
        super().__init__(seed=seed)

    def __call__(self, shape, dtype=None):
        dtype = _float_dtype(dtype, type(self).__name__)
        return _as_tensor(self._generator().uniform(self.minval, self.maxval, _shape(shape)),
                          dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, **super().get_config()}


def compute_fans(shape, input_axes=None, output_axes=None):
    """(fan_in, fan_out) of a weight shape: the last two axes are (inputs, outputs), any
    leading axes are a convolution's receptive field and multiply both."""
    shape = tuple(shape)
    if input_axes is not None and output_axes is not None:
        return (int(math.prod(shape[a] for a in input_axes)),
                int(math.prod(shape[a] for a in output_axes)))
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[:-2])
    return int(shape[-2] * receptive), int(shape[-1] * receptive)


class VarianceScaling(RandomInitializer):
    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 input_axes=None, output_axes=None):
        if scale <= 0.0:
            raise ValueError("Argument `scale` must be positive float. "
                             f"Received: scale={scale}")
        if mode not in {"fan_in", "fan_out", "fan_avg"}:
            raise ValueError("Invalid `mode` argument: expected one of {'fan_in', 'fan_out', "
                             f"'fan_avg'}}. Received: mode={mode}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in {"uniform", "truncated_normal", "untruncated_normal"}:
            raise ValueError("Invalid `distribution` argument: expected one of {'uniform', "
                             "'truncated_normal', 'untruncated_normal'}. "
                             f"Received: distribution={distribution}")
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        self.input_axes = input_axes
        self.output_axes = output_axes
        super().__init__(seed=seed)

    def __call__(self, shape, dtype=None):
        dtype = _float_dtype(dtype, type(self).__name__)
        shape = _shape(shape)
        fan_in, fan_out = compute_fans(shape, self.input_axes, self.output_axes)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        scale = self.scale / max(1.0, fan[self.mode])
        rng = self._generator()
        if self.distribution == "truncated_normal":
            values = _truncated_normal(rng, shape, 0.0, math.sqrt(scale) / 0.87962566103423978)
        elif self.distribution == "untruncated_normal":
            values = rng.normal(0.0, math.sqrt(scale), shape)
        else:
            limit = math.sqrt(3.0 * scale)
            values = rng.uniform(-limit, limit, shape)
        return _as_tensor(values, dtype)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "mode": self.mode,
                "distribution": self.distribution, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


class _Preset(VarianceScaling):
    """A VarianceScaling with fixed arguments; its config leaves them out, as Keras writes it.
    Subclasses set `_ARGS` = (scale, mode, distribution)."""

    _ARGS = (1.0, "fan_in", "truncated_normal")

    def __init__(self, seed=None, input_axes=None, output_axes=None):
        scale, mode, distribution = self._ARGS
        super().__init__(scale=scale, mode=mode, distribution=distribution, seed=seed,
                         input_axes=input_axes, output_axes=output_axes)

    def get_config(self):
        return {**RandomInitializer.get_config(self), "input_axes": self.input_axes,
                "output_axes": self.output_axes}


class GlorotUniform(_Preset):
    """Uniform in ±sqrt(6 / (fan_in + fan_out))."""
    _ARGS = (1.0, "fan_avg", "uniform")


class GlorotNormal(_Preset):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out))."""
    _ARGS = (1.0, "fan_avg", "truncated_normal")


class LecunUniform(_Preset):
    """Uniform in ±sqrt(3 / fan_in)."""
    _ARGS = (1.0, "fan_in", "uniform")


class LecunNormal(_Preset):
    """Truncated normal with stddev sqrt(1 / fan_in)."""
    _ARGS = (1.0, "fan_in", "truncated_normal")


class HeUniform(_Preset):
    """Uniform in ±sqrt(6 / fan_in)."""
    _ARGS = (2.0, "fan_in", "uniform")


class HeNormal(_Preset):
    """Truncated normal with stddev sqrt(2 / fan_in)."""
    _ARGS = (2.0, "fan_in", "truncated_normal")


class Orthogonal(RandomInitializer):
    """An orthogonal matrix (times `gain`) from the QR decomposition of a normal draw; shapes
    of rank > 2 are treated as (prod(shape[:-1]), shape[-1])."""

    def __init__(self, gain=1.0, seed=None):
        self.gain = gain
        super().__init__(seed=seed)

    def __call__(self, shape, dtype=None):
        dtype = _float_dtype(dtype, type(self).__name__)
        shape = _shape(shape)
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional. "
                             f"Received: shape={shape} of rank {len(shape)}.")
        rows, cols = math.prod(shape[:-1]), shape[-1]
        a = self._generator().normal(size=(max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return _as_tensor(self.gain * q.reshape(shape), dtype)

    def get_config(self):
        return {"gain": self.gain, **super().get_config()}
