"""Timing helpers for `bench/run.py`: interleaved repeats, min-of-repeats, ratios to numpy.

Machines here are shared and noisy, so each case times every implementation in alternation,
many short rounds, and keeps each one's fastest round: noise only ever adds time, and
alternating means a slow spell hits all implementations alike. Ratios, not absolute times,
are what we report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

#: The environment variables that size BLAS thread pools (OpenBLAS, OpenMP, MKL, BLIS,
#: Accelerate). They are read when numpy loads, so a single-threaded BLAS needs a subprocess.
BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
            "VECLIB_MAXIMUM_THREADS")


@dataclass
class Case:
    """One benchmark: `impls` maps a name ('numpy', 'eager', 'torch', ...) to a zero-argument
    callable that does one unit of work; 'numpy' is the floor the others are divided by."""

    name: str
    target: float | None
    impls: dict
    note: str = ""
    inner: int = 1000  # calls per timed round
    results: dict = field(default_factory=dict)


def _time_round(fn, inner):
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def best_single_call(fn, repeats: int) -> float:
    """The fastest of `repeats` single calls of `fn`, in seconds (for work that is long, or
    that may run only once per setup, like a first call)."""
    return min(_time_round(fn, 1) for _ in range(repeats))


def run_case(case: Case, rounds: int) -> Case:
    # Warm up (first calls pay for imports, caches, BLAS thread start-up).
    for fn in case.impls.values():
        for _ in range(min(case.inner, 10)):
            fn()
    best = {name: float("inf") for name in case.impls}
    for _ in range(rounds):
        for name, fn in case.impls.items():
            best[name] = min(best[name], _time_round(fn, case.inner))
    case.results = best
    return case


def ratio(case: Case, name: str):
    floor = case.results.get("numpy")
    value = case.results.get(name)
    if floor is None or value is None:
        return None
    return value / floor


def format_seconds(s: float) -> str:
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    return f"{s * 1e3:.2f} ms"


def case_lines(case: Case) -> tuple:
    """(printable lines, names of missed targets) for a measured case: its name, then each
    implementation's best time and ratio to numpy, eager's against the case's target."""
    lines, missed = [case.name], []
    for name, seconds in case.results.items():
        r = ratio(case, name)
        line = f"  {name:<11} {format_seconds(seconds):>10}   {r:6.2f}x numpy"
        if name == "eager" and case.target is not None:
            ok = r <= case.target
            line += f"   target <= {case.target}x: {'ok' if ok else 'MISSED'}"
            if not ok:
                missed.append(case.name)
        lines.append(line)
    return lines, missed


def run_with_one_blas_thread(module: str, *args) -> dict:
    """Runs `python -m <module> *args` with every BLAS pool at one thread and returns the JSON
    object its last stdout line prints."""
    env = dict(os.environ)
    env.update({name: "1" for name in BLAS_ENV})
    root = Path(__file__).resolve().parents[1]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, "-m", module, *map(str, args)], capture_output=True,
                         text=True, cwd=root, env=env)
    if out.returncode:
        raise RuntimeError(f"the benchmark subprocess {module} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])
