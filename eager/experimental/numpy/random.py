"""`eager.experimental.numpy.random` ≈ `tnp.random`: numpy's random function names over eager's
seeded random ops (float64 draws, as numpy's)."""

from __future__ import annotations

from ...base import dtypes as _dt
from ...ops import random_ops as _random

__all__ = ["seed", "randn", "rand", "uniform", "standard_normal"]


def seed(s):
    """≈ `tnp.random.seed`: sets the global seed (`eager.random.set_seed`)."""
    _random.set_seed(int(s))


def _shape(size):
    if size is None:
        return []
    return [int(size)] if isinstance(size, int) else [int(d) for d in size]


def randn(*args):
    """≈ `tnp.random.randn(d0, d1, ...)`: standard normal draws, float64."""
    return _random.normal(list(args), dtype=_dt.float64)


def standard_normal(size=None):
    """≈ `tnp.random.standard_normal(size)`: standard normal draws, float64."""
    return _random.normal(_shape(size), dtype=_dt.float64)


def rand(*size):
    """≈ `tnp.random.rand(d0, d1, ...)`: uniform draws in [0, 1), float64."""
    return _random.uniform(list(size), dtype=_dt.float64)


def uniform(low=0.0, high=1.0, size=None):
    """≈ `tnp.random.uniform`: uniform draws in [low, high), float64."""
    return _random.uniform(_shape(size), minval=low, maxval=high, dtype=_dt.float64)
