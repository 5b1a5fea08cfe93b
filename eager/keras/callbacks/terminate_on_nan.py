"""`keras.callbacks.TerminateOnNaN`: stop when the loss becomes NaN or infinite."""

from __future__ import annotations

import math

from ..utils.progbar import _write
from .callback import Callback

__all__ = ["TerminateOnNaN"]


class TerminateOnNaN(Callback):
    """≈ `keras.callbacks.TerminateOnNaN(raise_error=False)`: checks each training batch's
    loss; a NaN or Inf stops training (or, with `raise_error`, raises RuntimeError)."""

    def __init__(self, raise_error: bool = False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (math.isnan(loss) or math.isinf(loss)):
            if self.raise_error:
                raise RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: "
                                   f"{loss}. Terminating training immediately.")
            _write(f"Batch {batch}: Invalid loss, terminating training\n")
            self.model.stop_training = True
