"""`keras.callbacks.LambdaCallback`: a callback made of functions."""

from __future__ import annotations

from .callback import Callback

__all__ = ["LambdaCallback"]


class LambdaCallback(Callback):
    """≈ `keras.callbacks.LambdaCallback(on_epoch_begin=None, on_epoch_end=None,
    on_train_begin=None, on_train_end=None, on_train_batch_begin=None,
    on_train_batch_end=None, **kwargs)`: each given function becomes that hook (epoch and
    batch hooks get `(index, logs)`, the others `(logs)`); other hooks by keyword too."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None,
                 on_train_end=None, on_train_batch_begin=None, on_train_batch_end=None,
                 **kwargs):
        super().__init__()
        hooks = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end,
                     on_train_begin=on_train_begin, on_train_end=on_train_end,
                     on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end, **kwargs)
        for name, fn in hooks.items():
            if fn is not None:
                setattr(self, name, fn)
