"""Gradient cases for the neural-network ops, their backward helper ops, and sorting (see
test_gradients.py). Inputs keep away from kinks (relu at 0, tied maxima) so that central
differences are exact up to rounding."""

import numpy as np

import eager as tf
from eager.core import dispatch
from eager.ops import nn_grad
from gradcase import GradCase, away_from_zero, rand

C = GradCase


def _labels(*shape, classes, seed=0):
    return np.random.default_rng(seed).integers(0, classes, shape).astype(np.int32)


def _dist(*shape, axis=-1, seed=0):
    """Label distributions along `axis` (TensorFlow's gradient w.r.t. the logits, softmax -
    labels, assumes the labels sum to 1)."""
    z = rand(*shape, low=0.1, high=1, seed=seed)
    return z / z.sum(axis=axis, keepdims=True)


def _distinct(*shape, seed=0):
    """Values with no two closer than 0.05 (no ties for sort, top_k and max pooling)."""
    n = int(np.prod(shape))
    values = np.random.default_rng(seed).permutation(n) * 0.1 - n * 0.05
    return values.reshape(shape) + rand(*shape, seed=seed) * 0.02


# -- conv2d ---------------------------------------------------------------------------------------

def _conv(strides=1, padding="VALID", data_format="NHWC", dilations=None):
    return lambda x, w: tf.nn.conv2d(x, w, strides, padding, data_format, dilations)


def _conv_attrs(strides=(1, 1), dilations=(1, 1), padding="VALID", explicit=(),
                data_format="NHWC"):
    return {"strides": strides, "dilations": dilations, "padding": padding,
            "explicit_paddings": explicit, "data_format": data_format}


def _input_grad(input_shape, **attrs):
    return lambda w, dy: nn_grad._conv_input_grad(w, dy, input_shape, _conv_attrs(**attrs))


def _filter_grad(filter_shape, **attrs):
    return lambda x, dy: nn_grad._conv_filter_grad(x, dy, filter_shape, _conv_attrs(**attrs))


_EXPLICIT = [[0, 0], [1, 2], [0, 1], [0, 0]]

CONV_CASES = [
    C(_conv(), lambda: [rand(1, 4, 5, 2), rand(2, 3, 2, 3, seed=1)]),
    C(_conv(2, "SAME"), lambda: [rand(2, 5, 4, 2), rand(3, 2, 2, 2, seed=1)]),
    C(_conv(2, "VALID"), lambda: [rand(1, 5, 5, 1), rand(2, 2, 1, 2, seed=1)]),  # unused edge
    C(_conv(1, "SAME", dilations=2), lambda: [rand(1, 6, 5, 1), rand(2, 2, 1, 2, seed=1)]),
    C(_conv([2, 1], _EXPLICIT), lambda: [rand(1, 5, 5, 2), rand(3, 3, 2, 2, seed=1)]),
    C(_conv(2, "VALID", "NCHW"), lambda: [rand(1, 2, 5, 4), rand(2, 2, 2, 3, seed=1)]),
    C(_conv(1, [[0, 0], [0, 0], [1, 0], [0, 1]], "NCHW", [1, 2]),
      lambda: [rand(2, 1, 4, 5), rand(2, 2, 1, 2, seed=1)]),
    C(_conv(1, "SAME"), lambda: [rand(1, 3, 3, 4), rand(2, 2, 2, 4, seed=1)]),  # 2 groups
    C(_conv(1, "VALID"), lambda: [rand(2, 1, 3, 4, 1), rand(2, 2, 1, 2, seed=1)]),  # rank 5
]

# -- max pooling ---------------------------------------------------------------------------------

_POOL_ATTRS = {"ksize": (2, 2), "strides": (1, 2), "padding": "SAME", "explicit_paddings": (),
               "data_format": "NHWC"}


def _pool(ksize, strides, padding, data_format="NHWC"):
    return lambda x: tf.nn.max_pool2d(x, ksize, strides, padding, data_format)


def _pool_helper(op):
    """MaxPoolGrad / MaxPoolGradGrad of (x, max_pool(x), g)."""
    y = _pool(2, [1, 2], "SAME")
    return lambda x, g: nn_grad._pool_call(op, x, y(x), g, _POOL_ATTRS)


