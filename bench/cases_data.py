"""Input-pipeline benchmarks: what iterating costs, and what the pipeline's threads buy.

(s) Pipeline overhead: one epoch of batches of 128 over 60,000 float32 rows of 784 (and their
    int64 labels), against a hand-written numpy slicing loop over the same arrays (views: the
    loop does nothing but slice). Target: the pipeline <= 3x the loop (TensorFlow's `tf.data`
    is about 900x here: per-batch Python overhead is the whole cost). The pipeline is
    `eager.data.Dataset.from_tensor_slices((x, y)).batch(128)` where `eager.data` has it;
    until then a stand-in iterator that does only what any batch iterator must (slice the two
    arrays, wrap each slice as a tensor), which is the floor the Datasets' iterator can reach.
    The same pipeline behind a prefetch thread (`Prefetcher`, AUTOTUNE buffer) is reported
    beside it: with nothing to overlap, that is the cost of handing elements between threads.
(t) Overlap: STEPS training steps (one float32 matmul) fed by a pipeline whose per-element work
    (numpy kernels, releasing the GIL) takes about as long as a step, with BLAS on one thread
    (as the async overlap case). Target: the step loop reading through `prefetch(2)` <= 1.2x
    max(total step time, total producer time); the loop without prefetch (about their sum) is
    reported beside it, and so is a floor without eager (the same numpy work on a plain thread
    through a `queue.Queue(2)`: what this machine and the GIL allow).
(u) Parallel map: a numpy-heavy map function (matmul and tanh, releasing the GIL) over
    ELEMENTS elements with `num_parallel_calls=AUTOTUNE` against the sequential map, BLAS on
    one thread, on this machine's cores. Target: >= 1.6x the sequential throughput on 2 cores.

(t) and (u) use `eager.data.Dataset` when it exists, else the pipeline threads directly
(`eager.data.threads`: `Prefetcher`, `ParallelMap`) over plain generators, which is what the
datasets run on. BLAS's thread count is fixed when numpy loads, so they run in a subprocess
that prints JSON.

Not `harness.Case`s: `report(rounds, others, quick)` returns printable lines and the names of
missed targets. Standalone:

    python -m bench.cases_data [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading

import numpy as np

import eager
from eager.devices import registry
from eager.tensor import wrap_value

from .harness import BLAS_ENV, best_single_call, format_seconds, run_with_one_blas_thread

TARGET_OVERHEAD = 3.0
TARGET_OVERLAP = 1.2
TARGET_PARALLEL_MAP = 1.6

ROWS, FEATURES, BATCH = 60_000, 784, 128


def _dataset_class():
    """`eager.data.Dataset` when this checkout has it, else None (the stand-ins are used)."""
    data = getattr(eager, "data", None)
    return getattr(data, "Dataset", None)


def _threads():
    from eager.data import threads  # noqa: PLC0415 - imported when a case runs, not at import

    return threads


# -----------------------------------------------------------------------------------------------
# (s) pipeline overhead
# -----------------------------------------------------------------------------------------------

class _Batches:
    """The stand-in for `from_tensor_slices((x, y)).batch(BATCH)`'s iterator (see the module
    doc): slices of the two tensors' arrays, each wrapped as a tensor; nothing else."""

    __slots__ = ("_x", "_y", "_device", "_at")

    def __init__(self, x, y):
        self._x, self._y = x.numpy(), y.numpy()  # (read-only views of the CPU tensors)
        self._device = registry.lookup(x.device)
        self._at = 0

    def __iter__(self):
        return self

    def __next__(self):
        start = self._at
        if start >= len(self._x):
            raise StopIteration
        stop = self._at = start + BATCH
        wrap, device = wrap_value, self._device
        return wrap(self._x[start:stop], device), wrap(self._y[start:stop], device)


def measure_overhead(rounds):
    rng = np.random.default_rng(0)
    xn = rng.standard_normal((ROWS, FEATURES), dtype=np.float32)
    yn = rng.integers(0, 10, ROWS)
    Prefetcher = _threads().Prefetcher  # noqa: N806 - a class

    def numpy_loop():
        for start in range(0, ROWS, BATCH):
            xb = xn[start:start + BATCH]  # noqa: F841 - the slicing is the work
            yb = yn[start:start + BATCH]  # noqa: F841

    dataset_class = _dataset_class()
    with eager.device("CPU:0"):
        x, y = eager.constant(xn), eager.constant(yn)
    if dataset_class is not None:
        with eager.device("CPU:0"):
            dataset = dataset_class.from_tensor_slices((x, y)).batch(BATCH)

        def make():
            return iter(dataset)
        pipeline = "Dataset.from_tensor_slices((x, y)).batch(128)"
    else:
        def make():
            return _Batches(x, y)
        pipeline = "stand-in batch iterator (eager.data.Dataset not in this checkout)"

    def plain():
        for _ in make():
            pass

    def prefetched():
        for _ in Prefetcher(make, -1):
            pass

    loops = {"numpy": numpy_loop, "pipeline": plain, "pipeline + prefetch": prefetched}
    for fn in loops.values():
        fn()
    best = {name: float("inf") for name in loops}
    for _ in range(rounds):
        for name, fn in loops.items():
            best[name] = min(best[name], best_single_call(fn, 1))
    return best, pipeline


