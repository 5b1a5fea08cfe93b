"""The collective interface every engine implements (in-process, MPI, NCCL).

It is deliberately small and buffer-shaped: engines move contiguous arrays (host numpy arrays;
a device engine takes its array module's arrays), never pickled Python objects, so MPI can hand
them straight to `Allreduce` and NCCL to its kernels. Fusing many small gradients into a few
large buffers (buckets) happens above this interface, in `eager.distribute.buckets`.

`rank` and `size` describe the participants of this engine: for a process engine (MPI) one
participant per process; the in-process engine sees one participant (itself) and reduces
across the local replicas it is handed (`LocalCollectives.reduce_replicas`).
"""

from __future__ import annotations

from concurrent.futures import Future

import numpy as np

#: The reductions every engine supports, by the names `all_reduce` takes.
REDUCE_OPS = ("sum", "mean", "max", "min")


class Collectives:
    """A group of participants that reduce, gather and broadcast contiguous buffers together.

    Every participant must call the same collectives in the same order with buffers of the same
    shapes and dtypes (or the engine deadlocks or fails); callers guarantee that order (the
    strategies issue collectives in variable-creation order, and traced functions order them by
    automatic control dependencies).
    """

    rank: int = 0
    size: int = 1
    #: True when `start` returns before the exchange is done (the engine has a communication
    #: thread, `ordered.OrderedCalls`): only then is splitting an all-reduce into a start and
    #: a wait worth it (`eager.runtime.passes.collectives`).
    asynchronous: bool = False

    def start(self, fn) -> Future:
        """Runs `fn()` (which calls this engine's collectives) after every collective issued
        before it, without waiting for it where the engine is `asynchronous`; the Future holds
        its result or its error. Here: at once, on the caller's thread."""
        future = Future()
        try:
            future.set_result(fn())
        except Exception as e:  # noqa: BLE001 - raised where the result is asked for
            future.set_exception(e)
        return future

    def all_reduce(self, arrays: list[np.ndarray], op: str = "sum") -> list[np.ndarray]:
        """Reduce each array elementwise across all participants; every participant gets the
        result. The engine may reduce in place and return the same arrays. `op` is one of
        `REDUCE_OPS`."""
        raise NotImplementedError

    def all_gather(self, array: np.ndarray, axis: int = 0) -> np.ndarray:
        """Concatenate every participant's `array` along `axis`, in rank order."""
        raise NotImplementedError

    def broadcast(self, array: np.ndarray, root: int = 0) -> np.ndarray:
        """Every participant gets `root`'s `array` (same shape and dtype on all)."""
        raise NotImplementedError

    def barrier(self) -> None:
        """Return once every participant has called `barrier`."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the engine's resources; later calls are errors. Idempotent."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def check_reduce_op(op: str) -> str:
    """The op's canonical name, or TF's ValueError wording for an unknown one."""
    name = str(op).lower()
    if name not in REDUCE_OPS:
        raise ValueError(f"Unsupported reduction {op!r} for all_reduce; expected one of "
                         f"{', '.join(REDUCE_OPS)}.")
    return name


def reduce_arrays(arrays: list, op: str, xp=np):
    """Elementwise reduction of a list of same-shaped arrays (the local engine's kernel; also a
    reference the other engines' tests compare against). Sums in the arrays' dtype, in list
    order, so the result is deterministic for a given replica order."""
    op = check_reduce_op(op)
    out = xp.array(arrays[0], copy=True)
    for a in arrays[1:]:
        if op in ("sum", "mean"):
            out += a
        elif op == "max":
            xp.maximum(out, a, out=out)
        else:
            xp.minimum(out, a, out=out)
    if op == "mean":
        if out.dtype.kind in "iub":
            out //= len(arrays)
        else:
            out /= out.dtype.type(len(arrays))
    return out
