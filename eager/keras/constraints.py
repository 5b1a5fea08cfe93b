"""`eager.keras.constraints` (≈ `keras.constraints`): projections applied to a weight after each
optimizer update (`MaxNorm`, `MinMaxNorm`, `NonNeg`, `UnitNorm`)."""

from __future__ import annotations

from ..core.tensor_conversion import convert_to_tensor
from ..ops import math_ops as _math
from .backend import epsilon
from .serialization import deserialize_keras_object, serialize_keras_object

__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "max_norm",
           "min_max_norm", "non_neg", "unit_norm", "get", "serialize", "deserialize"]


class Constraint:
    def __call__(self, w):
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _norms(w, axis):
    return _math.sqrt(_math.reduce_sum(_math.square(w), axis=axis, keepdims=True))


class MaxNorm(Constraint):
    """Rescales slices (along `axis`) whose norm exceeds `max_value` down to it."""

    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = _math.clip_by_value(norms, convert_to_tensor(0.0, dtype=w.dtype),
                                      convert_to_tensor(self.max_value, dtype=w.dtype))
        return w * (desired / (convert_to_tensor(epsilon(), dtype=w.dtype) + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class MinMaxNorm(Constraint):
    """Moves slice norms into [min_value, max_value] (a fraction `rate` of the way)."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value = min_value
        self.max_value = max_value
        self.rate = rate
        self.axis = axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        c = lambda v: convert_to_tensor(v, dtype=w.dtype)  # noqa: E731
        norms = _norms(w, self.axis)
        desired = c(self.rate) * _math.clip_by_value(norms, c(self.min_value),
                                                     c(self.max_value)) + \
            c(1 - self.rate) * norms
        return w * (desired / (c(epsilon()) + norms))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


class NonNeg(Constraint):
    """Negative entries become 0."""

    def __call__(self, w):
        w = convert_to_tensor(w)
        return w * _math.cast(_math.greater_equal(w, convert_to_tensor(0.0, dtype=w.dtype)),
                              w.dtype)


class UnitNorm(Constraint):
    """Each slice along `axis` is divided by its norm."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        return w / (convert_to_tensor(epsilon(), dtype=w.dtype) + _norms(w, self.axis))

    def get_config(self):
        return {"axis": self.axis}


max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm
ALL_OBJECTS = {cls.__name__: cls for cls in (Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm)}
ALL_OBJECTS.update(max_norm=MaxNorm, min_max_norm=MinMaxNorm, non_neg=NonNeg,
                   unit_norm=UnitNorm)


def serialize(constraint):
    return serialize_keras_object(constraint)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, module_objects=ALL_OBJECTS,
                                    custom_objects=custom_objects,
                                    printable_module_name="constraint")


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        obj = deserialize(identifier)
    elif isinstance(identifier, str):
        obj = deserialize({"class_name": identifier, "config": {}})
    else:
        obj = identifier
    if callable(obj):
        return obj() if isinstance(obj, type) else obj
    raise ValueError(f"Could not interpret constraint identifier: {identifier}")
