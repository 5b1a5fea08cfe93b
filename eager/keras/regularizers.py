"""`eager.keras.regularizers` (≈ `keras.regularizers`): penalties on weights.

A regularizer is called with a weight and returns a scalar that `Layer.losses` collects (each
time it is read, from the weight's current value) and `fit` adds to the loss.
"""

from __future__ import annotations

import math

from ..core.tensor_conversion import convert_to_tensor
from ..ops import array_ops as _array
from ..ops import math_ops as _math
from ..ops import product_ops as _product
from .serialization import deserialize_keras_object, serialize_keras_object

__all__ = ["Regularizer", "L1", "L2", "L1L2", "OrthogonalRegularizer", "l1", "l2", "l1_l2",
           "orthogonal_regularizer", "get", "serialize", "deserialize"]


def _factor(value, name):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value) \
            or math.isinf(value) or value < 0:
        raise ValueError(f"Invalid value for argument {name}: expected a non-negative float."
                         f"Received: {name}={value}")
    return float(value)


class Regularizer:
    """Subclass and define `__call__(x)` (and `get_config` to serialize)."""

    def __call__(self, x):
        return 0.0

    def get_config(self) -> dict:
        raise NotImplementedError(f"{type(self).__name__} does not implement get_config()")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    """`l1 * sum(|x|) + l2 * sum(x**2)`."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _factor(l1, "l1")
        self.l2 = _factor(l2, "l2")

    def __call__(self, x):
        x = convert_to_tensor(x)
        total = convert_to_tensor(0.0, dtype=x.dtype)
        if self.l1:
            total = total + convert_to_tensor(self.l1, dtype=x.dtype) * \
                _math.reduce_sum(_math.abs(x))
        if self.l2:
            total = total + convert_to_tensor(self.l2, dtype=x.dtype) * \
                _math.reduce_sum(_math.square(x))
        return total

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    def __init__(self, l1=0.01):
        self.l1 = _factor(l1, "l1")

    def __call__(self, x):
        x = convert_to_tensor(x)
        return convert_to_tensor(self.l1, dtype=x.dtype) * _math.reduce_sum(_math.abs(x))

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    def __init__(self, l2=0.01):
        self.l2 = _factor(l2, "l2")

    def __call__(self, x):
        x = convert_to_tensor(x)
        return convert_to_tensor(self.l2, dtype=x.dtype) * _math.reduce_sum(_math.square(x))

    def get_config(self):
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """Pushes the rows (or columns) of a 2-D weight towards orthonormality: `factor` times the
    mean absolute off-diagonal entry of the normalised Gram matrix."""

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = _factor(factor, "factor")
        if mode not in {"rows", "columns"}:
            raise ValueError("Invalid value for argument `mode`. Expected one of "
                             f"{{'rows', 'columns'}}. Received: mode={mode}")
        self.mode = mode

    def __call__(self, x):
        x = convert_to_tensor(x)
        if x.shape.rank != 2:
            raise ValueError("Inputs to OrthogonalRegularizer must have rank 2. Received: "
                             f"inputs.shape={tuple(x.shape)}")
        if self.mode == "columns":
            x = _array.transpose(x)
        norm = _math.sqrt(_math.reduce_sum(_math.square(x), axis=1, keepdims=True))
        x = x / _math.maximum(norm, convert_to_tensor(1e-12, dtype=x.dtype))
        gram = _product.matmul(x, x, transpose_b=True)
        n = x.shape[0]
        off = _math.reduce_sum(_math.abs(gram)) - _math.reduce_sum(
            _math.abs(gram * _array.eye(n, dtype=x.dtype)))
        return convert_to_tensor(self.factor, dtype=x.dtype) * off / \
            convert_to_tensor(n * (n - 1) if n > 1 else 1, dtype=x.dtype)

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode}


l1, l2, l1_l2, orthogonal_regularizer = L1, L2, L1L2, OrthogonalRegularizer
ALL_OBJECTS = {cls.__name__: cls for cls in (Regularizer, L1, L2, L1L2, OrthogonalRegularizer)}
ALL_OBJECTS.update(l1=L1, l2=L2, l1_l2=L1L2, orthogonal_regularizer=OrthogonalRegularizer)


def serialize(regularizer):
    return serialize_keras_object(regularizer)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, module_objects=ALL_OBJECTS,
                                    custom_objects=custom_objects,
                                    printable_module_name="regularizer")


def get(identifier):
    """None, a name ("l2"), a config dict, a class or a callable."""
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
    raise ValueError(f"Could not interpret regularizer identifier: {identifier}")
