"""Compiled backward passes for eager gradient tapes: a training loop's tape, planned once.

An eager training step records the same ops on the same shapes every step, and its backward
walk (`eager.autodiff.tape_backward.walk`) then calls the same gradient rules, which dispatch the
same ops, step after step: tens of microseconds of Python per op that decide nothing new. This
module removes that cost the way a traced function's compiled plan does, without asking the
user to trace anything:

1. **Key.** The *structure* of the tape (of its pruned walk, where the whole tape cannot be
   keyed): each record's signature, made while recording (`eager.autodiff.tape`: its op,
   attributes, input and output shapes and dtypes, and how records connect, as tape ids
   renumbered in order of first appearance), plus the seeds' shapes and dtypes and which
   sources are asked for. Values never enter the key.
2. **Plan.** The second time a structure is seen (a single gradient call never pays for
   compilation), the walk is traced into a graph: every tensor the records kept, and every
   seed, becomes a placeholder (a one-element target's default seed, a constant); proxy
   records carry them, so the same gradient rules run through dispatch and are recorded as
   graph ops. The graph becomes a `Program` fed the kept tensors and seeds and fetching the
   gradients, optimised (constant folding, CSE, broadcast and identity bypassing, fusion) and
   compiled to straight-line Python (`compiler.compile_program`).
3. **Run.** Later walks with the same structure feed the records' kept tensors to the plan.
   The usual call (one target, its default seed, one source) looks its plan up with the key
   built directly (`_plan_scalar_target`), without the general path's seed objects and lists.

Jacobians (`tape_backward.backward_batched`) use the same trace with seeds that carry a batch
axis: the program is vectorised over it (`vectorize`) and compiled at first sight, since one
batched run replaces a backward pass per row.

The plan runs the same kernels on the same values in the same order as the walk (passes never
change a value; fusion calls the same ufuncs), so gradients are equal. The walk is used, and
nothing is planned, whenever the plan could differ from it in more than speed:

* another tape is active on the thread (it must record the backward: higher order), or a graph
  is being traced, or execution is asynchronous, or the profiler is on (each op must be seen);
* a record has no op (custom gradients and function calls run arbitrary Python), an op has no
  gradient, or an op's gradient re-runs user code (control flow);
* a seed is not an eager tensor (a pending one, say);
* attributes are unhashable;
* a rule cannot be traced (it needs a value, not just a shape): the structure is remembered
  as unplannable and always walks.

The cache holds at most `MAX_PLANS` structures (oldest dropped first), and plans hold no
tensors: only op definitions, attributes, and constants made from shapes (by the rules, and
the one-element seeds).

Compiling a plan costs milliseconds (an MLP's backward: about 5 ms); it pays for itself after
tens of steps. A workload whose structures rarely repeat (shapes that change every step or
two) would compile and hardly run: once `COMPILE_GUARD` plans have been compiled, a new one is
compiled only while plan runs are at least `MIN_RUNS_PER_PLAN` times the plans compiled; below
that, new structures walk (existing plans still run) until reuse catches up.
"""

from __future__ import annotations

import operator
import threading

from ..core.context import per_thread
from ..base import profile_events as _profile_events
from ..autodiff import tape_backward as _tape_backward
from ..autodiff.tape_backward import OnesSeed
from ..autodiff.tape import (BACKWARD, INPUT_IDS, KEPT_INPUTS, KEPT_OUTPUTS, OP, OUTPUT_IDS,
                             SIGNATURE, op_backward)
from ..graph import Graph, SymbolicTensor, building_apart
from ..ops.array_ops import broadcast_to
from ..tensor import EagerTensor, IndexedSlices
from ..core.tensor_conversion import convert_to_tensor
from ..devices import registry as _registry
from .compiler import compile_program
from .passes import optimize
from .program import Program
from .vectorize import vectorize

__all__ = ["enabled", "set_enabled", "plan_count", "clear", "MAX_PLANS", "COMPILE_GUARD",
           "MIN_RUNS_PER_PLAN"]

#: Structures remembered (plans and unplannable marks); the oldest is dropped beyond this.
MAX_PLANS = 256
#: Plans compiled before reuse is checked, and the runs per compiled plan required after that.
COMPILE_GUARD = 32
MIN_RUNS_PER_PLAN = 4

