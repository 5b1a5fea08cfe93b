"""`eager.function` and `Function`: a Python function traced once per kind of arguments.

A `Function` keeps a cache of `ConcreteFunction`s keyed by its arguments' tracing types (see
`arguments`): tensors by shape and dtype, Python values by value, structures by structure. A call
looks up its exact key; failing that, a trace whose argument specs the call fits (one traced
from TensorSpecs with None dims, or a relaxed one); failing that, it traces. With
`reduce_retracing=True` a new trace for arguments that differ from an earlier trace only in
shapes generalizes the dims that differ to None, so later shapes fit it. With `input_signature`
the function is traced once, from the signature, and calls that do not fit raise TypeError.

Methods: a Function in a class body is a descriptor; `obj.method` is a Function bound to `obj`
(through a weak reference), made once per instance and kept in a table keyed by the instance's
id whose entries die with the instance, so each instance has its own traces and none is kept
alive by them.

Variables created inside the function (TensorFlow's rule, see `lifting`): allowed on the first
call only. That call traces under a creator that makes variables eagerly (initializers lifted
out, run once); if it created any, the function is traced again at once under a creator that
refuses creation, so an unguarded `Variable(...)` raises ValueError on that first call while the
guarded singleton pattern passes, and the second trace is kept. Every later trace refuses.
Variable arguments are keyed by shape and dtype (see `arguments`).

`run_functions_eagerly(True)` (re-exported as `eager.config.run_functions_eagerly`) makes every
call run the Python function itself, as TensorFlow's switch does; `get_concrete_function` still
traces.

AutoGraph: with `autograph=True` (the default) what is traced is the function as
`eager.autograph` converts it (on the first trace, cached per code object), so a Python `if`,
`while` or `for` on a symbolic tensor becomes `eager.cond` / `eager.while_loop`; with
`autograph=False` the function is traced as written, and such a statement raises a TypeError
that names `eager.cond` and `eager.while_loop`.
"""

from __future__ import annotations

import functools
import threading
import warnings
import weakref

from ..autograph.api import converting_call
from ..base import nest
from ..base.traceback_filter import SWITCH as _TRACEBACKS
from ..base.traceback_filter import filtered as _filtered
from ..core import context as _context
from ..core.context import thread_state as _thread_state
from ..tensor import EagerTensor as _EagerTensor
from ..core.composite import TypeSpec
from ..core.specs import TensorSpec
from .arguments import Binder, describe
from .concrete import ConcreteFunction, trace_concrete
from .lifting import LiftingCreator

# Callables told of every new trace (`listener(concrete)`); `eager.summary.trace_on` adds one
# while it collects graphs. Read only when a function traces.
TRACE_LISTENERS = []

__all__ = ["Function", "function", "run_functions_eagerly", "functions_run_eagerly"]

#: Traces of one Function after which it warns about retracing (TensorFlow warns after 5).
RETRACE_WARNING_THRESHOLD = 5

#: Argument kinds a Function remembers for its fast lookup (see `Function.__call__`).
_MAX_FAST_KEYS = 256

#: Exact call keys a Function remembers beside its traces. With `reduce_retracing` every new
#: shape is a new key for an existing trace; past this many the oldest key is forgotten (its
#: trace stays, found again by the fit lookup), so a function called with ever-new lengths
#: stays bounded.
_MAX_EXACT_KEYS = 1024


#: `run_functions_eagerly`'s switch: process-wide, as TensorFlow's (read on every call).
_RUN_FUNCTIONS_EAGERLY = False


def run_functions_eagerly(run_eagerly) -> None:
    """≈ `tf.config.run_functions_eagerly`: with True, every `Function` call runs the Python
    function itself, eagerly, each time (for debugging: prints and breakpoints see values), and
    traces nothing (`experimental_get_tracing_count` does not move); with False, calls trace
    and run graphs again. `get_concrete_function` still traces."""
    global _RUN_FUNCTIONS_EAGERLY
    _RUN_FUNCTIONS_EAGERLY = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    """≈ `tf.config.functions_run_eagerly`: whether `run_functions_eagerly(True)` is in force."""
    return _RUN_FUNCTIONS_EAGERLY


