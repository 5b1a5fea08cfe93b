"""In-process collectives: the replicas are this process's own devices.

There is one process, so as a `Collectives` group it has one participant (rank 0, size 1) and
`all_reduce`/`all_gather`/`broadcast` across participants return their input. The work of a
local strategy is across *replicas*: `reduce_replicas` takes one array per replica and returns
the reduction placed for every replica. Values are brought to the host, reduced there in
replica order (deterministic), and copied back to each replica's device; on real GPUs an NCCL
engine replaces this.
"""

from __future__ import annotations

import numpy as np

from .base import Collectives, check_reduce_op, reduce_arrays


class LocalCollectives(Collectives):
    """One process, any number of local replicas."""

    rank = 0
    size = 1

    def __init__(self):
        self._closed = False

    def _check_open(self):
        if self._closed:
            raise RuntimeError("This LocalCollectives was closed; create a new one.")

    def all_reduce(self, arrays, op="sum"):
        self._check_open()
        check_reduce_op(op)
        return list(arrays)

    def all_gather(self, array, axis=0):
        self._check_open()
        return array

    def broadcast(self, array, root=0):
        self._check_open()
        if root != 0:
            raise ValueError(f"broadcast root {root} is out of range for a group of size 1.")
        return array

    def barrier(self):
        self._check_open()

    def close(self):
        self._closed = True

    # -- across local replicas -------------------------------------------------------------------

    def reduce_replicas(self, per_replica: list, op: str = "sum") -> np.ndarray:
        """The reduction of one host array per replica (same shape and dtype on all)."""
        self._check_open()
        if not per_replica:
            raise ValueError("reduce_replicas needs at least one replica's value.")
        first = per_replica[0]
        for i, a in enumerate(per_replica[1:], 1):
            if a.shape != first.shape or a.dtype != first.dtype:
                raise ValueError(f"all_reduce: replica {i} has shape {a.shape} dtype {a.dtype}, "
                                 f"but replica 0 has shape {first.shape} dtype {first.dtype}.")
        return reduce_arrays(per_replica, op)

    def gather_replicas(self, per_replica: list, axis: int = 0) -> np.ndarray:
        self._check_open()
        return np.concatenate(per_replica, axis=axis)

    def __repr__(self):
        return "LocalCollectives(rank=0, size=1)"
