"""eager.keras.callbacks against Keras 3.15: EarlyStopping/ReduceLROnPlateau decisions on
recorded value sequences (goldens from Keras's callbacks driven with the same logs), and the
callbacks' effects inside `fit` (learning-rate schedules reaching the traced step, CSV rows,
checkpoints, NaN termination, hook order)."""

import csv
import math

import numpy as np
import pytest

import eager as tf
from eager import keras
from eager.keras.trainers import Trainer


class _Opt:
    def __init__(self):
        self.learning_rate = 0.1


class _FakeModel:
    def __init__(self):
        self.stop_training = False
        self.w = 0
        self.optimizer = _Opt()

    def get_weights(self):
        return [np.array(self.w)]

    def set_weights(self, weights):
        self.w = int(weights[0])


def _drive(cb, values, key="val_loss"):
    model = _FakeModel()
    cb.set_model(model)
    cb.on_train_begin()
    out = []
    for epoch, value in enumerate(values):
        model.w = epoch
        cb.on_epoch_end(epoch, {key: value})
        out.append((model.stop_training, cb.wait, float(model.optimizer.learning_rate)))
        if model.stop_training:
            break
    cb.on_train_end()
    return out, model.w


SEQ = [1.0, 0.8, 0.85, 0.79, 0.9, 0.95, 0.7]


@pytest.mark.parametrize("make, values, key, want", [
    (lambda: keras.callbacks.EarlyStopping(patience=2), SEQ, "val_loss",
     ([(False, 0, 0.1), (False, 0, 0.1), (False, 1, 0.1), (False, 0, 0.1), (False, 1, 0.1),
       (True, 2, 0.1)], 5)),
    (lambda: keras.callbacks.EarlyStopping(patience=1, min_delta=0.05,
                                           restore_best_weights=True), SEQ, "val_loss",
     ([(False, 0, 0.1), (False, 0, 0.1), (True, 1, 0.1)], 1)),
    (lambda: keras.callbacks.EarlyStopping(patience=0, baseline=0.5), SEQ, "val_loss",
     ([(False, 1, 0.1), (False, 2, 0.1), (True, 3, 0.1)], 2)),
    (lambda: keras.callbacks.EarlyStopping(monitor="val_acc", mode="max", patience=1,
                                           start_from_epoch=2, restore_best_weights=True),
     [0.1, 0.9, 0.5, 0.6, 0.55, 0.4], "val_acc",
     ([(False, 0, 0.1), (False, 0, 0.1), (False, 0, 0.1), (False, 0, 0.1), (True, 1, 0.1)], 3)),
    (lambda: keras.callbacks.ReduceLROnPlateau(patience=1, factor=0.5, cooldown=1,
                                               min_lr=0.02), [1.0] * 7, "val_loss",
     ([(False, 0, 0.1), (False, 0, 0.05), (False, 0, 0.025), (False, 0, 0.02),
       (False, 1, 0.02), (False, 2, 0.02), (False, 3, 0.02)], 6)),
])
def test_monitor_decisions_match_keras(make, values, key, want):
    got, weights = _drive(make(), values, key)
    assert [(s, w) for s, w, _ in got] == [(s, w) for s, w, _ in want[0]]
    np.testing.assert_allclose([lr for *_, lr in got], [lr for *_, lr in want[0]])
    assert weights == want[1]


def test_auto_mode_needs_a_known_direction():
    cb = keras.callbacks.EarlyStopping(monitor="val_auc_like")
    cb.set_model(_FakeModel())
    with pytest.raises(ValueError, match="isn't able to automatically determine whether that "
                                         "metric should be maximized or minimized"):
        cb.on_epoch_end(0, {"val_auc_like": 1.0})


class Linear(Trainer, keras.layers.Layer):
    def build(self, shape):
        self.kernel = self.add_weight((shape[-1], 1), initializer="zeros", name="kernel")

    def call(self, x):
        return tf.matmul(x, self.kernel)


def _data():
    x = np.array([[1.0], [2.0], [3.0], [4.0]], "float32")
    return x, 2 * x


def _model(lr=0.01):
    model = Linear()
    model.compile(optimizer=tf.optimizers.SGD(lr), loss="mse")
    return model


