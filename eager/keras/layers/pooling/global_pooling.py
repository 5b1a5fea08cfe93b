"""Global pooling layers: the mean or max over every spatial axis (`keepdims` keeps them as
size-1 axes), one reduction op each."""

from __future__ import annotations

from ....ops import array_ops as _array
from ....ops import math_ops as _math
from ..convolutional.arguments import standardize_data_format
from ..input_spec import InputSpec
from ..layer import Layer

__all__ = ["GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
           "GlobalMaxPooling2D"]


class BaseGlobalPooling(Layer):
    """Shared global pooling over `pool_dimensions` spatial axes."""

    _reduce = None

    def __init__(self, pool_dimensions, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=pool_dimensions + 2)
        self._pool_dimensions = pool_dimensions

    def call(self, inputs):
        n = self._pool_dimensions
        axes = list(range(1, n + 1)) if self.data_format == "channels_last" \
            else list(range(2, n + 2))
        return type(self)._reduce(inputs, axis=axes, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        n = len(input_shape) - 2
        if self.data_format == "channels_last":
            return (input_shape[0], *((1,) * n if self.keepdims else ()), input_shape[-1])
        return (input_shape[0], input_shape[1], *((1,) * n if self.keepdims else ()))

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"data_format": self.data_format, "keepdims": self.keepdims})
        return config


class GlobalAveragePooling1D(BaseGlobalPooling):
    """≈ `keras.layers.GlobalAveragePooling1D(data_format=None, keepdims=False)`; with a mask
    (batch, steps) the mean is over the unmasked steps only, and the output has no mask."""

    _reduce = staticmethod(_math.reduce_mean)

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(1, data_format=data_format, keepdims=keepdims, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        channels_last = self.data_format == "channels_last"
        steps = 1 if channels_last else 2
        keep = _array.expand_dims(_math.cast(mask, "bool"), 2 if channels_last else 1)
        total = _math.reduce_sum(_math.where(keep, inputs, _math.cast(0, inputs.dtype)),
                                 axis=steps, keepdims=self.keepdims)
        count = _math.reduce_sum(_math.cast(keep, inputs.dtype), axis=steps,
                                 keepdims=self.keepdims)
        return total / count

    def compute_mask(self, inputs, mask=None):
        return None


class GlobalAveragePooling2D(BaseGlobalPooling):
    """≈ `keras.layers.GlobalAveragePooling2D(data_format=None, keepdims=False)`."""

    _reduce = staticmethod(_math.reduce_mean)

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(2, data_format=data_format, keepdims=keepdims, **kwargs)


class GlobalMaxPooling1D(BaseGlobalPooling):
    """≈ `keras.layers.GlobalMaxPooling1D(data_format=None, keepdims=False)`."""

    _reduce = staticmethod(_math.reduce_max)

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(1, data_format=data_format, keepdims=keepdims, **kwargs)


class GlobalMaxPooling2D(BaseGlobalPooling):
    """≈ `keras.layers.GlobalMaxPooling2D(data_format=None, keepdims=False)`."""

    _reduce = staticmethod(_math.reduce_max)

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(2, data_format=data_format, keepdims=keepdims, **kwargs)
