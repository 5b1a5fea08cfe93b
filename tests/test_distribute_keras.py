"""Keras under `eager.distribute.MirroredStrategy` (2 logical CPUs): a model built and compiled
in `strategy.scope()` gets mirrored weights and optimizer slots and sync-on-read metric
variables, and `fit` (traced and eager) splits each global batch across the replicas and ends
at the weights, losses and metrics of the same fit on one device, within float rounding.
Each scenario runs in a fresh process so it can configure its logical devices."""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from eager import keras
from eager.keras.variables import KerasVariable

ROOT = pathlib.Path(__file__).resolve().parents[1]

_SCRIPT = """
import numpy as np
import eager as tf
from eager import keras
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
rng = np.random.default_rng(0)
x = rng.normal(size=(32, 5)).astype("float32")
y = rng.normal(size=(32, 3)).astype("float32")

def build():
    return keras.Sequential([keras.Input((5,)), keras.layers.Dense(4, activation="relu"),
                             keras.layers.Dense(3)])

one = build()
start = one.get_weights()
one.compile(OPT, "mse", metrics=["mae"], run_eagerly=EAGER)
h1 = one.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    two = build()
    two.set_weights(start)
    two.compile(OPT, "mse", metrics=["mae"], run_eagerly=EAGER)
assert two.distribute_strategy is strategy
assert all(isinstance(w, tf.distribute.MirroredVariable) for w in two.weights), two.weights
assert [w.values[1].device for w in two.weights] == ["CPU:1"] * 4
h2 = two.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
slots = [v for v in two.optimizer.variables if v.shape.rank]
assert OPT == "sgd" or slots
assert all(isinstance(v, tf.distribute.MirroredVariable) for v in slots), slots
metric_vars = [v for m in two.metrics for v in m.variables]
assert metric_vars and all(isinstance(v, tf.distribute.SyncOnReadVariable) for v in metric_vars)
for a, b in zip(one.get_weights(), two.get_weights()):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
for w in two.weights:
    np.testing.assert_allclose(w.values[0].numpy(), w.values[1].numpy(), rtol=0, atol=0)
for key in ("loss", "mae"):
    np.testing.assert_allclose(h1.history[key], h2.history[key], rtol=1e-5)
assert int(two.optimizer.iterations.numpy()) == 8
np.testing.assert_allclose(one.evaluate(x, y, verbose=0), two.evaluate(x, y, verbose=0),
                           rtol=1e-5)
two.layers[0].trainable = False
assert len(two.trainable_weights) == 2 and not two.weights[0].trainable
two.layers[0].trainable = True
assert len(two.trainable_weights) == 4
print("OK")
"""


def _run(opt, eager):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    src = f"OPT = {opt!r}\nEAGER = {eager!r}\n" + textwrap.dedent(_SCRIPT)
    done = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                          env=env, cwd=str(ROOT), timeout=600)
    assert done.returncode == 0 and "OK" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("opt", ["sgd", "adam"])
@pytest.mark.parametrize("eager", [False, True], ids=["traced", "eager"])
def test_fit_under_mirrored_strategy_matches_one_device(opt, eager):
    _run(opt, eager)


def test_add_weight_outside_a_strategy_is_a_plain_keras_variable():
    layer = keras.layers.Dense(2)
    layer.build((None, 3))
    assert type(layer.kernel) is KerasVariable
    metric = keras.metrics.Mean()
    assert type(metric.variables[0]).__name__ == "ResourceVariable"
