"""The metrics that average a per-sample function: accuracies, regression errors,
cross-entropies, hinges (each a `MeanMetricWrapper` with Keras's name, arguments and config),
and `RootMeanSquaredError`."""

from __future__ import annotations

from ..losses import hinge_losses as _hinge
from ..losses import probabilistic as _prob
from ..losses import regression as _reg
from ..losses.loss import squeeze_or_expand_to_same_rank
from ..utils import loss_ops as kops
from . import functions as _fn
from .reduction import Mean, MeanMetricWrapper

__all__ = ["Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "SparseCategoricalAccuracy",
           "TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "MeanSquaredError",
           "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError",
           "RootMeanSquaredError", "CosineSimilarity", "LogCoshError", "BinaryCrossentropy",
           "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "KLDivergence", "Poisson",
           "Hinge", "SquaredHinge", "CategoricalHinge"]


class _Wrapped(MeanMetricWrapper):
    """A MeanMetricWrapper whose config is its name, dtype and the arguments in `_config`."""

    _config = ()

    def get_config(self):
        config = {"name": self.name, "dtype": self.dtype}
        config.update({key: getattr(self, key) for key in self._config})
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Accuracy(_Wrapped):
    """≈ `keras.metrics.Accuracy(name="accuracy", dtype=None)`:
    how often predictions equal labels."""

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(_fn.accuracy, name=name, dtype=dtype)
        self._direction = "up"


class CategoricalAccuracy(_Wrapped):
    """≈ `keras.metrics.CategoricalAccuracy(name="categorical_accuracy", dtype=None)`:
    how often the argmaxes of one-hot labels and predictions agree."""

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(_fn.categorical_accuracy, name=name, dtype=dtype)
        self._direction = "up"


class SparseCategoricalAccuracy(_Wrapped):
    """≈ `keras.metrics.SparseCategoricalAccuracy(name="sparse_categorical_accuracy", dtype=None)`:
    how often the class index equals the predictions' argmax."""

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(_fn.sparse_categorical_accuracy, name=name, dtype=dtype)
        self._direction = "up"


class MeanSquaredError(_Wrapped):
    """≈ `keras.metrics.MeanSquaredError(name="mean_squared_error", dtype=None)`:
    the mean squared error."""

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(_reg.mean_squared_error, name=name, dtype=dtype)
        self._direction = "down"


class MeanAbsoluteError(_Wrapped):
    """≈ `keras.metrics.MeanAbsoluteError(name="mean_absolute_error", dtype=None)`:
    the mean absolute error."""

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(_reg.mean_absolute_error, name=name, dtype=dtype)
        self._direction = "down"


class MeanAbsolutePercentageError(_Wrapped):
    """≈ `keras.metrics.MeanAbsolutePercentageError(name="mean_absolute_percentage_error",
    dtype=None)`:
    the mean absolute percentage error."""

    def __init__(self, name="mean_absolute_percentage_error", dtype=None):
        super().__init__(_reg.mean_absolute_percentage_error, name=name, dtype=dtype)
        self._direction = "down"


