"""`keras.callbacks.ModelCheckpoint`: save the model's weights during `fit`."""

from __future__ import annotations

import os
import warnings

import numpy as np

from ...train.checkpoint import Checkpoint
from ..utils.progbar import _write
from .monitor_callback import MonitorCallback

__all__ = ["ModelCheckpoint"]


def save_checkpoint(model, filepath, weights_only):
    """What ModelCheckpoint writes: `model.save_weights(filepath)` (weights only) or
    `model.save(filepath)` (a `.keras` archive) as Keras does; a model without those methods
    (a `Trainer` on a plain `Layer`) is written as an `eager.train.Checkpoint` of itself."""
    save = getattr(model, "save_weights" if weights_only else "save", None)
    if save is not None:
        save(filepath, overwrite=True)
    else:
        Checkpoint(model=model).write(filepath)


class ModelCheckpoint(MonitorCallback):
    """≈ `keras.callbacks.ModelCheckpoint(filepath, monitor="val_loss", verbose=0,
    save_best_only=False, save_weights_only=False, mode="auto", save_freq="epoch",
    initial_value_threshold=None)`.

    `filepath` may hold format fields: `{epoch}` (1-based) and any log name
    (`"w.{epoch:02d}-{val_loss:.2f}.weights.h5"`). As in Keras 3 it must end in
    ".weights.h5" with `save_weights_only=True` (written by `model.save_weights`) and in
    ".keras" otherwise (`model.save`); both hold eager's checkpoint format for the weights (see
    docs/keras.md, "Saving"). `save_freq` is "epoch" or a number of batches."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch",
                 initial_value_threshold=None):
        super().__init__(monitor, mode, initial_value_threshold)
        self.verbose = verbose
        self.filepath = os.fspath(filepath)
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = None
        self._current_epoch = 0
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are "
                             '"epoch" or integer values')
        if save_weights_only:
            if not self.filepath.endswith(".weights.h5"):
                raise ValueError("When using `save_weights_only=True` in `ModelCheckpoint`, the "
                                 "filepath provided must end in `.weights.h5` (Keras weights "
                                 f"format). Received: filepath={self.filepath}")
        elif not self.filepath.endswith((".keras", ".h5")):
            raise ValueError("The filepath provided must end in `.keras` (Keras model format). "
                             f"Received: filepath={self.filepath}")

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        if self.save_freq == "epoch":
            self._save_model(epoch, None, logs)

    def _should_save_on_batch(self, batch):
        if self.save_freq == "epoch":
            return False
        if self._last_batch_seen is None or batch <= self._last_batch_seen:
            seen = batch + 1
        else:
            seen = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += seen
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _file_path(self, epoch, batch, logs):
        logs = logs or {}
        try:
            if batch is None or "batch" in logs:
                return self.filepath.format(epoch=epoch + 1, **logs)
            return self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". '
                           f"Reason: {e}") from None

    def _should_save(self, epoch, logs, filepath) -> bool:
        if not self.save_best_only:
            if self.verbose > 0:
                _write(f"\nEpoch {epoch + 1}: saving model to {filepath}\n")
            return True
        if self.monitor_op is None:
            self._set_monitor_op()
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.",
                          stacklevel=2)
            return True
        if isinstance(current, np.ndarray) and current.ndim > 0:
            warnings.warn("Can save best model only when `monitor` is a scalar value. "
                          f"Received: {current}. Falling back to `save_best_only=False`.",
                          stacklevel=2)
            return True
        best = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(current, self.best):
            if self.verbose > 0:
                _write(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to "
                       f"{current:.5f}, saving model to {filepath}\n")
            self.best = current
            return True
        if self.verbose > 0:
            _write(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}\n")
        return False

    def _save_model(self, epoch, batch, logs):
        filepath = self._file_path(epoch, batch, logs)
        if os.path.isdir(filepath):
            raise OSError("Please specify a non-directory filepath for ModelCheckpoint. "
                          f"Filepath used is an existing directory: {filepath}")
        if self._should_save(epoch, logs, filepath):
            dirname = os.path.dirname(filepath)
            if dirname:
                os.makedirs(dirname, exist_ok=True)
            save_checkpoint(self.model, filepath, self.save_weights_only)
