"""eager.keras's core layers against Keras 3.15 (TF 2.21 backend) goldens recorded below:
forward values, configs, error wording, gradients, traced vs eager."""

import numpy as np
import pytest

import eager as tf
from eager import keras
from eager.keras import layers

X = (np.arange(12, dtype="float32").reshape(2, 6) - 5.5) / 3
Y = X[:, ::-1].copy()
DTYPE = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
         "registered_name": None}

# Keras 3.15 outputs for X (recorded with /tmp/tfvenv).
GOLDEN = {
    "elu": [[-0.5880841612815857, -0.5438088774681091, -0.4820176959037781, -0.3957812488079071,
             -0.27542853355407715, -0.1074628233909607], X[1].tolist()],
    "leaky": [[-0.550000011920929, -0.45000001788139343, -0.3499999940395355, -0.25,
               -0.15000000596046448, -0.05000000447034836], X[1].tolist()],
    "relu": [[-0.23333334922790527, -0.20000000298023224, -0.1666666716337204,
              -0.13333332538604736, -0.10000000149011612, -0.06666667014360428],
             [-0.03333333134651184, 0.0, 0.8333333134651184, 1.0, 1.0, 1.0]],
    "softmax": [[0.061920322477817535, 0.08641677349805832, 0.12060433626174927,
                 0.16831690073013306, 0.2349051535129547, 0.3278365433216095]] * 2,
    "prelu": [[-0.4583333432674408, -0.375, -0.2916666567325592, -0.2083333283662796, -0.125,
               -0.0416666679084301], X[1].tolist()],
    "sm_mask": [[0.09607639163732529, 0.13408540189266205, 0.0, 0.26116272807121277, 0.0,
                 0.5086755156517029],
                [0.0, 0.0921209305524826, 0.12856513261795044, 0.17942705750465393,
                 0.25041064620018005, 0.3494762182235718]],
    "dot_norm": [[0.5104894638061523], [0.5104894638061523]],
    "dot3": [[[3.305555582046509, 4.80555534362793], [0.8055555820465088, 1.3055555820465088]],
             [[1.3055555820465088, 0.805555522441864], [4.80555534362793, 3.305555582046509]]],
}


@pytest.mark.parametrize("name, make", [
    ("elu", lambda: layers.ELU(0.7)),
    ("leaky", lambda: layers.LeakyReLU()),
    ("relu", lambda: layers.ReLU(max_value=1.0, threshold=0.5, negative_slope=0.1)),
    ("softmax", lambda: layers.Softmax()),
    ("prelu", lambda: layers.PReLU(alpha_initializer=keras.initializers.Constant(0.25))),
])
def test_activation_layers_match_keras(name, make):
    np.testing.assert_allclose(make()(X).numpy(), GOLDEN[name], rtol=1e-6, atol=1e-7)


