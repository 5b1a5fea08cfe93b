"""`eager.data.experimental` ≈ `tf.data.experimental`: the names TensorFlow keeps there."""

from .background import AUTOTUNE
from .node import INFINITE as INFINITE_CARDINALITY
from .node import UNKNOWN as UNKNOWN_CARDINALITY
from .options import (AutoShardPolicy, AutotuneOptions, DistributeOptions, ExternalStatePolicy,
                      OptimizationOptions, ThreadingOptions)

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "cardinality",
           "AutoShardPolicy", "AutotuneOptions", "DistributeOptions", "ExternalStatePolicy",
           "OptimizationOptions", "ThreadingOptions"]


def cardinality(dataset):
    """≈ `tf.data.experimental.cardinality(dataset)`."""
    return dataset.cardinality()
