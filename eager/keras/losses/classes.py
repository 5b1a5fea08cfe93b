"""Keras's loss classes: `LossFunctionWrapper` and one wrapper per loss function.

Each class is `LossFunctionWrapper(fn, **fn_kwargs)` with Keras's default name and arguments;
`get_config` is Keras 3's (name, reduction and the class's own arguments). Beyond Keras,
`Huber`'s config keeps `delta` and `CosineSimilarity`'s keeps `axis` (Keras 3.15 drops them, so
its round trip through `from_config` loses them).
"""

from __future__ import annotations

from . import hinge_losses as _hinge
from . import probabilistic as _prob
from . import regression as _reg
from .loss import Loss, squeeze_or_expand_to_same_rank
from .serialization import serialize_object

__all__ = ["LossFunctionWrapper", "MeanSquaredError", "MeanAbsoluteError",
           "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "CosineSimilarity",
           "Huber", "LogCosh", "Hinge", "SquaredHinge", "CategoricalHinge", "KLDivergence",
           "Poisson", "BinaryCrossentropy", "BinaryFocalCrossentropy", "CategoricalCrossentropy",
           "CategoricalFocalCrossentropy", "SparseCategoricalCrossentropy", "LOSS_FUNCTIONS"]

#: The loss functions by name, for deserializing a wrapper's `fn`.
LOSS_FUNCTIONS = {fn.__name__: fn for module in (_reg, _prob, _hinge)
                  for fn in (getattr(module, name) for name in module.__all__)}


def _resolve_fn(fn):
    if isinstance(fn, dict) and fn.get("class_name") == "function":
        name = fn.get("config")
        if name not in LOSS_FUNCTIONS:
            raise ValueError(f"Could not interpret loss identifier: {name}")
        return LOSS_FUNCTIONS[name]
    if isinstance(fn, str):
        if fn not in LOSS_FUNCTIONS:
            raise ValueError(f"Could not interpret loss identifier: {fn}")
        return LOSS_FUNCTIONS[fn]
    return fn


class LossFunctionWrapper(Loss):
    """≈ `keras.losses.LossFunctionWrapper(fn, reduction, name, dtype, **kwargs)`: a `Loss`
    whose `call` is `fn(y_true, y_pred, **kwargs)` after lining the ranks up."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        if isinstance(y_true, (list, tuple, dict)) or isinstance(y_pred, (list, tuple, dict)):
            return self.fn(y_true, y_pred, **self._fn_kwargs)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        config = super().get_config()
        config["fn"] = serialize_object(self.fn, "keras.losses")
        config.update(serialize_object(self._fn_kwargs, "keras.losses"))
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if "fn" in config:
            config["fn"] = _resolve_fn(config["fn"])
        return cls(**config)

    def __repr__(self):
        return f"<LossFunctionWrapper({self.fn}, kwargs={self._fn_kwargs})>"


class _BuiltinLoss(LossFunctionWrapper):
    """A Keras loss class: `fn` with the arguments named in `_config` kept as attributes and
    in the config (beside the name and reduction)."""

    _config = ()

    def __init__(self, fn, reduction, name, dtype, **kwargs):
        super().__init__(fn, reduction=reduction, name=name, dtype=dtype, **kwargs)
        for key in self._config:
            setattr(self, key, kwargs[key])

    def get_config(self):
        config = Loss.get_config(self)
        config.update({key: getattr(self, key) for key in self._config})
        return config


class MeanSquaredError(_BuiltinLoss):
    """≈ `keras.losses.MeanSquaredError()`: mean of squares of errors."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(_reg.mean_squared_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsoluteError(_BuiltinLoss):
    """≈ `keras.losses.MeanAbsoluteError()`: mean of absolute errors."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(_reg.mean_absolute_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsolutePercentageError(_BuiltinLoss):
    """≈ `keras.losses.MeanAbsolutePercentageError()`: 100 * mean |error / y_true|."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_percentage_error",
                 dtype=None):
        super().__init__(_reg.mean_absolute_percentage_error, reduction=reduction,
                         name=name, dtype=dtype)


