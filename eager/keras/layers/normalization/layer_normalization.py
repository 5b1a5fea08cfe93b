"""`LayerNormalization`: Keras 3's layer (moments over `axis`, per-feature gamma and beta)."""

from __future__ import annotations

import warnings

from ....ops import array_ops as _array
from ....ops import composite_ops as _composite
from ....ops import math_ops as _math
from ... import constraints, initializers, regularizers
from ..layer import Layer

__all__ = ["LayerNormalization"]


class LayerNormalization(Layer):
    """≈ `keras.layers.LayerNormalization(axis=-1, epsilon=1e-3, center=True, scale=True,
    beta_initializer="zeros", gamma_initializer="ones", ...)`; `rms_scaling=True` is Keras's
    deprecated variant (x / sqrt(var + eps) * gamma, no beta), warned about as Keras does."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, **kwargs):
        rms_scaling = kwargs.pop("rms_scaling", False)
        if rms_scaling:
            warnings.warn("You passed `rms_scaling=True`, which is deprecated. This argument "
                          "incorrectly scales the input by the variance, not the root mean "
                          "square. To correctly use RMS Normalization, please use "
                          "`keras.layers.RMSNormalization` instead.", stacklevel=2)
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError("Expected an int or a list/tuple of ints for the argument 'axis', "
                            f"but received: {axis!r}")
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.rms_scaling = rms_scaling
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.supports_masking = True
        self.autocast = False

    def build(self, input_shape):
        self.compute_output_shape(input_shape)
        if isinstance(self.axis, list):
            self.axis = sorted(self.axis)
            shape = tuple(input_shape[a] for a in self.axis)
        else:
            shape = (input_shape[self.axis],)
            self.axis = [self.axis]
        self.gamma = self.beta = None
        if self.scale or self.rms_scaling:
            self.gamma = self.add_weight(name="gamma", shape=shape,
                                         initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint, autocast=False)
        if self.center and not self.rms_scaling:
            self.beta = self.add_weight(name="beta", shape=shape,
                                        initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint, autocast=False)

    def call(self, inputs):
        rank = inputs.shape.rank
        axes = sorted(a % rank for a in self.axis)
        shape = inputs.shape
        broadcast = [1] * rank
        for a in axes:
            broadcast[a] = shape[a] if shape[a] is not None else -1

        def shaped(v):
            return v if axes == [rank - 1] else _array.reshape(v, broadcast)

        mean, variance = _composite.moments(inputs, axes, keepdims=True)
        inv = _math.rsqrt(variance + self.epsilon)
        if self.rms_scaling:
            outputs = inputs * inv
            return outputs * shaped(self.gamma) if self.gamma is not None else outputs
        if self.gamma is not None:
            inv = inv * shaped(self.gamma)
        shift = -mean * inv
        if self.beta is not None:
            shift = shift + shaped(self.beta)
        return inputs * inv + shift

    def compute_output_shape(self, input_shape):
        for axis in self.axis if isinstance(self.axis, list) else [self.axis]:
            if axis >= len(input_shape) or axis < -len(input_shape):
                raise ValueError(f"Axis {axis} is out of bounds for input shape "
                                 f"{tuple(input_shape)}. Received: axis={self.axis}")
        return input_shape

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({
            "axis": self.axis, "epsilon": self.epsilon, "center": self.center,
            "scale": self.scale, "rms_scaling": self.rms_scaling,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            "beta_regularizer": regularizers.serialize(self.beta_regularizer),
            "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
            "beta_constraint": constraints.serialize(self.beta_constraint),
            "gamma_constraint": constraints.serialize(self.gamma_constraint)})
        return config