class MeanSquaredLogarithmicError(_Wrapped):
    """≈ `keras.metrics.MeanSquaredLogarithmicError(name="mean_squared_logarithmic_error",
    dtype=None)`:
    the mean squared logarithmic error."""

    def __init__(self, name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(_reg.mean_squared_logarithmic_error, name=name, dtype=dtype)
        self._direction = "down"


class LogCoshError(_Wrapped):
    """≈ `keras.metrics.LogCoshError(name="logcosh", dtype=None)`:
    the mean log(cosh(error)) (named "logcosh", as in Keras)."""

    def __init__(self, name="logcosh", dtype=None):
        super().__init__(_reg.log_cosh, name=name, dtype=dtype)
        self._direction = "down"


class KLDivergence(_Wrapped):
    """≈ `keras.metrics.KLDivergence(name="kl_divergence", dtype=None)`:
    the mean Kullback-Leibler divergence."""

    def __init__(self, name="kl_divergence", dtype=None):
        super().__init__(_prob.kl_divergence, name=name, dtype=dtype)


class Poisson(_Wrapped):
    """≈ `keras.metrics.Poisson(name="poisson", dtype=None)`: the mean Poisson loss."""

    def __init__(self, name="poisson", dtype=None):
        super().__init__(_prob.poisson, name=name, dtype=dtype)


class Hinge(_Wrapped):
    """≈ `keras.metrics.Hinge(name="hinge", dtype=None)`: the mean hinge loss."""

    def __init__(self, name="hinge", dtype=None):
        super().__init__(_hinge.hinge, name=name, dtype=dtype)
        self._direction = "down"


class SquaredHinge(_Wrapped):
    """≈ `keras.metrics.SquaredHinge(name="squared_hinge", dtype=None)`:
    the mean squared hinge loss."""

    def __init__(self, name="squared_hinge", dtype=None):
        super().__init__(_hinge.squared_hinge, name=name, dtype=dtype)
        self._direction = "down"


class CategoricalHinge(_Wrapped):
    """≈ `keras.metrics.CategoricalHinge(name="categorical_hinge", dtype=None)`:
    the mean categorical hinge loss."""

    def __init__(self, name="categorical_hinge", dtype=None):
        super().__init__(_hinge.categorical_hinge, name=name, dtype=dtype)
        self._direction = "down"


class BinaryAccuracy(_Wrapped):
    """≈ `keras.metrics.BinaryAccuracy(name="binary_accuracy", dtype=None, threshold=0.5)`."""

    _config = ("threshold",)

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(_fn.binary_accuracy, name=name, dtype=dtype, threshold=threshold)
        self._direction = "up"
        self.threshold = threshold


class TopKCategoricalAccuracy(_Wrapped):
    """≈ `keras.metrics.TopKCategoricalAccuracy(k=5, name=..., dtype=None)`."""

    _config = ("k",)

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(_fn.top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self._direction = "up"
        self.k = k


class SparseTopKCategoricalAccuracy(_Wrapped):
    """≈ `keras.metrics.SparseTopKCategoricalAccuracy(k=5, name=..., dtype=None,
    from_sorted_ids=False)`."""

    _config = ("k",)

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None,
                 from_sorted_ids=False):
        super().__init__(_fn.sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k,
                         from_sorted_ids=from_sorted_ids)
        self._direction = "up"
        self.k = k
        self.from_sorted_ids = from_sorted_ids

    def get_config(self):
        config = super().get_config()
        if self.from_sorted_ids:
            config["from_sorted_ids"] = True
        return config


class CosineSimilarity(_Wrapped):
    """≈ `keras.metrics.CosineSimilarity(name="cosine_similarity", dtype=None, axis=-1)`: the
    mean cosine (not its negative, unlike the loss). Beyond Keras, the config keeps `axis`."""

    _config = ("axis",)

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        super().__init__(_cosine, name=name, dtype=dtype, axis=axis)
        self._direction = "up"
        self.axis = axis


def _cosine(y_true, y_pred, axis=-1):
    return -_reg.cosine_similarity(y_true, y_pred, axis=axis)


class BinaryCrossentropy(_Wrapped):
    """≈ `keras.metrics.BinaryCrossentropy(name=..., dtype=None, from_logits=False,
    label_smoothing=0)`."""

    _config = ("from_logits", "label_smoothing")

    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False,
                 label_smoothing=0):
        super().__init__(_prob.binary_crossentropy, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing)
        self._direction = "down"
        self.from_logits = from_logits
        self.label_smoothing = label_smoothing


class CategoricalCrossentropy(_Wrapped):
    """≈ `keras.metrics.CategoricalCrossentropy(name=..., dtype=None, from_logits=False,
    label_smoothing=0, axis=-1)`."""

    _config = ("from_logits", "label_smoothing", "axis")

    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False,
                 label_smoothing=0, axis=-1):
        super().__init__(_prob.categorical_crossentropy, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self._direction = "down"
        self.from_logits = from_logits
        self.label_smoothing = label_smoothing
        self.axis = axis


class SparseCategoricalCrossentropy(_Wrapped):
    """≈ `keras.metrics.SparseCategoricalCrossentropy(name=..., dtype=None, from_logits=False,
    ignore_class=None, axis=-1)`."""

    _config = ("from_logits", "ignore_class", "axis")

    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False,
                 ignore_class=None, axis=-1):
        super().__init__(_prob.sparse_categorical_crossentropy, name=name, dtype=dtype,
                         from_logits=from_logits, ignore_class=ignore_class, axis=axis)
        self._direction = "down"
        self.from_logits = from_logits
        self.ignore_class = ignore_class
        self.axis = axis


class RootMeanSquaredError(Mean):
    """≈ `keras.metrics.RootMeanSquaredError`: sqrt of the (weighted) mean squared error."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._direction = "down"

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = kops.convert(y_true, self.dtype)
        y_pred = kops.convert(y_pred, self.dtype)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return super().update_state(kops.square(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        return kops.sqrt(super().result())
