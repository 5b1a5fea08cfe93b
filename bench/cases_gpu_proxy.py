"""GPU proxy: eager's own host time per small op on a GPU, measured without one.

(p) A simulated GPU (`EAGER_SIMULATED_GPUS=1`, the dispatch path CuPy takes) whose launches
    skip their kernels (`registry.set_simulated_kernels(False)`: output shapes inferred,
    outputs made, nothing run), so that what is left is eager's host cost and the backend's
    launch call. Per small float32 (4,) op:

    - the floor: the device's launch call itself (`device.run(op, arrays, attrs, inputs)`, what
      dispatch hands every op to);
    - `x + y` (the operators), `eager.add(x, y)` (the op library and dispatch), `eager.exp(x)`
      on the default device, a simulated GPU.

    Targets: `x + y`'s time above its launch call <= 1 us (eager's own host time per op), and
    the caller's whole time for `x + y` <= 4x the CPU operator fast path's (`x + y` on a
    CPU-only process, measured by this process before and after the child, best of both).

The simulated GPU must be configured before the devices exist, so (p) runs in a child process
that prints JSON. Not a `harness.Case`: `report(rounds, others, quick)` returns printable lines
and the names of missed targets. Standalone:

    python -m bench.cases_gpu_proxy [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

TARGET_ABOVE_LAUNCH_S = 1e-6
TARGET_TO_CPU = 4.0


def _time_round(fn, inner):
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def _best(impls, rounds, inner):
    for fn in impls.values():  # warm-up: caches, first launches
        for _ in range(100):
            fn()
    best = {name: float("inf") for name in impls}
    for _ in range(rounds):
        for name, fn in impls.items():
            best[name] = min(best[name], _time_round(fn, inner))
    return best


def cpu_operator(rounds, inner=2000):
    """The CPU operator fast path's `x + y` (this process: one CPU device)."""
    import eager  # noqa: PLC0415 - the bench process's own devices: CPU only

    x = eager.constant(np.arange(4, dtype=np.float32))
    y = eager.constant(np.ones(4, dtype=np.float32))
    return _best({"x + y": lambda: x + y}, rounds, inner)["x + y"]


def _child(rounds, inner):
    """Measures (p) in this process, on a launch-only simulated GPU; returns best seconds."""
    from eager.devices import registry  # noqa: PLC0415 - configured before eager's devices exist

    registry.set_simulated_gpus(1)
    registry.set_simulated_kernels(False)
    import eager  # noqa: PLC0415
    from eager.ops import math_ops  # noqa: PLC0415

    x = eager.constant(np.arange(4, dtype=np.float32))
    y = eager.constant(np.ones(4, dtype=np.float32))
    device = x._meta.device
    assert device.name == "GPU:0" and not device.run_kernels, device
    run, xv, yv = device.run, x._value, y._value
    add, exp = eager.add, eager.exp
    pair, one, no_attrs = (x, y), (x,), {}
    impls = {
        "launch AddV2": lambda: run(math_ops.ADD, (xv, yv), no_attrs, pair),
        "x + y": lambda: x + y,
        "eager.add(x, y)": lambda: add(x, y),
        "launch Exp": lambda: run(math_ops.EXP, (xv,), no_attrs, one),
        "eager.exp(x)": lambda: exp(x),
    }
    return _best(impls, rounds, inner)


def measure(rounds, inner=2000):
    env = dict(os.environ)
    env.pop("EAGER_SIMULATED_GPUS", None)  # the child configures its devices itself
    root = Path(__file__).resolve().parents[1]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    cpu_before = cpu_operator(rounds, inner)
    out = subprocess.run([sys.executable, "-m", "bench.cases_gpu_proxy", "--child",
                          str(rounds), str(inner)], capture_output=True, text=True, cwd=root,
                         env=env)
    if out.returncode:
        raise RuntimeError(f"the GPU proxy's child failed:\n{out.stderr}")
    best = json.loads(out.stdout.strip().splitlines()[-1])
    best["CPU x + y"] = min(cpu_before, cpu_operator(rounds, inner))
    return best


def report(rounds, others=None, quick=False):
    """(lines to print, names of missed targets) for (p)."""
    del others, quick
    best = measure(min(rounds, 20))
    us = 1e6
    above = best["x + y"] - best["launch AddV2"]
    to_cpu = best["x + y"] / best["CPU x + y"]
    lines = ["(p) GPU proxy: a simulated GPU whose launches skip their kernels, float32 (4,); "
             "floors measured in the same run"]
    floors = {"launch AddV2": "launch AddV2", "x + y": "launch AddV2",
              "eager.add(x, y)": "launch AddV2", "launch Exp": "launch Exp",
              "eager.exp(x)": "launch Exp"}
    for label, floor_label in floors.items():
        floor = best[floor_label]
        lines.append(f"  {label:<18} {best[label] * us:7.2f} us   {best[label] / floor:5.2f}x "
                     f"its launch   (+{(best[label] - floor) * us:5.2f} us)")
    lines.append(f"  CPU x + y (operator fast path, CPU-only process) {best['CPU x + y'] * us:.2f}"
                 " us")
    ok_above = above <= TARGET_ABOVE_LAUNCH_S
    ok_cpu = to_cpu <= TARGET_TO_CPU
    lines.append(f"  x + y above its launch: {above * us:5.2f} us   target <= "
                 f"{TARGET_ABOVE_LAUNCH_S * us:g} us: {'ok' if ok_above else 'MISSED'}")
    lines.append(f"  x + y on the simulated GPU / CPU x + y: {to_cpu:5.2f}x   target <= "
                 f"{TARGET_TO_CPU}x: {'ok' if ok_cpu else 'MISSED'}")
    missed = [] if ok_above else ["(p) eager's host time above the launch"]
    if not ok_cpu:
        missed.append("(p) simulated-GPU x + y against the CPU fast path")
    return lines, missed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (smoke test)")
    parser.add_argument("--child", nargs=2, type=int, metavar=("ROUNDS", "INNER"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(*args.child)))
        return 0
    lines, missed = report(3 if args.quick else 20)
    print("\n".join(lines))
    if missed:
        print("targets missed: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
