"""Running a traced graph: each operation, in recorded order, with the op's own kernel.

`run_graph(graph, feeds)` binds the graph's placeholders (`graph.inputs`: the arguments, then the
captures) to the fed tensors and runs the operations a run needs in the order they were traced.
That order is program order, hence a topological order that also honours control inputs. A run
needs what the outputs need and every stateful operation (prints, assigns, random draws:
`graph.control_outputs`), with what they need, through data and control inputs; an unused
stateless operation is pruned, as TensorFlow prunes a function's body and as the compiled
runtime's `prune` pass cuts its `Program`, so the first call of a function (which runs here) and
the later ones (compiled) run the same operations: an unused `gather` with an index out of range
fails neither. Each intermediate value is dropped right after its last consumer, so peak memory is
that of the live values, as in eager execution.

Two ways to run an operation:

* direct (the common case: no tape, no interpreter, no profiler): `dispatch.run_kernel` on the
  device eager placement would choose (`dispatch.place`: a resource input's device, else the
  device the op was traced under, else the caller's device scope, else the default device);
* replay (a gradient tape is recording, an interpreter such as another graph being traced or an
  async executor is installed, or the profiler runs): each operation goes through
  `dispatch.execute`, exactly as if the Python function ran eagerly, so tapes record every op,
  an enclosing trace inlines the ops, and the async executor queues them. (A ConcreteFunction
  call under tapes usually runs its derived forward program instead and is recorded as one op
  whose backward is a traced graph, `eager.functions.function_gradient`; the op-by-op replay on
  a private tape is the fallback for graphs that cannot be derived.)

Ops that contain sub-graphs (`If`, `Case`, `While`: `op_def.replay` is set) are replayed as eager
control flow when a tape records and no graph is being traced: the predicate, index or loop
condition is read on the host (as eager `cond`/`while_loop` do) and only the ops of the branch
taken, or of each iteration, go through dispatch (`replay_graph`, recursively for nested control
flow). The tape thus records what eager code would, and gradients (higher order, variables read
in a branch) need no gradient for the control-flow op itself. While a graph is being traced
(an outer function calling this one) the op is emitted whole into that graph instead: its
predicate has no value yet. With no tape (profiler, async executor) the op runs as one op.

The per-graph plan (slot numbers, last uses) is computed once and cached on the caller's side
(`GraphPlan`); the graph itself is never mutated.
"""

from __future__ import annotations

import operator

from ..core import context as _context
from ..base import profile_events as _profile_events
from ..base import user_code as _user_code
from ..graph.constant import CONST
from ..graph.placeholder import PLACEHOLDER
from ..core import dispatch as _dispatch
from .interpret import device_scope_for

__all__ = ["GraphPlan", "run_graph", "replay_graph"]

_PROFILE = _profile_events.RECORDER


class _Step:
    """One operation to run: its op record, attrs, input/output slots, the slots whose last use
    it is, the device it was traced under (a DeviceSpec string, "" for none), and the
    operation's name and user source (for the note on an error)."""

    __slots__ = ("op_def", "attrs", "inputs", "outputs", "free", "device", "name", "source")

    def __init__(self, op_def, attrs, inputs, outputs, device, name="", source=(None, 0)):
        self.op_def = op_def
        self.attrs = attrs
        self.inputs = inputs
        self.outputs = outputs
        self.free = ()
        self.device = device
        self.name = name
        self.source = source


def _note_failing_step(exc, step) -> None:
    """Adds where the failing operation came from, as compiled programs do ("Detected at
    node ..."): for a control-flow body or branch, that is the user's line inside it, which the
    note on the enclosing `While` / `If` (the line of the call) does not show."""
    if step is None or not isinstance(exc, Exception):
        return
    file, line = _user_code.line_of(step.source)
    where = f" defined at {_user_code.describe_line(file, line)}" if line else ""
    text = _user_code.source_line(step.source)
    exc.add_note(f"Detected at node {step.name!r} ({step.op_def.name}){where}"
                 + (f": {text}" if text else ""))


