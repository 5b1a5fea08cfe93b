"""`keras.saving.save_model` / `load_model` (and `Model.save`, `keras.models.load_model`), and
the `save_weights` / `load_weights` functions, with Keras 3's arguments and errors.

A `.keras` archive (see `keras_archive`) holds the model's serialized config (with its
`build_config` and, once compiled, its `compile_config`), and its weights and optimizer
variables. `load_model` rebuilds the model from the config (classes found by name among
eager.keras's own, the registered ones and `custom_objects`; nothing from the file runs), builds
it, compiles it when asked (`compile=True`: the optimizer, losses and metrics of the config, and
the optimizer's saved variables), then assigns the weights: every count and shape is checked
first, so a file that does not fit raises and no model is returned. In a multi-worker job only
the chief's `save_model` writes the path (`eager.train.checkpoint_management.worker_temp_path`)."""

from __future__ import annotations

import os
import warnings

from ...train import checkpoint_management as _checkpoint_management
from ..layers.layer import Layer
from ..models.layer_configs import builtin_layer_classes
from ..serialization import (SafeModeScope, custom_object_scope, deserialize_keras_object,
                             serialize_keras_object)
from . import keras_archive

__all__ = ["save_model", "load_model", "save_weights", "load_weights"]


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """≈ `keras.saving.save_model(model, filepath, overwrite=True, zipped=None)`: a `.keras`
    archive. The legacy `.h5` format needs h5py, which eager.keras does not use (Keras 3 raises
    the same ImportError without h5py); any other suffix is Keras's ValueError."""
    include_optimizer = kwargs.pop("include_optimizer", True)
    save_format = kwargs.pop("save_format", False)
    text = str(filepath)
    if save_format and not text.endswith((".h5", ".hdf5", ".keras")):
        raise ValueError("The `save_format` argument is deprecated in Keras 3. Please remove "
                         "this argument and pass a file path with either `.keras` or `.h5` "
                         f"extension.Received: save_format={save_format}")
    if kwargs:
        raise ValueError(f"The following argument(s) are not supported: {list(kwargs.keys())}")
    if zipped is False:
        raise ValueError("eager.keras saves models only as zipped `.keras` archives "
                         f"(zipped=False is not supported). Received: filepath={filepath}.")
    if text.endswith((".h5", ".hdf5")):
        raise ImportError("`save_model()` using h5 format requires h5py. Could not import "
                          "h5py.")
    if not text.endswith(".keras"):
        raise ValueError("Invalid filepath extension for saving. Please add either a `.keras` "
                         "extension for the native Keras format (recommended) or a `.h5` "
                         "extension. Use `model.export(filepath)` if you want to export a "
                         "SavedModel for use with TFLite/TFServing/etc. "
                         f"Received: filepath={filepath}.")
    # A non-chief worker of a multi-worker job writes a temporary copy, deleted at once: the
    # chief's archive alone lands at `filepath` (TF/Keras's rule for every worker's save).
    temp = _checkpoint_management.worker_temp_path(text)
    target = filepath if temp is None else temp
    if not overwrite and os.path.exists(str(target)):
        raise ValueError(f"save_model: {target} exists and overwrite=False.")
    config = serialize_keras_object(model)
    optimizer = getattr(model, "optimizer", None) if include_optimizer else None
    if not include_optimizer:
        config.pop("compile_config", None)
    optimizer_variables = list(optimizer.variables) if optimizer is not None else []
    if temp is not None:
        os.makedirs(os.path.dirname(temp), exist_ok=True)
    keras_archive.write_archive(target, config, model.weights, optimizer_variables)
    if temp is not None:
        _checkpoint_management.remove_worker_temp(temp)


