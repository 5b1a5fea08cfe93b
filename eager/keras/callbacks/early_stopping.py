"""`keras.callbacks.EarlyStopping`: stop `fit` when a monitored value stops improving."""

from __future__ import annotations

import warnings

from ..utils.progbar import _write
from .monitor_callback import MonitorCallback

__all__ = ["EarlyStopping"]


class EarlyStopping(MonitorCallback):
    """≈ `keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=0, patience=0,
    verbose=0, mode="auto", baseline=None, restore_best_weights=False, start_from_epoch=0)`.

    Training stops after `patience` epochs without an improvement of at least `min_delta`
    (never at epoch 0); epochs before `start_from_epoch` are not watched. With
    `restore_best_weights`, the weights of the best epoch are put back when training ends,
    when it stopped early or not (Keras 3's rule)."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.wait = 0
        self.stopped_epoch = 0
        self.restore_best_weights = restore_best_weights
        self.best_weights = None
        self.best_epoch = 0
        self.start_from_epoch = start_from_epoch

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            _write(f"Epoch {self.stopped_epoch + 1}: early stopping\n")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                _write("Restoring model weights from the end of the best epoch: "
                       f"{self.best_epoch + 1}.\n")
            self.model.set_weights(self.best_weights)

    def get_monitor_value(self, logs):
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(list(logs.keys()))}",
                          stacklevel=2)
        return value
