"""`keras.layers.Activation` and `keras.layers.Identity`: layers without weights that apply a
function (or nothing) element-wise."""

from __future__ import annotations

from ... import activations
from ..layer import Layer

__all__ = ["Activation", "Identity"]


class Activation(Layer):
    """≈ `keras.layers.Activation(activation)`: a name ("relu") or a callable."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config["activation"] = activations.serialize(self.activation)
        return config


class Identity(Layer):
    """≈ `keras.layers.Identity()`: returns its input unchanged."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return super().get_config()
