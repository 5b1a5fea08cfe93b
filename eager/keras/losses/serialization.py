"""Keras's serialized form of losses and metrics, and the `get`/`serialize`/`deserialize` trio.

An object serializes as Keras 3 writes it: a `Loss` or `Metric` as
`{"module": "keras.losses", "class_name": "Huber", "config": {...}, "registered_name": None}`,
a function as `{"module": "builtins", "class_name": "function", "config": "huber",
"registered_name": "function"}`. A `Registry` is one module's table of names (`keras.losses`,
`keras.metrics`) and resolves identifiers the way that module's `get` does.
"""

from __future__ import annotations

import inspect

__all__ = ["serialize_object", "Registry"]


def serialize_object(obj, module):
    """Keras's dict for `obj` (a Loss/Metric instance, a function, or plain data)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (list, tuple)):
        return [serialize_object(item, module) for item in obj]
    if isinstance(obj, dict):
        return {key: serialize_object(value, module) for key, value in obj.items()}
    if inspect.isfunction(obj):
        return {"module": "builtins", "class_name": "function", "config": obj.__name__,
                "registered_name": "function"}
    if hasattr(obj, "get_config"):
        return {"module": module, "class_name": obj.__class__.__name__,
                "config": obj.get_config(), "registered_name": None}
    raise TypeError(f"Cannot serialize {obj!r}: it is neither a function nor an object with "
                    "`get_config()`.")


class Registry:
    """The names one Keras module resolves (`objects`: name -> class or function)."""

    def __init__(self, module: str, kind: str, objects: dict, functions: dict):
        self.module = module  # "keras.losses"
        self.kind = kind  # "loss", in error messages
        self.objects = objects  # what a name means to `get`
        self.functions = functions  # what a serialized function's name means

    def serialize(self, obj):
        return serialize_object(obj, self.module)

    def _lookup(self, name, custom_objects):
        if custom_objects and name in custom_objects:
            return custom_objects[name]
        if name in self.objects:
            return self.objects[name]
        raise ValueError(f"Could not interpret {self.kind} identifier: {name}")

    def deserialize(self, config, custom_objects=None):
        """A function or instance from a name or a serialized dict (an unknown name is a
        ValueError, where Keras would hand the string back)."""
        if config is None:
            return None
        if isinstance(config, str):
            obj = self._lookup(config, custom_objects)
            return obj() if inspect.isclass(obj) else obj
        if not isinstance(config, dict) or "class_name" not in config:
            if callable(config):
                return config
            raise ValueError(f"Could not interpret {self.kind} identifier: {config}")
        class_name = config["class_name"]
        inner = config.get("config", {})
        if class_name == "function":
            if custom_objects and inner in custom_objects:
                return custom_objects[inner]
            if inner not in self.functions:
                raise ValueError(f"Could not interpret {self.kind} identifier: {inner}")
            return self.functions[inner]
        cls = self._lookup(class_name, custom_objects)
        if not inspect.isclass(cls):
            raise ValueError(f"Could not interpret {self.kind} identifier: {config}")
        return cls.from_config(dict(inner or {}))

    def get(self, identifier):
        """Keras's `get`: None stays None; a dict is deserialized; a string is looked up (a
        class becomes a default instance); a callable is returned as is."""
        if identifier is None:
            return None
        if isinstance(identifier, dict):
            obj = self.deserialize(identifier)
        elif isinstance(identifier, str):
            obj = self.objects.get(identifier)
        else:
            obj = identifier
        if callable(obj):
            return obj() if inspect.isclass(obj) else obj
        raise ValueError(f"Could not interpret {self.kind} identifier: {identifier}")
