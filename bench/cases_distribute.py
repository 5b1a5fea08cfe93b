"""Multi-process benchmarks (MPI): what eager's collective engine costs over raw mpi4py.

(m) All-reduce throughput of one 64 MB float32 buffer between 2 MPI processes on this machine:
    `MPICollectives.all_reduce` (in place, the path the strategies use) against raw mpi4py
    `comm.Allreduce(MPI.IN_PLACE, buffer)` on the same buffer, alternating, best round of each.
    Target: eager >= 0.9x raw throughput (reported as eager's time / raw time <= 1/0.9).

The processes are started with `python -m eager.distribute.run -n 2` (BLAS at one thread each);
rank 0 prints the JSON result. Skipped, with a line saying so, when mpi4py or mpiexec is
missing (the `distributed` extra). Standalone:

    python -m bench.cases_distribute [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

#: 64 MB of float32.
ELEMENTS = 16 * 2 ** 20
TARGET = 1 / 0.9  # eager's time over raw mpi4py's


def worker(rounds: int) -> None:
    """Runs inside each MPI process: alternate raw and eager all-reduces, best of each."""
    import numpy as np  # noqa: PLC0415 - imported in the worker only, after BLAS is pinned
    from mpi4py import MPI  # noqa: PLC0415 - importing initializes MPI: the worker only

    from eager.distribute.collectives.mpi import MPICollectives  # noqa: PLC0415

    engine = MPICollectives()
    raw_comm = MPI.COMM_WORLD
    buffer = np.ones(ELEMENTS, np.float32)
    best = {"raw": float("inf"), "eager": float("inf")}
    for _ in range(rounds):
        for name in ("raw", "eager"):
            buffer[...] = 1.0
            raw_comm.Barrier()
            start = time.perf_counter()
            if name == "raw":
                raw_comm.Allreduce(MPI.IN_PLACE, buffer, op=MPI.SUM)
            else:
                engine.all_reduce([buffer], "sum")
            elapsed = raw_comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
            best[name] = min(best[name], elapsed)
    assert buffer[0] == engine.size  # the eager round was the last: it really reduced
    if engine.rank == 0:
        print(json.dumps(best), flush=True)
    engine.close()


def available() -> str | None:
    """None when the benchmark can run, else why not."""
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py not installed (pip install -e \".[distributed]\")"
    from eager.distribute.run import find_mpiexec  # noqa: PLC0415 - only when MPI exists

    try:
        find_mpiexec()
    except FileNotFoundError:
        return "no mpiexec"
    return None


def measure(rounds: int) -> dict:
    from bench.harness import BLAS_ENV  # noqa: PLC0415 - keeps the worker's imports minimal

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, **{name: "1" for name in BLAS_ENV})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-m", "eager.distribute.run", "-n", "2", str(Path(__file__)),
         "--worker", str(rounds)],
        capture_output=True, text=True, cwd=root, env=env, timeout=600)
    if out.returncode:
        raise RuntimeError(f"the MPI benchmark failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(rounds: int, others=None, quick: bool = False) -> tuple:
    """Printable lines and the names of missed targets."""
    title = "(m) all-reduce of 64 MB float32 between 2 MPI processes"
    why_not = available()
    if why_not:
        return [f"{title}: skipped ({why_not})"], []
    best = measure(3 if quick else max(5, rounds // 3))
    ratio = best["eager"] / best["raw"]
    ok = ratio <= TARGET
    lines = [title,
             f"  raw mpi4py Allreduce   {best['raw'] * 1e3:8.2f} ms "
             f"({ELEMENTS * 4 / best['raw'] / 2 ** 30:.2f} GiB/s)",
             f"  eager all_reduce       {best['eager'] * 1e3:8.2f} ms  "
             f"{ratio:.2f}x raw (target <= {TARGET:.2f}x, i.e. >= 0.9x throughput) "
             f"{'ok' if ok else 'MISSED'}"]
    return lines, [] if ok else [title]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        worker(options.worker)
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        print("\n".join(report(30, quick=options.quick)[0]))
