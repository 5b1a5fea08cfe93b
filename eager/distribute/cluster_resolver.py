"""`eager.distribute.cluster_resolver` ≈ `tf.distribute.cluster_resolver`: who the workers of a
multi-process job are and which one this process is.

eager's processes talk through MPI, so a cluster description only says how many workers there
are and on which hosts (`python -m eager.distribute.run` turns `TF_CONFIG`'s chief and worker
lists into `mpiexec -n N -hosts ...`); the ports in the addresses are not used. Each worker's
task is its MPI rank, the chief (if any) being rank 0.
"""

from __future__ import annotations

import json
import os


class ClusterSpec:
    """Jobs by name, each a list of task addresses. ≈ `tf.train.ClusterSpec` (dict form)."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        if not isinstance(cluster, dict):
            raise TypeError(f"`cluster` must be a dictionary mapping one or more job names to "
                            f"lists of network addresses, got {cluster!r}.")
        self._jobs = {str(job): list(tasks) for job, tasks in cluster.items()}

    def as_dict(self) -> dict:
        return {job: list(tasks) for job, tasks in self._jobs.items()}

    @property
    def jobs(self) -> list:
        return list(self._jobs)

    def num_tasks(self, job_name: str) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list:
        return list(range(len(self._job(job_name))))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._job(job_name)
        if not 0 <= task_index < len(tasks):
            raise ValueError(f"No task with index {task_index} in job {job_name}")
        return tasks[task_index]

    def job_tasks(self, job_name: str) -> list:
        return list(self._job(job_name))

    def _job(self, job_name):
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r}")
        return self._jobs[job_name]

    def __bool__(self):
        return bool(self._jobs)

    def __eq__(self, other):
        return isinstance(other, ClusterSpec) and self._jobs == other._jobs

    def __repr__(self):
        return f"ClusterSpec({self._jobs!r})"


class ClusterResolver:
    """The interface: `cluster_spec()`, `master()`, `task_type`, `task_id`."""

    task_type = None
    task_id = None
    rpc_layer = None
    environment = ""

    def cluster_spec(self) -> ClusterSpec:
        raise NotImplementedError

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            return ""
        address = self.cluster_spec().task_address(task_type, task_id)
        layer = rpc_layer or self.rpc_layer
        return f"{layer}://{address}" if layer else address

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return {}


class SimpleClusterResolver(ClusterResolver):
    """A cluster given directly."""

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None, environment="",
                 num_accelerators=None, rpc_layer=None):
        self._cluster_spec = ClusterSpec(cluster_spec)
        self._master = master
        self.task_type, self.task_id = task_type, task_id
        self.environment, self.rpc_layer = environment, rpc_layer
        self._num_accelerators = dict(num_accelerators or {})

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        if task_type is not None and task_id is not None:
            return super().master(task_type, task_id, rpc_layer)
        return self._master

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return dict(self._num_accelerators)


class TFConfigClusterResolver(ClusterResolver):
    """The cluster in the `TF_CONFIG` environment variable (JSON: `cluster`, `task`,
    `rpc_layer`, `environment`), read at each call as TensorFlow does."""

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        self._task_type, self._task_id = task_type, task_id
        self._rpc_layer, self._environment = rpc_layer, environment

    @staticmethod
    def _config() -> dict:
        text = os.environ.get("TF_CONFIG")
        return json.loads(text) if text else {}

    @property
    def task_type(self):
        return self._task_type or self._config().get("task", {}).get("type")

    @property
    def task_id(self):
        if self._task_id is not None:
            return self._task_id
        index = self._config().get("task", {}).get("index")
        return None if index is None else int(index)

    @property
    def rpc_layer(self):
        return self._rpc_layer or self._config().get("rpc_layer")

    @property
    def environment(self):
        return self._environment or self._config().get("environment", "")

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec(self._config().get("cluster", {}))


def worker_count(spec: ClusterSpec) -> int:
    """The number of processes a cluster describes for eager: its chief and worker tasks (the
    chief is rank 0). Parameter servers and evaluators have no MPI counterpart."""
    other = [job for job in spec.jobs if job not in ("chief", "worker")]
    if other:
        raise ValueError(f"eager.distribute runs workers over MPI; the cluster's job(s) "
                         f"{other} have no MPI counterpart (only 'chief' and 'worker' jobs).")
    return sum(spec.num_tasks(job) for job in ("chief", "worker") if job in spec.jobs)


def worker_hosts(spec: ClusterSpec) -> list:
    """The host of each process, in rank order (chief first), ports dropped."""
    addresses = [a for job in ("chief", "worker") if job in spec.jobs
                 for a in spec.job_tasks(job)]
    return [a.rsplit(":", 1)[0] if ":" in a else a for a in addresses]
