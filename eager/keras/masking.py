"""Keras masks: which tensor carries which mask (≈ Keras 3's `backend.get_keras_mask` /
`set_keras_mask`).

Keras 3 stores a layer output's mask as a `_keras_mask` attribute on the tensor. eager's
tensors have `__slots__` (no attribute can be added) and are unhashable, so the association is
kept here instead: a map from `id(tensor)` to (weak reference to the tensor, mask). The weak
reference's callback drops the entry when the tensor dies, and a lookup checks that the
reference still points at the same object (an id can be reused after a tensor dies), so a mask
lives exactly as long as its tensor and never attaches to another one. This works the same for
eager tensors and for the symbolic tensors of an `eager.function` trace. A `KerasTensor`
(functional API) is an ordinary object and carries its mask spec as the attribute itself.

Only layer calls set masks (`Embedding(mask_zero=True)`, `Masking`, and every layer that
supports masking passes its `compute_mask` on), so the map holds at most one entry per live
masked output; nothing is added on the unmasked path.
"""

from __future__ import annotations

import threading
import weakref

__all__ = ["get_keras_mask", "set_keras_mask"]

_masks: dict = {}          # id(tensor) -> (weakref to tensor, mask)
_lock = threading.Lock()


def _forget(key, ref):
    with _lock:
        entry = _masks.get(key)
        if entry is not None and entry[0] is ref:
            del _masks[key]


def get_keras_mask(x):
    """The mask attached to `x` (a boolean tensor or KerasTensor), or None."""
    if x is None:
        return None
    if getattr(x, "_is_keras_tensor", False):
        return getattr(x, "_keras_mask", None)
    entry = _masks.get(id(x))
    if entry is None or entry[0]() is not x:
        return None
    return entry[1]


def set_keras_mask(x, mask) -> None:
    """Attaches `mask` to `x` (None removes it). Objects that cannot be referenced weakly
    (Python numbers, numpy arrays) carry no mask, as in Keras for non-tensors."""
    if getattr(x, "_is_keras_tensor", False):
        x._keras_mask = mask
        return
    key = id(x)
    if mask is None:
        with _lock:
            _masks.pop(key, None)
        return
    try:
        ref = weakref.ref(x, lambda r, key=key: _forget(key, r))
    except TypeError:
        return
    with _lock:
        _masks[key] = (ref, mask)
