"""`ConcreteFunction`: one trace of a Python function, callable with tensors.

Tracing (`trace_concrete`) builds a `Graph`: one placeholder per tensor leaf of the arguments
(named after the parameter), the Python function called once with those placeholders in place
of the tensors (Python values are passed as they are), and the returned structure split into
tensors (the graph's outputs; an eager tensor returned or used is captured) and Python values
(returned as they are on every call). Python side effects therefore happen once, at trace time.

While tracing:

* the thread's gradient tapes are hidden: the trace records graph operations, not gradients
  (a call under a tape replays the graph op by op through dispatch, which the tapes record; see
  `runner`);
* creating an `eager.Variable` raises NotImplementedError (TODO, issue 6 item 3: TensorFlow
  allows it on the first call only and lifts the variable out of the graph).

Calling runs the graph with `runner.run_graph`, feeding the argument tensors then the captured
values, and packs the outputs into the structure the function returned.
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import context as _context
from .. import nest
from ..graph import Graph, SymbolicTensor, building
from ..tensor import Tensor, TensorSpec, convert_to_tensor
from ..variables import Variable, _variable_creator_scope
from .arguments import Binder
from .runner import GraphPlan, run_graph

__all__ = ["ConcreteFunction", "trace_concrete"]


class _TensorSlot:
    """Marks a tensor argument's place in a trace's argument template, with its spec (a class of
    its own, so a TensorSpec passed as a plain Python value is never mistaken for one)."""

    __slots__ = ("spec",)

    def __init__(self, spec):
        self.spec = spec


class _PythonOutput:
    """A non-tensor leaf of the returned structure: returned as is on every call."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class ConcreteFunction:
    """≈ `tf.types.experimental.ConcreteFunction`: a traced graph plus how to call it.

    `graph`, `inputs` (placeholders: arguments then captures), `outputs`, `structured_outputs`
    (the traced return value, symbolic), `structured_input_signature` (`(args, kwargs)` with
    TensorSpecs for the tensor arguments), `variables` (empty for now), `captured_inputs`.

    Calling checks the arguments against the signature (TypeError for another structure, a
    Python value other than the traced one, or a tensor of another dtype or an incompatible
    shape) and runs the graph. Under a GradientTape the graph's operations are replayed one by
    one through dispatch, so the tape records them and gradients flow; TensorFlow records one
    function-call op instead (a later item).
    """

    __slots__ = ("_graph", "_python_function", "_binder", "_template", "_output_structure",
                 "_output_map", "_plan", "_capture_values", "__weakref__")

    def __init__(self, graph, python_function, binder, template, output_structure, output_map):
        self._graph = graph
        self._python_function = python_function
        self._binder = binder
        self._template = template  # bound parameter values, tensor leaves as _TensorSlot
        self._output_structure = output_structure
        self._output_map = output_map  # per returned leaf: output index, or a _PythonOutput
        self._plan = GraphPlan(graph)
        self._capture_values = [value for value, _ in graph.captures]

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
        """Variables the function uses. TODO (issue 6, item 3): tracked once functions track
        variables; closed-over variables work (their handles are captures) but are not listed."""
        return ()

    trainable_variables = variables

    @property
    def structured_input_signature(self):
        """`(args, kwargs)`: positional parameters in `args`, keyword-only ones (and `**kwargs`)
        in `kwargs`; TensorSpecs stand for tensors, Python values are the traced values."""
        import inspect  # noqa: PLC0415 - only for this inspection property

        args, kwargs = [], {}
        for name, kind, value in zip(self._binder.names, self._binder.kinds, self._template):
            value = nest.map_structure(
                lambda v: v.spec if isinstance(v, _TensorSlot) else v, value)
            if kind is inspect.Parameter.VAR_POSITIONAL:
                args.extend(value)
            elif kind is inspect.Parameter.VAR_KEYWORD:
                kwargs.update(value)
            elif kind is inspect.Parameter.KEYWORD_ONLY:
                kwargs[name] = value
            else:
                args.append(value)
        return tuple(args), kwargs

    # -- calling ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        values = self._binder.bind(args, kwargs)
        return self._call_flat(self.check_arguments(values))

    def check_arguments(self, values) -> list:
        """The tensor arguments in `values` (bound parameter values), checked against the traced
        signature; Python numbers given for tensor parameters are converted to their dtype."""
        tensors = []
        for name, expected, given in zip(self._binder.names, self._template, values):
            _check(expected, given, name, tensors)
        return tensors

    def accepts(self, tensors) -> bool:
        """Whether tensors (or specs) of these shapes and dtypes fit this trace's tensor
        arguments (the rest of the cache key is known to match)."""
        slots = [s for s in nest.flatten(self._template) if isinstance(s, _TensorSlot)]
        return len(slots) == len(tensors) and all(
            _fits(t, s.spec) for s, t in zip(slots, tensors))

    def known_dims(self) -> int:
        """How many argument dimensions are known: more means a more specific trace."""
        n = 0
        for s in nest.flatten(self._template):
            if isinstance(s, _TensorSlot) and s.spec.shape.rank is not None:
                n += 1 + sum(d is not None for d in s.spec.shape.as_list())
        return n

    def tensor_specs(self) -> list:
        return [s.spec for s in nest.flatten(self._template) if isinstance(s, _TensorSlot)]

    def _call_flat(self, tensors):
        outputs = run_graph(self._graph, list(tensors) + self._capture_values, self._plan)
        if self._output_structure is None:
            return None
        flat = [outputs[m] if m.__class__ is int else m.value for m in self._output_map]
        return nest.pack_sequence_as(self._output_structure, flat)

    def __repr__(self):
        return f"<ConcreteFunction {self.name} at 0x{id(self):X}>"


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
    if isinstance(expected, _TensorSlot):
        spec = expected.spec
        if not isinstance(given, Tensor):
            try:
                given = convert_to_tensor(given, dtype=spec.dtype)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"Argument {name!r}: expected a tensor matching {spec}, got "
                                f"{given!r:.80} ({exc}).") from None
        if not _fits(given, spec):
            raise TypeError(
                f"Binding inputs to the traced function failed: argument {name!r} can not cast "
                f"{TensorSpec(given.shape, given.dtype)} to {spec} (wrong "
                f"{'dtype' if given.dtype != spec.dtype else 'shape'}).")
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
        raise TypeError(f"Argument {name!r}: the function was traced with the Python value "
                        f"{expected!r:.80}, got {given!r:.80}; Python values must match the "
                        "trace (call the Function, which retraces, instead).")


