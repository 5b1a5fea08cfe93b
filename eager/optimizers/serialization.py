"""`eager.optimizers.get`, `serialize` and `deserialize`: optimizers by name, by Keras 3's
config dict, or as themselves (what `Model.compile(optimizer=...)` accepts)."""

from __future__ import annotations

from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .ftrl import Ftrl
from .lion import Lion
from .nadam import Nadam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["deserialize", "get", "serialize"]

#: Lower-cased class name -> class, as Keras 3 looks names up ("adam", "rmsprop", "adamw").
_BY_NAME = {cls.__name__.lower(): cls for cls in (Adadelta, Adagrad, Adam, Adamax, AdamW, Ftrl,
                                                  Lion, Nadam, RMSprop, SGD)}


def serialize(optimizer) -> dict:
    """The optimizer as the dict Keras 3 writes: module, class name, `get_config()`."""
    return {"module": "keras.optimizers", "class_name": type(optimizer).__name__,
            "config": optimizer.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    """The optimizer a `serialize` dict (or `{"class_name": ..., "config": ...}`) describes;
    class names match case-insensitively, after `custom_objects`."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret optimizer identifier: {config}")
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(str(name).lower())
    if cls is None:
        raise ValueError(f"Could not interpret optimizer identifier: {config}")
    return cls.from_config(dict(config.get("config") or {}), custom_objects=custom_objects)


def get(identifier):
    """An optimizer from a name ("adam", "sgd", "rmsprop", ...), a config dict, or an optimizer
    (returned as it is); None gives None."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        obj = deserialize(identifier)
    elif isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        obj = cls() if cls is not None else None
    else:
        obj = identifier
    if isinstance(obj, Optimizer):
        return obj
    raise ValueError(f"Could not interpret optimizer identifier: {identifier}")
