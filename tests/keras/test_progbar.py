"""keras.utils.Progbar and the ProgbarLogger `fit` prints: Keras 3's exact text.

Goldens were recorded from Keras 3.15 (TF backend) with `time.time` replaced by a fake clock,
so the times in them (ETA, elapsed, per step) are exact."""

import re

import numpy as np
import pytest

import eager as tf
from eager import keras
from eager.keras.utils import progbar as progbar_module

B = "\x08"


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def time(self):
        return self.now


def _run(monkeypatch, capsys, verbose, target, steps):
    clock = FakeClock()
    monkeypatch.setattr(progbar_module, "time", clock)
    bar = keras.utils.Progbar(target, verbose=verbose)
    for current, dt, values in steps:
        clock.now += dt
        bar.update(current, values)
    return capsys.readouterr().out


PB1 = ("\r\x1b[1m1/5\x1b[0m \x1b[32m━━━━\x1b[0m\x1b[37m━━━━━━━━━━━━━━━━\x1b[0m \x1b[1m2s\x1b[0m "
       "500ms/step - loss: 1.0000" + B * 53 +
       "\r\x1b[1m3/5\x1b[0m \x1b[32m━━━━━━━━━━━━\x1b[0m\x1b[37m━━━━━━━━\x1b[0m \x1b[1m0s\x1b[0m "
       "51ms/step - loss: 0.5833 - acc: 1.0000e-04" + B * 70 +
       "\r\x1b[1m5/5\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m \x1b[1m1s\x1b[0m "
       "75ms/step - loss: 0.2000 - acc: 0.5000    \n")


def test_verbose_1_lines_eta_averages_and_interval(monkeypatch, capsys):
    # step 2 comes 2 ms after step 1 (< interval): not drawn, but averaged in
    out = _run(monkeypatch, capsys, 1, 5, [
        (1, 0.5, [("loss", 1.0)]), (2, 0.002, [("loss", 0.5)]),
        (3, 0.1, [("loss", 0.25), ("acc", 0.0001)]), (5, 0.2, [("loss", 0.2), ("acc", 0.5)])])
    assert out == PB1


def test_verbose_2_prints_one_line_at_the_end(monkeypatch, capsys):
    out = _run(monkeypatch, capsys, 2, 5, [(1, 0.5, [("loss", 1.0)]),
                                           (5, 2.0, [("loss", 0.2), ("neg", -0.5)])])
    # Keras's verbose=2 compares the signed value, so a negative one is in exponent form
    assert out == "5/5 - 2s - 500ms/step - loss: 0.2000 - neg: -5.0000e-01\n"


PB3 = ("\r\x1b[1m   1/1000\x1b[0m \x1b[37m━━━━━━━━━━━━━━━━━━━━\x1b[0m \x1b[1m0s\x1b[0m "
       "500us/step - loss: 1.0000" + B * 59 +
       "\r\x1b[1m  10/1000\x1b[0m \x1b[37m━━━━━━━━━━━━━━━━━━━━\x1b[0m \x1b[1m6:06:40\x1b[0m "
       "22s/step - loss: 2.7778" + B * 62 +
       "\r\x1b[1m  20/1000\x1b[0m \x1b[37m━━━━━━━━━━━━━━━━━━━━\x1b[0m \x1b[1m3:00:31\x1b[0m "
       "11s/step - loss: 2.7778")


def test_units_hours_eta_and_padding(monkeypatch, capsys):
    out = _run(monkeypatch, capsys, 1, 1000, [
        (1, 0.0005, [("loss", 1.0)]), (2, 0.0003, []), (10, 200.0, [("loss", 3.0)]),
        (20, 10.0, [])])
    assert out == PB3


def test_unknown_target(monkeypatch, capsys):
    out = _run(monkeypatch, capsys, 1, None, [(1, 1.5, [("loss", 1.0)]),
                                              (3, 4.0, [("loss", 2.0)])])
    assert out == ("\r      1/Unknown \x1b[1m2s\x1b[0m 2s/step - loss: 1.0000" + B * 41 +
                   "\r      3/Unknown \x1b[1m6s\x1b[0m 2s/step - loss: 1.6667")


def test_stateful_and_stateless_are_exclusive():
    with pytest.raises(ValueError, match="Only one of `stateful_metrics` or "
                                         "`stateless_metrics` can be provided"):
        keras.utils.Progbar(3, stateful_metrics=["a"], stateless_metrics=["b"])


class _Linear(keras.layers.Layer):
    def build(self, shape):
        self.kernel = self.add_weight((shape[-1], 1), initializer="ones", name="kernel")

    def call(self, x):
        return tf.matmul(x, self.kernel)


class _Model(keras.trainers.Trainer, _Linear):
    pass


def _mse(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)


def _normalise(text):
    return re.sub(r"\d+(m|u)?s/step", "T/step", re.sub(r"\d+s\x1b", "Ts\x1b", text))


def test_fit_prints_keras_lines(capsys):
    # Keras 3.15 printed, for 2 epochs of 4 steps (times replaced by T): "Epoch i/2", then
    # the bar redrawn in place ending "\n"; verbose=2 one line with the val_ values.
    x = np.arange(20, dtype="float32").reshape(10, 2) / 10
    y = np.ones((10, 1), "float32")
    model = _Model()
    model.compile(optimizer=tf.optimizers.SGD(0.01), loss=_mse)
    model.fit(x, y, batch_size=3, epochs=2, shuffle=False)
    out = _normalise(capsys.readouterr().out)
    lines = out.split("\n")
    assert lines[0] == "Epoch 1/2"
    final = lines[1].split("\r")[-1]
    assert final.startswith("\x1b[1m4/4\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m "
                            "\x1b[1mTs\x1b[0m T/step - loss: ")
    assert lines[2] == "Epoch 2/2" and lines[-1] == ""
    model.fit(x, y, batch_size=3, epochs=1, shuffle=False, verbose=2, validation_split=0.2)
    out = _normalise(capsys.readouterr().out)
    assert re.fullmatch(r"3/3 - \d+s - T/step - loss: \d\.\d{4} - val_loss: \d\.\d{4}\n", out)
    model.fit(x, y, batch_size=3, epochs=1, verbose=0)
    model.evaluate(x, y, verbose=0)
    model.predict(x, verbose=0)
    assert capsys.readouterr().out == ""
