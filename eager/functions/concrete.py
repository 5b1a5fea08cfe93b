"""`ConcreteFunction`: one trace of a Python function, callable with tensors.

Tracing (`trace_concrete`) builds a `Graph`: one placeholder per tensor leaf of the arguments
(named after the parameter), the Python function called once with those placeholders in place
of the tensors (Python values are passed as they are), and the returned structure split into
tensors (the graph's outputs; an eager tensor returned or used is captured, a Python number or
numpy value becomes a constant one, as TensorFlow's results are always tensors) and the leaves
returned as they are on every call (None, and strings, since there is no string dtype). Python
side effects therefore happen once, at trace time.

While tracing:

* the thread's gradient tapes are hidden: the trace records graph operations, not gradients
  (a call under a tape is recorded as one op, see `_record_call`);
* creating an `eager.Variable` goes through the creator the Function passes (`lifting`): on its
  first call the variable is created eagerly, outside the graph, whose reads capture its handle;
  on later traces creation raises ValueError (TensorFlow's rule);
* a Variable argument becomes a resource placeholder carrying the variable's dtype and shape,
  fed with the handle of whichever variable (of that shape and dtype) a call passes.

Calling runs the graph with `graph_runner.GraphPlan.run`, feeding the argument tensors then the
captured values, and packs the outputs into the structure the function returned.
"""

from __future__ import annotations

import contextlib
import weakref

import numpy as np

from ..core import context as _context
from ..base import dtypes as _dt
from ..base import nest
from ..base.traceback_filter import SWITCH as _TRACEBACKS
from ..base.traceback_filter import filtered as _filtered
from ..base import profile_events as _profile_events
from ..base.rich_display import facts_card
from ..runtime import threads as _threads
from ..autodiff import tape as _tape
from ..autodiff.tape_backward import backward as _backward
from ..graph import Graph, SymbolicTensor, building
from ..ops.array_ops import identity
from ..ops.tensor_array import TensorArray
from ..tensor import EagerTensor, Tensor
from ..core.composite import CompositeTensor, TypeSpec
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..variables import Variable, prioritized_creator_scope, variable_for_handle
from . import function_gradient as _derived
from .arguments import Binder
from .lifting import CREATOR_PRIORITY, VariableArgument, handle_stand_in, refusing_creator
from . import signatures as _signatures
from .signatures import CompositeSlot, TensorSlot, VariableSlot, tensor_slots
from ..runtime.graph_runner import GraphPlan
from ..runtime.executable import function_executable, function_program
from ..runtime.program_view import ProgramView
from ..runtime.parallel import ParallelExecutor

__all__ = ["ConcreteFunction", "trace_concrete"]


class _PythonOutput:
    """A non-tensor leaf of the returned structure: returned as is on every call."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _CompositeOutput:
    """A composite leaf of the returned structure: rebuilt by `spec` from the outputs
    `first:stop` on every call."""

    __slots__ = ("spec", "first", "stop")

    def __init__(self, spec, first, stop):
        self.spec = spec
        self.first = first
        self.stop = stop


def _output_value(entry, outputs):
    """A returned leaf from the graph's outputs: an output, a Python value, or a composite."""
    if entry.__class__ is int:
        return outputs[entry]
    if entry.__class__ is _CompositeOutput:
        return entry.spec.from_components(list(outputs[entry.first:entry.stop]))
    return entry.value


#: Argument kinds a ConcreteFunction remembers for its fast call (see `__call__`).
_MAX_ACCEPTED = 256


