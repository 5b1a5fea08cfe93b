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
`eager.base.errors` class, naming the op and the Python line that issued it. `async_clear_error()`
recovers.

Hand-off is cheap: a `collections.deque` (append/popleft are atomic under the GIL) and one
condition variable the worker sleeps on only when the queue is empty; the worker drains
everything queued in one go. Waiting for a result uses per-executor sequence numbers, not an
event per op.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import itertools
import threading
import weakref

from .core import context as _context
from .base import profile_events as _profile_events
from .base import user_code as _user_code
from .devices import registry as _devices
from .base.errors import InvalidArgumentError, OpError
from .core import dispatch as _dispatch
from .tensor import METAS, EagerTensor, Tensor, meta_for
from .core.specs import TensorSpec
from .base.tensor_shape import TensorShape

__all__ = ["PendingTensor", "AsyncExecutor", "async_scope", "async_wait", "async_clear_error",
           "set_synchronous_execution", "get_synchronous_execution", "sync_devices",
           "after_pending_work"]

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
        resolved = self._resolved
        if resolved is None:
            node = self._node
            node.executor._wait_for(node.seq)
            resolved = self._resolved
            if resolved is None:
                raise node.error
        if self._tape_id and not resolved._tape_id:
            # One tensor, two objects: code that carries on with the computed tensor in place
            # of the pending one (a kernel's own calls to ops) must stay connected on tapes.
            resolved._tape_id = self._tape_id
        return resolved

    # Everything that needs the value waits for it.
    def numpy(self):
        return self._resolve().numpy()

    def __array__(self, dtype=None, copy=None):
        return self._resolve().__array__(dtype=dtype, copy=copy)

    def __bool__(self):
        return bool(self._resolve())

    def __float__(self):
        return float(self._resolve())

    def __int__(self):
        return int(self._resolve())

    def __index__(self):
        return self._resolve().__index__()

    def __complex__(self):
        return complex(self._resolve())

    def __len__(self):
        shape = self._shape
        if shape.rank is None or shape.rank and shape[0] is None:
            shape = self._computed_shape()  # only the data decides the length: wait for it
        if shape.rank == 0:
            raise TypeError("len is not well defined for a rank-0 tensor.")
        return shape[0]

    def __repr__(self):
        return repr(self._resolve())

    def __str__(self):
        return str(self._resolve())

    def __format__(self, spec):
        return format(self._resolve(), spec)

    def __dlpack__(self, **kwargs):
        return self._resolve().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._resolve().__dlpack_device__()


_registry = weakref.WeakSet()  # every live executor, for sync_devices


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
    """The op of a node that runs a whole traced-function call (`AsyncExecutor.queue_call`)."""

    __slots__ = ("name", "run")

    def __init__(self, name, run):
        self.name = name
        self.run = run


