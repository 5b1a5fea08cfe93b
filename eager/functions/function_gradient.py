"""A function call's gradient derived from its graph: a forward program and a backward function.

A ConcreteFunction called under a gradient tape is recorded as one op (TensorFlow's
`PartitionedCall`). Its gradient is not found by replaying the forward graph op by op on a tape
at every call; it is *derived* once per kind of call (≈ TensorFlow's
`_TapeGradientFunctions`), by tracing:

1. a derivation graph is built: a placeholder per argument (a Variable argument's handle
   stand-in, and every capture, enter as the eager tensors they are, so resource inference and
   `handle_data` work as in the trace), then the function graph's operations copied in order
   while a private tape records them symbolically, then a placeholder per output gradient
   (*seed*), then the backward pass (`autodiff.tape_backward.backward`) over the private tape, whose
   gradient functions run through dispatch and are therefore traced into the same graph;
2. the graph is split with the Program IR: fed the arguments and the seeds, fetching the input
   gradients, pruned (`runtime.passes.prune`); every value that a gradient-side node (or a
   fetch) reads and the forward side produced is a *kept* value: an argument, an output, or
   an intermediate (an *extra*);
3. the **forward program** is the function graph fetching its outputs plus the extras, run
   compiled (`runtime.executable.build`): stateful ops run once, in it, and nowhere else;
4. the **backward function** is a new graph made of the gradient-side nodes only, taking the
   seeds and the kept values and returning one gradient per differentiable input (arguments
   and captures; a variable's handle gets its reads' gradient), IndexedSlices as three
   tensors. It is a `BackwardFunction`: called with no tape following its inputs it runs
   compiled; under tapes its call is recorded the same way, its own gradient derived from
   its graph, lazily, recursively. That is how higher-order gradients work.

A call's tape entry keeps exactly the kept values (references to its own arguments, and the
outputs and extras the forward program returned) and nothing else.

Two variants, as TensorFlow's first-order and higher-order tape functions:

* *first order* (exactly one non-persistent tape records the call): the entry's outputs are the
  function's outputs; only the outputs are seeded;
* *higher order* (several tapes, or a persistent one, may differentiate the backward): an outer
  tape must see how the extras depend on the inputs, so the extras are outputs of the entry too
  and the backward takes a seed for each differentiable extra. Seeding extras may make the
  backward keep more values; those are seeded in turn, until the set is stable.

The gradient is derived only for the inputs a tape could ever ask for: those with a tape id
(followed, or once followed, by some tape); a differentiable input with no id can never match
a later source. Variants are cached per (inputs with ids, order).

Not derivable (the caller falls back to replaying the graph on a private tape, which runs the
eager rules on the ops actually run): a graph whose backward meets an op with no gradient
function (re-checked on later calls through `op_def.gradient`), a rule that cannot be traced
(it refuses the graph, as control-flow rules refuse stateful branches, or needs a value known
only at run time), or a seed for a variant (TensorList) value.

Control flow: `If`/`Case`/`While` are differentiated by their own rules
(`eager.control_flow.control_flow_grad`), so, as with TensorFlow's `tf.function`, an input that the
branch taken (or a loop that ran zero times) did not use gets a zero gradient, where replaying
the ops actually run gives None. Those rules recompute the branch or body when the backward
runs, so control flow that reads or writes variables is not derived but replayed: the backward
runs after the forward (the function may assign a variable after a `cond` read it; the user may
between the call and `gradient`), and only the replay keeps the values the forward read.
"""

from __future__ import annotations

from ..core import context as _context
from ..base import dtypes as _dt
from ..autodiff import tape as _tape
from ..autodiff.tape_backward import backward as _backprop
from ..graph import Graph, SymbolicTensor, building_apart
from ..graph.constant import CONST
from ..graph.placeholder import PLACEHOLDER
from ..ops.grad_utils import zeros_of_shape
from ..runtime.executable import build, function_program
from ..runtime.passes import optimize, prune
from ..runtime.program import Program
from ..tensor import EagerTensor, IndexedSlices, wrap_value
from ..core.tensor_conversion import convert_to_tensor
from ..runtime.graph_runner import GraphPlan

__all__ = ["CallOp", "FunctionGradients", "BackwardFunction", "Variant", "recording_tapes",
           "record_call", "differentiable"]

#: Rounds of seeding extras (higher-order variant) before giving up (TensorFlow warns at 20).
_MAX_ROUNDS = 20