def test_softmax_mask_dot_and_average_match_keras():
    mask = np.array([[1, 1, 0, 1, 0, 1], [0, 1, 1, 1, 1, 1]], bool)
    np.testing.assert_allclose(layers.Softmax()(X, mask=mask).numpy(), GOLDEN["sm_mask"],
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(layers.Dot(axes=1, normalize=True)([X, Y]).numpy(),
                               GOLDEN["dot_norm"], rtol=1e-6)
    np.testing.assert_allclose(
        layers.Dot(axes=(2, 1))([X.reshape(2, 2, 3), Y.reshape(2, 3, 2)]).numpy(),
        GOLDEN["dot3"], rtol=1e-6)
    np.testing.assert_allclose(layers.Average()([X, Y]).numpy(), [[-1.0] * 6, [1.0] * 6])
    np.testing.assert_allclose(layers.add([X, Y]).numpy(), X + Y)
    np.testing.assert_allclose(layers.subtract([X, Y]).numpy(), X - Y)
    np.testing.assert_allclose(layers.multiply([X, Y]).numpy(), X * Y)
    np.testing.assert_allclose(layers.maximum([X, Y]).numpy(), np.maximum(X, Y))
    np.testing.assert_allclose(layers.minimum([X, Y]).numpy(), np.minimum(X, Y))
    np.testing.assert_allclose(layers.concatenate([X, Y], axis=0).numpy(),
                               np.concatenate([X, Y], 0))


def test_dense_any_rank_contracts_last_axis_with_set_weights():
    k = np.arange(18, dtype="float32").reshape(6, 3) / 10
    b = np.array([0.1, -0.2, 0.3], "float32")
    d = layers.Dense(3, activation="relu")
    d.build((None, 6))
    d.set_weights([k, b])
    np.testing.assert_allclose(d(X).numpy(), np.maximum(X @ k + b, 0), rtol=1e-6)
    x3 = np.stack([X, Y])
    np.testing.assert_allclose(d(x3).numpy(), np.maximum(x3 @ k + b, 0), rtol=1e-6)
    assert [w.path for w in d.weights] == [f"{d.name}/kernel", f"{d.name}/bias"]


def test_reshaping_layers():
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    np.testing.assert_array_equal(layers.Flatten()(x).numpy(), x.reshape(2, 12))
    np.testing.assert_array_equal(layers.Reshape((-1, 2))(x).numpy(), x.reshape(2, 6, 2))
    np.testing.assert_array_equal(layers.Permute((2, 1))(x).numpy(), x.transpose(0, 2, 1))
    np.testing.assert_array_equal(layers.RepeatVector(3)(X).numpy(),
                                  np.repeat(X[:, None], 3, axis=1))
    # Symbolic shapes as Keras 3 gives them.
    assert layers.Flatten()(keras.Input((3, 4))).shape == (None, 12)
    assert layers.Reshape((-1, 2))(keras.Input((3, 4))).shape == (None, 6, 2)
    assert layers.Dot(axes=(2, 1))([keras.Input((2, 3)), keras.Input((3, 2))]).shape == \
        (None, 2, 2)


def test_errors_use_keras_wording():
    with pytest.raises(ValueError, match=r"Input 0 with name 'None' of layer 'dense\w*' is "
                       r"incompatible with the layer: expected min_ndim=2, found ndim=1. Full "
                       r"shape received: \(3,\)"):
        layers.Dense(3)(np.ones((3,), "float32"))
    d = layers.Dense(3)
    d(np.ones((2, 4), "float32"))
    with pytest.raises(ValueError, match=r"expected axis -1 of input shape to have value 4, but "
                       r"received input with shape \(2, 5\)"):
        d(np.ones((2, 5), "float32"))
    with pytest.raises(ValueError, match=r"The total size of the tensor must be unchanged. "
                       r"Received: input_shape=\(6,\), target_shape=\(4, 4\)"):
        layers.Reshape((4, 4))(np.ones((2, 6), "float32"))
    with pytest.raises(ValueError, match=r"Invalid value received for argument `rate`. Expected "
                       r"a float value between 0 and 1. Received: rate=1.5"):
        layers.Dropout(1.5)
    with pytest.raises(ValueError, match=r"You must pass a `shape` argument."):
        keras.Input()


def test_configs_equal_keras():
    d = layers.Dense(3, activation="relu", name="d")
    config = d.get_config()
    # Keras 3.15's GlorotUniform config also lists input_axes/output_axes (None); the
    # initializers module (not this one) leaves them out, so only the class is compared here.
    assert config.pop("kernel_initializer")["class_name"] == "GlorotUniform"
    assert config == {
        "name": "d", "trainable": True, "dtype": DTYPE, "units": 3, "activation": "relu",
        "use_bias": True,
        "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros",
                             "config": {}, "registered_name": None},
        "kernel_regularizer": None, "bias_regularizer": None, "kernel_constraint": None,
        "bias_constraint": None, "quantization_config": None}
    base = {"trainable": True, "dtype": DTYPE}
    cases = [
        (layers.Activation("relu", name="a"), {"activation": "relu"}),
        (layers.Identity(name="a"), {}),
        (layers.Flatten(name="a"), {"data_format": "channels_last"}),
        (layers.Reshape((-1, 2), name="a"), {"target_shape": (-1, 2)}),
        (layers.Permute((2, 1), name="a"), {"dims": (2, 1)}),
        (layers.RepeatVector(3, name="a"), {"n": 3}),
        (layers.Dropout(0.5, name="a"), {"rate": 0.5, "seed": None, "noise_shape": None}),
        (layers.ReLU(name="a"), {"max_value": None, "negative_slope": 0.0, "threshold": 0.0}),
        (layers.LeakyReLU(name="a"), {"negative_slope": 0.3}),
        (layers.ELU(name="a"), {"alpha": 1.0}),
        (layers.PReLU(name="a"), {
            "alpha_initializer": {"module": "keras.initializers", "class_name": "Zeros",
                                  "config": {}, "registered_name": None},
            "alpha_regularizer": None, "alpha_constraint": None, "shared_axes": None}),
        (layers.Softmax(name="a"), {"axis": -1}),
        (layers.Concatenate(name="a"), {"axis": -1}),
        (layers.Add(name="a"), {}), (layers.Subtract(name="a"), {}),
        (layers.Multiply(name="a"), {}), (layers.Average(name="a"), {}),
        (layers.Maximum(name="a"), {}), (layers.Minimum(name="a"), {}),
        (layers.Dot(axes=1, name="a"), {"axes": 1, "normalize": False}),
    ]
    for layer, extra in cases:
        assert layer.get_config() == {"name": "a", **base, **extra}, type(layer).__name__
        clone = type(layer).from_config(layer.get_config())
        assert clone.get_config() == layer.get_config()
    assert list(layers.ELU(name="e").get_config()) == ["name", "alpha", "trainable", "dtype"]
    assert layers.InputLayer(shape=(3,), name="i").get_config() == {
        "batch_shape": (None, 3), "dtype": "float32", "sparse": False, "ragged": False,
        "name": "i", "optional": False}


