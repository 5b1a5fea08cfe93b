"""Traced control flow: branch sub-graphs and the `If` / `Case` / `While` operations.

A branch (or a loop's cond/body) is traced into a `BranchGraph`: a Graph that, unlike the plain
one, accepts symbolic tensors of the graphs enclosing it. Each such tensor (and each eager tensor
it closes over, such as a variable's handle) becomes one of the branch graph's capture
placeholders; `captures` lists `(outer value, placeholder)` in order. The control-flow operation
added to the outer graph then takes those outer values as inputs, so the outer graph sees
ordinary data edges (and, for nested control flow, the enclosing branch graph captures them in
turn).

Each control-flow operation gets its own `OpDef` (not registered), because what TensorFlow
decides per node (`If` vs `StatelessIf`, which resources it touches) depends on the branches:
it is `stateful` (branches may assign, print, draw random numbers: automatic control
dependencies must order it and keep it even if nothing consumes it) and lists every resource
input as written, so per-resource ordering treats it like any op that may assign a variable.

The kernels run on the CPU (`device_types`): a kernel receives raw arrays, but a sub-graph
runs on tensors, and an accelerator's kernel may run on a stream worker where dispatching more
ops is not allowed. The ops inside a branch are still placed as when they were traced. The
kernel wraps its CPU arrays as CPU tensors (an input living elsewhere arrives as its tensor:
`OpDef.keeps_input_devices`), runs the selected graph with `run_graph` (tapes set aside), and
returns each output as its sub-graph left it: a CPU array, or a tensor of the device it lives
on (`OpDef.returns_tensors`), so a loop on a GPU is never copied to the host when it ends.

Gradients, two paths:

* Eager tapes: each OpDef's `replay(inputs, attrs)` runs the op as eager control flow would: it
  reads the predicate, index or loop condition on the host and replays only the taken branch's
  (or each iteration's) ops through dispatch (`graph_runner.replay_graph`). The graph runner does
  that when it replays a call for a tape (not while tracing an outer graph), so tapes see the
  ops actually run, exactly as if the code ran eagerly. Function calls replay only when their
  gradient cannot be derived: among other cases, control flow reading variables (its rule
  recomputes the branch later, when the variables may have changed; see
  `eager.functions.function_gradient`).
* A tape that records the op *as one op* (a tape active while a graph is traced, or any caller
  that emits the op whole under a tape): the OpDef's `gradient`, written with ops in
  `eager.control_flow.control_flow_grad` (registered on every OpDef `_make_op` makes). It builds an
  `If`/`Case`/`While` of gradient graphs; see that module.

While accumulators. A `While` gradient needs each iteration's loop variables. When the op is
made while a tape follows one of its inputs (`followed_by_tape`), it is made *accumulating*
(`WhileBody.accumulate`): its kernel pushes, before each iteration, every loop variable the body
reads onto a TensorList (a list of the device those values live on: `_accumulated`), and the
op has extra outputs after the loop variables: the iteration count (int32, on the CPU) and
those lists. `while_loop` returns only the user's loop variables. Without a
recording tape nothing is accumulated, so loops that nobody differentiates pay nothing.
"""

from __future__ import annotations

import numpy as np

from ..core import context as _context
from ..core import dispatch
from ..devices import registry as _devices
from ..devices.base import transfer
from ..base.dtypes import int32 as _int32, resource as _resource, variant as _variant
from ..base.errors import InvalidArgumentError
from ..runtime.executable import build
from ..runtime.graph_runner import GraphPlan, replay_graph, run_graph
from ..runtime.passes import optimize
from ..runtime.program import Program
from ..graph import Graph, SymbolicTensor, building
from ..ops import list_ops as _list_ops
from ..ops.list_ops import TensorList
from ..core.registry import OpDef
from ..tensor import EagerTensor, wrap_value
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..base.tensor_shape import TensorShape

__all__ = ["BranchGraph", "trace_branch", "add_case_op", "add_while_op", "emit_while",
           "followed_by_tape", "CaseBody", "WhileBody", "set_gradient_function",
           "restored_case_body", "restored_while_body", "control_flow_op_def"]

#: The gradient function of each control-flow op ("If", "Case", "While"). The rules build these
#: ops, so they live in `control_flow_grad`, a module above this one that fills this table when
#: the package imports it; each OpDef `_make_op` makes takes its rule from here.
_GRADIENT_FUNCTIONS: dict = {}


