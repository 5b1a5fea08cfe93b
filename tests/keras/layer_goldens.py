"""Recorded Keras 3.15 goldens for the convolution, pooling, normalization and recurrent layer
tests (tests/fixtures/keras_layers_goldens.json), and the inputs/weights they were made with."""

import json
from pathlib import Path

import numpy as np

GOLDENS = json.loads((Path(__file__).parent.parent / "fixtures" /
                      "keras_layers_goldens.json").read_text())


def arr(seed, shape):
    """The array the goldens used for `seed`: uniform in [-1, 1), float32."""
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype("float32")


def set_golden_weights(layer, seed=100):
    """Gives a built layer the weights the goldens' Keras layer had (seeds 100, 101, ...)."""
    layer.set_weights([arr(seed + i, tuple(w.shape)) for i, w in enumerate(layer.weights)])


def run_golden(layer, x, **kwargs):
    layer(x, **kwargs)
    set_golden_weights(layer)
    return layer(x, **kwargs)


def numeric_grad(f, w, eps=1e-3):
    """Central finite differences of the scalar f() with respect to variable w (float64)."""
    base = w.numpy().astype(np.float64)
    grad = np.zeros_like(base)
    for index in np.ndindex(base.shape):
        for sign in (1, -1):
            value = base.copy()
            value[index] += sign * eps
            w.assign(value.astype(np.float32))
            grad[index] += sign * float(f()) / (2 * eps)
    w.assign(base.astype(np.float32))
    return grad


def same_config(ours, keras_config, skip=("name",)):
    """Compares configs key by key; initializer configs by class name (Keras adds optional
    fields such as GlorotUniform's `input_axes`)."""
    assert set(ours) == set(keras_config), (set(ours) ^ set(keras_config))
    for key, value in keras_config.items():
        if key in skip:
            continue
        mine = ours[key]
        if isinstance(value, dict) and "class_name" in value:
            assert mine["class_name"] == value["class_name"], key
        else:
            mine = json.loads(json.dumps(mine))
            assert mine == value, (key, mine, value)