#: Shape-specialised derivations kept per function (partial traced shapes, see
#: `FunctionGradients`); calls with further shapes replay instead of deriving again.
_MAX_SHAPE_VARIANTS = 16


def differentiable(dtype) -> bool:
    """Whether a tape follows tensors of `dtype` as sources (resources: a variable's handle)."""
    return dtype._inexact or dtype is _dt.resource or dtype is _dt.variant


def _gets_id(dtype) -> bool:
    """Whether a tape gives an op output of `dtype` an id (what `Tape.record` follows)."""
    return dtype._inexact or dtype is _dt.variant


class CallOp:
    """What a tape entry for a function call names as its op (≈ TensorFlow's `PartitionedCall`
    / `StatefulPartitionedCall` node): the entry's own `backward` does the work, so `gradient`
    only has to be set (the backward pass refuses ops whose `gradient` is None). `remat_ok`:
    the graph has no stateful op, so running it again has no effect (the replay fallback of
    `concrete._record_call` relies on it)."""

    __slots__ = ("name", "graph_name", "remat_ok")
    differentiable = True
    gradient = True

    def __init__(self, graph):
        stateful = any(op.op_def.stateful for op in graph.get_operations())
        self.name = "StatefulPartitionedCall" if stateful else "PartitionedCall"
        self.graph_name = graph.name
        self.remat_ok = not stateful

    def __repr__(self):
        return f"<{self.name} {self.graph_name}>"


class _NotDerivableError(Exception):
    """The derivation met what it cannot handle; `ops` are the op records lacking a gradient
    (empty: permanently not derivable), `reason` says what happened."""

    def __init__(self, ops=(), reason=""):
        super().__init__(reason)
        self.ops = tuple(ops)
        self.reason = reason


class _Blocked:
    """A cached failed derivation: retried once every op that lacked a gradient has one."""

    __slots__ = ("ops", "reason")

    def __init__(self, ops, reason):
        self.ops = ops
        self.reason = reason

    def still(self) -> bool:
        return not self.ops or any(op.gradient is None for op in self.ops)


# -- the variants ----------------------------------------------------------------------------------
class Variant:
    """One derived forward/backward pair (see the module doc).

    `forward(args, st)` runs `forward_program` (compiled) and returns the outputs then the
    extras; `wrap` lists the positions of those that are fed or constant values (returned as
    fresh tensors, so a recorded output never shares a tape id with an input or with another
    call's output). `kept` indexes the values the entry keeps in `feeds + outputs + extras`;
    `seeds` the entry outputs whose gradients are the backward's first arguments; `structure`
    says, per input, where its gradient is in the backward's outputs: None (no gradient),
    `(False, j)` (a tensor) or `(True, j)` (IndexedSlices: values, indices, dense shape, or
    `(True, j, False)` without a dense shape)."""

    __slots__ = ("forward_program", "forward", "n_outputs", "wrap", "kept", "seeds",
                 "structure", "backward", "higher_order", "extras")

    def __init__(self, forward_program, forward, n_outputs, wrap, kept, seeds, structure,
                 backward, higher_order, extras):
        self.forward_program = forward_program
        self.forward = forward
        self.n_outputs = n_outputs
        self.wrap = wrap
        self.kept = kept
        self.seeds = seeds
        self.structure = structure
        self.backward = backward
        self.higher_order = higher_order
        self.extras = extras

    def unflatten(self, flat) -> tuple:
        grads = []
        for s in self.structure:
            if s is None:
                grads.append(None)
            elif not s[0]:
                grads.append(flat[s[1]])
            else:
                j = s[1]
                grads.append(IndexedSlices(flat[j], flat[j + 1],
                                           flat[j + 2] if len(s) == 2 else None))
        return tuple(grads)

    def __repr__(self):
        order = "higher-order" if self.higher_order else "first-order"
        return (f"<Variant {order}: {self.n_outputs} outputs, {len(self.extras)} extras, "
                f"{len(self.kept)} kept, backward {self.backward.graph.name!r}>")


