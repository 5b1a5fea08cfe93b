"""Keras masks: which tensor carries which mask (≈ Keras 3's `backend.get_keras_mask` /
`set_keras_mask`), for the layers.

Keras 3 stores a layer output's mask as a `_keras_mask` attribute on the tensor. eager's
tensors have `__slots__` (no attribute can be added) and are unhashable, so the masks of eager
tensors — and of the symbolic tensors of an `eager.function` trace — live in the annotation
store of `eager.keras.utils.annotations` (id -> weak reference and mask, dropped when the tensor
dies, never attached to a later tensor that reuses the id), the same store losses and metrics
read, so a mask a layer sets weights the loss as in Keras. A `KerasTensor` (functional API) is
an ordinary object and carries its mask spec as the attribute itself.

Only layer calls set masks (`Embedding(mask_zero=True)`, `Masking`, and every layer that
supports masking passes its `compute_mask` on), so nothing is stored on the unmasked path and
`any_masks()` lets a layer call skip the bookkeeping entirely.
"""

from __future__ import annotations

from .utils import annotations as _annotations

__all__ = ["get_keras_mask", "set_keras_mask", "any_masks"]

_entries = _annotations._masks._entries   # the live masks, read by `any_masks` (hot path)


def any_masks() -> bool:
    """Whether any live tensor carries a mask."""
    return bool(_entries)


def get_keras_mask(x):
    """The mask attached to `x` (a boolean tensor or KerasTensor), or None."""
    if x is None:
        return None
    if getattr(x, "_is_keras_tensor", False):
        return getattr(x, "_keras_mask", None)
    return _annotations.get_keras_mask(x)


def set_keras_mask(x, mask) -> None:
    """Attaches `mask` to `x` (None removes it). Objects that cannot be referenced weakly
    (Python numbers, numpy arrays) carry no mask, as in Keras for non-tensors."""
    if getattr(x, "_is_keras_tensor", False):
        x._keras_mask = mask
        return
    try:
        _annotations.set_keras_mask(x, mask)
    except TypeError:
        return
