"""Gradient cases for `eager.py_function`: the gradient flows through the eager ops the Python
function ran (its private tape), with respect to the op's inputs."""

import eager as tf
from gradcase import GradCase, rand


def _two_outputs(x, y):
    a, b = tf.py_function(lambda p, q: (tf.sin(p) * q, p * p - tf.exp(q)), [x, y],
                          [tf.float64, tf.float64])
    return a * 2.0 + b


def _with_an_integer_input(x):
    return tf.py_function(lambda p, n: tf.tanh(p) * tf.cast(n, tf.float64), [x, tf.constant(3)],
                          tf.float64)


CASES = {
    "EagerPyFunc": [
        GradCase(lambda x: tf.py_function(lambda a: tf.sin(a) * a, [x], tf.float64),
                 lambda: [rand(3, 2)]),
        GradCase(_two_outputs, lambda: [rand(4), rand(4, seed=1)]),
        GradCase(_with_an_integer_input, lambda: [rand(2, 3)]),
    ],
}
