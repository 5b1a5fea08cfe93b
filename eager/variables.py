"""`eager.Variable`: resource variables, the creator stack, unread variables, deleters.

* `eager.Variable(...)` goes through `VariableMetaclass`, which runs the thread's creator stack
  (`variable_creator_scope`): each creator is `creator(next_creator, **kwargs)`, the innermost
  (and, across priorities, the highest-priority) first; the default creator at the bottom builds
  a `ResourceVariable`. A creator may return any object.
* A `ResourceVariable` owns a handle to storage in its device's resource manager. Its ops are the
  resource ops of `eager.ops.resource_ops`, so reads and writes are atomic and reads are
  snapshots (docs/semantics.md).
* The variable itself has no `__del__`: a tiny `_Deleter` owned by it destroys the resource, so a
  variable caught in a reference cycle is still collected (TensorFlow's design).
* Names are TensorFlow's (`"q:0"`), not unique and never used to find anything: resources are
  keyed by a unique id.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import weakref

import numpy as np

from .core import context as _context
from .devices import registry as _devices
from .base import dtypes as _dt
from .async_exec import after_pending_work as _after_pending_work
from .async_exec import get_synchronous_execution as _synchronous
from .autodiff import tape as _tape
from .core.context import FAST_PATH
from .ops import resource_ops as _res
from .core.dispatch import execute, resolve_input, run_kernel
from .ops.resource_ops import apply_update as _apply_update
from .base.rich_display import tensor_card
from .tensor import (EagerTensor, IndexedSlices, Reference, meta_for, numpy_repr_text,
                     register_reading_operand, wrap_value)
from .core.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from .base.tensor_shape import TensorShape, as_shape

__all__ = ["Variable", "ResourceVariable", "VariableSynchronization", "VariableAggregation",
           "variable_creator_scope"]


class VariableSynchronization(enum.Enum):
    """≈ `tf.VariableSynchronization` (only AUTO/NONE are meaningful without replicas)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """≈ `tf.VariableAggregation`."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


# -----------------------------------------------------------------------------------------------
# The creator stack
# -----------------------------------------------------------------------------------------------

_ARGUMENTS = ("initial_value", "trainable", "validate_shape", "caching_device", "name",
              "variable_def", "dtype", "import_scope", "constraint", "synchronization",
              "aggregation", "shape", "experimental_enable_variable_lifting")
_DEFAULTS = {"initial_value": None, "trainable": None, "validate_shape": True,
             "caching_device": None, "name": None, "variable_def": None, "dtype": None,
             "import_scope": None, "constraint": None,
             "synchronization": VariableSynchronization.AUTO,
             "aggregation": VariableAggregation.NONE, "shape": None,
             "experimental_enable_variable_lifting": True}


@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """≈ `tf.variable_creator_scope`: `variable_creator(next_creator, **kwargs)` is called for
    every `eager.Variable(...)` in this thread while the scope is open; scopes nest."""
    with prioritized_creator_scope(variable_creator, priority=100):
        yield


@contextlib.contextmanager
def prioritized_creator_scope(creator, priority=100):
    """Creators with a higher priority run first; within a priority, inner before outer (as
    TensorFlow). `eager.function` installs its creator at its own priority."""
    if not callable(creator):
        raise TypeError(f"variable_creator must be callable, got {creator!r}.")
    st = _context.thread_state()
    old = st.variable_creators
    new = sorted(old + [(priority, creator)], key=lambda item: item[0])
    st.variable_creators = new
    try:
        yield
    finally:
        if st.variable_creators is not new:
            raise RuntimeError("Exiting variable_creator_scope without proper nesting.")
        st.variable_creators = old


def _default_creator(next_creator=None, **kwargs):
    return ResourceVariable(**kwargs)


def _create_variable(args, kwargs):
    if len(args) > len(_ARGUMENTS):
        raise TypeError(f"Variable() takes at most {len(_ARGUMENTS)} positional arguments "
                        f"({len(args)} given).")
    bound = dict(_DEFAULTS)
    for name, value in zip(_ARGUMENTS, args):
        bound[name] = value
    for name, value in kwargs.items():
        if name in _ARGUMENTS[:len(args)]:
            raise TypeError(f"Variable() got multiple values for argument {name!r}.")
        bound[name] = value
    if bound["aggregation"] is None:
        bound["aggregation"] = VariableAggregation.NONE
    getter = _default_creator
    for _, creator in _context.thread_state().variable_creators:
        getter = _chain(creator, getter)
    return getter(**bound)


def _chain(creator, next_creator):
    def call(**kwargs):
        return creator(next_creator, **kwargs)
    return call


class VariableMetaclass(type):
    """Routes `eager.Variable(...)` through the creator stack; subclasses construct directly."""

    def __call__(cls, *args, **kwargs):
        if cls is Variable:
            return _create_variable(args, kwargs)
        return super().__call__(*args, **kwargs)


# -----------------------------------------------------------------------------------------------
# Variable: the interface, and everything that works by reading the value
# -----------------------------------------------------------------------------------------------

def _unsupported_operator(op):
    def method(self, other):
        raise RuntimeError(f"`variable {op}= value` with eager.Variable is not supported. Use "
                           f"`variable.assign_{'add' if op == '+' else 'sub'}(value)` to modify "
                           f"the variable, or `out = variable {op} value` if you need a new "
                           "tensor." if op in "+-" else
                           f"`variable {op}= value` with eager.Variable is not supported. Use "
                           f"`variable.assign(variable {op} value)`.")
    return method


def _read_then(operator_name):
    def method(self, *args):
        return getattr(self.value(), operator_name)(*args)
    method.__name__ = operator_name
    return method


def _read_then_reflected(operator_name, forward_name):
    """`other <op> variable` where the variable is asked (`__radd__`, ...): with a tensor
    `other`, whose own operator sent it here (`register_reading_operand`), the value read
    goes back to that operator, whose fast path computes it; else the value's reflected
    operator, as `_read_then`."""
    def method(self, other):
        value = self.value()
        if other.__class__ is EagerTensor:
            return getattr(other, forward_name)(value)
        return getattr(value, operator_name)(other)
    method.__name__ = operator_name
    return method


class Variable(metaclass=VariableMetaclass):
    """≈ `tf.Variable`: a tensor-valued resource that persists across calls and can be updated.

    `eager.Variable(initial_value, trainable, validate_shape, caching_device, name,
    variable_def, dtype, import_scope, constraint, synchronization, aggregation, shape)` runs the
    creator stack; the default creator makes a `ResourceVariable`.
    """

    __slots__ = ()
    __array_priority__ = 100

    def __hash__(self):
        raise TypeError("Variable is unhashable. Instead, use variable.ref() as the key.")

    def ref(self):
        return Reference(self)

    experimental_ref = ref

    # Reading: every other use of a variable is a use of its value.
    def __array__(self, dtype=None, copy=None):
        return self.value().__array__(dtype=dtype, copy=copy)

    def numpy(self):
        return self.value().numpy()

    def __bool__(self):
        return bool(self.value())

    def __float__(self):
        return float(self.value())

    def __int__(self):
        return int(self.value())

    def __index__(self):
        return self.value().__index__()

    def __len__(self):
        return len(self.value())

    def __iter__(self):
        return iter(self.value())

    def __getitem__(self, key):
        return self.value()[key]

    __iadd__ = _unsupported_operator("+")
    __isub__ = _unsupported_operator("-")
    __imul__ = _unsupported_operator("*")
    __itruediv__ = _unsupported_operator("/")
    __ipow__ = _unsupported_operator("**")


for _name in ("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__rfloordiv__",
              "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__",
              "__neg__", "__abs__", "__invert__", "__and__", "__rand__", "__or__", "__ror__",
              "__xor__", "__rxor__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
    setattr(Variable, _name, _read_then(_name))
for _name in ("add", "sub", "mul", "truediv"):  # reflected: the tensor operators' fast path
    setattr(Variable, f"__r{_name}__", _read_then_reflected(f"__r{_name}__", f"__{_name}__"))
del _name
register_reading_operand(Variable)


def _variable_to_tensor(variable, dtype=None, name=None, as_ref=False):
    value = variable.value()
    if dtype is not None and _dt.as_dtype(dtype) is not value.dtype:
        raise ValueError(f"Incompatible type conversion requested to type "
                         f"'{_dt.as_dtype(dtype).name}' for variable of type "
                         f"'{value.dtype.name}'")
    return value


register_tensor_conversion_function(Variable, _variable_to_tensor)


# -----------------------------------------------------------------------------------------------
# Resource variables
# -----------------------------------------------------------------------------------------------

class _Deleter:
    """Destroys the resource when its variable is collected. Separate from the variable so the
    variable needs no `__del__` (objects with `__del__` in reference cycles used to be
    uncollectable, and still are if the finalizer resurrects them); holds only the handle."""

    __slots__ = ("handle",)

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        try:
            handle = self.handle
            device = handle.device
            # Through the compute stream, like the kernels that use the resource: behind those
            # already queued on a simulated GPU's stream; at once on the CPU and on CUDA, whose
            # kernels look their resources up at launch.
            destroy = functools.partial(device.compute_stream.launch_from_finalizer,
                                        "DestroyResourceOp", device.resources.destroy, handle.uid)
            if not _after_pending_work(destroy):  # async ops may still use it: destroy later
                destroy()
        except Exception:  # noqa: BLE001 - at interpreter exit modules may already be gone
            pass


def _check_unsupported(kwargs):
    for arg in ("variable_def", "import_scope", "caching_device"):
        if kwargs.get(arg) is not None:
            raise NotImplementedError(f"eager.Variable does not support {arg} (a TF1 graph "
                                      "feature).")
    sync = kwargs.get("synchronization", VariableSynchronization.AUTO)
    if sync not in (VariableSynchronization.AUTO, VariableSynchronization.NONE):
        raise NotImplementedError(f"eager.Variable does not support synchronization={sync} "
                                  "(it needs replicas).")
    agg = kwargs.get("aggregation", VariableAggregation.NONE)
    if agg not in (VariableAggregation.NONE, None):
        raise NotImplementedError(f"eager.Variable does not support aggregation={agg} "
                                  "(it needs replicas).")


_new_object = object.__new__


def _updater(op, doc):
    """`assign_add` / `assign_sub`. Hot path (every update loop without an optimizer): with the
    fast path on and a delta of the variable's dtype and device, the shared update function runs
    directly on the storage; everything else goes through dispatch."""
    numpy_ufunc, op_name = op.kernel.numpy_ufunc, op.name

    def update(self, delta, use_locking=None, name=None, read_value=True):
        if delta.__class__ is not EagerTensor or delta._meta is not self._meta:
            delta = self._converted(delta)
        if FAST_PATH.kernel_only and delta._meta is self._meta:
            handle = self._handle
            storage = handle.device.resources.by_uid.get(handle.uid)
            if storage is None or storage.value is None:
                storage = handle.storage_or_uninitialized(op_name)  # raises the right error
            _apply_update(storage, np, numpy_ufunc, delta._value, op_name)
            if not read_value:
                return None
            unread = _new_object(_UnreadVariable)
            unread._parent = self
            unread._snapshot = storage.value
            unread._version = storage.version
            return unread
        execute(op, (self.handle, delta))
        return _UnreadVariable.after_update(self) if read_value else None

    update.__doc__ = doc
    return update


#: id(handle tensor) -> its variable, for as long as the variable lives (which keeps the handle
#: tensor, hence its id, alive). Lets `eager.function` list the variables a trace captured: a
#: graph sees only handles. Filled once per variable, never on a hot path.
_VARIABLE_OF_HANDLE = weakref.WeakValueDictionary()


def variable_for_handle(tensor):
    """The live ResourceVariable whose `handle` is `tensor`, or None."""
    variable = _VARIABLE_OF_HANDLE.get(id(tensor))
    if variable is not None and variable._handle_tensor is tensor:
        return variable
    return None


class ResourceVariable(Variable):
    """A variable whose value lives in its device's resource manager (see the module doc)."""

    __slots__ = ("_handle", "_handle_tensor", "_deleter", "_name", "_trainable", "_dtype",
                 "_shape", "_constraint", "_meta", "__weakref__")

    def __init__(self, initial_value=None, trainable=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None,
                 import_scope=None, constraint=None,
                 synchronization=VariableSynchronization.AUTO,
                 aggregation=VariableAggregation.NONE, shape=None,
                 experimental_enable_variable_lifting=True):
        _check_unsupported(dict(caching_device=caching_device, variable_def=variable_def,
                                import_scope=import_scope, synchronization=synchronization,
                                aggregation=aggregation))
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError(f"The `constraint` argument must be a callable. Received: "
                             f"{constraint!r}")
        if callable(initial_value):
            initial_value = initial_value()
        if isinstance(initial_value, Variable):
            initial_value = initial_value.value()
        value = convert_to_tensor(initial_value, dtype=dtype)
        if dtype is not None and value.dtype is not _dt.as_dtype(dtype):
            value = convert_to_tensor(initial_value, dtype=dtype)
        if value.__class__ is not EagerTensor:
            value = resolve_input(value, _res.ASSIGN)
        var_shape = value.shape if shape is None else as_shape(shape)
        if shape is not None and validate_shape and not var_shape.is_compatible_with(value.shape):
            raise ValueError(f"In this eager.Variable creation, the initial value's shape "
                             f"({value.shape}) is not compatible with the explicitly supplied "
                             f"`shape` argument ({var_shape}).")
        if not validate_shape and shape is None:
            var_shape = TensorShape(None)
        # As TensorFlow: the thread's name scope ("outer/dense/") prefixes the name.
        base = _context.thread_state().name_scope + (
            "Variable" if name is None else str(name).split(":")[0])
        device = _context.placement_device()
        if value.dtype.is_string and device.device_type != "CPU":
            device = _devices.lookup("CPU:0")  # strings live in host memory, as in TensorFlow
        # Creating a handle is host bookkeeping that must happen now, whatever the thread's
        # mode (an asynchronous executor would hand back a pending handle).
        handle_tensor = run_kernel(_res.VAR_HANDLE, (), {
            "dtype": value.dtype, "shape": var_shape, "shared_name": base,
            "device": device.name, "validate_shape": bool(validate_shape)}, device)
        handle = handle_tensor._value
        self._handle = handle
        self._handle_tensor = handle_tensor
        _VARIABLE_OF_HANDLE[id(handle_tensor)] = self
        self._deleter = _Deleter(handle)
        self._name = base + ":0"
        self._dtype = value.dtype
        self._shape = var_shape
        self._constraint = constraint
        self._meta = meta_for(value.dtype, device)
        if trainable is None:
            trainable = synchronization is not VariableSynchronization.ON_READ
        self._trainable = bool(trainable)
        attrs = {"validate_shape": bool(validate_shape)}
        if not _synchronous():
            # Asynchronous dispatch: initialize now (the value is concrete already), not behind
            # this thread's queue. Another thread may use the variable as soon as it has the
            # object, and its ops do not wait for this thread's queue: a queued initial value
            # would land on top of their updates, or they would find the variable
            # uninitialized.
            run_kernel(_res.ASSIGN, (self.handle, value), attrs, device)
        else:
            execute(_res.ASSIGN, (self.handle, value), attrs)

    # -- identity -----------------------------------------------------------------------------
    @property
    def handle(self):
        """The resource tensor (dtype `eager.resource`) naming this variable's storage."""
        t = self._handle_tensor
        if t is None:
            t = self._handle_tensor = wrap_value(self._handle, self._handle.device, _dt.resource)
        return t

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def ndim(self):
        return self._shape.rank

    @property
    def device(self):
        return self._handle.device.name

    @property
    def trainable(self):
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    @property
    def synchronization(self):
        return VariableSynchronization.AUTO

    @property
    def aggregation(self):
        return VariableAggregation.NONE

    # -- reads ---------------------------------------------------------------------------------
    def read_value(self):
        """A tensor holding the current value (a snapshot: later writes never change it)."""
        if FAST_PATH.kernel_only:  # nothing to record or place: the kernel directly. Hot path.
            return wrap_value(_res.READ.kernel(None, self._handle), self._handle.device)
        if self._trainable and _tape.watches_variables(_context.thread_state()):
            _tape.variable_accessed(self)
        return execute(_res.READ, (self.handle,))

    value = read_value

    def peek(self):
        """The current value's array, taken without a read op, when a read would need nothing
        but the kernel (no tape to tell, no device scope or interpreter, one device:
        `FAST_PATH.kernel_only`); else None, and the caller reads the usual way. For eager's
        own hot paths (an optimizer's learning rate and step counter). Unlike `read_value`,
        this is not a snapshot: a later in-place update changes the array, so use it at
        once."""
        if FAST_PATH.kernel_only:
            handle = self._handle
            storage = handle.device.resources.lookup(handle.uid)
            if storage is not None:
                return storage.value
        return None

    def sparse_read(self, indices, name=None):
        """Rows `indices` of the variable (a gather that reads only those rows; its gradient
        is IndexedSlices). Switches the variable to copy-on-read (docs/semantics.md)."""
        indices = convert_to_tensor(indices)
        if self._trainable and _tape.watches_variables(_context.thread_state()):
            _tape.variable_accessed(self)
        return execute(_res.GATHER, (self.handle, indices))

    def is_initialized(self, name=None):
        return execute(_res.IS_INITIALIZED, (self.handle,))

    # -- writes --------------------------------------------------------------------------------
    def _converted(self, value):
        if value.__class__ is EagerTensor and value._meta is self._meta:
            return value
        if isinstance(value, Variable):
            value = value.value()
        return convert_to_tensor(value, dtype=self._dtype)

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Sets the value; returns an unread variable (or None with read_value=False)."""
        value = self._converted(value)
        if self._constraint is not None:
            value = convert_to_tensor(self._constraint(value), dtype=self._dtype)
        if not self._shape.is_compatible_with(value.shape):  # TensorFlow checks in Python too
            # TensorFlow's wording, its missing space after "mismatch." included.
            raise ValueError(f"Cannot assign value to variable ' {self.name}': Shape mismatch."
                             f"The variable shape {self._shape}, and the assigned value shape "
                             f"{value.shape} are incompatible.")
        execute(_res.ASSIGN, (self.handle, value),
                {"validate_shape": self._handle.var_shape.is_fully_defined()})
        return _UnreadVariable.after_update(self) if read_value else None

    assign_add = _updater(_res.ASSIGN_ADD, "Adds `delta` atomically (no concurrent update is "
                                           "lost); in place when the buffer is not shared.")
    assign_sub = _updater(_res.ASSIGN_SUB, "Subtracts `delta` atomically (see assign_add).")

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """Sets rows `sparse_delta.indices` to `sparse_delta.values`."""
        return self._scatter(_res.SCATTER_UPDATE, sparse_delta)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        """Adds `sparse_delta.values` to rows `sparse_delta.indices` (duplicates add up)."""
        return self._scatter(_res.SCATTER_ADD, sparse_delta)

    def _scatter(self, op, sparse_delta):
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta!r}")
        values = convert_to_tensor(sparse_delta.values, dtype=self._dtype)
        indices = convert_to_tensor(sparse_delta.indices)
        execute(op, (self.handle, indices, values))
        return _UnreadVariable.after_update(self)

    # -- autodiff -----------------------------------------------------------------------------
    def _watch_on_tape(self, tape):
        """Called by GradientTape.watch and when a tape sees this variable read."""
        tape.watch_variable(self, self.handle)

    def _tape_source(self):
        return self.handle

    # -- display -----------------------------------------------------------------------------
    def __repr__(self):
        try:
            text = numpy_repr_text(self.numpy())
        except Exception:  # noqa: BLE001 - e.g. destroyed or uninitialized
            text = "<unavailable>"
        device = self.device
        where = "" if device == "CPU:0" else f", device={device}"
        return (f"<eager.Variable '{self.name}' shape={self._shape} dtype={self._dtype.name}"
                f"{where}, numpy={text}>")

    def _repr_html_(self):
        """A notebook's display (`eager.base.rich_display`): name, shape, dtype, device,
        whether it is trainable, and the value summarised as numpy summarises it."""
        try:
            values, state = self.numpy(), None
        except Exception as error:  # noqa: BLE001 - e.g. destroyed or uninitialized
            values, state = None, f"value unavailable: {type(error).__name__}: {error}"
        return tensor_card("eager.Variable", str(self._shape), self._dtype.name, self.device,
                           values=values, state=state,
                           extra_facts=(("name", self.name), ("trainable", self.trainable)))

    def __reduce__(self):
        raise TypeError("Variables cannot be pickled; save them with eager.train.Checkpoint.")

    def __deepcopy__(self, memo):
        copy = ResourceVariable(self.read_value(), trainable=self._trainable,
                                name=self.name.split(":")[0], constraint=self._constraint)
        memo[id(self)] = copy
        return copy


def _update_is_queued(handle) -> bool:
    """Whether an update just dispatched on `handle`'s variable may not have run yet: this
    thread dispatches asynchronously, or the variable's device runs kernels later
    (`Device.defers_kernels`). Tracing queues nothing: a traced read is ordered in the graph."""
    if _context.thread_state().interpreter is None:
        return handle.device.defers_kernels
    return not _synchronous()


class _UnreadVariable(ResourceVariable):
    """What `assign*` returns: the variable's handle plus, without reading anything, a
    reference to the buffer as it was right after that update. Reading it gives that value (a
    later write copies the buffer rather than change it, since this reference shares it);
    updates on it update the variable, so `v.assign(1.).assign_add(2.)` chains.

    Hot: every `assign*` makes one, so it stores only three fields and forwards the rest to the
    variable it came from.
    """

    __slots__ = ("_snapshot", "_version", "_parent")

    @classmethod
    def after_update(cls, variable):
        unread = _new_object(cls)
        unread._parent = variable
        handle = variable._handle
        if _update_is_queued(handle):
            # The update is queued, not done, so the storage still holds what came before it.
            # A read queued right behind it sees the value right after it: that read is the
            # snapshot (a pending tensor; `_version` None says so).
            unread._snapshot = execute(_res.READ, (variable.handle,))
            unread._version = None
            return unread
        storage = handle.device.resources.lookup(handle.uid)
        unread._snapshot = storage.value
        unread._version = storage.version
        return unread

    _handle = property(lambda self: self._parent._handle)
    _trainable = property(lambda self: self._parent._trainable)
    _dtype = property(lambda self: self._parent._dtype)
    _shape = property(lambda self: self._parent._shape)
    _constraint = property(lambda self: self._parent._constraint)
    _meta = property(lambda self: self._parent._meta)
    _deleter = None  # the variable owns the resource

    @property
    def handle(self):
        return self._parent.handle  # one handle tensor: one tape identity

    @property
    def name(self):
        return "UnreadVariable"

    def read_value(self):
        if self._version is None:  # a read queued right behind the update (after_update)
            return self._snapshot
        storage = self._handle.device.resources.lookup(self._handle.uid)
        if storage is not None and storage.version == self._version:
            return ResourceVariable.read_value(self)  # still current: a real (recorded) read
        return wrap_value(self._snapshot, self._handle.device)

    value = read_value

    def _watch_on_tape(self, tape):
        self._parent._watch_on_tape(tape)

