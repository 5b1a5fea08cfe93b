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