def _sgd_reference(x, y, lrs, batch_size):
    w = 0.0
    for lr in lrs:
        for start in range(0, len(x), batch_size):
            xb, yb = x[start:start + batch_size, 0], y[start:start + batch_size, 0]
            grad = np.mean(2 * (w * xb - yb) * xb)
            w -= lr * grad
    return w


def test_learning_rate_scheduler_reaches_the_traced_step():
    x, y = _data()
    model = _model()
    lrs = []
    sched = keras.callbacks.LearningRateScheduler(lambda epoch, lr: 0.01 * (epoch + 1))
    record = keras.callbacks.LambdaCallback(
        on_epoch_begin=lambda epoch, logs: lrs.append(float(model.optimizer.learning_rate)))
    history = model.fit(x, y, batch_size=2, epochs=3, shuffle=False, verbose=0,
                        callbacks=[sched, record])
    assert lrs == pytest.approx([0.01, 0.02, 0.03])
    np.testing.assert_allclose(history.history["learning_rate"], [0.01, 0.02, 0.03], rtol=1e-6)
    want = _sgd_reference(x, y, [0.01, 0.02, 0.03], 2)
    np.testing.assert_allclose(model.get_weights()[0][0, 0], want, rtol=1e-5)
    with pytest.raises(ValueError, match="The output of the `schedule` function should be a "
                                         "float. Got: 1"):
        model.fit(x, y, verbose=0, callbacks=[
            keras.callbacks.LearningRateScheduler(lambda epoch: 1)])


def test_early_stopping_in_fit_restores_best_weights():
    x, y = _data()
    model = _model(lr=0.5)  # diverges: the loss grows from epoch 1 on
    stop = keras.callbacks.EarlyStopping(monitor="loss", patience=1, restore_best_weights=True)
    weights = []
    keep = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: weights.append(model.get_weights()[0].copy()))
    history = model.fit(x, y, batch_size=4, epochs=10, verbose=0, callbacks=[stop, keep])
    losses = history.history["loss"]
    assert len(losses) == stop.stopped_epoch + 1 < 10
    best = int(np.argmin(losses))
    assert stop.best_epoch == best
    np.testing.assert_array_equal(model.get_weights()[0], weights[best])


def test_csv_logger_rows(tmp_path):
    x, y = _data()
    model = _model()
    path = tmp_path / "log.csv"
    history = model.fit(x, y, batch_size=2, epochs=2, verbose=0, shuffle=False,
                        validation_data=(x, y), callbacks=[keras.callbacks.CSVLogger(path)])
    with open(path) as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["epoch", "loss", "val_loss"]
    assert [r[0] for r in rows[1:]] == ["0", "1"]
    np.testing.assert_allclose([float(r[1]) for r in rows[1:]], history.history["loss"])
    # without validation Keras adds the val_ columns anyway, filled with NA
    model.fit(x, y, epochs=1, verbose=0,
              callbacks=[keras.callbacks.CSVLogger(path, separator=";")])
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines[0] == "epoch;loss;val_loss" and lines[1].endswith(";NA")


def test_model_checkpoint_saves_formatted_paths_and_best_only(tmp_path):
    x, y = _data()
    model = _model(lr=0.5)
    pattern = str(tmp_path / "w-{epoch:02d}-{loss:.2f}.weights.h5")
    cb = keras.callbacks.ModelCheckpoint(pattern, monitor="loss", save_best_only=True,
                                         save_weights_only=True)
    history = model.fit(x, y, batch_size=4, epochs=3, verbose=0, callbacks=[cb])
    losses = history.history["loss"]
    saved = sorted(p.name for p in tmp_path.iterdir())
    improving = [e for e in range(3) if losses[e] == min(losses[:e + 1])]
    assert saved == [f"w-{e + 1:02d}-{losses[e]:.2f}.weights.h5" for e in improving]
    restored = Linear()
    restored(x)
    tf.train.Checkpoint(model=restored).read(str(tmp_path / saved[-1])).expect_partial()
    assert restored.get_weights()[0].shape == (1, 1)


