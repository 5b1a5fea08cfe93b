"""`eager.debugging` ≈ `tf.debugging`: placement logging, numerics checking, traceback
filtering."""

from .base.traceback_filter import (disable_traceback_filtering, enable_traceback_filtering,
                                    is_traceback_filtering_enabled)
from .core.context import log_device_placement as get_log_device_placement
from .core.context import set_log_device_placement
from .ops.debug_ops import disable_check_numerics, enable_check_numerics
from .ops.check_ops import *  # noqa: F401,F403
from .ops.check_ops import __all__ as _checks

__all__ = ["set_log_device_placement", "get_log_device_placement", "enable_check_numerics",
           "disable_check_numerics", "enable_traceback_filtering", "disable_traceback_filtering",
           "is_traceback_filtering_enabled", *_checks]
