"""Simulated GPUs: devices whose streams are worker threads running numpy kernels.

CI machines have no GPU, yet the logic that makes GPU execution correct — launches that return
before the work is done, ordering within a stream, events between streams, buffers kept alive
while another stream still uses them — must be tested. A simulated GPU reproduces the parts of
CUDA + CuPy that this logic depends on, through the same `Device`/`Stream`/`Event` interface the
CuPy backend implements:

- `launch` queues the kernel on the stream's worker thread and returns at once. The outputs'
  shapes and dtypes come from the op's shape inference, like CuPy computing them on the host;
  an op whose output shapes depend on the data (or whose outputs are not arrays) waits for its
  kernel, as CuPy does for such ops.
- A stream runs its work in order; `record_event`/`wait_event`/`query`/`synchronize` behave as
  CUDA's: a wait is queued on the stream and blocks its worker, not the host.
- A host-to-device copy under `PINNED_STAGING_BYTES` runs on the compute stream, as the CuPy
  backend's pageable copies do; larger ones run on the copy stream. An input pipeline's staged
  copies (`stage_from_host`) run on the copy stream into blocks of their own, waiting for no
  kernel.
- Memory comes from a pool that, like CuPy's, returns a freed block to the stream it was
  allocated on and reuses it for the next allocation of that size on that stream at once,
  without waiting for other streams. Kernels see raw blocks, never the Python objects that own
  them, just as CUDA kernels see device pointers. So if a buffer borrowed by another stream is
  released too early, a later kernel really overwrites it and the borrower reads wrong values:
  the bug class the stream-safety rule prevents is observable in tests, not assumed away.
- Kernel failures are reported like CUDA's asynchronous errors: at the next synchronization
  (`synchronize`, a copy to the host), naming the op. Like CuPy's, kernels give inf and nan
  without a floating-point signal, whatever the user's warning filters.
- A stream holds at most `MAX_PENDING_LAUNCHES` unfinished launches; a host thread launching
  onto a full stream waits for room, as CUDA blocks the host when a stream's launch queue is
  full. So a thread that issues work faster than the stream runs it is slowed to the stream's
  pace: the memory its queued work holds stays bounded, and a read queued behind that work
  waits for at most a full queue.

Simulated GPUs are configured before the devices are initialized, with
`eager.config.experimental.set_simulated_gpus(n)` (or the environment variable
`EAGER_SIMULATED_GPUS=n`); they then replace any real GPU, are listed as physical GPUs, and
can be split into logical GPUs like real ones.
"""

from __future__ import annotations

import collections
import threading
import weakref

import numpy as np

from ..base import profile_events
from ..base.errors import InvalidArgumentError, OpError
from ..base.ieee import quiet_thread
from . import host_memory
from .base import COMPLETED, Device, Event, KeepAlive, Stream
from .cuda import PINNED_STAGING_BYTES

__all__ = ["VirtualArray", "VirtualDevice", "VirtualEvent", "VirtualStream",
           "MAX_PENDING_LAUNCHES"]

_PROFILE = profile_events.RECORDER

#: How many launches a simulated stream holds unfinished before a launching host thread waits
#: for one to finish. CUDA blocks the host at about a thousand pending launches, but a simulated
#: kernel runs on numpy, under the GIL, thousands of times slower than a GPU's: a queue that deep
#: would hold seconds of work, and every read behind it would wait that long. 256 launches keep
#: the host well ahead of the stream (launches still return before their kernels run) while a
#: full queue is a fraction of a second of work.
MAX_PENDING_LAUNCHES = 256

# Threads that must never wait for room in a stream's queue (read only when a queue is full):
# the stream workers (a kernel or a wait running on one may launch, and the work it would wait
# for may be waiting for it), marked in a thread-local; and host threads holding a `paused()`
# stream (the work they would wait for is held by their own pause), counted by thread ident
# because a pause may be lifted from another thread.
_this_thread = threading.local()
_pausing_threads = collections.Counter()
_pausing_lock = threading.Lock()


