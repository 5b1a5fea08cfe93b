"""Which devices exist: physical devices, their split into logical devices, the default device.

Devices are discovered lazily. Listing CPUs never touches CUDA; the first question that needs
GPUs (listing them, placing an op, choosing the default device) probes CuPy once. As in
TensorFlow, the logical configuration may be changed only until the devices are initialized
(the first time a logical device is needed).
"""

from __future__ import annotations

import os
import threading
from collections import namedtuple

from ..base import device_checks
from .base import Device
from .cpu import CPUDevice
from .spec import DeviceSpec, parse

__all__ = ["PhysicalDevice", "LogicalDevice", "LogicalDeviceConfiguration",
           "list_physical_devices", "list_logical_devices", "set_logical_device_configuration",
           "get_logical_device_configuration", "devices", "lookup", "default_device",
           "is_initialized", "reset", "on_initialized", "set_simulated_gpus",
           "get_simulated_gpus", "set_simulated_kernels", "set_visible_devices",
           "get_visible_devices"]

PhysicalDevice = namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = namedtuple("LogicalDevice", ["name", "device_type"])


class LogicalDeviceConfiguration:
    """≈ `tf.config.LogicalDeviceConfiguration`: one logical device carved from a physical one."""

    __slots__ = ("memory_limit", "experimental_priority", "experimental_device_ordinal")

    def __init__(self, memory_limit=None, experimental_priority=None,
                 experimental_device_ordinal=None):
        self.memory_limit = memory_limit
        self.experimental_priority = experimental_priority
        self.experimental_device_ordinal = experimental_device_ordinal

    def __repr__(self):
        return f"LogicalDeviceConfiguration(memory_limit={self.memory_limit})"

    def __eq__(self, other):
        return (isinstance(other, LogicalDeviceConfiguration)
                and self.memory_limit == other.memory_limit)

    __hash__ = None


_CPU_PHYSICAL = PhysicalDevice("/physical_device:CPU:0", "CPU")


def _simulated_from_environment():
    value = os.environ.get("EAGER_SIMULATED_GPUS", "").strip()
    if not value:
        return None
    try:
        count = int(value)
    except ValueError:
        raise ValueError(f"EAGER_SIMULATED_GPUS must be a number of GPUs, got {value!r}.") from None
    return count if count > 0 else None


class _State:
    def __init__(self):
        self.lock = threading.RLock()
        self.gpu_physical = None  # list[PhysicalDevice] once probed
        self.simulated_gpus = _simulated_from_environment()  # None: real GPUs (if any)
        self.simulated_kernels = True  # False: simulated launches skip their kernels
        self.hidden = set()  # physical device names made invisible (set_visible_devices)
        self.logical_config = {}  # physical name -> list[LogicalDeviceConfiguration]
        self.devices = None  # list[Device] once initialized
        self.by_name = {}
        self.default = None
        self.listeners = []


_state = _State()


def set_simulated_gpus(count) -> None:
    """Replaces the GPUs (real or none) by `count` simulated ones (see `devices.virtual`); 0 or
    None goes back to the real GPUs. Like the logical configuration, only before the devices
    are initialized (RuntimeError after, as TensorFlow raises for virtual devices)."""
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 0):
        raise ValueError(f"count must be a non-negative int or None, got {count!r}.")
    with _state.lock:
        count = count or None
        if _state.devices is not None:
            if count == _state.simulated_gpus:
                return
            raise RuntimeError("Simulated GPUs cannot be configured after the devices are "
                               "initialized.")
        if count != _state.simulated_gpus:
            for name in [n for n in _state.logical_config if "GPU" in n]:
                del _state.logical_config[name]  # it configured the previous set of GPUs
        _state.simulated_gpus = count


def set_simulated_kernels(run: bool) -> None:
    """Whether the simulated GPUs made at the next initialization run their kernels (True, the
    default) or only launch them (False: every op's outputs are zeros, ready at once; see
    `devices.virtual.VirtualDevice`). For benchmarks of eager's own host time per op; not part
    of the public API. Only before the devices are initialized, as `set_simulated_gpus`."""
    with _state.lock:
        if _state.devices is not None and bool(run) != _state.simulated_kernels:
            raise RuntimeError("Simulated kernels cannot be configured after the devices are "
                               "initialized.")
        _state.simulated_kernels = bool(run)


