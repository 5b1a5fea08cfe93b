"""Keras 3's seeding: `SeedGenerator`, and how an initializer's `seed` becomes random numbers.

An integer seed is a fixed draw: the same seed gives the same numbers every call, so an
initializer given `seed=3` returns the same matrix each time it is called (Keras 3's rule; to get
fresh values per call, pass a `SeedGenerator`). `seed=None` picks an integer once, from Python's
`random` module, when the initializer is made — which is why `keras.utils.set_random_seed`
(seeding `random`) makes unseeded models reproducible.

Numbers are drawn on the host with numpy's default generator keyed by the two 32-bit words
`[seed, counter]`, as Keras 3's numpy backend draws them, so a seeded initializer here gives the
values it gives on that backend.
"""

from __future__ import annotations

import random as _python_random

import numpy as np

from .backend import auto_name

__all__ = ["SeedGenerator", "make_default_seed", "numpy_generator"]


def make_default_seed() -> int:
    return _python_random.randint(1, int(1e9))


class SeedGenerator:
    """≈ `keras.random.SeedGenerator`: a seed that moves on each time it is drawn from.

    Its state is the pair `[seed, counter]`; `next()` returns the current pair and advances the
    counter, so successive draws differ and the sequence repeats for the same seed."""

    def __init__(self, seed=None, name=None):
        self.name = auto_name(type(self).__name__) if name is None else name
        self._initial_seed = seed
        if seed is None:
            seed = make_default_seed()
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed}")
        self._state = [int(seed) & 0xFFFFFFFF, 0]

    def next(self) -> np.ndarray:
        state = np.array(self._state, dtype=np.uint32)
        self._state[1] = (self._state[1] + 1) & 0xFFFFFFFF
        return state

    def get_config(self) -> dict:
        return {"seed": self._initial_seed, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def numpy_generator(seed) -> np.random.Generator:
    """The numpy generator one draw with `seed` (an int or a `SeedGenerator`) uses."""
    if isinstance(seed, SeedGenerator):
        return np.random.default_rng(seed.next())
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.random.default_rng(np.array([int(seed) & 0xFFFFFFFF, 0], dtype=np.uint32))
    raise ValueError("Argument `seed` must be either an integer or an instance of "
                     f"`SeedGenerator`. Received: seed={seed} (of type {type(seed)})")
