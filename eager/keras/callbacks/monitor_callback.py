"""The comparison `EarlyStopping`, `ModelCheckpoint` and `ReduceLROnPlateau` share: is a
monitored value an improvement on the best so far?"""

from __future__ import annotations

import operator
import warnings

from .callback import Callback

__all__ = ["MonitorCallback"]


def _metric_direction(model, name):
    """The `_direction` ("up"/"down") of the last compiled metric named `name`, else None.

    As Keras 3, only the metrics inside `compile`'s metric containers (the entries of
    `model.metrics` listing sub-metrics, i.e. "compile_metrics") are looked at, by their own
    name: the loss trackers and a multi-output model's prefixed names ("out1_accuracy") are
    not resolved. (Duck-typed: the trainers import the callbacks, not the reverse.)"""
    direction = None
    for entry in getattr(model, "metrics", None) or ():
        for metric in getattr(entry, "metrics", None) or ():
            if getattr(metric, "name", None) == name and hasattr(metric, "_direction"):
                direction = metric._direction
    return direction


class MonitorCallback(Callback):
    """A callback watching `monitor` in the epoch logs. `mode="auto"` minimises "loss" and
    "val_loss" and follows a compiled metric's own `_direction` (accuracies: up, errors:
    down); any other name raises Keras's ValueError asking for "min" or "max"."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto "
                          "mode.", stacklevel=2)
            mode = "auto"
        self.monitor = monitor
        self.mode = mode
        self.best = baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self):
        if self.mode == "min":
            self.monitor_op = operator.lt
        elif self.mode == "max":
            self.monitor_op = operator.gt
        else:
            name = self.monitor.removeprefix("val_")
            if name == "loss":
                self.monitor_op = operator.lt
            direction = _metric_direction(self.model, name)
            if direction is not None:
                self.monitor_op = operator.gt if direction == "up" else operator.lt
            if self.monitor_op is None:
                raise ValueError(
                    f"{type(self).__name__} callback received monitor={self.monitor}, but "
                    "Keras isn't able to automatically determine whether that metric should "
                    "be maximized or minimized. Pass `mode='max'` in order to monitor based "
                    "on the highest metric value, or pass `mode='min'` in order to use the "
                    "lowest value.")
        if self.monitor_op is operator.lt:
            self.min_delta *= -1

    def _is_improvement(self, value, reference):
        if reference is None:
            return True
        return bool(self.monitor_op(value - self.min_delta, reference))
