"""Multi-process benchmarks (MPI): what eager's collective engine costs over raw mpi4py.

(m) All-reduce throughput of one 64 MB float32 buffer between 2 MPI processes on this machine:
    `MPICollectives.all_reduce` (the path the strategies use: into a new array, through the
    host's shared-memory window) against raw mpi4py `comm.Allreduce(MPI.IN_PLACE, buffer)` on
    the same buffer, alternating, best round of each.
    Target: eager >= 0.9x raw throughput (reported as eager's time / raw time <= 1/0.9).
(x) Data-parallel step overhead: one SGD step of the 784-256-256-10 MLP (GradientTape and
    `optimizer.apply_gradients` inside `strategy.run`, traced with `eager.function`; the eager
    step beside it) under `MultiWorkerMirroredStrategy` on 2 MPI processes with batch 128 per
    replica, against the one-process step of batch 128 without a strategy, in the same job: in
    each round rank 0 times the plain step while rank 1 waits at a barrier, then both time the
    distributed step (the slower worker's time counts). The ratio is the median over rounds of
    the ratio within a round. Target: traced <= 1.15x.

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
                result = engine.all_reduce([buffer], "sum")[0]
            elapsed = raw_comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
            best[name] = min(best[name], elapsed)
    assert result[0] == engine.size and buffer[0] == 1.0  # reduced into a new array
    if engine.rank == 0:
        print(json.dumps(best), flush=True)
    engine.close()


SIZES = (784, 256, 256, 10)
BATCH = 128  # per replica
TARGET_STEP = 1.15


def _mlp_step(eager, strategy, params, global_batch, traced):
    """The step of (x): variables and optimizer under `strategy`'s scope (None: no strategy)."""
    import contextlib  # noqa: PLC0415 - the worker's imports stay inside it

    with strategy.scope() if strategy is not None else contextlib.nullcontext():
        weights = [eager.Variable(p) for p in params]
        optimizer = eager.keras.optimizers.SGD(0.01)

    def step(x, y):
        with eager.GradientTape() as tape:
            h = x
            for i in range(0, len(weights), 2):
                h = eager.matmul(h, weights[i]) + weights[i + 1]
                if i + 2 < len(weights):
                    h = eager.nn.relu(h)
            per_example = eager.nn.sparse_softmax_cross_entropy_with_logits(y, h)
            loss = eager.nn.compute_average_loss(per_example, global_batch_size=global_batch)
        optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))
        return loss

    run = step if strategy is None else (lambda x, y: strategy.run(step, (x, y)))
    return eager.function(run) if traced else run


def step_worker(rounds: int, steps: int) -> None:
    """Runs inside each MPI process: (x)'s paired rounds (see the module doc)."""
    import statistics  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415 - after BLAS is pinned
    from mpi4py import MPI  # noqa: PLC0415

    import eager  # noqa: PLC0415

    comm = MPI.COMM_WORLD
    strategy = eager.distribute.MultiWorkerMirroredStrategy()
    rank = strategy.cluster_resolver.task_id
    rng = np.random.default_rng(0)
    params = []
    for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
        params += [(rng.standard_normal((n_in, n_out)) * np.sqrt(2 / n_in)).astype(np.float32),
                   np.zeros(n_out, np.float32)]
    x = eager.constant(rng.random((BATCH, SIZES[0]), dtype=np.float32))
    y = eager.constant(rng.integers(0, SIZES[-1], BATCH).astype(np.int32))
    ratios = {}
    per_step = {}
    for kind, traced in (("traced", True), ("eager", False)):
        plain = _mlp_step(eager, None, params, BATCH, traced) if rank == 0 else None
        distributed = _mlp_step(eager, strategy, params, 2 * BATCH, traced)
        n = steps if traced else max(1, steps // 4)
        for _ in range(3):  # warm up (and trace)
            if plain is not None:
                plain(x, y).numpy()
            distributed(x, y).numpy()
        times = {"plain": [], "distributed": []}
        for _ in range(rounds):
            comm.Barrier()
            if plain is not None:
                start = time.perf_counter()
                for _ in range(n):
                    loss = plain(x, y)
                loss.numpy()
                times["plain"].append((time.perf_counter() - start) / n)
            comm.Barrier()
            start = time.perf_counter()
            for _ in range(n):
                loss = distributed(x, y)
            loss.numpy()
            times["distributed"].append(
                comm.allreduce(time.perf_counter() - start, op=MPI.MAX) / n)
        if rank == 0:
            ratios[kind] = statistics.median(
                d / p for d, p in zip(times["distributed"], times["plain"]))
            per_step[kind] = {k: statistics.median(v) for k, v in times.items()}
    if rank == 0:
        print(json.dumps({"ratios": ratios, "per_step": per_step}), flush=True)


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


def measure(rounds: int, *worker_args) -> dict:
    from bench.harness import BLAS_ENV  # noqa: PLC0415 - keeps the worker's imports minimal

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, **{name: "1" for name in BLAS_ENV})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    args = [str(a) for a in worker_args] or ["--worker", str(rounds)]
    out = subprocess.run(
        [sys.executable, "-m", "eager.distribute.run", "-n", "2", str(Path(__file__)), *args],
        capture_output=True, text=True, cwd=root, env=env, timeout=600)
    if out.returncode:
        raise RuntimeError(f"the MPI benchmark failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(rounds: int, others=None, quick: bool = False) -> tuple:
    """Printable lines and the names of missed targets."""
    title = "(m) all-reduce of 64 MB float32 between 2 MPI processes"
    step_title = ("(x) data-parallel MLP step, 2 MPI processes x batch 128 against one "
                  "process x batch 128")
    why_not = available()
    if why_not:
        return [f"{title}: skipped ({why_not})", f"{step_title}: skipped ({why_not})"], []
    lines, missed = _allreduce_report(title, rounds, quick)
    step_lines, step_missed = _step_report(step_title, rounds, quick)
    return lines + step_lines, missed + step_missed


def _step_report(title, rounds, quick):
    result = measure(0, "--step-worker", 3 if quick else max(7, rounds // 2), 20 if quick else 50)
    lines = [title + " (BLAS on one thread each; median of paired per-round ratios)"]
    missed = []
    for kind in ("traced", "eager"):
        ratio = result["ratios"][kind]
        times = result["per_step"][kind]
        verdict = ""
        if kind == "traced":
            ok = ratio <= TARGET_STEP
            verdict = f" (target <= {TARGET_STEP:.2f}x) {'ok' if ok else 'MISSED'}"
            if not ok:
                missed.append(title)
        lines.append(f"  {kind:<7} one process {times['plain'] * 1e3:6.2f} ms, 2 workers "
                     f"{times['distributed'] * 1e3:6.2f} ms: {ratio:.2f}x{verdict}")
    return lines, missed


def _allreduce_report(title, rounds, quick):
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
    parser.add_argument("--step-worker", type=int, nargs=2, default=None, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        worker(options.worker)
    elif options.step_worker is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        step_worker(*options.step_worker)
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        print("\n".join(report(30, quick=options.quick)[0]))
