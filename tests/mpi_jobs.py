"""Small MPI jobs started by tests: a worker script run on N processes with
`python -m eager.distribute.run -n N` (the launcher wraps the venv's `mpiexec`), always under a
timeout, so that a hang becomes a failure; and the skip for a machine without the MPI runtime
(the `distributed` extra installs it: CI has it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def mpi_skip_reason():
    """Why MPI jobs cannot run here (no mpi4py, no mpiexec), or None."""
    try:
        import mpi4py  # noqa: F401, PLC0415 - only to know whether the extra is installed
    except ImportError:
        return "no mpi4py (install the `distributed` extra)"
    from eager.distribute.run import find_mpiexec  # noqa: PLC0415 - after the mpi4py check

    try:
        find_mpiexec()
    except FileNotFoundError:
        return "no mpiexec (install the `distributed` extra)"
    return None


def skip_module_without_mpi() -> None:
    """Skips the calling test module where MPI jobs cannot run (`mpi_skip_reason`)."""
    reason = mpi_skip_reason()
    if reason is not None:
        pytest.skip(reason, allow_module_level=True)


def run_job(tmp_path, body: str, *args, processes: int = 2,
            timeout_s: float = 180) -> subprocess.CompletedProcess:
    """`body` (dedented) as `tmp_path/worker.py` on `processes` MPI processes, with `args`,
    from `tmp_path`, this checkout on the path and no `TF_CONFIG`."""
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TF_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "eager.distribute.run", "-n", str(processes), str(script),
         *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout_s)


def rank_results(tmp_path, proc, processes: int) -> list:
    """Every rank's `result_<rank>.json`, in rank order (their stdouts interleave)."""
    files = [tmp_path / f"result_{rank}.json" for rank in range(processes)]
    assert all(f.exists() for f in files), proc.stdout + proc.stderr
    return [json.loads(f.read_text()) for f in files]
