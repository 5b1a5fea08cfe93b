"""The CUDA backend, through CuPy. Imported only when a GPU is asked for or probed.

Each logical GPU owns two non-blocking CuPy streams (never the legacy default stream): one for
kernels and one for host<->device copies. Kernels run with the device and its compute stream
current, so every CuPy call inside a kernel is queued on that stream and returns at once.
"""

from __future__ import annotations

import importlib.util
import weakref

import numpy as np

from ..base import device_checks, profile_events
from . import host_memory
from .base import COMPLETED, Device, Event, KeepAlive, Stream, call_kernel

__all__ = ["cuda_device_count", "CUDADevice", "CUDAStream", "CUDAEvent"]

#: Host copies at or above this size are staged through pinned memory so they run
#: asynchronously on the copy stream instead of blocking in a pageable-memory copy.
PINNED_STAGING_BYTES = 1 << 20


def _cupy():
    import cupy  # noqa: PLC0415 - deliberately lazy: importing cupy costs seconds

    return cupy


def cuda_device_count() -> int:
    """How many CUDA devices answer. 0 (never an error) without cupy, a driver or a device."""
    if importlib.util.find_spec("cupy") is None:
        return 0
    try:
        cupy = _cupy()
    except Exception:  # noqa: BLE001 - ImportError, or a broken CUDA install raising at import
        return 0
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count:
            with cupy.cuda.Device(0):
                cupy.zeros(1, dtype=np.float32).sum().get()  # the device really runs work
        return count
    except Exception:  # noqa: BLE001 - any CUDA failure here means no usable device: 0
        return 0


_PROFILE = profile_events.RECORDER
_ALWAYS_HOST_OPS = host_memory.ALWAYS_HOST_OPS
_profiled_streams = weakref.WeakSet()


def _flush_profiles():
    for stream in list(_profiled_streams):
        stream._flush_profile()


profile_events.register_flusher(_flush_profiles)


class CUDAEvent(Event):
    __slots__ = ("_event",)

    def __init__(self, event):
        self._event = event

    def query(self) -> bool:
        return self._event.done

    def synchronize(self) -> None:
        self._event.synchronize()

    def __repr__(self):
        return f"<CUDAEvent done={self._event.done}>"


class CUDAStream(Stream):
    """A non-blocking CuPy stream. While a profiler trace runs, each named launch is bracketed
    by two timing events; when the trace stops, their GPU times (relative to a reference event
    taken when the stream was idle, at a known host time) become slices on the stream's lane."""

    __slots__ = ("name", "_device", "_stream", "_only_device", "_timed", "_reference",
                 "__weakref__")

    def __init__(self, name: str, device_id: int):
        cupy = _cupy()
        self.name = name
        self._device = cupy.cuda.Device(device_id)
        with self._device:
            self._stream = cupy.cuda.Stream(non_blocking=True)
        # With one CUDA device in the process, it is every thread's current device: a launch
        # then enters only the stream (CuPy's device context costs the host on every op).
        self._only_device = cupy.cuda.runtime.getDeviceCount() == 1
        self._timed = []  # (name, start event, end event) of the running trace
        self._reference = None  # (event, host ns) for the running trace
        _profiled_streams.add(self)

    @property
    def cupy_stream(self):
        return self._stream

    def launch(self, fn, *args):
        if self._only_device:
            with self._stream:
                return fn(*args)
        with self._device, self._stream:
            return fn(*args)

    def launch_kernel(self, op, xp, arrays, attrs):
        """The op's kernel on `arrays` with this stream current: `op.cupy_kernel` where the op
        has one (a precompiled CuPy kernel object, `eager.ops.cupy_kernels`), else
        `op.kernel`. Hot: every eager op on the GPU; one frame fewer than `launch_op` when no
        profiler trace is running."""
        kernel = op.cupy_kernel or op.kernel
        if _PROFILE.active:
            return self.launch_op(op.name, call_kernel, kernel, xp, arrays, attrs)
        if self._only_device:
            with self._stream:
                return kernel(xp, *arrays, **attrs) if attrs else kernel(xp, *arrays)
        with self._device, self._stream:
            return kernel(xp, *arrays, **attrs) if attrs else kernel(xp, *arrays)

    def launch_op(self, name, fn, *args):
        if not _PROFILE.active:
            return self.launch(fn, *args)
        cupy = _cupy()
        with self._device, self._stream:
            if self._reference is None:
                self._stream.synchronize()  # idle: the reference event happens about now
                reference = cupy.cuda.Event()
                reference.record(self._stream)
                reference.synchronize()
                self._reference = (reference, profile_events.now_ns())
            start = cupy.cuda.Event()
            start.record(self._stream)
            result = fn(*args)
            end = cupy.cuda.Event()
            end.record(self._stream)
        self._timed.append((name, start, end))
        return result

    def _flush_profile(self):
        timed, self._timed = self._timed, []
        reference, self._reference = self._reference, None
        if not timed:
            return
        cupy = _cupy()
        self._stream.synchronize()
        event, host_ns = reference
        for name, start, end in timed:
            begin_ns = host_ns + int(cupy.cuda.get_elapsed_time(event, start) * 1e6)
            end_ns = host_ns + int(cupy.cuda.get_elapsed_time(event, end) * 1e6)
            profile_events.add_slice(self.name, name, begin_ns, end_ns)

    def record_event(self) -> Event:
        cupy = _cupy()
        with self._device:
            event = cupy.cuda.Event(disable_timing=True)
            event.record(self._stream)
        return CUDAEvent(event)

    def wait_event(self, event: Event) -> None:
        if isinstance(event, CUDAEvent):
            self._stream.wait_event(event._event)
        elif event is not COMPLETED:
            event.synchronize()

    def synchronize(self) -> None:
        self._stream.synchronize()

    def __repr__(self):
        return f"<CUDAStream {self.name}>"


