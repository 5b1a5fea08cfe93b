"""`keras.layers.Normalization`: `(x - mean) / sqrt(variance)` per position of the kept axes,
with the statistics given or learned by `adapt(data)` (Keras's batch-merged mean and variance
over a dataset), and `invert=True` for the inverse map."""

from __future__ import annotations

import math

import numpy as np

from ....ops import array_ops as _array
from ....ops import math_ops as _math
from ... import backend
from ..layer import Layer
from .adapt_data import adapt_batches

__all__ = ["Normalization"]


class Normalization(Layer):
    """≈ `keras.layers.Normalization(axis=-1, mean=None, variance=None, invert=False)`.
    Without `mean`/`variance` the layer holds non-trainable `mean`, `variance` and `count`
    weights (zeros, ones: identity until adapted), which `adapt` sets and a traced call reads."""

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        self.axis = tuple(axis)
        self.input_mean = mean
        self.input_variance = variance
        self.invert = invert
        self.supports_masking = True
        self._build_input_shape = None
        if (mean is not None) != (variance is not None):
            raise ValueError("When setting values directly, both `mean` and `variance` must be "
                             f"set. Received: mean={mean} and variance={variance}")
        if mean is not None:
            if np.shape(mean) != np.shape(variance):
                raise ValueError("When setting values directly, `mean` and `variance` must "
                                 f"have the same shape. Received: mean shape {np.shape(mean)} "
                                 f"and variance shape {np.shape(variance)}")
            if len(np.shape(mean)) > len(self.axis):
                raise ValueError("The rank of `mean` must be less than or equal to the number "
                                 f"of axes ({len(self.axis)}). Received: mean shape "
                                 f"{np.shape(mean)} for axis {self.axis}")

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        ndim = len(input_shape)
        self._build_input_shape = input_shape
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError("All `axis` values must be in the range [-ndim, ndim). Received "
                             f"inputs with ndim={ndim}, while axis={self.axis}")
        self._keep_axis = tuple(sorted(a % ndim for a in self.axis))
        for d in self._keep_axis:
            if input_shape[d] is None:
                raise ValueError(f"All `axis` values to be kept must have a known shape. "
                                 f"Received axis={self.axis}, inputs.shape={input_shape}, with "
                                 f"unknown axis at index {d}")
        self._reduce_axis = tuple(d for d in range(ndim) if d not in self._keep_axis)
        self._broadcast_shape = [input_shape[d] if d in self._keep_axis else 1
                                 for d in range(ndim)]
        self._stats_shape = tuple(input_shape[d] for d in self._keep_axis)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=self._stats_shape,
                                              initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=self._stats_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int64",
                                         initializer="zeros", trainable=False)
            self._fixed = None
        else:
            self._fixed = tuple(self._given(v) for v in (self.input_mean, self.input_variance))

    def _given(self, value):
        """A given mean/variance broadcast to the input's rank (trailing kept axes first)."""
        value = np.asarray(value, np.float64)
        expanded = [1] * len(self._broadcast_shape)
        for i in range(1, value.ndim + 1):
            expanded[self._keep_axis[-i]] = value.shape[-i]
        value = np.broadcast_to(value.reshape(expanded), self._broadcast_shape)
        return value.astype(self.dtype)

    def adapt(self, data):
        """Sets the mean and variance from `data` (see eager/keras/layers/preprocessing/
        adapt_data.py for what it may be): all at once for one array, else merged batch by
        batch with Keras's weighting."""
        shape, batches, single = adapt_batches(data)
        if not self.built:
            self.build(shape)
            self.built = True
        else:
            for d in self._keep_axis:
                if shape[d] != self._build_input_shape[d]:
                    raise ValueError(f"The layer was built with input_shape="
                                     f"{self._build_input_shape}, but adapt() is being called "
                                     f"with data with an incompatible shape, data.shape={shape}")
        if self.input_mean is not None:
            return
        if single:
            batch = next(batches)
            mean, var = batch.mean(axis=self._reduce_axis), batch.var(axis=self._reduce_axis)
        else:
            mean = np.zeros(self._stats_shape, np.float64)
            var = np.zeros(self._stats_shape, np.float64)
            total = 0
            for batch in batches:
                batch = batch.astype(self.dtype)
                for d in self._keep_axis:
                    if batch.shape[d] != self._build_input_shape[d]:
                        raise ValueError("adapt() yielded a batch with incompatible shape. "
                                         f"Expected {self._build_input_shape}, got "
                                         f"{tuple(batch.shape)}.")
                b_mean = batch.mean(axis=self._reduce_axis)
                b_var = batch.var(axis=self._reduce_axis)
                count = math.prod(batch.shape[d] for d in self._reduce_axis)
                total += count
                new_weight = count / total
                old_weight = 1.0 - new_weight
                new_mean = mean * old_weight + b_mean * new_weight
                var = (var + (mean - new_mean) ** 2) * old_weight + \
                    (b_var + (b_mean - new_mean) ** 2) * new_weight
                mean = new_mean
        self.adapt_mean.assign(np.asarray(mean, self.adapt_mean.dtype.name))
        self.adapt_variance.assign(np.asarray(var, self.adapt_variance.dtype.name))

    def _statistics(self):
        if self._fixed is not None:
            return self._fixed
        return (_array.reshape(self.adapt_mean, self._broadcast_shape),
                _array.reshape(self.adapt_variance, self._broadcast_shape))

    def call(self, inputs):
        x = inputs if inputs.dtype.name == self.dtype else _math.cast(inputs, self.dtype)
        mean, variance = self._statistics()
        std = _math.maximum(_math.sqrt(variance), backend.epsilon())
        if self.invert:
            return _math.add(mean, _math.multiply(x, std))
        return _math.divide(_math.subtract(x, mean), std)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(axis=list(self.axis), invert=self.invert,
                      mean=_listed(self.input_mean), variance=_listed(self.input_variance))
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("mean", "variance"):
            if isinstance(config.get(key), list):
                config[key] = np.asarray(config[key])
        return super().from_config(config)


def _listed(value):
    return np.asarray(value).tolist() if value is not None else None
