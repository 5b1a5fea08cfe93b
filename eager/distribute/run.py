"""`python -m eager.distribute.run -n 2 train.py [args]`: start a script on N MPI processes.

A thin wrapper over the MPI launcher installed with eager's `distributed` extra (MPICH's
`mpiexec`, found next to this Python so the venv's own runtime is used): the same as
`mpiexec -n 2 python train.py [args]` with this interpreter and the whole environment passed
to every process. Without `-n`, the worker count and hosts come from `TF_CONFIG`'s `cluster`
(its `chief` and `worker` lists; ports are ignored, MPI picks its own); `TF_CONFIG` itself is
then not passed on, since each worker's task is its MPI rank.

Either MPI runtime's `mpiexec` works: MPICH's (Hydra; the extra's) or Open MPI's, told apart by
`mpiexec --version`. With Open MPI the wrapper asks for what MPICH does by default, as
Horovod's launcher does: `--oversubscribe` on one host (more processes than cores may be
asked for), `--allow-run-as-root` when run as root (containers), and on several hosts `-x` for
the variables the workers need (PATH, PYTHONPATH, LD_LIBRARY_PATH and the EAGER_, TF_, OMP_,
OPENBLAS_, NCCL_, CUDA_ families), since Open MPI passes a remote process none of the caller's
environment.

Exit status: the job's (non-zero when any worker failed; the failing worker's message is in the
output above).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .cluster_resolver import ClusterSpec, worker_count, worker_hosts


def find_mpiexec() -> str:
    """The `mpiexec` beside this interpreter (a venv's own MPI runtime), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError(
            "eager.distribute.run: no `mpiexec` next to this Python or on PATH; install the MPI "
            "runtime with `pip install -e \".[distributed]\"` (or `pip install mpich mpi4py`).")
    return found


#: Variables an Open MPI job on several hosts passes to every worker (`-x`), by name or prefix.
FORWARDED = ("PATH", "PYTHONPATH", "LD_LIBRARY_PATH")
FORWARDED_PREFIXES = ("EAGER_", "TF_", "OMP_", "OPENBLAS_", "NCCL_", "CUDA_")


def mpi_flavor(mpiexec: str) -> str:
    """"openmpi" when `mpiexec --version` names Open MPI (or its runtime, OpenRTE), else
    "mpich" (Hydra's options, which MPICH, Intel MPI and MVAPICH share)."""
    try:
        text = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "mpich"
    return "openmpi" if "Open MPI" in text or "OpenRTE" in text else "mpich"


def build_command(argv=None, environ=None) -> tuple:
    """The mpiexec command line and the workers' environment for these arguments."""
    parser = argparse.ArgumentParser(
        prog="python -m eager.distribute.run",
        description="Run a Python script on N MPI processes (wraps mpiexec).")
    parser.add_argument("-n", "--num-workers", type=int, default=None,
                        help="number of processes (default: from TF_CONFIG's cluster)")
    parser.add_argument("--hosts", default=None,
                        help="comma-separated hosts (default: from TF_CONFIG, else this one)")
    parser.add_argument("script", help="the Python script each worker runs")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    options = parser.parse_args(argv)
    env = dict(os.environ if environ is None else environ)
    count, hosts = options.num_workers, options.hosts
    tf_config = env.get("TF_CONFIG")
    if tf_config:
        spec = ClusterSpec(json.loads(tf_config).get("cluster", {}))
        if spec:
            described = worker_count(spec)
            if count is not None and count != described:
                parser.error(f"-n {count} disagrees with TF_CONFIG's cluster of {described} "
                             f"workers; drop one of them.")
            count = described
            if hosts is None and set(worker_hosts(spec)) - {"localhost", "127.0.0.1"}:
                hosts = ",".join(worker_hosts(spec))
            del env["TF_CONFIG"]  # each worker's task is its MPI rank
    if count is None:
        parser.error("give the number of workers with -n N (or a cluster in TF_CONFIG)")
    if count < 1:
        parser.error(f"-n must be at least 1, got {count}")
    mpiexec = find_mpiexec()
    command = [mpiexec, "-n", str(count)]
    if mpi_flavor(mpiexec) == "openmpi":
        command += _open_mpi_options(hosts, env)
    elif hosts:
        command += ["-hosts", hosts]
    command += [sys.executable, options.script, *options.args]
    return command, env


def _open_mpi_options(hosts, env) -> list:
    """Open MPI's options for what MPICH's Hydra does unasked (see the module doc)."""
    options = ["--allow-run-as-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    if not hosts:
        return options + ["--oversubscribe"]
    options += ["--host", hosts]
    for name in sorted(env):
        if name in FORWARDED or name.startswith(FORWARDED_PREFIXES):
            options += ["-x", name]
    return options


def main(argv=None) -> int:
    command, env = build_command(argv)
    status = subprocess.call(command, env=env)
    if status != 0:
        print(f"eager.distribute.run: the job failed (mpiexec exit status {status}); the "
              f"failing worker's message is above.", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
