"""The backward pass: from a tape's entries, gradients of targets with respect to sources.

1. Prune: keep the entries on some path from a source to a target (forward reachability from
   the sources, then backward need from the targets).
2. Walk them in reverse execution order; each entry's gradient function maps the gradients of
   its outputs to gradients of its inputs. Gradients reaching one tensor from several consumers
   are summed, lazily, when the tensor's producer is processed.

A planner (`set_planner`) may answer step 2 instead, with a compiled plan of the same walk
(`eager.runtime.tape_backward_plans`: a training loop's tape has the same structure every step).

Gradient functions are written with ops, so the backward pass runs through dispatch like any
other code: an outer tape records it, which is how higher-order derivatives work.
"""

from __future__ import annotations

import numpy as np

from ..base.dtypes import int64, variant
from ..base.errors import UnimplementedError
from ..base.tensor_shape import TensorShape
from ..ops.math_ops import cast
from ..ops.array_ops import concat
from ..ops.creation_ops import ones_like, zeros, zeros_like
from ..ops.grad_utils import zeros_of_shape
from ..ops.list_grad import add_list_gradients
from ..tensor import EagerTensor, IndexedSlices
from ..core.tensor_conversion import convert_to_tensor
from .tape import INPUT_IDS, OUTPUT_IDS, RecordedOp

__all__ = ["backward", "backward_single_source", "backward_batched", "prune", "walk", "aggregate",
           "set_planner", "NotRecomputableError", "OnesSeed", "ones_seed", "make_seeds"]


class NotRecomputableError(UnimplementedError, LookupError):
    """An op has no gradient made of ops here: its gradient would have to run a stateful
    computation again (a control-flow branch, a traced custom-gradient function), or accumulate
    what a TensorList cannot hold. Also a LookupError, like the backward pass's error for an op
    with no gradient function, so that callers which fall back to replaying the ops actually
    run (a function's derived gradient) do so."""


def aggregate(grads):
    """Sum of a list of gradients: IndexedSlices stay sparse when all are sparse."""
    if grads is None:
        return None
    if len(grads) == 1:
        return grads[0]
    if grads[0].dtype is variant:  # TensorList gradients: summed element by element
        return add_list_gradients(grads)
    if all(isinstance(g, IndexedSlices) for g in grads):
        indices = [g.indices for g in grads]
        if len({i.dtype for i in indices}) > 1:  # int32 and int64 indices: widen, as TF does
            indices = [cast(i, int64) for i in indices]
        return IndexedSlices(concat([g.values for g in grads], 0), concat(indices, 0),
                             grads[0].dense_shape)
    total = None
    for g in grads:
        if g.__class__ is IndexedSlices:
            g = convert_to_tensor(g)
        total = g if total is None else total + g  # the operator: its fast path when eager
    return total


class OnesSeed:
    """A target's default seed, d target / d target (ones shaped like it), not made yet: a
    compiled plan may hold it as a constant (`eager.runtime.tape_backward_plans`), and only a
    walk needs the tensor (`ones_seed`)."""

    __slots__ = ("target",)

    def __init__(self, target):
        self.target = target


def ones_seed(t):
    """d target / d target: ones. Made directly for an eager tensor on an inline device (it is a
    constant; nothing needs recording; a new tensor each time, as a caller may watch it), else
    by the ones_like op. A scalar target's seed holds a shared read-only 0-d array of one
    (`_SCALAR_ONES`): numpy multiplies a 0-d array into an array faster than a numpy scalar,
    and nothing writes into a read-only operand."""
    if t.__class__ is EagerTensor:
        meta = t._meta
        if meta.device.inline:
            value = t._value
            seed = EagerTensor()
            if value.ndim == 0:
                one = _SCALAR_ONES.get(value.dtype)
                seed._value = _scalar_one(value.dtype) if one is None else one
            else:
                seed._value = meta.device.xp.ones_like(value)
            seed._meta = meta  # same dtype, same device
            seed._tape_id = 0
            return seed
    return ones_like(t)


def make_seeds(grads) -> None:
    """Replaces every `OnesSeed` in `grads` (tensor id -> list of seeds) by its tensor."""
    for gs in grads.values():
        for i, g in enumerate(gs):
            if g.__class__ is OnesSeed:
                gs[i] = ones_seed(g.target)


_SCALAR_ONES = {}  # numpy dtype -> read-only 0-d array of 1


def _scalar_one(dtype):
    one = np.ones((), dtype)
    one.flags.writeable = False
    _SCALAR_ONES[dtype] = one
    return one


