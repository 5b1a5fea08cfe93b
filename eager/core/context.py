"""Execution context: per-thread state, and the process-wide switch for the eager fast path.

Per thread (as in TensorFlow; `per_thread.state`, a `ThreadState`): the device scope stack, the
active gradient tapes, the interpreter that receives ops (None means "run eagerly and
synchronously"; tracing and async execution install their own), the variable-creator stack and
the name scope. Process-wide: `placement_config` (soft placement, placement logging).

The fast path. Most ops in a notebook or a training loop need nothing from dispatch but their
kernel run on the one device: no thread has a device scope or an interpreter open, placement
is not logged, and there is a single (host) device. `FAST_PATH` says whether that holds, so
that hot code can test it with one attribute read:

* `FAST_PATH.kernel_only`: nothing at all is open anywhere; an op needs only its kernel, run
  on `FAST_PATH.device`.
* `FAST_PATH.kernel_and_tapes`: the only things open are gradient tapes; an op needs its kernel
  on `FAST_PATH.device`, and this thread's tapes told (when one of its inputs is followed).
  `kernel_only` implies it.
* `FAST_PATH.placed_and_tapes`: the only things open are gradient tapes, whatever the devices:
  an op without a resource input whose operands all live on `FAST_PATH.default` (the default
  device: a GPU when there is one) runs there, as placement would decide, so it needs its
  kernel on that device and the tapes told. `kernel_and_tapes` implies it; on a machine with a
  GPU it is the fast path of every op whose operands share the GPU, and mixed-device operands
  take the general path.

Every state change that could make dispatch do more goes through `slow_path_reason()` (or
`enter_slow_path`/`leave_slow_path`, or a `SlowPathHold`), which keeps one counter; gradient
tapes are counted apart, as they are pushed and popped (`push_tape`/`pop_tape`), so entering a
tape never flips `kernel_and_tapes`.
Disabling the fast path for every thread when one thread opens a scope is deliberate: the slow
path is always correct, and the common case never opens one.

Who reads `FAST_PATH`'s switches (`kernel_only`, `kernel_and_tapes`): the owners of the fast
paths, and only they: dispatch (`execute`, and its named helpers for APIs that skip it, such as
`dispatch.run_bare`), the tensor operators and `TensorMeta`'s cached flags (`eager.tensor`),
and the variable's reads and updates (`eager.variables`); other modules ask those owners
(`tests/test_layers.py` checks). `FAST_PATH.device`, the one host device or None, is a fact
anyone may read (the compiled runtime runs a whole program's arrays there).
"""

from __future__ import annotations

import contextlib
import threading

from ..base.errors import InvalidArgumentError
from ..devices import registry

__all__ = ["FAST_PATH", "per_thread", "ThreadState", "thread_state", "placement_config",
           "DeviceScopeEntry", "slow_path_reason", "enter_slow_path", "leave_slow_path",
           "SlowPathHold", "push_tape", "pop_tape", "device", "current_device_spec",
           "placement_device", "soft_device_placement", "set_soft_device_placement",
           "log_device_placement", "set_log_device_placement", "executing_eagerly", "name_scope"]


class FastPathSwitch:
    """Whether ops may skip dispatch (see the module doc): `kernel_only`, `kernel_and_tapes`,
    `placed_and_tapes`; `device`, the one host device (None when there are several, or an
    accelerator); and `default`, the default device (None before the devices are initialized).

    Entering and leaving a slow-path reason (every GradientTape does) must be cheap: the device
    check is redone only when the device set changes, and listeners run only when
    `kernel_and_tapes` flips, which a gradient tape never makes it do.

    Safe against a `KeyboardInterrupt` (Ctrl-C), which reaches the main thread wherever CPython
    (3.10+) next checks for signals: after a call returns, on a loop's back edge, at a
    function's entry. The lock is never left held: it is taken by `with`, or, on the tapes' hot
    path, by `acquire()` in a `try` of its own whose handler releases it if this thread owns it
    (cheaper; see `eager.ops.resource_ops.apply_update`). The counters and switches change
    inside it with no call in between, so an interrupt sees all of a change or none of it; and
    listeners that an interrupt cut short are run again (`notified`).
    """

    __slots__ = ("kernel_only", "kernel_and_tapes", "placed_and_tapes", "device", "default",
                 "reasons", "tapes", "lock", "listeners", "notified")

    def __init__(self):
        self.kernel_only = False
        self.kernel_and_tapes = False
        self.placed_and_tapes = False
        self.device = None
        self.default = None
        self.reasons = 0
        self.tapes = 0  # of `reasons`, how many are recording gradient tapes (any thread)
        self.lock = threading.RLock()  # re-entrant: finalizers (thread-state teardown) take it
        # Called after every change of `placed_and_tapes` (which `kernel_and_tapes` follows
        # between two device changes) and of the devices (eager.tensor caches flags on metas).
        self.listeners = []
        self.notified = None  # the `placed_and_tapes` the listeners last finished with

    def devices_changed(self):
        if registry.is_initialized():
            devices = registry.devices()
            self.device = devices[0] if len(devices) == 1 and devices[0].inline else None
            self.default = registry.default_device()
        else:
            self.device = self.default = None
        self.refresh()

    def refresh(self):
        """Recomputes the switches and runs every listener."""
        with self.lock:
            single = self.device is not None
            self.kernel_only = single and self.reasons == 0
            self.kernel_and_tapes = single and self.reasons == self.tapes
            self.placed_and_tapes = self.default is not None and self.reasons == self.tapes
            self.notified = None
            try:
                self.notify()
            except BaseException:
                self.notify()  # (see `_count`)
                raise

    def notify(self):
        """Runs the listeners if `placed_and_tapes` changed since they last finished (the caller
        holds the lock and has set the switches). They are idempotent: callers run this again
        when a `KeyboardInterrupt` cuts it short, and the next change runs them anyway."""
        while self.notified is not self.placed_and_tapes:
            state = self.placed_and_tapes
            for listener in self.listeners:
                listener()
            self.notified = state


