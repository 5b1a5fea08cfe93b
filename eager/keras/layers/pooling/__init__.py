"""Pooling layers (≈ `keras.layers.MaxPooling2D`, `GlobalAveragePooling2D`, ...)."""

from .base_pooling import AveragePooling1D, AveragePooling2D, MaxPooling1D, MaxPooling2D
from .global_pooling import (GlobalAveragePooling1D, GlobalAveragePooling2D,
                             GlobalMaxPooling1D, GlobalMaxPooling2D)

__all__ = ["AveragePooling1D", "AveragePooling2D", "MaxPooling1D", "MaxPooling2D",
           "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
           "GlobalMaxPooling2D"]
