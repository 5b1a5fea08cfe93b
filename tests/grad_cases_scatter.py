"""Gradient cases for tensor_scatter_nd_update/max/min (see test_gradients.py): repeated
indices, slices (indices shorter than the tensor's rank), and max/min away from ties."""

import numpy as np

import eager as tf
from gradcase import GradCase, rand

C = GradCase
ROWS = np.array([[2], [0]])

CASES = {
    "TensorScatterUpdate": [
        C(lambda t, u: tf.tensor_scatter_nd_update(t, ROWS, u), lambda: [rand(3, 2), rand(2, 2)]),
        C(lambda t, u: tf.tensor_scatter_nd_update(t, [[0, 1], [1, 0]], u),
          lambda: [rand(2, 2), rand(2)]),
    ],
    "TensorScatterMax": [
        C(lambda t, u: tf.tensor_scatter_nd_max(t, ROWS, u), lambda: [rand(3, 2), rand(2, 2)]),
    ],
    "TensorScatterMin": [
        C(lambda t, u: tf.tensor_scatter_nd_min(t, [[1], [2], [1]], u),
          lambda: [rand(4), rand(3, seed=3)]),
    ],
}
