"""Keras 3's merging layers and their function forms."""

from .concatenate import Concatenate, concatenate
from .dot import Dot, dot
from .elementwise import (Add, Average, Maximum, Minimum, Multiply, Subtract, add, average,
                          maximum, minimum, multiply, subtract)

__all__ = ["Add", "Average", "Concatenate", "Dot", "Maximum", "Minimum", "Multiply", "Subtract",
           "add", "average", "concatenate", "dot", "maximum", "minimum", "multiply", "subtract"]
