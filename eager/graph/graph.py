"""`Graph`: the operations a traced function performed, in program order (≈ a `tf.Graph` built
by `tf.function`).

A graph is also a *tracing interpreter*: installed as the thread's interpreter (by `building`,
below), it receives every op that goes through `eager.core.dispatch.execute` and,
instead of running a kernel, adds an `Operation` and returns symbolic outputs typed by the op's
own shape inference (`OpDef.infer`), exactly the record eager execution uses. So an op is
defined once and traced for free.

Inputs an op receives while tracing:

* symbolic tensors of this graph: data edges;
* symbolic tensors of another graph (an enclosing graph being built, or a finished one): a
  ValueError. A graph does not capture another graph's symbolic values (TensorFlow lifts them
  into the inner function; here a nested `eager.function` takes them as arguments). Control-flow
  branches do capture their enclosing graphs' values: `eager.control_flow.ops.BranchGraph`;
* eager tensors made outside the trace (closed-over values): *captured*. The graph makes one
  placeholder per distinct eager tensor and remembers `(eager value, placeholder)` in
  `captures`, for a runtime to feed; the placeholders are listed in `inputs` after the
  arguments'.
* eager tensors the traced code made from Python or numpy values while this graph was being
  built (`x * 3`, `eager.constant(...)`: tensor conversion tells the graph, `constant_made`):
  part of the trace, as TensorFlow's `Const` ops are. Each becomes one `Const` op holding the
  value (`eager.graph.constant`), neither a capture nor an input.

  Either way the op's inference still sees the eager value itself, so inference that can use
  known values (it is allowed to, see `OpDef.infer_from_types`) types the output as precisely
  as eager execution.

Every op added also goes through the graph's automatic control dependencies
(`eager.graph.control_deps`): side effects get the ordering edges program order implied, and
stateful ops are listed in `control_outputs`; `finalize(outputs)` makes returned values wait on
them.
"""

from __future__ import annotations

import contextlib
import weakref

from ..core import context as _context
from ..base import user_code as _user_code
from ..base.dtypes import as_dtype
from ..ops.array_ops import IDENTITY
from ..tensor import EagerTensor
from ..core.specs import TensorSpec
from ..base.tensor_shape import as_shape
from .control_deps import AutoControlDeps, wait_for
from .constant import CONST, ConstantValue
from .dot import to_dot
from .drawing import Drawing, svg
from .picture import graph_picture
from .operation import Operation
from .placeholder import PLACEHOLDER
from .symbolic import SymbolicTensor

__all__ = ["Graph", "building"]


