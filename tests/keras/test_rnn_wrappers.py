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


# -- Bidirectional, stacked cells, TimeDistributed against Keras 3.15 goldens -----------------

import json  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

from eager.keras.masking import get_keras_mask  # noqa: E402
from layer_goldens import arr, numeric_grad, set_golden_weights  # noqa: E402

W = json.loads((Path(__file__).parent.parent / "fixtures" /
                "keras_rnn_wrappers_goldens.json").read_text())
X = arr(3, (2, 4, 2))
IDS = np.array([[3, 1, 0, 2, 0], [0, 4, 4, 1, 0]], dtype="int32")

WRAPPED = {
    "bi_concat": lambda: layers.Bidirectional(layers.LSTM(3, return_sequences=True)),
    "bi_sum": lambda: layers.Bidirectional(layers.GRU(3, return_sequences=True),
                                           merge_mode="sum"),
    "bi_mul": lambda: layers.Bidirectional(layers.SimpleRNN(3, return_sequences=True),
                                           merge_mode="mul"),
    "bi_ave": lambda: layers.Bidirectional(layers.LSTM(3), merge_mode="ave"),
    "bi_none": lambda: layers.Bidirectional(layers.GRU(3, return_sequences=True),
                                            merge_mode=None),
    "bi_state": lambda: layers.Bidirectional(layers.LSTM(3, return_state=True)),
    "bi_backward": lambda: layers.Bidirectional(
        layers.LSTM(3, return_sequences=True),
        backward_layer=layers.GRU(2, return_sequences=True, go_backwards=True)),
    "stacked": lambda: layers.RNN([layers.LSTMCell(3), layers.GRUCell(2),
                                   layers.SimpleRNNCell(4)], return_sequences=True,
                                  return_state=True),
    "stacked_last": lambda: layers.RNN(layers.StackedRNNCells([layers.SimpleRNNCell(3),
                                                               layers.LSTMCell(2)])),
}


def _unnumbered(path):
    """A weight path without its layers' uniquing suffixes ("bidirectional_3/forward_lstm_1/
    lstm_cell/kernel" -> "bidirectional/forward_lstm/lstm_cell/kernel")."""
    return re.sub(r"_\d+(?=/)", "", path)


def _built(case):
    layer = WRAPPED[case]()
    layer(X)
    set_golden_weights(layer)
    return layer


@pytest.mark.parametrize("case", sorted(WRAPPED))
def test_wrapped_recurrent_layers_match_keras(case):
    layer = _built(case)
    ys = tf.nest.flatten(layer(X))
    assert len(ys) == len(W[case])
    for y, golden in zip(ys, W[case]):
        np.testing.assert_allclose(y.numpy(), golden, rtol=1e-5, atol=1e-5)
    assert [(_unnumbered(w.path), list(w.shape)) for w in layer.weights] == \
        [(_unnumbered(p), s) for p, s in W[case + "_weights"]]


@pytest.mark.parametrize("case", sorted(WRAPPED))
def test_wrapped_recurrent_gradients_match_keras(case):
    layer = _built(case)

    def loss():
        ys = tf.nest.flatten(layer(X))
        return sum(tf.reduce_sum(y * arr(7 + i, tuple(y.shape))) for i, y in enumerate(ys))

    with tf.GradientTape() as tape:
        value = loss()
    grads = tape.gradient(value, layer.trainable_weights)
    for g, golden in zip(grads, W[case + "_grad"]):
        np.testing.assert_allclose(g.numpy(), golden, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grads[-1].numpy(), numeric_grad(loss, layer.trainable_weights[-1]),
                               rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize("case", ["bi_concat", "bi_state", "stacked"])
def test_wrapped_recurrent_traced_equals_eager(case):
    layer = _built(case)
    expected = [y.numpy() for y in tf.nest.flatten(layer(X))]
    traced = tf.function(lambda x: tf.nest.flatten(layer(x)))(tf.constant(X))
    for a, b in zip(traced, expected):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-6, atol=1e-6)


