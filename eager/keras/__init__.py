"""`eager.keras` (≈ `tf.keras`, which is Keras 3 in TensorFlow 2.21): layers, models, losses,
metrics, optimizers and training loops, built on eager's own `Module`, variables, tapes and
functions.

`import eager as tf; tf.keras.layers.Dense(...)` and `from eager import keras` both work. What
exists and what does not yet is listed in docs/API.md; docs/keras.md describes how it works.
"""

from . import (activations, backend, constraints, initializers, layers, models, optimizers,
               regularizers)
from . import callbacks, losses, metrics, trainers, utils
from . import saving
from .layers.core import Input
from .models import Model, Sequential
from .keras_tensor import KerasTensor
from .layers import InputSpec, Layer
from .seed_generator import SeedGenerator
from .variables import KerasVariable as Variable

config = backend

__all__ = ["activations", "backend", "config", "constraints", "initializers", "layers",
           "optimizers", "regularizers", "losses", "metrics", "utils", "callbacks", "trainers",
           "KerasTensor", "InputSpec", "Layer", "SeedGenerator", "Variable", "Input", "Model",
           "Sequential", "models"]
__all__ += ["saving"]
