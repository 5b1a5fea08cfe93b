"""Traced-function benchmarks: what a call of a small `eager.function` costs, and
what its first call (trace + prepare + run) costs.

(k) Per-call cost of a traced `x + 1` on a float32 (4,) tensor, the function already traced,
    against numpy's `x + 1`. Target: <= 6x numpy. Beside it, the same function under
    `torch.jit.trace`, `jax.jit` and `tf.function` when installed (each against the same numpy
    floor): a traced function's call is pure overhead at this size, which is the point.
(l) First call of a traced 50 x (`x * 1.0001 + 0.5`) function: a fresh `eager.function(body)`
    per measurement (so every measurement traces), best of several, against the best plain
    eager run of `body`, in the same process. Target: <= 80x. Other frameworks' first calls
    (a fresh `torch.jit.trace`, `jax.jit`, `tf.function` each time) are reported against their
    own eager runs of `body`.

Not `harness.Case`s only: `report(rounds, others, quick)` returns printable lines and the names
of missed targets, as `cases_async` does. Standalone:

    python -m bench.cases_function [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np

import eager

from . import frameworks
from .harness import Case, best_single_call, case_lines, format_seconds, run_case

TARGET_PER_CALL = 6.0
TARGET_FIRST_CALL = 80.0
CHAIN = 50


def per_call_case(others) -> Case:
    x0 = np.arange(4, dtype=np.float32)
    x = eager.constant(x0)

    @eager.function
    def plus_one(t):
        return t + 1

    plus_one(x)  # traced here: the case times calls only
    impls = {"numpy": lambda: x0 + 1, "eager": lambda: plus_one(x)}
    if "torch" in others:
        torch = others["torch"]
        tx = torch.from_numpy(x0)
        with torch.no_grad():
            traced = torch.jit.trace(lambda t: t + 1, (tx,))
        impls["torch"] = lambda: traced(tx)
    if "jax" in others:
        jax = others["jax"]
        jx = jax.numpy.asarray(x0)
        jitted = jax.jit(lambda t: t + 1)
        impls["jax"] = lambda: jitted(jx).block_until_ready()
    if "tensorflow" in others:
        tf = others["tensorflow"]
        fx = tf.constant(x0)
        tf_fn = tf.function(lambda t: t + 1)
        tf_fn(fx)
        impls["tensorflow"] = lambda: tf_fn(fx)
    return Case("(k) traced x + 1 per call, float32 (4,)", TARGET_PER_CALL, impls, inner=2000)


def _chain(x):
    for _ in range(CHAIN):
        x = x * 1.0001 + 0.5
    return x


def measure_first_call(others, repeats, eager_repeats):
    """{framework: (best first call, best eager run)} in seconds."""
    x0 = np.arange(4, dtype=np.float32)
    x = eager.constant(x0)
    _chain(x)  # warm the eager path (first-use imports, caches)
    results = {}

    def eager_first():
        def body(t):  # a new Python function each time: nothing cached anywhere
            return _chain(t)
        eager.function(body)(x)

    eager_first()  # warm what any first trace imports once
    results["eager"] = (best_single_call(eager_first, repeats),
                        best_single_call(lambda: _chain(x), eager_repeats))
    if "torch" in others:
        torch = others["torch"]
        tx = torch.from_numpy(x0)

        def torch_first():
            with torch.no_grad():
                traced = torch.jit.trace(lambda t: _chain(t), (tx,))
                traced(tx)
        torch_first()
        results["torch"] = (best_single_call(torch_first, repeats),
                            best_single_call(lambda: _chain(tx), eager_repeats))
    if "jax" in others:
        jax = others["jax"]
        jx = jax.numpy.asarray(x0)

        def jax_first():
            jax.jit(lambda t: _chain(t))(jx).block_until_ready()
        jax_first()
        results["jax"] = (best_single_call(jax_first, repeats),
                          best_single_call(lambda: _chain(jx).block_until_ready(), eager_repeats))
    if "tensorflow" in others:
        tf = others["tensorflow"]
        fx = tf.constant(x0)

        def tf_first():
            tf.function(lambda t: _chain(t))(fx)
        tf_first()
        results["tensorflow"] = (best_single_call(tf_first, repeats),
                                 best_single_call(lambda: _chain(fx), eager_repeats))
    return results


def report(rounds, others=None, quick=False):
    """(lines to print, names of missed targets) for (k) and (l)."""
    others = others or {}
    lines, missed = case_lines(run_case(per_call_case(others), rounds))
    lines.append("")
    results = measure_first_call(others, 3 if quick else 10, 20 if quick else 200)
    lines.append(f"(l) first call (trace + prepare + run) of a traced {CHAIN} x (x * 1.0001 + "
                 f"0.5), float32 (4,), against one eager run of the same function")
    for name, (first, run) in results.items():
        r = first / run
        line = (f"  {name:<11} first {format_seconds(first):>10}   eager run "
                f"{format_seconds(run):>10}   {r:7.1f}x")
        if name == "eager":
            ok = r <= TARGET_FIRST_CALL
            line += f"   target <= {TARGET_FIRST_CALL:.0f}x: {'ok' if ok else 'MISSED'}"
            if not ok:
                missed.append("(l) traced function first call")
        lines.append(line)
    return lines, missed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (smoke test)")
    args = parser.parse_args(argv)
    lines, missed = report(3 if args.quick else 30, frameworks.available(), quick=args.quick)
    print("\n".join(lines))
    if missed:
        print("targets missed: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