_UNPLANNABLE = object()  # a structure whose walk cannot be traced
_signature = operator.itemgetter(SIGNATURE)  # a record's part of a whole tape's key
_SEEN_ONCE = object()  # a structure seen once: planned if it comes again


class _State:
    __slots__ = ("enabled", "cache", "lock", "compiled", "runs")

    def __init__(self):
        self.enabled = True
        self.cache = {}  # key -> _Plan | _UNPLANNABLE | _SEEN_ONCE
        self.lock = threading.Lock()
        self.compiled = 0  # plans compiled, and plan runs, since the last clear()
        self.runs = 0


_state = _State()


def enabled() -> bool:
    """Whether eager backward passes use compiled plans (on by default)."""
    return _state.enabled


def set_enabled(on: bool) -> None:
    """Turns compiled backward plans on or off (off: every walk runs op by op)."""
    _state.enabled = bool(on)


def plan_count() -> int:
    """How many compiled plans the cache holds."""
    return sum(1 for v in list(_state.cache.values()) if v.__class__ is _Plan)


def clear() -> None:
    """Forgets every structure and plan (and the reuse counts of the compile guard)."""
    with _state.lock:
        _state.cache.clear()
        _state.compiled = _state.runs = 0


class _Plan:
    """A compiled walk: where its feeds come from, and how its fetches form the gradients."""

    __slots__ = ("run", "kept_slots", "structure", "dense")

    def __init__(self, run, kept_slots, structure):
        self.run = run  # CompiledProgram: (feed values, st) -> fetched values
        # Per kept feed: (record index, KEPT_INPUTS or KEPT_OUTPUTS, position).
        self.kept_slots = kept_slots
        self.structure = structure  # per source: None, (False, i) or (True, i, has_shape)
        # Whether the fetches are the gradients themselves: every source connected and dense
        # (the usual call), so no structure needs walking after a run.
        self.dense = all(form is not None and not form[0] and form[1] == i
                         for i, form in enumerate(structure))


def _plan_or_walk(tape, grads, source_ids, source_set):
    """The planner `tape_backward.backward` asks (see `tape_backward.set_planner`): gradients
    from a compiled plan, or None to walk.

    The key is first taken over the whole tape (the signatures its entries made while
    recording, connected by the links the tape numbered): pruning is a function of the tape's
    structure, the targets and the sources, which the key holds, so a plan found this way
    skips pruning too. A tape with an entry that cannot be keyed (a custom gradient, say) is
    pruned first and keyed over the walk's entries only, as that entry may be off the path.

    Hot: once per gradient call of every training step, and most of a small gradient's cost.
    """
    st = _plannable_state()
    if st is None:
        return None
    entries = tape.entries
    key = None
    if tape.keyed:
        key, seeds = _finish_key(list(map(_signature, entries)), tape.numbers, grads,
                                 source_ids)
    fed_from, need = entries, None
    if key is None:
        fed_from, need = _tape_backward.prune(entries, source_set, grads)
        key, seeds = _key(fed_from, grads, source_ids, "walk")
        if key is None:
            return None
    plan = _cached(key)
    if plan.__class__ is not _Plan:
        plan = _sighted(plan, key, entries, fed_from, need, grads, source_ids, source_set)
        if plan is None:
            return None
    return _results(plan, _run(plan, fed_from, seeds, st))


def _plan_scalar_target(tape, target, source_id):
    """The planner of the usual call (`tape_backward.backward_single_source`: one target with
    its default seed, one source) when its target has one element: the gradients from a plan
    the cache holds for the whole tape, or None to go the general way (`_plan_or_walk`: no plan
    yet, a tape that cannot be keyed whole, another target). Its key is the one
    `_plan_or_walk` would make, built without the general path's lists and seeds. Hot: a tiny
    gradient's whole lookup."""
    if not tape.keyed or target.__class__ is not EagerTensor or target._value.size != 1:
        return None
    st = _plannable_state()
    numbers = tape.numbers
    number = numbers.get(target._tape_id)
    if st is None or number is None:
        return None
    entries = tape.entries
    key = (*map(_signature, entries), _constant_seed_part(number, target),
           (numbers.get(source_id, -1),))
    plan = _cached(key)
    if plan.__class__ is not _Plan:
        return None
    values = _run(plan, entries, (), st)
    return values if plan.dense else _results(plan, values)


