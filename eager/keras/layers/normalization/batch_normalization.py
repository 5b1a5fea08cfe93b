"""`BatchNormalization`: Keras 3's layer, with moving statistics as non-trainable weights.

In training (`training=True` and the layer trainable) it normalizes with the batch's moments
and moves `moving_mean`/`moving_variance` toward them by `momentum`, through the variables'
`assign`: inside an `eager.function` those assignments are ops of the graph, so a traced train
step updates the statistics on every call, not once at trace time. Otherwise (inference, or a
frozen layer, as Keras 3 rules) it normalizes with the moving statistics and changes nothing.
"""

from __future__ import annotations

from ....ops import composite_ops as _composite
from ....ops import math_ops as _math
from ....ops import array_ops as _array
from ... import constraints, initializers, regularizers
from ..input_spec import InputSpec
from ..layer import Layer

__all__ = ["BatchNormalization"]


class BatchNormalization(Layer):
    """≈ `keras.layers.BatchNormalization(axis=-1, momentum=0.99, epsilon=1e-3, center=True,
    scale=True, beta_initializer="zeros", gamma_initializer="ones",
    moving_mean_initializer="zeros", moving_variance_initializer="ones", ...)`;
    `renorm=True` and `synchronized=True` are refused."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, synchronized=False, **kwargs):
        super().__init__(**kwargs)
        if renorm:
            raise NotImplementedError("BatchNormalization: `renorm=True` is not supported by "
                                      "eager.keras.")
        if synchronized:
            raise NotImplementedError("BatchNormalization: `synchronized=True` is not "
                                      "supported by eager.keras (one replica per step).")
        self.axis = int(axis)
        self.synchronized = synchronized
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.center = center
        self.scale = scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.supports_masking = True
        self.renorm = renorm
        self.renorm_clipping = renorm_clipping
        self.renorm_momentum = renorm_momentum
        self.gamma = None
        self.beta = None
        self.moving_mean = None
        self.moving_variance = None
        self._reduction_axes = None

    def build(self, input_shape):
        self.compute_output_shape(input_shape)
        shape = (input_shape[self.axis],)
        if self.scale:
            self.gamma = self.add_weight(shape=shape, name="gamma",
                                         initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint, autocast=False)
        if self.center:
            self.beta = self.add_weight(shape=shape, name="beta",
                                        initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint, autocast=False)
        self.moving_mean = self.add_weight(shape=shape, name="moving_mean",
                                           initializer=self.moving_mean_initializer,
                                           trainable=False, autocast=False)
        self.moving_variance = self.add_weight(shape=shape, name="moving_variance",
                                               initializer=self.moving_variance_initializer,
                                               trainable=False, autocast=False)
        rank = len(input_shape)
        self.input_spec = InputSpec(ndim=rank, axes={self.axis: input_shape[self.axis]})
        axis = self.axis % rank
        self._reduction_axes = [a for a in range(rank) if a != axis]

    def _broadcast(self, v, rank):
        """A per-channel vector shaped to broadcast against the input (channel axis kept)."""
        axis = self.axis % rank
        if axis == rank - 1:
            return v
        shape = [1] * rank
        shape[axis] = -1
        return _array.reshape(v, shape)

    def call(self, inputs, training=None, mask=None):
        rank = inputs.shape.rank
        if mask is not None and len(mask.shape) != rank - 1:
            raise ValueError("The mask provided should be one dimension less than the inputs. "
                             f"Received: mask.shape={tuple(mask.shape)}, "
                             f"inputs.shape={tuple(inputs.shape)}")
        if training and self.trainable:
            if mask is None:
                mean, variance = _composite.moments(inputs, self._reduction_axes)
            else:
                mean, variance = self._masked_moments(inputs, mask)
            momentum = self.momentum
            self.moving_mean.assign(self.moving_mean * momentum + mean * (1.0 - momentum))
            self.moving_variance.assign(self.moving_variance * momentum +
                                        variance * (1.0 - momentum))
        else:
            mean, variance = self.moving_mean.value(), self.moving_variance.value()
        # Keras's arithmetic: x * inv + (beta - mean * inv), inv = gamma / sqrt(var + eps).
        inv = _math.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            inv = inv * self.gamma
        shift = -mean * inv
        if self.beta is not None:
            shift = shift + self.beta
        return inputs * self._broadcast(inv, rank) + self._broadcast(shift, rank)

    def _masked_moments(self, inputs, mask):
        """Mean and variance over the unmasked positions only (a mask of the input's shape
        without the last axis), each divided by (count + Keras's epsilon 1e-7)."""
        keep = _array.broadcast_to(_array.expand_dims(_math.cast(mask, "bool"), -1),
                                   _array.shape(inputs))
        zero = _math.cast(0, inputs.dtype)
        axes = self._reduction_axes
        count = _math.reduce_sum(_math.cast(keep, inputs.dtype), axes, keepdims=True) + 1e-7
        mean = _math.reduce_sum(_math.where(keep, inputs, zero), axes, keepdims=True) / count
        difference = _math.where(keep, inputs - mean, zero)
        variance = _math.reduce_sum(difference * difference, axes, keepdims=True) / count
        return _array.squeeze(mean), _array.squeeze(variance)

    def compute_output_shape(self, input_shape):
        if self.axis >= len(input_shape) or self.axis < -len(input_shape):
            raise ValueError(f"Axis {self.axis} is out of bounds for input shape "
                             f"{tuple(input_shape)}. Received: axis={self.axis}")
        return input_shape

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({
            "axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon,
            "center": self.center, "scale": self.scale,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            "moving_mean_initializer": initializers.serialize(self.moving_mean_initializer),
            "moving_variance_initializer":
                initializers.serialize(self.moving_variance_initializer),
            "beta_regularizer": regularizers.serialize(self.beta_regularizer),
            "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
            "beta_constraint": constraints.serialize(self.beta_constraint),
            "gamma_constraint": constraints.serialize(self.gamma_constraint),
            "synchronized": self.synchronized, "renorm": self.renorm,
            "renorm_clipping": self.renorm_clipping, "renorm_momentum": self.renorm_momentum})
        return config
