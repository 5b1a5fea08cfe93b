"""`eager.keras.initializers` (≈ `keras.initializers`): how a layer's weights start.

`get(identifier)` accepts a name ("glorot_uniform", "GlorotUniform", Keras's aliases "zero",
"one", "normal", "uniform"), a config dict, a class, a callable `(shape, dtype=None)`, or an
array (the values themselves, for a weight of exactly that shape).
"""

from __future__ import annotations

import inspect

import numpy as np

from ...tensor import Tensor
from .. import backend
from ..serialization import deserialize_keras_object, serialize_keras_object
from .initializers import (Constant, GlorotNormal, GlorotUniform, HeNormal, HeUniform,
                           Identity, Initializer, LecunNormal, LecunUniform, Ones, Orthogonal,
                           RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling, Zeros)

__all__ = ["Initializer", "Constant", "Zeros", "Ones", "Identity", "RandomNormal",
           "RandomUniform", "TruncatedNormal", "VarianceScaling", "GlorotUniform",
           "GlorotNormal", "HeUniform", "HeNormal", "LecunUniform", "LecunNormal", "Orthogonal",
           "constant", "zeros", "ones", "identity", "random_normal", "random_uniform",
           "truncated_normal", "variance_scaling", "glorot_uniform", "glorot_normal",
           "he_uniform", "he_normal", "lecun_uniform", "lecun_normal", "orthogonal",
           "get", "serialize", "deserialize"]

_CLASSES = (Initializer, Constant, Zeros, Ones, Identity, RandomNormal, RandomUniform,
            TruncatedNormal, VarianceScaling, GlorotUniform, GlorotNormal, HeUniform, HeNormal,
            LecunUniform, LecunNormal, Orthogonal)
ALL_OBJECTS = {cls.__name__: cls for cls in _CLASSES}
ALL_OBJECTS.update({backend.to_snake_case(cls.__name__): cls for cls in _CLASSES})
ALL_OBJECTS.update({"IdentityInitializer": Identity, "OrthogonalInitializer": Orthogonal,
                    "normal": RandomNormal, "uniform": RandomUniform, "one": Ones,
                    "zero": Zeros})

# Keras's lower-case aliases are the classes themselves (`initializers.zeros()` is `Zeros()`).
constant, zeros, ones, identity = Constant, Zeros, Ones, Identity
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
variance_scaling, orthogonal = VarianceScaling, Orthogonal
glorot_uniform, glorot_normal = GlorotUniform, GlorotNormal
he_uniform, he_normal, lecun_uniform, lecun_normal = HeUniform, HeNormal, LecunUniform, LecunNormal


def serialize(initializer):
    return serialize_keras_object(initializer)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, module_objects=ALL_OBJECTS,
                                    custom_objects=custom_objects,
                                    printable_module_name="initializer")


def _from_values(values):
    array = np.asarray(values)

    def initialize_fn(shape, dtype=None):
        dtype = backend.standardize_dtype(dtype)
        if tuple(shape) != array.shape:
            raise ValueError(f"Expected `shape` to be {array.shape} for direct tensor as "
                             f"initializer. Received shape={tuple(shape)}")
        return Constant(array)(array.shape, dtype)
    return initialize_fn


def get(identifier):
    """The initializer `identifier` names (see the module doc); None stays None."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        obj = deserialize(identifier)
    elif isinstance(identifier, str):
        obj = deserialize({"class_name": identifier, "config": {}})
    elif isinstance(identifier, (Tensor, np.ndarray, np.generic)):
        obj = _from_values(identifier)
    else:
        obj = identifier
    if callable(obj):
        return obj() if inspect.isclass(obj) else obj
    raise ValueError(f"Could not interpret initializer identifier: {identifier}")