def _results(plan, values) -> list:
    """The gradients, per source, from a plan's fetched `values`."""
    if plan.dense:
        return values
    results = []
    for form in plan.structure:
        if form is None:
            results.append(None)
        elif form[0]:
            i = form[1]
            results.append(IndexedSlices(values[i], values[i + 1],
                                         values[i + 2] if form[2] else None))
        else:
            results.append(values[form[1]])
    return results


def _sighted(cached, key, entries, fed_from, need, grads, source_ids, source_set):
    """What a structure that has no plan yet gets: remembered at first sight, compiled at the
    second (unless the compile guard says plans are not being reused); None to walk."""
    if cached is None:
        _remember(key, _SEEN_ONCE)
        return None
    if cached is _UNPLANNABLE:
        return None
    state = _state
    if state.compiled >= COMPILE_GUARD and state.runs < MIN_RUNS_PER_PLAN * state.compiled:
        return None  # plans are not being reused enough to pay for another compilation
    if fed_from is entries:  # keyed over the whole tape: prune for the trace
        needed, need = _tape_backward.prune(entries, source_set, grads)
        plan = _make_plan(needed, grads, source_ids, source_set, need, entries)
    else:  # keyed over the pruned walk, `fed_from`
        plan = _make_plan(fed_from, grads, source_ids, source_set, need)
    state.compiled += 1
    _remember(key, plan)
    return None if plan is _UNPLANNABLE else plan


def _plannable_state():
    """This thread's state when a backward pass may use a plan now, else None (module doc:
    another tape recording, a graph being traced, async execution, the profiler)."""
    if not _state.enabled:
        return None
    st = per_thread.state  # (`context.thread_state()`, without its call: hot)
    if st.tapes or st.interpreter is not None or _profile_events.RECORDER.active:
        return None
    return st


def _cached(key):
    """The cache's entry for `key` (a plan or a mark), or None if it has none; the
    unplannable mark for an unhashable key (an attribute value that cannot be hashed)."""
    try:
        return _state.cache.get(key)
    except TypeError:
        return _UNPLANNABLE


def _run(plan, entries, seeds, st):
    """The plan's fetched values, fed the entries' kept tensors and the seeds."""
    _state.runs += 1
    feeds = []
    for index, kept, position in plan.kept_slots:
        feeds.append(entries[index][kept][position])
    feeds.extend(seeds)
    return plan.run(feeds, st)


def _remember(key, value):
    cache = _state.cache
    with _state.lock:
        cache[key] = value
        while len(cache) > MAX_PLANS:
            del cache[next(iter(cache))]


def _key(entries, grads, source_ids, kind):
    """(structure key, seeds in key order), or (None, None) when the walk is not plannable.
    `kind` says what `entries` are ("walk" or "batched": a pruned walk's; a whole tape is
    keyed by its entries' signatures, with no kind) and starts the key, as a plan
    finds its feeds by position in them."""
    idmap = {0: 0}
    parts = [kind]
    for record in entries:
        op = record[OP]
        if record[BACKWARD] is not op_backward or op.gradient is None or op.replay is not None:
            return None, None
        connections = []  # input then output ids, renumbered (loops: no comprehension frames)
        for i in record[INPUT_IDS]:
            number = idmap.get(i)
            if number is None:
                number = idmap[i] = len(idmap)
            connections.append(number)
        connections.append(-1)
        for i in record[OUTPUT_IDS]:
            number = idmap.get(i)
            if number is None:
                number = idmap[i] = len(idmap)
            connections.append(number)
        signature = record[SIGNATURE]
        count = len(connections) - 1
        parts.append((op, signature[1], *connections, *signature[3 + count:]))
    return _finish_key(parts, idmap, grads, source_ids)


