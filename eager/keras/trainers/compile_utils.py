"""What `compile` turns its `loss` and `metrics` arguments into, as Keras 3's `CompileLoss` and
`CompileMetrics` do.

- The compiled loss: each output's loss resolved through `keras.losses.get` (a plain function
  wrapped in `LossFunctionWrapper`, reduced as "sum_over_batch_size"; "crossentropy"/"ce"
  picked from the shapes), times its loss weight, summed. With several losses, each output's
  unweighted loss is also tracked by a `Mean` named "<output>_loss" (one count per batch, as
  Keras on TensorFlow counts it).
- The compiled metrics: per output, through `keras.metrics.get` (a function wrapped in
  `MeanMetricWrapper`; "accuracy"/"acc" become binary, sparse categorical or categorical
  accuracy from the shapes). Their result is one dict; with several outputs each name gets
  its output's name in front ("out1_accuracy").

Both are resolved on the first batch (or the trainer's symbolic build), when the target and
prediction structures and shapes are known. Their metric variables are created under
`init_scope`, so resolving inside a traced step still creates them eagerly.
"""

from __future__ import annotations

from collections import OrderedDict

from ...base import nest
from ...functions.lifting import init_scope
from ...ops import math_ops as _math
from .. import losses as losses_module
from .. import metrics as metrics_module
from ..backend import to_snake_case

__all__ = ["CompileLoss", "CompileMetrics", "MetricsList", "get_loss", "get_metric"]


def _object_name(obj) -> str:
    """Keras's name for a metric or loss object: its `name`, else its function's or class's
    name in snake case."""
    if hasattr(obj, "name"):
        return obj.name
    if hasattr(obj, "__name__"):
        return to_snake_case(obj.__name__)
    return to_snake_case(type(obj).__name__)


def _last_dim(x):
    shape = x.shape
    return shape[-1] if len(shape) else None


def is_binary_or_sparse_categorical(y_true, y_pred):
    """(binary, sparse categorical) from the shapes, Keras's rule: a prediction of one unit is
    binary; a target of lower rank, or of one unit against several, is sparse."""
    t_last, p_last = _last_dim(y_true), _last_dim(y_pred)
    binary = p_last == 1
    sparse = (len(y_true.shape) < len(y_pred.shape)
              or (t_last == 1 and p_last is not None and p_last > 1))
    return binary, sparse


def get_metric(identifier, y_true, y_pred):
    """One `compile` metric: "accuracy"/"acc" by shape, anything else via `metrics.get`; a
    function is wrapped in `MeanMetricWrapper`. Named after the string given, else the
    object's own name."""
    if identifier is None:
        raise ValueError("Expected metric, received `None`")
    if str(identifier).lower() in ("accuracy", "acc"):
        binary, sparse = is_binary_or_sparse_categorical(y_true, y_pred)
        cls = (metrics_module.BinaryAccuracy if binary
               else metrics_module.SparseCategoricalAccuracy if sparse
               else metrics_module.CategoricalAccuracy)
        metric = cls(name=str(identifier))
    else:
        metric = metrics_module.get(identifier)
    name = identifier if isinstance(identifier, str) else _object_name(metric)
    if not isinstance(metric, metrics_module.Metric):
        metric = metrics_module.MeanMetricWrapper(metric)
    metric.name = name
    return metric


def get_loss(identifier, y_true, y_pred):
    """One output's loss: "crossentropy"/"ce" by shape, anything else via `losses.get`; a
    function becomes a `LossFunctionWrapper` named after it."""
    if identifier is None:
        return None
    if str(identifier).lower() in ("crossentropy", "ce"):
        binary, sparse = is_binary_or_sparse_categorical(y_true, y_pred)
        loss = (losses_module.binary_crossentropy if binary
                else losses_module.sparse_categorical_crossentropy if sparse
                else losses_module.categorical_crossentropy)
    else:
        loss = losses_module.get(identifier)
    if not isinstance(loss, losses_module.Loss):
        if not callable(loss):
            raise ValueError(f"Could not interpret loss identifier: {identifier}")
        name = identifier if isinstance(identifier, str) else _object_name(loss)
        loss = losses_module.LossFunctionWrapper(loss, name=name)
    return loss


class MetricsList:
    """The metrics of one output (`output_name` None for a single-output model)."""

    def __init__(self, metrics, output_name=None):
        self.metrics = metrics
        self.output_name = output_name

    def update_state(self, y_true, y_pred, sample_weight=None):
        for metric in self.metrics:
            metric.update_state(y_true, y_pred, sample_weight=sample_weight)

    def reset_state(self):
        for metric in self.metrics:
            metric.reset_state()


def _metrics_list(metrics, y_true, y_pred, output_name=None):
    if metrics is None:
        return None
    metrics = metrics if isinstance(metrics, (list, tuple)) else [metrics]
    return MetricsList([get_metric(m, y_true, y_pred) for m in metrics], output_name)


def _is_flat_structure(y_pred) -> bool:
    """A list, tuple or dict of tensors (not deeper), as Keras's "flat" outputs."""
    return (isinstance(y_pred, (list, tuple, dict))
            and len(y_pred) == len(nest.flatten(y_pred)))


