"""`keras.layers.serialize` / `deserialize` / `get`, and the one table of built-in layers by
class name that every layer config is read back through (`RNN`'s cell, `Bidirectional`'s and
`TimeDistributed`'s wrapped layer, `StackedRNNCells`' cells, saved models).

The table is Keras's `ALL_OBJECTS` for layers. This module sits below the layer families, so it
cannot import them; `eager/keras/layers/__init__.py` hands it the public layer classes once
they are all imported (`register_builtin_layers`), and a layer added to that package's
`__all__` is deserializable with no further step.
"""

from __future__ import annotations

import inspect

from ..serialization import (custom_object_scope, deserialize_keras_object,
                             serialize_keras_object)
from .layer import Layer

__all__ = ["serialize", "deserialize", "get", "register_builtin_layers", "builtin_layers"]

_BUILTIN_LAYERS: dict = {}   # class name -> built-in Layer subclass


def register_builtin_layers(namespace: dict) -> None:
    """Adds every public `Layer` subclass in `namespace` (a module's globals) to the table."""
    for name, value in namespace.items():
        if inspect.isclass(value) and issubclass(value, Layer) and not name.startswith("_"):
            _BUILTIN_LAYERS.setdefault(value.__name__, value)


def builtin_layers() -> dict:
    """A copy of the table: class name -> built-in layer class."""
    return dict(_BUILTIN_LAYERS)


def serialize(layer) -> dict:
    """≈ `keras.layers.serialize(layer)`: `{"module", "class_name", "config",
    "registered_name"}`, the config being `layer.get_config()`."""
    return serialize_keras_object(layer)


def deserialize(config, custom_objects=None):
    """≈ `keras.layers.deserialize(config, custom_objects=None)`: the layer a serialized config
    stands for, built with its class's `from_config`; user classes (and `Lambda`'s functions)
    are found through `custom_objects` (also for the layers nested in its config),
    `custom_object_scope` or `register_keras_serializable`."""
    if not isinstance(config, dict):
        raise ValueError("`keras.layers.deserialize` was passed a `config` object that is not "
                         f"a `keras.layers.Layer`. Received: {config}")
    with custom_object_scope(custom_objects):   # seen by nested layers' configs too
        obj = deserialize_keras_object(config, module_objects=_BUILTIN_LAYERS,
                                       custom_objects=custom_objects,
                                       printable_module_name="layer")
    if not isinstance(obj, Layer):
        raise ValueError("`keras.layers.deserialize` was passed a `config` object that is not "
                         f"a `keras.layers.Layer`. Received: {config}")
    return obj


def get(identifier, custom_objects=None):
    """A layer from `identifier`: a layer is returned as it is, a config dict is deserialized,
    and a class name ("Flatten") builds that layer with its default arguments; None gives None.
    (Keras 3 has no `keras.layers.get`; this is the `get` of the other Keras families.)"""
    if identifier is None or isinstance(identifier, Layer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier, custom_objects)
    if isinstance(identifier, str):
        return deserialize({"class_name": identifier, "config": {}}, custom_objects)
    raise ValueError(f"Could not interpret layer identifier: {identifier}")
