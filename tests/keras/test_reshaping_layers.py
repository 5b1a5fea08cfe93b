"""ZeroPadding1D/2D, Cropping1D/2D, UpSampling1D/2D against Keras 3.15 goldens
(tests/fixtures/keras_reshaping_preprocessing_goldens.json): outputs, gradients, configs,
errors, traced calls, unknown batch sizes."""

import numpy as np
import pytest

import eager as tf
from eager.keras import layers

from layer_goldens import arr
from reshaping_preprocessing_goldens import check_case, check_error, error_names_of, names_of

RESHAPING = {"ZeroPadding1D", "ZeroPadding2D", "Cropping1D", "Cropping2D", "UpSampling1D",
             "UpSampling2D"}


@pytest.mark.parametrize("name", names_of(RESHAPING))
def test_matches_keras(name):
    check_case(name)


@pytest.mark.parametrize("name", error_names_of(RESHAPING))
def test_errors_match_keras(name):
    check_error(name)


@pytest.mark.parametrize("layer, shape, expected", [
    (lambda: layers.ZeroPadding1D((1, 2)), (None, 3, 4), (None, 6, 4)),
    (lambda: layers.ZeroPadding2D(((1, 0), (2, 1))), (None, 3, None, 2), (None, 4, None, 2)),
    (lambda: layers.Cropping1D((1, 2)), (None, 6, 3), (None, 3, 3)),
    (lambda: layers.Cropping2D(1, data_format="channels_first"), (None, 2, 4, 5),
     (None, 2, 2, 3)),
    (lambda: layers.UpSampling1D(3), (None, None, 2), (None, None, 2)),
    (lambda: layers.UpSampling2D((2, 3)), (None, 3, 2, 2), (None, 6, 6, 2)),
])
def test_functional_output_shapes(layer, shape, expected):
    out = layer()(layers.Input(batch_shape=shape))
    assert tuple(out.shape) == expected


def test_unknown_batch_traced():
    up = layers.UpSampling2D(2, interpolation="bilinear")
    nearest = layers.UpSampling1D(2)
    crop = layers.Cropping2D(((1, 0), (0, 1)))
    fn = tf.function(lambda x: (up(x), nearest(x[:, 0]), crop(x)),
                     input_signature=[tf.TensorSpec([None, 3, 4, 2], "float32")])
    x = arr(0, (5, 3, 4, 2))
    a, b, c = fn(x)
    np.testing.assert_allclose(a.numpy(), up(x).numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), np.repeat(x[:, 0], 2, axis=1))
    np.testing.assert_allclose(c.numpy(), x[:, 1:, :-1])


def test_bilinear_gradient_matches_finite_differences():
    layer = layers.UpSampling2D((2, 3), interpolation="bilinear", dtype="float64")
    x = tf.Variable(arr(3, (1, 2, 3, 1)).astype("float64"))
    w = arr(8, (1, 4, 9, 1)).astype("float64")
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) * w)
    grad = tape.gradient(loss, x).numpy()
    base, eps, numeric = x.numpy(), 1e-6, np.zeros_like(x.numpy())
    for index in np.ndindex(base.shape):
        for sign in (1, -1):
            value = base.copy()
            value[index] += sign * eps
            numeric[index] += sign * float(np.sum(layer(value).numpy() * w)) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