def _resolved_output_names(y_pred, output_names):
    """The outputs' names in flattening order: a dict's own keys (the model's order when they
    are the model's names), else the model's `output_names`."""
    if isinstance(y_pred, dict) and _is_flat_structure(y_pred):
        if output_names and set(y_pred) == set(output_names):
            return list(output_names)
        if isinstance(y_pred, OrderedDict):
            return list(y_pred)
        return sorted(y_pred)
    return list(output_names) if output_names else None


class CompileMetrics:
    """`compile`'s `metrics` and `weighted_metrics` (the second ones given the sample
    weights): a list for every output, or per output as a list (one entry per output) or a
    dict by output name. `model.metrics` lists it as one entry named "compile_metrics" whose
    result is a dict."""

    name = "compile_metrics"

    def __init__(self, metrics, weighted_metrics, output_names=None):
        for what, value in (("metrics", metrics), ("weighted_metrics", weighted_metrics)):
            if value and not isinstance(value, (list, tuple, dict)):
                raise ValueError(f"Expected `{what}` argument to be a list, tuple, or dict. "
                                 f"Received instead: {what}={value} of type {type(value)}")
        self._user_metrics = metrics
        self._user_weighted_metrics = weighted_metrics
        self.output_names = output_names
        self._flat_metrics = []
        self._flat_weighted_metrics = []
        self._names = None  # output names used to flatten dict targets/predictions
        self.built = False

    @property
    def metrics(self) -> list:
        if not self.built:
            return []
        return [m for lst in self._flat_metrics + self._flat_weighted_metrics if lst
                for m in lst.metrics]

    @property
    def variables(self) -> list:
        return [v for m in self.metrics for v in m.variables]

    def build(self, y_true, y_pred):
        num_outputs = len(nest.flatten(y_pred))
        names = _resolved_output_names(y_pred, self.output_names)
        self._names = names if num_outputs > 1 and _is_flat_structure(y_pred) else None
        with init_scope():
            self._flat_metrics = self._build_set(self._user_metrics, num_outputs, names,
                                                 y_true, y_pred, "metrics")
            self._flat_weighted_metrics = self._build_set(
                self._user_weighted_metrics, num_outputs, names, y_true, y_pred,
                "weighted_metrics")
        self.built = True

    def _build_set(self, metrics, num_outputs, names, y_true, y_pred, argument):
        if not metrics:
            return [None] * num_outputs
        if num_outputs == 1:
            return [_metrics_list(nest.flatten(metrics), nest.flatten(y_true)[0],
                                  nest.flatten(y_pred)[0])]
        per_output = None
        if _is_flat_structure(y_pred):
            if isinstance(metrics, (list, tuple)) and len(metrics) == num_outputs:
                per_output = list(metrics)
            elif (names and isinstance(metrics, dict) and len(metrics) <= num_outputs
                  and set(metrics) <= set(names)):
                per_output = [metrics.get(name) for name in names]
        if per_output is None:
            shape = nest.map_structure(lambda _: "X", y_pred)
            where = (f"either be a dict or a list matching the output names of the functional "
                     f"model {self.output_names} or " if self.output_names else "")
            raise ValueError(f"Invalid `{argument}`. `{argument}` should contain metrics "
                             f"objects and {where}match the output structure of the model: "
                             f"{shape}.\nReceived: {argument}={metrics}")
        return [_metrics_list(m, yt, yp, n) for m, yt, yp, n in zip(
            per_output, self._flatten_y(y_true), self._flatten_y(y_pred),
            names or [None] * num_outputs)]

    def _flatten_y(self, y):
        if isinstance(y, dict) and self._names is not None:
            return [y[name] for name in self._names]
        return nest.flatten(y)

    def update_state(self, y_true, y_pred, sample_weight=None):
        if not self.built:
            self.build(y_true, y_pred)
        y_true, y_pred = self._flatten_y(y_true), self._flatten_y(y_pred)
        for lst, yt, yp in zip(self._flat_metrics, y_true, y_pred):
            if lst:
                lst.update_state(yt, yp)
        if sample_weight is not None:
            weights = self._flatten_y(sample_weight)
            if len(weights) < len(y_true):  # one weight for every output
                weights = [weights[0]] * len(y_true)
        else:
            weights = [None] * len(y_true)
        for lst, yt, yp, w in zip(self._flat_weighted_metrics, y_true, y_pred, weights):
            if lst:
                lst.update_state(yt, yp, w)

    def reset_state(self):
        for metric in self.metrics:
            metric.reset_state()

    def result(self) -> dict:
        """Each metric's result under Keras's name: "<output>_<metric>" with several outputs;
        a repeated name gets "_1", "_2", ...; a weighted metric repeating a plain one's name
        is "weighted_<metric>"."""
        results, seen = {}, {}

        def put(name, value):
            if name in seen:
                index = seen[name]
                seen[name] += 1
                name = f"{name}_{index}"
            else:
                seen[name] = 1
            results[name] = value

        for lst in self._flat_metrics:
            for metric in (lst.metrics if lst else ()):
                prefix = f"{lst.output_name}_" if lst.output_name else ""
                put(prefix + metric.name, metric.result())
        for lst in self._flat_weighted_metrics:
            for metric in (lst.metrics if lst else ()):
                prefix = f"{lst.output_name}_" if lst.output_name else ""
                name = prefix + metric.name
                if name in seen:
                    name = f"{prefix}weighted_{metric.name}"
                put(name, metric.result())
        return results