def test_bidirectional_with_mask_and_initial_state():
    emb = layers.Embedding(5, 2, mask_zero=True)
    bi = layers.Bidirectional(layers.LSTM(3, return_sequences=True))
    bi(emb(IDS))
    set_golden_weights(emb, 50)
    set_golden_weights(bi)
    y = bi(emb(IDS))
    np.testing.assert_allclose(y.numpy(), W["bi_mask"][0], rtol=1e-5, atol=1e-5)
    assert get_keras_mask(y).numpy().tolist() == W["bi_mask_outmask"]
    summed = layers.Bidirectional(layers.GRU(3), merge_mode="sum")
    summed(emb(IDS))
    set_golden_weights(summed)
    np.testing.assert_allclose(summed(emb(IDS)).numpy(), W["bi_mask_last"][0], rtol=1e-5,
                               atol=1e-5)
    assert get_keras_mask(summed(emb(IDS))) is None
    with_state = layers.Bidirectional(layers.LSTM(3, return_sequences=True))
    with_state(X)
    set_golden_weights(with_state)
    states = [arr(20 + i, (2, 3)) for i in range(4)]
    np.testing.assert_allclose(with_state(X, initial_state=states).numpy(),
                               W["bi_initial_state"][0], rtol=1e-5, atol=1e-5)


def test_bidirectional_config_and_errors():
    bi = _built("bi_concat")
    config = bi.get_config()
    keras_config = W["bi_concat_config"]
    assert config["merge_mode"] == keras_config["merge_mode"]
    for key in ("layer", "backward_layer"):
        assert config[key]["class_name"] == keras_config[key]["class_name"]
        for flag in ("go_backwards", "return_sequences", "zero_output_for_mask"):
            assert config[key]["config"][flag] == keras_config[key]["config"][flag]
    again = layers.Bidirectional.from_config(config)
    again(X)
    again.set_weights(bi.get_weights())
    np.testing.assert_allclose(again(X).numpy(), bi(X).numpy(), rtol=1e-6)
    errors = W["bi_errs"]
    with pytest.raises(ValueError) as info:
        layers.Bidirectional(layers.LSTM(3), merge_mode="foo")
    assert str(info.value) == errors[0][1]
    with pytest.raises(ValueError) as info:
        layers.Bidirectional(layers.LSTM(3), backward_layer=layers.LSTM(3))
    assert str(info.value) == errors[1][1]
    with pytest.raises(ValueError, match="Please initialize `Bidirectional` layer"):
        layers.Bidirectional(3)


def test_stacked_cells_config_and_dropout():
    rnn = _built("stacked")
    config = rnn.get_config()
    assert config["cell"]["class_name"] == "StackedRNNCells"
    assert [c["class_name"] for c in config["cell"]["config"]["cells"]] == \
        [c["class_name"] for c in W["stacked_config"]["cell"]["config"]["cells"]]
    again = layers.RNN.from_config(config)
    again(X)
    again.set_weights(rnn.get_weights())
    for a, b in zip(tf.nest.flatten(again(X)), tf.nest.flatten(rnn(X))):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    dropped = layers.RNN([layers.LSTMCell(3, dropout=0.5, recurrent_dropout=0.5),
                          layers.GRUCell(2, recurrent_dropout=0.5)], return_sequences=True)
    inference = dropped(X).numpy()
    assert not np.allclose(dropped(X, training=True).numpy(), inference)
    np.testing.assert_allclose(dropped(X).numpy(), inference)


def test_time_distributed_matches_keras():
    td = layers.TimeDistributed(layers.Dense(4))
    td(X)
    set_golden_weights(td)
    np.testing.assert_allclose(td(X).numpy(), W["td_dense"][0], rtol=1e-5, atol=1e-6)
    assert [(_unnumbered(w.path), list(w.shape)) for w in td.weights] == \
        [(_unnumbered(p), s) for p, s in W["td_dense_weights"]]
    images = arr(5, (2, 3, 4, 4, 2))
    conv = layers.TimeDistributed(layers.Conv2D(2, 3))
    conv(images)
    set_golden_weights(conv)
    np.testing.assert_allclose(conv(images).numpy(), W["td_conv"][0], rtol=1e-5, atol=1e-5)
    # unknown number of steps: folded into the batch, same numbers
    traced = tf.function(lambda x: td(x), input_signature=[tf.TensorSpec([None, None, 2])])
    np.testing.assert_allclose(traced(tf.constant(X)).numpy(), W["td_dense"][0], rtol=1e-5,
                               atol=1e-6)
    emb = layers.Embedding(5, 2, mask_zero=True)
    assert get_keras_mask(td(emb(IDS))).numpy().tolist() == W["td_mask"]
    again = layers.TimeDistributed.from_config(conv.get_config())
    assert isinstance(again.layer, layers.Conv2D) and again.layer.filters == 2
    assert td.get_config()["layer"]["class_name"] == "Dense"
    with pytest.raises(ValueError) as info:
        layers.TimeDistributed(layers.Dense(3))(np.zeros((2,), "float32"))
    assert str(info.value) == W["td_err_rank"][1]
    with pytest.raises(ValueError) as info:
        layers.TimeDistributed(3)
    assert str(info.value) == W["td_err_layer"][1]
