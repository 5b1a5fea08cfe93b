"""`eager.random_normal_initializer` and `eager.random_uniform_initializer`: TensorFlow's own
(non-Keras) initializer classes, `tf.random_normal_initializer(mean, stddev, seed)(shape)`.

As TensorFlow's: with a `seed`, every call gives the same values, those of the stateless op
with seed `[seed, 0]` (TensorFlow's numbers); without one, each call draws fresh values from
the seeded stateful op.
"""

from __future__ import annotations

from ..base import dtypes as _dt
from . import random_ops, stateless_random_ops

__all__ = ["random_normal_initializer", "random_uniform_initializer"]


class _RandomInitializer:
    """What both share: the seed rule and the config round trip."""

    def __init__(self, seed):
        self.seed = seed

    def _seed_pair(self):
        return None if self.seed is None else [int(self.seed), 0]

    def get_config(self):
        raise NotImplementedError

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class random_normal_initializer(_RandomInitializer):  # noqa: N801 - TensorFlow's name
    """≈ `tf.random_normal_initializer`: N(mean, stddev**2) values of the requested shape."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=_dt.float32, **kwargs):
        dtype = _dt.as_dtype(dtype)
        if not dtype.is_floating:
            raise ValueError(f"Argument `dtype` is expected to be floating point. Received: "
                             f"{dtype!r}.")
        seed = self._seed_pair()
        if seed is None:
            return random_ops.normal(shape, self.mean, self.stddev, dtype)
        return stateless_random_ops.stateless_normal(shape, seed, self.mean, self.stddev, dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class random_uniform_initializer(_RandomInitializer):  # noqa: N801 - TensorFlow's name
    """≈ `tf.random_uniform_initializer`: values in [minval, maxval) (floats or integers)."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=_dt.float32, **kwargs):
        dtype = _dt.as_dtype(dtype)
        if not (dtype.is_floating or dtype.is_integer):
            raise ValueError(f"Argument `dtype` is expected to be floating point or integer. "
                             f"Received: {dtype!r}.")
        seed = self._seed_pair()
        if seed is None:
            return random_ops.uniform(shape, self.minval, self.maxval, dtype)
        return stateless_random_ops.stateless_uniform(shape, seed, self.minval, self.maxval,
                                                      dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}