def get_simulated_gpus() -> int:
    """How many simulated GPUs replace the real ones (0: none)."""
    return _state.simulated_gpus or 0


def set_visible_devices(devices, device_type=None) -> None:
    """≈ `tf.config.set_visible_devices`: only `devices` (PhysicalDevices, one or a list) of
    `device_type` (all types when None) get logical devices; `set_visible_devices([], "GPU")`
    runs everything on the CPU. Only before the devices are initialized (RuntimeError after,
    as TensorFlow). The CPU cannot be hidden."""
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    device_type = _check_type(device_type)
    keep = {_physical_name(d) for d in devices}
    candidates = [d for d in list_physical_devices()
                  if device_type is None or d.device_type == device_type]
    unknown = keep - {d.name for d in list_physical_devices()}
    if unknown:
        raise ValueError(f"Unrecognized physical devices {sorted(unknown)}.")
    hidden = {d.name for d in candidates if d.name not in keep}
    if _CPU_PHYSICAL.name in hidden:
        raise ValueError("The CPU cannot be made invisible (eager needs it for host ops).")
    with _state.lock:
        if _state.devices is not None:
            if hidden == _state.hidden:
                return
            raise RuntimeError("Visible devices cannot be modified after being initialized.")
        _state.hidden = hidden


def get_visible_devices(device_type=None) -> list:
    """≈ `tf.config.get_visible_devices`: the physical devices that are (or will be) used."""
    return [d for d in list_physical_devices(device_type) if d.name not in _state.hidden]


def _probe_gpus():
    if _state.simulated_gpus:
        return [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU")
                for i in range(_state.simulated_gpus)]
    if _state.gpu_physical is None:
        with _state.lock:
            if _state.gpu_physical is None:
                # The CuPy backend (CuPy is optional) is loaded only when GPUs are asked for.
                from .cuda import cuda_device_count  # noqa: PLC0415

                n = cuda_device_count()
                _state.gpu_physical = [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU")
                                       for i in range(n)]
    return _state.gpu_physical


def _check_type(device_type):
    if device_type is None:
        return None
    if not isinstance(device_type, str):
        raise TypeError(f"device_type must be a string such as 'CPU' or 'GPU', got "
                        f"{device_type!r}.")
    return device_type.upper()


def list_physical_devices(device_type=None):
    """≈ `tf.config.list_physical_devices`. Asking only for CPUs does not probe CUDA."""
    device_type = _check_type(device_type)
    found = []
    if device_type in (None, "CPU"):
        found.append(_CPU_PHYSICAL)
    if device_type in (None, "GPU"):
        found.extend(_probe_gpus())
    return found


def _physical_name(device):
    if isinstance(device, PhysicalDevice):
        return device.name
    if isinstance(device, str):
        return device
    raise TypeError(f"Expected a PhysicalDevice from list_physical_devices(), got {device!r}.")


def set_logical_device_configuration(device, logical_devices):
    """≈ `tf.config.set_logical_device_configuration`: split `device` into several logical ones.

    Raises RuntimeError once devices are initialized, as TensorFlow does.
    """
    name = _physical_name(device)
    known = {d.name for d in list_physical_devices()}
    if name not in known:
        raise ValueError(f"Unrecognized physical device {name!r}; known: {sorted(known)}.")
    if logical_devices is None:
        configs = None
    else:
        configs = list(logical_devices)
        if not configs:
            raise ValueError("logical_devices must list at least one LogicalDeviceConfiguration.")
        for c in configs:
            if not isinstance(c, LogicalDeviceConfiguration):
                raise TypeError(f"Expected LogicalDeviceConfiguration objects, got {c!r}.")
    with _state.lock:
        if _state.devices is not None:
            if _state.logical_config.get(name) == configs:
                return
            raise RuntimeError("Virtual devices cannot be modified after being initialized.")
        if configs is None:
            _state.logical_config.pop(name, None)
        else:
            _state.logical_config[name] = configs


def get_logical_device_configuration(device):
    return _state.logical_config.get(_physical_name(device))


