"""GPU proxy: eager's own host time per small op on a GPU, measured without one.

(p) A simulated GPU (`EAGER_SIMULATED_GPUS=1`, the dispatch path CuPy takes) whose launches
    skip their kernels (`registry.set_simulated_kernels(False)`: output shapes inferred,
    outputs made, nothing run), so that what is left is eager's host cost and the backend's
    launch call. Per small float32 (4,) op:

    - the floor: the device's launch call itself (`device.run(op, arrays, attrs, inputs)`, what
      dispatch hands every op to);
    - `x + y` (the operators), `x * 1.5` (an operator with a Python number, whose constant
      is kept per value), `eager.add(x, y)` (the op library and dispatch), `eager.exp(x)` on
      the default device, a simulated GPU.

    Targets: `x + y`'s time above its launch call <= 1 us (eager's own host time per op), and
    the caller's whole time for `x + y` <= 4x the CPU operator fast path's (`x + y` on a
    CPU-only process, measured by this process before and after the child, best of both).

(p2) The CUDA backend itself (`eager/devices/cuda.py`, the CuPy kernel layer, the compiled
    programs' device form) on the recorded CuPy of the tests (`tests/recording_cupy.py`:
    numpy underneath, every launch counted, the time inside launches measured). For the MLP
    784-256-256-10 SGD step at batch 128, written by hand in CuPy (the GPU benchmark's floor),
    eagerly with a tape and `optimizers.SGD`, and traced (case (n)'s step): the CuPy launches
    per step, and the host time per step outside the launches (the caller's own Python: for
    eager, tape, dispatch and wrapping; on a GPU each launch adds CuPy's own cost, about 15 us
    on an H200). No targets: on a GPU, fewer launches and less time outside them are what make
    a step cheaper, and these show them without one.

The simulated GPU and the recorded CuPy must be set up before the devices exist, so (p) and
(p2) each run in a child process that prints JSON. Not a `harness.Case`: `report(rounds,
others, quick)` returns printable lines and the names of missed targets. Standalone:

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
        "x * 1.5": lambda: x * 1.5,
        "eager.add(x, y)": lambda: add(x, y),
        "launch Exp": lambda: run(math_ops.EXP, (xv,), no_attrs, one),
        "eager.exp(x)": lambda: exp(x),
    }
    return _best(impls, rounds, inner)


def _recorded_child(rounds):
    """Measures (p2) in this process, on the recorded CuPy: per step, the launches and the best
    host time outside them."""
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "tests"))
    import recording_cupy  # noqa: PLC0415 - the tests' recorded CuPy, before eager asks for it

    cupy = recording_cupy.install()
    import eager  # noqa: PLC0415
    from bench.cases_autodiff import LR, mlp_data, mlp_gradients  # noqa: PLC0415
    from bench.cases_runtime import traced_mlp_step  # noqa: PLC0415
    from bench.cases_training import eager_variable_mlp_step  # noqa: PLC0415

    np_params, xn, yn = mlp_data()
    c_params = [cupy.asarray(p) for p in np_params]
    cx, cy = cupy.asarray(xn), cupy.asarray(yn)

    def by_hand():
        _, grads = mlp_gradients(cupy, c_params, cx, cy, with_loss=False)
        for param, grad in zip(c_params, grads):
            param -= LR * grad

    x, y = eager.constant(xn), eager.constant(yn)
    params = [eager.Variable(p) for p in np_params]
    optimizer = eager.optimizers.SGD(LR)
    traced = traced_mlp_step([eager.Variable(p) for p in np_params])
    steps = {"CuPy by hand": by_hand,
             "eager": lambda: eager_variable_mlp_step(params, optimizer, x, y),
             "traced": lambda: traced(x, y)}
    out = {}
    for name, step in steps.items():
        for _ in range(3):
            step()
        recording_cupy.reset()
        step()
        launches, entries = recording_cupy.launch_count(), recording_cupy.STREAM_ENTRIES[0]
        best = float("inf")
        for _ in range(rounds):
            recording_cupy.reset()
            start = time.perf_counter()
            for _ in range(5):
                step()
            best = min(best, (time.perf_counter() - start - recording_cupy.inside_seconds()) / 5)
        out[name] = {"launches": launches, "stream entries": entries, "outside": best}
    return out


#: For (p2)'s child: the recorded CuPy's device arrays are numpy's, and glibc returns a freed
#: array of more than 128 KiB to the system at once (an munmap: tens of µs for each of a step's
#: large gradients), which CuPy's memory pool never does with device memory. Raising glibc's
#: thresholds keeps them in the heap, so that the host time measured is eager's, not the
#: stand-in's allocator's (other C libraries ignore these variables).
_POOLED_LIKE_CUPY = {"MALLOC_MMAP_THRESHOLD_": str(256 << 20),
                     "MALLOC_TRIM_THRESHOLD_": str(256 << 20)}


def _run_child(args, extra_env=None):
    env = dict(os.environ)
    env.update(extra_env or {})
    env.pop("EAGER_SIMULATED_GPUS", None)  # the child configures its devices itself
    root = Path(__file__).resolve().parents[1]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, "-m", "bench.cases_gpu_proxy", *args],
                         capture_output=True, text=True, cwd=root, env=env)
    if out.returncode:
        raise RuntimeError(f"the GPU proxy's child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(rounds, inner=2000):
    cpu_before = cpu_operator(rounds, inner)
    best = _run_child(["--child", str(rounds), str(inner)])
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
    floors = {"launch AddV2": "launch AddV2", "x + y": "launch AddV2", "x * 1.5": "launch AddV2",
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
    recorded = _run_child(["--recorded", str(min(rounds, 10))], _POOLED_LIKE_CUPY)
    floor = recorded["CuPy by hand"]
    lines.append("(p2) the CUDA backend on the recorded CuPy: MLP 784-256-256-10 SGD step, batch "
                 "128, per step (host time outside the launches)")
    for name, row in recorded.items():
        ratio = row["launches"] / floor["launches"]
        lines.append(f"  {name:<13} {row['launches']:3d} launches ({ratio:.2f}x)   "
                     f"{row['stream entries']:3d} stream entries   "
                     f"{row['outside'] * us:7.1f} us outside launches "
                     f"({(row['outside'] - floor['outside']) * us:+7.1f} us)")
    return lines, missed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (smoke test)")
    parser.add_argument("--child", nargs=2, type=int, metavar=("ROUNDS", "INNER"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--recorded", type=int, metavar="ROUNDS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(*args.child)))
        return 0
    if args.recorded:
        print(json.dumps(_recorded_child(args.recorded)))
        return 0
    lines, missed = report(3 if args.quick else 20)
    print("\n".join(lines))
    if missed:
        print("targets missed: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
