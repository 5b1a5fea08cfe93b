"""Keras 3's object configs: `serialize_keras_object` / `deserialize_keras_object`.

A Keras object is saved as `{"module", "class_name", "config", "registered_name"}`; `config` is
what its `get_config()` returns and `from_config(config)` rebuilds it. Strings name objects by
their class name or snake-case alias ("GlorotUniform", "glorot_uniform"); each family
(initializers, regularizers, activations, losses, ...) passes its own table of names.
"""

from __future__ import annotations

import inspect
import threading

__all__ = ["serialize_keras_object", "deserialize_keras_object", "register_keras_serializable",
           "get_registered_object", "get_registered_name", "custom_object_scope",
           "get_custom_objects", "SafeModeScope", "in_safe_mode", "get_build_config",
           "build_from_config"]

_REGISTERED: dict = {}        # "package>Name" -> class or function
_NAME_OF: dict = {}           # class or function -> "package>Name"
_scoped = threading.local()   # custom_object_scope's stack of dicts; .safe_mode


def register_keras_serializable(package="Custom", name=None):
    """≈ `keras.saving.register_keras_serializable`: makes a user class or function findable by
    `deserialize_keras_object` under "package>name"."""
    def decorator(obj):
        key = f"{package}>{name or obj.__name__}"
        if inspect.isclass(obj) and not hasattr(obj, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        _REGISTERED[key] = obj
        _NAME_OF[obj] = key
        return obj
    return decorator


def get_custom_objects() -> dict:
    """≈ `keras.saving.get_custom_objects()`: the registry itself ("package>Name" -> object);
    adding to it registers."""
    return _REGISTERED


def get_registered_name(obj) -> str:
    return _NAME_OF.get(obj, getattr(obj, "__name__", type(obj).__name__))


def get_registered_object(name, custom_objects=None, module_objects=None):
    for table in (*reversed(getattr(_scoped, "stack", [])), custom_objects or {}, _REGISTERED,
                  module_objects or {}):
        if name in table:
            return table[name]
    return None


def visible_custom_objects() -> dict:
    """Every user object deserialization can see now, by plain and by registered name: the
    registered ones, then the `custom_object_scope`s (innermost last, so it wins)."""
    out = {}
    for key, obj in _REGISTERED.items():
        out[key] = obj
        out.setdefault(key.split(">", 1)[-1], obj)
    for scope in getattr(_scoped, "stack", []):
        out.update(scope)
    return out


class SafeModeScope:
    """Within it, `in_safe_mode()` is `safe_mode`: whether deserializing may run code that a
    config carries (a `Lambda` layer's function). `load_model(safe_mode=...)` enters one."""

    def __init__(self, safe_mode=True):
        self.safe_mode = safe_mode

    def __enter__(self):
        self._saved = getattr(_scoped, "safe_mode", None)
        _scoped.safe_mode = self.safe_mode
        return self

    def __exit__(self, *exc):
        _scoped.safe_mode = self._saved
        return False


def in_safe_mode():
    """The innermost `SafeModeScope`'s value; None outside any (callers treat None as safe)."""
    return getattr(_scoped, "safe_mode", None)


class custom_object_scope:  # noqa: N801 (Keras's name)
    """≈ `keras.saving.custom_object_scope(objects)`: names visible to deserialization inside."""

    def __init__(self, custom_objects):
        self._objects = dict(custom_objects or {})

    def __enter__(self):
        stack = getattr(_scoped, "stack", None)
        if stack is None:
            stack = _scoped.stack = []
        stack.append(self._objects)
        return self

    def __exit__(self, *exc):
        _scoped.stack.pop()
        return False


def serialize_keras_object(obj):
    """The config dict of a Keras object; a function becomes its name; None stays None;
    plain values (numbers, strings, lists of them) are returned as they are."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (list, tuple)):
        return [serialize_keras_object(x) for x in obj]
    if isinstance(obj, dict):
        return {k: serialize_keras_object(v) for k, v in obj.items()}
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        key = _NAME_OF.get(obj)
        return obj.__name__ if key is None else key
    cls = type(obj)
    config = obj.get_config()
    key = _NAME_OF.get(cls)
    out = {"module": _public_module(cls) if key is None else None, "class_name": cls.__name__,
           "config": serialize_keras_object(config), "registered_name": key}
    build_config = get_build_config(obj)
    if build_config is not None:
        out["build_config"] = serialize_keras_object(build_config)
    get_compile_config = getattr(obj, "get_compile_config", None)
    if get_compile_config is not None:
        compile_config = get_compile_config()
        if compile_config is not None:
            out["compile_config"] = serialize_keras_object(compile_config)
    return out


def get_build_config(obj):
    """≈ Keras's `layer.get_build_config()`: `{"input_shape": shape}` (or
    `{"shapes_dict": {...}}` when `build` took several shapes) for a layer built from input
    shapes; None for other objects, and for layers built without one (no `build` of their own).
    An object's own `get_build_config` wins."""
    own = getattr(obj, "get_build_config", None)
    if own is not None:
        return own()
    shapes = vars(obj).get("_build_shapes_dict") if hasattr(obj, "__dict__") else None
    if not shapes:
        return None
    if len(shapes) == 1:
        return {"input_shape": next(iter(shapes.values()))}
    return {"shapes_dict": dict(shapes)}


