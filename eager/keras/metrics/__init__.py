"""`eager.keras.metrics` ≈ `keras.metrics` (Keras 3): metric classes holding their state in
variables, the per-sample metric functions, and `get`/`serialize`/`deserialize`. See
docs/keras.md, "Losses and metrics"."""

from ..losses.hinge_losses import categorical_hinge, hinge, squared_hinge
from ..losses.probabilistic import (binary_crossentropy, binary_focal_crossentropy,
                                    categorical_crossentropy, categorical_focal_crossentropy,
                                    kl_divergence, poisson, sparse_categorical_crossentropy)
from ..losses.regression import (huber, log_cosh, mean_absolute_error,
                                 mean_absolute_percentage_error, mean_squared_error,
                                 mean_squared_logarithmic_error)
from ..losses.serialization import Registry as _Registry
from ..backend import to_snake_case as _to_snake_case
from .confusion import (AUC, FalseNegatives, FalsePositives, Precision, Recall, TrueNegatives,
                        TruePositives)
from .functions import METRIC_FUNCTIONS as _METRIC_FUNCTIONS
from .functions import (accuracy, binary_accuracy, categorical_accuracy,
                        sparse_categorical_accuracy, sparse_top_k_categorical_accuracy,
                        top_k_categorical_accuracy)
from .metric import Metric
from .reduction import Mean, MeanMetricWrapper, Sum
from .wrappers import (Accuracy, BinaryAccuracy, BinaryCrossentropy, CategoricalAccuracy,
                       CategoricalCrossentropy, CategoricalHinge, CosineSimilarity, Hinge,
                       KLDivergence, LogCoshError, MeanAbsoluteError,
                       MeanAbsolutePercentageError, MeanSquaredError,
                       MeanSquaredLogarithmicError, Poisson, RootMeanSquaredError,
                       SparseCategoricalAccuracy, SparseCategoricalCrossentropy,
                       SparseTopKCategoricalAccuracy, SquaredHinge, TopKCategoricalAccuracy)

#: Keras's older short names for the error functions (tf.keras 2 exported them).
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kl_divergence

_CLASSES = [Metric, Mean, Sum, MeanMetricWrapper, MeanSquaredError, RootMeanSquaredError,
            MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError,
            CosineSimilarity, LogCoshError, AUC, FalseNegatives, FalsePositives, Precision,
            Recall, TrueNegatives, TruePositives, Hinge, SquaredHinge, CategoricalHinge,
            KLDivergence, Poisson, BinaryCrossentropy, CategoricalCrossentropy,
            SparseCategoricalCrossentropy, Accuracy, BinaryAccuracy, CategoricalAccuracy,
            SparseCategoricalAccuracy, TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy]

#: The names `get` and `deserialize` know, as in Keras 3: each class by its name and its
#: snake-case name ("accuracy" -> Accuracy, "auc" -> AUC), plus the short aliases.
_ALL_OBJECTS_DICT = {cls.__name__: cls for cls in _CLASSES}
_ALL_OBJECTS_DICT.update({_to_snake_case(cls.__name__): cls for cls in _CLASSES})
_ALL_OBJECTS_DICT.update({
    "bce": BinaryCrossentropy, "BCE": BinaryCrossentropy,
    "mse": MeanSquaredError, "MSE": MeanSquaredError,
    "mae": MeanAbsoluteError, "MAE": MeanAbsoluteError,
    "mape": MeanAbsolutePercentageError, "MAPE": MeanAbsolutePercentageError,
    "msle": MeanSquaredLogarithmicError, "MSLE": MeanSquaredLogarithmicError,
})

_registry = _Registry("keras.metrics", "metric", _ALL_OBJECTS_DICT, _METRIC_FUNCTIONS)


def serialize(metric):
    """A metric function's or `Metric` instance's config dict, as Keras 3 writes it."""
    return _registry.serialize(metric)


def deserialize(config, custom_objects=None):
    """A metric (instance or function) from a name or a `serialize` dict."""
    return _registry.deserialize(config, custom_objects)


def get(identifier):
    """≈ `keras.metrics.get`: a name gives a new instance of its class ("accuracy" is
    `Accuracy()`, "mse" `MeanSquaredError()`), a dict is deserialized, a callable is returned
    as is; an unknown one is "Could not interpret metric identifier: ..."."""
    return _registry.get(identifier)


__all__ = sorted(cls.__name__ for cls in _CLASSES) + [
    "accuracy", "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy",
    "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy", "binary_crossentropy",
    "binary_focal_crossentropy", "categorical_crossentropy", "categorical_focal_crossentropy",
    "sparse_categorical_crossentropy", "kl_divergence", "poisson", "hinge", "squared_hinge",
    "categorical_hinge", "huber", "log_cosh", "mean_squared_error", "mean_absolute_error",
    "mean_absolute_percentage_error", "mean_squared_logarithmic_error",
    "mse", "MSE", "mae", "MAE", "mape", "MAPE", "msle", "MSLE", "kld", "KLD",
    "get", "serialize", "deserialize"]
