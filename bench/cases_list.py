"""TensorList benchmark: pushes in a loop `l = push_back(l, x)` must cost O(1) each.

A list value is immutable, so a naive push copies the list (TensorFlow eager does: its per-push
time grows with the length). eager's lists are views over a shared storage that a push appends
to when nobody can see past the view (see eager.ops.list_ops), so the time per push should not
depend on the list's length. Measured as the ratio of the time per push at n = 10,000 to that at
n = 100 (target <= 1.5); a pop loop and a pop-then-push loop (the reference-counted path) are
reported beside it, and TensorFlow's push loop when it is installed.

This is not a `harness.Case` (whose ratios are to a numpy floor): `report(rounds, others)`
returns printable lines and the names of missed targets. Standalone:

    python -m bench.cases_list [--quick]
"""

from __future__ import annotations

import argparse
import time

import eager
from eager.ops import list_ops

from . import frameworks
from .harness import format_seconds

SMALL, LARGE = 100, 10_000
TARGET = 1.5


def _eager_push_loop(n):
    x = eager.constant([1.0, 2.0])

    def run():
        lst = list_ops.empty_tensor_list([2], eager.float32)
        start = time.perf_counter()
        for _ in range(n):
            lst = list_ops.tensor_list_push_back(lst, x)
        return time.perf_counter() - start
    return run


def _eager_pop_loop(n):
    full = list_ops.tensor_list_from_tensor(eager.ones([n, 2]), [2])

    def run():
        lst = full
        start = time.perf_counter()
        for _ in range(n):
            lst, _ = list_ops.tensor_list_pop_back(lst, eager.float32)
        return time.perf_counter() - start
    return run


def _eager_pop_push_loop(n):
    """Pop then push onto the popped list, n times, on a list of length n: each push finds the
    storage longer than its view and needs the reference count to reuse it."""
    x = eager.constant([1.0, 2.0])
    rows = eager.ones([n, 2])

    def run():
        lst = list_ops.tensor_list_from_tensor(rows, [2])  # a storage of its own
        start = time.perf_counter()
        for _ in range(n):
            lst, _ = list_ops.tensor_list_pop_back(lst, eager.float32)
            lst = list_ops.tensor_list_push_back(lst, x)
        return time.perf_counter() - start
    return run


def _tf_push_loop(tf, n):
    # TensorFlow is optional (asked for with --tensorflow): this module imports without it.
    from tensorflow.python.ops import list_ops as tf_list_ops  # noqa: PLC0415

    x = tf.constant([1.0, 2.0])

    def run():
        lst = tf_list_ops.empty_tensor_list([2], tf.float32)
        start = time.perf_counter()
        for _ in range(n):
            lst = tf_list_ops.tensor_list_push_back(lst, x)
        return time.perf_counter() - start
    return run


def per_element(loops, rounds):
    """Best time per element of each `(name, n, run)` loop over `rounds` interleaved rounds. A
    sample is always LARGE elements (a short loop is run LARGE // n times and summed), so short
    and long loops are sampled over the same wall time and noise biases neither."""
    best = {}
    for _, _, run in loops:
        run()  # warm-up
    for _ in range(rounds):
        for name, n, run in loops:
            repeats = max(1, LARGE // n)
            seconds = sum(run() for _ in range(repeats))
            best[name] = min(best.get(name, float("inf")), seconds / (repeats * n))
    return best


def measure(rounds, others=None):
    """{label: (time per element at SMALL, at LARGE)} for each loop."""
    makers = {"eager push": _eager_push_loop, "eager pop": _eager_pop_loop,
              "eager pop+push": _eager_pop_push_loop}
    best = per_element([(f"{label} {n}", n, make(n)) for label, make in makers.items()
                        for n in (SMALL, LARGE)], rounds)
    tf = (others or {}).get("tensorflow")
    if tf is not None:  # O(n) per push: a few seconds per round at n = 10,000, so two rounds
        makers["tensorflow push"] = None
        best.update(per_element([(f"tensorflow push {n}", n, _tf_push_loop(tf, n))
                                 for n in (SMALL, LARGE)], min(rounds, 2)))
    return {label: (best[f"{label} {SMALL}"], best[f"{label} {LARGE}"]) for label in makers}


def report(rounds, others=None):
    """(lines to print, names of missed targets). At most 10 rounds: each is ~0.6 s."""
    results = measure(min(rounds, 10), others)
    lines = [f"(h) TensorList: time per element at n={SMALL} and n={LARGE:,} "
             f"(storage reuse calibrated: {list_ops.storage_reuse()})"]
    missed = []
    for label, (small, large) in results.items():
        ratio = large / small
        line = (f"  {label:<16} {format_seconds(small):>10} {format_seconds(large):>10}   "
                f"{ratio:6.2f}x")
        if label == "eager push":
            ok = ratio <= TARGET
            line += f"   target <= {TARGET}x: {'ok' if ok else 'MISSED'}"
            if not ok:
                missed.append("(h) TensorList push scaling")
        lines.append(line)
    return lines, missed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (smoke test)")
    parser.add_argument("--tensorflow", action="store_true", help="also time TensorFlow")
    args = parser.parse_args(argv)
    others = {}
    if args.tensorflow:
        tf = frameworks.load("tensorflow")
        if tf is not None:
            others["tensorflow"] = tf
    lines, missed = report(2 if args.quick else 7, others)
    print("\n".join(lines))
    if missed:
        print("targets missed: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
