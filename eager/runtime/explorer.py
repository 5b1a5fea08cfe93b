"""The semantics explorer: every outcome TensorFlow's resource-variable semantics allows a graph.

A runner (the parallel executor, a pass that reorders nodes) is correct when every result it
can produce is one the semantics allows. `allowed_outcomes` computes that set by brute force, so
tests can check a runner's results against it instead of against one lucky order.

The semantics (TensorFlow's RFC "Concurrency semantics for resource variables"):

* An execution puts the program's operations in a total order consistent with its data and
  control edges. (The RFC also orders critical sections and blocking ops; we have neither, and
  no frames: control flow ops are refused, see below.)
* Resource reads and writes are atomic and sequentially consistent in that order: a read sees
  the last write before it, never half of one.
* An op that reads *and* writes a resource (AssignAddVariableOp, ResourceScatterAdd,
  ResourceApply*) is two steps, an atomic read and an atomic compute-and-write, with other ops
  free to run in between. Two unordered `x += 1` may therefore both read 0 and leave 1. Our
  executor holds the variable's lock for the whole update, so it always leaves 2: real runs give
  a subset of the allowed outcomes, which is exactly what a differential test checks.
  Pure writes (`AssignVariableOp`, `DestroyResourceOp`) do not depend on the old value and are
  one atomic step. An update op reads all the resources it touches in one step and writes them
  all in one step (per-resource interleaving of, say, Adam's var/m/v is not modelled).

What an outcome is (`Outcome`, hashable, compared with `==`):

* `fetches`: the fetched values (a function's outputs, `graph.outputs`, a program's fetches) in
  order, each as plain Python (`ndarray.tolist()` with lists turned into tuples; NaN is one
  shared object, so NaN results compare equal). Values compare as Python numbers (1 == 1.0 ==
  True); shapes are implied by the nesting, so empty arrays of different shapes are not told
  apart.
* `variables`: `(name, value)` for every resource the program touches, in resource-creation
  (uid) order, value as above; None for an uninitialized variable, `DESTROYED` for a deleted one.
* `error`: None, or the class name of the `eager.base.errors.OpError` an order ended with (then
  `fetches` and `variables` are empty: which other ops ran before a failure is a property of
  the runner, not of the semantics).

`outcome_of(fetched, variables)` builds the same value from a real run, for differential tests.

How the exploration stays small. It is a depth-first search over "which step runs next", with
every state visited once: a state is (steps done, resource values, live intermediate values,
pending update-op snapshots), so two orders that reach the same state are explored once. Steps
that cannot change any result by moving are not branched on at all: a step *independent* of
every step it could run concurrently with (no common resource where one of them writes; pure
ops touch no resource, so they are always independent) runs as soon as it is ready. This is
sound: take any legal order and a step s in it; every step between the moment s became ready
and s's position is neither an ancestor of s (those all ran before s was ready) nor a
descendant (those come after s), so it is concurrent with s and commutes with it; moving s
back to its ready point therefore keeps the order legal and the outcome unchanged. Doing this
for every independent step turns every legal order into one the search visits. Errors are the
one place this loses information: when several independent steps fail, only the first in
program order is reported.

The explorer never touches the real variables: each resource's value is copied to the host
once, when the search first meets it (after the resource's device has finished queued work),
and every kernel that reads or writes a resource runs on a private `VariableStorage` behind a
simulated handle (same uid, a private resource manager). All ops run their real kernels through
`dispatch.run_kernel` on the host CPU (CPU:0), wherever a runner would place them: an outcome is
about order, not placement, and one device keeps the search free of copies and streams (a CUDA
kernel may round differently from numpy's; compare such runs with that in mind).

Limits, stated rather than hidden:

* Random ops (`stateful`, no resource effect, with outputs) are not functions of the graph's
  inputs: `random_ops="error"` (default) refuses them, `random_ops="fixed_sample"` draws each
  op's value once per distinct input and reuses it in every order (this advances the real
  random streams once).
* Output-less stateful ops without resources (`PrintV2`) are checked (their inference runs on
  the real inputs) but print nothing: what a graph prints is not part of an outcome.
* Control flow ops (`If`, `Case`, `While`: op instances in frames), `VarHandleOp` (creating a
  variable inside the graph) and unfed placeholders are refused up front.
* `max_states` bounds the distinct states visited; a bigger graph is a ValueError naming the
  number of steps that had to be interleaved.
"""

