"""`eager.nn.conv2d_transpose` / `conv1d_transpose`, `keras.layers.Conv2DTranspose` /
`Conv1DTranspose` (and `DepthwiseConv2D` / `SeparableConv2D`) against TF 2.21 and Keras 3.15
goldens (tests/fixtures/keras_conv_transpose_goldens.json, recorded by
record_conv_transpose_goldens.py): values, gradients for input and filters, finite differences,
configs, errors, traced calls with an unknown batch."""

import json
from pathlib import Path

import numpy as np
import pytest

import eager as tf
from eager.keras import layers

from layer_goldens import arr, same_config
from conv_transpose_cases import ERROR_CASES, LAYER_CASES, OP_CASES

GOLDENS = json.loads((Path(__file__).parent.parent / "fixtures" /
                      "keras_conv_transpose_goldens.json").read_text())


@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_conv2d_transpose_matches_tf(name):
    xs, ws, out, strides, padding, fmt = OP_CASES[name]
    golden = GOLDENS["op"][name]
    x, w = tf.constant(arr(1, xs)), tf.constant(arr(2, ws))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        y = tf.nn.conv2d_transpose(x, w, out, strides, padding, fmt)
        loss = tf.reduce_sum(y * arr(7, tuple(y.shape)))
    np.testing.assert_allclose(y.numpy(), golden["value"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), golden["dx"], rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), golden["dw"], rtol=1e-5,
                               atol=1e-5)


def test_conv2d_transpose_is_the_gradient_of_conv2d_and_nchw_agrees():
    x, w = arr(1, (2, 3, 3, 4)), arr(2, (3, 3, 5, 4))
    y = tf.nn.conv2d_transpose(x, w, [2, 6, 6, 5], 2, "SAME")
    probe = tf.constant(np.zeros((2, 6, 6, 5), np.float32))
    with tf.GradientTape() as tape:
        tape.watch(probe)
        z = tf.nn.conv2d(probe, w, 2, "SAME")
    np.testing.assert_allclose(tape.gradient(z, probe, output_gradients=x).numpy(), y.numpy(),
                               rtol=1e-6)
    y_nchw = tf.nn.conv2d_transpose(np.transpose(x, (0, 3, 1, 2)), w, [2, 5, 6, 6], 2, "SAME",
                                    data_format="NCHW")
    np.testing.assert_allclose(np.transpose(y_nchw.numpy(), (0, 2, 3, 1)), y.numpy(),
                               rtol=1e-5, atol=1e-6)


def test_conv2d_transpose_gradients_match_finite_differences_float64():
    x = tf.Variable(arr(1, (1, 2, 3, 2)).astype("float64"))
    w = tf.Variable(arr(2, (2, 2, 3, 2)).astype("float64"))
    probe = arr(7, (1, 4, 6, 3)).astype("float64")

    def loss():
        return tf.reduce_sum(tf.nn.conv2d_transpose(x, w, [1, 4, 6, 3], 2, "VALID") * probe)

    with tf.GradientTape() as tape:
        value = loss()
    dx, dw = tape.gradient(value, [x, w])
    for var, grad in ((x, dx), (w, dw)):
        base, numeric = var.numpy(), np.zeros(var.shape)
        for index in np.ndindex(base.shape):
            for sign in (1, -1):
                shifted = base.copy()
                shifted[index] += sign * 1e-6
                var.assign(shifted)
                numeric[index] += sign * float(loss()) / 2e-6
            var.assign(base)
        np.testing.assert_allclose(grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_conv1d_transpose_is_the_2d_op_over_height_one():
    x, w = arr(1, (2, 4, 3)), arr(2, (3, 2, 3))
    y = tf.nn.conv1d_transpose(x, w, [2, 8, 2], 2, "SAME")
    y2 = tf.nn.conv2d_transpose(x[:, None], w[None], [2, 1, 8, 2], [1, 2], "SAME")
    np.testing.assert_allclose(y.numpy(), y2.numpy()[:, 0], rtol=1e-6)


def test_conv2d_transpose_errors_name_the_shapes():
    x, w = arr(1, (1, 3, 3, 4)), arr(2, (2, 2, 5, 4))
    with pytest.raises(tf.errors.InvalidArgumentError, match="input depth 3 does not match"):
        tf.nn.conv2d_transpose(arr(1, (1, 3, 3, 3)), w, [1, 6, 6, 5], 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="output_shape depth 4"):
        tf.nn.conv2d_transpose(x, w, [1, 6, 6, 4], 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="gives spatial size 5"):
        tf.nn.conv2d_transpose(x, w, [1, 9, 9, 5], 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="strides in the batch and depth"):
        tf.nn.conv2d_transpose(x, w, [1, 6, 6, 5], [1, 2, 2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be 4-D"):
        tf.nn.conv2d_transpose(x[0], w, [6, 6, 5], 2)


def _layer(name):
    cls, kwargs, shape = LAYER_CASES[name]
    layer = getattr(layers, cls)(**kwargs)
    x = tf.constant(arr(0, shape))
    layer(x)
    layer.set_weights([arr(100 + i, tuple(w.shape)) for i, w in enumerate(layer.weights)])
    return layer, x


@pytest.mark.parametrize("name", sorted(LAYER_CASES))
def test_layers_match_keras(name):
    golden = GOLDENS["layers"][name]
    layer, x = _layer(name)
    assert [list(w.shape) for w in layer.weights] == golden["weight_shapes"]
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        loss = tf.reduce_sum(y * arr(7, tuple(y.shape)))
    np.testing.assert_allclose(y.numpy(), golden["value"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), golden["dx"], rtol=1e-5,
                               atol=1e-5)
    assert tuple(layer.compute_output_shape(tuple(x.shape))) == tuple(y.shape)
    same_config(layer.get_config(), golden["config"])
    # traced with an unknown batch size: the same numbers
    spec = tf.TensorSpec([None, *x.shape[1:]], "float32")
    traced = tf.function(lambda t: layer(t), input_signature=[spec])
    np.testing.assert_allclose(traced(x).numpy(), y.numpy(), rtol=1e-6, atol=1e-6)
    symbolic = layer(layers.Input(batch_shape=(None, *x.shape[1:])))
    assert tuple(symbolic.shape) == (None, *y.shape[1:])


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_layer_errors_match_keras(name):
    cls, kwargs = ERROR_CASES[name]
    golden = GOLDENS["errors"][name]
    with pytest.raises(ValueError) as e:
        getattr(layers, cls)(**kwargs)
    assert golden["type"] == "ValueError"
    # Keras prints a Python set, whose order varies between its runs
    expected = golden["message"].replace("{'same', 'valid'}", "{'valid', 'same'}")
    assert str(e.value) == expected


def test_dilated_transpose_matches_the_conv2d_gradient():
    # TensorFlow's CPU kernel refuses dilation > 1 here; eager's kernel is the conv2d gradient
    layer = layers.Conv2DTranspose(2, 2, dilation_rate=2, use_bias=False)
    x = arr(0, (1, 3, 3, 2))
    y = layer(x)
    assert tuple(y.shape) == (1, 5, 5, 2)
    probe = tf.constant(np.zeros((1, 5, 5, 2), np.float32))
    with tf.GradientTape() as tape:
        tape.watch(probe)
        z = tf.nn.conv2d(probe, layer.kernel, 1, "VALID", dilations=2)
    np.testing.assert_allclose(tape.gradient(z, probe, output_gradients=x).numpy(), y.numpy(),
                               rtol=1e-6)
