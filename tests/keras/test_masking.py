"""Keras 3 masking: a mask travels from `Embedding(mask_zero=True)` / `Masking` to the layers
after it (eagerly, inside `eager.function`, and as KerasTensor specs in the functional API);
RNNs skip masked steps, GlobalAveragePooling1D averages unmasked steps, BatchNormalization's
training moments ignore masked positions, and layers without mask support drop it with
Keras's warning. Goldens recorded from Keras 3.15 (tests/fixtures/keras_masking_goldens.json)
with the weights of layer_goldens.set_golden_weights."""

import gc
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import eager as tf
from eager import keras
from eager.keras import layers
from eager.keras import masking as mask_store
from eager.keras.masking import get_keras_mask, set_keras_mask
from layer_goldens import arr, numeric_grad, same_config, set_golden_weights

G = json.loads((Path(__file__).parent.parent / "fixtures" /
                "keras_masking_goldens.json").read_text())
IDS = np.array(G["ids"], dtype="int32")     # zeros in the middle and at the end

RNNS = {
    "simple_rnn": lambda: layers.SimpleRNN(3, return_sequences=True, return_state=True),
    "lstm": lambda: layers.LSTM(3, return_sequences=True, return_state=True),
    "gru": lambda: layers.GRU(3, return_sequences=True, return_state=True),
    "lstm_last": lambda: layers.LSTM(3),
    "gru_backwards": lambda: layers.GRU(3, go_backwards=True, return_sequences=True,
                                        return_state=True),
    "simple_rnn_zero": lambda: layers.SimpleRNN(3, return_sequences=True, return_state=True,
                                                zero_output_for_mask=True),
}