from __future__ import annotations


import numpy as np

from ..base import dtypes as _dt
from ..devices import registry as _registry
from ..base.errors import OpError
from ..graph.graph import Graph
from ..graph.placeholder import PLACEHOLDER
from ..core import dispatch as _dispatch
from ..ops.resource_ops import VariableStorage
from ..devices.resource_handles import ResourceHandle
from ..tensor import wrap_value
from ..core.tensor_conversion import convert_to_tensor
from .interpret import missing_feed_error
from .outcome import DESTROYED, Outcome, host_value, outcome_of, plain_value
from .program import Program

__all__ = ["Outcome", "allowed_outcomes", "outcome_of", "DESTROYED"]

#: Writes whose result does not depend on the resource's old value: one atomic step each.
#: Every other op with `resource_writes` is modelled as read, then compute-and-write.
_BLIND_WRITES = frozenset({"AssignVariableOp", "DestroyResourceOp"})


# -- simulated resources ---------------------------------------------------------------------------
class _SimulatedResources:
    """A private resource manager for one step: the storages its kernel may see."""

    __slots__ = ("_storages",)

    def __init__(self):
        self._storages = {}

    def lookup(self, uid):
        return self._storages.get(uid)

    def destroy(self, uid) -> bool:
        return self._storages.pop(uid, None) is not None

    def install(self, uid, storage):
        self._storages[uid] = storage


class _SimulatedDevice:
    """A device whose `resources` is a step's private manager; everything else (names, `xp`,
    copies) is the real device's, so kernels and their error messages behave as for real."""

    __slots__ = ("_real", "resources")

    def __init__(self, real, resources):
        self._real = real
        self.resources = resources

    def __getattr__(self, name):
        return getattr(self._real, name)


class _ResourceInfo:
    """What building a private storage needs: the real storage's dtype, shape and shape rule."""

    __slots__ = ("name", "dtype", "shape", "validate_shape")

    def __init__(self, name, dtype, shape, validate_shape):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.validate_shape = validate_shape


# -- the plan: steps, edges, independence ----------------------------------------------------------
_PURE, _SILENT, _SAMPLE, _READ, _WRITE, _UPDATE_READ, _UPDATE_WRITE = range(7)
_ANY = object()  # a resource not known before running (a handle computed in the graph)


class _Step:
    __slots__ = ("index", "node", "kind", "preds", "reads", "writes", "greedy")

    def __init__(self, index, node, kind, preds, reads=frozenset(), writes=frozenset()):
        self.index = index
        self.node = node
        self.kind = kind
        self.preds = preds  # bitmask of steps that must run first
        self.reads = reads  # resource uids (or _ANY) read
        self.writes = writes  # resource uids (or _ANY) written
        self.greedy = True  # independent of every concurrent step: run as soon as ready


def _overlap(a, b) -> bool:
    return bool(a and b) and (bool(a & b) or _ANY in a or _ANY in b)


def _conflict(s, t) -> bool:
    return (_overlap(s.writes, t.reads | t.writes) or _overlap(t.writes, s.reads))


def _classify(node, random_ops) -> tuple:
    """The step kinds a node becomes (see the module doc), or a ValueError for what the
    semantics here cannot express."""
    op_def = node.op_def
    where = f"node {node.name!r} ({op_def.name})"
    if op_def.replay is not None:
        raise ValueError(f"allowed_outcomes: {where} is a control flow op; op instances in "
                         "loop frames and branches are not modelled. Explore a graph without it.")
    if op_def.resource_reads or op_def.resource_writes:
        if not op_def.resource_writes:
            return (_READ,)
        if op_def.name in _BLIND_WRITES:
            return (_WRITE,)
        return (_UPDATE_READ, _UPDATE_WRITE)
    if not op_def.stateful:
        return (_PURE,)
    if op_def.name == "VarHandleOp":
        raise ValueError(f"allowed_outcomes: {where} creates a variable inside the graph; "
                         "create it outside and capture its handle.")
    if op_def.num_outputs == 0:
        return (_SILENT,)
    if random_ops == "fixed_sample":
        return (_SAMPLE,)
    raise ValueError(f"allowed_outcomes: {where} is stateful with outputs (a random op): its "
                     "values are not determined by the graph. Pass random_ops='fixed_sample' to "
                     "draw them once and reuse them in every order.")


