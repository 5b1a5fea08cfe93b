"""Local-device strategy scenarios run in a fresh process (each configures its own devices):
the devices and data every scenario starts from, a small training loop over a strategy, and
the runner."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Two logical CPUs (`DEVICES == "cpu"`) or two simulated GPUs, their names in `NAMES`; data
#: `X`, `Y`; and `train(strategy, opt_cls, traced)`: 3 epochs of a linear least-squares model
#: (batch 8, loss summed over the global batch's 8 examples), eager or traced, returning
#: (w, b, the last step's summed loss, the optimizer).
SETUP = """
import numpy as np
import eager as tf
if DEVICES == "cpu":
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    NAMES = ["/cpu:0", "/cpu:1"]
else:
    NAMES = ["/gpu:0", "/gpu:1"]
rng = np.random.RandomState(0)
X = rng.randn(16, 3).astype(np.float32)
Y = rng.randn(16, 1).astype(np.float32)

def train(strategy, opt_cls, traced):
    with strategy.scope():
        w = tf.Variable(np.ones((3, 1), np.float32))
        b = tf.Variable(np.zeros((1,), np.float32))
        opt = opt_cls(0.1)
    ds = strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((X, Y)).batch(8))

    def step(xb, yb):
        with tf.GradientTape() as tape:
            per_example = tf.reduce_sum((tf.matmul(xb, w) + b - yb) ** 2, axis=1)
            loss = tf.reduce_sum(per_example) / 8.0
        grads = tape.gradient(loss, [w, b])
        opt.apply_gradients(zip(grads, [w, b]))
        return loss

    def outer(xb, yb):
        return strategy.reduce("SUM", strategy.run(step, (xb, yb)), axis=None)
    run = tf.function(outer) if traced else outer
    for _ in range(3):
        for xb, yb in ds:
            losses = run(xb, yb)
    return w, b, losses, opt
"""


def run_scenario(body, devices="cpu", prelude="", cpus_only=False, timeout_s=300) -> str:
    """`prelude`, `SETUP` and `body` (dedented) in a fresh process with 2 logical CPUs
    (`devices="cpu"`) or 2 simulated GPUs; its stdout. The suite's own simulated GPUs are
    passed on unless `cpus_only`."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if cpus_only:
        env.pop("EAGER_SIMULATED_GPUS", None)
    if devices == "gpu":
        env["EAGER_SIMULATED_GPUS"] = "2"
    code = f"DEVICES = {devices!r}\n" + SETUP + textwrap.dedent(prelude) + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=timeout_s)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout
