"""The device interface every backend implements: a `Device` owns an array module and streams.

A device runs kernels written against an array module `xp` (numpy or cupy) on one of its
streams. Work on one stream is ordered; work on different streams is ordered only through
events. The CPU backend's streams run work inline, so their events are complete as soon as they
exist; the CUDA backend (cupy) and the simulated GPU (virtual) launch asynchronously. Dispatch
code is written once against this interface, so the ordering logic that matters on a GPU is the
same code on every backend.
"""

from __future__ import annotations

import collections
import threading

from .resource_manager import ResourceManager

__all__ = ["Device", "Stream", "Event", "CompletedEvent", "InlineStream", "COMPLETED", "transfer",
           "KeepAlive", "call_kernel"]


class Event:
    """A point in a stream's work: done once everything launched before it has finished."""

    __slots__ = ()

    def query(self) -> bool:
        raise NotImplementedError

    def synchronize(self) -> None:
        raise NotImplementedError


class CompletedEvent(Event):
    """An event that is already done (work on inline streams finishes before launch returns)."""

    __slots__ = ()

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def __repr__(self):
        return "<CompletedEvent>"


COMPLETED = CompletedEvent()


class Stream:
    """An ordered queue of work on one device."""

    __slots__ = ()

    #: True when `launch` runs the work before returning (no events needed for ordering).
    inline = False

    def launch(self, fn, *args):
        """Queues `fn(*args)` and returns without waiting for it. A CUDA stream returns `fn`'s
        result (CuPy arrays whose contents are still being computed); a simulated stream
        returns the event after the work (`fn` writes into buffers the caller allocated)."""
        raise NotImplementedError

    def launch_op(self, name, fn, *args):
        """`launch`, naming the work (for errors and the profiler's stream lanes). Like a CUDA
        launch, it may block the host while the stream's queue of unfinished work is full (the
        simulated GPU's `MAX_PENDING_LAUNCHES`), so that a thread issuing work faster than the
        device runs it cannot queue without bound."""
        return self.launch(fn, *args)

    def launch_from_finalizer(self, name, fn, *args):
        """`launch_op` for a finalizer (`__del__`, a weakref callback): it never waits for room
        in the queue. The collector runs finalizers at any allocation, in a thread that may hold
        a lock the queued work needs, so waiting there for that work could never end; what a
        finalizer launches (a destroy) is small and rare, so exceeding the bound is harmless."""
        return self.launch_op(name, fn, *args)

    def record_event(self) -> Event:
        raise NotImplementedError

    def wait_event(self, event: Event) -> None:
        """Makes later work on this stream wait until `event` is done (without blocking the
        host)."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Blocks the host until all work launched on this stream so far has finished."""
        raise NotImplementedError


class KeepAlive:
    """Objects a stream still uses, each held until an event after its last use completes.

    The stream-safety rule: an array read or written on a stream other than the one
    whose memory pool it came from must not go back to that pool while the other stream may
    still touch it. CUDA launches hold no Python references, so the stream that uses a borrowed
    buffer keeps it here; `prune` (called at every new hold) drops what is done.
    """

    __slots__ = ("_held", "_lock")

    def __init__(self):
        self._held = collections.deque()  # (event, objects), in stream order
        self._lock = threading.Lock()

    def hold(self, event: Event, *objects) -> None:
        with self._lock:
            self._prune_locked()
            self._held.append((event, objects))

    def prune(self) -> None:
        with self._lock:
            self._prune_locked()

    def _prune_locked(self):
        held = self._held
        while held and held[0][0].query():  # events on one stream complete in order
            held.popleft()

    def __len__(self):
        return len(self._held)


class InlineStream(Stream):
    """A stream whose work runs on the caller's thread, at once."""

    __slots__ = ("name",)
    inline = True

    def __init__(self, name: str):
        self.name = name

    def launch(self, fn, *args):
        return fn(*args)

    def record_event(self) -> Event:
        return COMPLETED

    def wait_event(self, event: Event) -> None:
        event.synchronize()

    def synchronize(self) -> None:
        return None

    def __repr__(self):
        return f"<InlineStream {self.name}>"


