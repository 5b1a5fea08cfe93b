"""Automatic control dependencies: the ordering edges a traced graph needs so that running it in
any order its edges allow gives the results program order gave (≈ TensorFlow's
`auto_control_deps.AutomaticControlDependencies`).

Data edges alone do not order side effects: `v.assign(2.0); return v.read_value()` has no data
edge from the assign to the read (both take the variable's handle), and a `print` nobody consumes
has no edge at all. So the graph consults an `AutoControlDeps` for every op it adds:

* **Per resource.** A resource is identified by the symbolic tensor feeding the op's resource
  input (see `OpDef.resource_reads` / `resource_writes`). A variable's eager handle tensor is
  cached on the variable (`ResourceVariable.handle`), and a graph captures one eager tensor as one
  placeholder, so the same variable used twice in a trace is the same placeholder, hence the same
  resource. Two *different* tensors naming the same storage (two handles made separately) would
  be treated as two resources and not ordered against each other.
  - a read depends on the resource's last write (read-after-write);
  - a write depends on the last write and on every read since it (write-after-write,
    write-after-read), then becomes the last write and forgets those reads;
  - reads between two writes get no edges between them: they may run in parallel.
  An op that both reads and writes a resource counts as a write of it.
* **Stateful ops without resource inputs** (print, random ops, VarHandleOp) are chained in
  program order: each depends on the previous such op. Stateful ops *with* resource inputs are
  ordered per resource only, so an assign and a print are not ordered against each other (as in
  TensorFlow, which keeps one chain for resource-less stateful ops and one history per resource).
* **Must-run ops.** Every stateful op (`OpDef.stateful`, which includes every resource write)
  must run even if nothing consumes it; the tracker lists them in `graph.control_outputs`, and
  `Graph.finalize(outputs)` makes the returned tensors wait for all of them.
* **Collective ops** (`OpDef.collective`: `CollectiveReduceV2`, `NcclAllReduce`) get chains of
  their own, one per requested device (as TensorFlow orders its collectives through one
  ordering token per device): each depends on the previous collective op on the same device,
  in the order the trace created them, and on nothing else of the other chains. Processes that
  exchange data must issue their collectives in the same order or wait on each other forever;
  the chain makes a traced step issue them in program order on every worker and every device,
  whatever else runs in parallel. Not across devices: the ops of one collective across local
  devices (one `NcclAllReduce` per replica, traced back to back) each complete only once all
  of them have started, so an edge from one to the next would make the second wait for the
  first to finish, which waits for the second (a deadlock as soon as the two run in different
  partitions). A collective with no device request may run anywhere, so it waits for the last
  collective of every chain, and every later one waits for it.
* Pure ops (stateless, no resource inputs) get no edges at all.

An edge already implied by a direct data edge (the op consumes an output of the op it would
wait for) is not added; duplicates never are (`Operation._add_control_input`).
"""

from __future__ import annotations

__all__ = ["AutoControlDeps"]


class _ResourceHistory:
    """What a later op on one resource must wait for: the last write and the reads since."""

    __slots__ = ("resource", "last_write", "reads_since_write")

    def __init__(self, resource):
        self.resource = resource  # kept alive so its id is never reused while tracked
        self.last_write = None
        self.reads_since_write = []


class AutoControlDeps:
    """Adds the control edges described in the module doc as ops are added to one graph, and
    appends the graph's must-run ops to its `control_outputs`. One per Graph, which calls
    `track(op)` for each op it adds."""

    __slots__ = ("_resources", "_last_stateful", "_last_collective")

    def __init__(self):
        self._resources = {}  # id(resource tensor) -> _ResourceHistory
        self._last_stateful = None  # the last stateful op without resource inputs
        # requested device -> the last collective op there ("": the last one with no request)
        self._last_collective = {}

    def track(self, op) -> None:
        """Orders `op` after the ops it must follow and records it for the ops that follow."""
        op_def = op._op_def
        reads = op_def.resource_reads
        writes = op_def.resource_writes
        if not (op_def.stateful or reads or writes):
            return  # pure: no edges
        if reads or writes:
            inputs = op._inputs
            written = {id(inputs[i]): inputs[i] for i in writes}
            read = {id(inputs[i]): inputs[i] for i in reads if id(inputs[i]) not in written}
            for key, resource in written.items():
                history = self._history(key, resource)
                wait_for(op, history.last_write)
                for r in history.reads_since_write:
                    wait_for(op, r)
                history.last_write = op
                history.reads_since_write = []
            for key, resource in read.items():
                history = self._history(key, resource)
                wait_for(op, history.last_write)
                history.reads_since_write.append(op)
        elif op_def.collective:
            self._order_collective(op)
        elif op_def.stateful:
            wait_for(op, self._last_stateful)
            self._last_stateful = op
        if op_def.stateful:
            op._graph.control_outputs.append(op)

    def _order_collective(self, op) -> None:
        """Chains collective `op` after the previous one on its device (see the module doc)."""
        last = self._last_collective
        device = op.device
        if device:
            wait_for(op, last.get(device))
            wait_for(op, last.get(""))
            last[device] = op
        else:  # may run on any device: after all of them, and before all that follow
            for dep in last.values():
                wait_for(op, dep)
            last.clear()
            last[""] = op

    def _history(self, key, resource) -> _ResourceHistory:
        history = self._resources.get(key)
        if history is None:
            history = self._resources[key] = _ResourceHistory(resource)
        return history


def wait_for(op, dep) -> None:
    """Makes `op` run after `dep` unless `dep` is None, `op` itself, or already a direct data
    producer of one of `op`'s inputs."""
    if dep is None or dep is op:
        return
    for t in op._inputs:
        if t._op is dep:
            return
    op._add_control_input(dep)
