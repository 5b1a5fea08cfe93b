"""Keras 3's core layers: `Dense`, `Activation`, `Identity`, `Lambda`, `InputLayer`/`Input`."""

from .activation import Activation, Identity
from .dense import Dense
from .input_layer import Input, InputLayer
from .lambda_layer import Lambda

__all__ = ["Activation", "Dense", "Identity", "Input", "InputLayer", "Lambda"]
