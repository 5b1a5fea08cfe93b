"""Keras 3's activation layers."""

from .activation_layers import ELU, LeakyReLU, PReLU, ReLU, Softmax

__all__ = ["ELU", "LeakyReLU", "PReLU", "ReLU", "Softmax"]
