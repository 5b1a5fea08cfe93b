"""Records the Keras 3 goldens that tests/keras/test_losses.py and test_metrics.py compare with.

Run with a Python that has Keras 3 on the TensorFlow backend (the suite itself never imports
Keras):  /tmp/tfvenv/bin/python tests/keras/record_keras_goldens.py
It rewrites tests/keras/keras_goldens.py: every case below with the values Keras computed.
"""

import os
import pprint
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from keras.src.metrics import accuracy_metrics  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from keras_cases import LOSS_CASES, METRIC_CASES, FUNCTION_CASES  # noqa: E402


def _value(x):
    return np.asarray(x).tolist()


def _tensor(value, dtype=None):
    return tf.constant(np.asarray(value, dtype=dtype) if dtype else np.asarray(value))


def record_loss(case):
    cls = getattr(keras.losses, case["cls"])
    loss = cls(**case.get("kwargs", {}))
    y_true = np.asarray(case["y_true"], dtype=case.get("true_dtype", "float32"))
    y_pred = _tensor(case["y_pred"], case.get("pred_dtype", "float32"))
    if "mask" in case:
        y_pred._keras_mask = _tensor(case["mask"], "bool")
    sw = case.get("sample_weight")
    sw = None if sw is None else np.asarray(sw, dtype="float32")
    out = loss(y_true, y_pred, sample_weight=sw)
    return {"value": _value(out), "dtype": out.dtype.name}


def record_metric(case):
    metric = getattr(keras.metrics, case["cls"])(**case.get("kwargs", {}))
    results = []
    for update in case["updates"]:
        sw = update.get("sample_weight")
        sw = None if sw is None else np.asarray(sw, "float32")
        if "values" in update:
            metric.update_state(np.asarray(update["values"], "float32"), sample_weight=sw)
            results.append(_value(metric.result()))
            continue
        y_true = np.asarray(update["y_true"], dtype=update.get("true_dtype", "float32"))
        y_pred = np.asarray(update["y_pred"], dtype="float32")
        metric.update_state(y_true, y_pred, sample_weight=sw)
        results.append(_value(metric.result()))
    return {"results": results, "config": _clean(metric.get_config())}


def _clean(config):
    def plain(v):
        if hasattr(v, "numpy"):
            v = v.numpy()
        if isinstance(v, list):
            return [plain(item) for item in v]
        return v.tolist() if hasattr(v, "tolist") else v
    return {k: plain(v) for k, v in config.items()}


def record_function(case):
    module = getattr(keras, case["module"])
    fn = getattr(module, case["fn"]) if hasattr(module, case["fn"]) else None
    if fn is None:  # `accuracy` is not exported by Keras 3
        fn = getattr(accuracy_metrics, case["fn"])
    y_true = np.asarray(case["y_true"], dtype=case.get("true_dtype", "float32"))
    y_pred = np.asarray(case["y_pred"], dtype="float32")
    out = fn(y_true, y_pred, **case.get("kwargs", {}))
    return {"value": _value(out), "shape": list(np.shape(out))}


def _recorded(record, case):
    try:
        return record(case)
    except Exception as error:  # noqa: BLE001 - the golden is the error
        return {"error": type(error).__name__, "message": str(error).split("\n")[0][:300]}


def main():
    goldens = {
        "losses": [_recorded(record_loss, case) for case in LOSS_CASES],
        "metrics": [_recorded(record_metric, case) for case in METRIC_CASES],
        "functions": [_recorded(record_function, case) for case in FUNCTION_CASES],
    }
    path = os.path.join(os.path.dirname(__file__), "keras_goldens.py")
    with open(path, "w") as f:
        f.write('"""Keras 3.15 (TensorFlow backend) results for tests/keras/keras_cases.py,\n'
                'written by tests/keras/record_keras_goldens.py (do not edit by hand)."""\n\n')
        f.write("GOLDENS = " + pprint.pformat(goldens, width=100, compact=True) + "\n")


if __name__ == "__main__":
    main()
