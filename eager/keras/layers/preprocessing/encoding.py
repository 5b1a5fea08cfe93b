"""`keras.layers.CategoryEncoding` and the encoding it shares with `Discretization`: integer
ids as one-hot rows, multi-hot rows (which ids occur in each sample) or counts (optionally
weighted), built from `one_hot` so ids outside [0, num_tokens) add nothing, as in Keras 3."""

from __future__ import annotations

from ....ops import array_ops as _array
from ....ops import math_ops as _math
from ....ops.creation_ops import one_hot
from ..layer import Layer

__all__ = ["CategoryEncoding", "encode_categorical"]


def encode_categorical(ids, depth, mode, count_weights=None, dtype="float32"):
    """One row per sample: "one_hot" per id (a trailing axis of size 1 is replaced), or
    "multi_hot"/"count" over the last axis (a rank-1 input is one sample)."""
    ids = _math.cast(ids, "int64")
    rank = ids.shape.rank
    if mode == "one_hot":
        if rank and ids.shape[-1] == 1 and rank > 1:
            ids = _array.squeeze(ids, [-1])
        return one_hot(ids, depth, dtype=dtype)
    encoded = one_hot(ids, depth, dtype=dtype)            # [..., n, depth]
    if mode == "multi_hot":
        return _math.reduce_max(encoded, axis=-2)
    if count_weights is not None:
        encoded = _math.multiply(encoded, _array.expand_dims(
            _math.cast(count_weights, dtype), -1))
    return _math.reduce_sum(encoded, axis=-2)


class CategoryEncoding(Layer):
    """≈ `keras.layers.CategoryEncoding(num_tokens=None, output_mode="multi_hot",
    sparse=False)`; `call(inputs, count_weights=None)`. `sparse` is refused."""

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if output_mode == "binary":      # Keras's older name
            output_mode = "multi_hot"
        if output_mode not in ("count", "one_hot", "multi_hot"):
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens "
                             "is not known beforehand, use the IntegerLookup layer instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        if sparse:
            raise NotImplementedError("CategoryEncoding: `sparse=True` is not supported by "
                                      "eager.keras.")
        self.num_tokens = num_tokens
        self.output_mode = output_mode
        self.sparse = sparse

    def call(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError("`count_weights` is not used when `output_mode` is not `'count'`. "
                             f"Received `count_weights={count_weights}`.")
        return encode_categorical(inputs, self.num_tokens, self.output_mode, count_weights,
                                  dtype=self.dtype)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if not input_shape:
            return (self.num_tokens,)
        if self.output_mode == "one_hot" and input_shape[-1] != 1:
            return (*input_shape, self.num_tokens)
        return (*input_shape[:-1], self.num_tokens)

    def get_config(self):
        config = super().get_config()
        config.update(num_tokens=self.num_tokens, output_mode=self.output_mode)
        return config
