"""Convolution layers (≈ `keras.layers.Conv1D`, `Conv2D`, `Conv1DTranspose`,
`Conv2DTranspose`,
`DepthwiseConv2D`, `SeparableConv2D`)."""

from .base_conv import Conv1D, Conv2D
from .conv_transpose import Conv1DTranspose, Conv2DTranspose
from .depthwise_conv import DepthwiseConv2D, SeparableConv2D

__all__ = ["Conv1D", "Conv2D", "Conv1DTranspose", "Conv2DTranspose", "DepthwiseConv2D",
           "SeparableConv2D"]
