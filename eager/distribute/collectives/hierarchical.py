"""All-reduce across hosts in two levels: shared memory within each host, MPI between hosts.

Why: in a job across hosts, MPI's `Allreduce` over all processes moves every process's buffer
through the network stack, although the processes of one host could combine theirs in shared
memory first and send one buffer per host (what Horovod and NCCL call hierarchical
all-reduce). Here, per piece of at most `PIECE_BYTES`:
  1. every process writes its header and data into its slot of the host's window
     (`shared_memory.NodeAllReduce`, the same protocol and the same two parities of slots);
  2. host barrier; each process reduces its share of the elements across the host's slots
     into slot 0 (skipped when the host's headers disagree); host barrier;
  3. the host's leader (its host-local rank 0) gathers every host's headers from the other
     leaders (`Allgatherv`) into a table of every worker's header in rank order, and, only if
     they all agree, all-reduces slot 0's piece in place with the other leaders (`Allreduce`);
     it writes the table and whether MPI refused into the window; host barrier;
  4. every process checks the table (a mismatch anywhere in the job is the same
     `InvalidArgumentError` on every process, naming every worker) and copies slot 0 out.
Every wait (the barriers and the leaders' calls) goes through the engine's `wait`, so a
deadline (`MPICollectives(timeout_seconds=...)`) bounds each one.

Identical bits everywhere: within a host every process reads the same slot; between hosts
the leaders rely on MPICH's `Allreduce` giving every rank the same result (its algorithms,
recursive doubling and reduce-scatter then all-gather, each combine the same operands in the
same order on every rank for the commutative built-in operations; the MPI standard recommends
but does not require this). The sum is the host partial sums (each in host-local rank order)
combined in MPI's order: equal to numpy's sum within rounding, exact for integers.

Which engine a communicator gets (`window_engine`, collective): all processes on one host: the
one-host `NodeAllReduce` (no other call than before); every host with one process: none (MPI's
`Allreduce` for everything, the window would add only copies); otherwise `HostsAllReduce`.
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from ...base import errors
from .shared_memory import HEADER_WORDS, NodeAllReduce, copy_result, mismatch_error

_MPI_OPS = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}


def window_engine(comm, wait, host_of_rank=None):
    """The shared-memory engine for `comm`, or None where MPI's `Allreduce` is the better path.

    `wait(name, buffer, blocking, nonblocking, *args)` runs one MPI call (the engine's `_wait`:
    blocking, or non-blocking and polled until a deadline). `host_of_rank`: None, or one
    non-negative int per rank of `comm` naming the group it shares a window with, refining the
    real hosts (two ranks on different machines never share one); for tests, which simulate
    several hosts on one machine, and for machines whose processes should be grouped
    otherwise. Collective: every process of `comm` calls it, with the same `host_of_rank`."""
    rank, size = comm.Get_rank(), comm.Get_size()
    host = comm.Split_type(MPI.COMM_TYPE_SHARED)
    if host_of_rank is not None:
        group = host.Split(host_of_rank[rank], rank)
        host.Free()
        host = group

    def barrier(name):
        wait(name, None, host.Barrier, host.Ibarrier)

    if host.Get_size() == size:  # one host: every process sees the same size
        if size < 2:
            host.Free()
            return None
        return NodeAllReduce(host, barrier)
    if comm.allreduce(host.Get_size(), op=MPI.MAX) < 2:  # one process per host
        host.Free()
        return None
    return HostsAllReduce(comm, host, barrier, wait)


class HostsAllReduce(NodeAllReduce):
    """`NodeAllReduce` within each host, then MPI among the hosts' leaders (see the module
    doc). `rank` and `size` are the host's; `job_size` counts every process of the job."""

    __slots__ = ("_wait", "job_size", "hosts", "_leaders", "_order", "_counts", "_gathered")

    def __init__(self, comm, host, wait_barrier, wait):
        super().__init__(host, wait_barrier)
        self._wait = wait
        self.job_size = comm.Get_size()
        job_ranks = host.allgather(comm.Get_rank())  # in host-local rank order
        self._leaders = comm.Split(0 if self.rank == 0 else MPI.UNDEFINED, comm.Get_rank())
        if self.rank == 0:
            per_host = self._leaders.allgather(job_ranks)  # in the leaders' rank order
            # Row i of the gathered headers is the header of worker _order[i].
            self._order = np.array([r for ranks in per_host for r in ranks], np.intp)
            self._counts = [len(ranks) * HEADER_WORDS for ranks in per_host]
            self._gathered = np.empty((self.job_size, HEADER_WORDS), np.int64)
        self.hosts = host.bcast(self._leaders.Get_size() if self.rank == 0 else None)

    #: Per parity: every worker's header in rank order, then 1 if the leaders' MPI refused.
    @property
    def _shared_words(self):
        return self.job_size * HEADER_WORDS + 1

    def supports(self, dtype, op: str) -> bool:
        # MPI has no order on complex numbers: those go to MPI's own refusal.
        return dtype.kind in "fiu" or (dtype.kind == "c" and op not in ("max", "min"))

    def close(self) -> None:
        leaders, self._leaders = self._leaders, MPI.COMM_NULL
        if leaders != MPI.COMM_NULL and not MPI.Is_finalized():
            leaders.Free()
        super().close()

    def _reduce_piece(self, pieces, outs, op, total, index):
        parity, headers, slots, n = self._write(pieces, op, total, index)
        shared = self._shared[parity]
        table = shared[:-1].reshape(self.job_size, HEADER_WORDS)
        self._wait_barrier("all_reduce")
        if not (headers != headers[self.rank]).any():
            self._reduce_share(slots, n, op)
        self._wait_barrier("all_reduce")
        if self.rank == 0:
            self._between_hosts(headers, table, shared[-1:], slots[0, :n], op)
        self._wait_barrier("all_reduce")
        if (table != table[0]).any():
            raise mismatch_error(table)
        if shared[-1]:
            raise errors.InvalidArgumentError(
                None, "CollectiveReduce",
                f"all_reduce: MPI cannot reduce {slots.dtype.name} with {op!r} between hosts; "
                f"use another dtype or reduction.")
        copy_result(slots[0], outs)

    def _between_hosts(self, headers, table, refused, result, op):
        """Step 3, on the leader: every worker's header into `table`; if they agree, the
        host's partial `result` all-reduced in place with the other leaders'."""
        leaders, gathered = self._leaders, self._gathered
        self._wait("all_reduce", None, leaders.Allgatherv, leaders.Iallgatherv,
                   headers, [gathered, self._counts])
        table[self._order] = gathered
        refused[0] = 0
        if (table != table[0]).any():
            return
        try:
            self._wait("all_reduce", result, leaders.Allreduce, leaders.Iallreduce,
                       MPI.IN_PLACE, result, _MPI_OPS[op])
        except MPI.Exception:  # every leader has the same dtype and op: every one refuses
            refused[0] = 1