def _refuse_variable_creation(next_creator, **kwargs):
    raise NotImplementedError("creating variables inside eager.function is not supported yet")


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
                   specs_allowed=False) -> ConcreteFunction:
    """Traces `python_function` called with bound `values`, whose tensor leaves (tensors, specs,
    numpy arrays, in nest order; TensorSpecs only when `specs_allowed`, as in `describe`)
    become placeholders typed by `specs` (aligned with them)."""
    graph = Graph(name)
    specs = iter(specs)
    template = []
    symbolic_values = []
    with building(graph), _tapes_hidden(), \
            _variable_creator_scope(_refuse_variable_creation, priority=1 << 30):
        for pname, value in zip(binder.names, values):
            flat = nest.flatten(value)
            slots, symbolic = [], []
            for leaf in flat:
                if _is_tensor_leaf(leaf, specs_allowed):
                    spec = next(specs)
                    symbolic.append(graph.placeholder(spec.dtype, spec.shape, name=pname))
                    slots.append(_TensorSlot(TensorSpec(spec.shape, spec.dtype, pname)))
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
            if isinstance(leaf, Tensor):
                output_map.append(len(outputs))
                outputs.append(_as_output(graph, leaf))
            else:
                output_map.append(_PythonOutput(leaf))
    graph.outputs = outputs
    graph.structured_outputs = result
    return ConcreteFunction(graph, python_function, binder, tuple(template), result, output_map)


def _is_tensor_leaf(leaf, specs_allowed) -> bool:
    return isinstance(leaf, (Tensor, np.ndarray)) or (specs_allowed and isinstance(leaf, TensorSpec))


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
