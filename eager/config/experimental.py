"""`eager.config.experimental` ≈ `tf.config.experimental`: execution mode, simulated GPUs, and
TF's older names for device configuration (`set_memory_growth`, `VirtualDeviceConfiguration`,
`set_virtual_device_configuration`)."""

from ..async_exec import get_synchronous_execution, set_synchronous_execution
from ..devices.registry import (LogicalDeviceConfiguration, get_logical_device_configuration,
                                get_simulated_gpus, set_logical_device_configuration,
                                set_simulated_gpus)

__all__ = ["set_synchronous_execution", "get_synchronous_execution", "set_simulated_gpus",
           "get_simulated_gpus", "set_memory_growth", "get_memory_growth",
           "VirtualDeviceConfiguration", "set_virtual_device_configuration",
           "get_virtual_device_configuration"]

#: TensorFlow's older names for the logical-device configuration.
VirtualDeviceConfiguration = LogicalDeviceConfiguration
set_virtual_device_configuration = set_logical_device_configuration
get_virtual_device_configuration = get_logical_device_configuration

_memory_growth: dict = {}


def set_memory_growth(device, enable):
    """≈ `tf.config.experimental.set_memory_growth`: accepted for GPUs and recorded (CuPy's
    memory pool already grows on demand, so there is nothing to switch); other devices are
    TF's ValueError."""
    if getattr(device, "device_type", None) != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")
    _memory_growth[device.name] = bool(enable)


def get_memory_growth(device):
    """≈ `tf.config.experimental.get_memory_growth`: what `set_memory_growth` recorded."""
    if getattr(device, "device_type", None) != "GPU":
        raise ValueError("Cannot get memory growth on non-GPU and non-Pluggable devices")
    return _memory_growth.get(device.name, False)

from ..base.traceback_filter import filter_public_functions as _filter_public_functions  # noqa: E402

_filter_public_functions(globals())  # errors leaving these show the user's frames only
