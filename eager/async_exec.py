"""Asynchronous execution: per-thread executors, pending tensors, errors at sync points.

In async mode an op returns at once: its outputs' shapes and dtypes come from the op's shape
inference on the caller's thread, and the outputs are `PendingTensor`s; the kernel runs later,
in program order, on the thread's executor (a background worker). `.dtype` and `.device` never
wait; `.shape`, `ndim` and `len` wait only where inference left a dimension open (a shape only
the data decides, like `where`'s), as TensorFlow's do; `.numpy()`, `repr`, `bool`, `float`,
`int` wait. Shape inference of the ops that consume a pending tensor reads its partial shape
without waiting, so dispatch stays asynchronous.

Errors: the first failing kernel poisons its executor. Later ops on it fail fast (they never
run), and the error is raised at the next sync point — `.numpy()` of a tensor that did not
complete, `async_wait()`, `sync_devices()`, leaving `async_scope()` — as the kernel's own
`eager.base.errors` class, naming the op and the Python line that issued it (a notebook cell as
`In [N], line L`). `async_clear_error()` recovers. Under global async mode
(`set_synchronous_execution(False)`, which spans a notebook's cells) the error is raised once,
at the first sync point after it, saying how to clear it; later sync points are not blamed for
it, except where ops issued since did not run because the executor is still poisoned, and then
their error says so. Every raise starts a fresh traceback, so one error raised in several
places never accumulates frames.

A kernel that fails on a GPU stream after its launch (a simulated GPU runs kernels on its
stream workers) is raised by `async_wait()` and by leaving `async_scope()` too, which
synchronize the devices' streams after the executor.

Hand-off is cheap: a `collections.deque` (append/popleft are atomic under the GIL), and a lock
the worker sleeps on only when the queue is empty. Waiting for a result uses per-executor
sequence numbers, not an event per op. The queue is bounded (`MAX_PENDING_OPS`), and nothing
the issuing thread does can be left half done by a `KeyboardInterrupt` (`AsyncExecutor`).
"""

from __future__ import annotations

import atexit
import collections
import itertools
import sys
import threading
import types
import weakref
from _thread import allocate_lock as _allocate_lock

from .core import context as _context
from .base import profile_events as _profile_events
from .base import user_code as _user_code
from .base.traceback_filter import SWITCH as _TRACEBACKS
from .base.traceback_filter import filter_traceback as _filter_traceback
from .base.traceback_filter import filtered as _filtered
from .base.ieee import quiet_thread
from .base.rich_display import tensor_card
from .devices import registry as _devices
from .base.errors import InternalError, InvalidArgumentError, OpError
from .core import dispatch as _dispatch
from .ops.operators import OPERATOR_OPS as _OPERATOR_OPS
from .tensor import METAS, EagerTensor, Tensor, meta_for, set_operator_issuer, unavailable_repr
from .core.registry import NO_ATTRS
from .core.specs import TensorSpec
from .base.tensor_shape import TensorShape

__all__ = ["PendingTensor", "AsyncExecutor", "MAX_PENDING_OPS", "async_scope", "async_wait",
           "async_clear_error", "set_synchronous_execution", "get_synchronous_execution",
           "sync_devices", "after_pending_work"]

_per_thread = _context.per_thread
_config = _context.placement_config
_place = _dispatch.place
_new_pending = _new_node = object.__new__


#: Where the user issued an op (`user_code.user_point`), called straight from
#: `AsyncExecutor.execute` (a wrapper would cost every async op a call): depth 2 starts the walk
#: at dispatch's `execute`, above the executor and dispatch's slow path.
_user_point = _user_code.user_point


class _Node:
    """One queued op."""

    __slots__ = ("op", "inputs", "attrs", "outputs", "device", "where", "seq", "error",
                 "executor")

    def __init__(self, op, inputs, attrs, outputs, device, where, seq, executor=None):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.outputs = outputs
        self.device = device
        self.where = where
        self.seq = seq
        self.error = None
        self.executor = executor


