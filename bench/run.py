"""Benchmarks: `eager` against the raw-numpy floor (and TensorFlow/PyTorch/JAX when installed).

    python bench/run.py           # full run (a few minutes)
    python bench/run.py --quick   # smoke run (CI): few rounds, same cases

Prints, per case, each implementation's best time per call and its ratio to numpy, with the
target each case is held to. Ratios are measured in one process run, interleaved.
To A/B two checkouts in alternating fresh processes: bench/compare_checkouts.py.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import (cases_async, cases_autodiff, cases_autograph, cases_core,  # noqa: E402
                   cases_data, cases_distribute, cases_function, cases_gpu_proxy, cases_keras,
                   cases_list, cases_runtime, cases_saved_model, cases_training, frameworks)
from bench.harness import case_lines, run_case  # noqa: E402


def import_time() -> tuple:
    """Best of 5 fresh-interpreter import times (numpy alone, numpy + eager), in seconds.

    Measured as users see it: with bytecode caching on (one warm-up import writes the caches,
    even where the environment sets PYTHONDONTWRITEBYTECODE).
    """
    code = ("import time; t0 = time.perf_counter(); import numpy; t1 = time.perf_counter(); "
            "import eager; t2 = time.perf_counter(); print(t1 - t0, t2 - t0)")
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    root = Path(__file__).resolve().parents[1]
    best_numpy = best_total = float("inf")
    for _ in range(6):  # the first run writes the bytecode caches
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, cwd=root, env=env)
        numpy_s, total_s = (float(v) for v in out.stdout.split())
        best_numpy, best_total = min(best_numpy, numpy_s), min(best_total, total_s)
    return best_numpy, best_total


def machine() -> str:
    return (f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"numpy {np.__version__}, {platform.system()} {platform.release()}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (smoke test)")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 30)

    others = frameworks.available()
    print(f"machine: {machine()}")
    print(f"compared frameworks installed: {', '.join(sorted(others)) or 'none'}")
    numpy_s, total_s = import_time()
    print(f"import eager: {total_s * 1e3:.0f} ms, of which numpy {numpy_s * 1e3:.0f} ms "
          f"(target < 300 ms)")
    print()
    failures = []
    started = time.perf_counter()
    for make in cases_core.CASES + cases_autodiff.CASES + cases_training.CASES:
        lines, missed = case_lines(run_case(make(others), rounds))
        print("\n".join(lines))
        print()
        failures.extend(missed)
    reports = [lambda: cases_list.report(rounds, others)] + [
        lambda module=module: module.report(rounds, others, quick=args.quick)
        for module in (cases_async, cases_gpu_proxy, cases_function, cases_autograph,
                       cases_runtime, cases_data, cases_keras, cases_saved_model,
                       cases_distribute)]
    for report in reports:
        lines, missed = report()
        print("\n".join(lines))
        print()
        failures.extend(missed)
    print(f"total {time.perf_counter() - started:.1f} s; rounds per case: {rounds}")
    if failures:
        print("targets missed: " + "; ".join(failures))
    # Missed targets are reported, not fatal: timings on shared machines are noisy, and the
    # smoke run exists to prove the benchmarks run.
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
