"""`Model.save_weights` / `Model.load_weights` in eager's checkpoint format.

Keras 3 requires the `.weights.h5` suffix and writes HDF5. Here the suffix is required the same
way (so code written for Keras runs unchanged), but the file is eager's pickle-free checkpoint
(`eager.train.Checkpoint.write`: `.npy` arrays, a JSON object graph, a checksum), one entry per
weight in `model.weights` order (`weight_0`, `weight_1`, ...). Keras cannot read these files,
nor eager Keras's HDF5 files.

Loading is all or nothing: the count and every shape are checked against the model before any
weight is assigned, so a mismatched architecture raises and leaves the model unchanged."""

from __future__ import annotations

import os

import numpy as np

from ...train import Checkpoint
from ...train.checkpoint_management import list_variables, load_variable

__all__ = ["save_weights", "load_weights"]

_SUFFIX = ".weights.h5"
_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"


def _key(index) -> str:
    return f"weight_{index}"


def save_weights(model, filepath, overwrite=True) -> None:
    filepath = os.fspath(filepath)
    if not str(filepath).endswith(_SUFFIX):
        raise ValueError(f"The filename must end in `{_SUFFIX}`. Received: filepath={filepath}")
    if not overwrite and os.path.exists(filepath):
        raise ValueError(f"save_weights: {filepath} exists and overwrite=False.")
    weights = model.weights
    Checkpoint(**{_key(i): w for i, w in enumerate(weights)}).write(filepath)


def load_weights(model, filepath, skip_mismatch=False) -> None:
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"No such file: {filepath}")
    stored = {key[:-len(_VALUE)]: tuple(shape) for key, shape in list_variables(filepath)
              if key.endswith(_VALUE)}
    weights = model.weights
    if len(stored) != len(weights):
        raise ValueError(f"Weights file {filepath} holds {len(stored)} weights, but model "
                         f"'{model.name}' has {len(weights)}: the architectures differ. "
                         "Nothing was loaded.")
    pairs = []
    for i, weight in enumerate(weights):
        shape = stored.get(_key(i))
        if shape != tuple(weight.shape):
            if skip_mismatch:
                continue
            raise ValueError(f"Weight {i} of model '{model.name}' ({weight.path}) has shape "
                             f"{tuple(weight.shape)}, but the file {filepath} holds shape "
                             f"{shape}. Nothing was loaded.")
        pairs.append((weight, load_variable(filepath, _key(i))))
    for weight, value in pairs:
        weight.assign(np.asarray(value, dtype=weight.dtype.as_numpy_dtype))
