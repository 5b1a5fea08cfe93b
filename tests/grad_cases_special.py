"""Gradient cases for the special functions: tan, reciprocal, erf, erfc, lgamma, digamma,
polygamma, zeta (see test_gradients.py). The orders of polygamma and zeta have no gradient,
so they are fixed inside the function."""

import numpy as np

import eager as tf
from gradcase import GradCase, crand, positive, rand

C = GradCase

CASES = {
    "Tan": [C(tf.math.tan, lambda: [rand(6, low=-1.2, high=1.2)]),
            C(tf.math.tan, lambda: [crand(3) * 0.5])],
    "Reciprocal": [C(tf.math.reciprocal, lambda: [positive(2, 3)]),
                   C(tf.math.reciprocal, lambda: [crand(3) + 3])],
    "Erf": [C(tf.math.erf, lambda: [rand(7)])],
    "Erfc": [C(tf.math.erfc, lambda: [rand(7)])],
    "Lgamma": [C(tf.math.lgamma, lambda: [positive(5) + np.array([0, 1, 3, -0.3, 7])])],
    "Digamma": [C(tf.math.digamma, lambda: [positive(5)]),
                C(tf.math.digamma, lambda: [np.array([-0.5, -1.3, -2.7, 4.5])])],
    "Polygamma": [C(lambda x: tf.math.polygamma(tf.constant([1.0, 2.0, 3.0], tf.float64), x),
                    lambda: [positive(3)])],
    "Zeta": [C(lambda q: tf.math.zeta(tf.constant([2.0, 3.5, 5.0], tf.float64), q),
               lambda: [positive(3)])],
}
