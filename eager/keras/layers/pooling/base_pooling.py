"""Max and average pooling layers (1-D and 2-D) on `eager.nn.max_pool2d`/`avg_pool2d`.

A 1-D pooling is a 2-D one over a height-1 image, so both ranks run one op whose gradient
conv_ops/nn_grad already define. Average pooling with 'same' padding divides by the number of
real (unpadded) inputs in each window, as Keras on TensorFlow does.
"""

from __future__ import annotations

from ....ops import array_ops as _array
from ....ops import conv_ops as _conv
from ..convolutional.arguments import standardize_data_format, standardize_tuple
from ..input_spec import InputSpec
from ..layer import Layer

__all__ = ["BasePooling", "MaxPooling1D", "MaxPooling2D", "AveragePooling1D",
           "AveragePooling2D"]


class BasePooling(Layer):
    """Shared pooling over `pool_dimensions` spatial axes (`pool_mode` 'max' or 'average')."""

    def __init__(self, pool_size, strides, pool_dimensions, pool_mode="max", padding="valid",
                 data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = standardize_tuple(pool_size, pool_dimensions, "pool_size")
        strides = pool_size if strides is None else strides
        self.strides = standardize_tuple(strides, pool_dimensions, "strides", allow_zero=True)
        self.pool_mode = pool_mode
        if str(padding).lower() not in ("valid", "same"):
            raise ValueError("Invalid padding argument. Expected 'valid' or 'same'. Received: "
                             f"padding={padding}")
        self.padding = padding
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=pool_dimensions + 2)
        self._pool_dimensions = pool_dimensions

    def build(self, input_shape):
        # A window larger than a known input is Keras's shape error here, before any op runs.
        self.compute_output_shape(input_shape)

    def call(self, inputs):
        op = _conv.max_pool2d if self.pool_mode == "max" else _conv.avg_pool2d
        last = self.data_format == "channels_last"
        fmt = "NHWC" if last else "NCHW"
        padding = self.padding.upper()
        if self._pool_dimensions == 2:
            return op(inputs, list(self.pool_size), list(self.strides), padding, data_format=fmt)
        axis = -3 if last else -2   # a height-1 image: [N, 1, W, C] or [N, C, 1, W]
        y = op(_array.expand_dims(inputs, axis), [1, self.pool_size[0]],
               [1, self.strides[0]], padding, data_format=fmt)
        return _array.squeeze(y, [axis])

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        last = self.data_format == "channels_last"
        spatial = input_shape[1:-1] if last else input_shape[2:]
        same = self.padding.lower() == "same"
        out = []
        for size, pool, stride in zip(spatial, self.pool_size, self.strides):
            if size is None:
                out.append(None)
                continue
            length = (size - 1) // stride + 1 if same else (size - pool) // stride + 1
            if length <= 0:
                raise ValueError(
                    "Computed output size would be zero or negative. Received: "
                    f"`inputs.shape={input_shape}`, `pool_size={self.pool_size}`, "
                    f"`strides={self.strides}`, `padding={self.padding}`.")
            out.append(length)
        if last:
            return (input_shape[0], *out, input_shape[-1])
        return (input_shape[0], input_shape[1], *out)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"pool_size": self.pool_size, "padding": self.padding,
                       "strides": self.strides, "data_format": self.data_format})
        return config


class MaxPooling1D(BasePooling):
    """≈ `keras.layers.MaxPooling1D(pool_size=2, strides=None, padding="valid",
    data_format=None)`; `strides` defaults to `pool_size`."""

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, pool_dimensions=1, pool_mode="max",
                         padding=padding, data_format=data_format, name=name, **kwargs)


class MaxPooling2D(BasePooling):
    """≈ `keras.layers.MaxPooling2D(pool_size=(2, 2), strides=None, padding="valid",
    data_format=None)`; `strides` defaults to `pool_size`."""

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, pool_dimensions=2, pool_mode="max",
                         padding=padding, data_format=data_format, name=name, **kwargs)


class AveragePooling1D(BasePooling):
    """≈ `keras.layers.AveragePooling1D(pool_size, strides=None, padding="valid",
    data_format=None)`; `strides` defaults to `pool_size`."""

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, pool_dimensions=1, pool_mode="average",
                         padding=padding, data_format=data_format, name=name, **kwargs)


class AveragePooling2D(BasePooling):
    """≈ `keras.layers.AveragePooling2D(pool_size, strides=None, padding="valid",
    data_format=None)`; `strides` defaults to `pool_size`."""

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, pool_dimensions=2, pool_mode="average",
                         padding=padding, data_format=data_format, name=name, **kwargs)