def set_gradient_function(op_name, fn):
    """Makes `fn` the gradient function of every control-flow op named `op_name` made from now
    on."""
    _GRADIENT_FUNCTIONS[op_name] = fn


class BranchGraph(Graph):
    """A sub-graph traced inside `outer` (a Graph, possibly another BranchGraph) that captures
    the enclosing graphs' symbolic tensors as placeholders, like eager tensors."""

    building_function = True  # a branch is a function (TensorFlow: a FuncGraph)

    def __init__(self, name, outer, auto_control_deps=True):
        super().__init__(name, auto_control_deps=auto_control_deps)
        self.outer = outer
        self.plan = None  # GraphPlan, once finished

    def _encloses(self, graph) -> bool:
        g = self.outer
        while g is not None:
            if g is graph:
                return True
            g = getattr(g, "outer", None)
        return False

    def _checked_input(self, t, op_def):
        if isinstance(t, SymbolicTensor) and t._op._graph is not self and \
                self._encloses(t._op._graph):
            return self.capture(t)
        return super()._checked_input(t, op_def)


def trace_branch(fn, outer, name, args=(), arg_specs=()):
    """Traces `fn(*args)` into a new BranchGraph of `outer`. `arg_specs` (flat TensorSpecs)
    become the first placeholders and `args(placeholders)` builds the call's arguments. Returns
    `(graph, result)`: the Python return value, its tensors not yet made outputs."""
    graph = BranchGraph(name, outer)
    with building(graph):
        placeholders = [graph.placeholder(s.dtype, s.shape, name=f"loop_var_{i}")
                        for i, s in enumerate(arg_specs)]
        result = fn(*args(placeholders)) if arg_specs else fn()
    return graph, result


def finish_branch(graph, flat_tensors):
    """Makes `flat_tensors` (tensors of `graph` or of enclosing graphs, or eager) the outputs of
    `graph` and compiles its plan."""
    with building(graph):
        outs = []
        for t in flat_tensors:
            if isinstance(t, SymbolicTensor):
                if t._op._graph is not graph:
                    t = graph._checked_input(t, _OUTPUT)
            else:
                t = graph.capture(t)
            outs.append(t)
        graph.outputs = graph.finalize(outs)
    graph.plan = GraphPlan(graph)


class _Output:
    name = "return value"


_OUTPUT = _Output()


def merge_captures(graphs):
    """The outer values every graph in `graphs` captures, deduplicated in first-use order, and
    for each graph the positions of its captures in that list."""
    outer, index_of, per_graph = [], {}, []
    for g in graphs:
        positions = []
        for value, _ in g.captures:
            i = index_of.get(id(value))
            if i is None:
                i = index_of[id(value)] = len(outer)
                outer.append(value)
            positions.append(i)
        per_graph.append(tuple(positions))
    return outer, per_graph


def _make_op(name, kernel, infer, replay, inputs, keep_outputs=()) -> OpDef:
    """A fresh OpDef for one control-flow op, with its replay and its gradient function (kept:
    every input, and `keep_outputs`, an accumulating While's count and lists)."""
    writes = tuple(i for i, t in enumerate(inputs) if t.dtype is _resource)
    op = OpDef(name, kernel, infer, stateful=True, resource_writes=writes, num_outputs=None,
               device_types=frozenset({"CPU"}))
    op.replay = replay
    op.keeps_input_devices = True  # (see `_wrap`)
    op.returns_tensors = True  # (see `_output`)
    op.def_gradient(_GRADIENT_FUNCTIONS[name], keep_inputs=True, keep_outputs=keep_outputs)
    return op


def followed_by_tape(inputs) -> bool:
    """Whether a tape active on this thread follows one of `inputs`: it would record an op made
    from them (and may ask for its gradient)."""
    tapes = _context.thread_state().tapes
    if not tapes:
        return False
    for t in inputs:
        tid = getattr(t, "_tape_id", 0)
        if tid:
            for tape in tapes:
                if tid in tape.ids:
                    return True
    return False


# -- running sub-graphs from a kernel --------------------------------------------------------------
def _cpu():
    return _devices.lookup("CPU:0")


def _wrap(value, dtype, device):
    """A feed of a sub-graph: a kernel input as a tensor. An input living on another device
    than the kernel's (the CPU) arrives as its tensor (`OpDef.keeps_input_devices`) and is fed
    as it is: the sub-graph's ops take it where it lives, so a loop on a GPU neither copies its
    loop variables and captured weights to the host nor back at every iteration. A resource
    handle is a tensor of its resource's device, where ops on it are placed, as for any
    handle."""
    if value.__class__ is EagerTensor:
        return value
    return wrap_value(value, value.device if dtype is _resource else device, dtype)


