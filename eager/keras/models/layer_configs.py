"""Layers from their serialized configs, for the models' `from_config`: eager.keras's own
layer and model classes by class name (found by walking `Layer`'s subclasses, so every
built-in layer is known without importing the packages that define them), then the custom
objects in scope and the registered classes. Only classes are looked up by name: nothing in a
config is executed."""

from __future__ import annotations

from ..layers.layer import Layer
from ..serialization import deserialize_keras_object

__all__ = ["builtin_layer_classes", "deserialize_layer"]


def builtin_layer_classes() -> dict:
    """Class name -> class for every public `Layer` subclass defined in `eager.keras`."""
    found, stack = {}, [Layer]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub.__module__.startswith("eager.keras.") and not sub.__name__.startswith("_"):
                found.setdefault(sub.__name__, sub)
            stack.append(sub)
    found.setdefault("Layer", Layer)
    return found


def deserialize_layer(config, custom_objects=None):
    """The layer (or model) `config` describes (`{"module", "class_name", "config",
    "registered_name", "build_config"?, ...}`), built from its `build_config` when present."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret layer config: {config!r} (expected a dict with "
                         "'class_name' and 'config').")
    return deserialize_keras_object(config, module_objects=builtin_layer_classes(),
                                    custom_objects=custom_objects,
                                    printable_module_name="layer")
