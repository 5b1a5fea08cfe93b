"""`eager.keras.saving` (≈ `keras.saving`): `.keras` archives (`save_model`, `load_model`),
weights files (`save_weights`, `load_weights`), and Keras's object registry and configs
(`register_keras_serializable`, `serialize_keras_object`, ...). See docs/keras.md, "Saving"."""

from ..serialization import (custom_object_scope, deserialize_keras_object, get_custom_objects,
                             get_registered_name, get_registered_object,
                             register_keras_serializable, serialize_keras_object)
from .saving_api import load_model, load_weights, save_model, save_weights

CustomObjectScope = custom_object_scope

__all__ = ["CustomObjectScope", "custom_object_scope", "deserialize_keras_object",
           "get_custom_objects", "get_registered_name", "get_registered_object", "load_model",
           "load_weights", "register_keras_serializable", "save_model", "save_weights",
           "serialize_keras_object"]