class ConcreteFunction:
    """≈ `tf.types.experimental.ConcreteFunction`: a traced graph plus how to call it.

    `graph`, `inputs` (placeholders: arguments then captures), `outputs`, `structured_outputs`
    (the traced return value, symbolic), `structured_input_signature` (`(args, kwargs)` with
    TensorSpecs for the tensor arguments, named after their place), `output_shapes`,
    `output_dtypes`, `variables` (the variables whose handles the graph captures, alive ones),
    `trainable_variables`, `captured_inputs`; `pretty_printed_signature()` and `str()` give
    TensorFlow's text of the signature (see `signatures`).

    Calling checks the arguments against the signature (TypeError for another structure, a
    Python value other than the traced one, or a tensor of another dtype or an incompatible
    shape) and runs the graph. A call that does not bind as a whole is tried as the tensor
    arguments alone (TensorFlow's flat signature). Under a GradientTape the call is recorded as
    one op, as in TensorFlow (see `_record_call`).
    """

    __slots__ = ("_graph", "_python_function", "_binder", "_template", "_output_structure",
                 "_output_map", "_plan", "_executable", "_uncompiled_calls", "_parallel",
                 "inter_op_threads", "_capture_values", "_variable_refs", "_single_output",
                 "_call_op", "_gradients", "_accepted", "_returns_resource",
                 "__weakref__")

    def __init__(self, graph, python_function, binder, template, output_structure, output_map,
                 argument_captures=frozenset()):
        self._graph = graph
        self._python_function = python_function
        self._binder = binder
        self._template = template  # bound parameter values, tensor leaves as TensorSlot
        # The fast call (see `__call__`): positional EagerTensors whose (meta, array shape)
        # were accepted before, by binding and checking, as exactly the flat tensor arguments.
        self._accepted = set()
        self._output_structure = output_structure
        self._output_map = output_map  # per returned leaf: output index, or a _PythonOutput
        self._plan = GraphPlan(graph)  # op by op through dispatch (tapes, async, profiler)
        # The compiled program, made on the second direct call: a function called once (the
        # common notebook case, and every first call) does not pay for compiling it.
        self._executable = None
        self._uncompiled_calls = 0
        # Inter-op threads for this function's calls (None: the global setting) and the
        # parallel executor in use, as (threads, executor).
        self.inter_op_threads = None
        self._parallel = None
        self._call_op = _derived.CallOp(graph)
        self._gradients = None  # FunctionGradients, made on the first call a tape records
        # Captures fed by the call itself (Variable arguments' handle stand-ins) are left out:
        # their inputs sit among the arguments' (see `trace_concrete`).
        self._capture_values = [value for value, _ in graph.captures
                                if id(value) not in argument_captures]
        # Weak: a function does not keep a closed-over variable alive (its captured handle
        # does not either; TensorFlow's FuncGraph holds its variables weakly too).
        refs = []
        for value in self._capture_values:
            variable = variable_for_handle(value)
            if variable is not None:
                refs.append(weakref.ref(variable))
        self._variable_refs = tuple(refs)
        # A function returning one tensor (the common case) skips packing: the index of that
        # output, else None (see `_call_flat`).
        self._single_output = (output_map[0] if len(output_map) == 1 and output_map[0].__class__
                               is int and not nest.is_nested(output_structure) else None)
        # Resource outputs keep a call off the async queue (see `_queueable_on`).
        self._returns_resource = any(o.dtype is _dt.resource for o in graph.outputs)

    @classmethod
    def from_graph(cls, graph, python_function, binder, template, structured_outputs):
        """A ConcreteFunction of a graph that was not traced here (a loaded SavedModel's):
        `structured_outputs` holds tensors of `graph.outputs` and Python values returned as
        they are; `template` is the argument template (see `signatures`)."""
        index = {}
        for i, t in enumerate(graph.outputs):
            index.setdefault(id(t), i)
        output_map = [index[id(leaf)] if isinstance(leaf, SymbolicTensor) else _PythonOutput(leaf)
                      for leaf in nest.flatten(structured_outputs)]
        return cls(graph, python_function, binder, template, structured_outputs, output_map)

    # -- inspection ------------------------------------------------------------------------------
    @property
    def graph(self):
        return self._graph

    @property
    def name(self):
        return self._graph.name

    @property
    def inputs(self) -> list:
        return list(self._graph.inputs)

    @property
    def outputs(self) -> list:
        return list(self._graph.outputs)

    @property
    def structured_outputs(self):
        return self._graph.structured_outputs

    @property
    def captured_inputs(self) -> list:
        return list(self._capture_values)

    @property
    def variables(self) -> tuple:
        """The variables whose handles the graph captures (closed over, or created on the
        Function's first call), in capture order; variables that no longer exist are left out.
        Variable *arguments* are inputs, not captures, so they are not listed (as TensorFlow)."""
        found = []
        for ref in self._variable_refs:
            variable = ref()
            if variable is not None:
                found.append(variable)
        return tuple(found)

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self.variables if v.trainable)

    @property
    def gradient_functions(self):
        """The derived forward programs and backward functions of calls recorded on tapes
        (`backward.FunctionGradients`: `variants`, `forward_backward()`)."""
        if self._gradients is None:
            self._gradients = _derived.FunctionGradients(self._graph, self._capture_values)
        return self._gradients

    @property
    def structured_input_signature(self):
        """`(args, kwargs)`: positional parameters in `args`, keyword-only ones (and `**kwargs`)
        in `kwargs`; TensorSpecs stand for tensors, Python values are the traced values."""
        specs = [nest.map_structure(lambda v: v.spec if isinstance(v, (TensorSlot, CompositeSlot))
                                    else v, value)
                 for value in self._template]
        args, kwargs = self._binder.split(specs)
        return tuple(args), kwargs

    @property
    def output_shapes(self):
        """The returned structure with each tensor's static shape (`TensorShape(None)` for a
        None)."""
        return _signatures.output_types(self.structured_outputs, _signatures.shape_of)

    @property
    def output_dtypes(self):
        """The returned structure with each tensor's dtype (None for a None)."""
        return _signatures.output_types(self.structured_outputs, _signatures.dtype_of)

    def pretty_printed_signature(self, verbose=True) -> str:
        """≈ TensorFlow's: the parameters with their types (TensorSpecs for tensors, `Literal`
        for the traced Python values), the output type and the captures; one line `(params) ->
        output` when not `verbose` (see `signatures`)."""
        params = _signatures.parameters(self._binder.names, self._binder.kinds, self._template)
        return _signatures.signature_text(params, self.structured_outputs, self._capture_values,
                                          verbose)

    def __str__(self):
        return f"ConcreteFunction {self.pretty_printed_signature()}"

    # -- calling ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        try:
            key = None
            if not kwargs:
                # Hot path: the same kinds of tensors as an earlier call that bound them as
                # given and checked them against the trace skip binding and checking (dtype and
                # shape are in the key, and so is their count; a parameter that is not a tensor
                # never gets here: see below).
                key = []
                for a in args:
                    if a.__class__ is not EagerTensor:
                        key = None
                        break
                    key.append(a._meta)
                    key.append(a._value.shape)
                if key is not None:
                    key = tuple(key)
                    if key in self._accepted:
                        return self._call_flat(args)
            try:
                tensors = self.check_arguments(self._binder.bind(args, kwargs))
            except TypeError as exc:
                tensors = self._flat_arguments(args, kwargs, exc)
            if key is not None and len(tensors) == len(args) and \
                    all(t is a for t, a in zip(tensors, args)):
                accepted = self._accepted
                if len(accepted) >= _MAX_ACCEPTED:  # shapes that keep changing: stay bounded
                    accepted.clear()
                accepted.add(key)
            return self._call_flat(tensors)
        except Exception as exc:
            # A public entry point: errors show the user's frames only (a `try` costs nothing).
            if _TRACEBACKS.enabled:
                raise _filtered(exc)  # noqa: B904 - `filtered` decides the chain
            raise

    def _flat_arguments(self, args, kwargs, structured_error) -> list:
        """The tensor arguments of a call that gives the tensors alone (TensorFlow's flat
        signature: positionally, or by the names of `structured_input_signature`'s specs),
        checked; when that fails too, TensorFlow's TypeError naming both failures."""
        slots = tensor_slots(self._template)
        name = getattr(self._python_function, "__name__", self.name)
        tensors = []
        try:
            given = _signatures.bind_flat(name, slots, args, kwargs)
            for slot, value in zip(slots, given):
                _check(slot, value, slot.spec.name, tensors)
        except TypeError as flat_error:
            raise TypeError(
                f"Binding inputs to tf.function failed due to `{structured_error}`. Received "
                f"args: {args} and kwargs: {kwargs} for signature: "
                f"{self.pretty_printed_signature(verbose=False)}.\nFallback to flat signature "
                f"also failed due to: {flat_error}") from None
        return tensors

    def check_arguments(self, values) -> list:
        """The tensor arguments in `values` (bound parameter values), checked against the traced
        signature; Python numbers given for tensor parameters are converted to their dtype."""
        tensors = []
        for name, expected, given in zip(self._binder.names, self._template, values):
            _check(expected, given, name, tensors)
        return tensors

    def binding_error(self, exc, args, kwargs) -> TypeError:
        """TensorFlow's TypeError for a call of a Function with an input_signature that the
        call's arguments do not fit (`exc`, from `check_arguments`)."""
        params = _signatures.parameters(self._binder.names, self._binder.kinds, self._template)
        signature = _signatures.signature_text(params, None, (), verbose=False)
        return TypeError(f"Binding inputs to tf.function failed due to `{exc}`. Received args: "
                         f"{args} and kwargs: {kwargs} for signature: "
                         f"{signature.rsplit(' -> ', 1)[0]}.")

    def accepts(self, tensors) -> bool:
        """Whether tensors (or specs) of these shapes and dtypes fit this trace's tensor
        arguments (the rest of the cache key is known to match)."""
        slots = tensor_slots(self._template)
        return len(slots) == len(tensors) and all(
            _fits(t, s.spec) for s, t in zip(slots, tensors))

    def known_dims(self) -> int:
        """How many argument dimensions are known: more means a more specific trace."""
        n = 0
        for s in tensor_slots(self._template):
            if s.spec.shape.rank is not None:
                n += 1 + sum(d is not None for d in s.spec.shape.as_list())
        return n

    def tensor_specs(self) -> list:
        return [s.spec for s in tensor_slots(self._template)]

    def _call_flat(self, tensors):
        """Runs the graph on `tensors` (the flat tensor arguments, already checked, or known to
        fit from the cache key) and packs the outputs."""
        st = _context.thread_state()
        if st.tapes:
            self._watch_variables(tensors)
            if st.interpreter is None:
                outputs = _record_call(self, st, tensors)
            else:  # an async executor: ops go to it one by one, tapes record each
                outputs = self._plan.run(tensors, self._capture_values)
        else:
            if st.variable_watchers:  # a custom-gradient function calling this one
                self._watch_variables(tensors)
            outputs = self._run_graph(tensors, st)
        single = self._single_output
        if single is not None:
            return outputs[single]
        if self._output_structure is None:
            return None
        flat = [outputs[m] if m.__class__ is int else _output_value(m, outputs)
                for m in self._output_map]
        return nest.pack_sequence_as(self._output_structure, flat)

    def _run_graph(self, tensors, st):
        """Runs the graph on the argument tensors with no tape recording on this thread: the
        compiled program (`eager.runtime`) when nothing needs to see each op, else op by op
        through dispatch (an async executor queues them, an enclosing trace inlines them, the
        profiler times them)."""
        if st.interpreter is None and not _PROFILE.active:
            threads = self.inter_op_threads
            if threads is None:
                threads = _threads.settings.inter_op
            if threads >= 2:
                return self._parallel_executor(threads).run(tensors)
            executable = self._executable
            if executable is None:
                if not self._uncompiled_calls:
                    self._uncompiled_calls += 1
                    return self._plan.run(tensors, self._capture_values)
                executable = self._executable = function_executable(self._graph,
                                                                    self._capture_values)
            return executable(tensors, st)
        if not _PROFILE.active:
            device = self._queueable_on(st)
            if device is not None:  # an async executor: the whole call is one queued node
                return st.interpreter.queue_call(self._call_op.name, self._run_queued, tensors,
                                                 self._graph.outputs, device)
        return self._plan.run(tensors, self._capture_values)

    def _queueable_on(self, st):
        """The device every output of a call queued whole on `st`'s async executor lands on,
        or None where the call must go op by op: a tracing interpreter (which inlines the
        ops), several devices or a device scope (where the outputs land is then decided op by
        op, and ops issued after the call are placed by their inputs' devices), placement
        logging (which reports each op as it is issued), resource outputs (whose handles carry
        their variable's type beside them)."""
        device = _context.FAST_PATH.device
        if (device is None or self._returns_resource or st.device_stack
                or not hasattr(st.interpreter, "queue_call") or _context.log_device_placement()):
            return None
        return device

    def _run_queued(self, tensors):
        """A queued call's run on the async executor's worker (its thread dispatches
        synchronously, so the compiled program runs)."""
        return tuple(self._run_graph(tensors, _context.thread_state()))

    def _parallel_executor(self, threads):
        """The parallel inter-op executor of the optimised program with `threads` threads
        (made once per thread count in use)."""
        cached = self._parallel
        if cached is None or cached[0] != threads:
            program = function_program(self._graph, self._capture_values)
            cached = self._parallel = (threads, ParallelExecutor(program, threads))
        return cached[1]

    def experimental_get_program(self):
        """The optimised program calls of this function run, as a `ProgramView` (readable
        code, the generated Python, a picture). The same program the call compiles: asking
        for it compiles it now, so the next call uses it instead of running op by op."""
        executable = self._executable
        if executable is None:
            executable = self._executable = function_executable(self._graph,
                                                                self._capture_values)
        return ProgramView(executable)

    def _watch_variables(self, tensors):
        """As TensorFlow: a call under a tape counts as accessing the trainable variables the
        function captures or is passed (their reads happen inside the graph, where no
        `read_value` tells the tapes), so `tape.gradient(y, v)` needs no explicit watch."""
        for variable in self.variables:
            if variable.trainable:
                _tape.variable_accessed(variable)
        for t in tensors:
            if t.dtype is _dt.resource:
                variable = variable_for_handle(t)
                if variable is not None and variable.trainable:
                    _tape.variable_accessed(variable)

    def _repr_html_(self):
        """A notebook's display: the signature, how many ops the traced graph holds, and what
        it captures (variables by name)."""
        variables = self.variables
        others = len(self._capture_values) - len(self._variable_refs)
        facts = [("name", self.name),
                 ("signature", self.pretty_printed_signature(verbose=False)),
                 ("operations", self._graph.operations_count),
                 ("captured variables", ", ".join(v.name for v in variables) or "none")]
        if others:
            facts.append(("other captured tensors", others))
        return facts_card("ConcreteFunction", facts)

    def __repr__(self):
        return (f"<ConcreteFunction {self.pretty_printed_signature(verbose=False)} at "
                f"0x{id(self):X}>")