def _listed(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


def _masked_rnn(case):
    emb, rnn = layers.Embedding(5, 2, mask_zero=True), RNNS[case]()
    rnn(emb(IDS))
    set_golden_weights(emb, 50)
    set_golden_weights(rnn)
    return emb, rnn


def _mask_values(ys):
    return [None if get_keras_mask(t) is None else get_keras_mask(t).numpy().tolist()
            for t in ys]


@pytest.mark.parametrize("case", sorted(RNNS))
def test_rnn_skips_masked_steps_as_keras(case):
    emb, rnn = _masked_rnn(case)
    ys = _listed(rnn(emb(IDS)))
    assert len(ys) == len(G["mask_" + case])
    for y, golden in zip(ys, G["mask_" + case]):
        np.testing.assert_allclose(y.numpy(), golden, rtol=1e-5, atol=1e-5)
    assert _mask_values(ys) == G["mask_" + case + "_outmask"]


@pytest.mark.parametrize("case", sorted(RNNS))
def test_masked_rnn_gradients_match_keras_and_finite_differences(case):
    emb, rnn = _masked_rnn(case)

    def loss():
        ys = _listed(rnn(emb(IDS)))
        return sum(tf.reduce_sum(y * arr(7 + i, tuple(y.shape))) for i, y in enumerate(ys))

    with tf.GradientTape() as tape:
        value = loss()
    grads = tape.gradient(value, rnn.trainable_weights + emb.trainable_weights)
    for g, golden in zip(grads, G["mask_" + case + "_grad"]):
        np.testing.assert_allclose(tf.convert_to_tensor(g).numpy(), golden, rtol=1e-4,
                                   atol=1e-5)
    np.testing.assert_allclose(grads[0].numpy(), numeric_grad(loss, rnn.trainable_weights[0]),
                               rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize("case", ["lstm", "gru_backwards", "simple_rnn_zero"])
def test_masked_rnn_traced_equals_eager_and_is_one_loop(case):
    emb, rnn = _masked_rnn(case)
    eager_out = [y.numpy() for y in _listed(rnn(emb(IDS)))]

    @tf.function
    def run(ids):
        ys = _listed(rnn(emb(ids)))
        # the masks travel with the symbolic tensors too
        return ys + [get_keras_mask(ys[0])]

    traced = run(tf.constant(IDS))
    for a, b in zip(traced, eager_out):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-6, atol=1e-6)
    expected_mask = G["mask_" + case + "_outmask"][0]
    if expected_mask is None:
        assert traced[-1] is None
    else:
        assert traced[-1].numpy().tolist() == expected_mask
    graph = run.get_concrete_function(tf.constant(IDS)).graph
    assert sum(op.type in ("While", "StatelessWhile") for op in graph.get_operations()) == 1


def test_explicit_mask_argument_equals_carried_mask():
    emb, rnn = _masked_rnn("lstm")
    carried = _listed(rnn(emb(IDS)))
    plain = tf.gather(emb.embeddings, IDS)          # the same values, no mask attached
    assert get_keras_mask(plain) is None
    explicit = _listed(rnn(plain, mask=tf.constant(IDS != 0)))
    for a, b in zip(carried, explicit):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_masking_layer_matches_keras():
    x = arr(3, (2, 4, 2))
    x[0, 1] = 0
    x[1, 3] = 0
    x[1, 2, 0] = 0              # one zero feature is not a masked step
    masking = layers.Masking(0.0)
    y = masking(x)
    np.testing.assert_allclose(y.numpy(), G["masking_out"])
    assert get_keras_mask(y).numpy().tolist() == G["masking_mask"]
    lstm = layers.LSTM(3, return_sequences=True)
    lstm(y)
    set_golden_weights(lstm)
    np.testing.assert_allclose(lstm(masking(x)).numpy(), G["masking_lstm"], rtol=1e-5,
                               atol=1e-5)
    same_config(masking.get_config(), G["masking_config"])
    again = layers.Masking.from_config(masking.get_config())
    assert again.mask_value == 0.0 and again.supports_masking


def test_global_average_pooling_1d_averages_unmasked_steps():
    x = arr(4, (2, 5, 3))
    mask = tf.constant(IDS != 0)
    np.testing.assert_allclose(layers.GlobalAveragePooling1D()(x, mask=mask).numpy(),
                               G["gap1d"], rtol=1e-6)
    channels_first = layers.GlobalAveragePooling1D(data_format="channels_first",
                                                   keepdims=True)
    np.testing.assert_allclose(channels_first(np.transpose(x, (0, 2, 1)), mask=mask).numpy(),
                               G["gap1d_cf"], rtol=1e-6)
    # a carried mask is used and not passed on
    carried = tf.constant(x) + 0.0
    set_keras_mask(carried, mask)
    pooled = layers.GlobalAveragePooling1D()(carried)
    np.testing.assert_allclose(pooled.numpy(), G["gap1d"], rtol=1e-6)
    assert get_keras_mask(pooled) is None


def test_batch_normalization_masked_moments_match_keras():
    x = arr(4, (2, 5, 3))
    bn = layers.BatchNormalization()
    bn(x)
    set_golden_weights(bn)
    y = bn(x, training=True, mask=tf.constant(IDS != 0))
    np.testing.assert_allclose(y.numpy(), G["bn_mask_out"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.numpy(), G["bn_mask_moving"][0], rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy(), G["bn_mask_moving"][1], rtol=1e-5)
    with pytest.raises(ValueError) as info:
        bn(x, training=True, mask=tf.constant((IDS != 0)[:, :, None]))
    assert "The mask provided should be one dimension less than the inputs. Received: " \
        "mask.shape=(2, 5, 1), inputs.shape=(2, 5, 3)" in str(info.value)
    assert "mask.shape=(2, 5, 1), inputs.shape=(2, 5, 3)" in G["bn_mask_err"][1]


def test_layer_without_mask_support_drops_it_with_keras_warning():
    emb = layers.Embedding(5, 2, mask_zero=True, name="emb")
    conv = layers.Conv1D(2, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = conv(emb(IDS))
    messages = [str(w.message) for w in caught]
    expected = G["warn"][0].replace("'conv1d'", f"'{conv.name}'")
    assert expected in messages
    assert get_keras_mask(out) is None
    # no mask, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        conv(emb(IDS) + 0.0)


def test_mask_passes_through_supporting_layers_and_custom_compute_mask():
    emb = layers.Embedding(5, 2, mask_zero=True)
    h = emb(IDS)
    normed = layers.LayerNormalization()(h)
    assert get_keras_mask(normed).numpy().tolist() == (IDS != 0).tolist()

    class Shift(layers.Layer):
        def call(self, inputs, mask=None):
            self.seen = mask
            return inputs * 1.0

        def compute_mask(self, inputs, previous_mask):
            return tf.logical_not(previous_mask)

    shift = Shift()
    assert shift.supports_masking        # Keras: compute_mask overridden
    out = shift(h)
    assert shift.seen.numpy().tolist() == (IDS != 0).tolist()
    assert get_keras_mask(out).numpy().tolist() == (IDS == 0).tolist()
    assert not layers.Layer().supports_masking


def test_autocast_keeps_the_mask():
    class Seen(layers.Layer):
        def call(self, inputs, mask=None):
            self.seen = (inputs.dtype, mask)
            return inputs * 2.0

    h = tf.constant(arr(1, (2, 5, 2)).astype("float64"))
    set_keras_mask(h, tf.constant(IDS != 0))
    layer = Seen()
    layer.supports_masking = True
    out = layer(h)
    assert layer.seen[0] == tf.float32 and out.dtype == tf.float32
    assert layer.seen[1].numpy().tolist() == (IDS != 0).tolist()
    assert get_keras_mask(out).numpy().tolist() == (IDS != 0).tolist()


def test_mask_lives_as_long_as_its_tensor():
    t = tf.constant([1.0, 2.0])
    set_keras_mask(t, tf.constant([True, False]))
    key = id(t)
    assert key in mask_store._entries and mask_store.any_masks()
    del t
    gc.collect()
    assert key not in mask_store._entries
    assert get_keras_mask(tf.constant([1.0])) is None
    set_keras_mask(np.zeros(2), tf.constant([True, False]))    # not referenceable: ignored


def test_functional_api_carries_mask_specs():
    inp = keras.KerasTensor((None, 5), dtype="int32")
    h = layers.Embedding(5, 2, mask_zero=True)(inp)
    assert [list(h._keras_mask.shape), h._keras_mask.dtype] == G["kt_mask"]
    s = layers.LSTM(3, return_sequences=True)(h)
    assert [list(s._keras_mask.shape), s._keras_mask.dtype] == G["kt_mask_lstm"]
    p = layers.GlobalAveragePooling1D()(s)
    assert (getattr(p, "_keras_mask", None) is None) == G["kt_mask_gap"]
    # the recorded node does not hold the filled-in mask (it has no history)
    node = s._keras_history.operation._inbound_nodes[-1]
    assert "mask" not in node.arguments[1]
    assert node.input_tensors == [h]


def test_functional_and_sequential_models_propagate_masks():
    inp = keras.Input((5,), dtype="int32")
    emb = layers.Embedding(5, 2, mask_zero=True)
    lstm = layers.LSTM(3, return_sequences=True)
    model = keras.Model(inp, layers.GlobalAveragePooling1D()(lstm(emb(inp))))
    set_golden_weights(emb, 50)
    set_golden_weights(lstm)
    np.testing.assert_allclose(model(IDS).numpy(), G["functional_out"], rtol=1e-5, atol=1e-6)
    traced = tf.function(lambda ids: model(ids))
    np.testing.assert_allclose(traced(tf.constant(IDS)).numpy(), G["functional_out"],
                               rtol=1e-5, atol=1e-6)
    seq = keras.Sequential([layers.Embedding(5, 2, mask_zero=True),
                            layers.LSTM(3, return_sequences=True),
                            layers.GlobalAveragePooling1D()])
    seq(IDS)
    set_golden_weights(seq.layers[0], 50)
    set_golden_weights(seq.layers[1])
    np.testing.assert_allclose(seq(IDS).numpy(), G["functional_out"], rtol=1e-5, atol=1e-6)


def test_loss_reads_the_mask_a_layer_set():
    """Keras: a loss weights out the masked steps of y_pred (the mask its layer attached)."""
    emb = layers.Embedding(5, 2, mask_zero=True)
    y_pred = emb(IDS)
    y_true = tf.zeros_like(y_pred)
    masked = keras.losses.MeanSquaredError()(y_true, y_pred)
    unmasked = keras.losses.MeanSquaredError()(y_true, y_pred + 0.0 * tf.zeros_like(y_pred))
    per_step = np.mean(np.square(y_pred.numpy()), axis=-1)
    keep = IDS != 0
    np.testing.assert_allclose(float(unmasked), per_step.mean(), rtol=1e-6)
    assert not np.isclose(float(masked), float(unmasked))
    np.testing.assert_allclose(float(masked), (per_step * keep).sum() / per_step.size * (
        per_step.size / keep.sum()), rtol=1e-5)
