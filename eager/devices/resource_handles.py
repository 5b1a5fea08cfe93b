"""Resource handles: the values of `eager.resource` tensors.

A handle names an entry in its device's resource manager by a unique id, and carries the dtype
and shape of what it refers to as a side channel (TensorFlow's "handle data"), so shape
inference for a read (and tracing) knows the result's type without touching data. The handle is
a plain value: copying it never copies the resource; the resource lives until destroyed.
"""

from __future__ import annotations

from ..base import dtypes as _dt
from . import registry as _registry
from ..base.errors import FailedPreconditionError, NotFoundError
from ..base.tensor_shape import TensorShape

__all__ = ["ResourceHandle", "eager_handle", "handle_data", "live_resource_count"]

class ResourceHandle:
    """The value of a resource tensor (shape (), dtype `eager.resource`)."""

    __slots__ = ("uid", "device", "kind", "name", "var_dtype", "var_shape", "__weakref__")

    #: What dispatch and EagerTensor read from a value: the tensor's dtype and (scalar) shape.
    eager_dtype = dtype = _dt.resource
    shape = ()
    ndim = 0
    size = 1

    def __init__(self, uid, device, kind, name, var_dtype, var_shape):
        self.uid = uid
        self.device = device
        self.kind = kind  # "Variable", ...
        self.name = name
        self.var_dtype = var_dtype
        self.var_shape = TensorShape(var_shape)

    def resource(self, op_name):
        """The live resource, or the error TensorFlow gives for a destroyed one."""
        found = self.device.resources.lookup(self.uid)
        if found is None:
            raise NotFoundError(None, op_name, f"{op_name}: Resource {self.device.full_name}/"
                                f"{self.kind}/{self.name}/{self.uid} does not exist (it was "
                                f"destroyed). [Op:{op_name}]")
        return found

    def storage_or_uninitialized(self, op_name):
        """The resource, checking it holds a value (reading an uninitialized variable is
        TensorFlow's FailedPreconditionError)."""
        found = self.resource(op_name)
        if found.value is None:
            raise FailedPreconditionError(
                None, op_name, f"{op_name}: Could not read variable {self.name}: it is "
                               f"uninitialized. Assign it a value first. [Op:{op_name}]")
        return found

    def copied_to(self, target, source):
        """A handle names its resource wherever it is passed (`devices.base.transfer`)."""
        return self

    def __repr__(self):
        return (f"<ResourceHandle {self.kind} {self.name!r} id={self.uid} on {self.device.name}: "
                f"{self.var_dtype.name}{list(self.var_shape)}>")

    def __reduce__(self):
        raise TypeError("Resource handles are process-local and cannot be pickled; save the "
                        "variable's value (eager.train.Checkpoint) instead.")


def eager_handle(handle_tensor):
    """The ResourceHandle an eager resource tensor holds; None for a symbolic one (tracing)."""
    value = getattr(handle_tensor, "_value", None)
    return value if isinstance(value, ResourceHandle) else None


def handle_data(handle_tensor):
    """(dtype, shape) of what a resource tensor refers to, from an eager handle or a symbolic
    tensor carrying `_handle_data` (tracing)."""
    value = eager_handle(handle_tensor)
    if value is not None:
        return value.var_dtype, value.var_shape
    data = getattr(handle_tensor, "_handle_data", None)
    if data is None:
        raise TypeError(f"{handle_tensor!r} is not a resource handle with known dtype and shape.")
    return data


def live_resource_count() -> int:
    """How many resources (variables, ...) are alive on all devices, once the work queued on
    their compute streams has run: a dropped variable's destroy is queued there behind the
    kernels that use it, so on a device whose kernels run later the count would otherwise
    depend on how far the stream has got. (Waits without reporting kernel failures: those
    belong to the next synchronization.)"""
    devices = _registry.devices()
    for d in devices:
        d.compute_stream.record_event().synchronize()
    return sum(d.resources.live_count() for d in devices)