# -- recording a call on tapes ---------------------------------------------------------------------
class _Followed:
    """Stands in for a tensor where the backward pass only reads its tape id: a recorded call
    keeps the ids of its outputs, not their values."""

    __slots__ = ("_tape_id",)

    def __init__(self, tid):
        self._tape_id = tid


_PROFILE = _profile_events.RECORDER


def _run_on_private_tape(function, feeds, st, outer):
    """Runs the graph on `feeds` (arguments then captures) op by op through dispatch with a
    private tape, plus the tapes `outer`, recording; returns the private tape, the ids of the
    fed tensors it follows (0 for the others) and the outputs. An output that *is* a fed tensor
    goes through an identity op, so that a call's outputs never share an id with its inputs
    (the backward pass would count such a gradient twice)."""
    private = _tape.Tape()
    ids = [private.watch(t) if _derived.differentiable(t.dtype) else 0 for t in feeds]
    saved = st.tapes
    st.tapes = [*outer, private]
    try:
        outputs = function._plan.replay(feeds)
        fed = {id(t) for t in feeds}
        outputs = [identity(o) if id(o) in fed else o for o in outputs]
    finally:
        st.tapes = saved
    return private, ids, outputs


def _record_call(function, st, tensors) -> list:
    """Runs `function`'s graph on `tensors` with tapes recording, and records the call on them
    as one op, as TensorFlow does.

    With no tape following any input, the graph just runs: nothing would be recorded.

    Usually the call's gradient is derived from the graph (`backward`): the forward program
    runs compiled, returning the intermediates the backward needs, and the entry's backward is
    a compiled backward function whose own calls are recorded the same way (higher order).

    Fallback, when the graph's gradient cannot be derived (an op on the way has no gradient
    function, such as control flow before its gradients exist) or the profiler wants every op:
    the forward pass runs op by op on a private tape only (the thread's tapes set aside), which
    keeps, per op, just what the op's gradient declared it needs, and the entry's backward is
    the backward pass over that private tape. Higher order then needs more: an outer tape
    differentiating the backward must know how the kept intermediates depend on the inputs,
    which the private tape alone records. So when several tapes record the call, its entry also
    keeps its inputs, and a backward run while one of those tapes records (`with t2:
    t1.gradient(...)`) first runs the forward again from them under the recording tapes
    (rematerialisation). That is only sound for a graph without stateful ops; a stateful graph
    under several tapes is instead replayed op by op on all of them, as eager code would be."""
    captures = function._capture_values
    feeds = [*tensors, *captures]
    recording = _derived.recording_tapes(st.tapes, feeds)
    if not recording:
        tapes = st.tapes
        st.tapes = []
        try:
            return function._run_graph(tensors, st)
        finally:
            st.tapes = tapes
    if not _PROFILE.active:
        outputs = _derived.record_call(function.gradient_functions, function._call_op, tensors,
                                       feeds, recording, st)
        if outputs is not None:
            return outputs
    return _record_replayed(function, st, tensors, feeds)


