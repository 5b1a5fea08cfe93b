"""`keras.layers.ZeroPadding1D/2D` and `Cropping1D/2D`: zeros added around, or rows cut from,
the spatial axes of each example (one `pad` op, or one slice)."""

from __future__ import annotations

from ....ops import array_ops as _array
from ..convolutional.arguments import standardize_data_format, standardize_tuple
from ..input_spec import InputSpec
from ..layer import Layer

__all__ = ["ZeroPadding1D", "ZeroPadding2D", "Cropping1D", "Cropping2D"]

_PAIRS_MESSAGE = (
    "`{name}` should be either an int, a tuple of 2 ints (symmetric_height_crop, "
    "symmetric_width_crop), or a tuple of 2 tuples of 2 ints ((top_crop, bottom_crop), "
    "(left_crop, right_crop)). Received: {name}={value}.")


def _two_pairs(value, name) -> tuple:
    """Keras's 2-D `padding`/`cropping`: an int, two ints, or two pairs of ints."""
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"`{name}` cannot be negative. Received: {name}={value}.")
        return ((value, value), (value, value))
    if not hasattr(value, "__len__"):
        raise ValueError(_PAIRS_MESSAGE.format(name=name, value=value))
    if len(value) != 2:
        raise ValueError(f"`{name}` should have two elements. Received: {name}={value}.")
    return (standardize_tuple(value[0], 2, f"1st entry of {name}", allow_zero=True),
            standardize_tuple(value[1], 2, f"2nd entry of {name}", allow_zero=True))


def _spatial_start(data_format) -> int:
    return 2 if data_format == "channels_first" else 1


class ZeroPadding1D(Layer):
    """≈ `keras.layers.ZeroPadding1D(padding=1, data_format=None)`: `padding` zeros (an int,
    or (before, after)) around the steps axis of (batch, steps, features)."""

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.padding = standardize_tuple(padding, 2, "padding", allow_zero=True)
        self.input_spec = InputSpec(ndim=3)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        axis = _spatial_start(self.data_format)
        if shape[axis] is not None:
            shape[axis] += sum(self.padding)
        return tuple(shape)

    def call(self, inputs):
        paddings = [[0, 0], [0, 0], [0, 0]]
        paddings[_spatial_start(self.data_format)] = list(self.padding)
        return _array.pad(inputs, paddings)

    def get_config(self):
        config = super().get_config()
        config.update(padding=self.padding, data_format=self.data_format)
        return config


class ZeroPadding2D(Layer):
    """≈ `keras.layers.ZeroPadding2D(padding=(1, 1), data_format=None)`: zeros around the
    height and width axes; `padding` is an int, (height, width), or
    ((top, bottom), (left, right))."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.padding = _two_pairs(padding, "padding")
        self.input_spec = InputSpec(ndim=4)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        start = _spatial_start(self.data_format)
        for i, pair in enumerate(self.padding):
            if shape[start + i] is not None:
                shape[start + i] += sum(pair)
        return tuple(shape)

    def call(self, inputs):
        paddings = [[0, 0]] * 4
        start = _spatial_start(self.data_format)
        paddings[start:start + 2] = [list(p) for p in self.padding]
        return _array.pad(inputs, paddings)

    def get_config(self):
        config = super().get_config()
        config.update(padding=self.padding, data_format=self.data_format)
        return config


class Cropping1D(Layer):
    """≈ `keras.layers.Cropping1D(cropping=(1, 1))`: (start, end) steps cut from
    (batch, steps, features)."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = standardize_tuple(cropping, 2, "cropping", allow_zero=True)
        self.input_spec = InputSpec(ndim=3)

    def _check(self, shape, what):
        if shape[1] is not None and sum(self.cropping) >= shape[1]:
            raise ValueError("`cropping` parameter of `Cropping1D` layer must be smaller than "
                             f"the input length. Received: {what}={tuple(shape)}, "
                             f"cropping={self.cropping}")

    def compute_output_shape(self, input_shape):
        self._check(input_shape, "input_shape")
        length = None if input_shape[1] is None else input_shape[1] - sum(self.cropping)
        return (input_shape[0], length, input_shape[2])

    def call(self, inputs):
        self._check(inputs.shape.as_list(), "inputs.shape")
        start, end = self.cropping
        return inputs[:, start:-end if end else None, :]

    def get_config(self):
        config = super().get_config()
        config["cropping"] = self.cropping
        return config


class Cropping2D(Layer):
    """≈ `keras.layers.Cropping2D(cropping=((0, 0), (0, 0)), data_format=None)`: rows and
    columns cut from the image's edges; `cropping` is an int, (height, width), or
    ((top, bottom), (left, right))."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.cropping = _two_pairs(cropping, "cropping")
        self.input_spec = InputSpec(ndim=4)

    def _check(self, shape, what):
        start = _spatial_start(self.data_format)
        for i, pair in enumerate(self.cropping):
            size = shape[start + i]
            if size is not None and sum(pair) >= size:
                raise ValueError("Values in `cropping` argument should be smaller than the "
                                 "corresponding spatial dimension of the input. Received: "
                                 f"{what}={tuple(shape)}, cropping={self.cropping}")

    def compute_output_shape(self, input_shape):
        self._check(input_shape, "input_shape")
        shape = list(input_shape)
        start = _spatial_start(self.data_format)
        for i, pair in enumerate(self.cropping):
            if shape[start + i] is not None:
                shape[start + i] -= sum(pair)
        return tuple(shape)

    def call(self, inputs):
        self._check(inputs.shape.as_list(), "inputs.shape")
        index = [slice(None)] * 4
        start = _spatial_start(self.data_format)
        for i, (before, after) in enumerate(self.cropping):
            index[start + i] = slice(before, -after if after else None)
        return inputs[tuple(index)]

    def get_config(self):
        config = super().get_config()
        config.update(cropping=self.cropping, data_format=self.data_format)
        return config
