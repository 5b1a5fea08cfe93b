"""`keras.layers.Reshape` and `keras.layers.Flatten`: new shapes for each example, batch axis
kept."""

from __future__ import annotations

import math

from ....core.tensor_conversion import convert_to_tensor
from ....ops import array_ops as _array
from ... import backend
from ..layer import Layer

__all__ = ["Flatten", "Reshape", "reshape_batch", "resolve_target_shape"]


def reshape_batch(x, tail):
    """`x` reshaped to `(batch, *tail)`; `tail` has at most one -1. The batch size is read from
    the static shape when known, else from the tensor at run time (traced with batch None)."""
    tail = tuple(int(d) for d in tail)
    if -1 not in tail:
        return _array.reshape(x, (-1, *tail))
    batch = x.shape[0]
    if batch is not None:
        return _array.reshape(x, (batch, *tail))
    parts = [_array.shape(x)[:1], convert_to_tensor(list(tail), dtype="int32")]
    return _array.reshape(x, _array.concat(parts, 0))


def resolve_target_shape(input_shape, target_shape):
    """Keras's `-1` resolution of `target_shape` against the non-batch `input_shape`; None
    where it cannot be known, ValueError when the sizes cannot match."""
    target_shape = tuple(target_shape)
    if None in input_shape:
        return tuple(None if d == -1 else d for d in target_shape)
    size = math.prod(input_shape)
    if -1 not in target_shape:
        if size != math.prod(target_shape):
            raise ValueError("The total size of the tensor must be unchanged. Received: "
                             f"input_shape={tuple(input_shape)}, target_shape={target_shape}")
        return target_shape
    known = math.prod(d for d in target_shape if d != -1)
    if known == 0 or size % known:
        raise ValueError("The total size of the tensor must be unchanged, however, the input "
                         "size cannot by divided by the specified dimensions in target_shape. "
                         f"Received: input_shape={tuple(input_shape)}, "
                         f"target_shape={target_shape}")
    return tuple(size // known if d == -1 else d for d in target_shape)


def _validate_target_shape(target_shape) -> tuple:
    target_shape = tuple(target_shape)
    if sum(1 for d in target_shape if d == -1) > 1:
        raise ValueError("There must be at most one unknown dimension (-1) in target_shape. "
                         f"Received: target_shape={target_shape}.")
    for d in target_shape:
        if d is not None and d != -1 and (not isinstance(d, int) or d < 0):
            raise ValueError("All dimensions in target_shape must be non-negative integers or "
                             f"-1. Received: target_shape={target_shape}.")
    return target_shape


class Reshape(Layer):
    """≈ `keras.layers.Reshape(target_shape)`: each example to `target_shape` (at most one -1,
    resolved from the input's size)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = _validate_target_shape(target_shape)
        self.built = True

    def compute_output_shape(self, input_shape):
        return (input_shape[0], *resolve_target_shape(tuple(input_shape)[1:], self.target_shape))

    def call(self, inputs):
        tail = resolve_target_shape(tuple(inputs.shape.as_list())[1:], self.target_shape)
        return reshape_batch(inputs, tuple(-1 if d is None else d for d in tail))

    def get_config(self):
        config = super().get_config()
        config["target_shape"] = self.target_shape
        return config


class Flatten(Layer):
    """≈ `keras.layers.Flatten(data_format=None)`: each example to one axis (channels-first
    inputs are moved to channels-last first, as Keras does)."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        data_format = backend.image_data_format() if data_format is None else \
            str(data_format).lower()
        if data_format not in ("channels_first", "channels_last"):
            raise ValueError("The `data_format` argument must be one of {'channels_first', "
                             f"'channels_last'}}. Received: data_format={data_format}")
        self.data_format = data_format
        self.supports_masking = True

    def compute_output_shape(self, input_shape):
        tail = tuple(input_shape)[1:]
        if not tail:
            return (input_shape[0], 1)
        flat = None if None in tail else math.prod(tail)
        return (input_shape[0], flat)

    def call(self, inputs):
        rank = inputs.shape.rank
        if self.data_format == "channels_first" and rank > 2:
            inputs = _array.transpose(inputs, (0, *range(2, rank), 1))
        tail = tuple(inputs.shape.as_list())[1:]
        return reshape_batch(inputs, (1,) if not tail else
                             ((-1,) if None in tail else (math.prod(tail),)))

    def get_config(self):
        config = super().get_config()
        config["data_format"] = self.data_format
        return config