def _record_replayed(function, st, tensors, feeds) -> list:
    """The fallback of `_record_call` (see there)."""
    tapes = st.tapes
    captures = function._capture_values
    op = function._call_op
    several = len(tapes) > 1
    if several and not op.remat_ok:
        return function._plan.run(tensors, captures)  # every op on every tape
    private, ids, outputs = _run_on_private_tape(function, feeds, st, ())
    target_ids = [_Followed(o._tape_id) for o in outputs]
    kept_inputs = tuple(feeds) if several else None
    recorders = weakref.WeakSet(tapes) if several else ()

    def backward(entry, *output_grads):
        sources = _as_ids(entry.input_needed, ids)  # -1: no gradient wanted
        tape, targets = private, target_ids
        now = _context.thread_state()
        if kept_inputs is not None and any(t in recorders for t in now.tapes):
            tape, again_ids, targets = _run_on_private_tape(function, list(kept_inputs), now,
                                                            now.tapes)
            sources = [a if s != -1 else -1 for a, s in zip(again_ids, sources)]
        pairs = [(t, g) for t, g in zip(targets, output_grads) if g is not None]
        grads = _backward(tape, [t for t, _ in pairs], [g for _, g in pairs], sources)
        return tuple(g if s != -1 else None for g, s in zip(grads, sources))

    for tape in tapes:
        tape.record(op, feeds, {"f": op.graph_name}, tuple(outputs), backward, (), ())
    return outputs