def _host(t, cpu):
    device = t._meta.device
    return t._value if device is cpu else transfer(t._value, device, cpu)


def _host_value(value, cpu):
    """A kernel input's host value (an input kept on its device arrives as its tensor)."""
    return _host(value, cpu) if value.__class__ is EagerTensor else value


def _output(t, cpu):
    """What a control-flow kernel returns for `t`, one of its sub-graph's results: its array
    when it lives on the kernel's device (the CPU), else the tensor itself, an output on its
    own device (`OpDef.returns_tensors`). Why: a loop or branch on a GPU leaves its results
    there; copying them to the host made the host wait for the device once per loop, and the
    ops using them copied them back."""
    return t._value if t._meta.device is cpu else t


def _run(graph, feeds):
    """`graph` run on `feeds` with this thread's tapes set aside (the control-flow op is what
    they see) and its interpreter too: a kernel computes its outputs now, even on a thread
    that dispatches asynchronously (a program run on the caller's thread). From its second
    run on, the graph runs as a compiled program (`_compiled`), else op by op (`run_graph`)."""
    st = _context.thread_state()
    tapes, interpreter = st.tapes, st.interpreter
    st.tapes, st.interpreter = [], None
    try:
        program = _compiled(graph)
        if program is not None:
            return program(feeds, st)
        return run_graph(graph, feeds, graph.plan)
    finally:
        st.tapes, st.interpreter = tapes, interpreter


def _compiled(graph):
    """The compiled program of a branch or loop graph (`eager.runtime.executable.build`: every
    input fed, optimised, compiled), made on the graph's second run, or None before. Why: a
    loop runs its condition and body once per iteration, and op by op each op pays placement
    and dispatch; the compiled program calls the kernels directly (on a GPU, in one entry of
    its stream). The first run goes op by op, as a function's first call does, so a branch
    taken once never pays the compilation."""
    program = graph.__dict__.get("_compiled_program")
    if program is None:
        runs = graph.__dict__.get("_uncompiled_runs", 0)
        if runs < 1:
            graph._uncompiled_runs = runs + 1
            return None
        program = graph._compiled_program = build(optimize(Program.from_graph(graph)))
    return program


class CaseBody:
    """The attribute of an `If`/`Case` op: its branch graphs, which of the op's capture inputs
    each branch takes, and the op's output types. Hashed by identity (graphs are)."""

    __slots__ = ("branches", "positions", "specs", "is_if")

    def __init__(self, branches, positions, specs, is_if):
        self.branches = branches
        self.positions = positions
        self.specs = specs
        self.is_if = is_if

    def select(self, value) -> int:
        if self.is_if:
            return 1 if bool(value) else 0
        i = int(value)
        n = len(self.branches)
        return i if 0 <= i < n else n - 1  # out of range: the default (last) branch


def _case_kernel(xp, selector, *arrays, body):
    cpu = _cpu()
    k = body.select(_host_value(selector, cpu))
    graph = body.branches[k]
    feeds = [_wrap(arrays[j], p.dtype, cpu)
             for j, (_, p) in zip(body.positions[k], graph.captures)]
    return tuple(_output(t, cpu) for t in _run(graph, feeds))


def _case_replay(inputs, attrs):
    """`If`/`Case` as eager control flow: read the selector, replay the chosen branch's ops on
    the op's inputs (module doc)."""
    body = attrs["body"]
    k = body.select(inputs[0])
    graph = body.branches[k]
    extra = inputs[1:]
    return tuple(replay_graph(graph, [extra[j] for j in body.positions[k]], graph.plan))


def _case_infer(*inputs, body):
    return tuple(body.specs)


def add_case_op(name, selector, branches, flat_outputs):
    """Adds an `If` (two branches, false first; `selector` a bool scalar) or `Case` op (`selector`
    an int32 scalar) to the graph being built; returns its outputs. `flat_outputs` are each
    branch's flat output tensors (already checked to agree in number and dtype)."""
    for g, outs in zip(branches, flat_outputs):
        finish_branch(g, outs)
    outer, positions = merge_captures(branches)
    body = CaseBody(tuple(branches), positions, _case_specs(branches), name == "If")
    inputs = (selector, *outer)
    op = _make_op(name, _case_kernel, _case_infer, _case_replay, inputs)
    return dispatch.execute(op, inputs, {"body": body})