class _Plan:
    """The program's nodes as steps, with ancestor sets and the independence analysis."""

    __slots__ = ("program", "steps", "choices", "consumers", "fetches", "base", "handles")

    def __init__(self, program, feed_values, random_ops, cpu):
        self.program = program
        base = dict(program.constants)
        base.update(zip(program.feeds, feed_values))
        base = {v: _onhost_value(t, cpu) for v, t in base.items()}
        self.base = base  # values known before anything runs, on the host
        producer_step = {}  # value id -> index of the step producing it
        last_step = {}  # node name -> index of its last step
        node_steps = {}  # node name -> bitmask of its steps
        steps = []
        ancestors = []  # per step: bitmask of every step that must precede it
        for node in program.nodes:
            if node.op_def is PLACEHOLDER:
                raise missing_feed_error(program, node)
            preds = 0
            for v in node.inputs:
                if v in producer_step:
                    preds |= 1 << producer_step[v]
            for c in node.control_inputs:
                preds |= 1 << last_step[c]
            mask = 0
            for kind in _classify(node, random_ops):
                reads, writes = self._effects(node, kind, base)
                step = _Step(len(steps), node, kind, preds, reads, writes)
                steps.append(step)
                anc = 0
                for i in _bits(preds):
                    anc |= ancestors[i] | (1 << i)
                ancestors.append(anc)
                mask |= 1 << step.index
                preds = 1 << step.index  # the node's next step follows this one
            last_step[node.name] = len(steps) - 1
            node_steps[node.name] = mask
            for v in node.outputs:
                producer_step[v] = len(steps) - 1
        effectful = [s for s in steps if s.reads or s.writes]
        for s in effectful:
            s.greedy = not any(
                t is not s and not (ancestors[s.index] >> t.index & 1)
                and not (ancestors[t.index] >> s.index & 1) and _conflict(s, t)
                for t in effectful)
        self.steps = steps
        self.choices = [s for s in steps if not s.greedy]
        consumers = {}  # value id -> bitmask of the steps of nodes reading it
        for node in program.nodes:
            for v in node.inputs:
                consumers[v] = consumers.get(v, 0) | node_steps[node.name]
        self.consumers = consumers
        self.fetches = frozenset(program.fetches)
        # The handles resource ops take from feeds and constants: the variables the program
        # touches that are known before it runs (others are met when their handle is computed).
        handles = {}
        for node in program.nodes:
            for i in node.op_def.resource_inputs:
                h = getattr(base.get(node.inputs[i]), "_value", None)
                if isinstance(h, ResourceHandle):
                    handles.setdefault(h.uid, h)
        self.handles = list(handles.values())

    @staticmethod
    def _effects(node, kind, base):
        """(reads, writes): the resource uids a step of `node` reads and writes (`_ANY` for a
        handle computed inside the graph)."""
        if kind in (_PURE, _SILENT, _SAMPLE):
            return frozenset(), frozenset()
        op_def = node.op_def

        def uids(indices):
            found = set()
            for i in indices:
                v = node.inputs[i]
                value = base.get(v)
                handle = getattr(value, "_value", None)
                found.add(handle.uid if isinstance(handle, ResourceHandle) else _ANY)
            return frozenset(found)

        every = uids(op_def.resource_inputs)
        written = uids(op_def.resource_writes)
        if kind in (_READ, _UPDATE_READ):
            return every, frozenset()
        if kind == _WRITE:
            return uids(i for i in op_def.resource_reads if i not in op_def.resource_writes), \
                written
        return frozenset(), written  # _UPDATE_WRITE


def _onhost_value(t, cpu):
    """`t` as a tensor on the host CPU (resource handles keep their value: only the tensor's
    device changes, so kernels on the CPU take it without a copy)."""
    resolve = getattr(t, "_resolve", None)  # a pending (async) tensor: its value
    if resolve is not None:
        t = resolve()
    device = t._meta.device
    if device is cpu:
        return t
    value = t._value if t.dtype is _dt.resource else cpu.copy_from(t._value, device)
    return wrap_value(value, cpu, t.dtype)


