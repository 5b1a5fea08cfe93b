"""The examples run as written and show what they claim."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from eager.devices import registry

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart_runs_and_shows_errors():
    env = dict(os.environ, PYTHONPATH=str(EXAMPLES.parent))  # eager importable even uninstalled
    out = subprocess.run([sys.executable, str(EXAMPLES / "quickstart.py")], capture_output=True,
                         text=True, check=True, env=env).stdout
    # Unscoped ops run on the default device: GPU:0 where the machine has one (the example's
    # process sees the same devices as this one).
    default = registry.default_device().name
    where = "" if default == "CPU:0" else f", device={default}"
    assert f"<eager.Tensor: shape=(2, 2), dtype=float32{where}, numpy=\narray([[" in out
    assert "InvalidArgumentError: cannot compute AddV2" in out
    assert "Matrix size-incompatible" in out


def test_mlp_example_learns_the_spirals():
    losses, accuracy = _load("train_mlp_eager").main(steps=300)
    assert losses[-1] < 0.25 * losses[0]
    assert accuracy > 0.95


def test_graph_runtime_example_fuses_runs_a_session_and_explores(capsys):
    (ops, nodes), total, (finals, real) = _load("graph_runtime").main()
    assert ops == 201 and nodes == 1  # 100 ops (+ placeholders) fused into one node
    assert total == 4.0
    assert finals == [1.0, 2.0] and real == 2.0
    out = capsys.readouterr().out
    assert "Fused[" in out and "def chain(feeds, st):" in out
    assert "def chain(x: float32[4]) -> (float32[4]):" in out  # the readable program


def test_per_example_gradients_example_vectorises_and_trains(caplog):
    gap, accuracy, vectorised, looped = _load("per_example_gradients").main(steps=30)
    assert gap == 0.0
    assert accuracy > 0.9
    # (exact on the CPU; an accelerator's batched matmuls may sum in another order)
    np.testing.assert_allclose(vectorised.numpy(), looped.numpy(), rtol=1e-5, atol=1e-6)
    assert "element by element" not in caplog.text  # nothing fell back to the loop
