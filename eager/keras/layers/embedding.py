"""`Embedding`: Keras 3's lookup table layer, one `gather` per call (its gradient is the
`IndexedSlices` eager's gather gives, which optimizers apply sparsely)."""

from __future__ import annotations

from ...ops import math_ops as _math
from ...ops import slicing_ops as _slicing
from .. import constraints, initializers, regularizers
from .layer import Layer

__all__ = ["Embedding"]


class Embedding(Layer):
    """≈ `keras.layers.Embedding(input_dim, output_dim, embeddings_initializer="uniform",
    embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False, weights=None)`:
    integer ids in, rows of the `embeddings` weight out; with `mask_zero`, `compute_mask` marks
    id 0 as padding."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 weights=None, quantization_config=None, **kwargs):
        for name, value in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"`{name}` must be a positive integer. Received: "
                                 f"{name}={value} (of type {type(value).__name__}).")
        if quantization_config is not None:
            raise NotImplementedError("Embedding: quantization is not supported by eager.keras.")
        kwargs.pop("input_length", None)
        super().__init__(**kwargs)
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = mask_zero
        self.supports_masking = mask_zero
        self.autocast = False
        if weights is not None:
            self.build()
            if not (isinstance(weights, list) and len(weights) == 1):
                weights = [weights]
            self.set_weights(weights)

    def build(self, input_shape=None):
        if self.built:
            return
        self.embeddings = self.add_weight(
            shape=(self.input_dim, self.output_dim), initializer=self.embeddings_initializer,
            name="embeddings", regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint)

    def call(self, inputs):
        if inputs.dtype.name not in ("int32", "int64"):
            inputs = _math.cast(inputs, "int32")
        return _slicing.gather(self.embeddings.value(), inputs)  # Keras 3: the table's value

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return _math.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        return (*input_shape, self.output_dim)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({
            "input_dim": self.input_dim, "output_dim": self.output_dim,
            "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
            "embeddings_regularizer": regularizers.serialize(self.embeddings_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "embeddings_constraint": constraints.serialize(self.embeddings_constraint),
            "mask_zero": self.mask_zero, "quantization_config": None})
        return config
