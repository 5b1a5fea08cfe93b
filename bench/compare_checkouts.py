"""A/B benchmark of two checkouts of eager, each measured in its own fresh processes.

    python bench/compare_checkouts.py /path/to/checkoutA /path/to/checkoutB \\
        --cases a,d,e,g,k --runs 8 --rounds 15

What it is for: showing that a change (B) made no benchmark ratio worse than its starting point
(A), on machines that are shared and noisy. Each of `--runs` runs launches one fresh Python
process per checkout, alternating the order (A then B, then B then A, ...), so the two processes
of a run are adjacent in time and a slow spell of the machine hits both sides alike. A process
runs with its checkout as working directory and first on `sys.path`, so it imports THAT
checkout's `eager` and `bench` (the worker prints `eager.__file__` and the parent checks it lies
inside the checkout). It builds each requested lettered case with the checkout's own case
constructor (found in its `bench/cases_*.py`), keeps only the 'numpy' and 'eager'
implementations, times them with the checkout's `harness.run_case(case, rounds)` and reports
eager's best time, numpy's best time and their ratio. The worker code is this file's, so both
sides are driven the same way. Every BLAS pool is limited to one thread (the variables in
`harness.BLAS_ENV` set to "1"), so cases with large matmuls are stable and do not fight over the
cores.

How to read the table (one row per case):

    median A, median B   the median over runs of eager/numpy in each checkout (lower = faster)
    B/A of medians       median B / median A
    paired B/A           per run, B's ratio / A's ratio (the two processes of one run), then the
                         median of those and their min-max over runs

B/A < 1 means B is faster than A relative to numpy (an improvement), > 1 slower (a regression),
about 1 no change. Ratios to numpy rather than absolute times cancel most of the machine's speed
at the moment; pairing the two processes of one run cancels what is left of slow spells, and the
median of the paired ratios ignores the few runs a noisy neighbour spoiled. Their min-max is the
noise: a difference inside it (e.g. 0.97-1.04 around 1.01) is no difference. "no run better" /
"no run worse" flag rows whose paired ratios all lie on one side of 1 (from 5 runs up). A case a
checkout does not have (no constructor for its letter) is reported as missing on that side.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

# Nothing of eager, numpy or bench is imported at module level: the worker must import them
# from the checkout it measures, after it has put that checkout first on sys.path.

#: A case constructor's source builds `Case("(x) ...` (or `Case(f"(x) ...`): its letter is x.
CASE_NAME = re.compile(r"""\bCase\(\s*f?["']\(([A-Za-z0-9]+'?)\)""")

#: Fewer paired runs than this are never flagged "no run worse/better": with pure noise, all n
#: pairs fall on one side of 1 with probability 2 / 2**n (5 pairs: 6%; 8 pairs: 0.8%).
MIN_PAIRS_TO_FLAG = 5


# -----------------------------------------------------------------------------------------------
# worker (runs in the child process, inside one checkout)
# -----------------------------------------------------------------------------------------------

def find_constructors(root: Path) -> dict:
    """{letter: (module name, function)} for each module-level function in `root/bench/
    cases_*.py` that builds the `harness.Case` of exactly one letter and takes one argument (the
    other frameworks), found from its source without building anything."""
    found = {}
    for path in sorted((root / "bench").glob("cases_*.py")):
        try:
            module = importlib.import_module(f"bench.{path.stem}")
        except Exception:  # noqa: BLE001, S112 - a module that does not import offers no cases
            continue
        for fn in vars(module).values():
            if not inspect.isfunction(fn) or fn.__module__ != module.__name__:
                continue
            try:
                letters = set(CASE_NAME.findall(inspect.getsource(fn)))
                params = inspect.signature(fn).parameters
            except (OSError, TypeError, ValueError):
                continue
            if len(letters) == 1 and len(params) == 1:
                found.setdefault(letters.pop(), (module.__name__, fn))
    return found


def worker(root: Path, letters: list, rounds: int) -> dict:
    # Not at module level (see there): the worker imports these from the checkout it measures,
    # which worker_main has put first on sys.path.
    import numpy as np  # noqa: PLC0415 - the worker's only

    import bench  # noqa: PLC0415 - the checkout's
    import eager  # noqa: PLC0415 - the checkout's
    from bench import harness  # noqa: PLC0415 - the checkout's

    results, missing = {}, {}
    constructors = find_constructors(root)
    for letter in letters:
        if letter not in constructors:
            missing[letter] = "no constructor for this letter"
            continue
        module, make = constructors[letter]
        try:
            case = make({})  # no other frameworks: only numpy and eager are compared
            if not case.name.startswith(f"({letter})"):
                missing[letter] = f"{module}.{make.__name__} built {case.name!r}"
                continue
            case.impls = {name: case.impls[name] for name in ("numpy", "eager")}
            harness.run_case(case, rounds)
        except Exception as exc:  # noqa: BLE001 - reported as missing, with the reason
            missing[letter] = f"{module}.{make.__name__} failed: {type(exc).__name__}: {exc}"
            continue
        eager_s, numpy_s = case.results["eager"], case.results["numpy"]
        results[letter] = {"name": case.name, "constructor": f"{module}.{make.__name__}",
                           "eager": eager_s, "numpy": numpy_s, "ratio": eager_s / numpy_s}
    return {"eager_file": eager.__file__, "bench_file": bench.__file__,
            "machine": (f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
                        f"{platform.python_version()}, numpy {np.__version__}, "
                        f"{platform.system()} {platform.release()}"),
            "blas_env": {name: os.environ.get(name) for name in harness.BLAS_ENV},
            "results": results, "missing": missing}


def worker_main(root: str, letters: str, rounds: str) -> int:
    here = Path(__file__).resolve().parent
    sys.path[:] = [root] + [p for p in sys.path if p and Path(p).resolve() != here]
    os.chdir(root)
    print(json.dumps(worker(Path(root), letters.split(","), int(rounds))))
    return 0


# -----------------------------------------------------------------------------------------------
# parent
# -----------------------------------------------------------------------------------------------

def revision(checkout: Path) -> str:
    def git(*args):
        out = subprocess.run(["git", "-C", str(checkout), *args], check=False, capture_output=True,
                             text=True)
        return out.stdout.strip() if out.returncode == 0 else None

    head = git("rev-parse", "--short", "HEAD")
    if head is None:
        return "not a git checkout"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return head + (" + uncommitted changes" if dirty else "")


def run_worker(python: str, checkout: Path, letters: list, rounds: int, env: dict) -> dict:
    out = subprocess.run([python, str(Path(__file__).resolve()), "--worker", str(checkout),
                          ",".join(letters), str(rounds)],
                         check=False, capture_output=True, text=True, cwd=checkout, env=env)
    if out.returncode:
        raise SystemExit(f"the worker for {checkout} failed:\n{out.stderr}")
    report = json.loads(out.stdout.strip().splitlines()[-1])
    for key in ("eager_file", "bench_file"):
        if not Path(report[key]).resolve().is_relative_to(checkout):
            raise SystemExit(f"the worker for {checkout} imported {report[key]} "
                             f"(not that checkout's): check sys.path / installed packages")
    return report


def _median(values):
    return statistics.median(values) if values else None


def table(letters, ratios, names, missing, runs) -> list:
    """Printable lines: one row per case (see the module docstring for the columns)."""
    lines = [(f"{'case':<5} {'median A':>9} {'median B':>9} {'B/A of medians':>15}   "
              f"{'paired B/A: median [min-max]':<34}  name")]
    for letter in letters:
        label = f"({letter})"
        pairs = [(ra, rb) for ra, rb in zip(ratios["A"][letter], ratios["B"][letter], strict=True)
                 if ra is not None and rb is not None]
        if not pairs:
            gone = [f"missing in {side} ({missing[side].get(letter, '?')})" for side in "AB"
                    if all(r is None for r in ratios[side][letter])]
            lines.append(f"{label:<5} {'; '.join(gone) or 'no run measured both sides'}")
            continue
        paired = [rb / ra for ra, rb in pairs]
        med_a = _median([r for r in ratios["A"][letter] if r is not None])
        med_b = _median([r for r in ratios["B"][letter] if r is not None])
        flag = ("" if len(paired) < MIN_PAIRS_TO_FLAG else "no run worse" if max(paired) < 1
                else "no run better" if min(paired) > 1 else "")
        if len(pairs) < runs:
            flag += f" ({len(pairs)} of {runs} runs)"
        spread = f"{_median(paired):.3f} [{min(paired):.3f}-{max(paired):.3f}]"
        lines.append(f"{label:<5} {med_a:8.2f}x {med_b:8.2f}x {med_b / med_a:15.3f}   "
                     f"{spread:<20} {flag:<13}  {names[letter][len(label):].strip()}")
    return lines


def main(argv=None) -> int:
    if argv is None and sys.argv[1:2] == ["--worker"]:
        return worker_main(*sys.argv[2:5])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="checkout A (the baseline)")
    parser.add_argument("b", type=Path, help="checkout B (the change)")
    parser.add_argument("--cases", default="a,d,e,g,k",
                        help="comma-separated case letters, as bench/run.py names them "
                             "(default a,d,e,g,k)")
    parser.add_argument("--runs", type=int, default=8, help="process pairs (default 8)")
    parser.add_argument("--rounds", type=int, default=15,
                        help="harness rounds per case in each process (default 15)")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter for both sides (default: this one)")
    parser.add_argument("--json", type=Path, help="also write every run's raw results here")
    args = parser.parse_args(argv)
    letters = [c.strip().strip("()") for c in args.cases.split(",") if c.strip()]
    checkouts = {"A": args.a.resolve(), "B": args.b.resolve()}
    for side, root in checkouts.items():
        if not (root / "eager" / "__init__.py").is_file() or not (root / "bench").is_dir():
            parser.error(f"checkout {side} ({root}) has no eager package or bench folder")

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    # This checkout's list (a stdlib-only module), importable once its root is on sys.path.
    from bench.harness import BLAS_ENV  # noqa: PLC0415 - needs the sys.path entry above

    env = dict(os.environ)
    env.update({name: "1" for name in BLAS_ENV})

    started = time.perf_counter()
    ratios = {side: {letter: [] for letter in letters} for side in checkouts}
    names, missing, raw, first = {}, {"A": {}, "B": {}}, [], {}
    for i in range(args.runs):
        order = "AB" if i % 2 == 0 else "BA"
        times, run = [], {}
        for side in order:
            t0 = time.perf_counter()
            report = run_worker(args.python, checkouts[side], letters, args.rounds, env)
            times.append(f"{side} {time.perf_counter() - t0:.1f} s")
            run[side] = report
            first.setdefault(side, report)
            for letter in letters:
                r = report["results"].get(letter)
                ratios[side][letter].append(r and r["ratio"])  # None where it failed
                if r:
                    names.setdefault(letter, r["name"])
            for letter, why in report["missing"].items():
                missing[side].setdefault(letter, why)
        raw.append({"order": order, **run})
        print(f"run {i + 1}/{args.runs}: {', '.join(times)}", file=sys.stderr, flush=True)

    print(f"machine: {first['A']['machine']}")
    if first["B"]["machine"] != first["A"]["machine"]:
        print(f"machine (B's worker): {first['B']['machine']}")
    for side, root in checkouts.items():
        print(f"{side}: {root} ({revision(root)}); eager from {first[side]['eager_file']}")
    blas = ", ".join(f"{k}={v}" for k, v in first["A"]["blas_env"].items())
    print(f"{args.runs} runs (process pairs, order alternating AB, BA, ...) x {args.rounds} "
          f"rounds per case; {blas}")
    print("ratios are eager/numpy (best of rounds); B/A < 1: B faster relative to numpy")
    print()
    print("\n".join(table(letters, ratios, names, missing, args.runs)))
    print()
    print(f"total {time.perf_counter() - started:.1f} s")
    if args.json:
        args.json.write_text(json.dumps({"checkouts": {k: str(v) for k, v in checkouts.items()},
                                         "runs": raw}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
