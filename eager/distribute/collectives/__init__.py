"""Collective engines behind one small interface (`base.Collectives`): in-process across this
process's devices (`local`), and the engines that reach other processes or GPUs (MPI, NCCL),
which implement the same interface."""

from .base import Collectives, REDUCE_OPS
from .local import LocalCollectives

__all__ = ["Collectives", "LocalCollectives", "REDUCE_OPS"]