class Graph:
    """Ordered operations with unique names, plus the graph's inputs, outputs and captures."""

    #: Tells `eager.executing_eagerly()` (and other code reading the thread's interpreter) that
    #: ops are being traced, not run.
    is_graph = True

    #: Whether this is a function's graph (TensorFlow's `FuncGraph`: `eager.function`, control
    #: flow branches), whose tensors are unhashable; a hand-built graph's hash by identity.
    building_function = False

    def __init__(self, name="graph", *, auto_control_deps=True, embed_constants=True):
        self.name = name
        self._operations = []
        self._by_name = {}
        self._names_used = {}  # lower-cased name -> next suffix to try (TensorFlow's scheme)
        self.inputs = []  # placeholders: the function's arguments, then captures
        self.outputs = []  # symbolic tensors the function returns (set by tracing)
        self.structured_outputs = None  # the function's return value, as returned
        self.control_outputs = []  # operations that must run although nothing uses them
        # Orders stateful ops and fills control_outputs. Off for graphs meant to show what an
        # unordered TF1-style graph may do (the semantics explorer's examples): then only the
        # edges the builder adds exist, and nothing is must-run.
        self._auto_deps = AutoControlDeps() if auto_control_deps else None
        self._captures = {}  # id(eager tensor) -> (eager tensor, placeholder)
        self._captured_by = {}  # id(placeholder) -> the eager tensor it stands for
        # Constants the traced code made (`constant_made`), until used: weak, so a temporary
        # that no op uses is not kept, and a dead one's id cannot be mistaken for a new tensor.
        # A graph made to be taken apart (a function's gradient derivation) captures them all.
        self._made_here = weakref.WeakValueDictionary() if embed_constants else None
        self._constants = {}  # id(made constant) -> (the constant, its Const op's output)
        self._copy_source = None  # (graph, {id(its tensor): copy here}): see `holds_copies_of`
        self._control_stack = []  # lists of Operations from control_dependencies scopes

    # -- reading -----------------------------------------------------------------------------
    def get_operations(self) -> list:
        """The operations in the order they were added (a topological order)."""
        return list(self._operations)

    def get_operation_by_name(self, name: str) -> Operation:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"The name {name!r} refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name: str) -> SymbolicTensor:
        """The tensor "opname:index" (TensorFlow's tensor naming)."""
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(f"The name {name!r} looks like an operation name, not a tensor name "
                             "(tensor names look like '<op_name>:<output_index>').")
        op = self.get_operation_by_name(op_name)
        i = int(index)
        if i >= len(op.outputs):
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist: "
                           f"operation {op_name!r} has {len(op.outputs)} outputs.")
        return op.outputs[i]

    @property
    def captures(self) -> list:
        """`(eager tensor, placeholder)` pairs, in capture order: what a runtime must feed."""
        return list(self._captures.values())

    @property
    def operations_count(self) -> int:
        return len(self._operations)

    # -- building ----------------------------------------------------------------------------
    def unique_name(self, name: str) -> str:
        """`name` under the thread's name scope, made unique TensorFlow's way: "add", then
        "add_1", "add_2", ... (compared case-insensitively, as TensorFlow does)."""
        scope = _context.thread_state().name_scope
        if scope and not name.startswith(scope):
            name = scope + name
        key = name.lower()
        i = self._names_used.get(key, 0)
        candidate = name
        if i:
            candidate = f"{name}_{i}"
        while candidate.lower() in self._names_used:
            i += 1
            candidate = f"{name}_{i}"
        self._names_used[key] = i + 1
        if candidate.lower() != key:
            self._names_used[candidate.lower()] = 1
        return candidate

    def add_op(self, op_def, inputs, attrs, control_inputs=(), name=None,
               specs=None) -> Operation:
        """Adds `op_def` applied to `inputs` (symbolic tensors of this graph, or eager tensors,
        which are captured) and returns the new Operation, its outputs typed by `op_def.infer`
        (or by `specs` when the caller already inferred them).

        Nothing is added when the op fails (a foreign input, an inference error): inputs are
        checked and the op inferred before any capture placeholder is made."""
        inputs = tuple(self._checked_input(t, op_def) for t in inputs)
        if specs is None:
            # Inference sees captured eager values as they are (see the module doc).
            specs = op_def.infer(*inputs, **attrs)
        inputs = tuple(t if t.__class__ is SymbolicTensor else self.capture(t) for t in inputs)
        op = Operation(self, op_def, self.unique_name(name or op_def.name), inputs, attrs,
                       _requested_device())
        if isinstance(specs, TensorSpec):
            specs = (specs,)
        op._outputs = tuple(SymbolicTensor(op, i, s.shape, s.dtype) for i, s in enumerate(specs))
        op._source = _user_code.user_point(0)
        for deps in self._control_stack:
            op._add_control_inputs(deps)
        op._add_control_inputs(control_inputs)
        if self._auto_deps is not None:
            self._auto_deps.track(op)
        self._operations.append(op)
        self._by_name[op.name] = op
        return op

    def finalize(self, outputs) -> list:
        """The tensors to return instead of `outputs` so that returning them waits for every
        op that must run (`control_outputs`: prints, assigns, random draws nobody consumes).

        Each distinct output gets an `Identity` with control inputs on all must-run ops, as
        TensorFlow's function returns do; a runtime that runs only what the outputs need (a
        pruning or parallel executor) then still runs every side effect before returning.
        Without must-run ops `outputs` come back unchanged. The caller stores the result in
        `graph.outputs`."""
        outputs = list(outputs)
        if not self.control_outputs:
            return outputs
        must_run = list(self.control_outputs)
        made = {}  # id(output) -> its Identity's output
        result = []
        with self._graph_level():  # returns are graph-level, like captures
            for t in outputs:
                out = made.get(id(t))
                if out is None:
                    op = self.add_op(IDENTITY, (t,), {})
                    op._source = (None, 0)  # the runtime's, not a line of user code
                    for dep in must_run:
                        wait_for(op, dep)
                    out = made[id(t)] = op.outputs[0]
                result.append(out)
        return result

    @contextlib.contextmanager
    def _graph_level(self):
        """Adds ops that belong to the graph, not to where the user's code stands: outside any
        name scope and any `control_dependencies` scope (those order the user's ops)."""
        st = _context.thread_state()
        saved_scope, st.name_scope = st.name_scope, ""
        saved_stack, self._control_stack = self._control_stack, []
        try:
            yield
        finally:
            st.name_scope = saved_scope
            self._control_stack = saved_stack

    def execute(self, op_def, inputs, attrs):
        """The interpreter hook dispatch calls while this graph is being built: adds a node and
        returns its outputs the way eager execution would (one tensor for single-output ops,
        a tuple otherwise)."""
        op = self.add_op(op_def, inputs, attrs)
        outputs = op._outputs
        if op_def.num_outputs == 1 and len(outputs) == 1:
            return outputs[0]
        return outputs

    def name_output(self, result, name) -> None:
        """Names the op that produced `result` `name` (made unique under the current name
        scope), TensorFlow's `name=` argument of an op function (see `dispatch.named`). Only the
        op just added is renamed: a function that returned an existing tensor (an identity
        conversion, a capture) made no op to name, and names never change after later ops may
        have referred to them."""
        t = result[0] if isinstance(result, tuple) and result else result
        if t.__class__ is not SymbolicTensor or t._op._graph is not self:
            return
        op = t._op
        if not self._operations or self._operations[-1] is not op or op.op_def is PLACEHOLDER:
            return
        del self._by_name[op._name]
        scope = _context.thread_state().name_scope
        wanted = name if not scope or name.startswith(scope) else scope + name
        # `Neg` named "neg": the op's own provisional name holds that (case-insensitive) key.
        op._name = wanted if wanted.lower() == op._name.lower() else self.unique_name(name)
        self._by_name[op._name] = op

    def placeholder(self, dtype, shape=None, name=None) -> SymbolicTensor:
        """Adds a graph input of `dtype` and `shape` (None dims / None rank allowed); it is
        appended to `inputs`."""
        attrs = {"dtype": as_dtype(dtype), "shape": as_shape(shape)}
        t = self.add_op(PLACEHOLDER, (), attrs, name=name or "Placeholder").outputs[0]
        self.inputs.append(t)
        return t

    def constant_made(self, tensor) -> None:
        """Tensor conversion's report that the code being traced made eager `tensor` from a
        Python or numpy value: used by an op of this graph, it is a `Const` of the graph (see
        the module doc). Called for every such constant while this graph is the interpreter."""
        if self._made_here is not None:
            self._made_here[id(tensor)] = tensor

    def capture(self, tensor, name="capture") -> SymbolicTensor:
        """The symbolic tensor standing for eager `tensor` in this graph (made on first use; the
        same tensor always gives the same one): a capture placeholder (named `name`, made
        unique), or the output of a `Const` op for a constant the traced code made."""
        key = id(tensor)
        entry = self._captures.get(key)
        if entry is not None:
            return entry[1]
        if self._made_here is not None and self._made_here.get(key) is tensor:
            return self._constant(tensor)
        # Captures are graph-level inputs: a control_dependencies scope orders the op that uses
        # the capture, not the capture itself (a runtime feeds captures, it never runs them).
        with self._graph_level():
            placeholder = self.placeholder(tensor.dtype, tensor.shape, name=name)
        # The eager tensor is kept alive with its placeholder, so its id is never reused.
        self._captures[key] = (tensor, placeholder)
        self._captured_by[id(placeholder)] = tensor
        return placeholder

    def _constant(self, tensor) -> SymbolicTensor:
        entry = self._constants.get(id(tensor))
        if entry is not None:
            return entry[1]
        value = ConstantValue(tensor)
        with self._graph_level():  # a value of the graph, like a capture
            out = self.add_op(CONST, (), {"value": value}, name="Const").outputs[0]
        # The tensor is kept with its Const, so its id is never reused while it is a key.
        self._constants[id(tensor)] = (tensor, out)
        return out

    def holds_copies_of(self, source, copies) -> None:
        """Declares that this graph copies `source`'s operations: `copies` maps id(a tensor of
        `source`) to its copy here (filled as the copying goes). A tensor of `source` used as an
        input here then stands for its copy: what a function's derivation graph needs when a
        custom gradient's `grad_fn`, which closes over the function graph's tensors, runs in
        it."""
        self._copy_source = (source, copies)

    @property
    def copy_source(self):
        """The graph whose operations this one copies (`holds_copies_of`), or None."""
        return None if self._copy_source is None else self._copy_source[0]

    def captured_value(self, placeholder):
        """The eager tensor a capture placeholder of this graph stands for; None for any other
        tensor (an argument's placeholder, an op's output)."""
        return self._captured_by.get(id(placeholder))

    def _checked_input(self, t, op_def):
        """`t` as this graph can use it: a symbolic tensor of this graph, or an EagerTensor (to
        capture). Pending (async) tensors are waited for; foreign symbolic tensors raise."""
        if isinstance(t, SymbolicTensor):
            if t._op._graph is not self:
                copied = self._copy_source
                if copied is not None and t._op._graph is copied[0] and id(t) in copied[1]:
                    return self._checked_input(copied[1][id(t)], op_def)
                if t._op._graph.building_function:  # a tensor leaked out of a function trace
                    raise TypeError(
                        f"{t!r} is out of scope and cannot be used here. Use return values, "
                        "explicit Python locals or TensorFlow collections to access it. "
                        f"({op_def.name}: it belongs to the trace of {t.graph!r}, not to the "
                        f"graph being built ({self!r}); pass it in as an argument.)")
                raise ValueError(
                    f"{op_def.name}: input {t.name} belongs to another graph ({t.graph!r}), not "
                    f"to the graph being built ({self!r}). A tensor from an enclosing or finished "
                    "trace cannot be used here; pass it in as an argument.")
            return t
        if t.__class__ is EagerTensor:
            return t
        resolve = getattr(t, "_resolve", None)  # a pending (async) tensor: its value
        if resolve is not None:
            return resolve()
        raise TypeError(f"{op_def.name}: expected tensor inputs, got {type(t).__name__}.")

    def as_default(self):
        """`with graph.as_default():` builds this graph in this thread (see `building`)."""
        return building(self)

    def control_dependencies(self, control_inputs):
        """Context manager: operations added inside get `control_inputs` (Operations, or
        symbolic tensors meaning their ops) as control inputs (≈ `Graph.control_dependencies`).
        """
        return _ControlDependencies(self, control_inputs)

    def to_dot(self) -> str:
        """Graphviz text of this graph (`eager.graph.dot`)."""
        return to_dot(self)

    def picture(self, expand=None):
        """What a drawing of this graph shows (`eager.graph.picture`: live ops, variables by
        name; `expand` opens control-flow boxes: None (all unless large), True, False, or op
        names)."""
        return graph_picture(self, expand)

    def to_svg(self, engine="auto", expand=None) -> str:
        """This graph drawn as SVG text: by eager's own layout (`engine="builtin"`), by
        Graphviz's `dot` (`"graphviz"`: a clear RuntimeError without it), or by Graphviz when it
        is installed, else the builtin layout (`"auto"`). `expand` as in `picture`."""
        return svg(graph_picture(self, expand), engine)

    def draw(self, expand=None, engine="auto") -> Drawing:
        """This graph's picture drawn for a notebook (`eager.graph.drawing.Drawing`): collapsed
        control flow opens with `expand=["op name"]` or `expand=True`."""
        return Drawing(graph_picture(self, expand), engine, repr(self))

    def _repr_svg_(self):
        return self.draw().svg

    def _repr_mimebundle_(self, include=None, exclude=None):
        return self.draw()._repr_mimebundle_(include, exclude)

    def __repr__(self):
        return f"<eager.Graph {self.name!r} with {len(self._operations)} operations>"


