"""Normalization layers (≈ `keras.layers.BatchNormalization`, `LayerNormalization`)."""

from .batch_normalization import BatchNormalization
from .layer_normalization import LayerNormalization

__all__ = ["BatchNormalization", "LayerNormalization"]
