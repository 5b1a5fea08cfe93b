"""`keras.callbacks.ReduceLROnPlateau`: cut the learning rate when progress stalls."""

from __future__ import annotations

import warnings

import numpy as np

from ..utils.progbar import _write
from .learning_rate_scheduler import current_learning_rate
from .monitor_callback import MonitorCallback

__all__ = ["ReduceLROnPlateau"]


class ReduceLROnPlateau(MonitorCallback):
    """≈ `keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.1, patience=10,
    verbose=0, mode="auto", min_delta=1e-4, cooldown=0, min_lr=0.0)`: after `patience`
    epochs without improvement the learning rate is multiplied by `factor` (not below
    `min_lr`), then `cooldown` epochs pass before waiting starts again. The epoch's logs get
    `learning_rate`."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0, **kwargs):
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received "
                             f"factor={factor}")
        self.factor = factor
        self.min_lr = min_lr
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.wait = 0

    def _reset(self):
        self.best = None
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _reduce(self, epoch) -> bool:
        optimizer = self.model.optimizer
        old = current_learning_rate(optimizer)
        if old <= np.float32(self.min_lr):
            return False
        new = max(old * self.factor, self.min_lr)
        optimizer.learning_rate = new
        if self.verbose > 0:
            _write(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to "
                   f"{new}.\n")
        return True

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        logs = logs if logs is not None else {}
        logs["learning_rate"] = current_learning_rate(self.model.optimizer)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` "
                          "which is not available. Available metrics are: "
                          f"{','.join(list(logs.keys()))}.", stacklevel=2)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience and self._reduce(epoch):
                self.cooldown_counter = self.cooldown
                self.wait = 0