def _forget_oldest(cache) -> None:
    """Drops the oldest entry of `cache` (a dict: insertion order); other threads may be
    changing it (the fast lookup takes no lock), so an entry already gone is fine."""
    try:
        del cache[next(iter(cache))]
    except (StopIteration, KeyError, RuntimeError):
        pass


class Function:
    """≈ `tf.types.experimental.PolymorphicFunction` (what `tf.function` returns); see the module
    doc. Python side effects in the function run when it is traced, not on every call."""

    def __init__(self, python_function, input_signature=None, autograph=True, jit_compile=None,
                 reduce_retracing=False, name=None, _instance_ref=None, *,
                 experimental_inter_op_threads=None, experimental_autograph_options=None):
        if not callable(python_function):
            raise TypeError(f"eager.function needs a callable, got {python_function!r}.")
        if input_signature is not None:
            input_signature = tuple(input_signature)
            for spec in _flatten_signature(input_signature):
                if not isinstance(spec, (TensorSpec, TypeSpec)):
                    raise TypeError(f"input_signature must be a possibly nested sequence of "
                                    f"TensorSpec objects, got {spec!r}.")
        self._python_function = python_function
        self._input_signature = input_signature
        self._autograph = autograph
        self._autograph_options = experimental_autograph_options
        self._jit_compile = jit_compile
        self._reduce_retracing = bool(reduce_retracing)
        self._inter_op_threads = _checked_threads(experimental_inter_op_threads)
        self._name = name or getattr(python_function, "__name__", "function")
        self._instance_ref = _instance_ref
        self._binder = Binder(python_function, skip_first=_instance_ref is not None)
        target = (converting_call(python_function, experimental_autograph_options)
                  if autograph else python_function)
        self._call_target = (target if _instance_ref is None
                             else _WeakMethod(target, _instance_ref))
        self._cache = {}  # exact key -> ConcreteFunction
        # The fast lookup (see `__call__`): for calls with only positional EagerTensors, no
        # keywords and no device scope, (meta, array shape) per argument -> ConcreteFunction.
        # Such a key determines the exact key (meta gives the dtype), so a hit is the trace
        # the slow path would pick, with the arguments known to fit it.
        self._fast = {}
        self._fast_arity = self._binder.plain_arity()
        self._by_erased_key = {}  # key with shapes erased -> [ConcreteFunction] (fit lookup)
        self._signature_function = None
        self._tracing_count = 0
        self._call_count = 0
        self._warned = False
        self._lock = threading.RLock()
        self._bound = {}  # id(instance) -> (weakref to instance, bound Function)
        self._initialized = False  # whether the first call's trace (may create variables) is done
        # Held strongly: the variables this Function created live as long as it does (an owner
        # such as `self.v` usually holds them too; TensorFlow instead raises if they are gone).
        self._created_variables = []
        self._traces = []  # every trace kept, in the order made
        functools.update_wrapper(self, python_function, updated=())

    # -- public attributes -----------------------------------------------------------------------
    @property
    def python_function(self):
        """The wrapped Python function (for a method bound to an instance, the bound method)."""
        if self._instance_ref is None:
            return self._python_function
        return self._python_function.__get__(self._instance_ref(), None)

    @property
    def input_signature(self):
        return self._input_signature

    @property
    def concrete_functions(self) -> tuple:
        """Every trace kept, in the order made (what a SavedModel saves of this Function)."""
        return tuple(self._traces)

    def experimental_get_tracing_count(self) -> int:
        return self._tracing_count

    @property
    def variables(self) -> tuple:
        """The variables this Function created on its first call, then those its traces capture
        (closed over), each once. (tf.function has no such attribute; its ConcreteFunctions
        have `.variables`.)"""
        found, seen = [], set()
        traces = [c for family in self._by_erased_key.values() for c in family]
        for concrete in [self._signature_function, *traces]:
            if concrete is None:
                continue
            for v in concrete.variables:
                if id(v) not in seen:
                    seen.add(id(v))
                    found.append(v)
        for v in self._created_variables:
            if id(v) not in seen:
                seen.add(id(v))
                found.append(v)
        return tuple(found)

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self.variables if v.trainable)

    # -- calling ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        try:
            if _RUN_FUNCTIONS_EAGERLY:  # (`run_functions_eagerly`): the Python function, as is
                return self._call_target(*args, **kwargs)
            self._call_count += 1
            fast_key = None
            if not kwargs and len(args) == self._fast_arity and not _thread_state().device_stack:
                # Hot path: all arguments EagerTensors, bound as given (no defaults, no keywords).
                # Skips binding, `describe` and the argument check; a miss takes the full path
                # below and records its answer here.
                key = []
                for a in args:
                    if a.__class__ is not _EagerTensor:
                        break
                    key.append(a._meta)
                    key.append(a._value.shape)
                else:
                    fast_key = tuple(key)
                    concrete = self._fast.get(fast_key)
                    if concrete is not None:
                        return concrete._call_flat(args)
            values = self._binder.bind(args, kwargs)
            if self._input_signature is not None:
                concrete = self._concrete_for_signature()
                try:
                    tensors = concrete.check_arguments(values)
                except TypeError as exc:
                    raise concrete.binding_error(exc, args, kwargs) from None
            else:
                tensors = []
                key = (describe(values, tensors), _device_key())
                concrete = self._cache.get(key)
                if concrete is None:
                    concrete = self._lookup_or_trace(key, values, tensors, specs_allowed=False)
            if fast_key is not None:
                fast = self._fast
                if len(fast) >= _MAX_FAST_KEYS:  # shapes that keep changing: forget the oldest
                    _forget_oldest(fast)
                fast[fast_key] = concrete
            return concrete._call_flat(tensors)
        except Exception as exc:
            # A public entry point: errors show the user's frames only (a `try` costs nothing).
            if _TRACEBACKS.enabled:
                raise _filtered(exc)  # noqa: B904 - `filtered` decides the chain
            raise

    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The trace for these arguments (tensors or TensorSpecs, Python values), made if
        needed. With an input_signature and no arguments, the signature's trace."""
        if self._input_signature is not None:
            concrete = self._concrete_for_signature()
            if args or kwargs:
                values = self._binder.bind(args, kwargs)
                specs = []
                describe(values, specs, specs_allowed=True)
                if not concrete.accepts(specs):
                    raise TypeError(f"{self._name}: arguments {specs} do not fit the "
                                    f"input_signature {self._input_signature}.")
            return concrete
        values = self._binder.bind(args, kwargs)
        tensors = []
        key = (describe(values, tensors, specs_allowed=True), _device_key())
        concrete = self._cache.get(key)
        if concrete is None:
            concrete = self._lookup_or_trace(key, values, tensors, specs_allowed=True)
        return concrete

    def experimental_get_program(self, *args, **kwargs):
        """The optimised program a call with these arguments runs (tensors, TensorSpecs or
        values, as for `get_concrete_function`), as an `eager.runtime.ProgramView`: prints as
        readable code, has the generated `source`, draws as SVG."""
        return self.get_concrete_function(*args, **kwargs).experimental_get_program()

    def pretty_printed_concrete_signatures(self, verbose=True) -> str:
        """≈ TensorFlow's: the signature of every trace made so far, in the order made, each as
        `ConcreteFunction.pretty_printed_signature(verbose)`, separated by a blank line ("" when
        there is none)."""
        separator = "\n\n" if verbose else "\n"
        return separator.join(c.pretty_printed_signature(verbose) for c in self._traces)

    # -- tracing ---------------------------------------------------------------------------------
    def _concrete_for_signature(self):
        """The signature's trace, made on first need. Dimensions the signature leaves as None
        stay unknown in it: sizes computed from them are read when the function runs, never
        specialized per call shape (an op that cannot take a size at run time raises its
        UnknownDimensionError, a TypeError naming it, as TensorFlow never retraces here)."""
        concrete = self._signature_function
        if concrete is None:
            with self._lock:
                concrete = self._signature_function
                if concrete is None:
                    concrete = self._signature_function = self._trace_signature()
        return concrete

    def _trace_signature(self):
        n = len(self._input_signature)
        if n > self._binder.positional_count():
            raise TypeError(f"{self._name}: input_signature has {n} entries but the function "
                            f"takes {self._binder.positional_count()} positional parameters.")
        try:
            values = self._binder.bind(self._input_signature, {})
        except TypeError as exc:
            raise TypeError(f"{self._name}: parameters not covered by input_signature need "
                            f"defaults ({exc}).") from None
        specs = []
        describe(values, specs, specs_allowed=True)
        return self._trace(values, specs, specs_allowed=True)

    def _lookup_or_trace(self, key, values, tensors, specs_allowed):
        with self._lock:
            concrete = self._cache.get(key)
            if concrete is not None:
                return concrete
            erased = (describe(values, [], specs_allowed, erase_shapes=True), key[1])
            family = self._by_erased_key.setdefault(erased, [])
            fitting = [c for c in family if c.accepts(tensors)]
            if fitting:
                concrete = max(fitting, key=ConcreteFunction.known_dims)
            else:
                specs = [TensorSpec(t.shape, t.dtype) for t in tensors]
                if self._reduce_retracing and family:
                    previous = family[-1].tensor_specs()
                    specs = [TensorSpec(p.shape.most_specific_compatible_shape(s.shape), s.dtype)
                             for p, s in zip(previous, specs)]
                concrete = self._trace(values, specs, specs_allowed)
                family.append(concrete)
            cache = self._cache
            if len(cache) >= _MAX_EXACT_KEYS:  # the traces stay in their families
                _forget_oldest(cache)
            cache[key] = concrete
            return concrete

    def _trace(self, values, specs, specs_allowed):
        if not self._initialized:
            return self._first_trace(values, specs, specs_allowed)
        concrete = trace_concrete(self._call_target, self._binder, values, specs, self._name,
                                  specs_allowed=specs_allowed)
        self._count_trace()
        self._configure(concrete)
        return concrete

    def _first_trace(self, values, specs, specs_allowed):
        """The first call's trace (see the module doc): variables may be created, eagerly; if
        any were, a second trace that may create none is the one kept."""
        creator = LiftingCreator(self._name)
        concrete = trace_concrete(self._call_target, self._binder, values, specs, self._name,
                                  specs_allowed=specs_allowed, creator=creator)
        self._count_trace()
        self._initialized = True
        if creator.created:
            self._created_variables.extend(creator.created)
            concrete = trace_concrete(self._call_target, self._binder, values, specs,
                                      self._name, specs_allowed=specs_allowed)
            self._count_trace()
        self._configure(concrete)
        return concrete

    def _configure(self, concrete):
        """Applies this Function's runtime options to a new trace, and lists it (in trace
        order, for `pretty_printed_concrete_signatures`)."""
        self._traces.append(concrete)
        for listener in TRACE_LISTENERS:
            listener(concrete)
        concrete.inter_op_threads = self._inter_op_threads
        if self._jit_compile:
            concrete._uncompiled_calls = 1  # compile on the first call, not the second

    def _count_trace(self):
        self._tracing_count += 1
        if self._tracing_count >= RETRACE_WARNING_THRESHOLD and not self._warned:
            self._warned = True
            warnings.warn(
                f"{self._tracing_count} out of the last {self._call_count} calls to "
                f"{self._python_function!r} triggered eager.function retracing. Tracing is "
                "expensive and the excessive number of tracings could be due to (1) creating "
                "@eager.function repeatedly in a loop, (2) passing tensors with different "
                "shapes, (3) passing Python objects instead of tensors. For (1), define the "
                "function outside the loop. For (2), @eager.function has reduce_retracing=True "
                "and input_signature to avoid unnecessary retracing. For (3), pass tensors.",
                UserWarning, stacklevel=5)

    # -- methods ---------------------------------------------------------------------------------
    def __get__(self, instance, owner=None):
        if instance is None or self._instance_ref is not None:
            return self
        key = id(instance)
        entry = self._bound.get(key)
        if entry is not None and entry[0]() is instance:
            return entry[1]
        with self._lock:
            entry = self._bound.get(key)
            if entry is not None and entry[0]() is instance:
                return entry[1]
            bound_table = self._bound

            def forget(_ref, key=key, table=bound_table):
                current = table.get(key)
                if current is not None and current[0] is _ref:
                    del table[key]

            try:
                ref = weakref.ref(instance, forget)
            except TypeError:
                raise TypeError(f"eager.function methods need instances that support weak "
                                f"references; {type(instance).__name__} does not (add "
                                "'__weakref__' to its __slots__).") from None
            bound = Function(self._python_function, self._input_signature, self._autograph,
                             self._jit_compile, self._reduce_retracing, self._name,
                             _instance_ref=ref,
                             experimental_inter_op_threads=self._inter_op_threads,
                             experimental_autograph_options=self._autograph_options)
            self._bound[key] = (ref, bound)
            return bound

    def __repr__(self):
        return f"<eager.function {self._name} at 0x{id(self):X}>"


