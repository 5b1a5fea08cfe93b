"""`keras.layers.GroupNormalization` and `UnitNormalization`."""

from __future__ import annotations

from ....ops import array_ops as _array
from ....ops import composite_ops as _composite
from ....ops import math_ops as _math
from ... import constraints, initializers, regularizers
from ..input_spec import InputSpec
from ..layer import Layer

__all__ = ["GroupNormalization", "UnitNormalization"]


class GroupNormalization(Layer):
    """≈ `keras.layers.GroupNormalization(groups=32, axis=-1, epsilon=1e-3, center=True,
    scale=True, beta_initializer="zeros", gamma_initializer="ones", ...)`: the channels of
    `axis` split into `groups` groups, each normalized over its channels and every non-batch
    position (`groups=-1`: one group per channel, instance normalization)."""

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.groups = groups
        self.axis = axis
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)

    def build(self, input_shape):
        dim = input_shape[self.axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension "
                             "but the layer received an input with shape "
                             f"{tuple(input_shape)}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number "
                             f"of channels ({dim}).")
        if dim % self.groups != 0:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the "
                             f"number of channels ({dim}).")
        self.input_spec = InputSpec(ndim=len(input_shape), axes={self.axis: dim})
        self.gamma = self.add_weight(
            shape=(dim,), name="gamma", initializer=self.gamma_initializer,
            regularizer=self.gamma_regularizer, constraint=self.gamma_constraint) \
            if self.scale else None
        self.beta = self.add_weight(
            shape=(dim,), name="beta", initializer=self.beta_initializer,
            regularizer=self.beta_regularizer, constraint=self.beta_constraint) \
            if self.center else None

    def call(self, inputs):
        rank = inputs.shape.rank
        axis = self.axis % rank
        dim = inputs.shape[axis]
        per_group = dim // self.groups
        # (..., groups, per_group, ...): the channel axis split in two
        static = inputs.shape.as_list()
        grouped_shape = [-1 if d is None else d for d in static]
        grouped_shape[axis:axis + 1] = [self.groups, per_group]
        if static.count(None) > 1:
            dynamic = _array.shape(inputs)
            grouped_shape = _array.concat(
                [dynamic[:axis], [self.groups, per_group], dynamic[axis + 1:]], 0)
        x = _array.reshape(inputs, grouped_shape)
        if not x.dtype.is_floating or x.dtype.size < 4:
            x = _math.cast(x, "float32")
        reduce = [d for d in range(1, rank + 1) if d != axis]
        mean, variance = _composite.moments(x, reduce, keepdims=True)
        inv = _math.rsqrt(_math.add(variance, self.epsilon))
        param_shape = [1] * (rank + 1)
        param_shape[axis:axis + 2] = [self.groups, per_group]
        if self.gamma is not None:
            inv = _math.multiply(inv, _math.cast(_array.reshape(self.gamma, param_shape),
                                                 x.dtype))
        shift = _math.negative(_math.multiply(mean, inv))
        if self.beta is not None:
            shift = _math.add(shift, _math.cast(_array.reshape(self.beta, param_shape), x.dtype))
        y = _math.add(_math.multiply(x, inv), shift)
        y = _array.reshape(y, _array.shape(inputs) if static.count(None) else static)
        return _math.cast(y, inputs.dtype) if y.dtype != inputs.dtype else y

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({
            "groups": self.groups, "axis": self.axis, "epsilon": self.epsilon,
            "center": self.center, "scale": self.scale,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            "beta_regularizer": regularizers.serialize(self.beta_regularizer),
            "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
            "beta_constraint": constraints.serialize(self.beta_constraint),
            "gamma_constraint": constraints.serialize(self.gamma_constraint)})
        return config


class UnitNormalization(Layer):
    """≈ `keras.layers.UnitNormalization(axis=-1)`: each vector along `axis` (an int or a
    list) scaled to unit L2 norm; a zero vector stays zero (the inverse norm is capped at
    1e12)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError("Invalid value for `axis` argument: expected an int or a list/tuple "
                            f"of ints. Received: axis={axis}")
        self.supports_masking = True

    def call(self, inputs):
        square_sum = _math.reduce_sum(_math.square(inputs), axis=self.axis, keepdims=True)
        inv_norm = _math.minimum(_math.rsqrt(square_sum), 1e12)
        return _math.multiply(inputs, inv_norm)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config