class CUDADevice(Device):
    """A logical GPU backed by physical CUDA device `device_id`.

    Buffer ownership follows CuPy's memory pool, which hands a freed block back to the stream it
    was allocated on: every buffer this device keeps is allocated with its compute stream
    current, so reuse is ordered with the kernels that use it; a buffer the copy stream reads
    or writes (a source being copied out, a pinned staging buffer) is held by the copy stream
    until an event after the copy completes (see `base.KeepAlive`).
    """

    __slots__ = ("device_id", "_copy_holds", "_host_copies")
    host_result_ops = host_memory.ALWAYS_HOST_OPS
    host_ops = host_memory.HOST_OPS

    def __init__(self, index: int, device_id: int):
        cupy = _cupy()
        name = f"GPU:{index}"
        super().__init__("GPU", index, cupy, f"/physical_device:GPU:{device_id}",
                         CUDAStream(name + "/compute", device_id),
                         CUDAStream(name + "/copy", device_id))
        self.device_id = device_id
        self._copy_holds = KeepAlive()
        self._host_copies = host_memory.DeviceCopies()

    def run(self, op, arrays, attrs, inputs):
        for a in arrays:
            if a.__class__ is np.ndarray:  # a value in host memory (`host_memory`)
                return host_memory.run_with_host_values(
                    self, op, arrays, attrs,
                    lambda on_device: self.compute_stream.launch_kernel(op, self.xp, on_device,
                                                                        attrs))
        if op.name in _ALWAYS_HOST_OPS:
            return host_memory.run_on_host(self, op, arrays, attrs)
        return self.compute_stream.launch_kernel(op, self.xp, arrays, attrs)

    def in_device_memory(self, array):
        """`array` in this device's memory: a value held in host memory is copied there."""
        if array.__class__ is not np.ndarray:
            return array
        return self._host_copies.of(array, lambda a: self._upload(np.asarray(a, order="C")))

    def kernel_for(self, op):
        return op.cupy_kernel or op.kernel

    def _empty_on_compute(self, shape, dtype):
        compute = self.compute_stream
        with compute._device, compute._stream:
            return _cupy().empty(shape, dtype)

    def from_host(self, array):
        array = np.asarray(array, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        if host_memory.resident(array):
            return array.copy()  # the caller's array may change later
        if array.size <= host_memory.HOST_INT32_MAX_ELEMENTS:  # a number or a few: one
            return self._host_copies.of_value(array, self._upload)  # device copy per value
        return self._upload(array)

    def _upload(self, array):
        compute = self.compute_stream
        if array.nbytes < PINNED_STAGING_BYTES:
            # Small: a pageable copy is staged by the driver before the call returns; issuing
            # it on the compute stream orders it with the kernels that use the buffer.
            with compute._device, compute._stream:
                if array.ndim == 0:  # CuPy uploads a 0-d array as a scalar: float16 -0. became +0.
                    return _cupy().asarray(array.reshape(1)).reshape(())
                return _cupy().asarray(array)
        import cupyx  # noqa: PLC0415 - CuPy is optional and imported on first GPU use (see _cupy)

        out = self._empty_on_compute(array.shape, array.dtype)
        copy = self.copy_stream
        # `out` came from the compute stream's pool: kernels queued there may still use its
        # block (freed in their order), so the copy must not write it before they finish.
        copy.wait_event(compute.record_event())
        staged = cupyx.empty_pinned(array.shape, array.dtype)
        staged[...] = array
        with copy._device, copy._stream:
            out.set(staged, stream=copy._stream)  # asynchronous: from pinned memory
        done = copy.record_event()
        self._copy_holds.hold(done, staged)  # the pinned buffer is read until the copy is done
        compute.wait_event(done)  # kernels must not read `out` before the copy lands
        return out

    def to_host(self, array):
        if not isinstance(array, _cupy().ndarray):
            return array  # host values already: numpy, a TensorList, a resource handle
        copy = self.copy_stream
        copy.wait_event(self.ready_event(array))
        with copy._device:
            out = array.get(stream=copy._stream)
        copy.synchronize()  # the host needs the bytes now; nothing stays borrowed
        device_checks.raise_failed()  # a kernel's check that failed meanwhile surfaces here
        return out

    def to_host_many(self, arrays) -> list:
        """Arrays of one shape and dtype are stacked on the device and copied in one read (each
        read waits for the device: a loop's accumulated values, a TensorList's elements);
        others are copied one by one."""
        cupy = _cupy()
        out = [None] * len(arrays)
        groups = {}
        for i, a in enumerate(arrays):
            if isinstance(a, cupy.ndarray):
                groups.setdefault((a.shape, a.dtype), []).append(i)
            else:
                out[i] = a  # a host value already
        for positions in groups.values():
            if len(positions) == 1:
                out[positions[0]] = self.to_host(arrays[positions[0]])
                continue
            stacked = self.compute_stream.launch(cupy.stack, [arrays[i] for i in positions])
            for i, row in zip(positions, self.to_host(stacked)):
                out[i] = row
        return out

    def copy_from(self, array, source):
        if array.__class__ is np.ndarray:  # a value another GPU holds in host memory
            return self.from_host(array)
        if isinstance(source, CUDADevice) and source is not self:
            copy = self.copy_stream
            with source.compute_stream._device, source.compute_stream._stream:
                if not array.flags.c_contiguous:  # (ascontiguousarray makes 0-d arrays 1-d)
                    array = array.copy(order="C")
            copy.wait_event(source.ready_event(array))
            out = self._empty_on_compute(array.shape, array.dtype)
            copy.wait_event(self.compute_stream.record_event())  # see from_host
            with copy._device, copy._stream:
                out.data.copy_from_device_async(array.data, array.nbytes, copy._stream)
            done = copy.record_event()
            # The source came from the other device's pool: keep it until the copy has read it.
            self._copy_holds.hold(done, array)
            self.compute_stream.wait_event(done)
            return out
        return self.from_host(source.to_host(array))

    def synchronize(self) -> None:
        super().synchronize()
        self._copy_holds.prune()
        device_checks.raise_failed()
