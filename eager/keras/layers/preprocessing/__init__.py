"""Keras 3's preprocessing layers: `Normalization`, `Rescaling`, `Resizing`, `CenterCrop`,
`Discretization`, `CategoryEncoding`."""

from .discretization import Discretization
from .encoding import CategoryEncoding
from .image import CenterCrop, Resizing
from .normalization import Normalization
from .rescaling import Rescaling

__all__ = ["CategoryEncoding", "CenterCrop", "Discretization", "Normalization", "Rescaling",
           "Resizing"]
