"""Replays tests/fixtures/keras_reshaping_preprocessing_goldens.json (cases in
reshaping_preprocessing_cases.py) against eager.keras: output, dtype, config, the gradient
Keras's tape gave, and the same layer traced by `eager.function`."""

import json
from pathlib import Path

import numpy as np

import eager as tf
from eager.keras import layers

from layer_goldens import arr, same_config
from reshaping_preprocessing_cases import CASES, ERROR_CASES

GOLDENS = json.loads((Path(__file__).parent.parent / "fixtures" /
                      "keras_reshaping_preprocessing_goldens.json").read_text())


def strip_ansi(message: str) -> str:
    return message.replace("\x1b[1m", "").replace("\x1b[0m", "")


def names_of(classes) -> list:
    return sorted(n for n, c in CASES.items() if c["cls"] in classes)


def error_names_of(classes) -> list:
    return sorted(n for n, c in ERROR_CASES.items()
                  if c["cls"] in classes and GOLDENS["errors"][n]["type"] is not None)


def build(name):
    case = CASES[name]
    layer = getattr(layers, case["cls"])(**case.get("kwargs", {}))
    x = arr(case.get("seed", 0), tuple(case["shape"])) * case.get("scale", 1.0)
    if "adapt" in case:
        layer.adapt(arr(case["adapt"][0], tuple(case["adapt"][1])))
    if "weights" in case:
        layer(x)
        layer.set_weights([arr(100 + i, tuple(w.shape)) for i, w in enumerate(layer.weights)])
    return layer, x


def check_case(name, rtol=1e-5, atol=1e-6):
    golden = GOLDENS["cases"][name]
    layer, x = build(name)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt, **CASES[name].get("call", {}))
        weights = arr(7, tuple(y.shape))
        loss = tf.reduce_sum(tf.cast(y, "float32") * weights)
    expected = np.asarray(golden["value"])
    assert y.dtype.name == golden["dtype"], (y.dtype.name, golden["dtype"])
    assert tuple(y.shape) == expected.shape
    np.testing.assert_allclose(y.numpy(), expected, rtol=rtol, atol=atol)
    if "grad" in golden:
        grad = tape.gradient(loss, xt)
        np.testing.assert_allclose(tf.convert_to_tensor(grad).numpy(),
                                   np.asarray(golden["grad"]), rtol=rtol, atol=atol)
    traced = tf.function(lambda t: layer(t, **CASES[name].get("call", {})))
    np.testing.assert_allclose(traced(xt).numpy(), y.numpy(), rtol=1e-6, atol=1e-7)
    same_config(layer.get_config(), golden["config"])
    clone = type(layer).from_config(layer.get_config())
    assert json.loads(json.dumps(clone.get_config())) == \
        json.loads(json.dumps(layer.get_config()))
    return layer


def check_error(name):
    case, golden = ERROR_CASES[name], GOLDENS["errors"][name]
    layer = None
    try:
        layer = getattr(layers, case["cls"])(**case.get("kwargs", {}))
        if "shape" in case:
            layer(arr(0, tuple(case["shape"])))
        if "int_input" in case:
            layer(np.asarray(case["int_input"], "int32"))
    except Exception as e:  # noqa: BLE001 - compared with the golden below
        assert type(e).__name__ == golden["type"], (type(e), e)
        expected = strip_ansi(golden["message"])
        if layer is not None:   # Keras's auto-name in the golden is the layer's own here
            expected = expected.replace("layer 'up_sampling2d_3'", f"layer '{layer.name}'")
        # Keras's call wrapper names the argument's tensor class: tf.Tensor there, eager's here
        got = strip_ansi(str(e)).replace("eager.Tensor(", "tf.Tensor(")
        assert got == expected, (got, expected)
    else:
        raise AssertionError(f"{name}: no error raised, Keras raised {golden}")
