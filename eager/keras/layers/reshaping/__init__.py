"""Keras 3's reshaping layers: `Flatten`, `Reshape`, `Permute`, `RepeatVector`, zero padding,
cropping and up-sampling."""

from .padding_cropping import Cropping1D, Cropping2D, ZeroPadding1D, ZeroPadding2D
from .permute import Permute, RepeatVector
from .reshape import Flatten, Reshape
from .up_sampling import UpSampling1D, UpSampling2D

__all__ = ["Flatten", "Permute", "RepeatVector", "Reshape", "Cropping1D", "Cropping2D",
           "ZeroPadding1D", "ZeroPadding2D", "UpSampling1D", "UpSampling2D"]
