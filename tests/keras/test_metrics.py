"""`eager.keras.metrics` against Keras 3 (TensorFlow backend): every metric on the recorded
cases (tests/keras/keras_cases.py, goldens in keras_goldens.py) after each update, configs,
get/serialize, tracing inside `eager.function`, reset, and checkpoints."""

import numpy as np
import pytest

import eager
from eager import keras
from tests.keras.keras_cases import FUNCTION_CASES, METRIC_CASES
from tests.keras.keras_goldens import GOLDENS

metrics = keras.metrics


def _update(metric, update):
    sw = update.get("sample_weight")
    sw = None if sw is None else np.asarray(sw, "float32")
    if "values" in update:
        metric.update_state(np.asarray(update["values"], "float32"), sample_weight=sw)
    else:
        metric.update_state(np.asarray(update["y_true"], update.get("true_dtype", "float32")),
                            np.asarray(update["y_pred"], "float32"), sample_weight=sw)


@pytest.mark.parametrize("index", range(len(METRIC_CASES)),
                         ids=[f"{i}-{c['cls']}" for i, c in enumerate(METRIC_CASES)])
def test_metric_matches_keras(index):
    case, golden = METRIC_CASES[index], GOLDENS["metrics"][index]
    metric = getattr(metrics, case["cls"])(**case["kwargs"])
    for update, expected in zip(case["updates"], golden["results"]):
        _update(metric, update)
        np.testing.assert_allclose(metric.result().numpy(), expected, rtol=1e-5, atol=1e-6)
    config = metric.get_config()
    expected_config = dict(golden["config"])
    expected_config["name"] = config["name"]  # auto-numbered names depend on creation order
    if case["cls"] == "CosineSimilarity":
        expected_config["axis"] = -1  # beyond Keras: the config keeps `axis`
    assert config == expected_config


@pytest.mark.parametrize("index", [i for i, c in enumerate(FUNCTION_CASES)
                                   if c["module"] == "metrics"])
def test_metric_function_matches_keras(index):
    case, golden = FUNCTION_CASES[index], GOLDENS["functions"][index]
    fn = getattr(metrics, case["fn"])
    out = fn(np.asarray(case["y_true"], dtype=case.get("true_dtype", "float32")),
             np.asarray(case["y_pred"], dtype="float32"), **case.get("kwargs", {}))
    assert out.dtype == eager.float32
    assert list(out.shape) == golden["shape"]
    np.testing.assert_allclose(out.numpy(), golden["value"])


# -- get / serialize ----------------------------------------------------------------------------

def test_get_returns_new_instances_by_keras_names():
    # Keras 3: a string names a class (also in snake case) and gives a fresh instance.
    for name, cls in [("accuracy", metrics.Accuracy), ("Accuracy", metrics.Accuracy),
                      ("binary_accuracy", metrics.BinaryAccuracy), ("auc", metrics.AUC),
                      ("mse", metrics.MeanSquaredError), ("MAE", metrics.MeanAbsoluteError),
                      ("bce", metrics.BinaryCrossentropy), ("precision", metrics.Precision),
                      ("top_k_categorical_accuracy", metrics.TopKCategoricalAccuracy),
                      ("root_mean_squared_error", metrics.RootMeanSquaredError)]:
        metric = metrics.get(name)
        assert type(metric) is cls
        assert metrics.get(name) is not metric
    assert metrics.get(metrics.binary_accuracy) is metrics.binary_accuracy
    assert metrics.get(None) is None
    config = {"class_name": "BinaryAccuracy", "config": {"threshold": 0.7}}
    assert metrics.get(config).threshold == 0.7


@pytest.mark.parametrize("identifier", ["acc", "nope", 3, "f1_score"])
def test_get_unknown_identifier_is_keras_value_error(identifier):
    with pytest.raises(ValueError, match=f"^Could not interpret metric identifier: "
                                         f"{identifier}$"):
        metrics.get(identifier)


