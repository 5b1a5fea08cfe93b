"""`eager.experimental.dlpack` ≈ `tf.experimental.dlpack`: zero-copy exchange with other
array libraries.

`from_dlpack` accepts what TensorFlow accepts (a DLPack capsule) and, beyond TF, any object with
`__dlpack__` (a numpy or cupy array, a torch tensor). The result shares memory with the producer,
so the producer must not modify it afterwards: eager tensors are immutable by contract.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..devices import registry
from ..tensor import EagerTensor, wrap_value
from ..core.tensor_conversion import convert_to_tensor

__all__ = ["from_dlpack", "to_dlpack"]

_KDL_CPU = 1
_KDL_CUDA = 2
_KDL_CUDA_HOST = 3


def to_dlpack(tensor):
    """A DLPack capsule of `tensor`'s buffer (consumable once, as the protocol says)."""
    t = convert_to_tensor(tensor)
    if not isinstance(t, EagerTensor):
        raise TypeError("to_dlpack needs an eager tensor, not a symbolic one.")
    return t.__dlpack__()


class _CapsuleProducer:
    """Adapts a bare capsule to the `__dlpack__` protocol numpy/cupy consumers expect."""

    __slots__ = ("_capsule", "_device")

    def __init__(self, capsule, device):
        self._capsule = capsule
        self._device = device

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def _capsule_device(capsule):
    """(device_type, device_id) from a 'dltensor' capsule: DLManagedTensor starts with DLTensor,
    whose first field is the data pointer followed by DLDevice {int32 type; int32 id}."""
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    is_valid = ctypes.pythonapi.PyCapsule_IsValid
    is_valid.restype = ctypes.c_int
    is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    if is_valid(capsule, b"dltensor"):
        address = get_pointer(capsule, b"dltensor")
        offset = ctypes.sizeof(ctypes.c_void_p)
    elif is_valid(capsule, b"dltensor_versioned"):
        # DLManagedTensorVersioned: {DLPackVersion version (2 x uint32); void* manager_ctx;
        # void (*deleter)(...); uint64 flags; DLTensor dl_tensor}.
        address = get_pointer(capsule, b"dltensor_versioned")
        offset = 8 + 2 * ctypes.sizeof(ctypes.c_void_p) + 8 + ctypes.sizeof(ctypes.c_void_p)
    else:
        raise ValueError("from_dlpack: the capsule is not an unconsumed DLPack tensor (was it "
                         "already used?).")
    device = (ctypes.c_int32 * 2).from_address(address + offset)
    return int(device[0]), int(device[1])


def from_dlpack(dlcapsule):
    """An eager tensor sharing memory with a DLPack capsule or an object with `__dlpack__`."""
    if hasattr(dlcapsule, "__dlpack__"):
        producer = dlcapsule
        device_type, device_id = producer.__dlpack_device__()
    elif type(dlcapsule).__name__ == "PyCapsule":
        device_type, device_id = _capsule_device(dlcapsule)
        producer = _CapsuleProducer(dlcapsule, (device_type, device_id))
    else:
        raise TypeError(f"from_dlpack expects a DLPack capsule or an object with __dlpack__, got "
                        f"{type(dlcapsule).__name__}.")
    if device_type in (_KDL_CPU, _KDL_CUDA_HOST):
        array = np.from_dlpack(producer)
        device = registry.lookup("CPU:0")
    elif device_type == _KDL_CUDA:
        device = registry.gpu_for_cuda_device(device_id)
        if device is None:
            raise ValueError(f"from_dlpack: the tensor lives on CUDA device {device_id}, which "
                             "eager has no GPU device for.")
        array = device.xp.from_dlpack(producer)
    else:
        raise ValueError(f"from_dlpack: unsupported DLPack device type {device_type}.")
    return wrap_value(array, device)