class GraphPlan:
    """A graph compiled for running: every tensor gets a slot number, placeholders are bound by
    position in `graph.inputs`, and each step knows which slots die after it. Built once per
    graph (ConcreteFunction keeps it).

    `compiled` holds each step again as a flat tuple `(op_def, attrs, gather, outputs, free,
    device)`, what the direct-mode loop reads: `gather(values)` is the step's input tuple
    (an `operator.itemgetter` for two or more inputs, C code with no list built per call) and
    `device` the device string the step was traced under ("" for none; its scope is resolved
    per call, as soft placement may change between calls). The per-call cost of a small
    function is mostly this loop's, so everything that does not depend on the call is decided
    here."""

    __slots__ = ("steps", "num_slots", "input_slots", "output_slots", "compiled",
                 "_template")

    def __init__(self, graph):
        slot_of = {}  # id(SymbolicTensor) -> slot
        for op in graph.get_operations():
            for t in op.outputs:
                slot_of[id(t)] = len(slot_of)
        self.num_slots = len(slot_of)
        self.input_slots = tuple(slot_of[id(t)] for t in graph.inputs)
        self.output_slots = tuple(slot_of[id(t)] for t in graph.outputs)
        fed = set(self.input_slots)
        steps = []
        last_use = {}
        constants = {}  # slot -> the eager tensor a `Const` holds: filled in, as a capture is
        needed = _needed(graph)
        for op in graph.get_operations():
            if id(op) not in needed:
                continue
            if op.op_def is CONST:
                constants[slot_of[id(op.outputs[0])]] = op.attrs["value"].tensor
                continue
            if op.op_def is PLACEHOLDER:
                if slot_of[id(op.outputs[0])] not in fed:
                    raise ValueError(f"Placeholder {op.name!r} is not among the graph's inputs; "
                                     "nothing would feed it.")
                continue
            step = _Step(op.op_def, op.attrs, tuple(slot_of[id(t)] for t in op.inputs),
                         tuple(slot_of[id(t)] for t in op.outputs), op.device, op.name,
                         op._source)
            for s in step.inputs:
                last_use[s] = len(steps)
            steps.append(step)
        keep = set(self.output_slots)
        frees = [[] for _ in steps]
        for s, i in last_use.items():
            if s not in keep:
                frees[i].append(s)
        for i, step in enumerate(steps):
            # outputs nobody consumes die at once
            frees[i].extend(s for s in step.outputs if s not in last_use and s not in keep)
            step.free = tuple(frees[i])
        self.steps = steps
        self.compiled = tuple(
            (step.op_def, step.attrs, _gather(step.inputs), step.outputs, step.free,
             step.device)
            for step in steps)
        # The slot list every call starts from: copying it beats building one.
        self._template = [None] * self.num_slots
        for s, value in constants.items():
            self._template[s] = value

    def run(self, arguments, captures) -> list:
        """Runs the graph with `arguments` then `captures` fed to `graph.inputs` (see
        `run_graph`); the two are given apart so a call need not concatenate them."""
        input_slots = self.input_slots
        if len(arguments) + len(captures) != len(input_slots):
            raise ValueError(f"The graph has {len(input_slots)} inputs; "
                             f"{len(arguments) + len(captures)} values were fed.")
        values = self._template.copy()
        i = 0
        for value in arguments:
            values[input_slots[i]] = value
            i += 1
        for value in captures:
            values[input_slots[i]] = value
            i += 1
        st = _context.thread_state()
        if st.interpreter is not None or st.tapes or _PROFILE.active:
            self._replay_steps(values, st)
        else:
            run_sync = _dispatch.run_kernel
            place = _dispatch.place
            outs = None
            try:
                for op_def, attrs, gather, outs, free, device in self.compiled:
                    inputs = gather(values)
                    out = run_sync(op_def, inputs, attrs,
                                   place(op_def, inputs, device_scope_for(device, st), attrs))
                    _store(values, outs, free, out)
            except Exception as exc:
                _note_failing_step(exc, self._step_with(op_def, gather, outs))
                raise
        return [values[s] for s in self.output_slots]

    def _step_with(self, op_def, gather, outs):
        """The step whose compiled form holds these objects (the direct loop's variables when
        it failed; kept out of the loop so that it costs nothing per op)."""
        if outs is None:
            return None
        for step, compiled in zip(self.steps, self.compiled):
            if compiled[0] is op_def and compiled[2] is gather and compiled[3] is outs:
                return step
        return None

    def replay(self, feeds) -> list:
        """Runs the graph with `feeds` bound to `graph.inputs`, every op through dispatch
        (`replay_graph`)."""
        if len(feeds) != len(self.input_slots):
            raise ValueError(f"The graph has {len(self.input_slots)} inputs; "
                             f"{len(feeds)} values were fed.")
        values = self._template.copy()
        for s, value in zip(self.input_slots, feeds):
            values[s] = value
        self._replay_steps(values, _context.thread_state())
        return [values[s] for s in self.output_slots]

    def _replay_steps(self, values, st):
        # Expand sub-graph ops only for a tape, and never into a graph being traced (module doc).
        expand = bool(st.tapes) and not getattr(st.interpreter, "is_graph", False)
        step = None
        try:
            for step in self.steps:
                inputs = tuple([values[s] for s in step.inputs])
                if expand and step.op_def.replay is not None:
                    out = _expand(step, inputs)
                else:
                    out = _replay(step, inputs)
                _store(values, step.outputs, step.free, out)
        except Exception as exc:
            _note_failing_step(exc, step)
            raise


