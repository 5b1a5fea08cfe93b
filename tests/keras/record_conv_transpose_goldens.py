"""Records tests/fixtures/keras_conv_transpose_goldens.json for tests/keras/test_conv_transpose.py:
`tf.nn.conv2d_transpose` values and gradients (TF 2.21), and Keras 3.15's Conv1DTranspose /
Conv2DTranspose / DepthwiseConv2D / SeparableConv2D outputs, input gradients, configs and
argument errors.

    /tmp/tfvenv/bin/python tests/keras/record_conv_transpose_goldens.py
Inputs and weights are layer_goldens.arr(seed, shape) (weights seeds 100, 101, ...).
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from layer_goldens import arr  # noqa: E402
from conv_transpose_cases import ERROR_CASES, LAYER_CASES, OP_CASES  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "fixtures",
                   "keras_conv_transpose_goldens.json")

def record_op(case):
    xs, ws, out, strides, padding, fmt = case
    x, w = tf.constant(arr(1, xs)), tf.constant(arr(2, ws))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        y = tf.nn.conv2d_transpose(x, w, out, strides, padding, fmt)
        loss = tf.reduce_sum(y * arr(7, tuple(y.shape)))
    return {"value": y.numpy().tolist(), "dx": tape.gradient(loss, x).numpy().tolist(),
            "dw": tape.gradient(loss, w).numpy().tolist()}


def record_layer(case):
    cls, kwargs, shape = case
    layer = getattr(keras.layers, cls)(**kwargs)
    x = tf.constant(arr(0, shape))
    layer(x)
    layer.set_weights([arr(100 + i, tuple(w.shape)) for i, w in enumerate(layer.weights)])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        loss = tf.reduce_sum(y * arr(7, tuple(y.shape)))
    return {"value": y.numpy().tolist(), "dx": tape.gradient(loss, x).numpy().tolist(),
            "config": json.loads(json.dumps(layer.get_config())),
            "weight_shapes": [list(w.shape) for w in layer.weights]}


def record_error(case):
    cls, kwargs = case
    try:
        getattr(keras.layers, cls)(**kwargs)
    except Exception as e:  # noqa: BLE001 - the golden is whatever Keras raises
        return {"type": type(e).__name__, "message": str(e)}
    return {"type": None, "message": None}


goldens = {"op": {k: record_op(v) for k, v in OP_CASES.items()},
           "layers": {k: record_layer(v) for k, v in LAYER_CASES.items()},
           "errors": {k: record_error(v) for k, v in ERROR_CASES.items()}}
with open(OUT, "w") as f:
    json.dump(goldens, f, separators=(",", ":"))
    f.write("\n")
print("wrote", OUT)