class Device:
    """A place where tensors live and kernels run.

    `name` is the short form ("CPU:0", "GPU:1"); `full_name` TensorFlow's long form. `xp` is the
    array module kernels receive. `compute_stream` runs kernels, `copy_stream` runs copies in and
    out of the device. `inline` is True when kernels run synchronously on the caller's thread,
    which lets the dispatcher call them directly. `defers_kernels` is True when `run` returns
    before the kernel's Python body has run (the simulated GPU runs bodies on its stream
    workers); CuPy runs a kernel's body on the caller's thread and queues only the device work,
    so what a body does on the host, like a variable's bookkeeping, is done when `run` returns.
    `resources` holds the device's live resources (ops on a resource always run on the
    resource's device).
    """

    defers_kernels = False
    #: Names of ops this device runs on the host whatever their inputs (their small results
    #: stay in host memory), and of ops it runs there when every input is in host memory: empty
    #: but for a backend that keeps some values in host memory (the CUDA backend's small int32
    #: values). A compiled program's device form calls such nodes through `run`.
    host_result_ops = frozenset()
    host_ops = frozenset()

    __slots__ = ("name", "full_name", "device_type", "index", "xp", "physical_name",
                 "compute_stream", "copy_stream", "inline", "resources", "__weakref__")

    def __init__(self, device_type: str, index: int, xp, physical_name: str,
                 compute_stream: Stream, copy_stream: Stream):
        self.device_type = device_type
        self.index = index
        self.name = f"{device_type}:{index}"
        self.full_name = f"/job:localhost/replica:0/task:0/device:{device_type}:{index}"
        self.xp = xp
        self.physical_name = physical_name
        self.compute_stream = compute_stream
        self.copy_stream = copy_stream
        self.inline = compute_stream.inline
        self.resources = ResourceManager()  # resources (variables) living on this device

    # -- data movement: every backend implements these three ---------------------------------
    def from_host(self, array):
        """A copy of host (numpy) `array` in this device's memory."""
        raise NotImplementedError

    def to_host(self, array):
        """A numpy copy of an array that lives on this device (waits for it to be ready)."""
        raise NotImplementedError

    def to_host_many(self, arrays) -> list:
        """`to_host` of each of `arrays`, in order. A backend where each copy to the host waits
        for the device (CUDA) reads them in as few copies as it can; by default one by one."""
        return [self.to_host(a) for a in arrays]

    def stage_from_host(self, array):
        """`from_host` for an input pipeline's staging thread, which copies batches while the
        step's kernels run: a backend that can put the copy in memory no queued kernel may
        still use (the simulated GPU) makes it wait for nothing on the compute stream, so it
        overlaps a busy step. By default it is `from_host`."""
        return self.from_host(array)

    def copy_from(self, array, source: "Device"):
        """A copy of `array`, living on `source`, in this device's memory."""
        if source.xp is not self.xp or self.xp.__name__ != "numpy":
            return self.from_host(source.to_host(array))
        return self.from_host(array)

    def in_device_memory(self, array):
        """`array` as a kernel that reads it on this device takes it. A backend that keeps
        some values of the device in host memory (the CUDA backend's small int32 values)
        copies such a value to the device; by default every array is there already."""
        return array

    def run(self, op, arrays, attrs, inputs):
        """Runs `op.kernel(xp, *arrays, **attrs)` on the compute stream. `inputs` are the op's
        input tensors (a backend that must know its outputs' shapes before the kernel has run,
        like the simulated GPU, asks `op.infer(*inputs, **attrs)`)."""
        return self.compute_stream.launch_op(op.name, call_kernel, op.kernel, self.xp, arrays,
                                             attrs)

    def kernel_for(self, op):
        """The kernel `run` launches for `op` here (`kernel(xp, *arrays, **attrs)`): the op's
        own kernel, or a backend's faster one for the same op (the CUDA backend's precompiled
        CuPy kernel objects). A compiled program that calls kernels itself binds these."""
        return op.kernel

    def ready_event(self, array) -> Event:
        """An event that completes once `array`'s producer has finished.

        Everything a device computes is ordered on its compute stream (copies into the device
        make the compute stream wait for them as they are issued), so an event recorded on the
        compute stream now comes after the producer. Recording it only when another stream
        consumes the array costs nothing on the common path (one stream) and waits no longer
        than a per-array event would need to in stream order; a backend that knows each array's
        producer (the simulated GPU) returns that exact event instead.
        """
        return self.compute_stream.record_event()

    def synchronize(self) -> None:
        self.compute_stream.synchronize()
        self.copy_stream.synchronize()

    def close(self) -> None:
        """The device is being forgotten (tests reconfigure devices): backends with worker
        threads let them finish their work and exit. Arrays on it stay readable."""

    def __repr__(self):
        return f"<eager.Device {self.name}>"

    def __reduce__(self):
        raise TypeError("Devices are process-local and cannot be pickled; use their name.")


def transfer(value, source: Device, target: Device):
    """`value`, which lives on `source`, as a value a kernel on `target` can take. Arrays are
    copied by `target.copy_from`. A value that is not an array says how it moves, through
    `copied_to(target, source)`: a TensorList copies its elements (an accelerator's arrays
    cannot hold Python objects), a resource handle names its resource and moves as it is."""
    move = getattr(value, "copied_to", None)
    if move is not None:
        return move(target, source)
    return target.copy_from(value, source)


def call_kernel(kernel, xp, arrays, attrs):
    """`kernel(xp, *arrays, **attrs)`: what a stream runs for an op (backends launch it)."""
    return kernel(xp, *arrays, **attrs)