def test_serialize_is_keras_dict_and_round_trips():
    # Goldens: keras.metrics.serialize(...) in Keras 3.15.
    assert metrics.serialize(metrics.AUC(name="auc")) == {
        "module": "keras.metrics", "class_name": "AUC",
        "config": {"name": "auc", "dtype": "float32", "num_thresholds": 200, "curve": "ROC",
                   "summation_method": "interpolation", "multi_label": False,
                   "num_labels": None, "label_weights": None, "from_logits": False},
        "registered_name": None}
    assert metrics.serialize(metrics.MeanMetricWrapper(metrics.mean_squared_error,
                                                       name="w")) == {
        "module": "keras.metrics", "class_name": "MeanMetricWrapper",
        "config": {"name": "w", "dtype": "float32",
                   "fn": {"module": "builtins", "class_name": "function",
                          "config": "mean_squared_error", "registered_name": "function"}},
        "registered_name": None}
    for metric in [metrics.AUC(num_thresholds=7, curve="PR", name="a"),
                   metrics.AUC(thresholds=[0.2, 0.6], name="b"),
                   metrics.Precision(thresholds=[0.3, 0.6], top_k=2, class_id=1, name="p"),
                   metrics.SparseTopKCategoricalAccuracy(k=3, from_sorted_ids=True, name="s"),
                   metrics.MeanMetricWrapper(metrics.binary_accuracy, threshold=0.2, name="m"),
                   metrics.Mean(name="loss", dtype="float64")]:
        clone = metrics.deserialize(metrics.serialize(metric))
        assert type(clone) is type(metric) and clone.get_config() == metric.get_config()
    wrapped = metrics.deserialize(metrics.serialize(
        metrics.MeanMetricWrapper(metrics.binary_accuracy, threshold=0.2, name="m")))
    assert wrapped._fn is metrics.binary_accuracy and wrapped._fn_kwargs == {"threshold": 0.2}


# -- the Metric base --------------------------------------------------------------------------

def test_metric_state_is_non_trainable_variables_in_creation_order():
    auc = metrics.AUC(num_thresholds=5)
    assert [v.name.split("/")[-1] for v in auc.variables] == [
        "true_positives:0", "false_positives:0", "true_negatives:0", "false_negatives:0"]
    assert all(isinstance(v, eager.Variable) and not v.trainable for v in auc.variables)
    assert metrics.Mean(dtype="float64").variables[0].dtype == eager.float64
    assert metrics.Mean().dtype == "float32" and repr(metrics.Mean()) == "<Mean name=mean>"


def test_custom_metric_with_sub_metric_and_reset():
    class Both(metrics.Metric):
        def __init__(self):
            super().__init__(name="both")
            self.hits = self.add_variable((), "zeros", name="hits")
            self.inner = metrics.Mean()

        def update_state(self, values):
            self.hits.assign_add(eager.reduce_sum(eager.cast(eager.constant(values) > 0,
                                                             "float32")))
            self.inner.update_state(values)

        def result(self):
            return self.hits * self.inner.result()

    metric = Both()
    assert len(metric.variables) == 3
    assert metric([1.0, -2.0, 4.0]).numpy() == pytest.approx(2.0)
    metric.reset_state()
    assert [v.numpy() for v in metric.variables] == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="Invalid value for argument `aggregation`"):
        metric.add_variable((), "zeros", aggregation="max")

    class Forgot(metrics.Metric):
        def __init__(self):
            self.total = self.add_variable((), "zeros")

    with pytest.raises(RuntimeError, match="You forgot to call `super\\(\\).__init__\\(\\)`"):
        Forgot()


@pytest.mark.parametrize("make", [
    lambda: metrics.AUC(), lambda: metrics.AUC(multi_label=True, curve="PR"),
    lambda: metrics.Precision(thresholds=[0.2, 0.5]), lambda: metrics.Recall(top_k=2),
    lambda: metrics.BinaryAccuracy(), lambda: metrics.SparseCategoricalAccuracy(),
    lambda: metrics.Mean(), lambda: metrics.RootMeanSquaredError(),
    lambda: metrics.TruePositives(thresholds=[0.0, 0.5, 1.0])])
def test_reset_state_starts_over(make):
    metric, fresh = make(), make()
    y_true = np.array([[1, 0, 1], [0, 1, 1]], "float32")
    y_pred = np.array([[0.9, 0.4, 0.2], [0.1, 0.8, 0.7]], "float32")
    args = ((y_true.argmax(-1), y_pred) if isinstance(metric, metrics.SparseCategoricalAccuracy)
            else (y_pred,) if type(metric) is metrics.Mean else (y_true, y_pred))
    metric.update_state(*args)
    metric.update_state(*args)
    metric.reset_state()
    assert all(not np.any(v.numpy()) for v in metric.variables)
    metric.update_state(*args)
    fresh.update_state(*args)
    np.testing.assert_allclose(metric.result().numpy(), fresh.result().numpy())


# -- errors ----------------------------------------------------------------------------------

