"""A model's `compile` arguments as Keras 3's `compile_config` (what a `.keras` file records so
that `load_model(compile=True)` compiles the loaded model the same way), and back.

Names stay names ("mse", ["accuracy"]); loss and metric objects and functions become their
config dicts (`keras.losses.serialize` / `keras.metrics.serialize`); the optimizer is its
`keras.optimizers.serialize` dict. Reading resolves dicts through the built-in tables, then the
custom objects in scope and the registered ones (by "package>Name" or plain class name): no code
from the file runs."""

from __future__ import annotations

from ... import optimizers as _optimizers
from .. import losses as _losses
from .. import metrics as _metrics
from .. import serialization

__all__ = ["serialize", "deserialize"]


def _map(structure, fn):
    if isinstance(structure, (list, tuple)):
        return [_map(x, fn) for x in structure]
    if isinstance(structure, dict) and "class_name" not in structure:
        return {k: _map(v, fn) for k, v in structure.items()}
    return fn(structure)


def _serialized(registry):
    def one(obj):
        if obj is None or isinstance(obj, (str, bool, int, float, dict)):
            return obj
        return registry.serialize(obj)
    return one


def serialize(optimizer, arguments) -> dict:
    """`{"optimizer", "loss", "loss_weights", "metrics", "weighted_metrics", "run_eagerly",
    "steps_per_execution", "jit_compile"}` as Keras 3 writes them."""
    jit_compile = arguments["jit_compile"]
    return {"optimizer": _optimizers.serialize(optimizer) if optimizer is not None else None,
            "loss": _map(arguments["loss"], _serialized(_losses)),
            "loss_weights": arguments["loss_weights"],
            "metrics": _map(arguments["metrics"], _serialized(_metrics)),
            "weighted_metrics": _map(arguments["weighted_metrics"], _serialized(_metrics)),
            "run_eagerly": bool(arguments["run_eagerly"]),
            "steps_per_execution": arguments["steps_per_execution"],
            "jit_compile": jit_compile if isinstance(jit_compile, bool) else False}


def deserialize(config) -> dict:
    """The keyword arguments for `compile` that `config` (a `serialize` result) stands for."""
    custom = serialization.visible_custom_objects()

    def loss(obj):
        return _losses.deserialize(obj, custom_objects=custom) if isinstance(obj, dict) else obj

    def metric(obj):
        return _metrics.deserialize(obj, custom_objects=custom) if isinstance(obj, dict) else obj

    optimizer = config.get("optimizer")
    if isinstance(optimizer, dict):
        optimizer = _optimizers.deserialize(optimizer, custom_objects=custom)
    out = {"optimizer": optimizer if optimizer is not None else "rmsprop",
           "loss": _map(config.get("loss"), loss),
           "loss_weights": config.get("loss_weights"),
           "metrics": _map(config.get("metrics"), metric),
           "weighted_metrics": _map(config.get("weighted_metrics"), metric),
           "run_eagerly": bool(config.get("run_eagerly", False)),
           "steps_per_execution": config.get("steps_per_execution", 1),
           "jit_compile": config.get("jit_compile", "auto")}
    return out