class building:  # noqa: N801 - used as a context manager, like eager.device
    """Installs `graph` as this thread's interpreter while inside (restoring the previous one,
    which may be another graph or an async executor, on exit); `graph.as_default()` returns one.

    Every op dispatched in this thread then adds a node to `graph`; other threads keep running
    eagerly, because the interpreter is per-thread state. A slow-path reason
    (`eager.core.context.enter_slow_path`) is held while open: the `EagerTensor` operators' fast
    path computes without calling dispatch, and with it a `captured + 1` inside a trace would run
    eagerly instead of being traced. Scopes nest: an inner graph is built while it is open and
    the outer one is restored afterwards; the inner graph does not capture the outer graph's
    symbolic tensors (using one raises ValueError, see `Graph`).

    It lives beside `Graph` because installing a graph is what makes it an interpreter (the
    module doc), and `Graph.as_default` needs it; `eager.graph.tracing` builds on it.
    """

    __slots__ = ("_graph", "_saved", "_state")

    def __init__(self, graph):
        if not isinstance(graph, Graph):
            raise TypeError(f"building() needs a Graph, got {type(graph).__name__}.")
        self._graph = graph
        self._saved = None
        self._state = None

    def __enter__(self):
        st = _context.thread_state()
        self._state = st
        self._saved = st.interpreter
        _context.enter_slow_path()
        st.interpreter = self._graph
        return self._graph

    def __exit__(self, *exc):
        st = self._state
        st.interpreter = self._saved
        self._saved = self._state = None
        _context.leave_slow_path()
        return False


class _ControlDependencies:
    __slots__ = ("_graph", "_ops")

    def __init__(self, graph, control_inputs):
        ops = []
        for c in control_inputs:
            op = c.op if isinstance(c, SymbolicTensor) else c
            if not isinstance(op, Operation):
                raise TypeError(f"Control dependencies must be Operations or symbolic tensors, "
                                f"got {type(c).__name__}.")
            if op.graph is not graph:
                raise ValueError(f"Control dependency {op.name!r} is from another graph.")
            ops.append(op)
        self._graph = graph
        self._ops = ops

    def __enter__(self):
        self._graph._control_stack.append(self._ops)
        return self

    def __exit__(self, *exc):
        self._graph._control_stack.pop()
        return False


def _requested_device() -> str:
    """The device the thread's device scope asks for ("" outside any scope)."""
    spec = _context.current_device_spec()
    return spec.to_string() if spec is not None else ""
