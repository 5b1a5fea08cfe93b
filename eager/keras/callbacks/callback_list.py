"""`keras.callbacks.CallbackList`: the callbacks of one `fit`/`evaluate`/`predict` call."""

from __future__ import annotations

from .callback import Callback, overrides
from .history import History
from .progbar_logger import ProgbarLogger

__all__ = ["CallbackList"]

_BATCH_HOOKS = ("on_train_batch_begin", "on_train_batch_end", "on_test_batch_begin",
                "on_test_batch_end", "on_predict_batch_begin", "on_predict_batch_end")


def _python_logs(logs):
    """A step's logs (scalar tensors) as Python floats, once per batch for every callback."""
    if not logs:
        return logs
    out = {}
    for name, value in logs.items():
        if hasattr(value, "numpy"):
            value = value.numpy()
        out[name] = float(value) if getattr(value, "ndim", 0) == 0 else value
    return out


class CallbackList(Callback):
    """≈ `keras.callbacks.CallbackList(callbacks=None, add_history=False, add_progbar=False,
    model=None, **params)`: calls each hook on every callback in order, adding a `History`
    (last) and a `ProgbarLogger` (after it) when asked and not already given.

    Batch hooks are the per-step overhead of `fit`: a hook nobody overrides is skipped, and a
    step's logs become Python floats only when some callback reads them."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None,
                 **params):
        super().__init__()
        self.callbacks = list(callbacks) if callbacks else []
        self._history = None
        self._progbar = None
        for cb in self.callbacks:
            if isinstance(cb, ProgbarLogger):
                self._progbar = cb
            elif isinstance(cb, History):
                self._history = cb
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if self._progbar is None and add_progbar:
            self._progbar = ProgbarLogger()
            self.callbacks.append(self._progbar)
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)
        self._refresh_batch_hooks()

    def _refresh_batch_hooks(self):
        self._batch_hooks = {hook: [cb for cb in self.callbacks if overrides(cb, hook)]
                             for hook in _BATCH_HOOKS}

    def append(self, callback):
        self.callbacks.append(callback)
        self._refresh_batch_hooks()

    def set_params(self, params):
        self.params = params
        for cb in self.callbacks:
            cb.set_params(params)

    def set_model(self, model):
        super().set_model(model)
        if self._history is not None:
            model.history = self._history
        for cb in self.callbacks:
            cb.set_model(model)

    def _call_batch(self, hook, batch, logs, as_python=True):
        targets = self._batch_hooks[hook]
        if targets:
            if as_python:
                logs = _python_logs(logs)
            for cb in targets:
                getattr(cb, hook)(batch, logs)

    def on_batch_begin(self, batch, logs=None):
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_batch_end(self, batch, logs=None):
        self._call_batch("on_train_batch_end", batch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call_batch("on_train_batch_end", batch, logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call_batch("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call_batch("on_test_batch_end", batch, logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call_batch("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        # The step's outputs as they are (tensors), as Keras 3 hands them on.
        self._call_batch("on_predict_batch_end", batch, logs, as_python=False)

    def on_epoch_begin(self, epoch, logs=None):
        for cb in self.callbacks:
            cb.on_epoch_begin(epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        for cb in self.callbacks:
            cb.on_epoch_end(epoch, logs)

    def on_train_begin(self, logs=None):
        for cb in self.callbacks:
            cb.on_train_begin(logs)

    def on_train_end(self, logs=None):
        for cb in self.callbacks:
            cb.on_train_end(logs)

    def on_test_begin(self, logs=None):
        for cb in self.callbacks:
            cb.on_test_begin(logs)

    def on_test_end(self, logs=None):
        for cb in self.callbacks:
            cb.on_test_end(logs)

    def on_predict_begin(self, logs=None):
        for cb in self.callbacks:
            cb.on_predict_begin(logs)

    def on_predict_end(self, logs=None):
        for cb in self.callbacks:
            cb.on_predict_end(logs)