class VirtualEvent(Event):
    """The point after the first `seq` items launched on `stream`."""

    __slots__ = ("_stream", "_seq")

    def __init__(self, stream, seq):
        self._stream = stream
        self._seq = seq

    def query(self) -> bool:
        return self._stream._completed >= self._seq

    def synchronize(self) -> None:
        self._stream._wait_until(self._seq)

    def __repr__(self):
        return f"<VirtualEvent {self._stream.name}#{self._seq} done={self.query()}>"


class VirtualStream(Stream):
    """An in-order queue of work run by one worker thread (see the module doc)."""

    __slots__ = ("name", "max_pending", "_queue", "_lock", "_cv", "_issued", "_completed",
                 "_error", "_error_seq", "_sleeping", "_closed", "_worker", "__weakref__")
    inline = False

    def __init__(self, name: str, max_pending: int = MAX_PENDING_LAUNCHES):
        self.name = name
        self.max_pending = max_pending  # see MAX_PENDING_LAUNCHES
        self._queue = collections.deque()
        # RLock: a finalizer (a collected variable's deleter) may launch on this stream from
        # any allocation, also one made while this thread holds the lock in a launch.
        # Blocks take `_lock` itself, never `with self._cv`: a Condition's `__enter__` and
        # `__exit__` are Python functions, and a Ctrl-C between the lock's acquire and their
        # return left the lock held for good (a stream worker then waited on it forever); the
        # C lock's own `with` leaves no such gap.
        self._lock = threading.RLock()
        self._cv = threading.Condition(self._lock)
        # Items are numbered as they are queued, and `_completed` is the number of the last one
        # finished. A Ctrl-C between numbering and queueing (the two cannot be one bytecode)
        # leaves a number with no item: it counts as done once the worker has finished the
        # items around it, or finds the queue empty (`_finished`, `_wait_until`), so no wait
        # for it hangs.
        self._issued = 0  # items numbered so far
        self._completed = 0  # the number of the last item finished
        self._error = None  # the first failure since the last synchronization
        self._error_seq = 0  # the number of the item that failed with it
        self._sleeping = False
        self._closed = False  # closed: the worker has exited; work runs on the caller
        self._worker = threading.Thread(target=_serve, args=(self,), daemon=True,
                                        name=f"eager-stream {name}")
        self._worker.start()

    # -- the Stream interface ------------------------------------------------------------------
    def launch(self, fn, *args):
        """Queues `fn(*args)`; returns the event after it (its results are written by `fn`
        into buffers the caller already holds)."""
        return self._push((fn, args, None))

    def launch_op(self, name, fn, *args):
        """`launch`, naming the work (for errors and the profiler)."""
        return self._push((fn, args, name))

    def launch_from_finalizer(self, name, fn, *args):
        """`launch_op` that never waits for room in the queue (see `Stream`)."""
        return self._push((fn, args, name), bounded=False)

    def record_event(self) -> Event:
        return VirtualEvent(self, self._issued)

    def wait_event(self, event: Event) -> None:
        if event is COMPLETED or event.query():
            return
        if isinstance(event, VirtualEvent) and event._stream is self:
            return  # already ordered
        self._push((event.synchronize, (), "wait_event"))

    def synchronize(self) -> None:
        self.synchronize_through(self._issued)

    def synchronize_through(self, seq) -> None:
        """Waits for the first `seq` items launched here (not for items other threads launch
        meanwhile) and raises the first failure among them, as `synchronize` does."""
        self._wait_until(seq)
        if self._error is not None:
            with self._lock:
                error = self._error
                if error is None or self._error_seq > seq:
                    return  # a later item failed: its own synchronization reports it
                self._error = None
            raise error

    @property
    def pending(self) -> int:
        """Items launched and not finished yet."""
        return self._issued - self._completed

    def paused(self):
        """A context manager that holds the worker at the current point of the stream until the
        block exits: work launched inside stays queued. For tests of ordering and lifetimes."""
        return _Paused(self)

    # -- internals ----------------------------------------------------------------------------
    def _push(self, item, bounded=True):
        # Hot: every kernel; one comparison unless the queue is full.
        if bounded and self._issued - self._completed >= self.max_pending:
            self._wait_for_room()
        with self._lock:
            # Numbered and queued with no allocation between (an allocation may run a
            # finalizer that launches here too): the queue stays in number order.
            self._issued += 1
            seq = self._issued
            if not self._closed:
                self._queue.append((seq, item))
                if self._sleeping:
                    self._cv.notify_all()
                return VirtualEvent(self, seq)
        self._wait_until(seq - 1)  # closed: the worker drained its queue and left
        fn, args, name = item
        _run_item(self, seq, fn, args, name)
        with self._lock:
            self._completed = max(self._completed, seq)
            self._cv.notify_all()
        return VirtualEvent(self, seq)

    def _wait_for_room(self):
        """Blocks this thread while the queue is full, unless waiting could deadlock: the
        thread is a stream worker or holds a paused stream (the work it would wait for may be
        waiting for it), or it holds this stream's lock: a finalizer run by an allocation
        inside a launch, maybe after the item was queued and before the sleeping worker was
        told, so nothing would ever make room. (Finalizers should launch with
        `launch_from_finalizer`, which never waits.)"""
        if (self._cv._is_owned() or getattr(_this_thread, "is_stream_worker", False)
                or _pausing_threads[threading.get_ident()]):
            return
        with self._lock:
            while self._issued - self._completed >= self.max_pending and not self._closed:
                self._cv.wait()

    def close(self):
        """Lets the worker finish what is queued and exit; later work runs on the caller."""
        with self._lock:
            self._closed = True
            self._cv.notify_all()

    def _wait_until(self, seq):
        if self._completed >= seq:
            return
        with self._lock:
            while self._completed < seq:
                if self._sleeping and not self._queue and not self._closed:
                    # Everything queued is done: what is left are numbers a Ctrl-C kept from
                    # their items (see __init__).
                    self._completed = self._issued
                    break
                self._cv.wait()

    def __repr__(self):
        return f"<VirtualStream {self.name}>"


