"""Keras 3's reshaping layers: `Flatten`, `Reshape`, `Permute`, `RepeatVector`."""

from .permute import Permute, RepeatVector
from .reshape import Flatten, Reshape

__all__ = ["Flatten", "Permute", "RepeatVector", "Reshape"]
