"""Normalization layers (≈ `keras.layers.BatchNormalization`, `LayerNormalization`,
`GroupNormalization`, `UnitNormalization`)."""

from .batch_normalization import BatchNormalization
from .group_normalization import GroupNormalization, UnitNormalization
from .layer_normalization import LayerNormalization

__all__ = ["BatchNormalization", "GroupNormalization", "LayerNormalization",
           "UnitNormalization"]