class FunctionGradients:
    """The derived variants of one graph with fixed captures (a ConcreteFunction's, or a
    backward function's). `graph.inputs` are the arguments then the captures; an argument that
    is a capture placeholder (a Variable argument's handle stand-in) is fed per call.

    Gradient rules need static shapes (shapes are attributes here, not tensors), so when an
    argument's traced shape is partial (an `input_signature` with None dims) the derivation
    uses the call's actual shapes, and variants are cached per those shapes too; the forward
    program does not depend on them and is shared."""

    __slots__ = ("graph", "captures", "_variants", "_differentiable", "_partial", "_forwards")

    def __init__(self, graph, captures):
        self.graph = graph
        self.captures = tuple(captures)
        self._variants = {}
        self._forwards = {}  # ids of the extras -> (program, executable, wrap)
        self._differentiable = tuple(differentiable(t.dtype) for t in graph.inputs)
        n_args = len(graph.inputs) - len(self.captures)
        self._partial = tuple(i for i, t in enumerate(graph.inputs[:n_args])
                              if not t.shape.is_fully_defined())

    def variant_for(self, feeds, higher_order):
        """The Variant for a call on `feeds` (arguments then captures): gradients for the
        inputs a tape could ever ask for (module doc), derived on first use. None when it is
        not derived: the derivation failed (retried once every op that lacked a gradient has
        one, see `_Blocked`), or partial shapes already have `_MAX_SHAPE_VARIANTS` variants."""
        sources = tuple([bool(t._tape_id) and d for t, d in zip(feeds, self._differentiable)])
        shapes = tuple([feeds[i].shape for i in self._partial]) if self._partial else None
        return self._variant(sources, shapes, higher_order)

    def forward_backward(self, higher_order=False):
        """The Variant with every differentiable input as a source, at the traced shapes (for
        inspection: a call derives the variant for the inputs it is given); None if not
        derivable."""
        return self._variant(self._differentiable, None, higher_order)

    @property
    def variants(self) -> list:
        """The variants derived so far."""
        return [v for v in self._variants.values() if v.__class__ is Variant]

    def _variant(self, sources, shapes, higher_order):
        key = (sources, shapes, higher_order)
        found = self._variants.get(key)
        if found.__class__ is Variant:
            return found
        if found is not None and found.still():
            return None
        if shapes is not None and sum(k[1] is not None
                                      for k in self._variants) >= _MAX_SHAPE_VARIANTS:
            return None
        try:
            found = self._derive(sources, shapes, higher_order)
        except _NotDerivableError as exc:
            self._variants[key] = _Blocked(exc.ops, exc.reason)
            return None
        self._variants[key] = found
        return found

    def _derive(self, sources, shapes, higher_order) -> Variant:
        graph, captures = self.graph, self.captures
        outputs = list(graph.outputs)
        arg_shapes = dict(zip(self._partial, shapes)) if shapes is not None else {}
        trace, extras, seeded = _derive(graph, captures, sources, arg_shapes, higher_order)
        n_feeds = len(graph.inputs)
        position = {id(t): n_feeds + k
                    for k, t in reversed(list(enumerate([*outputs, *extras])))}
        feed_position = {id(t): i for i, t in enumerate(trace.arg_feeds)}
        kept = tuple(feed_position[id(t)] if id(t) in feed_position
                     else position[id(trace.origin[id(t)])] for t in trace.kept)
        n_out = len(outputs)
        seeds = tuple([k for k, o in enumerate(outputs) if _gets_id(o.dtype)]
                      + [n_out + j for j in range(len(seeded))])
        program, executable, wrap = self._forward(extras)
        return Variant(program, executable, n_out, wrap, kept, seeds, trace.structure,
                       _backward_function(graph.name, trace), higher_order, tuple(extras))

    def _forward(self, extras):
        """The forward program fetching the outputs then `extras`, optimised and built (once
        per set of extras)."""
        key = tuple([id(t) for t in extras])
        found = self._forwards.get(key)
        if found is None:
            graph = self.graph
            n_args = len(graph.inputs) - len(self.captures)
            program = optimize(Program.from_graph(
                graph, feeds=graph.inputs[:n_args], fetches=[*graph.outputs, *extras],
                constants=dict(zip(graph.inputs[n_args:], self.captures))))
            plain = set(program.feeds) | set(program.constants)
            wrap = tuple(k for k, v in enumerate(program.fetches)
                         if v in plain and _gets_id(program.specs[v].dtype))
            found = self._forwards[key] = (program, build(program), wrap)
        return found


