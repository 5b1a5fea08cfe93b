"""`eager.keras.utils` (≈ `keras.utils`)."""

from .progbar import Progbar

__all__ = ["Progbar"]