class MeanSquaredLogarithmicError(_BuiltinLoss):
    """≈ `keras.losses.MeanSquaredLogarithmicError()`: mean squared difference of log(1 + y)."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_logarithmic_error",
                 dtype=None):
        super().__init__(_reg.mean_squared_logarithmic_error, reduction=reduction,
                         name=name, dtype=dtype)


class CosineSimilarity(_BuiltinLoss):
    """≈ `keras.losses.CosineSimilarity(axis=-1)`: minus the cosine of the angle between
    y_true and y_pred. Beyond Keras, the config keeps `axis`."""

    _config = ("axis",)

    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity",
                 dtype=None):
        super().__init__(_reg.cosine_similarity, reduction=reduction, name=name, dtype=dtype,
                         axis=axis)


class Huber(_BuiltinLoss):
    """≈ `keras.losses.Huber(delta=1.0)`: quadratic for errors within delta, linear beyond.
    Beyond Keras, the config keeps `delta`."""

    _config = ("delta",)

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        super().__init__(_reg.huber, reduction=reduction, name=name, dtype=dtype, delta=delta)


class LogCosh(_BuiltinLoss):
    """≈ `keras.losses.LogCosh()`: mean log(cosh(error))."""

    def __init__(self, reduction="sum_over_batch_size", name="log_cosh", dtype=None):
        super().__init__(_reg.log_cosh, reduction=reduction, name=name, dtype=dtype)


class Hinge(_BuiltinLoss):
    """≈ `keras.losses.Hinge()`: mean max(1 - y_true * y_pred, 0), 0/1 labels read as -1/1."""

    def __init__(self, reduction="sum_over_batch_size", name="hinge", dtype=None):
        super().__init__(_hinge.hinge, reduction=reduction, name=name, dtype=dtype)


class SquaredHinge(_BuiltinLoss):
    """≈ `keras.losses.SquaredHinge()`: the hinge loss squared."""

    def __init__(self, reduction="sum_over_batch_size", name="squared_hinge", dtype=None):
        super().__init__(_hinge.squared_hinge, reduction=reduction, name=name, dtype=dtype)


class CategoricalHinge(_BuiltinLoss):
    """≈ `keras.losses.CategoricalHinge()`: max(neg - pos + 1, 0) for one-hot labels."""

    def __init__(self, reduction="sum_over_batch_size", name="categorical_hinge", dtype=None):
        super().__init__(_hinge.categorical_hinge, reduction=reduction, name=name, dtype=dtype)


class KLDivergence(_BuiltinLoss):
    """≈ `keras.losses.KLDivergence()`: Kullback-Leibler divergence."""

    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None):
        super().__init__(_prob.kl_divergence, reduction=reduction, name=name, dtype=dtype)


class Poisson(_BuiltinLoss):
    """≈ `keras.losses.Poisson()`: mean y_pred - y_true * log(y_pred)."""

    def __init__(self, reduction="sum_over_batch_size", name="poisson", dtype=None):
        super().__init__(_prob.poisson, reduction=reduction, name=name, dtype=dtype)


class BinaryCrossentropy(_BuiltinLoss):
    """≈ `keras.losses.BinaryCrossentropy(from_logits=False, label_smoothing=0.0, axis=-1)`:
    binary cross-entropy, labels smoothed toward 0.5."""

    _config = ("from_logits", "label_smoothing", "axis")

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="binary_crossentropy", dtype=None):
        super().__init__(_prob.binary_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class BinaryFocalCrossentropy(_BuiltinLoss):
    """≈ `keras.losses.BinaryFocalCrossentropy(apply_class_balancing=False, alpha=0.25,
    gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1)`: binary cross-entropy
    focused on hard examples."""

    _config = ("from_logits", "label_smoothing", "axis", "apply_class_balancing", "alpha",
               "gamma")

    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                 label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_focal_crossentropy", dtype=None):
        super().__init__(_prob.binary_focal_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, apply_class_balancing=apply_class_balancing, alpha=alpha,
                         gamma=gamma, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class CategoricalCrossentropy(_BuiltinLoss):
    """≈ `keras.losses.CategoricalCrossentropy(from_logits=False, label_smoothing=0.0,
    axis=-1)`: cross-entropy against one-hot labels, smoothed toward 1 / num_classes."""

    _config = ("from_logits", "label_smoothing", "axis")

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_crossentropy", dtype=None):
        super().__init__(_prob.categorical_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class CategoricalFocalCrossentropy(_BuiltinLoss):
    """≈ `keras.losses.CategoricalFocalCrossentropy(alpha=0.25, gamma=2.0,
    from_logits=False, label_smoothing=0.0, axis=-1)`: categorical cross-entropy focused on
    hard examples."""

    _config = ("from_logits", "label_smoothing", "axis", "alpha", "gamma")

    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_focal_crossentropy",
                 dtype=None):
        super().__init__(_prob.categorical_focal_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, alpha=alpha, gamma=gamma, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(_BuiltinLoss):
    """≈ `keras.losses.SparseCategoricalCrossentropy(from_logits=False, ignore_class=None,
    reduction="sum_over_batch_size", axis=-1, ...)`: cross-entropy against class indices
    (Keras's argument order: `axis` after `reduction`; the config leaves `axis` out, as
    Keras's does)."""

    _config = ("from_logits", "ignore_class")

    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 axis=-1, name="sparse_categorical_crossentropy", dtype=None):
        super().__init__(_prob.sparse_categorical_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, from_logits=from_logits, ignore_class=ignore_class,
                         axis=axis)
