"""Keras 3's regularization layers."""

from .dropout import Dropout

__all__ = ["Dropout"]
