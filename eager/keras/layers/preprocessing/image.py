"""`keras.layers.Resizing` and `CenterCrop`: images (batch, height, width, channels) or a single
image, brought to a fixed size with TensorFlow's resize arithmetic
(eager/keras/layers/interpolation.py)."""

from __future__ import annotations

from ....ops import array_ops as _array
from ....ops import math_ops as _math
from ..convolutional.arguments import standardize_data_format
from ..interpolation import INTERPOLATIONS, resize
from ..layer import Layer

__all__ = ["Resizing", "CenterCrop", "aspect_crop_box"]


def aspect_crop_box(height, width, target_height, target_width):
    """(top, left, crop height, crop width): the centred box of the target's aspect ratio,
    Keras's `crop_to_aspect_ratio` / `smart_resize` rule."""
    crop_h = max(min(height, int(float(width * target_height) / target_width)), 1)
    crop_w = max(min(width, int(float(height * target_width) / target_height)), 1)
    return int(float(height - crop_h) / 2), int(float(width - crop_w) / 2), crop_h, crop_w


class _ImageLayer(Layer):
    """Channels-last batches inside `call`: a single image gets a batch axis, channels-first
    input is transposed, and both are undone on the way out."""

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height = height
        self.width = width
        self.data_format = standardize_data_format(data_format)

    def _to_batch(self, inputs):
        x = inputs
        if not x.dtype.is_floating:
            x = _math.cast(x, self.dtype)
        single = x.shape.rank == 3
        if single:
            x = _array.expand_dims(x, 0)
        if self.data_format == "channels_first":
            x = _array.transpose(x, (0, 2, 3, 1))
        return x, single

    def _from_batch(self, x, single):
        if self.data_format == "channels_first":
            x = _array.transpose(x, (0, 3, 1, 2))
        return x[0] if single else x

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        h_axis = -2 if self.data_format == "channels_first" else -3
        shape[h_axis], shape[h_axis + 1] = self.height, self.width
        return tuple(shape)


class Resizing(_ImageLayer):
    """≈ `keras.layers.Resizing(height, width, interpolation="bilinear",
    crop_to_aspect_ratio=False, pad_to_aspect_ratio=False, fill_mode="constant",
    fill_value=0.0, antialias=False, data_format=None)`. "bilinear" and "nearest" are
    supported; `pad_to_aspect_ratio` and `antialias` raise NotImplementedError."""

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0,
                 antialias=False, data_format=None, **kwargs):
        super().__init__(height, width, data_format, **kwargs)
        if interpolation not in INTERPOLATIONS:
            raise NotImplementedError(f"Resizing: interpolation={interpolation!r} is not "
                                      f"supported by eager.keras (one of {INTERPOLATIONS}).")
        if pad_to_aspect_ratio and crop_to_aspect_ratio:
            raise ValueError("Only one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio` "
                             "can be `True`.")
        if pad_to_aspect_ratio or antialias:
            raise NotImplementedError("Resizing: `pad_to_aspect_ratio` and `antialias` are not "
                                      "supported by eager.keras.")
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = crop_to_aspect_ratio
        self.pad_to_aspect_ratio = pad_to_aspect_ratio
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.antialias = antialias

    def call(self, inputs):
        x, single = self._to_batch(inputs)
        if self.crop_to_aspect_ratio:
            top, left, h, w = aspect_crop_box(x.shape[1], x.shape[2], self.height, self.width)
            x = x[:, top:top + h, left:left + w, :]
        x = resize(x, self.height, self.width, self.interpolation)
        return self._from_batch(x, single)

    def get_config(self):
        config = super().get_config()
        config.update(data_format=self.data_format, height=self.height, width=self.width,
                      interpolation=self.interpolation,
                      crop_to_aspect_ratio=self.crop_to_aspect_ratio,
                      pad_to_aspect_ratio=self.pad_to_aspect_ratio, fill_mode=self.fill_mode,
                      fill_value=self.fill_value, antialias=self.antialias)
        return config


class CenterCrop(_ImageLayer):
    """≈ `keras.layers.CenterCrop(height, width, data_format=None)`: the centred
    height x width window; an image smaller than that along either side is instead cropped to
    the target's aspect ratio and resized (bilinear), as Keras does."""

    def call(self, inputs):
        x, single = self._to_batch(inputs)
        in_h, in_w = x.shape[1], x.shape[2]
        if in_h >= self.height and in_w >= self.width:
            top, left = (in_h - self.height) // 2, (in_w - self.width) // 2
            x = x[:, top:top + self.height, left:left + self.width, :]
        else:
            top, left, h, w = aspect_crop_box(in_h, in_w, self.height, self.width)
            x = resize(x[:, top:top + h, left:left + w, :], self.height, self.width)
        return self._from_batch(x, single)

    def get_config(self):
        config = super().get_config()
        config.update(data_format=self.data_format, height=self.height, width=self.width)
        return config