def _finish_key(parts, numbers, grads, source_ids):
    """The key's end, shared by whole-tape keys (`_plan_or_walk`) and `_key`: each seed (its
    target's number, shape and dtype) and the sources' numbers (-1: never seen); (None, None)
    when a target is not on the tape or a seed is not an eager tensor. A target's default seed
    (`OnesSeed`) of one element becomes a constant of the plan (its device is in the key, and
    it is no feed); a larger one is made here, in `grads` (module doc)."""
    seeds = []
    for tid, gs in grads.items():
        number = numbers.get(tid)
        if number is None:
            return None, None
        for i, g in enumerate(gs):
            if g.__class__ is OnesSeed:
                target = g.target
                if target.__class__ is not EagerTensor:
                    return None, None
                if target._value.size == 1:
                    parts.append(_constant_seed_part(number, target))
                    continue
                g = gs[i] = _tape_backward.ones_seed(target)
            elif g.__class__ is not EagerTensor:
                return None, None
            parts.append((number, g._value.shape, g._meta.dtype))
            seeds.append(g)
    parts.append(tuple([numbers.get(s, -1) for s in source_ids]))
    return tuple(parts), seeds


def _constant_seed_part(number, target) -> tuple:
    """The key's part for the default seed of `target`, a one-element eager tensor numbered
    `number` on the tape: a constant of the plan, so its device is part of the key."""
    meta = target._meta
    return number, target._value.shape, meta.dtype, meta.device


def _make_plan(needed, grads, source_ids, source_set, need, entries=None):
    """Traces the walk over `needed` into a graph with the kept tensors and the seeds as
    placeholders, and compiles it (module doc, step 2); `_UNPLANNABLE` if a rule cannot be
    traced. With `entries` (the whole tape `needed` was pruned from), the plan's feeds are
    found by position in `entries` rather than in `needed`."""
    _report_earlier_failures()
    try:
        program, kept_slots, _, structure = _trace(needed, grads, source_ids, source_set,
                                                   need)
        run = compile_program(optimize(program))
    except Exception:  # noqa: BLE001 - a rule that needs values, not shapes: always walk
        return _UNPLANNABLE
    if entries is not None:
        position = {id(record): index for index, record in enumerate(entries)}
        kept_slots = tuple((position[id(needed[index])], kept, slot)
                           for index, kept, slot in kept_slots)
    return _Plan(run, kept_slots, structure)


def _report_earlier_failures():
    """Synchronizes the devices whose kernels run later (once per compiled plan: rare), so
    that a kernel failure still queued there is raised to the caller now. Inside the trace a
    captured constant's read would report it, and `_make_plan` would take it for a rule that
    cannot be traced: the error lost and the failed kernel's output used as a value."""
    if _registry.is_initialized():
        for device in _registry.devices():
            if not device.inline:
                device.synchronize()


def _trace(needed, grads, source_ids, source_set, need, batch=0):
    """(program, kept slots, number of seeds, structure) for the walk over `needed`: the
    program is fed the kept tensors then the seeds and fetches the flat gradients (unoptimised).
    With `batch`, each seed in `grads` has a leading axis of that size which the traced seed
    placeholders leave out (the caller vectorises the program)."""
    graph = Graph("eager_backward", auto_control_deps=False)
    kept_slots, kept_phs = [], []
    by_tape_id = {}
    proxies = []
    # The default seeds the plan holds as constants (`_finish_key`), made eagerly: inside the
    # graph, a seed on a device whose ones need an op would become a graph op.
    constant_seeds = {id(g): _tape_backward.ones_seed(g.target)
                      for gs in grads.values() for g in gs if g.__class__ is OnesSeed}
    with building_apart(graph):
        for index, record in enumerate(needed):
            op, attrs, backward, input_ids, output_ids, inputs, outputs, signature = record
            inputs = _stand_ins(graph, inputs, input_ids, index, KEPT_INPUTS,
                                by_tape_id, kept_slots, kept_phs)
            outputs = _stand_ins(graph, outputs, output_ids, index, KEPT_OUTPUTS,
                                 by_tape_id, kept_slots, kept_phs)
            proxies.append((op, attrs, backward, input_ids, output_ids, inputs, outputs,
                            signature))
        seed_phs = []
        proxy_grads = {}
        for tid, gs in grads.items():
            proxies_of_seeds = proxy_grads[tid] = []
            for g in gs:
                if g.__class__ is OnesSeed:
                    proxies_of_seeds.append(graph.capture(constant_seeds[id(g)]))
                    continue
                ph = graph.placeholder(g.dtype, g.shape[1:] if batch else g.shape, name="seed")
                proxies_of_seeds.append(ph)
                seed_phs.append(ph)
        results = _tape_backward.walk(proxies, proxy_grads, source_ids, source_set, need)
        if batch:  # Jacobian rows are dense: densified here, the densifying op vectorised
            results = [convert_to_tensor(g) if g.__class__ is IndexedSlices else g
                       for g in results]
        flat, structure = [], []
        for grad in results:
            if grad is None:
                structure.append(None)
            elif grad.__class__ is IndexedSlices:
                has_shape = grad.dense_shape is not None
                structure.append((True, len(flat), has_shape))
                flat.extend([grad.values, grad.indices])
                if has_shape:
                    flat.append(convert_to_tensor(grad.dense_shape))
            else:
                structure.append((False, len(flat)))
                flat.append(grad)
        fetches = [t if t.__class__ is SymbolicTensor else graph.capture(t) for t in flat]
    fed = {id(t) for t in kept_phs} | {id(t) for t in seed_phs}
    constants = {ph: value for value, ph in graph.captures if id(ph) not in fed}
    program = Program.from_graph(graph, feeds=[*kept_phs, *seed_phs], fetches=fetches,
                                 targets=(), constants=constants)
    return program, tuple(kept_slots), len(seed_phs), tuple(structure)


