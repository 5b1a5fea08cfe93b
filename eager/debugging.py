"""`eager.debugging` ≈ `tf.debugging`: placement logging."""

from .core.context import log_device_placement as get_log_device_placement
from .core.context import set_log_device_placement

__all__ = ["set_log_device_placement", "get_log_device_placement"]