class _Paused:
    """Queues a wait on an event: the worker stops there until the block exits."""

    __slots__ = ("_stream", "_opened", "_thread")

    def __init__(self, stream):
        self._stream = stream
        self._opened = threading.Event()
        self._thread = None

    def __enter__(self):
        self._stream._push((self._opened.wait, (), "paused"))
        self._thread = threading.get_ident()
        with _pausing_lock:
            _pausing_threads[self._thread] += 1
        return self._stream

    def __exit__(self, *exc):
        if self._opened.is_set():
            return  # lifted already
        self._opened.set()
        with _pausing_lock:
            _pausing_threads[self._thread] -= 1
            if not _pausing_threads[self._thread]:
                del _pausing_threads[self._thread]


def _serve(stream):
    """The worker: runs items in order; records the first failure; never dies. Its kernels
    compute with numpy's floating-point error state set to ignore (this thread's own), as CuPy's
    kernels never signal inf or nan (`eager.base.ieee`)."""
    quiet_thread()
    queue, cv, lock = stream._queue, stream._cv, stream._lock
    _this_thread.is_stream_worker = True
    while True:
        with lock:
            while not queue:
                if stream._closed:
                    stream._sleeping = False
                    return
                stream._sleeping = True
                cv.wait()
            stream._sleeping = False
            seq, (fn, args, name) = queue.popleft()
        if _PROFILE.active and name is not None:
            start = profile_events.now_ns()
            _run_item(stream, seq, fn, args, name)
            profile_events.add_slice(stream.name, name, start, profile_events.now_ns())
        else:
            _run_item(stream, seq, fn, args, name)
        with lock:
            # With nothing queued, every number issued is done: any without an item was lost
            # to a Ctrl-C (see VirtualStream.__init__).
            # (Once closed, later numbers are items run by the threads launching them.)
            stream._completed = seq if queue or stream._closed else stream._issued
            cv.notify_all()