FAST_PATH = FastPathSwitch()
registry.on_initialized(FAST_PATH.devices_changed)


@contextlib.contextmanager
def slow_path_reason():
    """While inside, every op goes through full dispatch (in all threads)."""
    enter_slow_path()
    try:
        yield
    finally:
        leave_slow_path()


def enter_slow_path():
    _count(1)


def leave_slow_path():
    _count(-1)


def _count(reasons, hold=None, held=False):
    """Adds `reasons` to the count and sets the switches to match, then tells the listeners;
    with `hold`, only if `hold.held` is not already `held`, which it then becomes. Nothing
    between the lock and the listeners is a call, so an interrupt sees all of the change or
    none of it."""
    fast = FAST_PATH
    with fast.lock:
        if hold is not None:
            if hold.held is held:
                return
            hold.held = held
        fast.reasons = count = fast.reasons + reasons
        single = fast.device is not None
        fast.kernel_only = single and count == 0
        fast.kernel_and_tapes = single and count == fast.tapes
        fast.placed_and_tapes = fast.default is not None and count == fast.tapes
        try:
            fast.notify()
        except BaseException:
            fast.notify()  # an interrupt cut the listeners short: finish them, then go on
            raise


class SlowPathHold:
    """One slow-path reason that its owner holds or not (`held`), for owners that must end up
    consistent whatever a `KeyboardInterrupt` interrupts (the async executor's installation):
    `take` and `give_back` change the count and `held` together, under the lock, and each is a
    no-op when already done, so an owner interrupted in one simply calls it again."""

    __slots__ = ("held",)

    def __init__(self):
        self.held = False

    def take(self):
        _count(1, self, True)

    def give_back(self):
        _count(-1, self, False)


def push_tape(stack, tape):
    """Pushes `tape` on a thread's tape stack (`ThreadState.tapes`) and counts it as a recording
    tape (in any thread): a slow-path reason that leaves `FAST_PATH.kernel_and_tapes` as it is,
    so no listener runs. Hot: every GradientTape comes here and to `pop_tape` (inlined, not
    through `_count`).

    Push and count happen together: the append is the last thing done and the only call inside
    the lock, so a `KeyboardInterrupt` finds `tape` either on `stack` and counted or neither,
    and "`tape` is on `stack`" tells which (`GradientTape.__enter__` relies on it)."""
    fast = FAST_PATH
    lock = fast.lock
    try:  # (see the class doc)
        lock.acquire()
    except BaseException:
        if lock._is_owned():
            lock.release()
        raise
    try:
        fast.reasons += 1
        fast.tapes += 1
        fast.kernel_only = False
        stack.append(tape)
    finally:
        lock.release()


def pop_tape(stack, tape) -> bool:
    """Takes `tape` off `stack` and uncounts it, together (see `push_tape`); False, doing
    nothing, when it is not there (already popped: safe to call again after an interrupt)."""
    fast = FAST_PATH
    lock = fast.lock
    try:  # (see the class doc)
        lock.acquire()
    except BaseException:
        if lock._is_owned():
            lock.release()
        raise
    try:
        if stack and stack[-1] is tape:  # the usual case: the innermost tape
            index = len(stack) - 1
        else:
            for index in range(len(stack) - 1, -1, -1):
                if stack[index] is tape:
                    break
            else:
                return False
        fast.reasons -= 1
        fast.tapes -= 1
        fast.kernel_only = fast.reasons == 0 and fast.device is not None
        del stack[index]
    finally:
        lock.release()
    return True


class ThreadState:
    """One per thread: what dispatch reads on every slow-path op (slots: cheap to read)."""

    __slots__ = ("device_stack", "tapes", "interpreter", "variable_creators", "name_scope",
                 "variable_watchers", "__weakref__")

    def __init__(self):
        self.device_stack = []  # list[DeviceScopeEntry]; empty means "default device"
        self.tapes = []  # active gradient tapes, innermost last (managed by eager.autodiff)
        self.interpreter = None  # None: eager synchronous; else a graph builder or async executor
        self.variable_creators = []  # (managed by eager.variables)
        # Told of every trainable variable read, as tapes are (eager.autodiff.custom_gradient).
        self.variable_watchers = []
        self.name_scope = ""


