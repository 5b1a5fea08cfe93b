"""`eager.keras.layers` (≈ `keras.layers`): the layer base class and the built-in layers."""

from .input_spec import InputSpec
from .layer import Layer

__all__ = ["InputSpec", "Layer"]
