"""`keras.layers.Dropout`: random zeroing while training, identity otherwise."""

from __future__ import annotations

from ....core.tensor_conversion import convert_to_tensor
from ....ops import math_ops as _math
from ....ops import random_ops as _random
from ..layer import Layer

__all__ = ["Dropout"]


class Dropout(Layer):
    """≈ `keras.layers.Dropout(rate, noise_shape=None, seed=None)`: with `training=True`, each
    element is zeroed with probability `rate` and the rest scaled by `1 / (1 - rate)`.

    The mask comes from eager's stateful `dropout` op, so a step traced by `eager.function`
    draws a fresh mask on every call, as Keras's seed generator does. The masks themselves are
    eager's random stream, not Keras's (same distribution, different draws)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 <= rate <= 1:
            raise ValueError("Invalid value received for argument `rate`. Expected a float "
                             f"value between 0 and 1. Received: rate={rate}")
        if noise_shape is not None:
            try:
                noise_shape = tuple(noise_shape)
            except TypeError:
                raise ValueError("Invalid value received for argument `noise_shape`. Expected "
                                 "a tuple or list of integers. Received: "
                                 f"noise_shape={noise_shape}") from None
        self.rate = rate
        self.seed = seed
        self.noise_shape = noise_shape
        self.supports_masking = True
        self.built = True

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return _math.multiply(inputs, convert_to_tensor(0, dtype=inputs.dtype))
        noise_shape = self.noise_shape
        if noise_shape is not None:
            shape = inputs.shape.as_list()
            noise_shape = [shape[i] if d is None else d for i, d in enumerate(noise_shape)]
            if None in noise_shape:
                noise_shape = None
        return _random.dropout(inputs, self.rate, noise_shape=noise_shape, seed=self.seed)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(rate=self.rate, seed=self.seed, noise_shape=self.noise_shape)
        return config