class _WeakMethod:
    """Calls `python_function(instance, ...)` with the instance behind a weak reference, so that
    a bound Function (and its traces) never keeps its instance alive."""

    __slots__ = ("_function", "_ref", "__name__")

    def __init__(self, python_function, ref):
        self._function = python_function
        self._ref = ref
        self.__name__ = getattr(python_function, "__name__", "method")

    def __call__(self, *args, **kwargs):
        instance = self._ref()
        if instance is None:
            raise ReferenceError(f"The instance {self.__name__} was bound to no longer exists.")
        return self._function(instance, *args, **kwargs)

    def __repr__(self):
        return f"<bound method {self.__name__} (weak)>"


def _flatten_signature(signature):
    return nest.flatten(list(signature))


def _device_key():
    """The device scope a trace is made under is part of its key (its ops record the scope's
    device, as TensorFlow keys traces by their calling context)."""
    spec = _context.current_device_spec()
    return spec.to_string() if spec is not None else ""


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, experimental_relax_shapes=None, *,
             experimental_inter_op_threads=None, experimental_autograph_options=None):
    """≈ `tf.function`: `@eager.function`, `@eager.function(...)`, or `eager.function(f, ...)`.

    Returns a `Function` that traces `func` into a graph per kind of arguments (see the module
    doc) and runs the graph on later calls. Python side effects (appending to a list, `print`)
    happen while tracing only; `eager.print` prints on every call. Variables may be created on
    the first call only (TensorFlow's rule; see the module doc). `experimental_relax_shapes` is
    the deprecated name of `reduce_retracing`. `autograph=True` traces the function as
    `eager.autograph` converts it (Python `if`/`while`/`for` on tensors become `eager.cond` /
    `eager.while_loop`); `experimental_autograph_options` takes
    `eager.autograph.experimental.Feature`s (see the module doc).

    `jit_compile=True`: there is no XLA here; it asks for the graph runtime's fully optimised,
    compiled plan (pruning, folding, fusion, straight-line code) from the first call on,
    instead of from the second (the default avoids compiling functions called only once).

    `experimental_inter_op_threads` (not in TensorFlow): run this function's graphs on the
    parallel inter-op executor with that many threads (independent ops at once; worth it for
    large kernels, which release the GIL), 0 or 1 for the serial compiled plan, None (default)
    for the global `eager.config.threading.set_inter_op_parallelism_threads` setting.
    """
    if experimental_relax_shapes is not None:
        reduce_retracing = reduce_retracing or bool(experimental_relax_shapes)

    def decorate(f):
        return Function(f, input_signature=input_signature, autograph=autograph,
                        jit_compile=jit_compile, reduce_retracing=reduce_retracing,
                        experimental_inter_op_threads=experimental_inter_op_threads,
                        experimental_autograph_options=experimental_autograph_options)

    if func is None:
        return decorate
    return decorate(func)


def _checked_threads(value):
    """`experimental_inter_op_threads` validated: None, or a count >= 0."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"experimental_inter_op_threads must be None or an int >= 0, got "
                         f"{value!r}.")
    return value