def _bits(mask):
    i = 0
    while mask:
        if mask & 1:
            yield i
        mask >>= 1
        i += 1


# -- the search ------------------------------------------------------------------------------------
class _State:
    """One point of an execution: steps done, live values, resource values, snapshots taken by
    update ops between their read and their write. Copied at every branch."""

    __slots__ = ("done", "env", "resources", "snapshots")

    def __init__(self, done, env, resources, snapshots):
        self.done = done
        self.env = env  # value id -> EagerTensor (values steps produced and someone still needs)
        self.resources = resources  # uid -> array, None (uninitialized) or DESTROYED
        self.snapshots = snapshots  # step index of an update's read -> {uid: value}

    def copy(self):
        return _State(self.done, dict(self.env), dict(self.resources), dict(self.snapshots))


class _Explorer:
    __slots__ = ("plan", "max_states", "info", "outcomes", "samples", "_fingerprints", "_cpu")

    def __init__(self, plan, max_states, cpu):
        self.plan = plan
        self.max_states = max_states
        self.info = {}  # uid -> _ResourceInfo, filled as the search meets resources
        self.outcomes = set()
        self.samples = {}  # (step index, input fingerprints) -> outputs (fixed random draws)
        self._fingerprints = {}  # id(value) -> (value, fingerprint): values are never mutated
        self._cpu = cpu

    def run(self) -> frozenset:
        plan = self.plan
        initial = {}
        for handle in plan.handles:
            self._meet(handle, initial)
        stack = [_State(0, {}, initial, {})]
        seen = set()
        while stack:
            state = stack.pop()
            try:
                self._run_greedy(state)
            except OpError as exc:
                self.outcomes.add(Outcome(error=type(exc).__name__))
                continue
            key = self._key(state)
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > self.max_states:
                raise ValueError(
                    f"allowed_outcomes: program {plan.program.name!r} has more than "
                    f"{self.max_states} distinct partial executions ({len(plan.choices)} of its "
                    f"{len(plan.steps)} steps touch shared resources and must be interleaved); "
                    "pass a larger max_states or explore a smaller graph.")
            done = state.done
            ready = [s for s in plan.choices if not (done >> s.index & 1) and not s.preds & ~done]
            if not ready:
                self.outcomes.add(self._outcome(state))  # a DAG: nothing ready means all done
                continue
            for step in reversed(ready):
                child = state.copy()
                try:
                    self._run_step(step, child)
                except OpError as exc:
                    self.outcomes.add(Outcome(error=type(exc).__name__))
                    continue
                stack.append(child)
        return frozenset(self.outcomes)

    # -- states ----------------------------------------------------------------------------------
    def _run_greedy(self, state):
        """Runs every ready independent step (in program order, which is topological: one pass
        reaches all that become ready)."""
        for step in self.plan.steps:
            if step.greedy and not (state.done >> step.index & 1) and not step.preds & ~state.done:
                self._run_step(step, state)

    def _key(self, state):
        """What decides the rest of the execution. Drops dead values from `env` first (values
        no unexecuted step reads and nobody fetches), so orders that differ only in them meet."""
        plan = self.plan
        done = state.done
        env = state.env
        for v in [v for v in env if v not in plan.fetches and not plan.consumers.get(v, 0) & ~done]:
            del env[v]
        fp = self._fingerprint
        return (done,
                tuple(sorted((v, fp(t._value)) for v, t in env.items())),
                tuple(sorted((u, fp(x)) for u, x in state.resources.items())),
                tuple(sorted((i, tuple(sorted((u, fp(x)) for u, x in snap.items())))
                             for i, snap in state.snapshots.items())))

    def _fingerprint(self, value):
        if value is None or value is DESTROYED:
            return value
        cached = self._fingerprints.get(id(value))
        if cached is not None:
            return cached[1]
        host = host_value(value)
        if isinstance(host, np.ndarray) and host.dtype != object:
            fp = (host.dtype.str, host.shape, host.tobytes())
        elif isinstance(host, ResourceHandle):
            fp = ("resource", host.uid)
        else:
            fp = ("object", id(value))  # kept alive by the cache, so the id stays unique
        self._fingerprints[id(value)] = (value, fp)
        return fp

    def _outcome(self, state) -> Outcome:
        plan = self.plan
        fetched = tuple(plain_value(plan.base[v] if v in plan.base else state.env[v])
                        for v in plan.program.fetches)
        variables = tuple((self.info[u].name, plain_value(x))
                          for u, x in sorted(state.resources.items()))
        return Outcome(fetched, variables)

    def _meet(self, handle, resources):
        """Records the real resource's current value the first time the search meets it (a
        private copy: the explorer never reads or writes the real storage again)."""
        uid = handle.uid
        if uid in resources:
            return
        device = handle.device
        if not device.inline:
            device.synchronize()  # writes queued on its stream (a pending initial assign) land
        storage = device.resources.lookup(uid)
        if storage is None:
            resources[uid] = DESTROYED
            self.info[uid] = _ResourceInfo(handle.name, handle.var_dtype, handle.var_shape, True)
            return
        with storage.lock:
            value = storage.value
            resources[uid] = None if value is None else np.array(host_value(value), copy=True)
        self.info[uid] = _ResourceInfo(handle.name, storage.dtype, storage.shape,
                                       storage.validate_shape)

    # -- steps -----------------------------------------------------------------------------------
    def _inputs(self, node, state):
        base, env = self.plan.base, state.env
        return [base[v] if v in base else env[v] for v in node.inputs]

    def _run_step(self, step, state):
        node = step.node
        op_def = node.op_def
        kind = step.kind
        inputs = self._inputs(node, state)
        if kind == _UPDATE_READ:
            for i in op_def.resource_inputs:
                self._meet(inputs[i]._value, state.resources)
            state.snapshots[step.index] = {inputs[i]._value.uid: state.resources[
                inputs[i]._value.uid] for i in op_def.resource_inputs}
            state.done |= 1 << step.index
            return
        if kind == _SILENT:
            op_def.infer(*inputs, **node.attrs)  # what the kernel would reject; prints nothing
            state.done |= 1 << step.index
            return
        if kind == _SAMPLE:
            key = (step.index, tuple(self._fingerprint(t._value) for t in inputs))
            out = self.samples.get(key)
            if out is None:
                out = self.samples[key] = self._run_kernel(node, inputs)
            self._store(node, out, state)
        elif kind == _PURE:
            self._store(node, self._run_kernel(node, inputs), state)
        else:
            self._run_resource_step(step, inputs, state)
        state.done |= 1 << step.index

    def _run_kernel(self, node, inputs):
        return _dispatch.run_kernel(node.op_def, inputs, node.attrs, self._cpu)

    def _store(self, node, out, state):
        if len(node.outputs) == 1 and node.op_def.num_outputs == 1:
            state.env[node.outputs[0]] = out
        else:
            state.env.update(zip(node.outputs, out))

    def _run_resource_step(self, step, inputs, state):
        """A read, a blind write or an update's compute-and-write: the real kernel on private
        storages holding the state's values (the update's snapshot for its write), then the
        written resources' new values stored back into the state."""
        node = step.node
        op_def = node.op_def
        if step.kind == _UPDATE_WRITE:
            values = state.snapshots.pop(step.index - 1)
        else:
            for i in op_def.resource_inputs:
                self._meet(inputs[i]._value, state.resources)
            values = {inputs[i]._value.uid: state.resources[inputs[i]._value.uid]
                      for i in op_def.resource_inputs}
        writes = step.kind != _READ
        manager = _SimulatedResources()
        devices = {}
        simulated = list(inputs)
        for i in op_def.resource_inputs:
            real = inputs[i]
            h = real._value
            if manager.lookup(h.uid) is None and values[h.uid] is not DESTROYED:
                info = self.info[h.uid]
                storage = VariableStorage(info.dtype, info.shape, info.validate_shape)
                value = values[h.uid]
                # Reads never modify the array; writes get a copy they may update in place.
                storage.value = value.copy() if writes and value is not None else value
                manager.install(h.uid, storage)
            device = devices.get(id(h.device))
            if device is None:
                device = devices[id(h.device)] = _SimulatedDevice(h.device, manager)
            handle = ResourceHandle(h.uid, device, h.kind, h.name, h.var_dtype, h.var_shape)
            # A tensor on the host (see `_on_host`), as `real` is.
            simulated[i] = wrap_value(handle, real._meta.device, _dt.resource)
        out = self._run_kernel(node, simulated)
        if op_def.num_outputs != 0 and node.outputs:
            self._store(node, out, state)
        if writes:
            for i in op_def.resource_writes:
                uid = inputs[i]._value.uid
                storage = manager.lookup(uid)
                state.resources[uid] = DESTROYED if storage is None else storage.value


