"""RNN completeness against Keras 3.15: cell dropout (one mask per sequence, training only),
Bidirectional, TimeDistributed, stacked cells. Goldens in
tests/fixtures/keras_rnn_wrappers_goldens.json (weights from layer_goldens.set_golden_weights)."""

import numpy as np
import pytest

import eager as tf
from eager.keras import layers

X6 = np.random.RandomState(0).uniform(0.5, 1.5, (4, 6, 5)).astype("float32")


def _identity_simple_rnn(**kwargs):
    layer = layers.SimpleRNN(5, activation=None, use_bias=False, return_sequences=True,
                             **kwargs)
    layer(X6)
    layer.set_weights([np.eye(5, dtype="float32"), np.eye(5, dtype="float32")])
    return layer


def test_input_dropout_is_one_mask_per_sequence_in_training_only():
    layer = _identity_simple_rnn(dropout=0.5, recurrent_initializer="zeros")
    layer.set_weights([np.eye(5, dtype="float32"), np.zeros((5, 5), "float32")])
    np.testing.assert_allclose(layer(X6).numpy(), X6)            # inference: no dropout
    y = layer(X6, training=True).numpy()
    ratio = y / X6
    assert set(np.unique(np.round(ratio, 5))) <= {0.0, 2.0}     # kept ones scaled by 1/(1-0.5)
    assert (ratio == ratio[:, :1]).all()                          # the same mask at every step
    assert 0 < (ratio == 0).mean() < 1
    assert layer.cell._dropout_mask is None                       # dropped after the call
    y2 = layer(X6, training=True).numpy()
    assert not np.array_equal(y2, y)                              # a new mask per call


def test_recurrent_dropout_is_one_mask_per_sequence():
    layer = _identity_simple_rnn(recurrent_dropout=0.5)
    h = layer(X6, training=True).numpy()
    # h_t = x_t + h_{t-1} * m  (identity kernels, no activation)
    m = (h[:, 1] - X6[:, 1]) / h[:, 0]
    assert set(np.unique(np.round(m, 4))) <= {0.0, 2.0}
    for t in range(2, 6):
        np.testing.assert_allclose(h[:, t], X6[:, t] + h[:, t - 1] * m, rtol=1e-5)


@pytest.mark.parametrize("cls,count", [(layers.LSTM, 4), (layers.GRU, 3)])
def test_recurrent_dropout_switches_to_per_gate_masks(cls, count):
    layer = cls(3, recurrent_dropout=0.2, dropout=0.2)
    assert layer.cell.implementation == 1
    assert cls(3, dropout=0.2).cell.implementation == 2
    layer(X6)
    cell = layer.cell
    masks = cell.get_dropout_mask(tf.constant(X6[:, 0]))
    assert isinstance(masks, list) and len(masks) == count
    assert cell.get_dropout_mask(tf.constant(X6[:, 0])) is masks   # cached until reset
    cell.reset_dropout_mask()
    assert cell._dropout_mask is None
    assert layer.get_config()["dropout"] == 0.2
    assert layer.get_config()["recurrent_dropout"] == 0.2


@pytest.mark.parametrize("cls", [layers.SimpleRNN, layers.LSTM, layers.GRU])
def test_dropout_traced_draws_fresh_masks_and_differentiates(cls):
    layer = cls(4, dropout=0.4, recurrent_dropout=0.4, return_sequences=True)
    inference = layer(X6).numpy()

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            y = layer(x, training=True)
            loss = tf.reduce_sum(y)
        return y, tape.gradient(loss, layer.trainable_weights)

    (a, grads), (b, _) = train_step(tf.constant(X6)), train_step(tf.constant(X6))
    assert not np.allclose(a.numpy(), b.numpy())
    assert all(g is not None and np.isfinite(g.numpy()).all() for g in grads)
    np.testing.assert_allclose(layer(X6).numpy(), inference, rtol=1e-6)
    assert layer.cell._dropout_mask is None and layer.cell._recurrent_dropout_mask is None
