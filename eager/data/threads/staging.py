"""Device staging: a source's elements copied to a device ahead of the consumer, behind
`prefetch_to_device` and `copy_to_device` (≈ `tf.data.experimental`'s).

`stage_to_device(source, device, buffer_size)` is a `Prefetcher` whose producer thread
copies every tensor of each element to `device` and then waits until the copies have landed,
so that an element the consumer takes is already in device memory: its training step neither
issues the copy nor waits for it. The copies are the device's own host-to-device path
(`Device.stage_from_host` for host arrays, `devices.base.transfer` for others): on a GPU they
run on its copy stream, large ones from pinned staging buffers (the CUDA backend), and the
compute stream waits for them on the device, not on the host. On the simulated GPU a staged
copy goes into memory of its own, so it waits for nothing on the compute stream and lands
while the step's kernels run; the CUDA backend's copy comes from the compute stream's memory
pool, which may hand out blocks queued kernels still use, so there it first waits for the
kernels queued before it (what overlaps the step is then the host's part of staging and the
copies issued before the step's kernels).

`buffer_size=0` (`copy_to_device`'s behaviour) copies each element when it is asked for, on the
consumer's thread, without waiting for the copy: the device orders its kernels after it.

Tensors already on `device` are passed through; a leaf that is not a tensor is a TypeError
naming it. The device is resolved when the iterator is made, with soft placement as ops are
(`prefetch_to_device("GPU:0")` on a machine without a GPU stages to the CPU, as TensorFlow does).
"""

from __future__ import annotations

import numpy as np

from ...base import nest
from ...core import context as _context
from ...core.dispatch import resolve_input
from ...devices import registry
from ...devices.base import Device, transfer
from ...tensor import EagerTensor, Tensor, wrap_value
from . import autotune
from .prefetch import Prefetcher

__all__ = ["stage_to_device", "resolve_device", "copy_to"]


def resolve_device(device) -> Device:
    """The `Device` that `device` (a name such as "GPU:0" or TensorFlow's long form, or a
    `Device`) names, with soft placement as ops get it; a malformed name is a ValueError."""
    if isinstance(device, Device):
        return device
    spec = registry.parse_device(device)
    found, message = registry.resolve(spec, _context.soft_device_placement())
    if found is None:
        raise ValueError(f"prefetch_to_device: {message}")
    return found


def copy_to(element, device: Device):
    """`element` (a nested structure of tensors) with every tensor copied to `device` (those
    already there are kept). The copies are issued, not waited for."""
    return nest.map_structure(lambda leaf: _leaf_to(leaf, device), element)


def _leaf_to(leaf, device):
    if leaf.__class__ is not EagerTensor:
        if not isinstance(leaf, Tensor):
            raise TypeError(f"prefetch_to_device: dataset elements must be tensors (or nested "
                            f"structures of tensors); got {type(leaf).__name__} {leaf!r:.60}.")
        leaf = resolve_input(leaf, None)  # a pending tensor (async execution) waits
    source = leaf._meta.device
    if source is device:
        return leaf
    value = leaf._value
    if source.inline and value.__class__ is np.ndarray:  # a host array: the staging copy
        return wrap_value(device.stage_from_host(value), device, leaf._meta.dtype)
    return wrap_value(transfer(value, source, device), device, leaf._meta.dtype)


class _Copies:
    """The elements of `source` on `device`; with `wait`, each is returned only once its
    copies have landed (see the module doc). Runs on the staging thread."""

    __slots__ = ("pipeline_source", "_device", "_wait")

    def __init__(self, source, device, wait):
        self.pipeline_source = source  # (stopping the stager reaches a pipeline it reads)
        self._device = device
        self._wait = wait

    def __iter__(self):
        return self

    def __next__(self):
        element = next(self.pipeline_source)
        staged = copy_to(element, self._device)
        if self._wait and not self._device.inline:
            # Everything copied so far (this element's tensors) is done after this event: the
            # consumer's kernels then find their inputs ready.
            self._device.copy_stream.record_event().synchronize()
        return staged


def stage_to_device(source, device, buffer_size=autotune.AUTOTUNE) -> Prefetcher:
    """An iterator over the elements of `source` with their tensors on `device`, staged up to
    `buffer_size` elements ahead on a thread (see the module doc); `close()` and the rest as
    `Prefetcher`. `source` is an iterator, or a zero-argument callable returning one."""
    if hasattr(source, "__next__"):
        iterator = source

        def make_source():
            return iterator
    elif callable(source):
        make_source = source
    else:
        raise TypeError(f"stage_to_device needs an iterator, or a zero-argument callable "
                        f"returning one; got {type(source).__name__}.")
    target = resolve_device(device)
    start, _ = autotune.prefetch_buffer(buffer_size)
    wait = start > 0

    def make_copies():
        return _Copies(iter(make_source()), target, wait)

    return Prefetcher(make_copies, buffer_size, name=f"staging to {target.name}")
