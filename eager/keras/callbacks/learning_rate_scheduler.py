"""`keras.callbacks.LearningRateScheduler`: set the learning rate at each epoch's start."""

from __future__ import annotations

import numpy as np

from ..utils.progbar import _write
from .callback import Callback

__all__ = ["LearningRateScheduler"]


def current_learning_rate(optimizer) -> float:
    value = optimizer.learning_rate
    return float(value.numpy() if hasattr(value, "numpy") else value)


class LearningRateScheduler(Callback):
    """≈ `keras.callbacks.LearningRateScheduler(schedule, verbose=0)`: `schedule(epoch, lr)`
    (or `schedule(epoch)`) returns the float learning rate for the epoch (0-based); the
    epoch's logs get `learning_rate`."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        if not hasattr(optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        try:
            lr = self.schedule(epoch, current_learning_rate(optimizer))
        except TypeError:  # the one-argument form
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, np.float32, np.float64)):
            raise ValueError(f"The output of the `schedule` function should be a float. Got: "
                             f"{lr}")
        optimizer.learning_rate = float(lr)
        if self.verbose > 0:
            _write(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                   f"{lr}.\n")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = current_learning_rate(self.model.optimizer)