def report_overhead(rounds):
    best, pipeline = measure_overhead(rounds)
    floor = best["numpy"]
    batches = -(-ROWS // BATCH)
    ratio = best["pipeline"] / floor
    ok = ratio <= TARGET_OVERHEAD
    lines = [f"(s) pipeline overhead: an epoch of {batches} batches of {BATCH} over {ROWS:,} x "
             f"{FEATURES} float32 (+ int64 labels); {pipeline}"]
    for name, seconds in best.items():
        lines.append(f"  {name:<20} {format_seconds(seconds):>10}   "
                     f"{format_seconds(seconds / batches):>10} per batch   "
                     f"{seconds / floor:6.2f}x numpy")
    lines.append(f"  pipeline / numpy slicing loop: {ratio:5.2f}x   target <= {TARGET_OVERHEAD}x: "
                 f"{'ok' if ok else 'MISSED'}")
    lines.append(f"  a prefetch thread's hand-off costs "
                 f"{format_seconds((best['pipeline + prefetch'] - best['pipeline']) / batches)} "
                 f"per element (no work to overlap here)")
    return lines, [] if ok else ["(s) pipeline overhead"]


# -----------------------------------------------------------------------------------------------
# (t) overlap and (u) parallel map: in a child process, BLAS on one thread
# -----------------------------------------------------------------------------------------------

def _calibrated_size(seconds, start=256):
    """A square size whose float32 matmul (numpy) takes about `seconds`."""
    size = start
    for _ in range(4):
        a = np.ones((size, size), np.float32)
        took = best_single_call(lambda: np.matmul(a, a), 3)  # noqa: B023 - called right here
        size = max(32, int(size * (seconds / took) ** (1 / 3)))
    return size


def _overlap_child(steps, repeats):
    step_size = 512
    a = eager.constant(np.ones((step_size, step_size), np.float32) * 0.001)
    matmul = eager.matmul

    def step(batch):
        return matmul(batch, a).numpy()  # a training step: the host waits for its result

    batch0 = eager.constant(np.ones((step_size, step_size), np.float32))
    step(batch0)
    one_step = best_single_call(lambda: step(batch0), 5)
    # Producer work: numpy kernels releasing the GIL, calibrated to about one step.
    work_size = _calibrated_size(one_step)
    w = np.full((work_size, work_size), 0.001, np.float32)
    base = np.ones((step_size, step_size), np.float32)

    def make_batch(i):
        np.matmul(w, w)  # the "augmentation" work
        return base * np.float32(i % 3 + 1)

    dataset_class = _dataset_class()
    threads = _threads()

    if dataset_class is not None:
        def source(prefetch):
            ds = dataset_class.range(steps).map(
                lambda i: eager.numpy_function(lambda j: make_batch(int(j)), [i], eager.float32))
            return iter(ds.prefetch(2) if prefetch else ds)
        how = "Dataset.range(n).map(numpy work).prefetch(2)"
    else:
        def source(prefetch):
            def gen():
                for i in range(steps):
                    yield eager.constant(make_batch(i))
            return threads.Prefetcher(gen, 2) if prefetch else gen()
        how = "a generator of numpy work through Prefetcher(gen, 2) (no eager.data.Dataset here)"

    def producer_only():
        for _ in source(False):
            pass

    def steps_only():
        for _ in range(steps):
            step(batch0)

    def loop(prefetch):
        for batch in source(prefetch):
            step(batch)

    def threads_floor():
        """The same work with no framework: numpy batches made on a plain thread into a
        `queue.Queue(2)`, numpy steps on this one."""
        q = queue.Queue(2)
        an, b0 = a.numpy(), batch0.numpy()

        def produce():
            for i in range(steps):
                q.put(make_batch(i))
            q.put(None)
        worker = threading.Thread(target=produce)
        worker.start()
        while (batch := q.get()) is not None:
            np.matmul(batch, an)
        worker.join()
        del b0

    timings = {"producer": producer_only, "steps": steps_only, "sequential": lambda: loop(False),
               "prefetch": lambda: loop(True), "threads floor": threads_floor}
    best = {name: float("inf") for name in timings}
    for _ in range(repeats):
        for name, fn in timings.items():
            best[name] = min(best[name], best_single_call(fn, 1))
    best.update(steps_count=steps, one_step=one_step, work_size=work_size, step_size=step_size,
                how=how)
    return best


def _parallel_map_child(elements, repeats):
    size = 384
    rng = np.random.default_rng(0)
    w = eager.constant(rng.standard_normal((size, size), dtype=np.float32) * 0.05)
    inputs = [rng.standard_normal((size, size), dtype=np.float32) for _ in range(4)]
    matmul, tanh = eager.matmul, eager.tanh

    def fn(x):
        for _ in range(3):
            x = tanh(matmul(x, w))
        return x

    dataset_class = _dataset_class()
    threads = _threads()
    if dataset_class is not None:
        stacked = eager.constant(np.stack([inputs[i % 4] for i in range(elements)]))

        def run(parallel):
            ds = dataset_class.from_tensor_slices(stacked).map(
                fn, num_parallel_calls=threads.AUTOTUNE if parallel else None)
            for _ in ds:
                pass
        how = "Dataset.from_tensor_slices(x).map(fn, num_parallel_calls=AUTOTUNE)"
    else:
        tensors = [eager.constant(x) for x in inputs]

        def source():
            return (tensors[i % 4] for i in range(elements))

        def run(parallel):
            it = threads.ParallelMap(source, fn, threads.AUTOTUNE) if parallel else map(
                fn, source())
            for _ in it:
                pass
        how = "ParallelMap(source, fn, AUTOTUNE) over a generator (no eager.data.Dataset here)"

    run(True)
    best = {"sequential": float("inf"), "parallel": float("inf")}
    for _ in range(repeats):
        best["sequential"] = min(best["sequential"], best_single_call(lambda: run(False), 1))
        best["parallel"] = min(best["parallel"], best_single_call(lambda: run(True), 1))
    first = eager.constant(inputs[0])
    best.update(elements=elements, size=size, cpus=threads.autotune.available_cpus(), how=how,
                one_call=best_single_call(lambda: fn(first), 3))
    return best


def _child(steps, elements, repeats):
    return {"overlap": _overlap_child(steps, repeats),
            "parallel_map": _parallel_map_child(elements, repeats),
            "blas_env": {name: os.environ.get(name) for name in BLAS_ENV},
            "switch_interval": sys.getswitchinterval()}


def report_threads(steps, elements, repeats):
    r = run_with_one_blas_thread("bench.cases_data", "--child", steps, elements, repeats)
    o, p = r["overlap"], r["parallel_map"]
    bound = max(o["producer"], o["steps"])
    overlap = o["prefetch"] / bound
    ok_overlap = overlap <= TARGET_OVERLAP
    lines = [f"(t) overlap: {o['steps_count']} steps (float32 {o['step_size']}^2 matmul, "
             f"{format_seconds(o['one_step'])}) fed by numpy work of about one step "
             f"({o['work_size']}^2 matmul) per element, BLAS 1 thread; {o['how']}",
             f"  producer {format_seconds(o['producer'])}   steps {format_seconds(o['steps'])}"
             f"   loop without prefetch {format_seconds(o['sequential'])}   with prefetch(2) "
             f"{format_seconds(o['prefetch'])}",
             f"  prefetch(2) / max(steps, producer): {overlap:5.2f}x   target <= "
             f"{TARGET_OVERLAP}x: {'ok' if ok_overlap else 'MISSED'}",
             f"  without prefetch / (steps + producer): "
             f"{o['sequential'] / (o['producer'] + o['steps']):5.2f}x   (no overlap: about 1)",
             f"  floor: numpy on a plain thread through queue.Queue(2) "
             f"{format_seconds(o['threads floor'])}, {o['threads floor'] / bound:5.2f}x max"]
    speedup = p["sequential"] / p["parallel"]
    ok_map = speedup >= TARGET_PARALLEL_MAP if p["cpus"] >= 2 else True
    lines += ["",
              f"(u) parallel map: {p['elements']} elements, fn = 3 x tanh(matmul) on float32 "
              f"{p['size']}^2 ({format_seconds(p['one_call'])} a call), BLAS 1 thread, "
              f"{p['cpus']} CPUs; {p['how']}",
              f"  sequential map {format_seconds(p['sequential'])}   AUTOTUNE parallel map "
              f"{format_seconds(p['parallel'])}",
              f"  throughput parallel / sequential: {speedup:5.2f}x   target >= "
              f"{TARGET_PARALLEL_MAP}x on 2 cores: "
              + ("ok" if ok_map and p["cpus"] >= 2 else "MISSED" if not ok_map
                 else "not measured (one CPU)")]
    missed = ([] if ok_overlap else ["(t) pipeline overlap"]) + (
        [] if ok_map else ["(u) parallel map throughput"])
    return lines, missed


def report(rounds, others=None, quick=False):
    """(lines to print, names of missed targets) for (s), (t) and (u)."""
    del others  # no other framework is compared here
    lines, missed = report_overhead(min(rounds, 20))
    more, more_missed = report_threads(10 if quick else 40, 16 if quick else 64, 2 if quick else 3)
    return lines + [""] + more, missed + more_missed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (smoke test)")
    parser.add_argument("--child", nargs=3, type=int, metavar=("STEPS", "ELEMENTS", "REPEATS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(*args.child)))
        return 0
    lines, missed = report(3 if args.quick else 30, quick=args.quick)
    print("\n".join(lines))
    if missed:
        print("targets missed: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