def _initialize():
    with _state.lock:
        if _state.devices is not None:
            return _state.devices
        devices = []
        n_cpu = len(_state.logical_config.get(_CPU_PHYSICAL.name, [None]))
        for i in range(n_cpu):
            devices.append(CPUDevice(i, _CPU_PHYSICAL.name))
        gpu_index = 0
        for phys in _probe_gpus():
            if phys.name in _state.hidden:
                continue
            device_id = int(phys.name.rsplit(":", 1)[1])
            for _ in _state.logical_config.get(phys.name, [None]):
                if _state.simulated_gpus:
                    # Simulated GPUs exist only when configured (tests); a plain `import eager`
                    # does not pay for their module (~2 ms).
                    from .virtual import VirtualDevice  # noqa: PLC0415

                    devices.append(VirtualDevice(gpu_index, phys.name,
                                                 _state.simulated_kernels))
                else:
                    from .cuda import CUDADevice  # noqa: PLC0415 - the CuPy backend, as above

                    devices.append(CUDADevice(gpu_index, device_id))
                gpu_index += 1
        _state.by_name = {d.name: d for d in devices}
        _state.default = _state.by_name.get("GPU:0") or _state.by_name["CPU:0"]
        _state.devices = devices
        for listener in list(_state.listeners):
            listener()
        return devices


def devices() -> list:
    """All logical devices (initializing them on first use)."""
    d = _state.devices
    return d if d is not None else _initialize()


def is_initialized() -> bool:
    return _state.devices is not None


def list_logical_devices(device_type=None):
    """≈ `tf.config.list_logical_devices` (names in TensorFlow's long form)."""
    device_type = _check_type(device_type)
    return [LogicalDevice(d.full_name, d.device_type) for d in devices()
            if device_type is None or d.device_type == device_type]


def lookup(name: str):
    """The Device with short name `name` ("CPU:1"), or None."""
    if _state.devices is None:
        _initialize()
    return _state.by_name.get(name)


def gpu_for_cuda_device(device_id: int):
    """The first logical GPU backed by CUDA device `device_id`, or None."""
    for d in devices():
        if d.device_type == "GPU" and getattr(d, "device_id", None) == device_id:
            return d
    return None


def default_device() -> Device:
    """GPU:0 when a GPU exists, else CPU:0 (TensorFlow's default placement)."""
    d = _state.default
    if d is None:
        _initialize()
        d = _state.default
    return d


def resolve(spec: DeviceSpec, soft: bool):
    """The device a (possibly partial) spec names; with soft placement, the closest existing one.

    Returns (device, None) on success or (None, message) when no device satisfies `spec` and
    soft placement is off.
    """
    if spec.device_type is None:
        return default_device(), None
    all_devices = devices()
    index = 0 if spec.device_index is None else spec.device_index
    found = _state.by_name.get(f"{spec.device_type}:{index}")
    if found is not None:
        return found, None
    if soft:
        same_type = [d for d in all_devices if d.device_type == spec.device_type]
        return (same_type[0] if same_type else _state.by_name["CPU:0"]), None
    names = ", ".join(d.name for d in all_devices)
    return None, (f"Could not satisfy device specification '{spec.to_string()}': no such device. "
                  f"Available devices: {names}.")


def on_initialized(listener) -> None:
    """Calls `listener()` whenever the device set is (re)initialized (and now, if it is)."""
    _state.listeners.append(listener)
    if _state.devices is not None:
        listener()


def reset() -> None:
    """Forgets the logical configuration and the device set. For tests only: lets one process
    try several configurations. Tensors on forgotten devices stay readable."""
    with _state.lock:
        _state.logical_config.clear()
        _state.simulated_gpus = _simulated_from_environment()
        _state.simulated_kernels = True
        _state.hidden = set()
        for device in _state.devices or ():
            device.close()
        _state.devices = None
        _state.by_name = {}
        _state.default = None
    device_checks.discard_pending()  # flags on the forgotten devices
    for listener in list(_state.listeners):
        listener()


def parse_device(name) -> DeviceSpec:
    """A DeviceSpec from a name, a DeviceSpec, a LogicalDevice or a Device."""
    if isinstance(name, DeviceSpec):
        return name
    if isinstance(name, Device):
        return parse(name.name)
    if isinstance(name, LogicalDevice):
        return parse(name.name)
    return parse(name)
