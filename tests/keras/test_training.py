"""compile/fit/evaluate/predict of eager.keras's Trainer against Keras 3.15 (TF backend).

Goldens were recorded from Keras with the same data, initial weights and shuffle=False:
`keras.Sequential([Input, Dense(3, relu), Dense(1, sigmoid)])`, SGD(0.1),
"binary_crossentropy", metrics=["accuracy"]; and `Dense(2, kernel_regularizer=L2(0.01))`,
Adam(0.01), "mse" with sample weights. Here the same models are hand-written layers on the
Trainer mixin and the losses plain functions (Keras's formulas), so the tests hold the
training loop (reduction, loss tracker, regularization, logs) to Keras's numbers."""

import numpy as np
import pytest

import eager as tf
from eager import keras
from eager.keras.trainers import Trainer


class Dense(keras.layers.Layer):
    def __init__(self, units, activation=None, kernel_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        self.units, self.activation, self.reg = units, activation, kernel_regularizer

    def build(self, shape):
        self.kernel = self.add_weight((shape[-1], self.units), initializer="glorot_uniform",
                                      regularizer=self.reg, name="kernel")
        self.bias = self.add_weight((self.units,), initializer="zeros", name="bias")

    def call(self, x):
        y = tf.matmul(x, self.kernel) + self.bias
        return self.activation(y) if self.activation else y


class TwoLayer(Trainer, keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.d1 = Dense(3, tf.nn.relu)
        self.d2 = Dense(1, tf.sigmoid)

    def call(self, x):
        return self.d2(self.d1(x))


class OneLayer(Trainer, keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.d = Dense(2, kernel_regularizer=keras.regularizers.L2(0.01))

    def call(self, x):
        return self.d(x)


def binary_crossentropy(y_true, y_pred):
    p = tf.clip_by_value(y_pred, 1e-7, 1 - 1e-7)
    return -tf.reduce_mean(y_true * tf.math.log(p) + (1 - y_true) * tf.math.log(1 - p), axis=-1)


def mse(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)


def _binary_data():
    rng = np.random.RandomState(0)
    x = rng.randn(50, 4).astype("float32")
    y = (rng.rand(50) > 0.5).astype("float32")[:, None]
    weights = [(rng.randn(4, 3) * 0.5).astype("float32"), np.zeros(3, "float32"),
               (rng.randn(3, 1) * 0.5).astype("float32"), np.zeros(1, "float32")]
    return x, y, weights


def _two_layer():
    x, y, weights = _binary_data()
    model = TwoLayer()
    model(x[:1])
    model.set_weights(weights)
    model.compile(optimizer=tf.optimizers.SGD(0.1), loss=binary_crossentropy,
                  metrics=["accuracy"])
    return model, x, y


KERAS_HISTORY = {"accuracy": [0.4399999976158142, 0.4399999976158142],
                 "loss": [0.8689181804656982, 0.8375764489173889]}
KERAS_WEIGHTS = [
    [[-0.26946327090263367, 0.20252187550067902, -0.5655382871627808],
     [0.3803383708000183, 0.6765326261520386, -0.9622742533683777],
     [0.21526630222797394, 0.34391868114471436, -0.30500930547714233],
     [-0.19036290049552917, -0.03620101138949394, -0.1712213009595871]],
    [-0.008028297685086727, -0.03998430073261261, -0.05138527229428291],
    [[-0.11419855803251266], [-0.7741842269897461], [0.41899165511131287]],
    [-0.07861986756324768]]


def test_fit_ends_at_keras_weights_and_history():
    model, x, y = _two_layer()
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    assert list(history.history) == ["accuracy", "loss"]  # sorted, as Keras on TF
    for name, values in KERAS_HISTORY.items():
        np.testing.assert_allclose(history.history[name], values, rtol=1e-6)
    assert history.epoch == [0, 1] and model.history is history
    for got, want in zip(model.get_weights(), KERAS_WEIGHTS):
        np.testing.assert_allclose(got, np.array(want, "float32"), rtol=1e-6, atol=1e-7)
    # evaluate: a list in metrics order, or a sorted dict
    assert model.metrics_names == ["loss", "compile_metrics"]
    loss, acc = model.evaluate(x, y, verbose=0)
    np.testing.assert_allclose([loss, acc], [0.8195499181747437, 0.4399999976158142], rtol=1e-6)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(logs) == ["accuracy", "loss"]
    # validation_split takes the last 20% (Keras: 40 train rows, 10 validation rows)
    history = model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0,
                        validation_split=0.2)
    want = {"accuracy": 0.44999998807907104, "loss": 0.803022027015686,
            "val_accuracy": 0.4000000059604645, "val_loss": 0.8523547053337097}
    assert list(history.history) == list(want)
    for name, value in want.items():
        np.testing.assert_allclose(history.history[name], [value], rtol=1e-6)


def test_sample_weights_regularization_and_adam_match_keras():
    rng = np.random.RandomState(1)
    x = rng.randn(20, 3).astype("float32")
    y = rng.randn(20, 2).astype("float32")
    sw = rng.rand(20).astype("float32")
    kernel = (rng.randn(3, 2) * 0.5).astype("float32")
    model = OneLayer()
    model(x[:1])
    model.set_weights([kernel, np.array([0.1, -0.2], "float32")])
    model.compile(optimizer=tf.optimizers.Adam(0.01), loss=mse)
    history = model.fit(x, y, sample_weight=sw, batch_size=8, epochs=2, shuffle=False,
                        verbose=0)
    np.testing.assert_allclose(history.history["loss"],
                               [0.6688336730003357, 0.6294203996658325], rtol=1e-6)
    want = [[[0.1282346546649933, -0.6018970012664795],
             [0.008974171243607998, -0.7561909556388855],
             [0.5087565779685974, 0.16739912331104279]],
            [0.11482557654380798, -0.1588020920753479]]
    for got, w in zip(model.get_weights(), want):
        np.testing.assert_allclose(got, np.array(w, "float32"), rtol=1e-5, atol=1e-7)
    assert model.metrics_names == ["loss"]
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), 1.1887614727020264, rtol=1e-6)
    np.testing.assert_allclose(model.train_on_batch(x[:5], y[:5]), 2.727532148361206,
                               rtol=1e-5)
    np.testing.assert_allclose(model.test_on_batch(x[:5], y[:5]), 2.6733710765838623,
                               rtol=1e-5)


