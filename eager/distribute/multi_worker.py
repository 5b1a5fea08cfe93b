"""`MultiWorkerMirroredStrategy` (≈ `tf.distribute.MultiWorkerMirroredStrategy`): synchronous
data parallelism across processes, one process per worker, started by `mpiexec` (or
`python -m eager.distribute.run`).

Each worker mirrors its variables over its own devices (its GPUs, else its CPU) exactly as
`MirroredStrategy` does; what changes is the strategy's collective engine: the MPI engine
(`collectives/mpi.py`, one participant per process) instead of the one-process engine, or the
NCCL engine between the workers' GPUs (`collectives/nccl.py`, chosen by
`CommunicationOptions.implementation`: `cross_device_ops.select_process_engine`). Every
reduced bucket's `CollectiveReduceV2` then all-reduces across the processes, so
`num_replicas_in_sync` is the local replicas times the workers and a MEAN divides by that
global count. New variables start as rank 0's values (broadcast at creation).

Checkpoints: every worker saves (its reads may take collectives), but only the chief's file
lands at the path asked for; the others write to a temporary directory beside it, deleted at
once (TF's pattern; `eager.train.checkpoint_management.WORKER_TEMP_PATH`). Every worker can
restore, from a checkpoint of any run.

Which process is which: the MPI rank. Rank 0 is the chief (it writes checkpoints and
summaries); with a `chief` job in `TF_CONFIG` rank 0 is that chief and rank r the worker r-1,
else rank r is worker r. Started without `mpiexec` (one process), the strategy is a one-worker
strategy, as TensorFlow's is without a cluster.
"""

from __future__ import annotations

import json
import os

import numpy as np

from ..devices import registry as _devices
from ..train import checkpoint_management as _checkpoint_management
from .cluster_resolver import (ClusterSpec, SimpleClusterResolver, TFConfigClusterResolver,
                               worker_count)
from .collective_util import CommunicationOptions
from .cross_device_ops import select_process_engine
from .strategy import Strategy, _device_name, canonical_device

#: Environment variables through which MPI launchers tell a process the size of its job
#: (MPICH/Hydra, Open MPI, PMIx): read so a plain `python train.py` never initializes MPI.
_MPI_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")


def launched_processes() -> int:
    """How many processes the MPI launcher started for this job (1 without a launcher)."""
    for name in _MPI_SIZE_VARIABLES:
        value = os.environ.get(name)
        if value and value.isdigit():
            return int(value)
    return 1


def _world_collectives(options, device):
    """The engine over every launched process (MPI, or NCCL on `device` as
    `options.implementation` and the machine decide: `cross_device_ops.select_process_engine`),
    or None for a one-process job."""
    if launched_processes() < 2:
        described = _tf_config_workers()
        if described > 1:
            raise ValueError(
                f"TF_CONFIG describes a cluster of {described} workers, but this process was "
                f"not started as one of {described} MPI processes: eager's workers talk "
                f"through MPI, so start them with `python -m eager.distribute.run train.py` "
                f"(which reads TF_CONFIG) or `mpiexec -n {described} python train.py`.")
        return None
    try:
        from .collectives.mpi import MPICollectives  # noqa: PLC0415 - initializes MPI
    except ImportError as e:
        raise ImportError(
            "MultiWorkerMirroredStrategy under mpiexec needs mpi4py: install eager's "
            "`distributed` extra (pip install -e \".[distributed]\")") from e
    engine = MPICollectives(timeout_seconds=options.timeout_seconds)
    if engine.size < 2:
        return None
    _checkpoint_management.WORKER_TEMP_PATH = _temp_paths_for(engine.rank)
    return select_process_engine(engine, options.implementation, device)


def _temp_paths_for(rank):
    """Where worker `rank` writes its copy of a checkpoint (TF's pattern): the chief writes
    the real path; another worker writes `<dir>/workertemp_<rank>/<name>`, deleted at once."""
    def worker_temp_path(path):
        if rank == 0:
            return None
        directory, name = os.path.split(os.path.abspath(os.fspath(path)))
        return os.path.join(directory, f"workertemp_{rank}", name)
    return worker_temp_path


def _tf_config_workers() -> int:
    text = os.environ.get("TF_CONFIG")
    if not text:
        return 0
    spec = ClusterSpec(json.loads(text).get("cluster", {}))
    return worker_count(spec) if spec else 0


def _host_names(engine) -> list:
    """Every worker's host name, in rank order (fixed-size byte buffers through all_gather)."""
    import socket  # noqa: PLC0415 - only for a multi-worker strategy

    name = socket.gethostname().encode()[:255]
    buffer = np.zeros((1, 256), np.uint8)
    buffer[0, :len(name)] = np.frombuffer(name, np.uint8)
    rows = engine.all_gather(buffer, axis=0)
    return [bytes(row).rstrip(b"\0").decode() for row in rows]


def _resolver_for(engine):
    """TF's resolver for this job: `TF_CONFIG`'s cluster when it describes these workers (the
    task is the rank's: chief first), else one `worker` job of every process's host."""
    if engine is None:
        return TFConfigClusterResolver()
    text = os.environ.get("TF_CONFIG")
    spec = ClusterSpec(json.loads(text).get("cluster", {})) if text else ClusterSpec({})
    if not spec or worker_count(spec) != engine.size:
        spec = ClusterSpec({"worker": _host_names(engine)})
    rank = engine.rank
    if "chief" in spec.jobs:
        task_type, task_id = ("chief", 0) if rank == 0 else ("worker", rank - 1)
    else:
        task_type, task_id = "worker", rank
    return SimpleClusterResolver(spec, task_type=task_type, task_id=task_id)


class MultiWorkerMirroredStrategy(Strategy):
    """≈ `tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=None,
    communication_options=None)` (see the module doc)."""

    def __init__(self, cluster_resolver=None, communication_options=None):
        self._init(None, cluster_resolver, communication_options)

    @classmethod
    def _from_local_devices(cls, devices, communication_options=None):
        """A strategy whose workers each mirror over `devices` (TF's name for the same
        constructor, used by tests: e.g. two logical CPUs per worker)."""
        strategy = cls.__new__(cls)
        strategy._init([_device_name(d) for d in devices], None, communication_options)
        return strategy

    def _init(self, devices, cluster_resolver, communication_options):
        if communication_options is None:
            communication_options = CommunicationOptions()
        if not isinstance(communication_options, CommunicationOptions):
            raise ValueError("communication_options must be an instance of "
                             "tf.distribute.experimental.CommunicationOptions")
        if devices is None:
            gpus = _devices.list_logical_devices("GPU")
            devices = [d.name for d in gpus] or ["/device:CPU:0"]
        for d in devices:
            _devices.resolve(_devices.parse_device(d), soft=False)
        engine = _world_collectives(communication_options, devices[0])
        # TF's canonical names, in this process's own job (TF names a worker's devices
        # '/job:worker/.../task:<i>/...'; eager's device scopes know only this process's).
        super().__init__([canonical_device(d) for d in devices], engine)
        if communication_options.bytes_per_pack:
            self._extended.bucket_bytes = int(communication_options.bytes_per_pack)
        self._communication_options = communication_options
        self._cluster_resolver = cluster_resolver or _resolver_for(engine)

    @property
    def cluster_resolver(self):
        """Who the workers are and which one this process is (see the module doc)."""
        return self._cluster_resolver