# -- entry point -----------------------------------------------------------------------------------
def allowed_outcomes(function_or_graph, *args, max_states=100_000, random_ops="error",
                     **kwargs) -> frozenset:
    """The set of `Outcome`s TensorFlow's resource-variable semantics allows for one call.

    `function_or_graph` is one of:

    * a ConcreteFunction (`eager.function(f).get_concrete_function(...)`), with `args` /
      `kwargs` the call's arguments, bound as a call binds them;
    * an `eager.function` Function: its concrete function for these arguments;
    * a `Graph` (e.g. built with `Graph(auto_control_deps=False)`, so only the edges its builder
      added order its ops), with `args` the values of its non-capture inputs in order; captures
      are bound to the values they captured; fetches are `graph.outputs`;
    * a `Program`, with `args` the values of its feeds.

    Every node of the program runs (as `run_program` runs them). The real variables are read
    once and never changed. `max_states` bounds the search (ValueError beyond it);
    `random_ops` is "error" or "fixed_sample" (see the module doc)."""
    if random_ops not in ("error", "fixed_sample"):
        raise ValueError(f"allowed_outcomes: random_ops must be 'error' or 'fixed_sample', got "
                         f"{random_ops!r}.")
    if max_states < 1:
        raise ValueError(f"allowed_outcomes: max_states must be positive, got {max_states}.")
    program, feed_values = _program_and_feeds(function_or_graph, args, kwargs)
    cpu = _registry.lookup("CPU:0")
    plan = _Plan(program, feed_values, random_ops, cpu)
    return _Explorer(plan, max_states, cpu).run()


