"""`keras.layers.UpSampling1D/2D`: each step (or pixel) repeated `size` times; `UpSampling2D`
can interpolate bilinearly instead (TensorFlow's `resize`, half-pixel centres)."""

from __future__ import annotations

from ....ops import array_ops as _array
from ..convolutional.arguments import standardize_data_format, standardize_tuple
from ..input_spec import InputSpec
from ..interpolation import repeat, resize
from ..layer import Layer

__all__ = ["UpSampling1D", "UpSampling2D"]


class UpSampling1D(Layer):
    """≈ `keras.layers.UpSampling1D(size=2)` on (batch, steps, features)."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"Expected an integer value for `size`, got {type(size)}.")
        if size <= 0:
            raise ValueError(f"Argument `size` should be a positive integer. Received: "
                             f"size={size}")
        self.size = size
        self.input_spec = InputSpec(ndim=3)

    def compute_output_shape(self, input_shape):
        steps = None if input_shape[1] is None else input_shape[1] * self.size
        return (input_shape[0], steps, input_shape[2])

    def call(self, inputs):
        return repeat(inputs, self.size, axis=1)

    def get_config(self):
        config = super().get_config()
        config["size"] = self.size
        return config


class UpSampling2D(Layer):
    """≈ `keras.layers.UpSampling2D(size=(2, 2), data_format=None, interpolation="nearest")`.
    "nearest" repeats rows and columns; "bilinear" needs known height and width."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.size = standardize_tuple(size, 2, "size")
        self.interpolation = interpolation.lower()
        if self.interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(f"UpSampling2D: interpolation={interpolation!r} is not "
                                      "supported by eager.keras (use 'nearest' or "
                                      "'bilinear').")
        self.input_spec = InputSpec(ndim=4)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        start = 2 if self.data_format == "channels_first" else 1
        for i in range(2):
            if shape[start + i] is not None:
                shape[start + i] *= self.size[i]
        return tuple(shape)

    def call(self, inputs):
        x = inputs
        if self.data_format == "channels_first":
            x = _array.transpose(x, (0, 2, 3, 1))
        if self.interpolation == "nearest":
            x = repeat(repeat(x, self.size[0], axis=1), self.size[1], axis=2)
        else:
            x = resize(x, x.shape[1] * self.size[0], x.shape[2] * self.size[1], "bilinear")
        if self.data_format == "channels_first":
            x = _array.transpose(x, (0, 3, 1, 2))
        return x

    def get_config(self):
        config = super().get_config()
        config.update(size=self.size, data_format=self.data_format,
                      interpolation=self.interpolation)
        return config