def test_one_trace_per_batch_shape():
    model, x, y = _two_layer()
    model.fit(x[:48], y[:48], batch_size=16, epochs=3, verbose=0)
    (train_fn,) = model._trainer.train_fns.values()
    assert train_fn.experimental_get_tracing_count() == 1  # built before tracing: not twice
    model.fit(x, y, batch_size=16, epochs=2, verbose=0)  # + the last batch of 2 rows
    assert train_fn.experimental_get_tracing_count() == 2
    model.evaluate(x[:32], y[:32], batch_size=16, verbose=0)
    model.evaluate(x[:32], y[:32], batch_size=16, verbose=0)
    (test_fn,) = model._trainer.test_fns.values()
    assert test_fn.experimental_get_tracing_count() == 1


def test_run_eagerly_gives_the_same_numbers():
    model, x, y = _two_layer()
    model.compile(optimizer=tf.optimizers.SGD(0.1), loss=binary_crossentropy,
                  metrics=["accuracy"], run_eagerly=True)
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    assert model._trainer.train_fns and not any(
        hasattr(f, "experimental_get_tracing_count") for f in model._trainer.train_fns.values())
    np.testing.assert_allclose(history.history["loss"], KERAS_HISTORY["loss"], rtol=1e-6)


def test_predict_batches_and_concatenates():
    model, x, _ = _two_layer()
    want = model(x).numpy()
    got = model.predict(x, batch_size=7, verbose=0)
    assert isinstance(got, np.ndarray) and got.shape == (50, 1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(model.predict_on_batch(x[:5]), want[:5], rtol=1e-6)


def test_predict_hands_each_batchs_outputs_to_callbacks_as_tensors():
    # As Keras 3: `on_predict_batch_end` gets the step's tensors; the batches are joined and
    # copied to numpy once, at the end (on a GPU, no batch is waited for on its own).
    model, x, _ = _two_layer()
    seen = []

    class Outputs(keras.callbacks.Callback):
        def on_predict_batch_end(self, batch, logs=None):
            seen.append(logs["outputs"])

    got = model.predict(x, batch_size=16, verbose=0, callbacks=[Outputs()])
    assert [type(t) for t in seen] == [type(tf.constant(0.0))] * 4
    assert [tuple(t.shape) for t in seen] == [(16, 1)] * 3 + [(2, 1)]
    np.testing.assert_array_equal(np.concatenate([t.numpy() for t in seen]), got)


def test_fit_on_a_dataset_equals_fit_on_arrays():
    model, x, y = _two_layer()
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    history = model.fit(data, epochs=2, verbose=0)
    np.testing.assert_allclose(history.history["loss"], KERAS_HISTORY["loss"], rtol=1e-6)
    np.testing.assert_allclose(model.evaluate(data, verbose=0)[0], 0.8195499181747437,
                               rtol=1e-6)


def test_sparse_and_categorical_accuracy_are_picked_by_shape():
    class Linear(Trainer, keras.layers.Layer):
        def build(self, shape):
            self.k = self.add_weight((shape[-1], 3), initializer="ones", name="k")

        def call(self, x):
            return tf.matmul(x, self.k) * tf.constant([1.0, 2.0, 3.0])

    x = np.array([[1.0], [-1.0]], "float32")  # argmax: 2, then 0
    model = Linear()
    model.compile(optimizer=tf.optimizers.SGD(0.0), loss=lambda t, p: tf.reduce_sum(p, -1),
                  metrics=["accuracy"])
    logs = model.evaluate(x, np.array([2, 1]), verbose=0, return_dict=True)
    assert logs["accuracy"] == 0.5  # sparse labels
    model.compile(optimizer=tf.optimizers.SGD(0.0), loss=lambda t, p: tf.reduce_sum(p, -1),
                  metrics=["acc"])
    logs = model.evaluate(x, np.eye(3, dtype="float32")[[2, 0]], verbose=0, return_dict=True)
    assert logs["acc"] == 1.0  # one-hot labels


def test_errors_use_keras_wording():
    model = TwoLayer()
    x, y, _ = _binary_data()
    with pytest.raises(ValueError, match=r"^You must call `compile\(\)` before using the "
                                         r"model\.$"):
        model.fit(x, y)
    with pytest.raises(ValueError, match="You must call"):
        model.evaluate(x, y)
    model.compile(optimizer=tf.optimizers.SGD(0.1), loss=binary_crossentropy)
    with pytest.raises(ValueError) as info:
        model.fit(x, y[:49], verbose=0)
    assert str(info.value) == ("Data cardinality is ambiguous. Make sure all arrays contain "
                               "the same number of samples.'x' sizes: 50\n'y' sizes: 49\n")
    with pytest.raises(ValueError, match="not sufficient to split"):
        model.fit(x[:1], y[:1], validation_split=0.5, verbose=0)
    model.compile(optimizer=tf.optimizers.SGD(0.1))
    with pytest.raises(ValueError, match="No loss to compute. Provide a `loss` argument"):
        model.fit(x, y, verbose=0)


def test_stop_training_from_a_callback_ends_fit():
    model, x, y = _two_layer()

    class Stop(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            assert isinstance(logs["loss"], float)
            if batch == 1:
                self.model.stop_training = True

    history = model.fit(x, y, batch_size=16, epochs=5, callbacks=[Stop()], verbose=0)
    assert history.epoch == [0]


def test_sequential_of_dense_layers_trains_as_keras():
    # the same golden as test_fit_ends_at_keras_weights_and_history, on keras.Sequential
    x, y, weights = _binary_data()
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.set_weights(weights)
    model.compile(optimizer=tf.optimizers.SGD(0.1), loss=binary_crossentropy,
                  metrics=["accuracy"])
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    for name, values in KERAS_HISTORY.items():
        np.testing.assert_allclose(history.history[name], values, rtol=1e-6)
    for got, want in zip(model.get_weights(), KERAS_WEIGHTS):
        np.testing.assert_allclose(got, np.array(want, "float32"), rtol=1e-6, atol=1e-7)


# -- compile with Keras's string identifiers; multi-output models; add_loss ------------------
# Goldens recorded from Keras 3.15 (TF 2.21 backend), shuffle=False, with the initial weights
# `_string_data()` makes: `Sequential([Input((4,)), Dense(5, "relu"), Dense(3, "softmax")])`
# compiled as `("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])`, then again
# with "rmsprop" and `validation_data` a batched tf.data.Dataset; a functional model with
# outputs "out1" (Dense(3, softmax)) and "out2" (Dense(1)) on one hidden Dense(5, relu),
# compiled with loss/loss_weights/metrics as dicts ("sgd") and as lists ("adam"); and a
# subclassed model adding `0.01 * sum(square(hidden))` with `add_loss` in `call`. Weights are
# flattened (row-major) per variable.

def _string_data():
    rng = np.random.RandomState(3)
    x = rng.randn(40, 4).astype("float32")
    y = rng.randint(0, 3, size=40)
    y2 = rng.randn(40, 1).astype("float32")
    weights = [(rng.randn(4, 5) * 0.5).astype("float32"), (rng.randn(5) * 0.1).astype("float32"),
               (rng.randn(5, 3) * 0.5).astype("float32"), (rng.randn(3) * 0.1).astype("float32"),
               (rng.randn(5, 1) * 0.5).astype("float32"), (rng.randn(1) * 0.1).astype("float32")]
    return x, y, y2, weights


KERAS_A_W = (
    [[-0.319046527, -0.34994334, 0.142913952, 0.232461303, 0.19137904, -0.029813742,
      0.558363974, 0.062015712, 0.43951723, 0.102890782, 0.600359619, 0.084436171,
      0.605320394, 0.274722368, 0.637279868, 0.847259521, 0.016812142, 0.075727686,
      0.855986774, 0.286539555],
     [-0.085345075, -0.176103249, -0.128594831, 0.025051374, -0.048946433],
     [0.911739886, 0.225882411, -0.039097618, 0.022471474, -0.047861263, -0.626531541,
      0.872910798, -0.211412251, -0.524805129, 0.318422377, -0.724588871, 0.749560714,
      0.547085106, 0.155692413, 0.336745471],
     [0.163504094, -0.00312299, 0.004017163]]
)
KERAS_C_W = (
    [[-0.312719673, -0.339999914, 0.148704827, 0.241058603, 0.19752039, -0.023849787,
      0.560523391, 0.059925802, 0.435377777, 0.100137644, 0.599924326, 0.088027932,
      0.601909757, 0.268011123, 0.633649647, 0.837784648, 0.014894633, 0.070983857,
      0.857674122, 0.276561707],
     [-0.094573654, -0.180883929, -0.132273614, 0.016336508, -0.056760695],
     [0.903996944, 0.233759254, -0.031748068, 0.012647824, -0.038358103, -0.626826942,
      0.869663656, -0.207475454, -0.524069786, 0.308894128, -0.714537501, 0.7583763,
      0.541914821, 0.161604494, 0.340794742],
     [0.154883832, 0.004781455, 0.01329221]]
)
KERAS_B1_W = (
    [[-0.308340907, -0.3620781, 0.148522258, 0.242056295, 0.191909, -0.029424533, 0.562035382,
      0.059800193, 0.43484965, 0.101619303, 0.597721279, 0.094205074, 0.599310219,
      0.270348698, 0.637678325, 0.822795391, 0.034374483, 0.072851196, 0.842517793,
      0.287655026],
     [-0.106046416, -0.156363279, -0.135729313, 0.007779167, -0.049284313],
     [0.896904469, 0.232022405, -0.033128753, 0.021920126, -0.047804628, -0.624479592,
      0.87257266, -0.211463541, -0.526307285, 0.305996031, -0.721178055, 0.755676985,
      0.544438481, 0.156382278, 0.336178154],
     [0.147295281, 0.003943974, 0.010280068],
     [-0.394357115, 1.135002255, -0.054488625, -0.352640688, 0.075982407], [-0.132355168]]
)
KERAS_B2_W = (
    [[-0.319142938, -0.355487615, 0.143058643, 0.231592581, 0.18714878, -0.03326546,
      0.559498549, 0.058580711, 0.438464731, 0.103071861, 0.599527895, 0.087209024,
      0.605216444, 0.275439262, 0.641641796, 0.847322404, 0.021211937, 0.075948089,
      0.85126251, 0.2923356],
     [-0.08536201, -0.171439484, -0.128718182, 0.025054881, -0.043151289],
     [0.911739945, 0.225880519, -0.039095938, 0.022476198, -0.047862902, -0.626527429,
      0.872913599, -0.211416185, -0.524802744, 0.318422258, -0.724588096, 0.749560535,
      0.547073722, 0.155705288, 0.33675158],
     [0.163504049, -0.003123519, 0.00401706],
     [-0.423348546, 1.133486152, -0.055946805, -0.374158114, 0.069118895], [-0.157413021]]
)
KERAS_D_W = (
    [[-0.316830486, -0.346771181, 0.144994825, 0.234515563, 0.193541363, -0.027311927,
      0.550862491, 0.061533313, 0.43485859, 0.097623661, 0.598972678, 0.084509209,
      0.603484333, 0.273699731, 0.63536799, 0.84430778, 0.015572718, 0.073341005, 0.8482548,
      0.283539295],
     [-0.088221692, -0.180074707, -0.130500868, 0.022018481, -0.051678967],
     [0.90900749, 0.228531197, -0.036354601, 0.019855224, -0.044892259, -0.626163661,
      0.871058285, -0.209372222, -0.523736358, 0.315443486, -0.721835554, 0.752545893,
      0.54471153, 0.15821825, 0.338868469],
     [0.160617352, -0.000309326, 0.00689532]]
)
KERAS_A_HIST = {'accuracy': [0.30000001192092896], 'loss': [1.3722633123397827]}
KERAS_A_EVAL = {'accuracy': 0.30000001192092896, 'loss': 1.3636195659637451}
KERAS_C_HIST = (
    {'accuracy': [0.30000001192092896, 0.30000001192092896],
     'loss': [1.3683907985687256, 1.3464686870574951],
     'val_accuracy': [0.25, 0.25],
     'val_loss': [1.3971529006958008, 1.382676601409912]}
)
KERAS_B1_HIST = (
    {'loss': [1.8799941539764404, 1.8202463388442993],
     'out1_accuracy': [0.30000001192092896, 0.30000001192092896],
     'out1_loss': [1.3846460580825806, 1.3602277040481567],
     'out2_loss': [1.0032881498336792, 0.9285042881965637],
     'out2_mae': [0.8170388340950012, 0.7911275625228882]}
)
KERAS_B1_EVAL = (
    {'loss': 1.7793928384780884,
     'out1_accuracy': 0.30000001192092896,
     'out1_loss': 1.3633962869644165,
     'out2_loss': 0.8603760004043579,
     'out2_mae': 0.7753569483757019}
)
KERAS_B1_EVAL_LIST = (
    [1.7793928384780884, 1.3633962869644165, 0.8603760004043579, 0.30000001192092896,
     0.7753569483757019]
)
KERAS_B2_HIST = (
    {'loss': [2.4804511070251465],
     'out1_accuracy': [0.30000001192092896],
     'out1_loss': [1.3890414237976074],
     'out2_loss': [1.0203454494476318],
     'out2_mae': [0.8219335675239563],
     'out2_mse': [1.0343767404556274]}
)
KERAS_D_HIST = {'loss': [1.5646170377731323, 1.5509392023086548]}


def _assert_weights(model, want):
    got = model.get_weights()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.ravel(), np.array(w, "float32"), rtol=1e-5, atol=1e-6)


def _assert_history(history, want):
    assert list(history.history) == list(want)  # Keras's keys, sorted as Keras on TF
    for name, values in want.items():
        np.testing.assert_allclose(history.history[name], values, rtol=1e-5)


def _classifier(weights):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, activation="relu"),
                              keras.layers.Dense(3, activation="softmax")])
    model.set_weights(weights[:4])
    return model