def _needed(graph) -> set:
    """The ids of the operations a run of `graph` executes (see the module doc): those its
    outputs need and the stateful ones (every one of them is in `control_outputs` when the graph
    tracks automatic control dependencies; a graph built without them keeps its stateful
    operations too), with everything they need through data and control inputs."""
    operations = graph.get_operations()
    pending = [t.op for t in graph.outputs]
    pending += graph.control_outputs
    pending += [op for op in operations if op.op_def.stateful]
    needed = set()
    while pending:
        op = pending.pop()
        if id(op) in needed:
            continue
        needed.add(id(op))
        pending.extend(t.op for t in op.inputs)
        pending.extend(op.control_inputs)
    return needed


def _store(values, outs, free, out):
    if outs:
        if out.__class__ is tuple:
            for s, v in zip(outs, out):
                values[s] = v
        else:
            values[outs[0]] = out
    for s in free:
        values[s] = None


def _no_inputs(values):
    return ()


def _gather(slots):
    """A function of the slot list giving a step's input tuple."""
    if not slots:
        return _no_inputs
    if len(slots) == 1:
        (s,) = slots
        return lambda values: (values[s],)
    return operator.itemgetter(*slots)


def run_graph(graph, feeds, plan=None) -> list:
    """Runs `graph` with `feeds` (tensors for `graph.inputs`, in order: arguments then captures)
    and returns the tensors of `graph.outputs` (see the module doc)."""
    if plan is None:
        plan = GraphPlan(graph)
    if len(feeds) != len(plan.input_slots):
        raise ValueError(f"Graph {graph.name!r} has {len(plan.input_slots)} inputs; "
                         f"{len(feeds)} values were fed.")
    return plan.run(feeds, ())


def replay_graph(graph, feeds, plan=None) -> list:
    """Runs `graph` on `feeds` (as `run_graph`) with every operation going through
    `dispatch.execute`, whatever the thread's state, so that tapes record each op; ops with
    sub-graphs are expanded into the ops actually run while a tape records (module doc). Used
    for branch and loop graphs, whose replay thereby nests."""
    if plan is None:
        plan = GraphPlan(graph)
    return plan.replay(feeds)


def _expand(step, inputs):
    if step.device:
        with _context.device(step.device):
            return step.op_def.replay(inputs, step.attrs)
    return step.op_def.replay(inputs, step.attrs)


def _replay(step, inputs):
    if step.device:
        with _context.device(step.device):
            return _dispatch.execute(step.op_def, inputs, step.attrs)
    return _dispatch.execute(step.op_def, inputs, step.attrs)
