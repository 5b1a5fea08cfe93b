"""The CPU backend: numpy arrays, kernels run inline on the dispatching thread."""

from __future__ import annotations

import numpy as np

from .base import Device, InlineStream

__all__ = ["CPUDevice"]


class CPUDevice(Device):
    """A (logical) CPU. Several logical CPUs may share the one physical CPU; each owns its arrays:
    copying between them makes a new buffer, as moving between real devices would."""

    __slots__ = ()

    def __init__(self, index: int, physical_name: str = "/physical_device:CPU:0"):
        name = f"CPU:{index}"
        super().__init__("CPU", index, np, physical_name,
                         InlineStream(name + "/compute"), InlineStream(name + "/copy"))

    def from_host(self, array):
        return np.array(array, copy=True)

    def to_host(self, array):
        return array

    def copy_from(self, array, source):
        if source.inline:  # another logical CPU: a new buffer
            return np.array(array, copy=True)
        return source.to_host(array)  # to_host returns a fresh host array

    def run(self, op, arrays, attrs, inputs):
        return op.kernel(np, *arrays, **attrs)