# -- batched walks: Jacobians ------------------------------------------------------------------


class _BatchedPlan(_Plan):
    """A compiled walk vectorised over its seeds' leading axis (`vectorize`): one run gives the
    gradients for every row of the seeds. Its `structure` has, per source, None or (fetch
    index, whether it is batched). (A class of its own: `plan_count` counts unbatched plans.)"""

    __slots__ = ()


def _plan_batched(needed, grads, source_ids, source_set, need, batch):
    """The batch planner `tape_backward.backward_batched` asks: per source, the gradients for
    all `batch` rows of the seeds as one tensor [batch, *source shape] (None where
    unconnected), or None to run the rows one by one. Compiled at first sight: a batched walk
    replaces `batch` walks."""
    st = _plannable_state()
    if st is None:
        return None
    key, seeds = _key(needed, grads, source_ids, "batched")
    if key is None:
        return None
    plan = _cached(key)
    if plan is None:
        plan = _make_batched_plan(needed, grads, source_ids, source_set, need, batch)
        _remember(key, plan)
    if plan is _UNPLANNABLE:
        return None
    values = _run(plan, needed, seeds, st)
    results = []
    for form in plan.structure:
        if form is None:
            results.append(None)
        else:
            value = values[form[0]]
            results.append(value if form[1] else _repeat(value, batch))
    return results


def _make_batched_plan(needed, grads, source_ids, source_set, need, batch):
    try:
        program, kept_slots, n_seeds, structure = _trace(needed, grads, source_ids,
                                                         source_set, need, batch)
        vectorized = vectorize(program, program.feeds[len(program.feeds) - n_seeds:], batch)
        if vectorized is None:
            return _UNPLANNABLE
        program, batched = vectorized
        run = compile_program(optimize(program))
    except Exception:  # noqa: BLE001 - as _make_plan
        return _UNPLANNABLE
    forms = tuple(None if form is None else (form[1], program.fetches[form[1]] in batched)
                  for form in structure)
    return _BatchedPlan(run, kept_slots, forms)


def _repeat(value, batch):
    """An unbatched gradient (the same for every row) with the batch axis."""
    return broadcast_to(value, [batch, *value.shape])


def _stand_ins(graph, tensors, tape_ids, index, kept, by_tape_id, kept_slots, kept_phs):
    """Placeholders for a record's kept tensors (`tensors`, at position `kept` of record
    `index`; None stays None). One placeholder per tape id, so a tensor kept by several records
    is fed once; untracked tensors (id 0) each get their own, as their identity is not part of
    the key."""
    stand_ins = []
    for position, (t, tid) in enumerate(zip(tensors, tape_ids)):
        if t is None:
            stand_ins.append(None)
            continue
        ph = by_tape_id.get(tid) if tid else None
        if ph is None:
            ph = graph.placeholder(t.dtype, t.shape, name="kept")
            kept_slots.append((index, kept, position))
            kept_phs.append(ph)
            if tid:
                by_tape_id[tid] = ph
        stand_ins.append(ph)
    return tuple(stand_ins)


_tape_backward.set_planner(_plan_or_walk, _plan_batched, _plan_scalar_target)
