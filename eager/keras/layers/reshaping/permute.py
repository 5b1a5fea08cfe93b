"""`keras.layers.Permute` and `keras.layers.RepeatVector`: reorder or repeat the non-batch axes
of each example."""

from __future__ import annotations

from ....ops import array_ops as _array
from ..input_spec import InputSpec
from ..layer import Layer

__all__ = ["Permute", "RepeatVector"]


class Permute(Layer):
    """≈ `keras.layers.Permute(dims)`: `dims` permutes axes 1..n (the batch axis stays)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError("Invalid permutation argument `dims` for Permute Layer. The set of "
                             "indices in `dims` must be consecutive and start from 1. Received "
                             f"dims={dims}")
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], *(input_shape[d] for d in self.dims))

    def call(self, inputs):
        return _array.transpose(inputs, (0, *self.dims))

    def get_config(self):
        config = super().get_config()
        config["dims"] = self.dims
        return config


class RepeatVector(Layer):
    """≈ `keras.layers.RepeatVector(n)`: `(batch, features)` to `(batch, n, features)`."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        self.n = n
        self.input_spec = InputSpec(ndim=2)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])

    def call(self, inputs):
        return _array.tile(_array.expand_dims(inputs, 1), (1, self.n, 1))

    def get_config(self):
        config = super().get_config()
        config["n"] = self.n
        return config
