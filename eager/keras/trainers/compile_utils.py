"""What `compile` turns its `loss` and `metrics` arguments into: the compiled loss (Keras's
"sum_over_batch_size" reduction per output, loss weights, summed) and the compiled metrics
(resolved on the first batch, when the target and prediction shapes are known: "accuracy"
becomes binary, sparse categorical or categorical accuracy as in Keras).

Strings go through `eager.keras.losses.get` / `eager.keras.metrics.get` when those packages
exist; plain functions `fn(y_true, y_pred)` returning per-sample values work either way. The
loss tracker and the metric wrappers below are `Mean`-style accumulators on two float32
variables (a total and a count), created eagerly (`init_scope`) even when first used inside
the traced step, so they update inside the step's graph.
"""

from __future__ import annotations

import importlib

from ...base import nest
from ...core.tensor_conversion import convert_to_tensor
from ...base.dtypes import float32
from ...functions.lifting import init_scope
from ...ops import array_ops as _array
from ...ops.composite_ops import divide_no_nan
from ...ops import math_ops as _math
from ...variables import Variable

__all__ = ["CompiledLoss", "CompiledMetrics", "MeanTracker", "keras_module"]


def keras_module(name):
    """`eager.keras.<name>` when that package exists, else None."""
    try:
        return importlib.import_module(f"eager.keras.{name}")
    except ModuleNotFoundError:
        return None


def _shape(x):
    return tuple(x.shape.as_list()) if hasattr(x.shape, "as_list") else tuple(x.shape)


def same_rank(y_true, y_pred):
    """Keras's squeeze-or-expand: a target one rank off the prediction, by a trailing 1, is
    squeezed or expanded to the prediction's rank."""
    t, p = len(y_true.shape), len(y_pred.shape)
    if t == p + 1 and _shape(y_true)[-1] == 1:
        y_true = _array.squeeze(y_true, axis=-1)
    elif p == t + 1 and _shape(y_pred)[-1] == 1:
        y_pred = _array.squeeze(y_pred, axis=-1)
    return y_true, y_pred


def _as_float(x, dtype):
    x = convert_to_tensor(x)
    return x if x.dtype == dtype else _math.cast(x, dtype)


class MeanTracker:
    """A running weighted mean (≈ `keras.metrics.Mean`): `total += sum(values * weight)`,
    `count += sum(weight)`; `result()` is total / count (0 when count is 0)."""

    _direction = "down"

    def __init__(self, name="mean", fn=None, direction=None):
        self.name = name
        self._fn = fn
        if direction is not None:
            self._direction = direction
        with init_scope():
            self.total = Variable(0.0, dtype=float32, trainable=False, name="total")
            self.count = Variable(0.0, dtype=float32, trainable=False, name="count")

    @property
    def variables(self):
        return [self.total, self.count]

    def update_state(self, *args, sample_weight=None):
        if self._fn is not None:  # a wrapped metric function: fn(y_true, y_pred)
            y_true, y_pred = args
            y_pred = convert_to_tensor(y_pred)
            y_true = convert_to_tensor(y_true)
            values = self._fn(y_true, y_pred)
        else:
            (values,) = args
        values = _as_float(values, float32)
        if sample_weight is None:
            self.total.assign_add(_math.reduce_sum(values), read_value=False)
            self.count.assign_add(_math.cast(_array.size(values), float32), read_value=False)
            return
        weight = _as_float(sample_weight, float32)
        if len(weight.shape) and len(weight.shape) < len(values.shape):  # per sample
            weight = _array.reshape(weight, _array.concat(
                [_array.shape(weight), _array.ones([len(values.shape) - len(weight.shape)],
                                                  "int32")], 0))
        weight = _array.broadcast_to(weight, _array.shape(values))
        self.total.assign_add(_math.reduce_sum(values * weight), read_value=False)
        self.count.assign_add(_math.reduce_sum(weight), read_value=False)

    def result(self):
        return divide_no_nan(self.total.value(), self.count.value())

    def reset_state(self):
        self.total.assign(0.0, read_value=False)
        self.count.assign(0.0, read_value=False)


