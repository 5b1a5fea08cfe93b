"""Async-dispatch benchmarks: what issuing an op costs the caller, and overlap.

(i) Caller-side cost of a small op in async mode: `eager.add(x, y)` (and `x + y`, and a 4x4
    `eager.matmul`) issued N times inside `eager.experimental.async_scope()`, timing only the
    issuing loop; the wait for the queue to drain is outside the timed region, between rounds.
    The worker runs the kernels meanwhile (it competes with the caller for the GIL), as it does
    in real use. Targets: async `eager.add` <= 2x synchronous `eager.add` (full dispatch, the
    path every async op goes through), and async `x + y` <= 4x the synchronous `x + y`
    operator fast path (which skips dispatch); raw numpy is printed for reference. A loop of N=1000
    lasts about one GIL switch interval (5 ms), so the worker's kernels only partly land in it;
    a 10,000-op loop (steady state: the worker's kernels share the GIL with the caller) is
    reported beside it, without a target.
(j) Overlap: STEPS steps of one 1024x1024 float32 `eager.matmul` plus pure-Python work (GIL-
    holding arithmetic, calibrated to last about one matmul), with the BLAS pool limited to one
    thread, so the worker computes on one core (numpy's matmul releases the GIL) while the
    caller runs Python on the other. Target: the async loop <= 1.2x max(total compute, total
    Python); the synchronous loop (about their sum) is reported beside it, and so is a floor
    without eager (numpy matmuls on a plain `threading.Thread` beside the same Python work:
    what this machine and the GIL allow). The BLAS thread limit must be set before numpy is
    imported, so (j) runs in a subprocess that prints JSON.

Not `harness.Case`s: `report(rounds, others, quick)` returns printable lines and the names of
missed targets. Standalone:

    python -m bench.cases_async [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

import numpy as np

import eager

from .harness import BLAS_ENV, best_single_call, format_seconds, run_with_one_blas_thread

TARGET_DISPATCH = 2.0
TARGET_OPERATOR = 4.0
TARGET_OVERLAP = 1.2


# -----------------------------------------------------------------------------------------------
# (i) caller-side cost of issuing a small op
# -----------------------------------------------------------------------------------------------

def _issue_loop(fn, n):
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def _timed_sync(fn, n):
    return _issue_loop(fn, n)


def _timed_async(fn, n):
    with eager.experimental.async_scope():
        seconds = _issue_loop(fn, n)
        # leaving the scope waits for the queue: outside the timed region
    return seconds


def measure_dispatch(rounds, n=1000, long_n=10_000):
    """{label: best seconds per op} over `rounds` interleaved rounds of `n` ops each (`long_n`
    for the steady-state async loop, where the worker's kernels share the GIL with the caller
    for most of the loop)."""
    xn = np.arange(4, dtype=np.float32)
    yn = np.ones(4, dtype=np.float32)
    mn = np.arange(16, dtype=np.float32).reshape(4, 4)
    x, y, m = eager.constant(xn), eager.constant(yn), eager.constant(mn)
    add, matmul = eager.add, eager.matmul
    loops = {
        "numpy add": (_timed_sync, lambda: np.add(xn, yn)),
        "eager.add sync": (_timed_sync, lambda: add(x, y)),
        "x + y sync": (_timed_sync, lambda: x + y),
        "eager.add async": (_timed_async, lambda: add(x, y)),
        "x + y async": (_timed_async, lambda: x + y),
        "eager.add async, long loop": (_timed_async, lambda: add(x, y)),
        "numpy matmul": (_timed_sync, lambda: np.matmul(mn, mn)),
        "matmul sync": (_timed_sync, lambda: matmul(m, m)),
        "matmul async": (_timed_async, lambda: matmul(m, m)),
    }

    @eager.function
    def chain(v):  # (m)'s function: 50 small elementwise steps
        for _ in range(50):
            v = v * 1.0001 + 0.5
        return v

    loops["traced function sync"] = (_timed_sync, lambda: chain(x))
    loops["traced function async"] = (_timed_async, lambda: chain(x))
    for timed, fn in loops.values():  # warm-up: starts the executor, fills caches
        timed(fn, 50)
    best = {label: float("inf") for label in loops}
    for _ in range(rounds):
        for label, (timed, fn) in loops.items():
            count = long_n if "long" in label else n // 10 if "function" in label else n
            best[label] = min(best[label], timed(fn, count))
    return best


def report_dispatch(rounds, n=1000, long_n=10_000):
    best = measure_dispatch(rounds, n, long_n)
    lines = [f"(i) async dispatch: caller's time per small op (float32 (4,) add, 4x4 matmul; "
             f"loops of {n}, long loop {long_n}; wait outside the timed region)"]
    for label, seconds in best.items():
        if "function" in label:
            continue
        floor = best["numpy matmul" if "matmul" in label else "numpy add"]
        lines.append(f"  {label:<26} {format_seconds(seconds):>10}   "
                     f"{seconds / floor:6.2f}x numpy")
    primary = best["eager.add async"] / best["eager.add sync"]
    ok = primary <= TARGET_DISPATCH
    lines.append(f"  async / sync eager.add (full dispatch): {primary:5.2f}x   "
                 f"target <= {TARGET_DISPATCH}x: {'ok' if ok else 'MISSED'}")
    operator = best["x + y async"] / best["x + y sync"]
    ok_operator = operator <= TARGET_OPERATOR
    lines.append(f"  async x + y / sync x + y (operator fast path): {operator:5.2f}x   "
                 f"target <= {TARGET_OPERATOR}x: {'ok' if ok_operator else 'MISSED'}")
    lines.append(f"  async eager.add / sync x + y (operator fast path): "
                 f"{best['eager.add async'] / best['x + y sync']:5.2f}x;  "
                 f"async / sync matmul 4x4: {best['matmul async'] / best['matmul sync']:5.2f}x")
    lines.append(f"  long loop async / sync eager.add: "
                 f"{best['eager.add async, long loop'] / best['eager.add sync']:5.2f}x  (steady "
                 f"state: the worker's kernels take the GIL, so their time lands in the caller's)")
    lines.append(f"  traced 50-op function, caller's time per call: sync "
                 f"{format_seconds(best['traced function sync'])}, async "
                 f"{format_seconds(best['traced function async'])} "
                 f"({best['traced function async'] / best['traced function sync']:5.2f}x: "
                 f"queued as one node)")
    missed = [] if ok else ["(i) async dispatch caller cost"]
    if not ok_operator:
        missed.append("(i) async operator caller cost")
    return lines, missed


# -----------------------------------------------------------------------------------------------
# (j) overlap of compute and Python work (runs in a child process: BLAS limited to one thread)
# -----------------------------------------------------------------------------------------------

def _python_work(k):
    """Pure-Python arithmetic: holds the GIL throughout."""
    s = 0
    for i in range(k):
        s += i * i % 7
    return s


def _overlap_child(steps, repeats, size=1024):
    """Measures (j) in this process (which must have started with the BLAS limit set) and returns
    a dict of best-of-`repeats` seconds."""
    rng = np.random.default_rng(0)
    a = eager.constant(rng.standard_normal((size, size), dtype=np.float32))
    b = eager.constant(rng.standard_normal((size, size), dtype=np.float32))
    matmul, async_wait = eager.matmul, eager.experimental.async_wait

    matmul(a, b).numpy()  # warm-up
    one_matmul = best_single_call(lambda: matmul(a, b), 5)
    k = 200_000
    for _ in range(3):  # calibrate the Python work to one matmul
        python_s = best_single_call(lambda: _python_work(k), 5)  # noqa: B023 - called right here
        k = max(1000, int(k * one_matmul / python_s))
    one_python = best_single_call(lambda: _python_work(k), 3)

    def compute():
        for _ in range(steps):
            matmul(a, b)

    def python():
        for _ in range(steps):
            _python_work(k)

    def interleaved():
        c = None
        for _ in range(steps):
            c = matmul(a, b)
            _python_work(k)
        async_wait()  # no-op when synchronous
        return c

    an, bn = a.numpy(), b.numpy()

    def threads_floor():
        """The same work with no framework: numpy matmuls on a plain thread while this thread
        runs the Python work (what the machine and the GIL allow)."""
        def compute_numpy():
            for _ in range(steps):
                np.matmul(an, bn)
        worker = threading.Thread(target=compute_numpy)
        worker.start()
        python()
        worker.join()

    best = {"compute": float("inf"), "python": float("inf"), "sync": float("inf"),
            "async": float("inf"), "threads": float("inf")}
    with eager.experimental.async_scope():
        interleaved()  # warm-up: starts this thread's executor
    for _ in range(repeats):  # interleaved, best of each
        best["compute"] = min(best["compute"], best_single_call(compute, 1))
        best["python"] = min(best["python"], best_single_call(python, 1))
        best["sync"] = min(best["sync"], best_single_call(interleaved, 1))
        with eager.experimental.async_scope():
            best["async"] = min(best["async"], best_single_call(interleaved, 1))
        best["threads"] = min(best["threads"], best_single_call(threads_floor, 1))
    best.update(steps=steps, repeats=repeats, size=size, one_matmul=one_matmul,
                one_python=one_python, python_iterations=k, switch_interval=sys.getswitchinterval(),
                blas_env={name: os.environ.get(name) for name in BLAS_ENV})
    return best


def measure_overlap(steps, repeats):
    return run_with_one_blas_thread("bench.cases_async", "--overlap-child", steps, repeats)


def report_overlap(steps, repeats):
    r = measure_overlap(steps, repeats)
    bound = max(r["compute"], r["python"])
    ratio_async = r["async"] / bound
    ratio_sync = r["sync"] / (r["compute"] + r["python"])
    ok = ratio_async <= TARGET_OVERLAP
    lines = [f"(j) async overlap: {steps} x (float32 {r['size']}x{r['size']} matmul + Python work "
             f"of similar length), BLAS 1 thread, GIL switch interval "
             f"{r['switch_interval'] * 1e3:g} ms, best of {repeats}",
             f"  one matmul {format_seconds(r['one_matmul'])}, one Python work "
             f"{format_seconds(r['one_python'])}",
             f"  compute {format_seconds(r['compute']):>10}   python {format_seconds(r['python'])}"
             f"   sync loop {format_seconds(r['sync'])}   async loop {format_seconds(r['async'])}",
             f"  async / max(compute, python): {ratio_async:5.2f}x   target <= {TARGET_OVERLAP}x: "
             f"{'ok' if ok else 'MISSED'}",
             f"  sync / (compute + python):    {ratio_sync:5.2f}x   (no overlap: about 1)",
             f"  floor: numpy matmuls on a plain thread beside the Python work "
             f"{format_seconds(r['threads'])}, {r['threads'] / bound:5.2f}x max; "
             f"async / floor {r['async'] / r['threads']:5.2f}x"
             + ("  (the floor itself is above the target)"
                if r["threads"] / bound > TARGET_OVERLAP else "")]
    return lines, [] if ok else ["(j) async overlap"]


def report(rounds, others=None, quick=False):
    """(lines to print, names of missed targets) for (i) and (j)."""
    del others  # no other framework has a comparable knob here
    lines, missed = report_dispatch(min(rounds, 20), n=1000)
    more, more_missed = report_overlap(5 if quick else 20, 3)
    return lines + [""] + more, missed + more_missed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (smoke test)")
    parser.add_argument("--overlap-child", nargs=2, type=int, metavar=("STEPS", "REPEATS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.overlap_child:
        print(json.dumps(_overlap_child(*args.overlap_child)))
        return 0
    lines, missed = report(3 if args.quick else 30, quick=args.quick)
    print("\n".join(lines))
    if missed:
        print("targets missed: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