class PendingTensor(Tensor):
    """A tensor whose value an executor has not computed yet (see the module doc)."""

    __slots__ = ("_shape", "_meta", "_node", "_resolved", "_tape_id", "__weakref__")

    @property
    def shape(self) -> TensorShape:
        """The inferred shape where inference fixed every dimension; otherwise (a shape only
        the data decides, like `where`'s) the computed one, waiting for it, as TensorFlow's
        `TensorHandle::Shape` does. Shape inference for the ops that consume this tensor reads
        the partial shape without waiting (`_inferring`): dispatch stays asynchronous."""
        shape = self._shape
        if shape.is_fully_defined() or _INFERRING.active:
            return shape
        return self._computed_shape()

    @property
    def dtype(self):
        return self._meta.dtype

    @property
    def device(self) -> str:
        return self._meta.device.name

    @property
    def ndim(self):
        rank = self._shape.rank
        if rank is None and not _INFERRING.active:
            return self._computed_shape().rank
        return rank

    def _computed_shape(self) -> TensorShape:
        """The computed tensor's shape (waiting for it), kept as this tensor's shape: ops
        dispatched after this point infer from the exact shape."""
        self._shape = shape = self._resolve().shape
        return shape

    def _resolve(self) -> EagerTensor:
        """The computed tensor, waiting for it; raises the error that kept it from running."""
        node = self._node  # (before `_resolved`: the worker sets that first, then drops this)
        resolved = self._resolved
        if resolved is None:
            executor = node.executor
            executor._wait_for(node.seq)
            resolved = self._resolved
            if resolved is None:
                raise executor.surfaced(
                    node.error or executor._error or executor._dead or InternalError(
                        None, node.op.name, f"{node.op.name}: the asynchronous executor's "
                        "worker ended before running this op."), node.seq)
        if self._tape_id and not resolved._tape_id:
            # One tensor, two objects: code that carries on with the computed tensor in place
            # of the pending one (a kernel's own calls to ops) must stay connected on tapes.
            resolved._tape_id = self._tape_id
        return resolved

    # Everything that needs the value waits for it.
    @_filter_traceback  # a sync point: its error shows the user's frames only
    def numpy(self):
        return self._resolve().numpy()

    @_filter_traceback
    def __array__(self, dtype=None, copy=None):
        return self._resolve().__array__(dtype=dtype, copy=copy)

    @_filter_traceback
    def __bool__(self):
        return bool(self._resolve())

    @_filter_traceback
    def __float__(self):
        return float(self._resolve())

    @_filter_traceback
    def __int__(self):
        return int(self._resolve())

    @_filter_traceback
    def __index__(self):
        return self._resolve().__index__()

    @_filter_traceback
    def __complex__(self):
        return complex(self._resolve())

    def __len__(self):
        shape = self._shape
        if shape.rank is None or shape.rank and shape[0] is None:
            shape = self._computed_shape()  # only the data decides the length: wait for it
        if shape.rank == 0:
            raise TypeError("len is not well defined for a rank-0 tensor.")
        return shape[0]

    @_filter_traceback
    def __repr__(self):
        return repr(self._resolve())

    @_filter_traceback
    def __str__(self):
        return str(self._resolve())

    def _repr_mimebundle_(self, include=None, exclude=None):
        """What a notebook shows (text and HTML). Unlike `repr`, it never waits: a value the
        executor has not computed yet shows as pending (shape, dtype and device are known
        already), one that failed names the error a sync point raises, and how to clear it."""
        node = self._node  # (before `_resolved`: the worker sets that first, then drops this)
        resolved = self._resolved
        if resolved is not None:
            return resolved._repr_mimebundle_(include, exclude)
        executor = getattr(node, "executor", None)
        error = getattr(node, "error", None) or getattr(executor, "_error", None)
        shape, dtype, device = str(self._shape), self._meta.dtype.name, self._meta.device.name
        if error is None:
            brief = "pending"
            state = "pending: queued on the asynchronous executor (.numpy() waits for it)"
        else:
            brief = f"failed: {type(error).__name__}"
            state = (f"failed: {type(error).__name__}: {error} (raised at the next sync point; "
                     "eager.experimental.async_clear_error() clears it)")
        return {"text/plain": unavailable_repr(shape, dtype, device, brief),
                "text/html": tensor_card("eager.Tensor", shape, dtype, device, state=state)}

    def _repr_html_(self):
        return self._repr_mimebundle_()["text/html"]

    @_filter_traceback
    def __format__(self, spec):
        return format(self._resolve(), spec)

    def __dlpack__(self, **kwargs):
        return self._resolve().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._resolve().__dlpack_device__()


_registry = weakref.WeakSet()  # every live executor, for sync_devices

#: The most ops one executor holds (issued, not yet finished). The issuing thread blocks at
#: this bound until its worker has run half of them, as a CUDA host blocks once about a
#: thousand launches are pending on a stream: memory stays bounded however fast a loop issues
#: work, and a sync point waits for at most this many ops of each executor (the work issued
#: before it), never for a queue that keeps growing. It bounds this queue only: a device's
#: streams keep launch queues of their own (`eager/devices`).
MAX_PENDING_OPS = 1024

#: How long any waiter or the sleeping worker blocks before looking again: wake-ups are
#: explicit, this only bounds the cost of a missed one.
_POLL_S = 0.05
_NEVER = 1 << 62  # a sequence number no executor reaches


def _drain_at_exit():
    """At interpreter exit, let every executor finish its queue before Python tears down the
    modules its kernels use (a daemon worker still launching CuPy kernels while CUDA is being
    unloaded crashes the process). Errors nobody asked for are dropped, as TensorFlow does."""
    for executor in list(_registry):
        executor._wait_for(executor._issued)
    for device in _devices.devices() if _devices.is_initialized() else ():
        try:
            device.synchronize()
        except Exception:  # noqa: BLE001 - nobody is left to raise it to
            pass


atexit.register(_drain_at_exit)
_worker_ids = itertools.count(1)  # numbers worker threads: one named profiler lane each


def _pending_outputs(node, specs, device) -> tuple:
    """One pending tensor per output spec of `node`, on `device`."""
    outputs = []
    for spec in specs:
        t = _new_pending(PendingTensor)
        t._shape = spec.shape
        t._meta = meta_for(spec.dtype, device)
        t._node = node
        t._resolved = None
        t._tape_id = 0
        outputs.append(t)
    return tuple(outputs)


