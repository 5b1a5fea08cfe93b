"""The inter-op parallel executor: runs a `Program`'s independent nodes at the same time.

`ParallelExecutor(program, num_threads).run(feed_values)` means exactly what
`interpret.run_program(program, feed_values)` means; it only lets nodes that neither data nor
control edges order run concurrently. That is all TensorFlow's semantics promise (the legal
executions of a graph are the total orders consistent with its edges), and it is enough for
resource variables: traced graphs order the ops on one resource with automatic control
dependencies, and each resource kernel holds its variable's lock for its whole read or
read-compute-write, so two unordered `assign_add`s never lose an update. Concurrency pays only
when kernels release the GIL, which numpy does inside large kernels (BLAS matmuls, ufunc loops
on big arrays); for small graphs the sequential runners are cheaper.

How a run proceeds (TensorFlow's executor, in small):

* Per program, once: each node's pending count (how many distinct nodes must finish first, by
  data or control edge), its successors, each value's number of reads (to drop it after its
  last one) and the nodes ready at the start.
* Per run: a `_Run` holds the values, the counters and a ready stack. A thread that finishes a
  node decrements its successors' counts and goes straight on to one newly ready node itself,
  handing the others to the pool; the calling thread works too, so a chain or a one-node graph
  never changes threads, and a run makes progress even when every pool thread is busy (a
  nested run on a pool thread cannot deadlock).
* Pools are shared by all executors with the same thread count, made on first use, with
  `num_threads - 1` daemon workers (the caller is the n-th thread); they stop at interpreter
  exit and are forgotten in a forked child. A pool thread only ever gets "help run R" tokens,
  so a stale token (its run already over) costs one empty look.
* The first error (a kernel's `eager.base.errors` class, or anything else a node raised) stops the
  scheduling of new nodes; the caller waits for the nodes already running, then re-raises that
  error. Nothing outlives the run, so the executor stays usable.

Placement is `run_program`'s: a node runs where `dispatch.place` puts it given
`device_scope_for(node.device, caller_state)`, with the *caller's* thread state captured when
`run` starts (pool threads have their own, empty, device scopes). A pool thread also adopts a
copy of the caller's device scopes while it works for a run, so kernels that dispatch ops of
their own (control flow running a branch graph) see the scopes they would see in the caller.

Unfed placeholders raise `run_program`'s error before any node runs (the sequential runner
raises when it reaches one, after running the nodes before it).
"""

from __future__ import annotations

import atexit
import operator
import os
import queue
import threading

from ..core import context as _context
from ..base.errors import InternalError
from ..graph.placeholder import PLACEHOLDER
from ..core import dispatch as _dispatch
from .interpret import device_scope_for, missing_feed_error

__all__ = ["ParallelExecutor"]


class ParallelExecutor:
    """Runs `program` with up to `num_threads` nodes at once (see the module doc). Build it once
    per program; `run` may be called any number of times, from any threads."""

    __slots__ = ("program", "num_threads", "_schedule")

    def __init__(self, program, num_threads):
        if isinstance(num_threads, bool):
            raise TypeError("num_threads must be an int, got a bool.")
        num_threads = operator.index(num_threads)
        if num_threads < 1:
            raise ValueError(f"num_threads must be >= 1 (1 runs every node in the caller), got "
                             f"{num_threads}; use run_program to run a program sequentially.")
        self.program = program
        self.num_threads = num_threads
        self._schedule = _Schedule(program)

    def run(self, feed_values) -> list:
        """Runs the program with `feed_values` bound to `program.feeds` (in order) and returns
        the values of `program.fetches` (`run_program`'s contract)."""
        program = self.program
        if len(feed_values) != len(program.feeds):
            raise ValueError(f"Program {program.name!r} has {len(program.feeds)} feeds; "
                             f"{len(feed_values)} values were given.")
        schedule = self._schedule
        if schedule.unfed is not None:
            raise missing_feed_error(program, schedule.unfed)
        values = dict(program.constants)
        values.update(zip(program.feeds, feed_values))
        if schedule.steps:
            run = _Run(schedule, values, _context.thread_state(), _pool_for(self.num_threads))
            try:
                error = run.work_until_done()
            except BaseException:
                values.clear()  # interrupted: pool threads finishing nodes find nothing to keep
                raise
            if error is not None:
                values.clear()
                raise error
        result = [values[v] for v in program.fetches]
        values.clear()  # a stale pool token may keep the run alive a while; not its values
        return result

    def __repr__(self):
        return f"<ParallelExecutor {self.program.name!r} on {self.num_threads} threads>"


