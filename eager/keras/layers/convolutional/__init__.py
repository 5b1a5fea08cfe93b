"""Convolution layers (≈ `keras.layers.Conv1D`, `Conv2D`)."""

from .base_conv import Conv1D, Conv2D

__all__ = ["Conv1D", "Conv2D"]