class _QueuedCall:
    """The op of a node that runs a whole traced-function call (`AsyncExecutor.queue_call`), or
    that fails as a launch from the issuing thread failed (`AsyncExecutor._launch_now`)."""

    __slots__ = ("name", "run", "num_outputs")

    def __init__(self, name, run, num_outputs=1):
        self.name = name
        self.run = run
        self.num_outputs = num_outputs


def _launches(specs) -> bool:
    """Whether an op typed by `specs` launches on a GPU without waiting for its kernel: every
    output an array of a shape known before the kernel runs."""
    if specs.__class__ is TensorSpec:
        return specs.shape.is_fully_defined() and specs.dtype.is_numpy_compatible
    return all(s.shape.is_fully_defined() and s.dtype.is_numpy_compatible for s in specs)


def _computed(inputs) -> bool:
    """Whether every input is an EagerTensor (none pending or symbolic)."""
    for t in inputs:
        if t.__class__ is not EagerTensor:
            return False
    return True


def _raiser(exc):
    """A `_QueuedCall`'s `run` that raises `exc` (a launch's failure, reported in order)."""
    def run(inputs):
        raise exc
    return run


def _release(lock):
    """Wakes a thread blocked on `lock` (a waiter's, or the worker's bell); a no-op when it is
    already awake."""
    try:
        lock.release()
    except RuntimeError:  # released before, and not yet taken back
        pass


