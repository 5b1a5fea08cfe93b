"""`eager.keras.backend` (≈ `keras.config` and the parts of `keras.backend` user code calls):
the process-wide Keras settings, and the name counter behind Keras's automatic layer names.

Keras keeps these as module state (a float type for new weights, the fuzz factor losses clip
with, the image layout, one counter per name prefix); so does this module, behind a lock so
that models built on several threads still get distinct names.
"""

from __future__ import annotations

import collections
import re
import threading

from ..base import dtypes as _dtypes

__all__ = ["floatx", "set_floatx", "epsilon", "set_epsilon", "image_data_format",
           "set_image_data_format", "standardize_dtype", "get_uid", "reset_uids",
           "clear_session", "is_float_dtype", "is_keras_tensor", "auto_name", "to_snake_case"]

_FLOAT_TYPES = ("float16", "bfloat16", "float32", "float64")
_settings = {"floatx": "float32", "epsilon": 1e-7, "image_data_format": "channels_last"}
_uids: collections.Counter = collections.Counter()
_uids_lock = threading.Lock()


def floatx() -> str:
    """The dtype of new weights and of converted inputs when none is given ("float32")."""
    return _settings["floatx"]


def set_floatx(value) -> None:
    value = str(value)
    if value not in _FLOAT_TYPES:
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of {set(_FLOAT_TYPES)}")
    _settings["floatx"] = value


def epsilon() -> float:
    """The fuzz factor losses and metrics clip probabilities with (1e-7)."""
    return _settings["epsilon"]


def set_epsilon(value) -> None:
    _settings["epsilon"] = float(value)


def image_data_format() -> str:
    return _settings["image_data_format"]


def set_image_data_format(data_format) -> None:
    data_format = str(data_format).lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    _settings["image_data_format"] = data_format


def standardize_dtype(dtype) -> str:
    """Keras's dtype names: None is `floatx()`, anything `eager.as_dtype` reads becomes its name
    ("float32"), so layers compare dtypes as strings as Keras does."""
    if dtype is None:
        return floatx()
    if hasattr(dtype, "name") and not isinstance(dtype, str):
        dtype = dtype.name
    name = str(dtype)
    if name in ("float", "double"):
        return {"float": "float32", "double": "float64"}[name]
    try:
        return _dtypes.as_dtype(name).name
    except (TypeError, ValueError, KeyError):
        raise ValueError(f"Invalid dtype: {dtype}") from None


def is_float_dtype(dtype) -> bool:
    return standardize_dtype(dtype).startswith(("float", "bfloat"))


def get_uid(prefix: str = "") -> int:
    """1 the first time `prefix` is asked for, then 2, 3, ... (until `clear_session`)."""
    with _uids_lock:
        _uids[prefix] += 1
        return _uids[prefix]


def to_snake_case(name: str) -> str:
    """Keras's rule: "MaxPooling2D" -> "max_pooling2d", "GRU" -> "gru"."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def auto_name(prefix: str) -> str:
    """A new object's default name: "dense", then "dense_1", "dense_2", ... per snake-cased
    prefix, as Keras names layers, models, metrics and optimizers."""
    prefix = to_snake_case(prefix)
    with _uids_lock:
        seen = _uids[prefix]
        _uids[prefix] += 1
    return prefix if seen == 0 else f"{prefix}_{seen}"


def reset_uids() -> None:
    with _uids_lock:
        _uids.clear()


def clear_session() -> None:
    """≈ `keras.backend.clear_session()`: names start again from "dense", "dense_1", ...

    Models and layers hold their own state here (nothing global to free), so this resets the
    automatic names only."""
    reset_uids()


def is_keras_tensor(x) -> bool:
    """Whether `x` is a symbolic input or output of the functional API (a `KerasTensor`)."""
    return getattr(type(x), "_is_keras_tensor", False)
