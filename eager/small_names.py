"""Top-level names of TensorFlow 2 that belong to no namespace module: `group`, `get_logger`,
`type_spec_from_value`."""

from __future__ import annotations

import logging

from .core.specs import TensorSpec
from .core.tensor_conversion import convert_to_tensor
from .tensor import Tensor

__all__ = ["group", "get_logger", "type_spec_from_value"]


def group(*inputs, name=None):
    """≈ `tf.group`: waits for nothing and returns None. Eagerly every op has already run; in a
    traced function the ops a program runs for their effects run anyway (they are stateful),
    so grouping them adds no dependency eager needs."""
    return None


def get_logger():
    """≈ `tf.get_logger`: the `"tensorflow"` logger of Python's logging, which TensorFlow's
    messages go to; configure it as TensorFlow's (`setLevel("ERROR")`)."""
    return logging.getLogger("tensorflow")


def type_spec_from_value(value):
    """≈ `tf.type_spec_from_value`: the `TensorSpec` of a tensor (or of what converts to one)."""
    if not isinstance(value, Tensor):
        try:
            value = convert_to_tensor(value)
        except (TypeError, ValueError):
            raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type "
                            f"{type(value)}.") from None
    return TensorSpec(value.shape, value.dtype)