class _Schedule:
    """What every run of one program starts from (computed once, read-only afterwards).

    `steps[i]` is `(op_def, attrs, inputs, outputs, device, single_output, dead_outputs)` for
    node i; `successors[i]` the nodes waiting for it; `pending[i]` how many distinct nodes it
    waits for; `roots` the nodes waiting for none, last first (runs pop from the end, so the
    first root in program order runs first); `uses[v]` how many reads value v gets, for values
    that may be dropped (fetches are never dropped, and are not in `uses`); `unfed` the first
    placeholder node nobody feeds, or None."""

    __slots__ = ("steps", "successors", "pending", "roots", "uses", "unfed")

    def __init__(self, program):
        nodes = program.nodes
        index_of = {}
        producer = {}  # value id -> index of the node producing it
        for i, node in enumerate(nodes):
            index_of[node.name] = i
            for v in node.outputs:
                producer[v] = i
        available = set(program.feeds) | set(program.constants)
        keep = set(program.fetches)
        predecessors = [set() for _ in nodes]
        uses = {}
        self.unfed = None
        for i, node in enumerate(nodes):
            if node.op_def is PLACEHOLDER and self.unfed is None:
                self.unfed = node
            for v in node.inputs:
                p = producer.get(v)
                if p is not None:
                    predecessors[i].add(p)
                elif v not in available:
                    raise ValueError(f"Node {node.name!r} reads {program.describe_value(v)}, "
                                     "which is neither fed, constant nor produced by a node.")
                if v not in keep:
                    uses[v] = uses.get(v, 0) + 1
            for name in node.control_inputs:
                p = index_of.get(name)
                if p is None:
                    raise ValueError(f"Node {node.name!r} has control input {name!r}, which is "
                                     f"not a node of program {program.name!r}.")
                predecessors[i].add(p)
        successors = [[] for _ in nodes]
        for i, preds in enumerate(predecessors):
            for p in preds:
                if p >= i:  # would be a cycle, or at least a broken promise: never start
                    raise ValueError(f"Node {nodes[i].name!r} waits for node {nodes[p].name!r}, "
                                     "which does not come before it: the program's nodes are "
                                     "not in a topological order.")
                successors[p].append(i)
        steps = []
        for node in nodes:
            dead = tuple(v for v in node.outputs if v not in keep and v not in uses)
            steps.append((node.op_def, node.attrs, node.inputs, node.outputs, node.device,
                          len(node.outputs) == 1 and node.op_def.num_outputs == 1, dead))
        self.steps = tuple(steps)
        self.successors = tuple(tuple(s) for s in successors)
        self.pending = [len(preds) for preds in predecessors]
        self.roots = [i for i in reversed(range(len(nodes))) if not predecessors[i]]
        self.uses = uses


class _Run:
    """One run's mutable state; every field below `values` is guarded by `lock`.

    `remaining` counts nodes not yet finished, `in_flight` nodes being executed now, `ready`
    nodes whose inputs are all done (a stack), `error` the first failure (it stops scheduling).
    `wakeup` (on `lock`) is how the caller waits for ready nodes, the end of the run, or the
    last in-flight node after an error."""

    __slots__ = ("schedule", "values", "caller_state", "pool", "pending", "uses", "ready",
                 "remaining", "in_flight", "error", "lock", "wakeup")

    def __init__(self, schedule, values, caller_state, pool):
        self.schedule = schedule
        self.values = values
        self.caller_state = caller_state
        self.pool = pool
        self.pending = schedule.pending.copy()
        self.uses = schedule.uses.copy()
        self.ready = schedule.roots.copy()
        self.remaining = len(schedule.steps)
        self.in_flight = 0
        self.error = None
        self.lock = threading.Lock()
        self.wakeup = threading.Condition(self.lock)

    # -- the calling thread ------------------------------------------------------------------
    def work_until_done(self):
        """Runs nodes in the calling thread, with the pool's help, until all have run (returns
        None) or one failed and none is still running (returns the error)."""
        pool = self.pool
        if pool is not None and len(self.ready) > 1:
            pool.submit(self, len(self.ready) - 1)
        lock = self.lock
        try:
            while True:
                self.drain()
                with lock:
                    while True:
                        if self.error is not None:
                            if not self.in_flight:
                                return self.error
                        elif not self.remaining:
                            return None
                        elif self.ready:
                            break
                        elif not self.in_flight:  # cannot happen for a topological order
                            raise InternalError(None, None, "The parallel executor stalled "
                                                f"with {self.remaining} nodes not run.")
                        self.wakeup.wait()
        except BaseException as exc:  # interrupted (KeyboardInterrupt): stop scheduling, leave
            with lock:
                if self.error is None:
                    self.error = exc
            raise

    # -- a pool thread -------------------------------------------------------------------------
    def help(self):
        """Runs ready nodes of this run on a pool thread, under the caller's device scopes."""
        st = _context.thread_state()
        own_scopes = st.device_stack
        st.device_stack = list(self.caller_state.device_stack)
        try:
            self.drain()
        finally:
            st.device_stack = own_scopes

    # -- any thread ----------------------------------------------------------------------------
    def drain(self):
        """Runs ready nodes one after another until none is ready or the run failed. Hot: one
        lock section per node, which stores its outputs and takes the next ready node.

        Kernels run outside the lock, concurrently. Reading `values` there needs no lock: a
        node is ready only after its producers stored their outputs under the lock."""
        lock = self.lock
        ready = self.ready
        steps = self.schedule.steps
        values = self.values
        caller_state = self.caller_state
        place = _dispatch.place
        run_sync = _dispatch.run_kernel
        with lock:
            if self.error is not None or not ready:
                return
            i = ready.pop()
            self.in_flight += 1
        while True:
            step = steps[i]
            op_def, attrs, inputs, _, device, _, _ = step
            try:
                args = tuple([values[v] for v in inputs])
                out = run_sync(op_def, args, attrs,
                               place(op_def, args, device_scope_for(device, caller_state), attrs))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, who re-raises
                with lock:
                    self.in_flight -= 1
                    if self.error is None:
                        self.error = exc
                    self.wakeup.notify()
                return
            del args
            with lock:
                self.in_flight -= 1
                if self.error is not None:  # the run failed meanwhile: its values are moot
                    if not self.in_flight:
                        self.wakeup.notify()
                    return
                extra = self._finish(i, step, out)
                if not ready:
                    if not self.remaining:
                        self.wakeup.notify()
                    return
                i = ready.pop()
                self.in_flight += 1
                if extra:
                    self.wakeup.notify()
            out = None
            if extra and self.pool is not None:
                self.pool.submit(self, extra)

    def _finish(self, i, step, out) -> int:
        """Under the lock: stores node i's outputs, drops values it read last, releases its
        successors. Returns how many ready nodes the finishing thread will leave to others."""
        _, _, inputs, outputs, _, single, dead = step
        values = self.values
        if single:
            values[outputs[0]] = out
        elif outputs:
            values.update(zip(outputs, out))
        for v in dead:
            del values[v]
        uses = self.uses
        for v in inputs:
            n = uses.get(v)
            if n is not None:
                if n == 1:
                    del uses[v]
                    del values[v]
                else:
                    uses[v] = n - 1
        pending = self.pending
        ready = self.ready
        for s in self.schedule.successors[i]:
            n = pending[s] - 1
            pending[s] = n
            if not n:
                ready.append(s)
        self.remaining -= 1
        return len(ready) - 1 if len(ready) > 1 else 0


