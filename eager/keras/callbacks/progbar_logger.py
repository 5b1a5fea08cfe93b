"""`keras.callbacks.ProgbarLogger`: drives a `Progbar` from `fit`/`evaluate`/`predict`."""

from __future__ import annotations

from ..utils.progbar import Progbar, _write
from .callback import Callback

__all__ = ["ProgbarLogger"]


class ProgbarLogger(Callback):
    """≈ `keras.callbacks.ProgbarLogger`: prints "Epoch i/n" (when n > 1) and one progress
    bar per epoch; during `fit` the validation run does not draw a bar of its own (its
    metrics end the epoch's line as `val_...`). The values shown are the step's logs, which
    are already running means, so the bar does not average them again."""

    def __init__(self):
        super().__init__()
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1
        self._called_in_fit = False

    def set_params(self, params):
        super().set_params(params)
        verbose = params["verbose"]
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params["epochs"]
        self.target = params["steps"]

    def on_train_begin(self, logs=None):
        self._called_in_fit = True

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset()
            self._ensure_progbar()

    def on_predict_begin(self, logs=None):
        self._reset()
        self._ensure_progbar()

    def on_epoch_begin(self, epoch, logs=None):
        self._reset()
        self._ensure_progbar()
        if self.verbose and self.epochs > 1:
            _write(f"Epoch {epoch + 1}/{self.epochs}\n")

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, None)

    def on_epoch_end(self, epoch, logs=None):
        self._finalize(logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_end(self, logs=None):
        self._finalize(logs)

    def _reset(self):
        self.seen = 0
        self.progbar = None

    def _ensure_progbar(self):
        if self.progbar is None:
            self.progbar = Progbar(target=self.target, verbose=self.verbose, unit_name="step",
                                   stateless_metrics=set())

    def _update(self, batch, logs):
        self._ensure_progbar()
        self.seen = batch + 1
        if self.verbose == 1:
            self.progbar.update(self.seen, list((logs or {}).items()), finalize=False)

    def _finalize(self, logs):
        if self.target is None:
            self.target = self.seen
            self.progbar.target = self.target
        self.progbar.update(self.target, list((logs or {}).items()), finalize=True)
