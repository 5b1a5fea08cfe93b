"""`eager.keras.losses` ≈ `keras.losses` (Keras 3): loss classes, loss functions, and
`get`/`serialize`/`deserialize`. See docs/keras.md, "Losses and metrics"."""

from .classes import LOSS_FUNCTIONS as _LOSS_FUNCTIONS
from .classes import (BinaryCrossentropy, BinaryFocalCrossentropy, CategoricalCrossentropy,
                      CategoricalFocalCrossentropy, CategoricalHinge, CosineSimilarity, Hinge,
                      Huber, KLDivergence, LogCosh, LossFunctionWrapper, MeanAbsoluteError,
                      MeanAbsolutePercentageError, MeanSquaredError, MeanSquaredLogarithmicError,
                      Poisson, SparseCategoricalCrossentropy, SquaredHinge)
from .hinge_losses import categorical_hinge, hinge, squared_hinge
from .loss import Loss, Reduction
from .probabilistic import (binary_crossentropy, binary_focal_crossentropy,
                            categorical_crossentropy, categorical_focal_crossentropy,
                            kl_divergence, poisson, sparse_categorical_crossentropy)
from .regression import (cosine_similarity, huber, log_cosh, mean_absolute_error,
                         mean_absolute_percentage_error, mean_squared_error,
                         mean_squared_logarithmic_error)
from .serialization import Registry as _Registry

_CLASSES = [Loss, LossFunctionWrapper, KLDivergence, Poisson, BinaryCrossentropy,
            BinaryFocalCrossentropy, CategoricalCrossentropy, CategoricalFocalCrossentropy,
            SparseCategoricalCrossentropy, MeanSquaredError, MeanAbsoluteError,
            MeanAbsolutePercentageError, MeanSquaredLogarithmicError, CosineSimilarity, LogCosh,
            Huber, Hinge, SquaredHinge, CategoricalHinge]
_FUNCTIONS = [kl_divergence, poisson, binary_crossentropy, binary_focal_crossentropy,
              categorical_crossentropy, categorical_focal_crossentropy,
              sparse_categorical_crossentropy, mean_squared_error, mean_absolute_error,
              mean_absolute_percentage_error, mean_squared_logarithmic_error,
              cosine_similarity, log_cosh, huber, hinge, squared_hinge, categorical_hinge]

#: The names `get` and `deserialize` know: every class and function by its own name, and
#: Keras's short aliases.
_ALL_OBJECTS_DICT = {obj.__name__: obj for obj in _CLASSES + _FUNCTIONS}
_ALL_OBJECTS_DICT.update({
    "bce": binary_crossentropy, "BCE": binary_crossentropy,
    "kld": kl_divergence, "KLD": kl_divergence,
    "mae": mean_absolute_error, "MAE": mean_absolute_error,
    "mse": mean_squared_error, "MSE": mean_squared_error,
    "mape": mean_absolute_percentage_error, "MAPE": mean_absolute_percentage_error,
    "msle": mean_squared_logarithmic_error, "MSLE": mean_squared_logarithmic_error,
})

#: Keras's older short names for the functions (tf.keras 2 exported them).
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh

_registry = _Registry("keras.losses", "loss", _ALL_OBJECTS_DICT, _LOSS_FUNCTIONS)


def serialize(loss):
    """A loss function's or `Loss` instance's config dict, as Keras 3 writes it."""
    return _registry.serialize(loss)


def deserialize(name, custom_objects=None):
    """A loss function or `Loss` instance from a name or a `serialize` dict."""
    return _registry.deserialize(name, custom_objects)


def get(identifier):
    """≈ `keras.losses.get`: None, a name ("mse", "CategoricalCrossentropy"), a config dict, a
    function or a `Loss`; an unknown one is "Could not interpret loss identifier: ..."."""
    return _registry.get(identifier)


__all__ = [obj.__name__ for obj in _CLASSES + _FUNCTIONS] + [
    "mse", "MSE", "mae", "MAE", "mape", "MAPE", "msle", "MSLE", "kld", "KLD",
    "kullback_leibler_divergence", "logcosh", "get", "serialize", "deserialize", "Reduction"]