def build_from_config(obj, config) -> None:
    """≈ Keras's `layer.build_from_config(config)`: builds a freshly deserialized layer from the
    shapes `get_build_config` recorded (an object's own `build_from_config` wins)."""
    own = getattr(obj, "build_from_config", None)
    if own is not None:
        own(config)
        return
    if not config or getattr(obj, "built", True):
        return
    if "input_shape" in config:
        shapes = {"input_shape": _shape_tuple(config["input_shape"])}
        obj.build(shapes["input_shape"])
    elif "shapes_dict" in config:
        shapes = {k: _shape_tuple(v) for k, v in config["shapes_dict"].items()}
        obj.build(**shapes)
    else:
        return
    object.__setattr__(obj, "_build_shapes_dict", shapes)
    obj.built = True


def _shape_tuple(shape):
    """A JSON shape (lists) as Keras's tuples; a list of shapes stays a list of tuples."""
    if isinstance(shape, (list, tuple)) and shape and all(
            isinstance(s, (list, tuple)) or s is None for s in shape) and \
            any(isinstance(s, (list, tuple)) for s in shape):
        return [_shape_tuple(s) for s in shape]
    if isinstance(shape, dict):
        return {k: _shape_tuple(v) for k, v in shape.items()}
    return None if shape is None else tuple(shape)


def _public_module(cls) -> str:
    """Keras's module name for a built-in class ('keras.initializers' for a class defined in
    eager/keras/initializers/initializers.py), so configs read the same in Keras."""
    module = cls.__module__
    if module.startswith("eager.keras.models."):
        return "keras"
    if module.startswith("eager.keras."):
        return ".".join(module.split(".")[1:3])
    return module


def deserialize_keras_object(config, module_objects=None, custom_objects=None,
                             printable_module_name="object"):
    """The object a config (a dict as `serialize_keras_object` writes it, or a name) stands
    for. Classes are built with `from_config`; names of functions give the functions."""
    if config is None:
        return None
    if isinstance(config, str):
        obj = get_registered_object(config, custom_objects, module_objects)
        if obj is None:
            raise ValueError(f"Could not interpret {printable_module_name} identifier: {config}")
        return obj
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret {printable_module_name} identifier: {config}")
    name = config.get("registered_name") or config["class_name"]
    cls = get_registered_object(name, custom_objects, module_objects)
    if cls is None:
        cls = get_registered_object(config["class_name"], custom_objects, module_objects)
    if cls is None:
        raise ValueError(f"Unknown {printable_module_name}: '{config['class_name']}'. Please "
                         "ensure you are using a `keras.utils.custom_object_scope` and that "
                         "this object is included in the scope. See "
                         "https://www.tensorflow.org/guide/keras/save_and_serialize"
                         "#registering_the_custom_object for details.")
    inner = config.get("config", {})
    if not inspect.isclass(cls):
        return cls
    if hasattr(cls, "from_config"):
        if "custom_objects" in inspect.signature(cls.from_config).parameters:
            obj = cls.from_config(inner, custom_objects=custom_objects)
        else:
            obj = cls.from_config(inner)
    else:
        obj = cls(**inner)
    if config.get("build_config"):
        build_from_config(obj, config["build_config"])
    if config.get("compile_config") and hasattr(obj, "compile_from_config"):
        obj.compile_from_config(config["compile_config"])
    return obj
