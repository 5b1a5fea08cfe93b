"""`keras.layers.Rescaling`: `inputs * scale + offset` in the layer's dtype."""

from __future__ import annotations

import numpy as np

from ....ops import math_ops as _math
from ..layer import Layer

__all__ = ["Rescaling"]


class Rescaling(Layer):
    """≈ `keras.layers.Rescaling(scale, offset=0.0)`; `scale`/`offset` may be per channel
    (lists broadcast over the last axis). Integer inputs (uint8 images) are cast first."""

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.offset = offset
        self.supports_masking = True

    def call(self, inputs):
        x = _math.cast(inputs, self.dtype) if inputs.dtype.name != self.dtype else inputs
        scale = _math.cast(np.asarray(self.scale, np.float64), self.dtype)
        offset = _math.cast(np.asarray(self.offset, np.float64), self.dtype)
        return _math.add(_math.multiply(x, scale), offset)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(scale=_plain(self.scale), offset=_plain(self.offset))
        return config


def _plain(value):
    return value.tolist() if isinstance(value, np.ndarray) else value
