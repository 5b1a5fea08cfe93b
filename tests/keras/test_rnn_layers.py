"""SimpleRNN, LSTM, GRU (and RNN(cell)) against Keras 3.15 goldens: outputs, states,
gradients, weights; one while-loop when traced."""

import numpy as np
import pytest

import eager as tf
from eager.keras import layers
from layer_goldens import GOLDENS, arr, numeric_grad, run_golden, same_config

XS = arr(3, (2, 4, 2))

CASES = {
    "simple_rnn": lambda: layers.SimpleRNN(3, return_sequences=True, return_state=True),
    "lstm": lambda: layers.LSTM(3, return_sequences=True, return_state=True),
    "gru": lambda: layers.GRU(3, return_sequences=True, return_state=True),
    "gru_reset_before": lambda: layers.GRU(3, reset_after=False, return_state=True),
    "lstm_backwards": lambda: layers.LSTM(3, go_backwards=True, return_sequences=True),
}


def _first(y):
    return y[0] if isinstance(y, (list, tuple)) else y


@pytest.mark.parametrize("case", sorted(CASES))
def test_outputs_and_states_match_keras(case):
    layer = CASES[case]()
    y = run_golden(layer, XS)
    golden = GOLDENS[case]
    if isinstance(y, (list, tuple)):
        assert len(y) == len(golden)
        for t, g in zip(y, golden):
            np.testing.assert_allclose(t.numpy(), g, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_allclose(y.numpy(), golden, rtol=1e-5, atol=1e-5)
    assert [(w.path.split("/", 1)[1], list(w.shape)) for w in layer.weights] == \
        [(p.split("/", 1)[1], s) for p, s in GOLDENS[case + "_weights"]]


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradients_match_keras_and_finite_differences(case):
    layer = CASES[case]()
    out = _first(run_golden(layer, XS))
    weight = tf.constant(arr(7, tuple(out.shape)))

    def loss():
        return tf.reduce_sum(_first(layer(XS)) * weight)

    with tf.GradientTape() as tape:
        y = loss()
    grads = tape.gradient(y, layer.trainable_weights)
    for g, golden in zip(grads, GOLDENS[case + "_grad"]):
        np.testing.assert_allclose(g.numpy(), golden, rtol=1e-4, atol=1e-5)
    kernel = layer.trainable_weights[0]
    np.testing.assert_allclose(grads[0].numpy(), numeric_grad(loss, kernel), rtol=2e-2,
                               atol=2e-3)


@pytest.mark.parametrize("case", ["simple_rnn", "lstm", "gru"])
def test_traced_rnn_is_one_while_loop_and_matches_eager(case):
    layer = CASES[case]()
    eager_y = [t.numpy() for t in run_golden(layer, XS)]
    fn = tf.function(lambda v: layer(v))
    traced_y = fn(tf.constant(XS))
    for a, b in zip(traced_y, eager_y):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-6, atol=1e-6)
    graph = fn.get_concrete_function(tf.TensorSpec([None, None, 2], tf.float32)).graph
    kinds = [op.type for op in graph.get_operations()]
    assert sum(kind in ("While", "StatelessWhile") for kind in kinds) == 1, kinds
    # an unknown length runs through the same single loop
    longer = arr(11, (3, 6, 2))
    np.testing.assert_allclose(fn(tf.constant(longer))[0].numpy(), layer(longer)[0].numpy(),
                               rtol=1e-6, atol=1e-6)


def test_traced_gradient_matches_eager():
    layer = layers.LSTM(3)
    run_golden(layer, XS)

    def grads(x):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.square(layer(x)))
        return tape.gradient(y, layer.trainable_weights)

    eager_g = grads(tf.constant(XS))
    traced_g = tf.function(grads)(tf.constant(XS))
    for a, b in zip(traced_g, eager_g):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_rnn_wrapper_with_a_cell_and_initial_state():
    cell = layers.LSTMCell(3)
    layer = layers.RNN(cell, return_state=True)
    reference = layers.LSTM(3, return_state=True)
    run_golden(reference, XS)
    layer(XS)
    layer.set_weights(reference.get_weights())
    for a, b in zip(layer(XS), reference(XS)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    h0, c0 = tf.constant(arr(20, (2, 3))), tf.constant(arr(21, (2, 3)))
    first = layer(XS[:, :2], initial_state=[h0, c0])
    second = layer(XS[:, 2:], initial_state=first[1:])
    whole = layer(XS, initial_state=[h0, c0])
    np.testing.assert_allclose(second[0].numpy(), whole[0].numpy(), rtol=1e-5, atol=1e-6)


def test_custom_cell_in_rnn():
    class Accumulate(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.state_size = 2

        def call(self, inputs, states):
            total = states[0] + inputs
            return total, [total]

    y = layers.RNN(Accumulate(), return_sequences=True)(XS)
    np.testing.assert_allclose(y.numpy(), np.cumsum(XS, axis=1), rtol=1e-6)


CONFIGS = {"simple_rnn": lambda: layers.SimpleRNN(3), "lstm": lambda: layers.LSTM(3),
           "gru": lambda: layers.GRU(3), "lstm_cell": lambda: layers.LSTMCell(3)}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_get_config_matches_keras(name):
    layer = CONFIGS[name]()
    same_config(layer.get_config(), GOLDENS["configs"][name])
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()


def test_refusals_and_bad_arguments():
    _, message = GOLDENS["errors"]["lstm_units"]
    with pytest.raises(ValueError) as info:
        layers.LSTM(0)
    assert str(info.value) == message
    with pytest.raises(NotImplementedError, match="stateful=True"):
        layers.GRU(3, stateful=True)
    with pytest.raises(ValueError, match="rank 3"):
        layers.SimpleRNN(3)(np.ones((2, 3), "float32"))
