"""`keras.layers.Dot` and `dot`: per-example dot products of two tensors (Keras's
`batch_dot`), optionally of L2-normalised inputs (cosine similarity)."""

from __future__ import annotations

from ....ops import array_ops as _array
from ....ops import composite_ops as _composite
from ....ops import math_ops as _math
from ....ops import product_ops as _product
from .base_merge import Merge

__all__ = ["Dot", "dot"]


def _move_axis(x, source, destination):
    rank = x.shape.rank
    if source == destination:
        return x
    order = [i for i in range(rank) if i != source]
    order.insert(destination, source)
    return _array.transpose(x, order)


def batch_dot(x, y, axes):
    """Keras's `batch_dot` for inputs of rank 2 or 3: contracts `x`'s axis `axes[0]` with
    `y`'s axis `axes[1]` per example; two vectors give `(batch, 1)`."""
    rx, ry = x.shape.rank, y.shape.rank
    if rx < 2 or ry < 2:
        raise ValueError(f"Cannot do batch_dot on inputs with rank < 2. Received inputs with "
                         f"shapes {tuple(x.shape)} and {tuple(y.shape)}.")
    if rx > 3 or ry > 3:
        raise NotImplementedError("Dot: inputs of rank above 3 are not supported by "
                                  f"eager.keras. Received shapes {tuple(x.shape)} and "
                                  f"{tuple(y.shape)}.")
    if rx == 2 and ry == 2:
        return _math.reduce_sum(_math.multiply(x, y), axis=1, keepdims=True)
    x = _move_axis(x, axes[0], rx - 1)
    y = _move_axis(y, axes[1], 1)
    if rx == 2:
        x = _array.expand_dims(x, 1)
    if ry == 2:
        y = _array.expand_dims(y, 2)
    out = _product.matmul(x, y)
    if rx == 2:
        out = _array.squeeze(out, 1)
    if ry == 2:
        out = _array.squeeze(out, -1)
    return out


class Dot(Merge):
    """≈ `keras.layers.Dot(axes, normalize=False)`: exactly two inputs."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError("Invalid type for argument `axes`: it should be a list or an "
                                f"int. Received: axes={axes}")
            if len(axes) != 2:
                raise ValueError("Invalid format for argument `axes`: it should contain two "
                                 f"elements. Received: axes={axes}")
        self.axes = axes
        self.normalize = normalize
        self.supports_masking = True

    def build(self, input_shape):
        if not isinstance(input_shape[0], (tuple, list)) or len(input_shape) != 2:
            raise ValueError("A `Dot` layer should be called on a list of 2 inputs. Received: "
                             f"input_shape={input_shape}")
        shape1, shape2 = input_shape
        if shape1 is None or shape2 is None:
            return
        axes = self._axes(len(shape1), len(shape2))
        if shape1[axes[0]] is not None and shape2[axes[1]] is not None and \
                shape1[axes[0]] != shape2[axes[1]]:
            raise ValueError("Incompatible input shapes: axis values "
                             f"{shape1[axes[0]]} (at axis {axes[0]}) != {shape2[axes[1]]} (at "
                             f"axis {axes[1]}). Full input shapes: {shape1}, {shape2}")

    def _axes(self, rank1, rank2):
        if isinstance(self.axes, int):
            return [self.axes % rank1, self.axes % rank2] if self.axes < 0 else [self.axes] * 2
        return [a % r if a < 0 else a for a, r in zip(self.axes, (rank1, rank2))]

    def _merge_function(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Dot` layer should be called on exactly 2 inputs. Received: "
                             f"inputs={inputs}")
        x1, x2 = inputs
        axes = self._axes(x1.shape.rank, x2.shape.rank)
        if self.normalize:
            x1 = _composite.l2_normalize(x1, axis=axes[0])
            x2 = _composite.l2_normalize(x2, axis=axes[1])
        return batch_dot(x1, x2, axes)

    def compute_output_shape(self, input_shape):
        shape1, shape2 = list(input_shape[0]), list(input_shape[1])
        axes = self._axes(len(shape1), len(shape2))
        shape1.pop(axes[0])
        shape2.pop(axes[1])
        shape2.pop(0)
        output = shape1 + shape2
        if len(output) == 1:
            output += [1]
        return tuple(output)

    def get_config(self):
        config = super().get_config()
        config.update(axes=self.axes, normalize=self.normalize)
        return config


def dot(inputs, axes=-1, **kwargs):
    """≈ `keras.layers.dot(inputs, axes=-1, normalize=False)`: `Dot(axes)(inputs)`."""
    return Dot(axes=axes, **kwargs)(inputs)