def _run_item(stream, seq, fn, args, name):
    try:
        fn(*args)
    except BaseException as exc:  # noqa: BLE001 - reported at the next synchronization
        if stream._error is None:
            stream._error_seq = seq
            stream._error = _as_op_error(exc, name)


def _as_op_error(exc, name):
    if isinstance(exc, OpError):
        return exc
    return InvalidArgumentError(None, name, f"{name}: {type(exc).__name__}: {exc} (on a "
                                            f"simulated GPU stream)")


class VirtualArray:
    """A simulated-GPU array: the shape and dtype, the pool block holding the data, and the
    stream event after which the data is there. Its lifetime is the block's: once it is
    collected, the block goes back to the pool of the stream that allocated it (`_Pool`), with
    no Python code run at collection, so a Ctrl-C can never land in (and be lost in) it."""

    __slots__ = ("shape", "dtype", "_block", "_ready", "__weakref__")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __array__(self, *args, **kwargs):
        # CuPy refuses implicit conversion too; the simulation must not be more permissive than
        # the backend it stands in for, or CI would pass code that fails on a real GPU.
        raise TypeError("Implicit conversion of a simulated-GPU array to a NumPy array is not "
                        "allowed; copy it with the device's to_host")

    def __repr__(self):
        return f"<VirtualArray {self.dtype}{list(self.shape)} ready={self._ready.query()}>"


class _Pool:
    """Free blocks per (stream, shape, dtype): freed blocks are reused by the next allocations
    on the stream that allocated them (CuPy's policy).

    A block lent to an array comes back when the array is collected, through a weak reference
    whose callback is a deque's `append`: C code, so collection runs no Python frame where a
    Ctrl-C could land (in a `__del__` it would be printed as "Exception ignored" and lost). The
    next allocation takes the collected arrays' blocks back."""

    __slots__ = ("_free", "_lent", "_collected", "_lock", "reused")

    def __init__(self):
        self._free = collections.defaultdict(list)
        self._lent = {}  # weak reference to a live array -> (its stream's id, its block)
        self._collected = collections.deque()  # references whose arrays were collected
        # Re-entrant: an allocation made under it may collect objects whose finalizers (a
        # variable's deleter) launch work that allocates here too.
        self._lock = threading.RLock()
        self.reused = 0  # allocations served from a freed block (tests look at it)

    def lend(self, array, stream, shape, dtype):
        """Gives `array` a block for `stream` (a freed one if there is one), taken back when
        the array is collected."""
        key = (id(stream), shape, dtype)
        with self._lock:
            collected = self._collected
            while collected:
                entry = self._lent.pop(collected.popleft(), None)
                if entry is not None:
                    stream_id, block = entry
                    self._free[(stream_id, block.shape, block.dtype)].append(block)
            free = self._free.get(key)
            if free:
                self.reused += 1
                block = free.pop()
            else:
                block = np.empty(shape, dtype)
            self._lent[weakref.ref(array, collected.append)] = (key[0], block)
        return block


#: How many launch plans an op keeps (`OpDef.launch_plans`: (each input's TensorMeta and
#: shape, attributes) -> what `_launch_plan` returns, for ops whose inference reads only types
#: and shapes, `infer_from_types`). CuPy computes an output's shape on the host at every launch
#: too, but in C; in Python, inference would be most of a simulated launch's cost.
_PLANS_LIMIT = 256


