"""examples/keras_mnist_like.py: compile/fit and a custom GradientTape loop over the same batches
from the same weights learn the synthetic digits equally well."""

import importlib.util
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fit_and_the_custom_loop_reach_the_same_accuracy(capsys):
    history, fit_acc, loop_acc, model, loop_model = _load("keras_mnist_like").main(epochs=2)
    out = capsys.readouterr().out
    assert "Epoch 2/2" in out and "47/47" in out and "val_accuracy:" in out  # the progress bar
    assert fit_acc > 0.85 and fit_acc == loop_acc
    for a, b in zip(model.get_weights(), loop_model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert history.history["loss"][1] < history.history["loss"][0]