def test_compile_with_strings_trains_a_softmax_classifier_as_keras():
    # "adam" through eager.optimizers.get; sparse CE from_logits=False on a softmax output
    # (computed from the softmax's logits, as Keras on TF); "accuracy" becomes sparse
    # categorical accuracy from the shapes and keeps the name "accuracy"
    x, y, _, weights = _string_data()
    model = _classifier(weights)
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    assert type(model.optimizer).__name__ == "Adam"
    history = model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    _assert_history(history, KERAS_A_HIST)
    _assert_weights(model, KERAS_A_W)
    (accuracy,) = model.metrics[1].metrics
    assert type(accuracy).__name__ == "SparseCategoricalAccuracy"
    assert accuracy.name == "accuracy" and accuracy._direction == "up"
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(logs) == list(KERAS_A_EVAL)
    np.testing.assert_allclose([logs[k] for k in logs], list(KERAS_A_EVAL.values()), rtol=1e-5)
    assert model.metrics_names == ["loss", "compile_metrics"]


def test_compile_defaults_to_rmsprop_and_fit_validates_on_a_dataset():
    x, y, _, weights = _string_data()
    model = _classifier(weights)
    model.compile(loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    assert type(model.optimizer).__name__ == "RMSprop"  # compile's default "rmsprop"
    validation = tf.data.Dataset.from_tensor_slices((x[:12], y[:12])).batch(5)
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0,
                        validation_data=validation)
    _assert_history(history, KERAS_C_HIST)
    _assert_weights(model, KERAS_C_W)