def _avg_pool_grad(g, at_run_time=False):
    """AvgPoolGrad for a (1, 5, 4, 2) input pooled 3x3, strides 2, SAME: g is (1, 3, 2, 2). With
    `at_run_time`, the input's shape is an input of the op (a traced function's unknown sizes)."""
    shape = (1, 5, 4, 2)
    inputs = (tf.convert_to_tensor(g),) + ((tf.constant(shape),) if at_run_time else ())
    return dispatch.execute(
        nn_grad.AVG_POOL_GRAD, inputs,
        {"input_shape": None if at_run_time else shape, "ksize": (3, 3), "strides": (2, 2),
         "padding": "SAME", "explicit_paddings": (), "data_format": "NHWC"})


def _input_grad_at_run_time(input_shape, **attrs):
    """Conv2DBackpropInput with the input's shape an input of the op, as a traced function with
    unknown image sizes makes it."""
    return lambda w, dy: dispatch.execute(
        nn_grad.CONV2D_INPUT_GRAD, (tf.convert_to_tensor(w), tf.convert_to_tensor(dy),
                                    tf.constant(input_shape)),
        {**_conv_attrs(**attrs), "input_shape": None})


CASES = {
    "Relu": [C(tf.nn.relu, lambda: [away_from_zero(3, 4)])],
    "ReluGrad": [C(nn_grad.relu_grad, lambda: [rand(3, 4), away_from_zero(3, 4, seed=2)])],
    "Gelu": [C(tf.nn.gelu, lambda: [rand(3, 4) * 1.5]),
             C(lambda x: tf.nn.gelu(x, approximate=True), lambda: [rand(3, 4) * 1.5])],
    "GeluGrad": [C(lambda dy, x: nn_grad._gelu_grad(dy, x, False),
                   lambda: [rand(2, 5), rand(2, 5, seed=3) * 1.5]),
                 C(lambda dy, x: nn_grad._gelu_grad(dy, x, True),
                   lambda: [rand(2, 5), rand(2, 5, seed=3) * 1.5])],
    "Softmax": [C(tf.nn.softmax, lambda: [rand(3, 4)]),
                C(lambda x: tf.nn.softmax(x, axis=0), lambda: [rand(3, 4)]),
                C(lambda x: tf.nn.softmax(x, axis=1), lambda: [rand(2, 3, 2)])],
    "LogSoftmax": [C(tf.nn.log_softmax, lambda: [rand(3, 4)]),
                   C(lambda x: tf.nn.log_softmax(x, axis=0), lambda: [rand(2, 3, 2)])],
    "SigmoidCrossEntropyWithLogits": [
        C(lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
          lambda: [rand(3, 4, low=0, high=1), rand(3, 4, seed=1) * 3]),
        C(lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
          lambda: [np.array([0.3, 0.0, 1.0]), np.array([0.0, -1.5, 2.0])])],
    "SoftmaxCrossEntropyWithLogits": [
        C(lambda z, x: tf.nn.softmax_cross_entropy_with_logits(z, x),
          lambda: [_dist(3, 4), rand(3, 4, seed=1)]),
        C(lambda z, x: tf.nn.softmax_cross_entropy_with_logits(z, x, axis=0),
          lambda: [_dist(3, 2, axis=0), rand(3, 2, seed=1)]),
        C(lambda z, x: tf.nn.softmax_cross_entropy_with_logits(z, x),  # labels broadcast
          lambda: [_dist(4), rand(2, 4, seed=1)]),
        C(lambda z, x: tf.nn.softmax_cross_entropy_with_logits(z, x),
          lambda: [_dist(5), rand(5, seed=1)])],
    "SparseSoftmaxCrossEntropyWithLogits": [
        C(lambda z, x: tf.nn.sparse_softmax_cross_entropy_with_logits(z, x),
          lambda: [_labels(3, classes=5), rand(3, 5)]),
        C(lambda z, x: tf.nn.sparse_softmax_cross_entropy_with_logits(z, x),
          lambda: [_labels(2, 3, classes=4).astype(np.int64), rand(2, 3, 4)])],
    "Conv2D": CONV_CASES,
    "Conv2DBackpropInput": [
        C(_input_grad((1, 4, 5, 2)), lambda: [rand(2, 3, 2, 3), rand(1, 3, 3, 3, seed=1)]),
        C(_input_grad((2, 5, 4, 2), strides=(2, 2), padding="SAME"),
          lambda: [rand(3, 2, 2, 2), rand(2, 3, 2, 2, seed=1)]),
        C(_input_grad((1, 2, 4, 5), dilations=(1, 2), padding="EXPLICIT",
                      explicit=((1, 0), (0, 1)), data_format="NCHW"),
          lambda: [rand(2, 2, 1, 2), rand(1, 2, 4, 4, seed=1)]),
        C(_input_grad((1, 3, 3, 4), padding="SAME"),  # 2 groups
          lambda: [rand(2, 2, 2, 4), rand(1, 3, 3, 4, seed=1)]),
        C(_input_grad_at_run_time((2, 5, 4, 2), strides=(2, 2), padding="SAME"),
          lambda: [rand(3, 2, 2, 2), rand(2, 3, 2, 2, seed=1)])],
    "Conv2DBackpropFilter": [
        C(_filter_grad((2, 3, 2, 3)), lambda: [rand(1, 4, 5, 2), rand(1, 3, 3, 3, seed=1)]),
        C(_filter_grad((3, 2, 2, 2), strides=(2, 2), padding="SAME"),
          lambda: [rand(2, 5, 4, 2), rand(2, 3, 2, 2, seed=1)]),
        C(_filter_grad((2, 2, 1, 2), dilations=(1, 2), padding="EXPLICIT",
                       explicit=((1, 0), (0, 1)), data_format="NCHW"),
          lambda: [rand(1, 1, 4, 5), rand(1, 2, 4, 4, seed=1)]),
        C(_filter_grad((2, 2, 2, 4), padding="SAME"),  # 2 groups
          lambda: [rand(1, 3, 3, 4), rand(1, 3, 3, 4, seed=1)])],
    "MaxPool": [C(_pool(2, 2, "VALID"), lambda: [_distinct(1, 4, 4, 2)]),
                C(_pool(3, 1, "SAME"), lambda: [_distinct(1, 4, 5, 1)]),  # overlapping windows
                C(_pool(2, 1, "VALID", "NCHW"), lambda: [_distinct(1, 2, 4, 4)]),
                C(_pool(2, 2, [[0, 0], [1, 1], [0, 1], [0, 0]]), lambda: [_distinct(2, 3, 3, 1)]),
                C(_pool([3, 2], [2, 1], "VALID"), lambda: [_distinct(1, 6, 3, 2)])],
    "MaxPoolGrad": [C(_pool_helper(nn_grad.MAX_POOL_GRAD),
                      lambda: [_distinct(1, 3, 5, 2), rand(1, 3, 3, 2)])],
    "MaxPoolGradGrad": [C(_pool_helper(nn_grad.MAX_POOL_GRAD_GRAD),
                          lambda: [_distinct(1, 3, 5, 2), rand(1, 3, 5, 2)])],
    "AvgPool": [C(lambda x: tf.nn.avg_pool2d(x, 2, 2, "VALID"), lambda: [rand(1, 4, 4, 2)]),
                C(lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME"), lambda: [rand(2, 5, 4, 1)]),
                C(lambda x: tf.nn.avg_pool2d(x, [2, 3], 1, "SAME", "NCHW"),
                  lambda: [rand(1, 2, 3, 4)])],
    "AvgPoolGrad": [C(lambda g: _avg_pool_grad(g), lambda: [rand(1, 3, 2, 2)]),
                    C(lambda g: _avg_pool_grad(g, at_run_time=True), lambda: [rand(1, 3, 2, 2)])],
    "Sort": [C(tf.sort, lambda: [_distinct(2, 5)]),
             C(lambda x: tf.sort(x, axis=0, direction="DESCENDING"), lambda: [_distinct(4, 3)]),
             C(lambda x: tf.sort(x, axis=1), lambda: [_distinct(2, 3, 2)]),
             C(tf.sort, lambda: [_distinct(6)])],
    "TopKV2": [C(lambda x: tf.math.top_k(x, k=3).values, lambda: [_distinct(2, 6)]),
               C(lambda x: tf.math.top_k(x, k=5).values, lambda: [_distinct(5)]),
               C(lambda x: tf.math.top_k(x, k=2).values, lambda: [_distinct(2, 2, 4)])],
}