def _case_specs(branches) -> tuple:
    """The output specs of an If/Case over `branches`: each output's dtype, and the most
    specific shape every branch's output is compatible with."""
    specs = []
    for i, t in enumerate(branches[0].outputs):
        shape = t.shape
        for g in branches[1:]:
            shape = _most_specific_compatible(shape, g.outputs[i].shape)
        specs.append(TensorSpec(shape, t.dtype))
    return tuple(specs)


def _most_specific_compatible(a, b) -> TensorShape:
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


# -- While -----------------------------------------------------------------------------------
#: Where a gradient loop's counter lives, and where replaying accumulates values a GPU holds in
#: host memory (`_replay_list_device`): the host. Other accumulated values' lists live where
#: the values do (`_accumulated`), and the gradient reads each list where it lives
#: (`control_flow_grad._read`).
ACCUMULATOR_DEVICE = "CPU:0"
_COUNT_SPEC = TensorSpec((), _int32)
_LIST_SPEC = TensorSpec((), _variant)


class WhileBody:
    """The attribute of a `While` op: cond and body graphs, the number of loop variables, whether
    a maximum-iterations input follows them, each graph's capture positions, the loop variables'
    specs, and `accumulate`: None, or the indices of the loop variables pushed onto TensorLists
    before each iteration (the op then also outputs the iteration count and those lists; module
    doc). Hashed by identity."""

    __slots__ = ("cond", "body", "num_vars", "has_max", "positions", "specs", "accumulate",
                 "unaccumulated", "output_specs", "fixed_shapes", "_accumulating")

    def __init__(self, cond, body, num_vars, has_max, positions, specs, accumulate=None):
        self.cond = cond
        self.body = body
        self.num_vars = num_vars
        self.has_max = has_max
        self.positions = positions
        self.specs = specs
        self.accumulate = accumulate
        # Loop variables the body reads that no TensorList can hold (resources): the gradient
        # cannot recompute the body without them (it says so). A TensorList loop variable (a
        # TensorArray's flow) is pushed like an array: a list of lists.
        self.unaccumulated = ()
        self.output_specs = specs if accumulate is None else \
            specs + (_COUNT_SPEC,) + (_LIST_SPEC,) * len(accumulate)
        # Each loop variable's shape as a tuple where its invariant fixes every dimension (the
        # kernel's per-iteration check is then one tuple comparison), else None.
        self.fixed_shapes = tuple(tuple(s.shape.as_list()) if s.shape.is_fully_defined()
                                  else None for s in specs)
        self._accumulating = None

    def accumulating(self) -> "WhileBody":
        """This loop with accumulators (itself when it has them; made once)."""
        if self.accumulate is not None:
            return self
        if self._accumulating is None:
            read, returned = _used_inputs(self.body, self.num_vars)
            pushable = tuple(j for j in sorted(read | returned)
                             if self.specs[j].dtype.is_numpy_compatible
                             or self.specs[j].dtype is _variant)
            made = WhileBody(self.cond, self.body, self.num_vars, self.has_max, self.positions,
                             self.specs, pushable)
            # A list or handle the body only returns as it is needs no value to recompute.
            made.unaccumulated = tuple(j for j in sorted(read) if j not in pushable)
            self._accumulating = made
        return self._accumulating


def _used_inputs(graph, n):
    """Indices of the first `n` inputs of `graph` that an op reads, and of those returned as
    they are (two sets). Returned ones are pushed too when they can be (the arrays are shared,
    so pushing costs a pointer per iteration); their gradient then needs no special case."""
    placeholders = {id(p): j for j, p in enumerate(graph.inputs[:n])}
    read = {placeholders[id(t)] for op in graph.get_operations() for t in op.inputs
            if id(t) in placeholders}
    returned = {placeholders[id(t)] for t in graph.outputs if id(t) in placeholders}
    return read, returned