def _no_gradient_error(entry):
    name = entry.name
    return LookupError(f"No gradient defined for operation '{name}' (op type: {name}). Register "
                       f"one with the op record's def_gradient, or wrap the computation in "
                       f"eager.stop_gradient if it should not be differentiated.")


def set_planner(planner, batch_planner=None, single_source_planner=None) -> None:
    """Installs `planner(tape, grads, source_ids, source_set)`, asked before every backward
    walk whether it can produce the gradients faster (a compiled plan of the same walk;
    `eager.runtime.tape_backward_plans` installs one). It sees the whole tape, unpruned (a plan may
    know the pruning already, and key it by the records' signatures), and `grads` maps each
    target's id to its seeds, a default one still an `OnesSeed` (the planner may replace it by
    its tensor, `ones_seed`). `batch_planner(needed, grads, source_ids, source_set, need,
    batch)` is asked by `backward_batched`; `single_source_planner(tape, target, source_id)`
    first, by `backward_single_source`. Each returns None to decline (the general planner,
    then the walk, which runs op by op, once per row for a batch). `set_planner(None)`
    uninstalls them. Autodiff never imports the runtime."""
    global _planner, _batch_planner, _single_source_planner
    _planner = planner
    _batch_planner = batch_planner
    _single_source_planner = single_source_planner


_planner = None
_batch_planner = None
_single_source_planner = None
_NO_SEED = (None,)


def backward_single_source(tape, target, source_id):
    """The gradient of one target, seeded with ones, with respect to one source:
    `backward(tape, (target,), (None,), (source_id,))[0]`. The usual call of a training step
    (a loss with respect to one tensor), which a plan found by `single_source_planner` may
    answer at once."""
    if _single_source_planner is not None:
        ids = tape.ids
        if target._tape_id in ids and source_id in ids:
            found = _single_source_planner(tape, target, source_id)
            if found is not None:
                return found[0]
    return backward(tape, (target,), _NO_SEED, (source_id,))[0]


def backward(tape, targets, target_grads, source_ids, on_ready=None):
    """Gradients (summed over targets) for each id in `source_ids`; None where unconnected.

    `targets` are tensors; `target_grads` the matching seed gradients (None means ones).
    Hot path of every training step: set operations instead of generator loops.

    `on_ready(source_id, gradient)`, when given, is called during the walk as soon as a
    source's gradient is final (no record left to walk reads the source), with the tensor this
    call returns for it: a data-parallel step starts all-reducing a bucket of gradients while
    the walk computes the next (DDP's gradient hooks). A compiled plan computes every gradient
    at once, so with `on_ready` the walk runs instead of the planner.
    """
    ids = tape.ids
    source_set = ids.intersection(source_ids)
    grads = {}
    for t, g in zip(targets, target_grads):
        tid = t._tape_id
        if tid not in ids:
            continue
        if g is None:
            g = OnesSeed(t)
        if tid in grads:
            grads[tid].append(g)
        else:
            grads[tid] = [g]
    if not source_set or not grads:
        return [None] * len(source_ids)
    if _planner is not None and on_ready is None:
        planned = _planner(tape, grads, source_ids, source_set)
        if planned is not None:
            return planned
    make_seeds(grads)
    needed, need = prune(tape.entries, source_set, grads)
    if on_ready is not None:
        return _walk_reporting(needed, grads, source_ids, source_set, need, on_ready)
    return walk(needed, grads, source_ids, source_set, need)


def backward_batched(tape, target, stacked_seeds, source_ids):
    """Gradients of `target` for each row of `stacked_seeds` (shaped [batch, *target shape]) at
    once: per source id, one tensor [batch, *source shape], None where unconnected; or None
    when no batch planner can vectorise this walk (the caller then runs `backward` per row,
    as Jacobians always may)."""
    ids = tape.ids
    tid = target._tape_id
    source_set = ids.intersection(source_ids)
    if tid not in ids or not source_set:
        return [None] * len(source_ids)
    if _batch_planner is None:
        return None
    grads = {tid: [stacked_seeds]}
    needed, need = prune(tape.entries, source_set, grads)
    return _batch_planner(needed, grads, source_ids, source_set, need,
                          stacked_seeds.shape[0])