class PerThread(threading.local):
    """Holds each thread's ThreadState as `.state`: one thread-local lookup, then slot reads.
    Hot code reads `per_thread.state` directly instead of calling `thread_state()`."""

    def __init__(self):
        self.state = ThreadState()


per_thread = PerThread()


def thread_state() -> ThreadState:
    """This thread's state. Hot: dispatch calls it for every op off the fast path."""
    return per_thread.state


class DeviceScopeEntry:
    """A device scope: the merged spec and the device it resolves to (computed once)."""

    __slots__ = ("spec", "_device")

    def __init__(self, spec):
        self.spec = spec  # DeviceSpec, or None for "no constraint" (device(None))
        self._device = None

    def device(self):
        d = self._device
        if d is None:
            if self.spec is None:
                d = registry.default_device()
            else:
                d, message = registry.resolve(self.spec, placement_config.soft_placement)
                if d is None:
                    raise InvalidArgumentError(None, None, message)
            self._device = d
        return d


class PlacementConfig:
    """Process-wide placement settings (`eager.config.set_soft_device_placement`,
    `eager.debugging.set_log_device_placement`), read by every placement decision."""

    __slots__ = ("soft_placement", "log_placement")

    def __init__(self):
        self.soft_placement = True
        self.log_placement = False


placement_config = PlacementConfig()


class device:  # noqa: N801 - TensorFlow's name
    """≈ `tf.device(name)`: ops inside run on `name` (inputs copied there as needed).

    Accepts short names ("GPU:0"), TensorFlow's long names, partial specs (nested scopes merge
    them, inner fields winning) and None to clear the enclosing scope.
    """

    __slots__ = ("_spec", "_name")

    def __init__(self, device_name):
        self._name = device_name
        if device_name is None or device_name == "":
            self._spec = None
        elif callable(device_name) and not isinstance(device_name, str):
            raise RuntimeError("eager.device does not support functions (device functions are "
                               "a TF1 graph feature); pass a device name.")
        else:
            self._spec = registry.parse_device(device_name)

    def __enter__(self):
        st = per_thread.state
        stack = st.device_stack
        spec = self._spec
        if spec is not None and stack and stack[-1].spec is not None:
            spec = stack[-1].spec.make_merged_spec(spec)
        stack.append(DeviceScopeEntry(spec))
        enter_slow_path()
        return self

    def __exit__(self, *exc):
        per_thread.state.device_stack.pop()
        leave_slow_path()
        return False


def current_device_spec():
    """The DeviceSpec of the innermost scope in this thread, or None."""
    stack = per_thread.state.device_stack
    return stack[-1].spec if stack else None


def placement_device(st=None):
    """The device an op with no resource inputs runs on: the scope's, else the default."""
    stack = (st or per_thread.state).device_stack
    if stack:
        return stack[-1].device()
    return registry.default_device()


def soft_device_placement() -> bool:
    return placement_config.soft_placement


def set_soft_device_placement(enabled: bool) -> None:
    placement_config.soft_placement = bool(enabled)


def log_device_placement() -> bool:
    return placement_config.log_placement


def set_log_device_placement(enabled: bool) -> None:
    enabled = bool(enabled)
    if enabled == placement_config.log_placement:
        return
    placement_config.log_placement = enabled
    if enabled:
        enter_slow_path()
    else:
        leave_slow_path()


class name_scope:  # noqa: N801 - TensorFlow's name
    """≈ `tf.name_scope(name)` (TF 2): variables created inside are named "name/...". Scopes
    nest; a name ending in "/" is used as the whole scope (TensorFlow's absolute form). Entering
    returns the scope string."""

    __slots__ = ("_name", "_saved")

    def __init__(self, name):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name_scope needs a non-empty string name, got {name!r}.")
        self._name = name
        self._saved = None

    def __enter__(self):
        st = per_thread.state
        self._saved = st.name_scope
        st.name_scope = self._name if self._name.endswith("/") else (
            st.name_scope + self._name + "/")
        return st.name_scope

    def __exit__(self, *exc):
        per_thread.state.name_scope = self._saved
        return False


def executing_eagerly() -> bool:
    """False while tracing a function in this thread (≈ `tf.executing_eagerly`)."""
    interp = per_thread.state.interpreter
    return interp is None or not getattr(interp, "is_graph", False)


def _reset_for_tests():
    """Forget the device configuration (used by the test suite between tests)."""
    registry.reset()


_pending_work_waiters = []


def register_pending_work_waiter(wait) -> None:
    """`wait()` blocks until work queued by any thread and on any device has finished (the async
    executor registers `sync_devices`). Lower layers call `wait_for_pending_work()` before they
    read or change host-side state that queued kernels also touch."""
    _pending_work_waiters.append(wait)


def wait_for_pending_work() -> None:
    """Waits for all queued work (see `register_pending_work_waiter`); a no-op when nothing is
    queued anywhere."""
    for wait in _pending_work_waiters:
        wait()