def _while_kernel(xp, *arrays, body):
    cpu = _cpu()
    n = body.num_vars
    values = initial = [_wrap(a, s.dtype, cpu) for a, s in zip(arrays[:n], body.specs)]
    limit = None
    if body.has_max:
        limit = int(_host_value(arrays[n], cpu))
        n += 1
    extra = arrays[n:]

    def captured(graph, positions):
        return [_wrap(extra[j], p.dtype, cpu) for j, (_, p) in zip(positions, graph.captures)]

    cond_extra = captured(body.cond, body.positions[0])
    body_extra = captured(body.body, body.positions[1])
    acc = body.accumulate
    stores = [] if acc is None else [[] for _ in acc]
    i = 0
    while limit is None or i < limit:
        (keep,) = _run(body.cond, values + cond_extra)
        if not bool(_host(keep, cpu)):
            break
        for store, j in zip(stores, acc or ()):
            store.append(values[j])  # the tensor (immutable): see `_accumulated`
        values = _run(body.body, values + body_extra)
        for t, fixed in zip(values, body.fixed_shapes):
            if fixed is None or t._value.shape != fixed:
                _check_invariants(values, body.specs, i)
                break
        i += 1
    outputs = tuple(_output(t, cpu) for t in values)
    if acc is None:
        return outputs
    lists = tuple(_accumulated(store, initial[j], body.specs[j], cpu)
                  for store, j in zip(stores, acc))
    return outputs + (np.asarray(i, np.int32),) + lists


def _accumulated(store, initial, spec, cpu):
    """The TensorList of one accumulated loop variable (its value before each iteration, in
    `store`), as an output of the device those values live on (`_output`): on a GPU the list
    holds the device's arrays, and the gradient loop reads each element there
    (`control_flow_grad._read`), so nothing crosses to the host and back. Small int32 values
    a GPU holds in host memory (a counter) stay host arrays, as their tensors do. Values on
    several devices (rare: a loop variable whose first value was placed elsewhere) are copied
    to the last one's device, where the body ran; a loop that ran no iteration gives an empty
    list on its initial value's device."""
    device = (store[-1] if store else initial)._meta.device
    items = [t._value if t._meta.device is device else
             transfer(t._value, t._meta.device, device) for t in store]
    if device is not cpu and not device.inline:
        in_host_memory = [v.__class__ is np.ndarray for v in items]
        if any(in_host_memory) and not all(in_host_memory):
            items = [device.in_device_memory(v) if h else v
                     for v, h in zip(items, in_host_memory)]
    if spec.dtype is _variant:
        items = [_list_ops.as_list(v) for v in items]
    made = TensorList(items, len(items), spec.dtype, spec.shape)
    return made if device is cpu else wrap_value(made, device, _variant)


def _check_invariants(values, specs, i):
    for t, s in zip(values, specs):
        if not s.shape.is_compatible_with(t.shape):
            raise InvalidArgumentError(
                None, "While", f"While: a loop variable has shape {tuple(t.shape)} after "
                f"{i + 1} iterations, not compatible with its shape invariant {s.shape} "
                "[Op:While]")


def _while_replay(inputs, attrs):
    """`While` as an eager Python loop: replay the cond graph, read its bool, replay the body
    graph on the loop variables, at most `maximum_iterations` times (module doc). An
    accumulating loop pushes through dispatch too, so a tape also sees how the lists depend on
    the loop variables (a gradient graph in the same function reads them)."""
    body = attrs["body"]
    n = body.num_vars
    values = list(inputs[:n])
    limit = None
    if body.has_max:
        limit = int(inputs[n])
        n += 1
    extra = inputs[n:]
    cond_extra = [extra[j] for j in body.positions[0]]
    body_extra = [extra[j] for j in body.positions[1]]
    acc = body.accumulate
    lists, where = [], []
    if acc is not None:
        where = [_replay_list_device(values[j]) for j in acc]
        for j, device in zip(acc, where):
            with _context.device(device):
                lists.append(_list_ops.empty_tensor_list(body.specs[j].shape,
                                                         body.specs[j].dtype))
    i = 0
    while limit is None or i < limit:
        (keep,) = replay_graph(body.cond, values + cond_extra, body.cond.plan)
        if not bool(keep):
            break
        for k, j in enumerate(acc or ()):
            with _context.device(where[k]):
                lists[k] = _list_ops.tensor_list_push_back(lists[k], values[j])
        values = replay_graph(body.body, values + body_extra, body.body.plan)
        _check_invariants(values, body.specs, i)
        i += 1
    if acc is None:
        return tuple(values)
    return (*values, convert_to_tensor(np.asarray(i, np.int32)), *lists)