def _two_output_model(weights):
    inputs = keras.Input((4,))
    hidden = keras.layers.Dense(5, activation="relu")(inputs)
    out1 = keras.layers.Dense(3, activation="softmax", name="out1")(hidden)
    out2 = keras.layers.Dense(1, name="out2")(hidden)
    model = keras.Model(inputs, [out1, out2])
    model.set_weights(weights)
    return model


def test_multi_output_losses_weights_and_metrics_as_dicts_match_keras():
    x, y, y2, weights = _string_data()
    model = _two_output_model(weights)
    model.compile(optimizer="sgd", loss={"out1": "sparse_categorical_crossentropy", "out2": "mse"},
                  loss_weights={"out1": 1.0, "out2": 0.5},
                  metrics={"out1": ["accuracy"], "out2": ["mae"]})
    history = model.fit(x, {"out1": y, "out2": y2}, batch_size=16, epochs=2, shuffle=False,
                        verbose=0)
    # each output's loss is tracked unweighted ("out1_loss"), its metrics get its name
    _assert_history(history, KERAS_B1_HIST)
    _assert_weights(model, KERAS_B1_W)
    assert model.metrics_names == ["loss", "compile_metrics", "out1_loss", "out2_loss"]
    logs = model.evaluate(x, {"out1": y, "out2": y2}, verbose=0, return_dict=True)
    assert list(logs) == list(KERAS_B1_EVAL)
    np.testing.assert_allclose(list(logs.values()), list(KERAS_B1_EVAL.values()), rtol=1e-5)
    # the list form: loss and loss trackers first, then the other names sorted
    np.testing.assert_allclose(model.evaluate(x, {"out1": y, "out2": y2}, verbose=0),
                               KERAS_B1_EVAL_LIST, rtol=1e-5)