def prune(records, source_set, grads):
    """The records (`eager.autodiff.tape`) on some path from a source to a target (a key of
    `grads`), in reverse execution order, and the set of tensor ids whose gradient is needed."""
    reach = set(source_set)
    live = []
    for record in records:
        if not reach.isdisjoint(record[INPUT_IDS]):
            live.append(record)
            reach.update(record[OUTPUT_IDS])
    reach.discard(0)
    need = set(grads)
    needed = []
    for record in reversed(live):
        if not need.isdisjoint(record[OUTPUT_IDS]):
            needed.append(record)
            need.update(reach.intersection(record[INPUT_IDS]))
    return needed, need


def walk(needed, grads, source_ids, source_set, need):
    """The backward walk over `needed` (records, from `prune`): each record's gradient function
    maps its outputs' gradients to its inputs' (seeing the record as a `RecordedOp`); `grads`
    (tensor id -> list of gradients, seeded with the targets') is consumed. Returns the summed
    gradient of each source id (None if none)."""
    for record in needed:
        _step(record, grads, source_set, need)
    return [aggregate(grads.get(s)) if s in source_set else None for s in source_ids]


def _walk_reporting(needed, grads, source_ids, source_set, need, on_ready):
    """`walk`, calling `on_ready(source_id, gradient)` for each source as soon as its gradient
    is final: after the last record that reads it (before the walk for a source no record
    reads, a target's own seed). The gradient reported is summed then and is what the walk
    returns for that source."""
    last_reader = {}  # source id -> index in `needed` of the last record reading it
    for k, record in enumerate(needed):
        for tid in record[INPUT_IDS]:
            if tid in source_set:
                last_reader[tid] = k
    finishing = {}
    for sid, k in last_reader.items():
        finishing.setdefault(k, []).append(sid)

    def report(sids):
        for sid in sids:
            g = grads.get(sid)
            if g is not None:
                total = aggregate(g)
                grads[sid] = [total]
                on_ready(sid, total)

    report([sid for sid in source_set if sid not in last_reader])
    for k, record in enumerate(needed):
        _step(record, grads, source_set, need)
        if k in finishing:
            report(finishing[k])
    return [aggregate(grads.get(s)) if s in source_set else None for s in source_ids]


def _step(record, grads, source_set, need):
    """One record of the walk: its outputs' gradients (consumed, a source's kept) through its
    gradient function, added to its inputs'."""
    out_grads = []
    missing = False
    for o in record[OUTPUT_IDS]:
        g = grads.get(o) if o in source_set else grads.pop(o, None)
        if g is None:
            missing = True
        elif len(g) == 1:
            g = g[0]
        else:
            g = aggregate(g)
        out_grads.append(g)
    if missing and all(g is None for g in out_grads):
        return
    entry = RecordedOp(record)
    if missing:
        _fill_unused(entry, out_grads)
    op = entry.op
    if op is not None and op.gradient is None:
        raise _no_gradient_error(entry)
    input_ids = entry.input_ids
    entry.input_needed = tuple([i in need for i in input_ids])
    in_grads = entry.backward(entry, *out_grads)
    if in_grads.__class__ is not tuple and in_grads.__class__ is not list:
        in_grads = (in_grads,)
    if len(in_grads) != len(input_ids):
        raise ValueError(f"The gradient of {entry.name} returned {len(in_grads)} gradients "
                         f"for {len(input_ids)} inputs.")
    for tid, g in zip(input_ids, in_grads):
        if g is not None and tid in need:
            if tid in grads:
                grads[tid].append(g)
            else:
                grads[tid] = [g]


def _fill_unused(entry, out_grads):
    """An unused output of a multi-output op gets a zero gradient, as in TensorFlow, flagged so
    that rules can drop its terms (`grad_utils.output_unused`)."""
    filled = [False] * len(out_grads)
    for k, g in enumerate(out_grads):
        if g is None:
            dtype = entry.output_dtypes[k]
            if dtype is variant:  # a list's zero gradient is built by its op's rule
                pass
            elif not dtype._inexact:
                # An integer output (an index, a loop counter) carries no gradient; rules only
                # need a placeholder, and its shape may be unknown while tracing.
                out_grads[k] = zeros((), dtype)
            else:
                shape = entry.output_shapes[k]
                kept = entry.outputs[k] if entry.outputs else None
                if (kept is not None and isinstance(shape, TensorShape)
                        and not shape.is_fully_defined()):
                    out_grads[k] = zeros_like(kept)  # a traced output of unknown shape
                else:
                    out_grads[k] = zeros_of_shape(shape, dtype)
            filled[k] = True
    entry.output_filled = tuple(filled)