def _launch_plan(op, inputs, attrs):
    """(single, ((shape, numpy dtype) per output)) for a launch that returns before its kernel
    runs, from `op`'s inference on `inputs`; None when an output's shape is not known before
    the kernel runs or is not an array (the launch then waits: `_run_blocking`). `single`: the
    kernel returns one array, not a tuple. Hot: every simulated launch."""
    key = None
    plans = getattr(op, "launch_plans", None)  # (an OpDef's; None for other runnables)
    if op.infer_from_types and plans is not None:
        key = []
        for t in inputs:
            value = getattr(t, "_value", None)  # an EagerTensor's array (a pending one: none)
            if value is None:
                key = None
                break
            key.append(t._meta)
            key.append(value.shape)
        if key is not None:
            if attrs:
                key.append(tuple(attrs.items()))
            key = tuple(key)
            try:
                return plans[key]
            except KeyError:
                pass
            except TypeError:  # an unhashable attribute (a list): no caching
                key = None
    specs = op.infer(*inputs, **attrs)
    single = not isinstance(specs, tuple)
    specs = (specs,) if single else specs
    if all(spec.shape.is_fully_defined() and spec.dtype.is_numpy_compatible for spec in specs):
        plan = (single and op.num_outputs == 1,
                tuple((tuple(spec.shape), np.dtype(spec.dtype.as_numpy_dtype))
                      for spec in specs))
    else:
        plan = None
    if key is not None:
        if len(plans) >= _PLANS_LIMIT:
            plans.clear()
        plans[key] = plan
    return plan


def _write_outputs(op, in_blocks, attrs, out_blocks):
    """Runs on the worker: the kernel on numpy blocks, results written into the output blocks."""
    result = op.kernel(np, *[_kernel_input(b) for b in in_blocks], **attrs)
    results = result if isinstance(result, tuple) else (result,)
    for block, value in zip(out_blocks, results):
        block[...] = value


def _kernel_input(value):
    """On the worker: a TensorList input as a kernel on this device sees it, over numpy copies
    of its elements (simulated-GPU arrays: kernels see blocks, and may keep what they get), and
    of its lists' elements for a list of lists. (A kernel's list output is made of simulated-GPU
    arrays again, nested lists' too, by `_from_kernel`: as a GPU list holds cupy arrays.)"""
    mapped = getattr(value, "mapped", None)
    return value if mapped is None else mapped(_element_block)


def _element_block(element):
    if isinstance(element, VirtualArray):
        element._ready.synchronize()  # produced by an earlier launch, here or on a copy stream
        return element._block.copy()
    return _kernel_input(element)  # a list of lists: its lists' elements in turn


_ALWAYS_HOST_OPS = host_memory.ALWAYS_HOST_OPS


