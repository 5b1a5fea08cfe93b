"""Keras's per-tensor annotations: a tensor's mask and the logits a probability came from.

Keras attaches two things to tensors as attributes: `_keras_mask` (which entries of a layer's
output are padding; losses and metrics give them no weight) and `_keras_logits` (set by the
`softmax` and `sigmoid` activations, so a cross-entropy given their output computes from the
logits and never takes the log of a rounded-off probability). eager's tensors have `__slots__`,
so the annotations live here instead, keyed by the tensor's identity and dropped when the
tensor is collected. Layers call `set_keras_mask` / `set_keras_logits`; losses and metrics read
them with `get_keras_mask` / `get_keras_logits`.
"""

from __future__ import annotations

import threading
import weakref

__all__ = ["get_keras_mask", "set_keras_mask", "get_keras_logits", "set_keras_logits"]


class _Annotation:
    """One kind of annotation: id(tensor) -> (weak reference to the tensor, value)."""

    def __init__(self):
        self._entries = {}
        self._lock = threading.Lock()

    def get(self, tensor):
        entry = self._entries.get(id(tensor))
        if entry is None or entry[0]() is not tensor:
            return None
        return entry[1]

    def set(self, tensor, value) -> None:
        key = id(tensor)
        if value is None:
            with self._lock:
                self._entries.pop(key, None)
            return
        entries, lock = self._entries, self._lock

        def forget(ref, key=key):
            with lock:
                entry = entries.get(key)
                if entry is not None and entry[0] is ref:
                    del entries[key]

        with self._lock:
            self._entries[key] = (weakref.ref(tensor, forget), value)


_masks = _Annotation()
_logits = _Annotation()


def get_keras_mask(tensor):
    """The boolean mask a layer attached to `tensor`, or None."""
    return _masks.get(tensor)


def set_keras_mask(tensor, mask) -> None:
    """Attach `mask` (None removes it) to `tensor`, as Keras's `backend.set_keras_mask`."""
    _masks.set(tensor, mask)


def get_keras_logits(tensor):
    """The logits `tensor` (a softmax's or sigmoid's output) was computed from, or None."""
    return _logits.get(tensor)


def set_keras_logits(tensor, logits) -> None:
    """Record that `tensor` is softmax(logits) or sigmoid(logits) (Keras's `_keras_logits`)."""
    _logits.set(tensor, logits)
