"""`keras.callbacks.Callback`: the hooks `fit`, `evaluate` and `predict` call."""

from __future__ import annotations

__all__ = ["Callback"]


class Callback:
    """≈ `keras.callbacks.Callback`: override the hooks you need. `self.model` is the model
    being trained, `self.params` holds `verbose`, `epochs` and `steps` (steps per epoch, or
    None when unknown). `on_batch_begin`/`on_batch_end` are the older names of the training
    batch hooks; the training hooks call them, as Keras's do."""

    def __init__(self):
        self.params = None
        self._model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self._model = model

    @property
    def model(self):
        return self._model

    def on_batch_begin(self, batch, logs=None):
        """Called at the start of a training batch (the older name)."""

    def on_batch_end(self, batch, logs=None):
        """Called at the end of a training batch (the older name)."""

    def on_epoch_begin(self, epoch, logs=None):
        """Called at the start of an epoch of `fit`."""

    def on_epoch_end(self, epoch, logs=None):
        """Called at the end of an epoch with its metrics (and `val_` metrics)."""

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        """Called at the start of a batch of `evaluate` (and of validation)."""

    def on_test_batch_end(self, batch, logs=None):
        """Called at the end of a batch of `evaluate` with the running metrics."""

    def on_predict_batch_begin(self, batch, logs=None):
        """Called at the start of a batch of `predict`."""

    def on_predict_batch_end(self, batch, logs=None):
        """Called at the end of a batch of `predict` (`logs["outputs"]`)."""

    def on_train_begin(self, logs=None):
        """Called when `fit` starts."""

    def on_train_end(self, logs=None):
        """Called when `fit` ends, with the last epoch's logs."""

    def on_test_begin(self, logs=None):
        """Called when `evaluate` (or a validation run) starts."""

    def on_test_end(self, logs=None):
        """Called when `evaluate` ends, with its metrics."""

    def on_predict_begin(self, logs=None):
        """Called when `predict` starts."""

    def on_predict_end(self, logs=None):
        """Called when `predict` ends."""


def overrides(callback, hook: str) -> bool:
    """Whether `callback` does something in `hook` (or in the older batch hook a training
    batch hook calls): the loops skip turning a step's logs into floats when nobody reads
    them, so a step costs no device-to-host copy."""
    own = vars(callback)  # hooks set on the instance (LambdaCallback's)
    cls = type(callback)
    if hook in own or getattr(cls, hook) is not getattr(Callback, hook):
        return True
    legacy = {"on_train_batch_begin": "on_batch_begin",
              "on_train_batch_end": "on_batch_end"}.get(hook)
    return legacy is not None and (legacy in own or getattr(cls, legacy)
                                   is not getattr(Callback, legacy))