class BackwardFunction:
    """A derived backward graph, callable with its arguments (the seeds, then the kept values):
    compiled when no tape follows them, recorded as one op (its own gradient derived from its
    graph) when tapes do, op by op through dispatch while a graph is traced, an async executor
    is installed, or its own gradient is not derivable."""

    __slots__ = ("graph", "captures", "gradients", "call_op", "_executable", "_plan")

    def __init__(self, graph, captures):
        self.graph = graph
        self.captures = tuple(captures)
        self.gradients = FunctionGradients(graph, captures)
        self.call_op = CallOp(graph)
        self._executable = None
        self._plan = None

    def __call__(self, args) -> list:
        st = _context.thread_state()
        if st.interpreter is None:
            if st.tapes:
                feeds = [*args, *self.captures]
                recording = recording_tapes(st.tapes, feeds)
                if recording:
                    outputs = record_call(self.gradients, self.call_op, args, feeds, recording,
                                          st)
                    if outputs is not None:
                        return outputs
                    return self._replay(args)
            return self._run(args, st)
        return self._replay(args)

    def _run(self, args, st):
        executable = self._executable
        if executable is None:
            executable = self._executable = build(function_program(self.graph, self.captures))
        return executable(args, st)

    def _replay(self, args):
        plan = self._plan
        if plan is None:
            plan = self._plan = GraphPlan(self.graph)
        return plan.run(args, self.captures)

    def __repr__(self):
        return f"<BackwardFunction {self.graph.name!r}>"


# -- recording a call ------------------------------------------------------------------------------
def recording_tapes(tapes, feeds) -> list:
    """The tapes among `tapes` that follow one of `feeds` (only those record the call)."""
    found = []
    for tape in tapes:
        ids = tape.ids
        for t in feeds:
            tid = t._tape_id
            if tid and tid in ids:
                found.append(tape)
                break
    return found


def record_call(gradients, op, args, feeds, recording, st):
    """Runs the forward program of `gradients`' graph on `args` and records the call on the
    `recording` tapes as one op with a derived backward; returns the outputs, or None when the
    gradient is not derivable (nothing has run then)."""
    higher = len(recording) > 1 or recording[0].persistent
    variant = gradients.variant_for(feeds, higher)
    if variant is None:
        return None
    values = variant.forward(args, st)
    for k in variant.wrap:
        values[k] = _fresh(values[k])
    n = variant.n_outputs
    outputs = values[:n] if len(values) != n else values
    pool = feeds + values
    kept = tuple([pool[i] for i in variant.kept])
    backward = _CallBackward(variant, kept)
    recorded = tuple(values) if higher else tuple(outputs)
    attrs = {"f": op.graph_name}
    for tape in recording:
        tape.record(op, feeds, attrs, recorded, backward, (), ())
    return outputs


class _CallBackward:
    """A recorded call's backward: the variant and the values its backward reads."""

    __slots__ = ("variant", "kept")

    def __init__(self, variant, kept):
        self.variant = variant
        self.kept = kept

    def __call__(self, forward, *grads):
        variant = self.variant
        seeds = []
        for k in variant.seeds:
            g = grads[k]
            if g is None:
                g = zeros_of_shape(forward.output_shapes[k], forward.output_dtypes[k])
            elif g.__class__ is IndexedSlices:
                g = convert_to_tensor(g)
            seeds.append(g)
        return variant.unflatten(variant.backward([*seeds, *self.kept]))


def _fresh(t):
    """A new tensor with `t`'s value (no op run, no copy): its own tape id."""
    if t.__class__ is not EagerTensor or not _gets_id(t._meta.dtype):
        return t
    meta = t._meta
    return wrap_value(t._value, meta.device, meta.dtype)


# -- deriving --------------------------------------------------------------------------------------
def _copy_op(graph, op, inputs, control_inputs):
    """`op` added to `graph` on `inputs`, with its attributes, name, device request and user
    source line."""
    if op.device:
        with _context.device(op.device):
            new = graph.add_op(op.op_def, inputs, op.attrs, control_inputs, name=op.name)
    else:
        new = graph.add_op(op.op_def, inputs, op.attrs, control_inputs, name=op.name)
    new._source = op._source
    return new


def _argument_stand_ins(graph, n_args) -> dict:
    """Argument index -> eager stand-in, for the arguments that are capture placeholders."""
    captured = {id(ph): value for value, ph in graph.captures}
    return {i: captured[id(t)] for i, t in enumerate(graph.inputs[:n_args]) if id(t) in captured}


class _Trace:
    """One derivation graph (module doc, step 1) and its split (step 2)."""

    __slots__ = ("graph", "arg_feeds", "seed_phs", "flat_grads", "structure", "kept",
                 "gradient_ops", "forward_ops", "origin", "constants")


