"""Graph-runtime benchmarks: compiled plans, fusion, a traced training step, and the
parallel inter-op executor.

(m) Per-call cost of a traced 50 x (`x * 1.0001 + 0.5`) on float32 (4,), the function already
    traced and compiled, against the same straight-line numpy code (`x = x * 1.0001 + 0.5`,
    50 times). Target: <= 1.0x. At this size every op is overhead, so the number says how much
    of it compiling and fusing removes; "numpy, float32 constants, in place" (the best a
    hand-tuner gets in numpy: prebuilt 0-d constants, `out=` buffers) is printed for reference.
    JAX's figure (one XLA kernel) is printed when installed.
(n) One SGD step of the MLP 784-256-256-10 (batch 128, lr 0.1) as a traced function (tape,
    gradients and `assign_sub` on variables inside it) against the hand-written numpy forward +
    backward + in-place update (`bench.cases_autodiff.numpy_mlp_step`). Target: <= 1.0x.
(r) The MLP 784-256-256-10 SGD step as TensorFlow code trains with a dataset whose last batch is
    smaller: `eager.optimizers.SGD(0.1).apply_gradients` under a tape, sparse integer labels,
    traced once with `input_signature=[TensorSpec([None, 784]), TensorSpec([None], int32)]`
    (checked: one trace for batch sizes 32, 64, 100 and 128), against the same step traced for
    the fixed shape [128, 784]. Both run batch 128. The floor ('numpy' in the case's table) is
    the fixed-shape trace, so the ratio is what leaving the batch size to run time costs: a
    few more small ops (the loss's count and broadcast read from the run-time shape) and no
    constant folding of the loss's seed. Target: <= 1.1x.
(o) The parallel executor: one traced function of 4 independent 1024x1024 float32 matmuls, run
    by the parallel inter-op executor with 2 threads against the serial compiled plan, BLAS
    limited to one thread (set before numpy loads, so in a subprocess that prints JSON).
    Target: parallel >= 1.7x faster than serial on 2 cores.

Standalone:

    python -m bench.cases_runtime [--quick]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import eager
from eager.runtime.compiler import compile_program
from eager.runtime.executable import function_program
from eager.runtime.parallel import ParallelExecutor

from . import frameworks
from .cases_autodiff import LR, mlp_data, numpy_mlp_step
from .harness import Case, case_lines, format_seconds, run_case, run_with_one_blas_thread

TARGET_CHAIN = 1.0
TARGET_MLP = 1.0
TARGET_PARALLEL = 1.7
TARGET_DYNAMIC_BATCH = 1.1
CHAIN = 50


def _chain(x):
    for _ in range(CHAIN):
        x = x * 1.0001 + 0.5
    return x


def chain_case(others) -> Case:
    x0 = np.arange(4, dtype=np.float32)
    x = eager.constant(x0)
    traced = eager.function(_chain)
    for _ in range(3):
        traced(x)  # traced, then compiled: the case times calls only
    c1, c2 = np.array(1.0001, np.float32), np.array(0.5, np.float32)
    mul, add = np.multiply, np.add

    def numpy_in_place():
        buf = mul(x0, c1)
        add(buf, c2, out=buf)
        for _ in range(CHAIN - 1):
            mul(buf, c1, out=buf)
            add(buf, c2, out=buf)
        return buf

    impls = {"numpy": lambda: _chain(x0), "eager": lambda: traced(x),
             "numpy, float32 constants, in place": numpy_in_place}
    if "jax" in others:
        jax = others["jax"]
        jx = jax.numpy.asarray(x0)
        jitted = jax.jit(_chain)
        impls["jax"] = lambda: jitted(jx).block_until_ready()
    if "torch" in others:
        torch = others["torch"]
        tx = torch.from_numpy(x0)
        with torch.no_grad():
            scripted = torch.jit.trace(_chain, (tx,))
        impls["torch"] = lambda: scripted(tx)
    if "tensorflow" in others:
        tf = others["tensorflow"]
        fx = tf.constant(x0)
        tf_fn = tf.function(_chain)
        tf_fn(fx)
        impls["tensorflow"] = lambda: tf_fn(fx)
    return Case(f"(m) traced {CHAIN} x (x * 1.0001 + 0.5) per call, float32 (4,)", TARGET_CHAIN,
                impls, inner=300)


def traced_mlp_step(params):
    """The MLP SGD step as a traced function over variables `params`."""

    @eager.function
    def step(x, y):
        with eager.GradientTape() as tape:
            w1, b1, w2, b2, w3, b3 = params
            a1 = eager.nn.relu(eager.matmul(x, w1) + b1)
            a2 = eager.nn.relu(eager.matmul(a1, w2) + b2)
            logits = eager.matmul(a2, w3) + b3
            loss = eager.reduce_mean(
                eager.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, params)
        for p, g in zip(params, grads):
            p.assign_sub(LR * g)
        return loss

    return step


def mlp_case(others) -> Case:
    np_params, xn, yn = mlp_data()
    params = [eager.Variable(p) for p in mlp_data()[0]]
    x, y = eager.constant(xn), eager.constant(yn)
    step = traced_mlp_step(params)
    for _ in range(3):
        step(x, y)
    impls = {"numpy": lambda: numpy_mlp_step(np_params, xn, yn), "eager": lambda: step(x, y)}
    if "jax" in others:
        jax = others["jax"]
        jnp = jax.numpy
        j_params = [jnp.asarray(p) for p in mlp_data()[0]]
        jx, jy = jnp.asarray(xn), jnp.asarray(yn)

        def loss_fn(ps, xb, yb):
            w1, b1, w2, b2, w3, b3 = ps
            a1 = jax.nn.relu(xb @ w1 + b1)
            a2 = jax.nn.relu(a1 @ w2 + b2)
            logits = a2 @ w3 + b3
            return -jnp.mean(jnp.sum(yb * jax.nn.log_softmax(logits), axis=1))

        @jax.jit
        def jax_step(ps, xb, yb):
            grads = jax.grad(loss_fn)(ps, xb, yb)
            return [p - LR * g for p, g in zip(ps, grads)]

        def run_jax():
            j_params[:] = jax_step(j_params, jx, jy)
            j_params[0].block_until_ready()
        impls["jax"] = run_jax
    return Case("(n) traced MLP 784-256-256-10 SGD step, batch 128", TARGET_MLP, impls, inner=5)


def _sgd_step(params):
    """The MLP step with an optimizer and sparse labels (`cases_training`'s model): a Python
    function for `eager.function` to trace."""
    optimizer = eager.optimizers.SGD(LR)

    def step(x, labels):
        with eager.GradientTape() as tape:
            w1, b1, w2, b2, w3, b3 = params
            a1 = eager.nn.relu(eager.matmul(x, w1) + b1)
            a2 = eager.nn.relu(eager.matmul(a1, w2) + b2)
            logits = eager.matmul(a2, w3) + b3
            loss = eager.reduce_mean(eager.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
        optimizer.apply_gradients(zip(tape.gradient(loss, params), params))
        return loss

    return step


def dynamic_batch_case(others) -> Case:
    _, xn, yn = mlp_data()
    labels = np.argmax(yn, axis=1).astype(np.int32)
    x, y = eager.constant(xn), eager.constant(labels)
    fixed = eager.function(_sgd_step([eager.Variable(p) for p in mlp_data()[0]]))
    signature = [eager.TensorSpec([None, xn.shape[1]]), eager.TensorSpec([None], eager.int32)]
    any_batch = eager.function(_sgd_step([eager.Variable(p) for p in mlp_data()[0]]),
                               input_signature=signature)
    for n in (32, 64, 100):
        any_batch(eager.constant(xn[:n]), eager.constant(labels[:n]))
    for _ in range(3):
        fixed(x, y)
        any_batch(x, y)
    traces = any_batch.experimental_get_tracing_count()
    impls = {"numpy": lambda: fixed(x, y), "eager": lambda: any_batch(x, y)}
    return Case(f"(r) traced MLP 784-256-256-10 SGD step, input_signature [None, 784], batch "
                f"{len(xn)}, against the step traced for the fixed shape", TARGET_DYNAMIC_BATCH,
                impls, note=f"traces for batch sizes 32, 64, 100, {len(xn)}: {traces}", inner=5)


def dynamic_batch_lines(case):
    """(lines, missed) for (r): its floor is the fixed-shape trace, not numpy."""
    fixed, any_batch = case.results["numpy"], case.results["eager"]
    r = any_batch / fixed
    ok = r <= TARGET_DYNAMIC_BATCH
    lines = [case.name, f"  fixed-shape trace  {format_seconds(fixed):>10}",
             f"  input_signature    {format_seconds(any_batch):>10}   {r:5.2f}x   target <= "
             f"{TARGET_DYNAMIC_BATCH}x: {'ok' if ok else 'MISSED'}   ({case.note})"]
    return lines, ([] if ok else [case.name])


# -----------------------------------------------------------------------------------------------
# (o) parallel executor, in a subprocess with one BLAS thread
# -----------------------------------------------------------------------------------------------

def _parallel_child(rounds: int) -> dict:
    """Runs in the subprocess: best serial and parallel times of 4 independent matmuls."""
    n = 1024
    rng = np.random.default_rng(0)
    mats = [eager.constant(rng.standard_normal((n, n), dtype=np.float32)) for _ in range(8)]

    @eager.function
    def four(a, b, c, d, e, f, g, h):
        return (eager.matmul(a, b), eager.matmul(c, d), eager.matmul(e, f),
                eager.matmul(g, h))

    cf = four.get_concrete_function(*mats)
    program = function_program(cf.graph, cf.captured_inputs)
    serial = compile_program(program)
    parallel = ParallelExecutor(program, 2)
    serial(mats)
    parallel.run(mats)
    best = {"serial": float("inf"), "parallel": float("inf")}
    for _ in range(rounds):
        for name, fn in (("serial", lambda: serial(mats)), ("parallel",
                                                            lambda: parallel.run(mats))):
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def measure_parallel(rounds: int) -> dict:
    return run_with_one_blas_thread("bench.cases_runtime", "--child", rounds)


def report(rounds, others=None, quick=False):
    """(lines to print, names of missed targets) for (m), (n), (r) and (o)."""
    others = others or {}
    missed, lines = [], []
    for case in (run_case(chain_case(others), rounds),
                 run_case(mlp_case(others), max(3, rounds // 3))):
        case_text, case_missed = case_lines(case)
        lines += case_text + [""]
        missed += case_missed
    case_text, case_missed = dynamic_batch_lines(run_case(dynamic_batch_case(others),
                                                          max(3, rounds // 3)))
    lines += case_text + [""]
    missed += case_missed
    best = measure_parallel(3 if quick else 10)
    speedup = best["serial"] / best["parallel"]
    ok = speedup >= TARGET_PARALLEL
    lines.append("(o) 4 independent 1024x1024 matmuls in one traced function, BLAS 1 thread: "
                 "parallel executor (2 threads) against the serial plan")
    lines.append(f"  serial     {format_seconds(best['serial']):>10}")
    lines.append(f"  parallel   {format_seconds(best['parallel']):>10}   {speedup:5.2f}x faster"
                 f"   target >= {TARGET_PARALLEL}x: {'ok' if ok else 'MISSED'}")
    if not ok:
        missed.append("(o) parallel executor speed-up")
    return lines, missed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (smoke test)")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(_parallel_child(args.child)))
        return 0
    lines, missed = report(3 if args.quick else 30, frameworks.available(), quick=args.quick)
    print("\n".join(lines))
    if missed:
        print("targets missed: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