class AsyncExecutor:
    """Runs one thread's ops in order on a background worker (the thread's interpreter while
    async dispatch is on)."""

    is_graph = False

    def __init__(self):
        self._queue = collections.deque()
        # An RLock: a deleter may queue work from a finalizer.
        self._cv = threading.Condition(threading.RLock())
        self._issued = 0  # sequence number of the last queued node
        self._completed = 0  # ... of the last finished node (run, failed or skipped)
        self._error = None  # the first failure: poisons the executor until cleared
        self._sleeping = False
        self._closed = False
        self._worker = threading.Thread(target=self._run,
                                        name=f"eager-executor-{next(_worker_ids)}", daemon=True)
        self._worker.start()
        _registry.add(self)

    # -- the caller's side (hot path: must cost little more than a synchronous op) ---------------
    def execute(self, op, inputs, attrs):
        st = _per_thread.state
        key = None
        if (len(inputs) == 2 and not attrs and op.infer_from_types and not st.device_stack
                and not _config.log_placement):
            # The hot case (a binary op on two tensors of known type): placement and inference
            # depend only on the op, the operands' types and shapes and the default device, so
            # both come from one cache lookup.
            a, b = inputs
            ca, cb = a.__class__, b.__class__
            if (ca is EagerTensor or ca is PendingTensor) and (cb is EagerTensor
                                                               or cb is PendingTensor):
                key = (op, a._meta, a._value.shape if ca is EagerTensor else a._shape,
                       b._meta, b._value.shape if cb is EagerTensor else b._shape,
                       _devices.default_device())
        if key is not None:
            placed = _PLACED.get(key)
            if placed is None:
                device = _place(op, inputs, st)
                specs = _infer_now(op, inputs, attrs)
                placed = (device, specs, _output_meta(specs, device))
                if len(_PLACED) >= _INFER_CACHE_LIMIT:
                    _PLACED.clear()
                _PLACED[key] = placed
            device, specs, meta = placed
        else:
            device = _place(op, inputs, st)  # eager placement, soft placement included
            specs = (_infer(op, inputs, attrs) if op.infer_from_types
                     else _infer_now(op, inputs, attrs))
            meta = None
        self._issued = seq = self._issued + 1
        node = _new_node(_Node)  # (no __init__ call: this is every async op's hot path)
        node.op = op
        node.inputs = inputs
        node.attrs = attrs
        node.device = device
        node.where = _user_point(2)
        node.seq = seq
        node.error = None
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
        self._issued = seq = self._issued + 1
        node = _Node(_QueuedCall(name, run), tuple(inputs), None, None, device, _user_point(1),
                     seq, self)
        node.outputs = outputs = _pending_outputs(node, specs, device)
        self._enqueue(node)
        return list(outputs)

    def _enqueue(self, node):
        """Hands `node` to the worker; on a poisoned executor it fails at once, never running."""
        if self._error is not None:
            node.error = self._error
            self._issued_and_done(node)
        else:
            self._queue.append(node)
            if self._sleeping:
                with self._cv:
                    self._sleeping = False  # one notify per wake-up, not one per op until then
                    self._cv.notify()

    def _issued_and_done(self, node):
        with self._cv:
            self._completed = max(self._completed, node.seq)
            self._cv.notify_all()

    # -- the worker ------------------------------------------------------------------------
    def _run(self):
        queue = self._queue
        while True:
            if not queue:
                with self._cv:
                    while not queue and not self._closed:
                        self._sleeping = True
                        self._cv.wait(0.05)
                    self._sleeping = False
                    if self._closed and not queue:
                        return
            done = 0
            while queue:
                node = queue.popleft()
                self._run_node(node)
                if node.seq:  # callbacks carry 0 (see after_pending_work)
                    done = node.seq
            with self._cv:
                if done:
                    self._completed = done
                self._cv.notify_all()

    def _run_node(self, node):
        op = node.op
        if op is None:  # a callback (see after_pending_work): runs even when poisoned
            node.attrs()
            return
        if self._error is not None:
            node.error = self._error
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
        except Exception as exc:  # noqa: BLE001 - kept, raised at the next sync point
            node.error = self._error = _located(exc, op, node.where)
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

    # -- sync points ---------------------------------------------------------------------------
    def _wait_for(self, seq):
        if self._completed >= seq:
            return
        with self._cv:
            while self._completed < seq:
                self._cv.wait(0.05)

    def wait(self):
        """Blocks until everything queued so far has run; raises the pending error, if any."""
        self._wait_for(self._issued)
        if self._error is not None:
            raise self._error

    def clear_error(self):
        self._wait_for(self._issued)
        self._error = None

    def close(self):
        with self._cv:
            self._closed = True
            self._cv.notify_all()


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
    busy = [e for e in list(_registry) if e._completed < e._issued and not e._closed]
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
        # No sequence number (0): a new one would race with the owning thread's `_issued += 1`,
        # and nobody waits for the callback itself.
        executor._queue.append(_Node(None, None, countdown, (), None, None, 0))
        if executor._sleeping:
            with executor._cv:
                executor._cv.notify()
    return True


def _located(exc, op, where):
    """The error as an eager error naming the op and the Python line that issued it."""
    file, line = _user_code.line_of(where)
    suffix = f" (issued at {file}:{line})"
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
    """This thread's executor and whether async dispatch holds the process-wide fast path off.

    It lives in a `threading.local`, so Python drops it when the thread ends: `__del__` then
    gives the fast path back and lets the executor's worker finish the queue and exit. A thread
    that ends in async mode leaks neither a worker nor a slow-path reason."""

    __slots__ = ("executor", "holds_slow_path")

    def __init__(self):
        self.executor = AsyncExecutor()
        self.holds_slow_path = False

    def __del__(self):
        if self.holds_slow_path:
            self.holds_slow_path = False
            _context.leave_slow_path()
        self.executor.close()


def _thread_async_state():
    state = getattr(_executors, "state", None)
    if state is None:
        state = _executors.state = _ThreadAsyncState()
    return state


def _current_executor():
    state = getattr(_executors, "state", None)
    return None if state is None else state.executor


def _install_async(st):
    if st.interpreter is None:
        state = _thread_async_state()
        st.interpreter = state.executor
        state.holds_slow_path = True
        _context.enter_slow_path()
        return True
    return False


def _uninstall_async(st):
    """Back to synchronous dispatch: waits for the executor and raises its pending error, which
    it then forgets. An error is reported once, where async dispatch ends; the next async period
    on this thread starts clean (TensorFlow switches to a fresh executor here)."""
    executor = st.interpreter
    st.interpreter = None
    state = _executors.state
    state.holds_slow_path = False
    _context.leave_slow_path()
    try:
        executor.wait()
    finally:
        executor.clear_error()


def set_synchronous_execution(enable):
    """≈ `tf.config.experimental.set_synchronous_execution`: False makes this thread dispatch
    asynchronously (switching back waits for pending work and raises its error, once)."""
    st = _context.thread_state()
    if not enable:
        _install_async(st)
    elif isinstance(st.interpreter, AsyncExecutor):
        _uninstall_async(st)


def get_synchronous_execution():
    return not isinstance(_context.thread_state().interpreter, AsyncExecutor)


@contextlib.contextmanager
def async_scope():
    """≈ `tf.experimental.async_scope()`: asynchronous dispatch inside; on exit, waits for
    everything issued and raises the first error, if any (reported there once: a later scope
    starts clean)."""
    st = _context.thread_state()
    installed = _install_async(st)
    try:
        yield
    finally:
        if installed and isinstance(st.interpreter, AsyncExecutor):  # (not switched off inside)
            _uninstall_async(st)


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
    if mine is not None and mine._error is not None:
        raise mine._error


_context.register_pending_work_waiter(sync_devices)

