"""`keras.callbacks.History`: the per-epoch logs `fit` returns."""

from __future__ import annotations

from .callback import Callback

__all__ = ["History"]


class History(Callback):
    """≈ `keras.callbacks.History`: `history` maps each log name to its value per epoch and
    `epoch` lists the epochs run; `fit` adds one and returns it (also `model.history`)."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for name, value in (logs or {}).items():
            self.history.setdefault(name, []).append(value)
        self.model.history = self
