"""`keras.layers.Discretization`: the bucket of each value among sorted bin boundaries (the
index of the first boundary above it), as integers, one-hot or counts; `adapt` picks
`num_bins` boundaries at quantiles of the data."""

from __future__ import annotations

import numpy as np

from ....ops import array_ops as _array
from ....ops import math_ops as _math
from ..layer import Layer
from .adapt_data import adapt_batches
from .encoding import encode_categorical

__all__ = ["Discretization"]

_MODES = ("int", "one_hot", "multi_hot", "count")


def _quantile_boundaries(values, num_bins, epsilon):
    """`num_bins - 1` boundaries at the quantiles of `values`: Keras's approximate summary
    (every (n * epsilon)-th sorted value, each standing for that many values) compressed by
    linear interpolation of its cumulative weights."""
    values = np.sort(np.reshape(values, [-1]).astype(np.float32))   # float32, as Keras sums
    step_size = values.size * epsilon
    start, step = int(step_size), int(max(step_size, 1))
    points = values[start::step]
    weights = np.full(points.shape, float(max(step_size, 1)), np.float32)
    if points.size * (1.0 / num_bins) < 1:
        return points[:-1].astype(np.float32).tolist()
    percents = 1.0 / num_bins + np.arange(0.0, 1.0, 1.0 / num_bins)
    cumulative = weights.cumsum()
    bins = np.interp(percents, cumulative / cumulative[-1], points)
    return bins.astype(np.float32)[:-1].tolist()


class Discretization(Layer):
    """≈ `keras.layers.Discretization(bin_boundaries=None, num_bins=None, epsilon=0.01,
    output_mode="int", sparse=False, dtype=None, name=None)`. "int" output is int32 (as
    Keras 3 on TensorFlow gives); the other modes are floats of `dtype`. `sparse` is refused."""

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int",
                 sparse=False, dtype=None, name=None):
        # The layer's dtype is the float type of its input (and of one-hot/count outputs).
        super().__init__(name=name, dtype=dtype or "float32")
        if sparse:
            raise NotImplementedError("Discretization: `sparse=True` is not supported by "
                                      "eager.keras.")
        if output_mode not in _MODES:
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of "
                             f"{list(_MODES)}. Received: output_mode={output_mode}")
        if num_bins is not None and num_bins < 0:
            raise ValueError("`num_bins` must be greater than or equal to 0. Received: "
                             f"`num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            if len(bin_boundaries) != num_bins - 1:
                raise ValueError("Both `num_bins` and `bin_boundaries` should not be set. "
                                 f"Received: `num_bins={num_bins}` and "
                                 f"`bin_boundaries={bin_boundaries}`")
        self.input_bin_boundaries = bin_boundaries
        self.bin_boundaries = list(bin_boundaries) if bin_boundaries is not None else None
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = sparse

    def adapt(self, data):
        """Sets `bin_boundaries` to `num_bins` quantiles of all of `data`'s values (batches of
        a dataset are concatenated first)."""
        if self.input_bin_boundaries is not None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized "
                             "with `bin_boundaries`, use `num_bins` instead.")
        _, batches, _ = adapt_batches(data)
        values = np.concatenate([np.reshape(b, [-1]) for b in batches])
        self.bin_boundaries = _quantile_boundaries(values, self.num_bins, self.epsilon)

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at "
                             "construction time or call `adapt(dataset)` before you can "
                             "start using the `Discretization` layer.")
        boundaries = np.asarray(self.bin_boundaries, np.float64)
        x = _math.cast(inputs, "float64")
        above = _math.cast(_math.greater_equal(_array.expand_dims(x, -1), boundaries), "int32")
        indices = _math.reduce_sum(above, axis=-1)
        if self.output_mode == "int":
            return indices
        return encode_categorical(indices, len(boundaries) + 1, self.output_mode,
                                  dtype=self.dtype)

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return input_shape
        depth = len(self.bin_boundaries) + 1 if self.bin_boundaries is not None else \
            self.num_bins
        if self.output_mode == "one_hot" and (not input_shape or input_shape[-1] != 1):
            return (*input_shape, depth)
        return (*input_shape[:-1], depth)

    def get_config(self):
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                "epsilon": self.epsilon, "output_mode": self.output_mode,
                "sparse": self.sparse, "name": self.name, "dtype": self.dtype}