# -- pools -----------------------------------------------------------------------------------------
class _InterOpPool:
    """`num_threads - 1` daemon threads that help runs (the caller of a run is the n-th). Their
    only work items are runs to help, so one idle thread costs nothing but its stack."""

    __slots__ = ("num_threads", "_tasks", "_threads")

    def __init__(self, num_threads):
        self.num_threads = num_threads
        self._tasks = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._work, daemon=True,
                                          name=f"eager-inter-op-{num_threads}-{k}")
                         for k in range(num_threads - 1)]
        for t in self._threads:
            t.start()

    def submit(self, run, count):
        """Asks up to `count` idle threads to help `run` (never more than the pool has)."""
        tasks = self._tasks
        for _ in range(min(count, len(self._threads))):
            tasks.put(run)

    def _work(self):
        tasks = self._tasks
        while True:
            run = tasks.get()
            if run is None:
                return
            try:
                run.help()
            except BaseException:  # noqa: BLE001 - drain hands errors to the caller already
                pass
            del run  # keep no finished run alive while waiting

    def shutdown(self, timeout):
        for _ in self._threads:
            self._tasks.put(None)
        for t in self._threads:
            t.join(timeout)

    @property
    def threads(self) -> tuple:
        return tuple(self._threads)


class _Pools:
    __slots__ = ("by_size", "lock", "closed")

    def __init__(self):
        self.by_size = {}
        self.lock = threading.Lock()
        self.closed = False


_pools = _Pools()


def _pool_for(num_threads):
    """The shared pool for `num_threads` (made on first use), or None: one thread needs no
    pool, and after interpreter shutdown began runs proceed in the caller alone."""
    pool = _pools.by_size.get(num_threads)
    if pool is None and num_threads > 1:
        with _pools.lock:
            pool = _pools.by_size.get(num_threads)
            if pool is None and not _pools.closed:
                pool = _pools.by_size[num_threads] = _InterOpPool(num_threads)
    return pool


def _shutdown_pools(timeout=1.0):
    """At interpreter exit: stop every pool's threads (a thread inside a long kernel is given
    `timeout` seconds; it is a daemon, so it never blocks exit)."""
    with _pools.lock:
        _pools.closed = True
        pools = list(_pools.by_size.values())
        _pools.by_size.clear()
    for pool in pools:
        pool.shutdown(timeout)


def _forget_pools_after_fork():
    """A forked child has none of the parent's threads: start again with no pools."""
    global _pools
    _pools = _Pools()


atexit.register(_shutdown_pools)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools_after_fork)
