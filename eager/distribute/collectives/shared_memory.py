"""All-reduce among the MPI processes of one host through an MPI-3 shared-memory window.

Why: MPI's `Allreduce` between processes on one host moves every buffer through its own
shared-memory channel (copy in, copy out, reduce): about 0.3 ms for the 1 MB of gradients of a
784-256-256-10 MLP on two processes here, a fifth of the step. With a window that every process
maps (`MPI.Win.Allocate_shared`), each process writes its buffer once into its own slot, reduces
its share of the elements across all slots, and reads the whole result back: about 0.13 ms for
the same buffer. The processes synchronize with MPI barriers on the host's communicator; no
bytes go through anything but MPI's window and the processes' own loads and stores.

Every process computes its share of the elements in rank order (slot 0 + slot 1 + ...), so all
processes read the same bits: mirrored variables stay identical on every worker.

Protocol for one piece of at most `PIECE_BYTES` (a longer buffer goes piece by piece):
  1. write a header (element count, dtype, op) and the data into this process's slot;
  2. barrier; every process checks that all headers agree (a mismatch raises the same
     `InvalidArgumentError` on every process instead of reducing garbage or hanging);
  3. reduce this process's share across the slots into slot 0's share; barrier;
  4. copy slot 0 (the result) into the output array.
Consecutive pieces alternate between two sets of slots, so step 1 of the next piece never
overwrites a slot another process is still reading in step 4 of this one: the barrier of step
2 of the next piece is passed only once every process has finished step 4 of this one.

In a job across hosts this protocol runs within each host, with a step between hosts added by
`hierarchical.HostsAllReduce`.
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from ...base import errors

#: The largest piece one round of the protocol moves; the window holds 2 x processes of them.
#: 4 MB keeps the window small (16 MB for two processes) and the barriers rare.
PIECE_BYTES = 4 << 20

#: Buffers smaller than this go through MPI's own `Allreduce`, whose latency on tiny buffers
#: is below the protocol's two barriers.
MIN_BYTES = 32 << 10

#: int64 words of each process's header: element count, dtype char, op index, piece index.
HEADER_WORDS = 4
_OPS = ("sum", "max", "min")
_REDUCE = {"sum": np.add, "max": np.maximum, "min": np.minimum}


class NodeAllReduce:
    """In-place all-reduce of contiguous numpy buffers among the processes of `comm`, which
    must all share one host (`MPI.COMM_TYPE_SHARED`). `wait_barrier(name)` is the caller's
    barrier on `comm` (it may poll with a deadline, see `MPICollectives`). Built by
    `hierarchical.window_engine`, which also chooses between this and the engine for jobs
    across hosts."""

    __slots__ = ("_comm", "_wait_barrier", "rank", "size", "_window", "_headers", "_shared",
                 "_slots", "_parity")

    #: int64 words of shared memory per parity beyond the headers (for a subclass's use).
    _shared_words = 0

    def __init__(self, comm, wait_barrier):
        self._comm = comm
        self._wait_barrier = wait_barrier
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self._window = None
        self._parity = 0

    def supports(self, dtype, op: str) -> bool:
        """Whether buffers of `dtype` reduced with `op` can go through the window."""
        return dtype.kind in "fiuc"

    def accepts(self, buffer, op: str = "sum") -> bool:
        return buffer.nbytes >= MIN_BYTES and self.supports(buffer.dtype, op)

    def all_reduce(self, source, out, op: str) -> None:
        """Writes the reduction of every process's `source` into `out` (both contiguous, same
        shape and dtype; they may be one array); `op` is "sum", "max" or "min"."""
        if self._window is None:
            self._allocate()
        flat, flat_out = source.reshape(-1), out.reshape(-1)
        step = max(1, PIECE_BYTES // source.dtype.itemsize)
        for index, start in enumerate(range(0, flat.size, step)):
            self._reduce_piece([flat[start:start + step]], [flat_out[start:start + step]], op,
                               flat.size, index)

    def all_reduce_packed(self, sources, outs, op: str) -> None:
        """`all_reduce` of several arrays of one dtype whose bytes together fit one piece
        (`fits`), in one round of the protocol: each is written at its offset in the slot."""
        if self._window is None:
            self._allocate()
        total = sum(a.size for a in sources)
        self._reduce_piece([a.reshape(-1) for a in sources], [o.reshape(-1) for o in outs], op,
                           total, 0)

    @staticmethod
    def fits(arrays) -> bool:
        """Whether `arrays` (one dtype) can go through `all_reduce_packed`."""
        return sum(a.nbytes for a in arrays) <= PIECE_BYTES

    def close(self) -> None:
        window, self._window = self._window, None
        comm, self._comm = self._comm, None
        if MPI.Is_finalized():
            return
        if window is not None:
            window.Free()
        if comm is not None:
            comm.Free()

    # -- the protocol -------------------------------------------------------------------------

    def _allocate(self):
        header_bytes = 2 * self.size * HEADER_WORDS * 8
        shared_bytes = 2 * self._shared_words * 8
        size = header_bytes + shared_bytes + 2 * self.size * PIECE_BYTES
        self._window = MPI.Win.Allocate_shared(size if self.rank == 0 else 0, 1,
                                               comm=self._comm)
        memory, _ = self._window.Shared_query(0)
        raw = np.ndarray((size,), np.uint8, buffer=memory)
        self._headers = raw[:header_bytes].view(np.int64).reshape(2, self.size, HEADER_WORDS)
        self._shared = raw[header_bytes:header_bytes + shared_bytes].view(np.int64).reshape(
            2, self._shared_words)
        self._slots = raw[header_bytes + shared_bytes:].reshape(2, self.size, PIECE_BYTES)

    def _reduce_piece(self, pieces, outs, op, total, index):
        """One round of the protocol over `pieces` (flat arrays of one dtype), laid end to end
        in the slot; the result goes to `outs` (flat arrays of the same sizes)."""
        _, headers, slots, n = self._write(pieces, op, total, index)
        self._wait_barrier("all_reduce")
        if (headers != headers[self.rank]).any():
            raise mismatch_error(headers)
        self._reduce_share(slots, n, op)
        self._wait_barrier("all_reduce")
        copy_result(slots[0], outs)

    def _write(self, pieces, op, total, index):
        """Step 1: this process's header and data into its slot of the next parity; returns
        the parity, its headers, its slots viewed as the pieces' dtype, and the element
        count."""
        parity = self._parity
        self._parity ^= 1
        n, dtype = sum(p.size for p in pieces), pieces[0].dtype
        headers = self._headers[parity]
        headers[self.rank] = (total, ord(dtype.char), _OPS.index(op), index)
        slots = self._slots[parity, :, :n * dtype.itemsize].view(dtype)
        mine, offset = slots[self.rank], 0
        for piece in pieces:
            mine[offset:offset + piece.size] = piece
            offset += piece.size
        return parity, headers, slots, n

    def _reduce_share(self, slots, n, op):
        """Step 3: this process's share of the `n` elements, reduced across the slots in rank
        order, in place in slot 0's share (which no other process reads or writes now)."""
        share = -(-n // self.size)
        lo, hi = min(n, self.rank * share), min(n, (self.rank + 1) * share)
        if hi > lo:
            reduce, part = _REDUCE[op], slots[0, lo:hi]
            for other in range(1, self.size):
                reduce(part, slots[other, lo:hi], out=part)


def copy_result(result, outs) -> None:
    """Step 4: the flat `result` into `outs`, laid end to end as the pieces were."""
    offset = 0
    for out in outs:
        out[...] = result[offset:offset + out.size]
        offset += out.size


def mismatch_error(headers) -> errors.InvalidArgumentError:
    """The error every process raises when the headers (one row per worker, in rank order)
    disagree."""
    described = []
    for rank, (count, char, op, _) in enumerate(headers):
        described.append(f"worker {rank}: {int(count)} x {np.dtype(chr(int(char))).name} "
                         f"({_OPS[int(op)]})")
    return errors.InvalidArgumentError(
        None, "CollectiveReduce",
        "all_reduce: the workers passed different buffers (every worker must reduce the same "
        "element count, dtype and reduction in the same order): " + "; ".join(described))
