"""`keras.layers.Concatenate` and `concatenate`: join a list of tensors along one axis."""

from __future__ import annotations

from ....ops import array_ops as _array
from ..layer import Layer

__all__ = ["Concatenate", "concatenate"]


class Concatenate(Layer):
    """≈ `keras.layers.Concatenate(axis=-1)`: all other axes must match."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.supports_masking = True

    def build(self, input_shape):
        if len(input_shape) < 1 or not isinstance(input_shape[0], (tuple, list)):
            raise ValueError("A `Concatenate` layer should be called on a list of at least 1 "
                             f"input. Received: input_shape={input_shape}")
        if all(shape is None for shape in input_shape):
            return
        reduced = []
        for shape in input_shape:
            shape = list(shape)
            del shape[self.axis]
            reduced.append(shape)
        first = reduced[0]
        for shape in reduced[1:]:
            if len(shape) != len(first) or any(a is not None and b is not None and a != b
                                               for a, b in zip(first, shape)):
                raise ValueError("A `Concatenate` layer requires inputs with matching shapes "
                                 "except for the concatenation axis. Received: "
                                 f"input_shape={input_shape}")

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError("A `Concatenate` layer should be called on a list of inputs. "
                             f"Received: input_shape={inputs}")
        return _array.concat(list(inputs), self.axis)

    def compute_output_shape(self, input_shape):
        output = list(input_shape[0])
        total = 0
        for shape in input_shape:
            if total is None or shape[self.axis] is None:
                total = None
            else:
                total += shape[self.axis]
        output[self.axis] = total
        return tuple(output)

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config


def concatenate(inputs, axis=-1, **kwargs):
    """≈ `keras.layers.concatenate(inputs, axis=-1)`: `Concatenate(axis)(inputs)`."""
    return Concatenate(axis=axis, **kwargs)(inputs)
