"""The element-wise merge layers (`Add`, `Subtract`, `Multiply`, `Average`, `Maximum`,
`Minimum`) and their function forms (`add([a, b])`, ...)."""

from __future__ import annotations

from ....core.tensor_conversion import convert_to_tensor
from ....ops import math_ops as _math
from .base_merge import Merge

__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "add", "subtract",
           "multiply", "average", "maximum", "minimum"]


def _fold(op, inputs):
    output = inputs[0]
    for x in inputs[1:]:
        output = op(output, x)
    return output


class Add(Merge):
    """≈ `keras.layers.Add()`: the sum of the inputs."""

    def _merge_function(self, inputs):
        return _fold(_math.add, inputs)


class Subtract(Merge):
    """≈ `keras.layers.Subtract()`: `inputs[0] - inputs[1]` (exactly two inputs)."""

    def build(self, input_shape):
        super().build(input_shape)
        if len(input_shape) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs. "
                             f"Received: input_shape={input_shape}")

    def _merge_function(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs. "
                             f"Received: inputs={inputs}")
        return _math.subtract(inputs[0], inputs[1])


class Multiply(Merge):
    """≈ `keras.layers.Multiply()`: the element-wise product of the inputs."""

    def _merge_function(self, inputs):
        return _fold(_math.multiply, inputs)


class Average(Merge):
    """≈ `keras.layers.Average()`: the element-wise mean of the inputs."""

    def _merge_function(self, inputs):
        total = _fold(_math.add, inputs)
        return _math.truediv(total, convert_to_tensor(len(inputs), dtype=total.dtype))


class Maximum(Merge):
    """≈ `keras.layers.Maximum()`: the element-wise maximum of the inputs."""

    def _merge_function(self, inputs):
        return _fold(_math.maximum, inputs)


class Minimum(Merge):
    """≈ `keras.layers.Minimum()`: the element-wise minimum of the inputs."""

    def _merge_function(self, inputs):
        return _fold(_math.minimum, inputs)


def add(inputs, **kwargs):
    """≈ `keras.layers.add(inputs)`: `Add(**kwargs)(inputs)`."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """≈ `keras.layers.subtract(inputs)`: `Subtract(**kwargs)(inputs)`."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """≈ `keras.layers.multiply(inputs)`: `Multiply(**kwargs)(inputs)`."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """≈ `keras.layers.average(inputs)`: `Average(**kwargs)(inputs)`."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """≈ `keras.layers.maximum(inputs)`: `Maximum(**kwargs)(inputs)`."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """≈ `keras.layers.minimum(inputs)`: `Minimum(**kwargs)(inputs)`."""
    return Minimum(**kwargs)(inputs)
