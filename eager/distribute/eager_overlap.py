"""Eager data-parallel steps all-reduce each gradient bucket while the backward pass computes
the next (PyTorch DDP's gradient hooks, on eager's tape).

A traced step gets this from the runtime's `overlap_collectives` pass. An eager step computes
its gradients in `tape.gradient` and reduces them in `apply_gradients`, after the whole
backward pass. Here the strategy asks the tape (`gradient_tape.set_gradient_ready_hook`) to
report each distributed variable's gradient as soon as it is final; when the last gradient of
a bucket arrives, the bucket's `CollectiveReduceNStart` is issued at once, and the walk goes on
computing the earlier layers' gradients while the engine's communication thread exchanges it.
`batch_reduce_to` then finds those buckets started and only waits for them
(`CollectiveReduceNDone`).

Order, which collectives must keep on every worker: the starts are ops, issued in the walk's
order (the same program gives the same walk on every worker) through dispatch, so in async
mode they queue on the executor behind everything issued before them instead of overtaking
it. The buckets are the ones `batch_reduce_to` plans for the same gradients (the sources'
order, shapes and dtypes, the same plan), each reduced by SUM as the optimizers ask.

When the gradients handed to `apply_gradients` are not the ones reported (clipped, scaled,
reordered, a sparse one), a started bucket is waited for and its result dropped, and the
gradients given are reduced as usual: every worker runs the same program, so every worker drops
the same buckets. Started buckets no reduction of as many values by SUM asks for are waited for
and dropped at the strategy's next backward pass.

When: eagerly, in a replica context of a strategy with one replica in this process whose
cross-process engine starts calls on its own thread (`collective_ops.overlaps`: MPI with
overlap on). The walk runs then instead of a compiled backward plan, which computes every
gradient at once.
"""

from __future__ import annotations

from ..autodiff import gradient_tape as _gradient_tape
from ..core import context as _core
from ..core.dispatch import execute
from ..ops import collective_ops
from ..tensor import IndexedSlices, Tensor
from . import buckets as _buckets
from . import context as _ctx
from .reduce_util import ReduceOp

__all__ = ["StartedGradients", "take_started"]


class StartedGradients:
    """One backward pass's gradient buckets, started as their gradients became final."""

    __slots__ = ("extended", "expected", "tensors", "buckets", "bucket_of", "waiting", "usable",
                 "started", "positions_of")

    def __init__(self, extended, variables, source_ids):
        self.extended = extended
        self.expected = [(tuple(v.shape), v.dtype.as_numpy_dtype) for v in variables]
        self.tensors = [None] * len(variables)
        first = (_buckets.FIRST_BUCKET_BYTES
                 if collective_ops.overlaps(extended._group_key, extended._collectives.size)
                 else extended.bucket_bytes)
        self.buckets = _buckets.plan_buckets(self.expected, extended.bucket_bytes, first)
        self.bucket_of = {}
        for k, bucket in enumerate(self.buckets):
            for i in bucket:
                self.bucket_of[i] = k
        self.waiting = [len(bucket) for bucket in self.buckets]
        self.usable = [True] * len(self.buckets)
        self.started = [None] * len(self.buckets)  # (handle, Done's attrs) per started bucket
        self.positions_of = {}
        for i, sid in enumerate(source_ids):
            self.positions_of.setdefault(sid, []).append(i)

    def __call__(self, source_id, gradient):
        """The tape's report: `gradient` is final (see `tape_backward.backward`)."""
        for i in self.positions_of.get(source_id, ()):
            k = self.bucket_of[i]
            self.tensors[i] = gradient
            if (gradient.__class__ is IndexedSlices or not isinstance(gradient, Tensor)
                    or (tuple(gradient.shape), gradient.dtype.as_numpy_dtype)
                    != self.expected[i]):
                self.usable[k] = False  # reduced as given, in batch_reduce_to
            self.waiting[k] -= 1
            if self.waiting[k] == 0 and self.usable[k]:
                self._start(k)

    def _start(self, k):
        extended = self.extended
        tensors = tuple(self.tensors[i] for i in self.buckets[k])
        attrs = {"group_size": extended._collectives.size, "group_key": extended._group_key,
                 "instance_key": next(extended._instance_keys), "merge_op": "Add",
                 "final_op": "Id"}
        with _core.device(extended.worker_devices[0]):
            handle = execute(collective_ops.COLLECTIVE_REDUCE_N_START, tensors, attrs)
        self.started[k] = (handle, collective_ops.done_attrs(tensors, attrs))

    def result(self, k):
        """Bucket `k`'s reduced tensors, waited for; None if it was not started."""
        started = self.started[k]
        if started is None:
            return None
        self.started[k] = None
        handle, attrs = started
        with _core.device(self.extended.worker_devices[0]):
            return list(execute(collective_ops.COLLECTIVE_REDUCE_N_DONE, (handle,), attrs))

    def result_for(self, k, bucket, tensors):
        """`result(k)` if `batch_reduce_to`'s bucket `k` is this pass's, over the very tensors
        reported; else None, after waiting for (and dropping) a bucket started for others."""
        if k >= len(self.buckets):
            return None
        if self.buckets[k] != bucket or any(t is not self.tensors[i]
                                             for t, i in zip(tensors, bucket)):
            self.result(k)
            return None
        return self.result(k)

    def drain(self):
        """Waits for every started bucket, dropping the results (see the module doc)."""
        for k in range(len(self.started)):
            self.result(k)


def take_started(extended, count, reduce_op):
    """The started buckets of `extended`'s last backward pass, for a `batch_reduce_to` by SUM
    of `count` values as many as that pass's sources (it asks `result_for` bucket by bucket,
    then `drain`s); else None, the buckets left for a later reduction (another all-reduce, a
    loss's, may come between the backward pass and `apply_gradients`)."""
    record = extended._started_gradients
    if record is None or reduce_op is not ReduceOp.SUM or count != len(record.tensors):
        return None
    extended._started_gradients = None
    return record


def _ready_hook(sources, source_tensors):
    """`gradient_tape.set_gradient_ready_hook`'s hook: a `StartedGradients` for a backward
    pass of an eager data-parallel step that can overlap (module doc), else None."""
    strategy, replica = _ctx.current()
    if replica is None:
        return None
    extended = strategy.extended
    if (extended._num != 1 or extended._replica_all_reduce is not None
            or not collective_ops.overlaps(extended._group_key, extended._collectives.size)
            or not _core.executing_eagerly()):
        return None
    for s in sources:  # only the strategy's variables: the optimizer's buckets
        if not getattr(s, "_is_distributed_variable", False) or s._strategy is not strategy:
            return None
    pending = extended._started_gradients
    if pending is not None:  # started by an earlier pass nobody applied: wait, drop
        extended._started_gradients = None
        pending.drain()
    record = StartedGradients(extended, sources, [t._tape_id for t in source_tensors])
    extended._started_gradients = record
    return record


_gradient_tape.set_gradient_ready_hook(_ready_hook)
