"""`CommunicationOptions` and `CommunicationImplementation` (≈ `tf.distribute.experimental`):
how a multi-worker strategy's collectives run.

`implementation` chooses the engine across processes: RING is MPI; NCCL is NCCL between the
workers' GPUs (an error where CUDA GPUs or CuPy's NCCL are missing); AUTO is NCCL where it can
run, else MPI (`cross_device_ops.select_process_engine`). `timeout_seconds` becomes the MPI
engine's deadline for each collective (NCCL calls wait as long as NCCL does), and
`bytes_per_pack` the size of the gradient buckets (0: the default size).
"""

from __future__ import annotations

import enum


class CommunicationImplementation(enum.Enum):
    """≈ `tf.distribute.experimental.CommunicationImplementation`."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


class CommunicationOptions:
    """≈ `tf.distribute.experimental.CommunicationOptions(bytes_per_pack=0,
    timeout_seconds=None, implementation=CommunicationImplementation.AUTO)`."""

    def __init__(self, bytes_per_pack=0, timeout_seconds=None,
                 implementation=CommunicationImplementation.AUTO):
        if bytes_per_pack < 0:
            raise ValueError(f"Argument `bytes_per_pack` must be >=0, Received {bytes_per_pack}.")
        if isinstance(implementation, str):
            implementation = CommunicationImplementation(implementation.upper())
        if not isinstance(implementation, CommunicationImplementation):
            raise ValueError("Argument `implementation` must be instance of "
                             "`tf.distribute.experimental.CommunicationImplementation`.")
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = implementation