def test_multi_output_losses_weights_and_metrics_as_lists_match_keras():
    x, y, y2, weights = _string_data()
    model = _two_output_model(weights)
    model.compile(optimizer="adam", loss=["sparse_categorical_crossentropy", "mse"],
                  loss_weights=[0.3, 2.0], metrics=[["accuracy"], ["mse", "mae"]])
    history = model.fit(x, [y, y2], batch_size=16, epochs=1, shuffle=False, verbose=0)
    _assert_history(history, KERAS_B2_HIST)
    _assert_weights(model, KERAS_B2_W)


def test_metrics_structure_that_fits_no_output_is_keras_error():
    x, y, y2, weights = _string_data()
    model = _two_output_model(weights)
    model.compile(optimizer="sgd", loss="mse", metrics={"nope": ["mae"]})
    with pytest.raises(ValueError, match=r"Invalid `metrics`. `metrics` should contain metrics "
                                         r"objects and either be a dict or a list matching "
                                         r"the output names of the functional model "
                                         r"\['out1', 'out2'\]"):
        model.fit(x, [y, y2], verbose=0)


def test_add_loss_in_call_trains_as_keras_and_leaves_no_graph_tensor():
    class AddLoss(keras.Model):
        def __init__(self):
            super().__init__()
            self.d1 = keras.layers.Dense(5, activation="relu")
            self.d2 = keras.layers.Dense(3, activation="softmax")

        def call(self, x):
            hidden = self.d1(x)
            self.add_loss(0.01 * tf.reduce_sum(tf.square(hidden)))
            return self.d2(hidden)

    x, y, _, weights = _string_data()
    model = AddLoss()
    model(x[:1])
    model.set_weights(weights[:4])
    model.compile("adam", "sparse_categorical_crossentropy")
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    _assert_history(history, KERAS_D_HIST)
    _assert_weights(model, KERAS_D_W)
    # the traced step's add_loss tensors do not outlive the trace (Keras on TF leaves a
    # SymbolicTensor there); an eager call adds a concrete one again
    assert not any(getattr(v, "is_symbolic", False) for v in model.losses)
    model.evaluate(x, y, verbose=0)
    model.predict(x, verbose=0)
    assert not any(getattr(v, "is_symbolic", False) for v in model.losses)
    model(x)
    (loss,) = model.losses
    assert not loss.is_symbolic and np.isfinite(loss.numpy())