def _as_ids(needed, ids):
    """The tape ids of the inputs whose gradient is wanted, -1 for the others."""
    return [i if i and (needed is None or needed[k]) else -1 for k, i in enumerate(ids)]


def _fits(t, spec) -> bool:
    """Whether tensor or spec `t` is an instance of `spec` (same dtype; every dim `spec` knows,
    `t` has, equal): a subtype test, unlike the symmetric `is_compatible_with`."""
    if t.dtype != spec.dtype:
        return False
    expected = spec.shape
    if expected.rank is None:
        return True
    given = t.shape
    if given.rank != expected.rank:
        return False
    return all(e is None or e == g for e, g in zip(expected.as_list(), given.as_list()))


def _check(expected, given, name, tensors):
    if expected.__class__ is CompositeSlot:
        spec = expected.spec
        if not isinstance(given, CompositeTensor) or type(given._type_spec) is not type(spec):
            raise TypeError(f"Argument {name!r}: expected a value of type {spec!r}, got "
                            f"{given!r:.80}.")
        given_spec = given._type_spec
        if given_spec._key()[1:] != spec._key()[1:]:
            raise TypeError(f"Can not cast {given_spec!r} to {spec!r}")
        for k, (slot, component) in enumerate(zip(expected.slots,
                                                  spec.to_components(given))):
            _check(slot, component, f"{name}_{k}", tensors)
        return
    if expected.__class__ is VariableSlot:
        if not isinstance(given, Variable) or given.dtype != expected.dtype or \
                given.shape != expected.shape:
            raise TypeError(f"Argument {name!r}: the function was traced with a Variable of "
                            f"dtype {expected.dtype.name} and shape {expected.shape}, got "
                            f"{given!r:.80}.")
        tensors.append(given.handle)
        return
    if isinstance(expected, TensorSlot):
        spec = expected.spec
        if not isinstance(given, Tensor):
            try:
                given = convert_to_tensor(given, dtype=spec.dtype)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"Argument {name!r}: expected a tensor matching {spec}, got "
                                f"{given!r:.80} ({exc}).") from None
        if not _fits(given, spec):
            # TensorFlow's words (callers add what was received, as TF does)
            raise TypeError(f"Can not cast {TensorSpec(given.shape, given.dtype)} to "
                            f"{TensorSpec(spec.shape, spec.dtype)}")
        tensors.append(given)
        return
    if isinstance(expected, dict):
        if not isinstance(given, dict) or set(given) != set(expected):
            raise TypeError(f"Argument {name!r}: expected a dict with keys "
                            f"{sorted(expected)}, got {given!r:.80}.")
        for k in sorted(expected):
            _check(expected[k], given[k], f"{name}[{k!r}]", tensors)
        return
    if isinstance(expected, (list, tuple)):
        if type(given) is not type(expected) or len(given) != len(expected):
            raise TypeError(f"Argument {name!r}: expected a {type(expected).__name__} of "
                            f"length {len(expected)}, got {given!r:.80}.")
        for i, (e, g) in enumerate(zip(expected, given)):
            _check(e, g, f"{name}[{i}]", tensors)
        return
    if type(given) is not type(expected) or given != expected:
        # TensorFlow's words: the traced value is the parameter's type, `Literal[2]`
        raise TypeError(f"Can not cast {given!r:.80} to Literal[{expected!r:.80}]")


