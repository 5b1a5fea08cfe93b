"""`eager.keras.models` (≈ `keras.models`): `Model` (subclassed or functional) and
`Sequential`."""

from .functional import Functional
from .model import Model
from .sequential import Sequential

__all__ = ["Functional", "Model", "Sequential"]
