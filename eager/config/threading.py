"""`eager.config.threading` ≈ `tf.config.threading`: how many threads run a graph's operations
(see `eager.runtime.threads` for what each setting does)."""

from ..runtime.threads import (get_inter_op_parallelism_threads, get_intra_op_parallelism_threads,
                               set_inter_op_parallelism_threads, set_intra_op_parallelism_threads)

__all__ = ["get_inter_op_parallelism_threads", "set_inter_op_parallelism_threads",
           "get_intra_op_parallelism_threads", "set_intra_op_parallelism_threads"]
