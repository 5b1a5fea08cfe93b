"""`Masking`: marks the time steps whose features all equal `mask_value` as padding, for the
layers after it (the mask travels with the output; see `eager.keras.masking`)."""

from __future__ import annotations

from ...ops import math_ops as _math
from ..serialization import deserialize_keras_object
from .layer import Layer

__all__ = ["Masking"]


class Masking(Layer):
    """≈ `keras.layers.Masking(mask_value=0.0)`: a step (axis 1) is masked when every value of
    its last axis equals `mask_value`; masked steps are zeroed in the output, which carries the
    mask (batch, time) to the next layers (RNNs skip those steps)."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(mask_value, dict) and mask_value.get("config"):
            mask_value = deserialize_keras_object(mask_value)
        self.mask_value = mask_value
        self.supports_masking = True
        self.built = True

    def compute_mask(self, inputs, mask=None):
        return _math.reduce_any(_math.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        keep = _math.reduce_any(_math.not_equal(inputs, self.mask_value), axis=-1,
                                keepdims=True)
        return _math.where(keep, inputs, _math.cast(0, inputs.dtype))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        config = super().get_config()
        config["mask_value"] = self.mask_value
        return config