def test_argument_errors_are_keras_value_errors():
    with pytest.raises(ValueError, match=r"Threshold values must be in \[0, 1\]\. "
                                         r"Received: \[1\.5\]"):
        metrics.Precision(thresholds=[0.5, 1.5])
    with pytest.raises(ValueError, match=r"Argument `num_thresholds` must be an integer > 1\. "
                                         r"Received: num_thresholds=1"):
        metrics.AUC(num_thresholds=1)
    with pytest.raises(ValueError, match=r'Invalid AUC curve value: "ROCK"\. Expected values '
                                         r'are \["PR", "ROC", "PRGAIN"\]'):
        metrics.AUC(curve="ROCK")
    with pytest.raises(ValueError, match="Invalid AUC summation method value"):
        metrics.AUC(summation_method="trapezoid")
    with pytest.raises(ValueError, match="`num_labels` is needed only when `multi_label` is"):
        metrics.AUC(num_labels=3)
    with pytest.raises(ValueError, match=r"`y_pred` must have rank 2 when `multi_label=True`"):
        metrics.AUC(multi_label=True).update_state([1.0, 0.0], [0.3, 0.2])
    with pytest.raises(ValueError, match="When class_id is provided, y_pred must be a 2D"):
        metrics.Precision(class_id=1).update_state([1.0, 0.0], [0.3, 0.2])
    with pytest.raises(eager.errors.InvalidArgumentError):
        metrics.Accuracy().update_state(np.ones((2, 3)), np.ones((2, 4)))


# -- inside eager.function, and in checkpoints --------------------------------------------------

def _batches():
    rs = np.random.RandomState(3)
    for _ in range(4):
        yield (eager.constant((rs.rand(8, 3) > 0.5).astype("float32")),
               eager.constant(rs.rand(8, 3).astype("float32")),
               eager.constant(rs.rand(8).astype("float32")))


@pytest.mark.parametrize("make", [
    lambda: metrics.AUC(), lambda: metrics.AUC(curve="PR", multi_label=True, num_labels=3),
    lambda: metrics.Precision(thresholds=[0.3, 0.6]), lambda: metrics.Recall(class_id=1),
    lambda: metrics.Precision(top_k=1), lambda: metrics.BinaryAccuracy(),
    lambda: metrics.CategoricalAccuracy(), lambda: metrics.TopKCategoricalAccuracy(k=2),
    lambda: metrics.MeanSquaredError(), lambda: metrics.RootMeanSquaredError(),
    lambda: metrics.FalseNegatives(), lambda: metrics.AUC(thresholds=[0.1, 0.5, 0.8])])
def test_metric_in_function_traces_once_and_matches_eager(make):
    traced_metric, eager_metric = make(), make()
    traces = []

    @eager.function
    def update(y_true, y_pred, sample_weight):
        traces.append(1)
        traced_metric.update_state(y_true, y_pred, sample_weight=sample_weight)
        return traced_metric.result()

    for y_true, y_pred, sw in _batches():
        got = update(y_true, y_pred, sw)
        eager_metric.update_state(y_true, y_pred, sample_weight=sw)
        np.testing.assert_allclose(got.numpy(), eager_metric.result().numpy(), rtol=1e-6)
    assert len(traces) == 1


def test_metrics_save_and_restore_with_checkpoint(tmp_path):
    mean, auc, lazy = metrics.Mean(), metrics.AUC(num_thresholds=9), metrics.AUC(
        multi_label=True)
    for y_true, y_pred, sw in _batches():
        mean.update_state(y_pred)
        auc.update_state(y_true, y_pred, sample_weight=sw)
        lazy.update_state(y_true, y_pred)
    expected = [m.result().numpy() for m in (mean, auc, lazy)]
    path = eager.train.Checkpoint(mean=mean, auc=auc, lazy=lazy).save(str(tmp_path / "ckpt"))

    fresh = [metrics.Mean(), metrics.AUC(num_thresholds=9), metrics.AUC(multi_label=True)]
    eager.train.Checkpoint(mean=fresh[0], auc=fresh[1], lazy=fresh[2]).restore(path)
    assert fresh[0].result().numpy() == expected[0]
    np.testing.assert_allclose(fresh[1].result().numpy(), expected[1])
    # The multi-label AUC makes its variables on its first update: the restored counts wait
    # for them, and arrive when they are made.
    y_true, y_pred, _ = next(_batches())
    fresh[2].update_state(y_true, y_pred * 0.0 + 2.0)  # all above every threshold: adds tp/fp
    reference = metrics.AUC(multi_label=True)
    for y_true_b, y_pred_b, _ in _batches():
        reference.update_state(y_true_b, y_pred_b)
    reference.update_state(y_true, y_pred * 0.0 + 2.0)
    np.testing.assert_allclose(fresh[2].result().numpy(), reference.result().numpy())
