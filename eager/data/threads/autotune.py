"""AUTOTUNE's policy: how many threads a parallel map runs and how many elements a prefetch
buffer holds when the user leaves the choice to the framework.

`AUTOTUNE` is TensorFlow's value (-1). What it chooses here, and why:

* Parallel calls: one worker per CPU this process may run on (`os.sched_getaffinity`, else
  `os.cpu_count()`). A map function's kernels release the GIL inside numpy, so workers beyond
  the cores only add switching; fewer leave cores idle. A map whose function is mostly Python
  (holding the GIL) gains nothing from more than one worker, but loses little either.
* Prefetch buffer: starts at `PREFETCH_START` elements and grows, doubling, up to
  `PREFETCH_LIMIT`, each time the consumer finds the buffer empty after the producer had filled
  it (TensorFlow's prefetch autotuner follows the same rule): a consumer that drains a full
  buffer takes elements in bursts faster than they are made, and a deeper buffer absorbs the
  burst. A producer that is simply slower than its consumer never fills the buffer, so the
  buffer stays small: depth cannot help it, and memory stays bounded by the limit either way.
  Two elements are enough for the steady case (one being consumed, one ready): measured by
  `bench/cases_data.py`'s overlap case.

Checked values raise TensorFlow's errors (InvalidArgumentError, with its words).
"""

from __future__ import annotations

import operator
import os

from ...base.errors import InvalidArgumentError

__all__ = ["AUTOTUNE", "PREFETCH_START", "PREFETCH_LIMIT", "available_cpus", "parallel_calls",
           "prefetch_buffer"]

#: ≈ `tf.data.AUTOTUNE`: let the framework choose a parallelism or a buffer size.
AUTOTUNE = -1

#: An autotuned prefetch buffer's first size, and the size it may grow to (see the module doc).
PREFETCH_START = 2
PREFETCH_LIMIT = 16


def available_cpus() -> int:
    """How many CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _as_count(value, what, op):
    if isinstance(value, bool):
        raise TypeError(f"{op}: {what} must be an integer, got a bool.")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {what} must be an integer, got {type(value).__name__} "
                        f"{value!r}.") from None


def parallel_calls(num_parallel_calls, op="ParallelMapDatasetV2") -> int:
    """The number of map workers for `num_parallel_calls` (`AUTOTUNE`: one per available CPU).
    Zero and negative counts other than AUTOTUNE are TensorFlow's InvalidArgumentError."""
    n = _as_count(num_parallel_calls, "num_parallel_calls", op)
    if n == AUTOTUNE:
        return available_cpus()
    if n <= 0:
        raise InvalidArgumentError(None, op, f"num_parallel_calls must be greater than zero. "
                                             f"(got {n}) [Op:{op}]")
    return n


def prefetch_buffer(buffer_size, op="PrefetchDataset") -> tuple:
    """(first size, largest size) of a prefetch buffer asked for with `buffer_size`: a fixed
    size is both; `AUTOTUNE` starts at `PREFETCH_START` and may grow to `PREFETCH_LIMIT`; 0 means
    no buffer (elements are made when asked for, as TensorFlow's `prefetch(0)`). Other negative
    sizes are TensorFlow's InvalidArgumentError."""
    n = _as_count(buffer_size, "buffer_size", op)
    if n == AUTOTUNE:
        return PREFETCH_START, PREFETCH_LIMIT
    if n < 0:
        raise InvalidArgumentError(None, op, "buffer_size must be >= 0 or set buffer_size to be "
                                             f"-1 for auto-tuning (got {n}) [Op:{op}]")
    return n, n
