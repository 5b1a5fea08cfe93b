"""`eager.config` ≈ `tf.config`: devices and placement settings, and whether `eager.function`s
run eagerly."""

from ..core.context import set_soft_device_placement
from ..core.context import soft_device_placement as get_soft_device_placement
from ..devices.registry import (LogicalDevice, LogicalDeviceConfiguration, PhysicalDevice,
                                get_logical_device_configuration, get_visible_devices,
                                list_logical_devices, list_physical_devices,
                                set_logical_device_configuration, set_visible_devices)
from ..functions.polymorphic import functions_run_eagerly, run_functions_eagerly

VirtualDeviceConfiguration = LogicalDeviceConfiguration

__all__ = ["list_physical_devices", "list_logical_devices", "set_logical_device_configuration",
           "get_logical_device_configuration", "LogicalDeviceConfiguration",
           "VirtualDeviceConfiguration", "PhysicalDevice", "LogicalDevice",
           "set_soft_device_placement", "get_soft_device_placement", "set_visible_devices",
           "get_visible_devices", "run_functions_eagerly", "functions_run_eagerly", "threading"]


from . import experimental  # noqa: E402,F401
from . import threading  # noqa: E402,F401
