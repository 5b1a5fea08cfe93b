"""`eager.keras` ≈ `tf.keras` (Keras 3), built on eager's own modules, variables and functions."""

from . import losses, metrics, utils  # noqa: F401
