"""BatchNormalization, LayerNormalization and Embedding against Keras 3.15 goldens."""

import warnings

import numpy as np
import pytest

import eager as tf
from eager.keras import layers
from layer_goldens import GOLDENS, arr, numeric_grad, run_golden, same_config, \
    set_golden_weights


def _bn_after_three_steps(layer, step):
    xb = arr(4, (5, 3))
    layer(xb)
    set_golden_weights(layer)
    gamma, beta = layer.get_weights()[:2]
    layer.set_weights([gamma, beta, np.zeros(3, "float32"), np.ones(3, "float32")])
    outs = [step(tf.constant(arr(10 + i, (5, 3)) * (i + 1))).numpy() for i in range(3)]
    return xb, outs


@pytest.mark.parametrize("traced", [False, True])
def test_batch_norm_training_and_moving_statistics_match_keras(traced):
    layer = layers.BatchNormalization()

    def step(x):
        return layer(x, training=True)

    xb, outs = _bn_after_three_steps(layer, tf.function(step) if traced else step)
    for out, golden in zip(outs, GOLDENS["bn_train_out"]):
        np.testing.assert_allclose(out, golden, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(layer.moving_mean.numpy(), GOLDENS["bn_moving"][0], atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.numpy(), GOLDENS["bn_moving"][1],
                               atol=1e-6)
    np.testing.assert_allclose(layer(xb, training=False).numpy(), GOLDENS["bn_infer"],
                               rtol=1e-5, atol=1e-5)


def test_batch_norm_inference_and_frozen_layer_leave_statistics_alone():
    layer = layers.BatchNormalization()
    x = arr(4, (5, 3))
    layer(x)
    before = [w.copy() for w in layer.get_weights()]
    layer(x)
    layer(x, training=False)
    layer.trainable = False
    frozen = layer(x, training=True).numpy()
    for a, b in zip(before, layer.get_weights()):
        np.testing.assert_array_equal(a, b)
    # frozen: inference mode (moving statistics 0/1): x / sqrt(1 + eps)
    np.testing.assert_allclose(frozen, x / np.sqrt(1 + 1e-3), rtol=1e-6)
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 4


def test_batch_norm_weights_and_axis1():
    layer = layers.BatchNormalization(axis=1, momentum=0.9)
    x = arr(5, (2, 3, 2, 2))
    y = run_golden(layer, x, training=True)
    assert [w.name for w in layer.weights] == ["gamma", "beta", "moving_mean",
                                               "moving_variance"]
    assert [w.name for w in layer.trainable_weights] == ["gamma", "beta"]
    np.testing.assert_allclose(y.numpy(), GOLDENS["bn_axis1_train"], rtol=1e-4, atol=1e-5)
    for w, golden in zip(layer.get_weights()[2:], GOLDENS["bn_axis1_moving"]):
        np.testing.assert_allclose(w, golden, atol=1e-6)


def test_batch_norm_gradient_matches_finite_differences():
    layer = layers.BatchNormalization()
    x = arr(4, (5, 3))
    layer(x)
    set_golden_weights(layer)
    weight = tf.constant(arr(8, (5, 3)))
    saved = layer.get_weights()

    def loss():
        layer.set_weights([layer.gamma.numpy(), layer.beta.numpy(), *saved[2:]])
        return tf.reduce_sum(tf.square(layer(x, training=True)) * weight)

    with tf.GradientTape() as tape:
        y = loss()
    grads = tape.gradient(y, layer.trainable_weights)
    for g, w in zip(grads, layer.trainable_weights):
        np.testing.assert_allclose(g.numpy(), numeric_grad(loss, w), rtol=2e-2, atol=2e-3)


def test_layer_normalization_matches_keras():
    x = arr(6, (2, 3, 4))
    np.testing.assert_allclose(run_golden(layers.LayerNormalization(), x).numpy(),
                               GOLDENS["ln"], rtol=1e-5, atol=1e-5)
    layer = layers.LayerNormalization(axis=[1, 2], epsilon=1e-5)
    np.testing.assert_allclose(run_golden(layer, x).numpy(), GOLDENS["ln_axes12"], rtol=1e-5,
                               atol=1e-5)
    assert [tuple(w.shape) for w in layer.weights] == [(3, 4), (3, 4)]
    with pytest.warns(UserWarning, match="rms_scaling=True"):
        rms = layers.LayerNormalization(rms_scaling=True)
    np.testing.assert_allclose(run_golden(rms, x).numpy(), GOLDENS["ln_rms"], rtol=1e-5,
                               atol=1e-5)
    assert [w.path.split("/")[-1] for w in rms.weights] == \
        [p.split("/")[-1] for p in GOLDENS["ln_rms_weights"]]


def test_layer_normalization_gradient_and_trace():
    layer = layers.LayerNormalization()
    x = arr(6, (2, 3, 4))
    layer(x)
    set_golden_weights(layer)
    weight = tf.constant(arr(8, (2, 3, 4)))

    def loss():
        return tf.reduce_sum(tf.square(layer(x)) * weight)

    with tf.GradientTape() as tape:
        y = loss()
    grads = tape.gradient(y, layer.trainable_weights)
    for g, w in zip(grads, layer.trainable_weights):
        np.testing.assert_allclose(g.numpy(), numeric_grad(loss, w), rtol=2e-2, atol=2e-3)
    np.testing.assert_allclose(tf.function(lambda v: layer(v))(tf.constant(x)).numpy(),
                               layer(x).numpy(), rtol=1e-6, atol=1e-6)


def test_embedding_lookup_mask_and_gradient():
    layer = layers.Embedding(5, 3, mask_zero=True)
    ids = np.array([[0, 1, 4], [2, 2, 0]])
    y = layer(ids)
    table = layer.embeddings.numpy()
    np.testing.assert_array_equal(y.numpy(), table[ids])
    np.testing.assert_array_equal(layer.compute_mask(tf.constant(ids)).numpy(), ids != 0)
    assert layers.Embedding(5, 3).compute_mask(tf.constant(ids)) is None
    with tf.GradientTape() as tape:
        s = tf.reduce_sum(layer(ids))
    grad = tf.convert_to_tensor(tape.gradient(s, layer.embeddings)).numpy()
    np.testing.assert_array_equal(grad, np.bincount(ids.ravel(), minlength=5)[:, None] *
                                  np.ones((1, 3)))
    assert [w.name for w in layer.weights] == ["embeddings"]
    # float ids are cast, as Keras does
    np.testing.assert_array_equal(layer(ids.astype("float32")).numpy(), table[ids])


CONFIGS = {
    "batch_normalization": lambda: layers.BatchNormalization(),
    "layer_normalization": lambda: layers.LayerNormalization(),
    "embedding": lambda: layers.Embedding(10, 4),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_get_config_matches_keras(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = CONFIGS[name]()
    same_config(layer.get_config(), GOLDENS["configs"][name])
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()


def test_bad_arguments():
    kind, message = GOLDENS["errors"]["embedding_dim"]
    with pytest.raises(ValueError) as info:
        layers.Embedding(0, 3)
    assert str(info.value) == message
    with pytest.raises(ValueError, match="Axis 3 is out of bounds"):
        layers.BatchNormalization(axis=3)(np.ones((2, 3), "float32"))
    with pytest.raises(NotImplementedError, match="renorm"):
        layers.BatchNormalization(renorm=True)