def _program_and_feeds(target, args, kwargs):
    if isinstance(target, Program):
        _no_kwargs(kwargs, "a Program")
        return target, _converted(target, args)
    if isinstance(target, Graph):
        _no_kwargs(kwargs, "a Graph")
        program = Program.from_graph(target, constants={ph: value
                                                        for value, ph in target.captures})
        return program, _converted(program, args)
    if not hasattr(target, "captured_inputs") and hasattr(target, "get_concrete_function"):
        target = target.get_concrete_function(*args, **kwargs)
    if hasattr(target, "captured_inputs") and hasattr(target, "check_arguments"):
        graph = target.graph
        tensors = target.check_arguments(target._binder.bind(args, kwargs))
        captured = target.captured_inputs
        n_args = len(graph.inputs) - len(captured)
        program = Program.from_graph(graph, feeds=graph.inputs[:n_args],
                                     constants=dict(zip(graph.inputs[n_args:], captured)))
        return program, list(tensors)
    raise TypeError(f"allowed_outcomes: expected a ConcreteFunction, Function, Graph or Program, "
                    f"got {type(target).__name__}.")


def _no_kwargs(kwargs, what):
    if kwargs:
        raise TypeError(f"allowed_outcomes: keyword arguments {sorted(kwargs)} are only for "
                        f"functions; {what} takes its feed values positionally.")


def _converted(program, args) -> list:
    if len(args) != len(program.feeds):
        raise ValueError(f"allowed_outcomes: program {program.name!r} has {len(program.feeds)} "
                         f"feeds ({', '.join(program.describe_value(v) for v in program.feeds)})"
                         f"; {len(args)} values were given.")
    values = []
    for v, value in zip(program.feeds, args):
        spec = program.specs.get(v)
        values.append(convert_to_tensor(value, dtype=spec.dtype if spec is not None else None))
    return values