def test_terminate_on_nan(capsys):
    x, y = _data()
    y = y.copy()
    y[1] = np.nan
    model = _model()
    history = model.fit(x, y, batch_size=2, epochs=3, verbose=0, shuffle=False,
                        callbacks=[keras.callbacks.TerminateOnNaN()])
    assert capsys.readouterr().out == "Batch 0: Invalid loss, terminating training\n"
    assert history.epoch == [0] and math.isnan(history.history["loss"][0])
    with pytest.raises(RuntimeError, match="NaN or Inf loss encountered at batch 0"):
        model.fit(x, y, batch_size=2, verbose=0,
                  callbacks=[keras.callbacks.TerminateOnNaN(raise_error=True)])


def test_lambda_callback_batch_hooks_fire():
    x, y = _data()
    model = _model()
    seen = []
    cb = keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(
        (batch, sorted(logs))))
    model.fit(x, y, batch_size=2, epochs=1, verbose=0, callbacks=[cb])
    assert seen == [(0, ["loss"]), (1, ["loss"])]


def test_hook_order_and_params():
    x, y = _data()
    model = _model()
    calls = []

    class Recorder(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            calls.append(("train_begin", dict(self.params)))

        def on_epoch_begin(self, epoch, logs=None):
            calls.append(("epoch_begin", epoch))

        def on_batch_end(self, batch, logs=None):  # the older name still fires
            calls.append(("batch_end", batch, sorted(logs)))

        def on_test_begin(self, logs=None):
            calls.append(("test_begin",))

        def on_epoch_end(self, epoch, logs=None):
            calls.append(("epoch_end", epoch, sorted(logs)))

        def on_train_end(self, logs=None):
            calls.append(("train_end", sorted(logs)))

    model.fit(x, y, batch_size=3, epochs=1, verbose=0, validation_data=(x, y),
              callbacks=[Recorder()])
    assert calls == [("train_begin", {"verbose": 0, "epochs": 1, "steps": 2}),
                     ("epoch_begin", 0), ("batch_end", 0, ["loss"]), ("batch_end", 1, ["loss"]),
                     ("test_begin",), ("epoch_end", 0, ["loss", "val_loss"]),
                     ("train_end", ["loss", "val_loss"])]


def test_model_checkpoint_file_names_follow_keras(tmp_path):
    # Keras 3.15's ValueErrors, recorded.
    with pytest.raises(ValueError, match="When using `save_weights_only=True` in "
                                         "`ModelCheckpoint`, the filepath provided must end in "
                                         "`.weights.h5` \\(Keras weights format\\). Received: "
                                         "filepath=w.ckpt"):
        keras.callbacks.ModelCheckpoint("w.ckpt", save_weights_only=True)
    with pytest.raises(ValueError, match="The filepath provided must end in `.keras` \\(Keras "
                                         "model format\\). Received: filepath=m.ckpt"):
        keras.callbacks.ModelCheckpoint("m.ckpt")
    x, y = _data()
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(optimizer=tf.optimizers.SGD(0.01), loss="mse")
    path = str(tmp_path / "m-{epoch}.keras")
    model.fit(x, y, epochs=2, verbose=0, callbacks=[keras.callbacks.ModelCheckpoint(path)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m-1.keras", "m-2.keras"]
    loaded = keras.models.load_model(str(tmp_path / "m-2.keras"))
    for a, b in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_model_checkpoint_on_a_keras_model_writes_load_weights_files(tmp_path):
    x, y = _data()
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(optimizer=tf.optimizers.SGD(0.01), loss="mse")
    path = str(tmp_path / "m-{epoch}.weights.h5")
    model.fit(x, y, epochs=2, verbose=0,
              callbacks=[keras.callbacks.ModelCheckpoint(path, save_weights_only=True)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m-1.weights.h5", "m-2.weights.h5"]
    other = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    other.load_weights(str(tmp_path / "m-2.weights.h5"))
    for a, b in zip(other.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)


# Keras 3.15's `_direction` of each metric class (None: Keras sets none), recorded from
# `getattr(keras.metrics.<Name>(), "_direction", None)`.
KERAS_DIRECTIONS = {
    "Mean": None, "Sum": None, "MeanSquaredError": "down", "RootMeanSquaredError": "down",
    "MeanAbsoluteError": "down", "MeanAbsolutePercentageError": "down",
    "MeanSquaredLogarithmicError": "down", "CosineSimilarity": "up", "LogCoshError": "down",
    "AUC": "up", "FalseNegatives": None, "FalsePositives": None, "Precision": "up",
    "Recall": "up", "TrueNegatives": None, "TruePositives": None, "Hinge": "down",
    "SquaredHinge": "down", "CategoricalHinge": "down", "KLDivergence": "down",
    "Poisson": "down", "BinaryCrossentropy": "down", "CategoricalCrossentropy": "down",
    "SparseCategoricalCrossentropy": "down", "Accuracy": "up", "BinaryAccuracy": "up",
    "CategoricalAccuracy": "up", "SparseCategoricalAccuracy": "up",
    "TopKCategoricalAccuracy": "up", "SparseTopKCategoricalAccuracy": "up"}


def test_metric_directions_are_keras():
    got = {name: getattr(getattr(keras.metrics, name)(), "_direction", None)
           for name in KERAS_DIRECTIONS}
    assert got == KERAS_DIRECTIONS
    # a wrapped Keras loss (function or loss-class instance) is minimised; other functions
    # get no direction
    wrap = keras.metrics.MeanMetricWrapper
    assert wrap(keras.losses.mean_squared_error)._direction == "down"
    assert wrap(keras.losses.MeanSquaredError())._direction == "down"
    assert not hasattr(wrap(lambda t, p: p), "_direction")


def _classifier():
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(2, activation="softmax")])
    x = np.array([[1.0], [-1.0], [2.0], [-2.0]], "float32")
    return model, x, np.array([0, 1, 0, 1])


@pytest.mark.parametrize("metrics, monitor, op", [
    (["accuracy"], "val_accuracy", "greater"),  # SparseCategoricalAccuracy: up
    (["acc"], "acc", "greater"),
    (["sparse_categorical_crossentropy"], "val_sparse_categorical_crossentropy",
     "less"),  # the metric class: down
    ([keras.losses.sparse_categorical_crossentropy], "sparse_categorical_crossentropy",
     "less"),  # a wrapped loss function: down
    (["accuracy"], "val_loss", "less"),
])
def test_auto_mode_follows_the_compiled_metrics_direction(metrics, monitor, op, tmp_path):
    model, x, y = _classifier()
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=metrics)
    for cb in (keras.callbacks.EarlyStopping(monitor=monitor, patience=5),
               keras.callbacks.ReduceLROnPlateau(monitor=monitor),
               keras.callbacks.ModelCheckpoint(str(tmp_path / "m.weights.h5"),
                                               save_weights_only=True, monitor=monitor)):
        model.fit(x, y, epochs=1, verbose=0, validation_data=(x, y), callbacks=[cb])
        assert cb.monitor_op is not None and (cb.monitor_op(1.0, 0.0) == (op == "greater"))


@pytest.mark.parametrize("monitor", ["val_out1_accuracy", "precision_like", "out1_loss"])
def test_auto_mode_cannot_resolve_names_keras_cannot(monitor):
    # Keras looks only at compile's metrics by their own names: a multi-output model's
    # prefixed names and the per-output loss trackers stay unresolved
    inputs = keras.Input((1,))
    out1 = keras.layers.Dense(2, activation="softmax", name="out1")(inputs)
    out2 = keras.layers.Dense(1, name="out2")(inputs)
    model = keras.Model(inputs, [out1, out2])
    model.compile("sgd", ["sparse_categorical_crossentropy", "mse"],
                  metrics=[["accuracy"], ["mae"]])
    x = np.array([[1.0], [-1.0]], "float32")
    cb = keras.callbacks.EarlyStopping(monitor=monitor)
    with pytest.raises(ValueError, match=f"EarlyStopping callback received monitor={monitor}, "
                                         "but Keras isn't able to automatically determine"):
        model.fit(x, [np.array([0, 1]), x], epochs=1, verbose=0, validation_data=(
            x, [np.array([0, 1]), x]), callbacks=[cb])