def _replay_list_device(value) -> str:
    """Where replaying keeps the accumulated values of a loop variable starting at `value`:
    on its device, so that pushing a GPU's value copies nothing (the gradient reads the list
    where it lives: `control_flow_grad._read`), except that a value a GPU holds in host memory
    (a small int32 counter) goes on the host's list, which a read takes as it is."""
    if value.__class__ is not EagerTensor:
        return ACCUMULATOR_DEVICE
    device = value._meta.device
    if not device.inline and value._value.__class__ is np.ndarray:
        return ACCUMULATOR_DEVICE
    return device.name


def _while_infer(*inputs, body):
    return body.output_specs


def add_while_op(cond_graph, body_graph, flat_vars, max_iterations, cond_out, body_outs):
    """Adds a `While` op looping `body_graph` while `cond_graph` gives True (and fewer than
    `max_iterations` iterations ran, when given); returns the final loop variables (only those:
    an accumulating op's extra outputs are for its gradient). The loop variables' types are the
    graphs' first placeholders'."""
    finish_branch(cond_graph, [cond_out])
    finish_branch(body_graph, body_outs)
    n = len(flat_vars)
    specs = tuple(TensorSpec(p.shape, p.dtype) for p in body_graph.inputs[:n])
    outer, positions = merge_captures([cond_graph, body_graph])
    # Loop-var placeholders come first in each graph's inputs; captures (not loop vars) follow.
    body = WhileBody(cond_graph, body_graph, n, max_iterations is not None, positions, specs)
    inputs = tuple(flat_vars) + ((max_iterations,) if max_iterations is not None else ()) + \
        tuple(outer)
    return emit_while(body, inputs)[:n]


def emit_while(body, inputs, accumulate=None) -> tuple:
    """Adds (or, eagerly, runs) a `While` op with `body`'s graphs on `inputs` (loop variables,
    the maximum-iterations tensor when `body.has_max`, the captures); returns all its outputs.

    The op accumulates (module doc) when `body` already does (a gradient built beside it may
    read its lists), when `accumulate` is True, or, when it is None, when a tape follows an
    input (`followed_by_tape`)."""
    if accumulate is None:
        accumulate = followed_by_tape(inputs)
    if accumulate or body.accumulate is not None:
        body = body.accumulating()
    out = dispatch.execute(control_flow_op_def("While", body, inputs), inputs, {"body": body})
    return out if out.__class__ is tuple else (out,)


def _while_keep(body) -> tuple:
    """The outputs an accumulating `While`'s gradient keeps: the count and lists, and the final
    lists of TensorList loop variables (the zero gradient of one nobody differentiated is as
    long as it). Nothing for a loop without accumulators."""
    if body.accumulate is None:
        return ()
    n = body.num_vars
    return tuple(i for i in range(n) if body.specs[i].dtype is _variant) + \
        tuple(range(n, n + 1 + len(body.accumulate)))


# -- rebuilding ops from their parts (a SavedModel loader) --------------------------------------
def control_flow_op_def(name, body, inputs) -> OpDef:
    """The OpDef of one `If`/`Case` (`body` a CaseBody) or `While` (a WhileBody) op on `inputs`:
    what tracing makes, for a caller that adds the op to a graph itself."""
    if name == "While":
        return _make_op("While", _while_kernel, _while_infer, _while_replay, inputs,
                        _while_keep(body))
    return _make_op(name, _case_kernel, _case_infer, _case_replay, inputs)


def _planned(graphs):
    for g in graphs:
        if g.plan is None:
            g.plan = GraphPlan(g)


def restored_case_body(is_if, branches, positions) -> CaseBody:
    """The CaseBody of an If/Case whose finished branch graphs (outputs set; their inputs the
    capture placeholders fed from the op's inputs at `positions[k]`) were rebuilt by a loader.
    The caller has checked that the branches agree in outputs."""
    _planned(branches)
    return CaseBody(tuple(branches), tuple(tuple(p) for p in positions), _case_specs(branches),
                    is_if)


def restored_while_body(cond, body, num_vars, has_max, positions, accumulating) -> WhileBody:
    """The WhileBody of a While whose finished cond and body graphs were rebuilt by a loader
    (first `num_vars` inputs the loop variables, then the captures at `positions`); with
    accumulators when `accumulating` (they are a function of the body, as when traced)."""
    _planned((cond, body))
    specs = tuple(TensorSpec(p.shape, p.dtype) for p in body.inputs[:num_vars])
    made = WhileBody(cond, body, num_vars, has_max,
                     (tuple(positions[0]), tuple(positions[1])), specs)
    return made.accumulating() if accumulating else made
