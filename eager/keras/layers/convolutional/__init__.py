"""Convolution layers (≈ `keras.layers.Conv1D`, `Conv2D`, `Conv1DTranspose`,
`Conv2DTranspose`)."""

from .base_conv import Conv1D, Conv2D
from .conv_transpose import Conv1DTranspose, Conv2DTranspose

__all__ = ["Conv1D", "Conv2D", "Conv1DTranspose", "Conv2DTranspose"]