class CompileLoss:
    """`compile`'s `loss` (one for every output, a list per output, or a dict by output name;
    None leaves an output out) with `loss_weights` (a float, or the same structure)."""

    def __init__(self, loss, loss_weights=None, output_names=None):
        if loss_weights and not isinstance(loss_weights, (list, tuple, dict, float)):
            raise ValueError("Expected `loss_weights` argument to be a float (single output "
                             "case) or a list, tuple, or dict (multiple output case). "
                             f"Received instead: loss_weights={loss_weights} of type "
                             f"{type(loss_weights)}")
        self._user_loss = loss
        self._user_loss_weights = loss_weights
        self.output_names = output_names
        self._flat_losses = []  # (output key or index, Loss, weight, name)
        self._metrics = []
        self._names = None
        self.built = False

    @property
    def metrics(self) -> list:
        """One `Mean` "<output>_loss" per loss when there are several, else none."""
        return self._metrics

    @property
    def variables(self) -> list:
        return [v for m in self._metrics for v in m.variables]

    def _per_output(self, value, names, num_outputs, what):
        """`value` (a loss or a loss weight) as a list with one entry per output."""
        if isinstance(value, dict):
            if names is None or not set(value) <= set(names):
                raise ValueError(f"Expected keys {names} in {what} dict, but found "
                                 f"{what}.keys()={list(value)}")
            return [value.get(name) for name in names]
        if isinstance(value, (list, tuple)):
            if len(value) != num_outputs:
                if what == "loss":
                    raise ValueError(
                        "For a model with multiple outputs, when providing the `loss` "
                        "argument as a list, it should have as many entries as the model "
                        f"has outputs. Received:\nloss={value}\nof length {len(value)} "
                        f"whereas the model has {num_outputs} outputs.")
                raise ValueError(f"`loss_weights` must match the number of losses, got "
                                 f"{num_outputs} losses and {len(value)} weights.")
            return list(value)
        return [value] * num_outputs

    def build(self, y_true, y_pred):
        flat_pred = nest.flatten(y_pred)
        num_outputs = len(flat_pred)
        names = _resolved_output_names(y_pred, self.output_names)
        if names is None or len(names) != num_outputs:
            names = None
        self._names = names
        losses = self._per_output(self._user_loss, names, num_outputs, "loss")
        weights = self._per_output(self._user_loss_weights, names, num_outputs,
                                   "loss_weights")
        trues, preds = self._flatten_y(y_true, num_outputs), self._flatten_y(y_pred)
        flat = []
        for i, (loss, weight) in enumerate(zip(losses, weights)):
            if loss is None:
                continue
            resolved = get_loss(loss, trues[i], preds[i])
            name = names[i] if names else resolved.name
            flat.append((i, resolved, weight, name))
        self._flat_losses = flat
        if len(flat) > 1:
            with init_scope():
                self._metrics = [metrics_module.Mean(name=f"{name}_loss")
                                 for *_, name in flat]
        self.built = True

    def _flatten_y(self, y, num_outputs=None):
        if isinstance(y, dict) and self._names is not None:
            return [y.get(name) for name in self._names]
        flat = nest.flatten(y)
        if num_outputs is not None and len(flat) < num_outputs:
            flat = flat + [None] * (num_outputs - len(flat))
        return flat

    def __call__(self, y_true, y_pred, sample_weight=None):
        if not self.built:
            self.build(y_true, y_pred)
        trues, preds = self._flatten_y(y_true), self._flatten_y(y_pred)
        if len(self._flat_losses) > 1 or len(preds) > 1:
            if len(trues) != len(preds):  # targets for the outputs that have a loss
                given = iter(trues)
                trues = [next(given, None) if any(j == i for j, *_ in self._flat_losses)
                         else None for i in range(len(preds))]
        nested_weight = isinstance(sample_weight, (list, tuple, dict))
        weights = self._flatten_y(sample_weight) if nested_weight else None
        metrics = self._metrics or [None] * len(self._flat_losses)
        total = None
        for (i, loss, loss_weight, _), metric in zip(self._flat_losses, metrics):
            y_t, y_p = trues[i], preds[i]
            if y_t is None:
                continue
            weight = weights[i] if nested_weight else sample_weight
            value = loss(y_t, y_p, weight)
            if value.dtype != "float32":
                value = _math.cast(value, "float32")
            if metric is not None:
                # The unweighted loss, each batch counting once: Keras weights it by the
                # prediction's static batch size, which is unknown (None) in Keras-on-TF's
                # traced step, so a short last batch counts as much as a full one there.
                metric.update_state(value)
            if loss_weight is not None:
                value = value * loss_weight
            total = value if total is None else total + value
        return total
