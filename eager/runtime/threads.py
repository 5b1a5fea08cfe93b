"""How many threads run a graph's operations (the settings behind `eager.config.threading`, ≈
`tf.config.threading`).

* Inter-op parallelism: how many *independent operations* of one graph may run at once. 0 (the
  default) runs graphs sequentially in the calling thread, in program order, which is the
  cheapest way for the small graphs most functions are; 1 means the same. n >= 2 lets the graph
  runtime run independent nodes on a shared pool of n threads (the caller being one of them):
  worthwhile when a graph has independent kernels large enough that numpy releases the GIL
  (matmuls, big elementwise ops). The graph runtime reads this setting when it picks a runner
  (`eager.runtime.parallel.ParallelExecutor` takes the count explicitly).
* Intra-op parallelism: how many threads *one* kernel may use. It is accepted, checked and
  reported, but has no effect: numpy's BLAS library fixes its thread count from the environment
  (`OPENBLAS_NUM_THREADS`, `OMP_NUM_THREADS`, `MKL_NUM_THREADS`) when it is loaded, and changing
  that behind numpy's back from here would be a process-wide surprise.

TensorFlow refuses changes after its runtime has started; here a change takes effect for
runners chosen afterwards (pools are shared per size, so a new size makes a new pool).
"""

from __future__ import annotations

import operator

__all__ = ["settings", "ThreadSettings", "get_inter_op_parallelism_threads",
           "set_inter_op_parallelism_threads", "get_intra_op_parallelism_threads",
           "set_intra_op_parallelism_threads"]


class ThreadSettings:
    """The process-wide counts (`settings`): the graph runtime reads `settings.inter_op` when it
    picks a runner for a call."""

    __slots__ = ("inter_op", "intra_op")

    def __init__(self):
        self.inter_op = 0
        self.intra_op = 0


settings = ThreadSettings()


def _checked_count(num_threads, what) -> int:
    if isinstance(num_threads, bool):
        raise TypeError(f"{what} must be an integer number of threads, got a bool.")
    try:
        n = operator.index(num_threads)
    except TypeError:
        raise TypeError(f"{what} must be an integer number of threads, got "
                        f"{type(num_threads).__name__} {num_threads!r}.") from None
    if n < 0:
        raise ValueError(f"{what} must be >= 0 (0 means the default), got {n}.")
    return n


def get_inter_op_parallelism_threads() -> int:
    """How many independent graph operations may run at once; 0 (the default) means graphs
    run sequentially in the calling thread."""
    return settings.inter_op


def set_inter_op_parallelism_threads(num_threads) -> None:
    """Sets how many independent graph operations may run at once: 0 (the default) or 1 run
    graphs sequentially, n >= 2 runs them on a shared pool of n threads. Negative counts are a
    ValueError, non-integers a TypeError."""
    settings.inter_op = _checked_count(num_threads, "inter_op_parallelism_threads")


def get_intra_op_parallelism_threads() -> int:
    """The intra-op thread count last set (0, the default, lets the BLAS library decide).
    Reported only: see the module doc."""
    return settings.intra_op


def set_intra_op_parallelism_threads(num_threads) -> None:
    """Records the intra-op thread count (validated as the inter-op count). It has no effect
    on kernels: numpy's BLAS threads are set by environment variables before numpy loads (see
    the module doc)."""
    settings.intra_op = _checked_count(num_threads, "intra_op_parallelism_threads")