# -- accuracies for "accuracy"/"acc" while eager.keras.metrics is absent ----------------------
def _binary_accuracy(y_true, y_pred):
    y_true, y_pred = same_rank(y_true, y_pred)
    hit = _math.equal(_math.cast(y_true, y_pred.dtype), _math.cast(y_pred > 0.5, y_pred.dtype))
    return _math.reduce_mean(_math.cast(hit, float32), axis=-1)


def _sparse_categorical_accuracy(y_true, y_pred):
    if len(y_true.shape) == len(y_pred.shape) and _shape(y_true)[-1] == 1:
        y_true = _array.squeeze(y_true, axis=-1)
    predicted = _math.argmax(y_pred, axis=-1)
    return _math.cast(_math.equal(_math.cast(y_true, predicted.dtype), predicted), float32)


def _categorical_accuracy(y_true, y_pred):
    return _math.cast(_math.equal(_math.argmax(y_true, axis=-1), _math.argmax(y_pred, axis=-1)),
                      float32)


def _accuracy_metric(identifier, y_true, y_pred):
    binary = _shape(y_pred)[-1:] == (1,)
    sparse = (len(y_true.shape) < len(y_pred.shape)
              or (_shape(y_true)[-1:] == (1,) and _shape(y_pred)[-1:] != (1,)))
    module = keras_module("metrics")
    name = str(identifier)
    if module is not None:
        cls = (module.BinaryAccuracy if binary else module.SparseCategoricalAccuracy if sparse
               else module.CategoricalAccuracy)
        return cls(name=name)
    fn = (_binary_accuracy if binary else _sparse_categorical_accuracy if sparse
          else _categorical_accuracy)
    return MeanTracker(name=name, fn=fn, direction="up")


def _metric(identifier, y_true, y_pred):
    if identifier is None:
        raise ValueError("Expected metric, received `None`")
    if isinstance(identifier, str) and identifier.lower() in ("accuracy", "acc"):
        return _accuracy_metric(identifier, y_true, y_pred)
    module = keras_module("metrics")
    if module is not None:
        metric = module.get(identifier)
        if not isinstance(metric, module.Metric):
            metric = module.MeanMetricWrapper(metric, name=(
                identifier if isinstance(identifier, str) else metric.__name__))
        elif isinstance(identifier, str):
            metric.name = identifier
        return metric
    if hasattr(identifier, "update_state"):
        return identifier
    if isinstance(identifier, str):
        raise ValueError(f"Could not interpret metric identifier: {identifier}")
    if not callable(identifier):
        raise ValueError(f"Could not interpret metric identifier: {identifier}")
    return MeanTracker(name=getattr(identifier, "__name__", "mean"), fn=identifier)


class CompiledMetrics:
    """The metrics given to `compile` (`metrics` and `weighted_metrics`, the second ones
    taking the sample weights), built from the first batch's target and prediction."""

    def __init__(self, metrics, weighted_metrics):
        for what, value in (("metrics", metrics), ("weighted_metrics", weighted_metrics)):
            if value is not None and not isinstance(value, (list, tuple, dict)):
                raise TypeError(f"Expected `{what}` argument to be a list, tuple, or dict. "
                                f"Received instead: {what}={value} of type {type(value)}")
        self._spec = (list(metrics or []), list(weighted_metrics or []))
        self.metrics = []
        self._weighted = []
        self.built = False

    def build(self, y_true, y_pred):
        y_true, y_pred = nest.flatten(y_true)[0], nest.flatten(y_pred)[0]
        plain, weighted = self._spec
        self.metrics = [_metric(m, y_true, y_pred) for m in plain]
        self._weighted = [_metric(m, y_true, y_pred) for m in weighted]
        self.metrics = self.metrics + self._weighted
        self.built = True

    def update_state(self, y_true, y_pred, sample_weight):
        if not self.built:
            self.build(y_true, y_pred)
        y_true, y_pred = nest.flatten(y_true)[0], nest.flatten(y_pred)[0]
        weighted = set(map(id, self._weighted))
        for metric in self.metrics:
            weight = sample_weight if id(metric) in weighted else None
            metric.update_state(y_true, y_pred, sample_weight=weight)

    def reset_state(self):
        for metric in self.metrics:
            metric.reset_state()