class VirtualDevice(Device):
    """A simulated GPU (see the module doc). `xp` is numpy: kernels run on numpy blocks.

    With `run_kernels=False` (`registry.set_simulated_kernels(False)`, for benchmarks only) an
    op's launch does everything but run its kernel: inputs ordered, output shapes inferred,
    outputs made (zeros, ready at once). Dispatch then costs what it costs in front of a GPU
    whose launches are free, so `bench/cases_gpu_proxy.py` measures eager's own host time per
    op without a GPU."""

    __slots__ = ("pool", "run_kernels", "_copy_holds", "_zeros", "_host_copies")

    defers_kernels = True  # kernels run on the stream workers
    host_result_ops = host_memory.ALWAYS_HOST_OPS  # small int32 values in host memory, as CUDA's
    host_ops = host_memory.HOST_OPS

    def __init__(self, index: int, physical_name: str, run_kernels: bool = True):
        name = f"GPU:{index}"
        super().__init__("GPU", index, np, physical_name, VirtualStream(name + "/compute"),
                         VirtualStream(name + "/copy"))
        self.pool = _Pool()
        self.run_kernels = run_kernels
        self._copy_holds = KeepAlive()
        self._host_copies = host_memory.DeviceCopies()
        self._zeros = {}

    # -- memory ---------------------------------------------------------------------------
    def _allocate(self, shape, dtype, ready=COMPLETED):
        """A new array whose block belongs to the compute stream (every buffer the device keeps
        does: its reuse is then ordered with the kernels that use it)."""
        array = VirtualArray()
        array.shape = tuple(shape)
        array.dtype = np.dtype(dtype)
        array._block = self.pool.lend(array, self.compute_stream, array.shape, array.dtype)
        array._ready = ready
        return array

    def _adopt(self, value):
        """A VirtualArray holding a kernel's result that exists already (blocking launches).

        The result is written into its block by an item queued on the compute stream, not by
        the calling thread at once: the block may have been freed by another host thread whose
        kernels, queued after the blocking launch this thread waited for, still read it. Only
        the stream's order puts the write after them, as CUDA's would."""
        array = self._allocate(np.shape(value), np.asarray(value).dtype, None)
        array._ready = self.compute_stream.launch_op("StoreResult", np.copyto, array._block,
                                                     value)
        return array

    def ready_event(self, array) -> Event:
        return array._ready if isinstance(array, VirtualArray) else COMPLETED

    # -- kernels --------------------------------------------------------------------------
    def run(self, op, arrays, attrs, inputs):
        for a in arrays:
            if a.__class__ is np.ndarray:  # a value in host memory, as the CUDA backend's
                return host_memory.run_with_host_values(
                    self, op, arrays, attrs,
                    lambda on_device: self._launch(op, on_device, attrs, inputs))
        if op.name in _ALWAYS_HOST_OPS:
            return host_memory.run_on_host(self, op, arrays, attrs)
        return self._launch(op, arrays, attrs, inputs)

    def _launch(self, op, arrays, attrs, inputs):
        compute = self.compute_stream
        in_blocks = []
        for a in arrays:
            if a.__class__ is VirtualArray:
                compute.wait_event(a._ready)  # a no-op unless another stream produced it
                in_blocks.append(a._block)
            else:
                in_blocks.append(a)  # a resource handle, a TensorList, a host scalar
        plan = _launch_plan(op, inputs, attrs)
        if plan is None:
            return self._run_blocking(op, in_blocks, attrs)
        single, outs = plan
        if not self.run_kernels:  # launch-only (see the class doc): outputs ready at once
            outputs = [self._launched_only(shape, dtype) for shape, dtype in outs]
        else:
            outputs = [self._allocate(shape, dtype, None) for shape, dtype in outs]
            done = compute.launch_op(op.name, _write_outputs, op, in_blocks, attrs,
                                     [o._block for o in outputs])
            for o in outputs:
                o._ready = done
        return outputs[0] if single else tuple(outputs)

    def _launched_only(self, shape, dtype):
        """An output of a launch whose kernel does not run (`run_kernels` False): zeros, from
        one read-only block per shape and dtype, ready at once."""
        key = (shape, dtype)
        block = self._zeros.get(key)
        if block is None:
            block = self._zeros[key] = np.zeros(shape, dtype)
            block.flags.writeable = False
        array = VirtualArray()
        array.shape = shape
        array.dtype = dtype
        array._block = block
        array._ready = COMPLETED
        return array

    def _run_blocking(self, op, in_blocks, attrs):
        """An op whose outputs are not known before it runs (data-dependent shapes, lists,
        resource handles): launch and wait, as CuPy waits for such ops. Array inputs are copied
        first, because such kernels may keep them (a TensorList holds its elements) and a pool
        block must never be owned by anything but its VirtualArray."""
        compute = self.compute_stream
        box = []

        def run():  # on the worker: the blocks are ready only once the stream gets here
            owned = [b.copy() if isinstance(b, np.ndarray) else _kernel_input(b)
                     for b in in_blocks]
            box.append(op.kernel(np, *owned, **attrs))

        done = compute.launch_op(op.name, run)
        compute.synchronize_through(done._seq)  # raises the kernel's (or an earlier one's) error
        result = box[0]
        if isinstance(result, tuple):
            return tuple(self._from_kernel(v) for v in result)
        return self._from_kernel(result)

    def _from_kernel(self, value):
        if isinstance(value, (np.ndarray, np.generic)):
            return self._adopt(value)
        mapped = getattr(value, "mapped", None)  # a TensorList: its elements live here
        if mapped is not None:  # (those of a list of lists too, as on a GPU)
            return mapped(self._from_kernel)
        return value

    # -- copies ---------------------------------------------------------------------------
    def from_host(self, array):
        if not isinstance(array, (np.ndarray, np.generic, int, float, complex, bool)):
            raise TypeError(f"Unsupported type {type(array)}")  # as cupy.asarray
        host = np.array(array, copy=True)  # the caller may change its array once we return
        if host.dtype == object:
            raise ValueError("Unsupported dtype object")  # as cupy.asarray
        if host_memory.resident(host):
            return host
        if host.size <= host_memory.HOST_INT32_MAX_ELEMENTS:  # a number or a few: one
            return self._host_copies.of_value(host, self._upload)  # device copy per value
        return self._upload(host)

    def in_device_memory(self, array):
        if array.__class__ is not np.ndarray:
            return array
        return self._host_copies.of(array, lambda a: self._upload(np.array(a, copy=True)))

    def _upload(self, host):
        out = self._allocate(host.shape, host.dtype, None)
        if host.nbytes < PINNED_STAGING_BYTES:
            # Small: issued on the compute stream, as the CUDA backend issues it (a pageable
            # copy), so it is ordered with the kernels and keeps the copy stream free.
            out._ready = self.compute_stream.launch_op("HostToDevice", np.copyto, out._block,
                                                       host)
            return out
        copy = self.copy_stream
        # The block came from the compute stream's pool: kernels queued there may still use it
        # (it was freed in their order), so the copy must not write it before they finish.
        copy.wait_event(self.compute_stream.record_event())
        done = copy.launch_op("HostToDevice", np.copyto, out._block, host)
        out._ready = done
        self.compute_stream.wait_event(done)
        return out

    def stage_from_host(self, array):
        """`from_host` into a block of its own, outside the pool: no kernel queued on the
        compute stream can be using it, so the copy waits for nothing there and runs while the
        compute stream is busy. The block is freed with its array (and the kernels that read
        it), never handed to another allocation, so nothing can overwrite it early."""
        if not isinstance(array, (np.ndarray, np.generic, int, float, complex, bool)):
            raise TypeError(f"Unsupported type {type(array)}")  # as cupy.asarray
        host = np.array(array, copy=True)
        if host.dtype == object:
            raise ValueError("Unsupported dtype object")
        if host_memory.resident(host):
            return host
        out = VirtualArray()
        out.shape, out.dtype = host.shape, host.dtype
        out._block = np.empty(host.shape, host.dtype)
        done = self.copy_stream.launch_op("HostToDevice", np.copyto, out._block, host)
        out._ready = done
        self.compute_stream.wait_event(done)
        return out

    def to_host(self, array):
        if not isinstance(array, VirtualArray):
            return array  # a numpy value, a list, a handle: already on the host
        # The read waits for its own copy and for the compute work issued before it, not for
        # what other threads issue meanwhile (a writer's copies queued behind this one, each
        # waiting in turn for more of the writer's kernels).
        issued_before = self.compute_stream._issued
        copy = self.copy_stream
        copy.wait_event(array._ready)
        box = []
        done = copy.launch_op("DeviceToHost", lambda block: box.append(block.copy()),
                              array._block)
        copy.synchronize_through(done._seq)
        # Surfaces a failed kernel issued before the read (the array's producer among them).
        self.compute_stream.synchronize_through(issued_before)
        return box[0]

    def copy_from(self, array, source):
        if array.__class__ is np.ndarray:  # a value another device holds in host memory
            return self.from_host(array)
        if isinstance(source, VirtualDevice):
            copy = self.copy_stream
            copy.wait_event(source.ready_event(array))
            out = self._allocate(array.shape, array.dtype, None)
            copy.wait_event(self.compute_stream.record_event())  # see from_host
            done = copy.launch_op("DeviceToDevice", np.copyto, out._block, array._block)
            out._ready = done
            # The source's block belongs to the other device's compute stream, whose pool would
            # hand it out again as soon as the source array is dropped: hold it until read.
            self._copy_holds.hold(done, array)
            self.compute_stream.wait_event(done)
            return out
        return self.from_host(source.to_host(array))

    def synchronize(self) -> None:
        self.compute_stream.synchronize()
        self.copy_stream.synchronize()
        self._copy_holds.prune()

    def close(self) -> None:
        self.compute_stream.close()
        self.copy_stream.close()
