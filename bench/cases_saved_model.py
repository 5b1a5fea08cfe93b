"""SavedModel benchmarks: (s) saving a traced 3-layer MLP and loading it in a fresh process, and
the loaded function's per-call cost against the original `eager.function`'s.

    python bench/cases_saved_model.py [--quick]

(s1) times `save` here, then, in a new interpreter (after `import eager`, reported apart),
`load` plus the first call; the target is on save + that load. (s2) times calls of the original
and of a loaded copy, interleaved in one process; the target is on their ratio.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eager  # noqa: E402
from bench.harness import Case, format_seconds, run_case  # noqa: E402

TARGET_SAVE_LOAD_S = 0.5
TARGET_CALL_RATIO = 1.1

_LOAD_SCRIPT = """
import sys, time
t0 = time.perf_counter()
import numpy as np
import eager
t1 = time.perf_counter()
loaded = eager.saved_model.load(sys.argv[1])
loaded(eager.constant(np.ones((32, 64), np.float32))).numpy()
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


class MLP(eager.Module):
    """Three dense layers, traced from an input_signature."""

    def __init__(self, sizes=(64, 128, 128, 10)):
        super().__init__()
        rng = np.random.default_rng(0)
        self.weights = [eager.Variable(rng.normal(size=(a, b)).astype(np.float32) * 0.1)
                        for a, b in zip(sizes[:-1], sizes[1:])]
        self.biases = [eager.Variable(np.zeros(b, np.float32)) for b in sizes[1:]]

    @eager.function(input_signature=[eager.TensorSpec([None, 64], eager.float32)])
    def __call__(self, x):
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = eager.matmul(x, w) + b
            if i < len(self.weights) - 1:
                x = eager.nn.relu(x)
        return x


def measure_save_load(repeats):
    """(best save s, best fresh-process load + first call s, its import s)."""
    model = MLP()
    model(eager.constant(np.ones((32, 64), np.float32)))
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    best_save = best_load = best_import = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mlp")
        for _ in range(repeats):
            start = time.perf_counter()
            eager.saved_model.save(model, path)
            best_save = min(best_save, time.perf_counter() - start)
            out = subprocess.run([sys.executable, "-c", _LOAD_SCRIPT, path], capture_output=True,
                                 text=True, check=True, cwd=tmp, env=env)
            import_s, load_s = (float(v) for v in out.stdout.split())
            best_load, best_import = min(best_load, load_s), min(best_import, import_s)
    return best_save, best_load, best_import


def per_call_case() -> Case:
    model = MLP()
    x = eager.constant(np.ones((32, 64), np.float32))
    model(x)
    with tempfile.TemporaryDirectory() as tmp:
        eager.saved_model.save(model, os.path.join(tmp, "mlp"))
        loaded = eager.saved_model.load(os.path.join(tmp, "mlp"))
    return Case("(s2) per call of a traced 3-layer MLP, (32, 64) float32", TARGET_CALL_RATIO,
                {"original": lambda: model(x), "loaded": lambda: loaded(x)}, inner=500)


def report(rounds, others=None, quick=False):
    """(lines to print, names of missed targets)."""
    missed = []
    save_s, load_s, import_s = measure_save_load(2 if quick else 5)
    total = save_s + load_s
    ok = total < TARGET_SAVE_LOAD_S
    lines = ["(s1) save + load (fresh process) + first call of a traced 3-layer MLP",
             f"  save {format_seconds(save_s)}, load + first call {format_seconds(load_s)} "
             f"(after import eager {format_seconds(import_s)}): {format_seconds(total)}   "
             f"target < {TARGET_SAVE_LOAD_S} s: {'ok' if ok else 'MISSED'}"]
    if not ok:
        missed.append("(s1) SavedModel save + load")
    case = run_case(per_call_case(), rounds)
    original, loaded = case.results["original"], case.results["loaded"]
    r = loaded / original
    ok = r <= TARGET_CALL_RATIO
    lines += ["", case.name,
              f"  original {format_seconds(original)}   loaded {format_seconds(loaded)}   "
              f"{r:.3f}x   target <= {TARGET_CALL_RATIO}x: {'ok' if ok else 'MISSED'}"]
    if not ok:
        missed.append("(s2) loaded function per call")
    return lines, missed


def main(argv=None) -> int:
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    lines, _ = report(3 if quick else 30, quick=quick)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