# -- the compiled loss --------------------------------------------------------------------------
def _loss(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, str):
        module = keras_module("losses")
        if module is None:
            raise ValueError(f"Could not interpret loss identifier: {identifier}")
        return module.get(identifier)
    if not callable(identifier):
        raise ValueError(f"Could not interpret loss identifier: {identifier}")
    return identifier


def _is_loss_object(fn) -> bool:
    module = keras_module("losses")
    return module is not None and isinstance(fn, module.Loss)


def _function_loss(fn, y_true, y_pred, sample_weight):
    """A loss function's per-sample values, reduced as Keras's "sum_over_batch_size": the
    weighted sum divided by the number of values."""
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    if y_true.dtype != y_pred.dtype:
        y_true = _math.cast(y_true, y_pred.dtype)
    y_true, y_pred = same_rank(y_true, y_pred)
    values = convert_to_tensor(fn(y_true, y_pred))
    if sample_weight is not None:
        weight = _as_float(sample_weight, values.dtype)
        while len(weight.shape) > len(values.shape) and _shape(weight)[-1] == 1:
            weight = _array.squeeze(weight, axis=-1)
        while len(weight.shape) < len(values.shape):
            weight = _array.expand_dims(weight, -1)
        values = values * weight
    return divide_no_nan(_math.reduce_sum(values),
                            _math.cast(_array.size(values), values.dtype))


class CompiledLoss:
    """`compile`'s `loss` (one for all outputs, a list per output, or a dict by output name)
    with `loss_weights`."""

    def __init__(self, loss, loss_weights=None):
        self._structure = loss
        if isinstance(loss, dict):
            self._losses = {k: _loss(v) for k, v in loss.items()}
        elif isinstance(loss, (list, tuple)):
            self._losses = [_loss(v) for v in loss]
        else:
            self._losses = _loss(loss)
        self._weights = loss_weights

    def __call__(self, y_true, y_pred, sample_weight=None):
        pairs = self._pairs(y_true, y_pred)
        total = None
        for fn, yt, yp, weight in pairs:
            if fn is None or yt is None:
                continue
            if _is_loss_object(fn):
                value = fn(yt, yp, sample_weight=sample_weight)
            else:
                value = _function_loss(fn, yt, yp, sample_weight)
            if weight is not None:
                value = value * weight
            total = value if total is None else total + value
        return total

    def _pairs(self, y_true, y_pred):
        losses, weights = self._losses, self._weights
        if isinstance(losses, dict):
            names = list(losses)
            preds = y_pred if isinstance(y_pred, dict) else dict(zip(names, nest.flatten(y_pred)))
            trues = y_true if isinstance(y_true, dict) else dict(zip(names, nest.flatten(y_true)))
            return [(losses[k], trues.get(k), preds[k],
                     None if weights is None else weights.get(k)) for k in names]
        preds, trues = nest.flatten(y_pred), nest.flatten(y_true)
        if isinstance(losses, list):
            if len(losses) != len(preds):
                raise ValueError(f"For a model with multiple outputs, when providing the "
                                 f"`loss` argument as a list, it should have as many entries "
                                 f"as the model has outputs. Received:\nloss={self._structure}"
                                 f"\nof length {len(losses)} whereas the model has "
                                 f"{len(preds)} outputs.")
            ws = weights if weights is not None else [None] * len(preds)
            return list(zip(losses, trues, preds, ws))
        ws = weights if isinstance(weights, (list, tuple)) else [weights] * len(preds)
        return [(losses, t, p, w) for t, p, w in zip(trues, preds, ws)]
