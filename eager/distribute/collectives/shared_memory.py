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

_HEADER_WORDS = 4  # count, dtype char, op index, piece index (int64 each)
_OPS = ("sum", "max", "min")
_REDUCE = {"sum": np.add, "max": np.maximum, "min": np.minimum}


class NodeAllReduce:
    """In-place all-reduce of contiguous numpy buffers among the processes of `comm`, which
    must all share one host (`MPI.COMM_TYPE_SHARED`). `wait_barrier(name)` is the caller's
    barrier on `comm` (it may poll with a deadline, see `MPICollectives`)."""

    __slots__ = ("_comm", "_wait_barrier", "rank", "size", "_window", "_headers", "_slots",
                 "_parity")

    def __init__(self, comm, wait_barrier):
        self._comm = comm
        self._wait_barrier = wait_barrier
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self._window = None
        self._parity = 0

    @classmethod
    def for_world(cls, comm, wait_barrier):
        """The engine for `comm` if all its processes share this host, else None."""
        node = comm.Split_type(MPI.COMM_TYPE_SHARED)
        if node.Get_size() != comm.Get_size() or comm.Get_size() < 2:
            node.Free()
            return None
        return cls(node, lambda name: wait_barrier(name, node))

    def accepts(self, buffer) -> bool:
        return buffer.nbytes >= MIN_BYTES and buffer.dtype.kind in "fiuc"

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
        size = 2 * (self.size * (_HEADER_WORDS * 8 + PIECE_BYTES))
        self._window = MPI.Win.Allocate_shared(size if self.rank == 0 else 0, 1,
                                               comm=self._comm)
        memory, _ = self._window.Shared_query(0)
        raw = np.ndarray((size,), np.uint8, buffer=memory)
        header_bytes = 2 * self.size * _HEADER_WORDS * 8
        self._headers = raw[:header_bytes].view(np.int64).reshape(2, self.size, _HEADER_WORDS)
        self._slots = raw[header_bytes:].reshape(2, self.size, PIECE_BYTES)

    def _reduce_piece(self, pieces, outs, op, total, index):
        """One round of the protocol over `pieces` (flat arrays of one dtype), laid end to end
        in the slot; the result goes to `outs` (flat arrays of the same sizes)."""
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
        self._wait_barrier("all_reduce")
        if (headers != headers[self.rank]).any():
            raise _mismatch(headers)
        share = -(-n // self.size)
        lo, hi = min(n, self.rank * share), min(n, (self.rank + 1) * share)
        if hi > lo:  # in place in slot 0's share, which no other process reads or writes now
            reduce, part = _REDUCE[op], slots[0, lo:hi]
            for other in range(1, self.size):
                reduce(part, slots[other, lo:hi], out=part)
        self._wait_barrier("all_reduce")
        result, offset = slots[0], 0
        for out in outs:
            out[...] = result[offset:offset + out.size]
            offset += out.size


def _mismatch(headers) -> errors.InvalidArgumentError:
    described = []
    for rank, (count, char, op, _) in enumerate(headers):
        described.append(f"worker {rank}: {int(count)} x {np.dtype(chr(int(char))).name} "
                         f"({_OPS[int(op)]})")
    return errors.InvalidArgumentError(
        None, "CollectiveReduce",
        "all_reduce: the workers passed different buffers (every worker must reduce the same "
        "element count, dtype and reduction in the same order): " + "; ".join(described))