class AsyncExecutor:
    """Runs one thread's ops in order on a background worker (the thread's interpreter while
    async dispatch is on).

    The protocol is safe against a `KeyboardInterrupt` (or any exception) arriving at any point
    of the issuing thread, as Ctrl-C does: nothing that thread holds is shared with the worker.
    An op gets its sequence number only as it is queued, so an interrupt leaves either no trace
    or a queued op; a number taken but never queued is harmless, because a wait also ends when
    the worker is idle with an empty queue. Waiters and the worker never take a lock in common:
    a waiter blocks on a lock of its own that the worker releases (`_waiters`), and the worker
    sleeps on `_bell`, which the issuer releases. The worker catches every exception a kernel or
    a callback raises, `BaseException`s included (`SystemExit` from a print stream's `write`),
    and reports it at the next sync point; should it die anyway, it fails what is queued and
    says so there (`_die`), and `clear_error()` starts a new one.
    """

    is_graph = False

    def __init__(self):
        self._queue = collections.deque()
        self._issued = 0  # sequence number of the last queued node
        self._completed = 0  # ... of the last finished node (run, failed or skipped)
        self._error = None  # the first failure: poisons the executor until cleared
        self._global = False  # installed by set_synchronous_execution(False): errors once
        self._reported = False  # `_error` has been raised at a sync point (global mode)
        self._skipped = 0  # ops not run because of `_error` since it (or `_poisoned`) was raised
        self._failed_seq = -1  # the number of the op whose failure is `_error`
        self._failed_where = ""  # where that op was issued (`user_code.describe`)
        self._busy = False  # the worker holds a node it took off the queue (see `_idle`)
        self._sleeping = False  # the worker is about to block on `_bell`
        self._bell = threading.Lock()  # released to wake the worker
        self._bell.acquire()
        self._waiters = []  # (sequence number, lock) of each blocked waiter (see `_wait_for`)
        self._wake_at = _NEVER  # at most the least number a waiter waits for (see `_wake`)
        self._closed = False
        self._dead = None  # the error that ended the worker, if it died
        self._worker = None
        self._started = False
        _registry.add(self)

    def _start_worker(self):
        """Starts the worker thread; safe to call again after an interrupt cut it short.

        An interrupt can land inside `Thread.start` after the OS thread exists but before it
        has announced itself (start waits on the thread's private `_started` event). Calling
        `start` again then would launch a second thread on the same `Thread` object (CPython
        only refuses once `_started` is set), so a spawned thread is waited for instead:
        one that has an ident, or is still in `threading._limbo` on its way up."""
        worker = self._worker
        if worker is None:
            worker = self._worker = threading.Thread(
                target=self._run, name=f"eager-executor-{next(_worker_ids)}", daemon=True)
        if worker.ident is None and worker not in threading._limbo:
            worker.start()
        else:
            worker._started.wait()
        self._started = True

    @property
    def pending(self) -> int:
        """How many ops this executor has been given and not finished, the running one
        included (at most `MAX_PENDING_OPS`)."""
        return self._issued - self._completed

    # -- the caller's side (hot path: must cost little more than a synchronous op) ---------------
    def execute(self, op, inputs, attrs):
        st = _per_thread.state
        if (len(inputs) == 2 and not attrs and op.infer_from_types and not st.device_stack
                and not _config.log_placement):
            # The hot case (a binary op on two tensors of known type): placement and inference
            # depend only on the op, the operands' types and shapes and the default device, so
            # both come from one cache lookup.
            a, b = inputs
            ca, cb = a.__class__, b.__class__
            if (ca is EagerTensor or ca is PendingTensor) and (cb is EagerTensor
                                                               or cb is PendingTensor):
                return self.issue_pair(op, inputs, a, b, ca, cb, 3)
        device = _place(op, inputs, st, attrs)  # eager placement, soft placement included
        specs = (_infer(op, inputs, attrs) if op.infer_from_types
                 else _infer_now(op, inputs, attrs))
        if (not device.inline and self._error is None and not self._queue and not self._busy
                and _launches(specs) and _computed(inputs)):
            return self._launch_now(op, inputs, attrs, device, specs, None, 2)
        return self._queue_op(op, inputs, attrs, device, specs, None, _user_point(2))

    def issue_pair(self, op, inputs, a, b, ca, cb, depth):
        """`execute` of `op` (inference from types, no attributes) on `inputs`, the eager or
        pending tensors `a` and `b` of classes `ca` and `cb`, with no device scope or placement
        logging: placement and inference come from one cache lookup. On a device that launches
        its kernels (a GPU), with nothing queued before it and both inputs computed, the op is
        launched from this thread at once and its result returned (`_launch_now`); else it is
        queued. `depth`: frames from `user_code.user_point`'s caller to the issuing op's entry
        into eager. Hot path: every async binary op and operator."""
        key = (op, a._meta, a._value.shape if ca is EagerTensor else a._shape,
               b._meta, b._value.shape if cb is EagerTensor else b._shape,
               _devices.default_device())
        placed = _PLACED.get(key)
        if placed is None:
            st = _per_thread.state
            device = _place(op, inputs, st, NO_ATTRS)
            specs = _infer_now(op, inputs, NO_ATTRS)
            launches = not device.inline and _launches(specs)
            placed = (device, specs, _output_meta(specs, device), launches)
            if len(_PLACED) >= _INFER_CACHE_LIMIT:
                _PLACED.clear()
            _PLACED[key] = placed
        device, specs, meta, launches = placed
        if (launches and ca is EagerTensor and cb is EagerTensor and self._error is None
                and not self._queue and not self._busy):
            return self._launch_now(op, inputs, NO_ATTRS, device, specs, meta, depth + 1)
        return self._queue_op(op, inputs, NO_ATTRS, device, specs, meta, _user_point(depth))

    def _launch_now(self, op, inputs, attrs, device, specs, meta, depth):
        """Launches `op` on `device` (a GPU: its launch returns before the kernel has run) from
        the issuing thread: everything issued before has run (the queue is empty, the worker
        idle, no error), so no worker needs to come in between, and the result is an ordinary
        tensor whose value the device computes meanwhile. Its kernel's failure is the stream's,
        raised at the next synchronization (`async_wait`, leaving the scope, a read), as for a
        queued op on such a device. A launch that raises becomes a queued op that fails with
        that error, so it is reported at a sync point as any async op's."""
        try:
            return _dispatch.run_kernel(op, inputs, attrs, device)
        except Exception as exc:  # noqa: BLE001 - reported at the next sync point
            return self._queue_op(_QueuedCall(op.name, _raiser(exc), op.num_outputs), inputs,
                                  attrs, device, specs, meta, _user_point(depth))

    def _queue_op(self, op, inputs, attrs, device, specs, meta, where):
        """Queues `op` (placed on `device`, typed by `specs`; `meta`: the single output's
        TensorMeta when known) and returns its pending outputs."""
        node = _new_node(_Node)  # (no __init__ call: this is every async op's hot path)
        node.op = op
        node.inputs = inputs
        node.attrs = attrs
        node.device = device
        node.where = where
        node.error = None  # (`seq`: numbered as it is queued, by `_enqueue`)
        node.executor = self
        if specs.__class__ is TensorSpec:
            result = t = _new_pending(PendingTensor)
            t._shape = specs.shape
            t._meta = meta if meta is not None else _output_meta(specs, device)
            t._node = node
            t._resolved = None
            t._tape_id = 0
            node.outputs = (t,)
            if op.num_outputs != 1:
                result = node.outputs
        else:
            node.outputs = result = _pending_outputs(node, specs, device)
        self._enqueue(node)
        return result

    def queue_call(self, name, run, inputs, specs, device):
        """Queues a whole traced-function call as one node, as TensorFlow enqueues one
        `PartitionedCall`: `run(computed inputs)` returns its flat outputs on the worker, where
        the function's compiled program runs. Returns one pending tensor per `specs` entry (the
        graph's output types; a dimension the graph leaves open is waited for by `.shape`), on
        `device` (the caller has checked that every output lands there)."""
        node = _Node(_QueuedCall(name, run), tuple(inputs), None, None, device, _user_point(1),
                     0, self)
        node.outputs = outputs = _pending_outputs(node, specs, device)
        self._enqueue(node)
        return list(outputs)

    def _enqueue(self, node):
        """Numbers `node` and hands it to the worker, first waiting while `MAX_PENDING_OPS` are
        pending; on a poisoned executor it fails at once, never running (number 0: nothing to
        wait for). The number is stored just before the append, with no call in between, so a
        `KeyboardInterrupt` leaves the op either not issued or queued; the worker rings only
        when it sleeps."""
        if self._error is not None:
            node.error = self._error
            node.seq = 0
            self._skipped += 1
            return
        seq = self._issued + 1
        if seq - self._completed > MAX_PENDING_OPS:
            self._throttle()  # (only this thread issues: `_issued` stays as it is)
        node.seq = seq
        self._issued = seq
        self._queue.append(node)
        if self._sleeping:
            self._sleeping = False  # one wake-up per sleep, not one per op until it wakes
            _release(self._bell)

    def _throttle(self):
        """Blocks the issuing thread at `MAX_PENDING_OPS` until half of them have run."""
        self._wait_for(self._issued - MAX_PENDING_OPS // 2)

    # -- the worker ------------------------------------------------------------------------
    def _run(self):
        quiet_thread()  # only kernels run here: none signals inf or nan (eager.base.ieee)
        try:
            self._drain()
        except BaseException as exc:  # noqa: BLE001 - not a kernel's (those are kept): ours
            self._die(exc)

    def _drain(self):
        queue = self._queue
        waiters = self._waiters
        while True:
            if not queue:
                self._busy = False
                if waiters:
                    self._wake(True)  # idle: every waiter looks again (see `_idle`)
                if self._closed:
                    return
                self._sleeping = True
                if not queue:  # (an op queued since the test above rang no bell)
                    self._bell.acquire(True, _POLL_S)
                self._sleeping = False
                continue
            self._busy = True  # before the pop: `_idle` reads the queue, then this
            node = queue.popleft()
            self._run_node(node)
            seq = node.seq
            if seq:  # callbacks carry 0 (see after_pending_work)
                self._completed = seq
                if seq >= self._wake_at:
                    self._wake(False)

    def _wake(self, idle):
        """Releases the waiters whose op has run (all of them when `idle`), and sets `_wake_at`
        to the least number the others wait for. It is reset first and then only lowered, here
        and by a waiter as it registers (each lowering has no call inside, so no other thread
        runs in between), so it never exceeds a waiter's number. Only the worker releases a
        waiter's lock, so `locked()` cannot change under it: a waiter woken before and not yet
        running again is skipped."""
        self._wake_at = _NEVER
        completed = self._completed
        for seq, lock in tuple(self._waiters):
            if idle or seq <= completed:
                if lock.locked():
                    lock.release()
            elif seq < self._wake_at:
                self._wake_at = seq

    def _run_node(self, node):
        op = node.op
        if op is None:  # a callback (see after_pending_work): runs even when poisoned
            try:
                node.attrs()
            except BaseException as exc:  # noqa: BLE001 - as an exception in a finalizer is
                _unraisable(exc, node.attrs)
            return
        if self._error is not None:
            node.error = self._error
            self._skipped += 1
            return
        profiling = _profile_events.RECORDER.active
        if profiling:
            started = _profile_events.now_ns()
        try:
            if op.__class__ is _QueuedCall:
                out = op.run([t._resolve() if t.__class__ is PendingTensor else t
                              for t in node.inputs])
            else:
                out = _dispatch.run_kernel(op, node.inputs, node.attrs, node.device)  # resolves
        except BaseException as exc:  # noqa: BLE001 - kept, raised at the next sync point
            # BaseException too: a SystemExit or KeyboardInterrupt raised by a kernel (a print
            # stream's write, a py_function) would otherwise end the worker.
            where = _user_code.describe(node.where)
            node.error = self._error = _located(exc, op, where, self._global)
            self._failed_seq = node.seq
            self._failed_where = where
            return
        finally:
            if profiling:  # the kernel run, failed or not, on this worker's lane
                _profile_events.add_slice(f"executor: {threading.current_thread().name}",
                                          op.name, started, _profile_events.now_ns())
        outs = out if isinstance(out, tuple) else (out,)
        for pending, value in zip(node.outputs, outs):
            pending._resolved = value
            pending._node = None  # drop the inputs: values are no longer needed
        node.inputs = None

    def _die(self, exc):
        """The worker's own code failed (never a kernel: those are caught). Fails everything
        queued with an error that says so, runs the queued callbacks, and wakes every waiter:
        no sync point waits for a dead worker. `clear_error()` starts a new one."""
        dead = InternalError(None, None, "The asynchronous executor's worker thread died "
                                         f"({type(exc).__name__}: {exc}); the ops queued on it "
                                         "did not run. async_clear_error() starts a new worker.")
        dead.__cause__ = exc
        self._dead = dead
        if self._error is None:
            self._error = dead
        queue = self._queue
        while queue:
            node = queue.popleft()
            if node.op is None:
                self._run_node(node)
            elif node.error is None:
                node.error = dead
        self._completed = self._issued
        self._busy = False
        self._wake(True)

    # -- sync points ---------------------------------------------------------------------------
    def _idle(self):
        """Whether the worker has run everything queued (the queue is read first: the worker
        marks itself busy before it takes a node off)."""
        return not self._queue and not self._busy

    def _wait_for(self, seq):
        """Blocks until the node numbered `seq` has run (or the worker is idle, or dead).

        Safe to interrupt anywhere: the lock the thread blocks on is its own."""
        if self._completed >= seq:
            return
        waiter = _allocate_lock()
        waiter.acquire()
        entry = (seq, waiter)
        waiters = self._waiters
        try:
            waiters.append(entry)
            if seq < self._wake_at:
                self._wake_at = seq
            while self._completed < seq and not self._idle() and self._dead is None:
                worker = self._worker
                if worker is None or not worker.is_alive():
                    break  # not started (ops are never queued then), or ended: nothing to wait for
                waiter.acquire(True, _POLL_S)
        finally:
            try:
                waiters.remove(entry)
            except ValueError:  # never appended
                pass

    def wait(self):
        """Blocks until everything queued so far has run, and the device work it launched has
        finished; raises the pending error, if any (`pending_error`), else a kernel failure a
        device stream reported (`_synchronize_streams`)."""
        self._wait_for(self._issued)
        error = self.pending_error()
        if error is not None:
            raise error
        _synchronize_streams()

    def pending_error(self):
        """What a sync point raises once the queue has run, or None (module doc): the
        executor's error; in global mode, only the first time, and afterwards an error saying
        the executor is still poisoned where ops issued since did not run. With a fresh
        traceback every time."""
        error = self._error
        if error is None:
            return None
        if not self._global or not self._reported:
            self._reported = True
            self._skipped = 0  # the ops issued before this report are covered by it
            return error.with_traceback(None)
        if self._skipped:
            self._skipped = 0
            return self._poisoned_error()
        return None

    def surfaced(self, error, seq):
        """What reading an op's output raises when `error` kept the op (numbered `seq`) from
        running: in global mode, once the executor's error has been reported, an op other than
        the failed one says the executor is still poisoned. With a fresh traceback."""
        if error is self._error and self._global:
            if self._reported and seq != self._failed_seq:
                self._skipped = 0
                return self._poisoned_error()
            self._reported = True
            self._skipped = 0
        return error.with_traceback(None)

    def _poisoned_error(self):
        """The error of an op that did not run because an error reported before still poisons
        the executor (global mode): it names that error's cell or line and what to do."""
        error = self._error
        first = str(error).split("\n", 1)[0].split(" (issued at ", 1)[0]
        message = (f"An op did not run: the executor is still poisoned by an earlier error in "
                   f"{self._failed_where or 'an earlier op'} ({type(error).__name__}: {first}): "
                   "call eager.experimental.async_clear_error() to run ops again.")
        if isinstance(error, OpError):
            try:
                return type(error)(None, error.op, message)
            except TypeError:  # an OpError subclass of another shape
                pass
        return InternalError(None, None, message)

    def clear_error(self):
        """Waits for the queue, forgets the pending error and, if the worker died, starts a new
        one (`async_clear_error`)."""
        self._wait_for(self._issued)
        self._error = None
        self._reported = False
        self._skipped = 0
        self._failed_seq = -1
        self._failed_where = ""
        if self._dead is not None:
            self._worker = None
            self._started = False
            self._dead = None
            self._start_worker()

    def close(self):
        """Lets the worker finish the queue and exit. Touches nothing but the executor (its
        owner's thread state calls it from `__del__`, possibly while the interpreter shuts
        down)."""
        self._closed = True
        _release(self._bell)


def _synchronize_streams():
    """Waits for the work launched so far on every device whose kernels run off the calling
    thread (a GPU's streams), raising the first kernel failure one reports. A kernel that fails
    there, as on a simulated GPU's stream worker, fails after its op has run on the executor:
    the executor saw a launch, not the failure. TensorFlow's `async_wait` (and leaving an
    `async_scope`) reports such a failure, so waiting for the executor alone is not enough.
    The streams are the device's, shared by every thread: a failure is reported once, to the
    first thread that synchronizes after it, as a read of a device value reports it."""
    if not _devices.is_initialized():
        return
    for device in _devices.devices():
        if not device.inline:
            device.synchronize()


def _unraisable(exc, obj):
    """Reports an exception nobody can catch (a callback's, on the worker) as Python reports one
    in a finalizer."""
    sys.unraisablehook(types.SimpleNamespace(
        exc_type=type(exc), exc_value=exc, exc_traceback=exc.__traceback__,
        err_msg="Exception ignored in an eager executor callback", object=obj))


_INFER_CACHE = {}  # (op, input metas and shapes, attrs) -> output specs
#: (op, two operands' metas and shapes, default device) -> (device, output specs, the output's
#: TensorMeta when there is one output, else None)
_PLACED = {}
_INFER_CACHE_LIMIT = 4096


def _output_meta(specs, device):
    """The TensorMeta of a single-output op's pending result (None for several outputs)."""
    if specs.__class__ is not TensorSpec:
        return None
    dtype = specs.dtype
    return METAS[device][dtype.dtype if dtype.is_numpy_compatible else dtype]


class _Inferring(threading.local):
    """Whether this thread is inferring an async op's outputs: pending inputs then show their
    inferred shapes, partial ones included, instead of waiting for their computed ones."""

    active = False


_INFERRING = _Inferring()


def _infer_now(op, inputs, attrs):
    """`op.infer` on the caller's side of an async op, never waiting for a pending input."""
    for t in inputs:
        cls = t.__class__
        if cls is not EagerTensor and cls is not PendingTensor and not hasattr(t, "_resolve"):
            _dispatch.resolve_input(t, op)  # a traced function's tensor: its TypeError, at the call
    inferring = _INFERRING
    if inferring.active:
        return op.infer(*inputs, **attrs)
    inferring.active = True
    try:
        return op.infer(*inputs, **attrs)
    finally:
        inferring.active = False


def _infer(op, inputs, attrs):
    """`op.infer`, remembered for ops whose inference reads only types and shapes: the caller's
    side of an async op must cost about what a synchronous op costs, and inference is most of
    it. Only successful inferences are kept (a failing one raises every time). (Binary ops
    outside device scopes are placed and inferred together: `_PLACED` in `execute`.)"""
    key = [op]
    for t in inputs:
        cls = t.__class__
        if cls is EagerTensor:
            key.append(t._meta)
            key.append(t._value.shape)
        elif cls is PendingTensor:
            key.append(t._meta)
            key.append(t._shape)
        else:
            return _infer_now(op, inputs, attrs)
    if attrs:
        key.append(tuple(attrs.items()))
    key = tuple(key)
    try:
        return _INFER_CACHE[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable attribute (a list): no caching
        return _infer_now(op, inputs, attrs)
    specs = _infer_now(op, inputs, attrs)
    _remember(key, specs)
    return specs


def _remember(key, specs):
    if len(_INFER_CACHE) >= _INFER_CACHE_LIMIT:
        _INFER_CACHE.clear()
    _INFER_CACHE[key] = specs


def after_pending_work(action) -> bool:
    """Runs `action()` once every op queued so far on every executor has run (on the worker
    that finishes last), and returns True; returns False, doing nothing, when nothing is
    pending, so the caller acts at once. A variable's deleter uses it so that its destroy comes
    after the ops that still use the variable."""
    busy = [e for e in list(_registry) if not e._idle() and not e._closed and e._dead is None]
    if not busy:
        return False
    remaining = [len(busy)]
    lock = threading.Lock()

    def countdown():
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            action()

    for executor in busy:
        # No sequence number (0): a new one would race with the owning thread's numbering, and
        # nobody waits for the callback itself. Not bounded by MAX_PENDING_OPS: this may run
        # on any thread, a finalizer's included, which must not block.
        executor._queue.append(_Node(None, None, countdown, (), None, None, 0))
        if executor._sleeping:
            executor._sleeping = False
            _release(executor._bell)
    return True


def _located(exc, op, where, stays):
    """The error as an eager error naming the op and where it was issued (`where`, a
    `user_code.describe`); when the executor `stays` poisoned (global mode), saying how to
    clear it."""
    suffix = f" (issued at {where})"
    if stays:
        suffix += (". Later ops on this thread do not run until you call "
                   "eager.experimental.async_clear_error()")
    if isinstance(exc, OpError):
        cls = type(exc)
        try:
            return cls(exc.node_def, exc.op, exc.message + suffix)
        except TypeError:
            return exc
    return InvalidArgumentError(None, op.name, f"{op.name}: {type(exc).__name__}: {exc}{suffix}")


# -----------------------------------------------------------------------------------------------
# Modes and sync points
# -----------------------------------------------------------------------------------------------

_executors = threading.local()


class _ThreadAsyncState:
    """This thread's executor and its hold on the process-wide slow path (taken while async
    dispatch is installed).

    It lives in a `threading.local`, so Python drops it when the thread ends: `__del__` then
    gives the fast path back and lets the executor's worker finish the queue and exit. A thread
    that ends in async mode leaks neither a worker nor a slow-path reason."""

    __slots__ = ("slow_path", "executor")

    def __init__(self):
        self.slow_path = _context.SlowPathHold()
        self.executor = AsyncExecutor()  # (its worker starts once this state is stored)

    def __del__(self, _finalizing=sys.is_finalizing):
        # While the interpreter shuts down (a thread's state can be dropped after the modules'
        # globals are gone) there is nothing left to give back: do nothing, as TensorFlow's
        # `Executor.__del__` drops what it cannot do then. An error never synced is dropped.
        if _finalizing():
            return
        slow_path = getattr(self, "slow_path", None)  # (a construction an interrupt cut short)
        if slow_path is not None:
            slow_path.give_back()
        executor = getattr(self, "executor", None)
        if executor is not None:
            executor.close()


def _thread_async_state():
    state = getattr(_executors, "state", None)
    if state is None:
        state = _executors.state = _ThreadAsyncState()
    executor = state.executor
    if not executor._started:
        executor._start_worker()
    return state


def _current_executor():
    state = getattr(_executors, "state", None)
    return None if state is None else state.executor


def _install_async(st):
    """Installs this thread's executor as its interpreter (False if one is installed already).
    A `KeyboardInterrupt` anywhere leaves it either installed with the slow path held or
    neither: the hold is taken first, and given back if taking it was interrupted."""
    if st.interpreter is not None:
        return False
    state = _thread_async_state()
    hold = state.slow_path
    try:
        hold.take()
    except BaseException:
        hold.give_back()  # a no-op unless it had been taken
        raise
    st.interpreter = state.executor
    return True


def _uninstall_async(st):
    """Back to synchronous dispatch: waits for the executor and raises its pending error, which
    it then forgets. An error is reported once, where async dispatch ends; the next async period
    on this thread starts clean (TensorFlow switches to a fresh executor here). Interrupted
    anywhere, it still ends synchronous with the hold given back."""
    executor = st.interpreter
    st.interpreter = None
    hold = _executors.state.slow_path
    try:
        try:
            hold.give_back()
        except BaseException:
            hold.give_back()  # interrupted at its entry: once more (a no-op once given back)
            raise
    finally:
        try:
            executor.wait()
        finally:
            executor.clear_error()
            executor._global = False


def set_synchronous_execution(enable):
    """≈ `tf.config.experimental.set_synchronous_execution`: False makes this thread dispatch
    asynchronously (switching back waits for pending work and raises its error, once)."""
    st = _context.thread_state()
    if not enable:
        if _install_async(st):
            st.interpreter._global = True
    elif isinstance(st.interpreter, AsyncExecutor):
        _uninstall_async(st)


def get_synchronous_execution():
    return not isinstance(_context.thread_state().interpreter, AsyncExecutor)


class async_scope:  # noqa: N801 - TensorFlow's name
    """≈ `tf.experimental.async_scope()`: asynchronous dispatch inside; on exit, waits for
    everything issued and raises the first error, if any (reported there once: a later scope
    starts clean). A class rather than a generator, so that an error raised on exit shows the
    user's `with` line and nothing of eager's or contextlib's (`eager.base.traceback_filter`)."""

    __slots__ = ("_st", "_installed")

    def __enter__(self):
        self._installed = False
        st = self._st = _context.thread_state()
        self._installed = _install_async(st)

    def __exit__(self, exc_type, exc, tb):
        st = self._st
        if self._installed and isinstance(st.interpreter, AsyncExecutor):  # (not switched off)
            try:
                _uninstall_async(st)
            except Exception as error:
                if _TRACEBACKS.enabled:
                    raise _filtered(error)  # noqa: B904 - `filtered` decides the chain
                raise
        return False


def async_wait():
    """≈ `tf.experimental.async_wait()`: waits for this thread's pending ops; raises their first
    error."""
    executor = _current_executor()
    if executor is not None:
        executor.wait()


def async_clear_error():
    """≈ `tf.experimental.async_clear_error()`: forgets this thread's pending error, so later ops
    run again."""
    executor = _current_executor()
    if executor is not None:
        executor.clear_error()


def sync_devices():
    """≈ TensorFlow RFC 434: when this returns, every op queued at the call on every executor
    (all threads) and every device stream has finished. Raises the first pending error of
    this thread's executor."""
    for executor in list(_registry):
        executor._wait_for(executor._issued)
    for device in _devices.devices():
        device.synchronize()
    mine = _current_executor()
    if mine is not None:
        error = mine.pending_error()
        if error is not None:
            raise error


_context.register_pending_work_waiter(sync_devices)


# -----------------------------------------------------------------------------------------------
# Operators issued without the op library
# -----------------------------------------------------------------------------------------------

_PROFILE = _profile_events.RECORDER
_hooks = _dispatch.hooks


def issue_operator(name, x, y):
    """`x <name> y` ("add", "sub", "mul", "truediv") issued on this thread's executor without
    the op library, or None when the library must run it: what the library would do for two
    eager or pending tensors of one numeric dtype (floating or complex for "truediv") and
    device is to call `execute` with the operator's op (`operators.OPERATOR_OPS`), which in
    async mode, with no tape on this thread, no device scope, no placement logging, no profiler
    trace and no numerics checking, only hands the op to the executor. So the caller pays for
    the queueing alone. Installed as the tensor operators' issuer (`set_operator_issuer`) and
    used by `PendingTensor`'s operators. Hot path: every operator in async mode."""
    st = _per_thread.state
    executor = st.interpreter
    if executor.__class__ is not AsyncExecutor:
        return None
    cx, cy = x.__class__, y.__class__
    if not ((cx is EagerTensor or cx is PendingTensor) and (cy is EagerTensor
                                                            or cy is PendingTensor)):
        return None
    meta = x._meta
    if (meta is not y._meta or not (meta.dtype._inexact if name == "truediv" else meta.dtype._arith)
            or st.tapes or st.device_stack or _config.log_placement or _PROFILE.active
            or _hooks.check_outputs is not None):
        return None
    op = _OPERATOR_OPS[name]
    return executor.issue_pair(op, (x, y), x, y, cx, cy, 2)


def _pending_operators(name):
    def forward(self, other):
        t = issue_operator(name, self, other)
        return t if t is not None else getattr(Tensor, f"__{name}__")(self, other)
    forward.__name__ = f"__{name}__"
    return forward


for _name in ("add", "sub", "mul", "truediv"):
    setattr(PendingTensor, f"__{_name}__", _pending_operators(_name))
set_operator_issuer(issue_operator)

