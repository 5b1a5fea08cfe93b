"""`eager.experimental`: asynchronous execution controls, DLPack interop, resource accounting,
and tnp (`eager.experimental.numpy`)."""

from ..async_exec import (MAX_PENDING_OPS, async_clear_error, async_scope, async_wait,
                          sync_devices)
from ..devices.resource_handles import live_resource_count
from ..runtime.explorer import allowed_outcomes
from . import dlpack  # noqa: F401
from . import numpy  # noqa: F401

__all__ = ["dlpack", "numpy", "live_resource_count", "async_scope", "async_wait",
           "async_clear_error", "sync_devices", "MAX_PENDING_OPS", "allowed_outcomes"]

from ..base.traceback_filter import filter_public_functions as _filter_public_functions  # noqa: E402

_filter_public_functions(globals())  # a sync point's error shows the user's frames only
