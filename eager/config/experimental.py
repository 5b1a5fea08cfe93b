"""`eager.config.experimental` ≈ `tf.config.experimental`: execution mode, simulated GPUs."""

from ..async_exec import get_synchronous_execution, set_synchronous_execution
from ..devices.registry import get_simulated_gpus, set_simulated_gpus

__all__ = ["set_synchronous_execution", "get_synchronous_execution", "set_simulated_gpus",
           "get_simulated_gpus"]

from ..base.traceback_filter import filter_public_functions as _filter_public_functions  # noqa: E402

_filter_public_functions(globals())  # errors leaving these show the user's frames only