@contextlib.contextmanager
def _tapes_hidden():
    st = _context.thread_state()
    saved = st.tapes
    st.tapes = []
    try:
        yield
    finally:
        st.tapes = saved


def trace_concrete(python_function, binder: Binder, values, specs, name,
                   specs_allowed=False, creator=None) -> ConcreteFunction:
    """Traces `python_function` called with bound `values`, whose tensor leaves (tensors, specs,
    numpy arrays, in nest order; TensorSpecs only when `specs_allowed`, as in `describe`)
    become placeholders typed by `specs` (aligned with them), and whose Variable leaves become
    resource placeholders. Variables created while tracing go through `creator` (by default,
    creation raises ValueError; see `lifting`)."""
    graph = Graph(name)
    graph.building_function = True
    specs = iter(specs)
    template = []
    symbolic_values = []
    if creator is None:
        creator = refusing_creator(name)
    argument_captures = set()  # ids of Variable arguments' handle stand-ins (fed by calls)
    with building(graph), _tapes_hidden(), \
            prioritized_creator_scope(creator, priority=CREATOR_PRIORITY):
        for pname, kind, value in zip(binder.names, binder.kinds, values):
            flat = nest.flatten(value)
            slots, symbolic = [], []
            for leaf, path in zip(flat, _signatures.leaf_names(value, pname, kind)):
                if isinstance(leaf, Variable):
                    spec = next(specs)  # the handle's: a scalar resource
                    stand_in = handle_stand_in(leaf)
                    graph.capture(stand_in)  # now: its input comes among the arguments'
                    argument_captures.add(id(stand_in))
                    symbolic.append(VariableArgument.standing_for(leaf, stand_in))
                    slots.append(VariableSlot(TensorSpec(spec.shape, spec.dtype, path),
                                              leaf.dtype, leaf.shape, leaf.trainable))
                elif isinstance(leaf, CompositeTensor) or (specs_allowed and
                                                           isinstance(leaf, TypeSpec)):
                    spec = leaf if isinstance(leaf, TypeSpec) else leaf._type_spec
                    parts, placeholders = [], []
                    for k, component in enumerate(spec.component_specs):
                        next(specs)  # the component's own spec: the TypeSpec's is used
                        placeholders.append(graph.placeholder(component.dtype, component.shape,
                                                              name=pname))
                        parts.append(TensorSlot(TensorSpec(component.shape, component.dtype,
                                                           f"{path}_{k}")))
                    symbolic.append(spec.from_components(placeholders))
                    slots.append(CompositeSlot(spec, parts))
                elif _is_tensor_leaf(leaf, specs_allowed):
                    spec = next(specs)
                    given = leaf.name if isinstance(leaf, TensorSpec) else None
                    symbolic.append(graph.placeholder(spec.dtype, spec.shape, name=pname))
                    slots.append(TensorSlot(TensorSpec(spec.shape, spec.dtype, given or path),
                                            given))
                else:
                    symbolic.append(leaf)
                    slots.append(leaf)
            template.append(nest.pack_sequence_as(value, slots))
            symbolic_values.append(nest.pack_sequence_as(value, symbolic))
        result = binder.call(python_function, tuple(symbolic_values))
        outputs, output_map = [], []
        for leaf in nest.flatten(result):
            if isinstance(leaf, Variable):
                leaf = convert_to_tensor(leaf)  # its value, read in the graph
            elif isinstance(leaf, TensorArray):
                leaf = leaf.flow  # its TensorList, as TensorFlow returns it
            elif isinstance(leaf, CompositeTensor):  # its components, rebuilt per call
                spec = leaf._type_spec
                first = len(outputs)
                for component in spec.to_components(leaf):
                    outputs.append(_as_output(graph, convert_to_tensor(component)))
                output_map.append(_CompositeOutput(spec, first, len(outputs)))
                continue
            elif not (leaf is None or isinstance(leaf, Tensor)):
                leaf = _returned_tensor(leaf, python_function)
            if isinstance(leaf, Tensor):
                output_map.append(len(outputs))
                outputs.append(_as_output(graph, leaf))
            else:
                output_map.append(_PythonOutput(leaf))
    # Returned values wait for every op that must run (assigns, prints): automatic control
    # dependencies' single control output (eager.graph.control_deps).
    graph.outputs = graph.finalize(outputs)
    graph.structured_outputs = nest.pack_sequence_as(
        result, [_output_value(m, graph.outputs) for m in output_map])
    return ConcreteFunction(graph, python_function, binder, tuple(template),
                            graph.structured_outputs, output_map, argument_captures)


