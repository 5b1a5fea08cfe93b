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

(y) A traced `while_loop` of 50 steps of `h = tanh(h @ w + x)` (float32 (32, 64) by (64, 64)),
    the function already traced and run, against the same loop in Python over numpy. Target:
    <= 2x numpy: a loop's condition and body run as compiled programs, so an iteration costs
    its kernels and little more. Beside it, `tf.function` and `jax.jit` of the same
    `while_loop` when installed, and PyTorch's loop in Python.

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


TARGET_LOOP = 2.0
LOOP_STEPS = 50


def loop_case(others) -> Case:
    rng = np.random.default_rng(0)
    h0 = rng.standard_normal((32, 64)).astype(np.float32)
    w0 = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
    x0 = h0 * np.float32(0.5)

    def numpy_loop():
        h = h0
        for _ in range(LOOP_STEPS):
            h = np.tanh(h @ w0 + x0)
        return h

    def body(i, h, w, x, tanh, matmul):
        return i + 1, tanh(matmul(h, w) + x)

    loop = eager.function(lambda h, w, x: eager.while_loop(
        lambda i, h: i < LOOP_STEPS, lambda i, h: body(i, h, w, x, eager.tanh, eager.matmul),
        (eager.constant(0), h))[1])
    h, w, x = eager.constant(h0), eager.constant(w0), eager.constant(x0)
    np.testing.assert_allclose(loop(h, w, x).numpy(), numpy_loop(), rtol=1e-4, atol=1e-5)
    loop(h, w, x)  # the second run compiles the loop's condition and body
    impls = {"numpy": numpy_loop, "eager": lambda: loop(h, w, x)}
    if "torch" in others:
        torch = others["torch"]
        th, tw, tx = (torch.from_numpy(a) for a in (h0, w0, x0))

        def torch_loop():
            t = th
            for _ in range(LOOP_STEPS):
                t = torch.tanh(t @ tw + tx)
            return t

        impls["torch"] = torch_loop
    if "jax" in others:
        jax = others["jax"]
        jh, jw, jx = (jax.numpy.asarray(a) for a in (h0, w0, x0))
        jitted = jax.jit(lambda h, w, x: jax.lax.fori_loop(
            0, LOOP_STEPS, lambda i, t: jax.numpy.tanh(t @ w + x), h))
        impls["jax"] = lambda: jitted(jh, jw, jx).block_until_ready()
    if "tensorflow" in others:
        tf = others["tensorflow"]
        fh, fw, fx = tf.constant(h0), tf.constant(w0), tf.constant(x0)
        tf_loop = tf.function(lambda h, w, x: tf.while_loop(
            lambda i, h: i < LOOP_STEPS, lambda i, h: body(i, h, w, x, tf.tanh, tf.matmul),
            (tf.constant(0), h))[1])
        tf_loop(fh, fw, fx)
        impls["tensorflow"] = lambda: tf_loop(fh, fw, fx)
    return Case(f"(y) traced while_loop, {LOOP_STEPS} x tanh(h @ w + x), float32 (32, 64)",
                TARGET_LOOP, impls, inner=20)


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
    """(lines to print, names of missed targets) for (k), (y) and (l)."""
    others = others or {}
    lines, missed = case_lines(run_case(per_call_case(others), rounds))
    lines.append("")
    loop_lines, loop_missed = case_lines(run_case(loop_case(others), rounds))
    lines += loop_lines + [""]
    missed += loop_missed
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
