"""Records tests/fixtures/keras_reshaping_preprocessing_goldens.json, the Keras 3.15 goldens of
tests/keras/test_reshaping_layers.py and test_preprocessing_layers.py.

Run with a Python that has Keras 3 on the TensorFlow backend (the suite never imports Keras):
    /tmp/tfvenv/bin/python tests/keras/record_reshaping_preprocessing_goldens.py
Inputs are layer_goldens.arr(seed, shape); each case records the output, the config and, where
asked, the gradient of sum(output * arr(7, output.shape)) with respect to the input.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from layer_goldens import arr  # noqa: E402
from reshaping_preprocessing_cases import CASES, CATEGORY_CASES, ERROR_CASES  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "fixtures",
                   "keras_reshaping_preprocessing_goldens.json")


def record(case):
    layer = getattr(keras.layers, case["cls"])(**case.get("kwargs", {}))
    x = arr(case.get("seed", 0), tuple(case["shape"])) * case.get("scale", 1.0)
    if "adapt" in case:
        layer.adapt(arr(case["adapt"][0], tuple(case["adapt"][1])))
    if "weights" in case:
        layer(x)
        layer.set_weights([arr(100 + i, tuple(w.shape)) for i, w in enumerate(layer.weights)])
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt, **case.get("call", {}))
        loss = tf.reduce_sum(tf.cast(y, "float32") * arr(7, tuple(y.shape)))
    out = {"value": np.asarray(y).tolist(), "dtype": y.dtype.name,
           "config": json.loads(json.dumps(layer.get_config()))}
    if case.get("grad"):
        out["grad"] = np.asarray(tape.gradient(loss, xt)).tolist()
    return out


def record_category(kwargs, x, call):
    layer = keras.layers.CategoryEncoding(**kwargs)
    call = {k: np.asarray(v, "float32") for k, v in call.items()}
    y = layer(np.asarray(x, "int32"), **call)
    return {"value": np.asarray(y).tolist(), "dtype": y.dtype.name,
            "config": json.loads(json.dumps(layer.get_config()))}


def record_error(case):
    try:
        layer = getattr(keras.layers, case["cls"])(**case.get("kwargs", {}))
        if "shape" in case:
            layer(arr(0, tuple(case["shape"])))
        if "int_input" in case:
            layer(np.asarray(case["int_input"], "int32"))
    except Exception as e:  # noqa: BLE001 - the golden is whatever Keras raises
        return {"type": type(e).__name__, "message": str(e)}
    return {"type": None, "message": None}


goldens = {"cases": {name: record(case) for name, case in CASES.items()},
           "errors": {name: record_error(case) for name, case in ERROR_CASES.items()},
           "category": {name: record_category(*case) for name, case in CATEGORY_CASES.items()}}
with open(OUT, "w") as f:
    json.dump(goldens, f, indent=None, separators=(",", ":"))
    f.write("\n")
print("wrote", OUT)