def _trace(graph, captures, stand_ins, sources, arg_shapes, seeded):
    """Traces the derivation graph of `graph` with seeds on its outputs and on `seeded` (extras,
    original tensors), gradients for the inputs flagged in `sources`; splits it."""
    n_args = len(graph.inputs) - len(captures)
    # Constants the rules make are captured, as the forward's are mapped to their values below:
    # the split (`_split`) reads every constant from `trace.constants`.
    g = Graph(f"{graph.name}_derivation", auto_control_deps=False, embed_constants=False)
    private = _tape.Tape()
    mapped = {}  # id(original tensor) -> derivation tensor (symbolic, or eager)
    g.holds_copies_of(graph, mapped)  # (a custom gradient's grad_fn reads the originals)
    origin = {}  # id(derivation tensor) -> original tensor
    arg_feeds = []
    source_ids = []
    forward_ops = set()
    with building_apart(g):
        for i, ph in enumerate(graph.inputs):
            if i < n_args:
                stand_in = stand_ins.get(i)
                if stand_in is None:
                    t = feed = g.placeholder(ph.dtype, arg_shapes.get(i, ph.shape),
                                             name=ph.op.name)
                else:
                    t, feed = stand_in, g.capture(stand_in)
                arg_feeds.append(feed)
            else:
                t = captures[i - n_args]
            mapped[id(ph)] = t
            source_ids.append(private.watch(t) if sources[i] else -1)
        by_name = {}
        for op in graph.get_operations():
            if op.op_def is PLACEHOLDER:
                continue
            if op.op_def is CONST:  # the trace's own constant: its value, as a capture's
                mapped[id(op.outputs[0])] = op.attrs["value"].tensor
                continue
            if op.op_def.replay is not None and any(t.dtype is _dt.resource
                                                    for t in op.inputs):
                # Control flow's gradient recomputes the branch or body when the backward runs,
                # later than the forward: variables it reads may have been assigned since (by
                # the function itself, or between the call and `gradient`). Replaying keeps the
                # values the forward read.
                raise _NotDerivableError(reason=f"{op.type} op {op.name!r} reads or writes "
                                                "variables inside its branches")
            inputs = tuple([mapped[id(t)] for t in op.inputs])
            controls = [by_name[c.name] for c in op.control_inputs if c.name in by_name]
            new = _copy_op(g, op, inputs, controls)
            by_name[op.name] = new
            forward_ops.add(id(new))
            for a, b in zip(op.outputs, new.outputs):
                mapped[id(a)] = b
                origin[id(b)] = a
            _tape.record_op([private], op.op_def, inputs, op.attrs, new.outputs)
        targets, seed_phs = [], []
        for k, o in enumerate([*graph.outputs, *seeded]):
            t = mapped[id(o)]
            if not _gets_id(t.dtype):
                continue
            if t.dtype is _dt.variant:  # no zeros for a list seed: replay instead
                raise _NotDerivableError(reason=f"{o.name} is a TensorList to seed")
            seed_phs.append(g.placeholder(t.dtype, t.shape, name=f"seed_{k}"))
            targets.append(t)
        try:
            grads = _backprop(private, targets, seed_phs, source_ids)
        except LookupError as exc:  # an op without a gradient: retried once it has one
            ops = {record[_tape.OP] for record in private.entries}
            raise _NotDerivableError({op for op in ops if op is not None and op.gradient is None},
                                     reason=str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a rule that cannot be traced: replay
            # (a rule refusing this graph, such as stateful control flow, or one needing a
            # shape only known when it runs): the eager rules run on the replayed ops instead.
            raise _NotDerivableError(reason=f"{type(exc).__name__}: {exc}") from None
        flat, structure = [], []
        for grad in grads:
            if grad is None:
                structure.append(None)
            elif grad.__class__ is IndexedSlices:
                structure.append((True, len(flat)) if grad.dense_shape is not None
                                 else (True, len(flat), False))
                flat.extend([grad.values, grad.indices])
                if grad.dense_shape is not None:
                    flat.append(convert_to_tensor(grad.dense_shape))
            else:
                structure.append((False, len(flat)))
                flat.append(grad)
    trace = _Trace()
    trace.graph = g
    trace.arg_feeds = arg_feeds
    trace.seed_phs = seed_phs
    trace.flat_grads = flat
    trace.structure = tuple(structure)
    trace.forward_ops = forward_ops
    trace.origin = origin
    fed = {id(t) for t in arg_feeds} | {id(t) for t in seed_phs}
    trace.constants = {id(ph): value for value, ph in g.captures if id(ph) not in fed}
    _split(trace)
    return trace


def _split(trace):
    """Step 2 of the module doc: the gradient-side operations the input gradients need, in
    graph order, and the forward-side values they (or the gradients themselves) read."""
    g = trace.graph
    fetches = [t for t in trace.flat_grads if t.__class__ is SymbolicTensor]
    program = Program.from_graph(
        g, feeds=[*trace.arg_feeds, *trace.seed_phs], fetches=fetches, targets=(),
        constants={ph: value for value, ph in g.captures if id(ph) in trace.constants})
    needed = {node.name for node in prune(program).nodes}
    forward_ops = trace.forward_ops
    gradient_ops = [op for op in g.get_operations()
                    if op.name in needed and id(op) not in forward_ops
                    and op.op_def is not PLACEHOLDER]
    seeds = {id(t) for t in trace.seed_phs}
    produced = {id(t) for op in gradient_ops for t in op.outputs}
    kept, seen = [], set()

    def read(t):
        key = id(t)
        if (key in produced or key in seeds or key in trace.constants or key in seen
                or t.__class__ is not SymbolicTensor):
            return
        seen.add(key)
        kept.append(t)

    for op in gradient_ops:
        for t in op.inputs:
            read(t)
    for t in trace.flat_grads:
        read(t)
    trace.gradient_ops = gradient_ops
    trace.kept = kept


def _derive(graph, captures, sources, arg_shapes, higher_order):
    """The final derivation trace, the extras (seeded ones first) and the seeded extras: for
    the higher-order variant, extras are seeded until no new one appears (module doc)."""
    n_args = len(graph.inputs) - len(captures)
    stand_ins = _argument_stand_ins(graph, n_args)
    outputs = list(graph.outputs)
    seeded = []
    for _ in range(_MAX_ROUNDS):
        trace = _trace(graph, captures, stand_ins, sources, arg_shapes, seeded)
        extras = _extras(trace, outputs)
        if not higher_order:
            break
        known = {id(t) for t in seeded}
        new = [t for t in extras if id(t) not in known and _gets_id(t.dtype)]
        if not new:
            break
        seeded.extend(new)
    else:
        raise _NotDerivableError(reason="the higher-order extras did not settle")
    known = {id(t) for t in seeded}
    return trace, seeded + [t for t in extras if id(t) not in known], seeded


def _extras(trace, outputs) -> list:
    """The kept values the forward side computed that are not outputs (original tensors)."""
    out_ids = {id(t) for t in outputs}
    found = []
    for t in trace.kept:
        original = trace.origin.get(id(t))
        if original is not None and id(original) not in out_ids:
            found.append(original)
    return found


def _backward_function(name, trace) -> BackwardFunction:
    """Step 4 of the module doc: the gradient-side operations of `trace` as a graph of their
    own, taking the seeds then the kept values."""
    g = trace.graph
    b = Graph(f"{name}_backward")
    bmap = dict(trace.constants)  # id(derivation tensor) -> backward tensor (or eager value)
    stand_ins = {id(ph): value for value, ph in g.captures}
    argument_captures = set()
    with building_apart(b):
        for k, t in enumerate(trace.seed_phs):
            bmap[id(t)] = b.placeholder(t.dtype, t.shape, name=f"grad_{k}")
        for k, t in enumerate(trace.kept):
            value = stand_ins.get(id(t))
            if value is not None:  # a Variable argument's handle: fed, resource data known
                bmap[id(t)] = b.capture(value)
                argument_captures.add(id(value))
            else:
                bmap[id(t)] = b.placeholder(t.dtype, t.shape, name=f"kept_{k}")
        by_name = {}
        for op in trace.gradient_ops:
            inputs = tuple([bmap[id(t)] for t in op.inputs])
            controls = [by_name[c.name] for c in op.control_inputs if c.name in by_name]
            new = _copy_op(b, op, inputs, controls)
            by_name[op.name] = new
            for a, c in zip(op.outputs, new.outputs):
                bmap[id(a)] = c
        outputs = []
        for t in trace.flat_grads:
            t = bmap.get(id(t), t)
            outputs.append(t if t.__class__ is SymbolicTensor else b.capture(t))
    b.outputs = b.finalize(outputs)
    captures = [value for value, _ in b.captures if id(value) not in argument_captures]
    return BackwardFunction(b, captures)