def test_dropout_only_in_training_and_fresh_masks_when_traced():
    drop = layers.Dropout(0.5)
    x = np.ones((64, 64), "float32")
    np.testing.assert_array_equal(drop(x).numpy(), x)
    out = drop(x, training=True).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0} and 0.3 < (out == 0).mean() < 0.7

    @tf.function
    def step(v):
        return drop(v, training=True)

    a, b = step(x).numpy(), step(x).numpy()
    assert not np.array_equal(a, b)


def test_gradients_match_finite_differences():
    keras.utils.set_random_seed(1)  # fixed weights: no kink of tanh/PReLU within eps by chance
    model = keras.Sequential([keras.Input((6,)), layers.Dense(4, activation="tanh"),
                              layers.PReLU(alpha_initializer=keras.initializers.Constant(0.3)),
                              layers.Dense(2), layers.Softmax()])
    x = tf.constant(X)

    def loss():
        return tf.reduce_sum(model(x) * tf.constant([[1.0, -2.0]]))

    with tf.GradientTape() as tape:
        value = loss()
    grads = tape.gradient(value, model.trainable_weights)
    eps = 1e-3
    for w, g in zip(model.trainable_weights, grads):
        base = w.numpy().astype("float64")
        flat = base.reshape(-1)
        numeric = np.zeros_like(flat)
        for i in range(flat.size):
            for sign in (1, -1):
                pert = flat.copy()
                pert[i] += sign * eps
                w.assign(pert.reshape(base.shape).astype("float32"))
                numeric[i] += sign * float(loss().numpy()) / (2 * eps)
        w.assign(base.astype("float32"))
        np.testing.assert_allclose(g.numpy().reshape(-1), numeric, atol=2e-3, rtol=2e-2)


def test_lambda_layer():
    lam = layers.Lambda(lambda t, k: t * k, arguments={"k": 3.0})
    np.testing.assert_allclose(lam(X).numpy(), X * 3)
    assert lam(keras.Input((5,))).shape == (None, 5)
    shaped = layers.Lambda(lambda t: t[:, :2], output_shape=(2,))
    assert shaped(keras.Input((5,))).shape == (None, 2)
