"""Running a function once per replica, in lock step, with `merge_call` (TF's design).

Each replica runs `fn` in its own thread, under its device scope and its `ReplicaContext`, but
only one thread runs at a time: the caller resumes replica 0 until it finishes or calls
`merge_call`, then replica 1, and so on. When every replica has paused in `merge_call`, the
caller runs the merge function once, in cross-replica context, with the replicas' arguments
regrouped as `PerReplica` values, and hands each replica its part of the result.

Running one thread at a time is what makes this safe and deterministic: ops reach the shared
interpreter (the eager executor or a function being traced) in replica order, collectives are
issued in the same order every step, and a trace records replica 0's ops, then replica 1's.
The threads exist only so that `merge_call` can pause a replica in the middle of `fn`; a
strategy with one local replica (a worker of `MultiWorkerMirroredStrategy` on one device) runs
`fn` in the caller's thread, its `merge_call` running the merge at once.
"""

from __future__ import annotations

import threading

from ..base import nest
from ..core import context as _core
from . import context as _ctx
from .values import DistributedValues, PerReplica

#: How long a replica may run between two hand-overs before the caller reports a hang.
_STEP_TIMEOUT_S = 3600.0


class _Aborted(BaseException):
    """Raised inside a paused replica thread when another replica failed."""


def regroup(per_replica_values):
    """One structure with a `PerReplica` at each leaf where the replicas' leaves differ (a leaf
    that is the same object on every replica stays as it is)."""
    if len(per_replica_values) == 1:
        return per_replica_values[0]

    def leaf(*xs):
        first = xs[0]
        return first if all(x is first for x in xs) else PerReplica(xs)
    return nest.map_structure(leaf, *per_replica_values)


def select_replica(replica_id, structure):
    """The replica's component of every distributed value in `structure`."""
    return nest.map_structure(
        lambda x: x.values[replica_id] if isinstance(x, DistributedValues) else x, structure)


class _ReplicaThread(threading.Thread):
    def __init__(self, strategy, replica_id, device, fn, args, kwargs, parent_state, stack,
                 make_context):
        super().__init__(name=f"replica_{replica_id}", daemon=True)
        self.strategy, self.replica_id, self.device = strategy, replica_id, device
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.parent_state, self.stack = parent_state, stack
        self.make_context = make_context
        self.should_run = threading.Event()
        self.has_paused = threading.Event()
        self.done = False
        self.aborted = False
        self.error = None
        self.result = None
        self.merge_fn = self.merge_args = self.merge_kwargs = self.merge_result = None

    def run(self):
        self.should_run.wait()
        self.should_run.clear()
        try:
            if self.aborted:
                return
            st = _core.thread_state()
            parent = self.parent_state
            st.interpreter = parent.interpreter
            st.variable_creators = list(parent.variable_creators)
            st.variable_watchers = list(parent.variable_watchers)
            st.name_scope = parent.name_scope
            _ctx.set_entries(self.stack)
            context = self.make_context(self.strategy, self.replica_id, thread=self)
            with _core.device(self.device), _ctx.entered(self.strategy, context):
                self.result = self.fn(*self.args, **self.kwargs)
        except _Aborted:
            pass
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            self.error = e
        finally:
            self.done = True
            self.has_paused.set()

    def merge_call(self, merge_fn, args, kwargs):
        """Pauses this replica until the caller has run `merge_fn` for all replicas."""
        self.merge_fn, self.merge_args, self.merge_kwargs = merge_fn, args, kwargs
        self.has_paused.set()
        self.should_run.wait()
        self.should_run.clear()
        if self.aborted:
            raise _Aborted()
        return self.merge_result


def call_for_each_replica(strategy, devices, fn, args, kwargs, make_context):
    """`fn(*args, **kwargs)` once per replica (args already split per replica: one
    (args, kwargs) pair per device); the list of the replicas' results."""
    split = args_per_replica(args, kwargs, len(devices))
    if len(devices) == 1:  # one replica: nothing to pause for, so no thread (a step's cost)
        (a, k), = split
        context = make_context(strategy, 0)
        with _core.device(devices[0]), _ctx.entered(strategy, context):
            return [fn(*a, **k)]
    parent_state = _core.thread_state()
    stack = _ctx.entries()
    threads = [_ReplicaThread(strategy, i, d, fn, a, k, parent_state, stack, make_context)
               for i, (d, (a, k)) in enumerate(zip(devices, split))]
    for t in threads:
        t.start()
    try:
        while True:
            for t in threads:
                t.should_run.set()
                if not t.has_paused.wait(_STEP_TIMEOUT_S):
                    raise RuntimeError(f"Replica {t.replica_id} neither finished nor reached "
                                       "merge_call in time.")
                t.has_paused.clear()
                if t.error is not None:
                    raise t.error
            finished = [t.done for t in threads]
            if all(finished):
                return [t.result for t in threads]
            if any(finished):
                raise RuntimeError("Some replicas made a different number of "
                                   "replica_context().merge_call() calls.")
            merge_fn = threads[0].merge_fn
            merge_args = regroup([t.merge_args for t in threads])
            merge_kwargs = regroup([t.merge_kwargs for t in threads])
            with _ctx.entered(strategy, None):
                result = merge_fn(strategy, *merge_args, **merge_kwargs)
            for t in threads:
                t.merge_result = select_replica(t.replica_id, result)
    except BaseException:
        for t in threads:
            if not t.done:
                t.aborted = True
                t.should_run.set()
        for t in threads:
            t.join(timeout=60)
        raise
    finally:
        for t in threads:
            if t.done:
                t.join(timeout=60)


def args_per_replica(args, kwargs, n):
    return [(select_replica(i, tuple(args)), select_replica(i, dict(kwargs))) for i in range(n)]
