"""`eager.keras.layers` (≈ `keras.layers`): the layer base class and the built-in layers."""

from .activations import ELU, LeakyReLU, PReLU, ReLU, Softmax
from .core import Activation, Dense, Identity, Input, InputLayer, Lambda
from .input_spec import InputSpec
from .layer import Layer
from .merging import (Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add,
                      average, concatenate, dot, maximum, minimum, multiply, subtract)
from .regularization import Dropout
from .reshaping import Flatten, Permute, RepeatVector, Reshape

__all__ = ["InputSpec", "Layer",
           "Activation", "Dense", "Identity", "Input", "InputLayer", "Lambda",
           "Flatten", "Permute", "RepeatVector", "Reshape", "Dropout",
           "ELU", "LeakyReLU", "PReLU", "ReLU", "Softmax",
           "Add", "Average", "Concatenate", "Dot", "Maximum", "Minimum", "Multiply", "Subtract",
           "add", "average", "concatenate", "dot", "maximum", "minimum", "multiply", "subtract"]