def _returned_tensor(value, python_function):
    """A returned leaf that is neither a tensor nor None as the tensor TensorFlow makes of it:
    a Python number or bool, a numpy scalar or array becomes a constant output (`return 1`
    gives a scalar int32 tensor on every call), a str or bytes a string constant. Anything
    else is TensorFlow's TypeError."""
    try:
        return convert_to_tensor(value)
    except (TypeError, ValueError):
        raise TypeError(
            "To be compatible with tf.function, Python functions must return zero or more "
            f"Tensors or ExtensionTypes or None values; in compilation of {python_function!r}, "
            f"found return value of type {type(value).__name__}, which is not a Tensor or "
            "ExtensionType.") from None


def _is_tensor_leaf(leaf, specs_allowed) -> bool:
    return (isinstance(leaf, (Tensor, np.ndarray))
            or (specs_allowed and isinstance(leaf, TensorSpec)))


def _as_output(graph, t):
    """A returned tensor as a tensor of `graph`: its own symbolic tensors as they are, eager
    ones captured (returned through their capture placeholder)."""
    if isinstance(t, SymbolicTensor):
        if t.graph is not graph:
            raise ValueError(f"The function returned {t.name}, a tensor of another graph "
                             f"({t.graph!r}); return tensors computed in this function.")
        return t
    resolve = getattr(t, "_resolve", None)  # a pending (async) tensor: its value
    if resolve is not None:
        t = resolve()
    return graph.capture(t)