def _missing(filepath):
    text = str(filepath)
    if text.endswith((".h5", ".hdf5")):
        return ImportError("`load_model()` using h5 format requires h5py. Could not import "
                           "h5py.")
    if text.endswith(".keras"):
        return ValueError(f"File not found: filepath={filepath}. Please ensure the file is an "
                          "accessible `.keras` zip file.")
    return ValueError(f"File format not supported: filepath={filepath}. Keras 3 only supports "
                      "V3 `.keras` files, legacy H5 format files (`.h5` extension). Note that "
                      "the legacy SavedModel format is not supported by `load_model()` in "
                      "Keras 3. In order to reload a TensorFlow SavedModel as an inference-only "
                      f"layer in Keras 3, use `keras.layers.TFSMLayer({filepath}, "
                      "call_endpoint='serving_default')` (note that your `call_endpoint` might "
                      "have a different name).")


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002
    """≈ `keras.saving.load_model(filepath, custom_objects=None, compile=True,
    safe_mode=True)`: the model a `.keras` archive written by `save_model` holds."""
    text = str(filepath)
    if not text.endswith(".keras") or not os.path.isfile(text):
        raise _missing(filepath)
    archive = keras_archive.read_archive(filepath)
    config = dict(archive.config)
    if not compile:
        config.pop("compile_config", None)
    with custom_object_scope(custom_objects or {}), SafeModeScope(safe_mode):
        model = deserialize_keras_object(config, module_objects=builtin_layer_classes(),
                                         printable_module_name="layer")
    if not isinstance(model, Layer):
        raise ValueError(f"The file {filepath} does not describe a Keras model (its config "
                         f"deserializes to {type(model).__name__}). Nothing was loaded.")
    pairs = _weight_pairs(model, archive.layer_weights, filepath)
    pairs += _optimizer_pairs(model, archive.optimizer_variables)
    keras_archive.assign_all(pairs)
    return model


def _weight_pairs(model, arrays, filepath) -> list:
    weights = model.weights
    if len(arrays) != len(weights):
        raise ValueError(f"The file {filepath} holds {len(arrays)} weights, but the model its "
                         f"config describes ('{model.name}') has {len(weights)}. Nothing was "
                         "loaded.")
    for i, (weight, value) in enumerate(zip(weights, arrays)):
        if tuple(weight.shape) != tuple(value.shape):
            raise ValueError(f"Weight {i} of model '{model.name}' ({weight.path}) has shape "
                             f"{tuple(weight.shape)}, but the file {filepath} holds shape "
                             f"{tuple(value.shape)}. Nothing was loaded.")
    return list(zip(weights, arrays))


def _optimizer_pairs(model, arrays) -> list:
    """The optimizer's variables paired with the saved ones, when they match (Keras 3 warns
    and skips them otherwise): a compiled model's optimizer is built for the model's trainable
    weights only when the save had its slots."""
    optimizer = getattr(model, "optimizer", None) if getattr(model, "compiled", False) else None
    if optimizer is None or not arrays:
        return []
    variables = list(optimizer.variables)
    if len(variables) != len(arrays) and hasattr(optimizer, "build") and model.built:
        optimizer.build(model.trainable_weights)
        variables = list(optimizer.variables)
    if len(variables) != len(arrays) or any(
            tuple(v.shape) != tuple(a.shape) for v, a in zip(variables, arrays)):
        warnings.warn(f"Skipping variable loading for optimizer '{optimizer.name}', because "
                      f"it has {len(variables)} variables whereas the saved optimizer has "
                      f"{len(arrays)} variables.", UserWarning, stacklevel=3)
        return []
    return list(zip(variables, arrays))


def save_weights(model, filepath, overwrite=True, **kwargs):
    """≈ `keras.saving.save_weights`: `model.save_weights(filepath)` (a `.weights.h5` path,
    eager's checkpoint format inside)."""
    if kwargs:
        raise ValueError(f"Invalid keyword arguments: {kwargs}")
    model.save_weights(filepath, overwrite=overwrite)


def load_weights(model, filepath, skip_mismatch=False, **kwargs):
    """≈ `keras.saving.load_weights`: from a `.weights.h5` file (`model.load_weights`) or
    from the weights of a `.keras` archive; all or nothing."""
    if kwargs:
        raise ValueError(f"Invalid keyword arguments: {kwargs}")
    if str(filepath).endswith(".keras"):
        if not os.path.isfile(str(filepath)):
            raise _missing(filepath)
        archive = keras_archive.read_archive(filepath)
        keras_archive.assign_all(_weight_pairs(model, archive.layer_weights, filepath))
        return
    model.load_weights(filepath, skip_mismatch=skip_mismatch)
