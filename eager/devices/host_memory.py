"""Which values a device with memory of its own keeps in host memory, and running the ops
that compute them on the host.

Why: TensorFlow keeps a GPU's int32 tensors in host memory. Loop counters, sizes, shapes and
the indices computed from them are read by the host (a loop's condition, the shape a kernel
allocates), and each read of device memory waits for everything queued on the device. Kept on
the host, they are read at once, and a kernel that needs one on the device gets a copy, which
waits for nothing. Eager keeps small int32 values there (`HOST_INT32_MAX_ELEMENTS`): a larger
int32 array (a batch's labels, a gather's indices) is data a kernel reads on the device, and
would otherwise be copied there at every use. Small bool values (a flag, a loop's constant
condition, a comparison of counters) stay there too. The tensors are the device's (`.device`);
only their memory differs.

A backend that follows this (the CUDA backend, the simulated GPU) makes such values in
`from_host` (`resident`) and routes an op whose inputs include one through `run_on_host` when
the op computes on the host (`runs_on_host`), else copies the values its kernel reads on the
device (every input but `OpDef.host_inputs`, TensorFlow's HostMemory) there first, once per
value while it lives (`DeviceCopies`).
"""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["HOST_INT32_MAX_ELEMENTS", "HOST_OPS", "ALWAYS_HOST_OPS", "resident", "runs_on_host",
           "run_on_host", "run_with_host_values", "DeviceCopies", "SCALAR_COPIES"]

#: The largest int32 array, in elements, a device keeps in host memory.
HOST_INT32_MAX_ELEMENTS = 8

#: How many small values' device copies a device keeps (`DeviceCopies.of_value`).
SCALAR_COPIES = 1024

#: Ops that run on the host when every input is a host value (TensorFlow registers their int32
#: GPU kernels with all inputs and outputs in host memory): integer arithmetic, comparisons
#: and logic, and what builds or slices shapes.
HOST_OPS = frozenset({
    "AddV2", "Sub", "Mul", "FloorDiv", "FloorMod", "RealDiv", "Maximum", "Minimum", "Neg",
    "Abs", "Sign", "Square", "Less", "LessEqual", "Greater", "GreaterEqual", "Equal",
    "NotEqual", "LogicalAnd", "LogicalOr", "LogicalNot", "SelectV2", "Identity",
    "StopGradient", "Pack", "Unpack", "ConcatV2", "StridedSlice", "Slice", "Reshape",
    "ExpandDims", "Squeeze", "Fill", "Range", "Cast", "Sum", "Prod", "Max", "Min", "Tile",
    "GatherV2"})

#: Ops that run on the host whatever their inputs are: those that read only their inputs'
#: metadata (a list's length is its bookkeeping), and a traced program's constants
#: (TensorFlow's int32 `Const` of a GPU is in host memory).
ALWAYS_HOST_OPS = frozenset({"Shape", "Size", "Rank", "Const", "TensorListLength"})


def resident(array) -> bool:
    """Whether `array`, made on the host for a device, stays in host memory: a small int32
    value, or a small bool (a flag, a loop's constant condition), as the results of the host
    ops are kept (`run_on_host`)."""
    return (array.dtype == np.int32 or array.dtype == np.bool_) and \
        array.size <= HOST_INT32_MAX_ELEMENTS


def runs_on_host(op, arrays) -> bool:
    """Whether `op` on `arrays` (some of them host values) runs on the host."""
    return op.name in ALWAYS_HOST_OPS or (op.name in HOST_OPS and all(
        a.__class__ is np.ndarray for a in arrays))


def run_with_host_values(device, op, arrays, attrs, launch):
    """A backend's `run` of `op` on `arrays` of which some are host values: on the host when
    the op computes there (`runs_on_host`), else `launch(arrays)` with the host values its
    kernel reads on the device (every input but `op.host_inputs`) copied there first."""
    if runs_on_host(op, arrays):
        return run_on_host(device, op, arrays, attrs)
    host = op.host_inputs
    return launch([device.in_device_memory(a) if k not in host else a
                   for k, a in enumerate(arrays)])


def run_on_host(device, op, arrays, attrs):
    """`op`'s CPU kernel on `arrays`, its outputs as `device` holds them: small int32 and bool
    values stay in host memory (a comparison of host counters is a loop's condition); others
    are copied to the device (`device.in_device_memory`)."""
    out = op.kernel(np, *arrays, **attrs) if attrs else op.kernel(np, *arrays)
    if out.__class__ is tuple or out.__class__ is list:
        return type(out)(_held(device, o) for o in out)
    return _held(device, out)


def _held(device, value):
    array = np.asarray(value)
    if (array.dtype == np.int32 or array.dtype == np.bool_) and \
            array.size <= HOST_INT32_MAX_ELEMENTS:
        return array
    return device.in_device_memory(array)


class DeviceCopies:
    """A device's copies of the values it holds in host memory (`in_device_memory` asks here),
    and of the numbers and small arrays it is given (`from_host`). Host values are never
    written (a tensor's value is immutable) and neither are device arrays once made, so one
    copy may serve a value for as long as it exists, and a small value's copy may serve every
    value equal to it.

    Why: a kernel reading a host value on the device needs it there. A traced program's
    constants (a folded size or flag, an int32 literal) are host values read at every run; an
    eager step's sizes (a mean's `cast(size, float32)`, a metric's count, `divide_no_nan`'s
    zero and one) and Python numbers (`x * 1.5`) are new host values at every step, equal to
    the last step's. Copied at every use, each doubled the launches of the op reading it (and
    an eager Keras step copied five such values per step); TensorFlow keeps a cache of small
    constants too.

    * `of_value`: a value of at most `HOST_INT32_MAX_ELEMENTS` elements, one copy per value
      (dtype, shape and bytes: -0.0 is not 0.0); at most `SCALAR_COPIES` are kept (emptied
      when full: a loop making a new number per iteration keeps none for long).
    * `of`: a larger value, one copy per host array while it lives."""

    __slots__ = ("_copies", "_values")

    def __init__(self):
        self._copies = {}  # id(host array) -> (weak reference to it, its device copy)
        self._values = {}  # (dtype, shape, bytes) -> the device copy of that small value

    def of(self, array, upload):
        """The device copy of host array `array`, made by `upload(array)` the first time it
        (or, for a small array, a value equal to it) is asked for."""
        if array.size <= HOST_INT32_MAX_ELEMENTS:
            return self.of_value(array, upload)
        key = id(array)
        kept = self._copies.get(key)
        if kept is not None and kept[0]() is array:
            return kept[1]
        copy = upload(array)
        copies = self._copies
        # (The callback runs as the array is freed, before its id can be reused.)
        copies[key] = (weakref.ref(array, lambda _, key=key: copies.pop(key, None)), copy)
        return copy

    def of_value(self, array, upload):
        """The device copy of small host array `array` (at most `HOST_INT32_MAX_ELEMENTS`
        elements), one per value, made by `upload(array)` the first time."""
        key = (array.dtype, array.shape, array.tobytes())
        copy = self._values.get(key)
        if copy is None:
            if len(self._values) >= SCALAR_COPIES:
                self._values.clear()
            copy = self._values[key] = upload(array)
        return copy
