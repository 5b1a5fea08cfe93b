"""`keras.utils.set_random_seed`: one call seeds everything a Keras program draws from."""

from __future__ import annotations

import random

import numpy as np

from ...ops.random_ops import set_seed as _set_eager_seed

__all__ = ["set_random_seed", "get_random_seed"]

_global_seed = None


def set_random_seed(seed):
    """Seed Python's `random`, numpy's global generator and eager's global seed
    (`eager.random.set_seed`), as Keras seeds its backend's; `get_random_seed()` returns it
    afterwards (Keras's initializers draw their seeds from it)."""
    global _global_seed
    if not isinstance(seed, int):
        raise ValueError("Expected `seed` argument to be an integer. "
                         f"Received: seed={seed} (of type {type(seed)})")
    _global_seed = seed
    random.seed(seed)
    np.random.seed(seed)
    _set_eager_seed(seed)


def get_random_seed():
    """The seed last given to `set_random_seed`, or None."""
    return _global_seed
