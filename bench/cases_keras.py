"""Keras training-loop benchmarks: `fit` of the 784-256-256-10 MLP against the numpy floor,
and what `fit` adds per step over its own traced step.

(v) One epoch of `model.fit(x, y, batch_size=128, epochs=1, verbose=0, shuffle=False)` on
    60,000 synthetic rows (469 steps, the last one of 96 rows) of the MLP of `cases_autodiff`
    (ReLU, softmax cross-entropy, SGD), against the hand-written numpy loop (hand backward,
    in-place SGD) over the same batches. Target: <= 1.15x numpy. Keras 3 on the TensorFlow
    backend (`tf.keras`, the same model as `keras.Sequential` of `Dense`s) beside it when
    TensorFlow is installed.
(w) The same epoch: `fit` against the bare traced step (`model`'s own `eager.function` train
    step, taken from the first `fit`, called in a plain loop over the same pre-made batch
    tensors). The ratio is `fit`'s per-step Python overhead (batch slicing, callbacks,
    logs). Target: <= 1.05x.

Each round runs one epoch of every implementation back to back; a ratio is the median over
rounds of the ratio within a round (paired), so a slow stretch of the machine moves both sides
of a ratio together. Everything runs in a subprocess with every BLAS pool (and TensorFlow's
intra- and inter-op pools) at one thread: on a shared two-core machine the multi-threaded
matmuls of one epoch swing by a third from run to run with whatever else is running, more than
the framework's own cost being measured. The model is a `Trainer` on hand-written dense layers
(the bench does not depend on `keras.layers`). Standalone:

    python -m bench.cases_keras [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time

import numpy as np

import eager
from eager import keras

from . import frameworks
from .cases_autodiff import LR, SIZES, mlp_gradients
from .harness import format_seconds, run_with_one_blas_thread

ROWS = 60_000
BATCH = 128
TARGET_FIT = 1.15
TARGET_OVERHEAD = 1.05


class _Dense(keras.layers.Layer):
    def __init__(self, kernel, bias, relu, **kwargs):
        super().__init__(**kwargs)
        self.kernel = self.add_weight(kernel.shape, initializer="zeros", name="kernel")
        self.bias = self.add_weight(bias.shape, initializer="zeros", name="bias")
        self.kernel.assign(kernel)
        self.bias.assign(bias)
        self.relu = relu

    def call(self, x):
        y = eager.matmul(x, self.kernel) + self.bias
        return eager.nn.relu(y) if self.relu else y


class _MLP(keras.trainers.Trainer, keras.layers.Layer):
    def __init__(self, params, **kwargs):
        super().__init__(**kwargs)
        w1, b1, w2, b2, w3, b3 = params
        self.layers_ = [_Dense(w1, b1, True), _Dense(w2, b2, True), _Dense(w3, b3, False)]

    def call(self, x):
        for layer in self.layers_:
            x = layer(x)
        return x


def _softmax_cross_entropy(y_true, logits):
    return eager.nn.softmax_cross_entropy_with_logits(labels=y_true, logits=logits)


def _data(rows):
    rng = np.random.default_rng(0)
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        params.append(rng.standard_normal((fan_in, fan_out), dtype=np.float32)
                      * np.float32(np.sqrt(2.0 / fan_in)))
        params.append(np.zeros(fan_out, dtype=np.float32))
    x = rng.standard_normal((rows, SIZES[0]), dtype=np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], rows)]
    return params, x, y


def _numpy_epoch(params, x, y):
    for start in range(0, len(x), BATCH):
        _, grads = mlp_gradients(np, params, x[start:start + BATCH], y[start:start + BATCH],
                                 with_loss=False)
        for p, g in zip(params, grads):
            p -= LR * g


def _eager_model(params):
    model = _MLP([p.copy() for p in params])
    model.compile(optimizer=eager.optimizers.SGD(LR), loss=_softmax_cross_entropy)
    return model


def _keras_model(tf, params):
    k = tf.keras
    model = k.Sequential([k.Input((SIZES[0],)), k.layers.Dense(SIZES[1], activation="relu"),
                          k.layers.Dense(SIZES[2], activation="relu"),
                          k.layers.Dense(SIZES[3])])
    model.set_weights([p.copy() for p in params])
    model.compile(optimizer=k.optimizers.SGD(LR),
                  loss=k.losses.CategoricalCrossentropy(from_logits=True))
    return model


def measure(rounds, with_tensorflow, rows=ROWS):
    """Seconds per epoch of each implementation in each round (lists in round order)."""
    params, x, y = _data(rows)
    np_params = [p.copy() for p in params]
    model = _eager_model(params)
    model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False)  # trace both shapes
    step_fns = list(model._trainer.train_fns.values())
    (bare_step,) = step_fns
    batches = [(eager.constant(x[s:s + BATCH]), eager.constant(y[s:s + BATCH]))
               for s in range(0, rows, BATCH)]

    def bare_epoch():
        model.reset_metrics()
        for bx, by in batches:
            bare_step(bx, by)

    impls = {"numpy": lambda: _numpy_epoch(np_params, x, y),
             "eager fit": lambda: model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0,
                                            shuffle=False),
             "bare step": bare_epoch}
    tf = frameworks.load("tensorflow") if with_tensorflow else None
    if tf is not None:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        kmodel = _keras_model(tf, params)
        kmodel.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False)
        impls["keras (tf)"] = lambda: kmodel.fit(x, y, batch_size=BATCH, epochs=1, verbose=0,
                                                 shuffle=False)
    times = {name: [] for name in impls}
    for _ in range(rounds):
        for name, fn in impls.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    times["traces"] = bare_step.experimental_get_tracing_count()
    return times


def paired_ratio(times, name, floor):
    """The median over rounds of `name`'s time over `floor`'s in the same round."""
    return statistics.median(a / b for a, b in zip(times[name], times[floor]))


def report(rounds, others=None, quick=False):
    """(lines to print, names of missed targets) for (v) and (w)."""
    others = others or {}
    rows = ROWS if not quick else 6_400
    times = run_with_one_blas_thread("bench.cases_keras", "--child", 2 if quick else
                                     max(5, rounds // 4), "--rows", rows,
                                     *(["--tensorflow"] if "tensorflow" in others else []))
    missed = []
    lines = [f"(v) keras fit, MLP 784-256-256-10, SGD, batch {BATCH}, one epoch of {rows} rows, "
             f"verbose=0, BLAS on one thread; median over {len(times['numpy'])} rounds of the "
             "ratio within a round"]
    for name in ("numpy", "eager fit", "keras (tf)"):
        if name not in times:
            continue
        r = paired_ratio(times, name, "numpy")
        line = (f"  {name:<11} {format_seconds(statistics.median(times[name])):>10}"
                f"   {r:6.2f}x numpy")
        if name == "eager fit":
            ok = r <= TARGET_FIT
            line += f"   target <= {TARGET_FIT}x: {'ok' if ok else 'MISSED'}"
            if not ok:
                missed.append("(v) keras fit vs numpy")
        lines.append(line)
    if "keras (tf)" in times:
        lines.append(f"  keras (tf) / eager fit: "
                     f"{paired_ratio(times, 'keras (tf)', 'eager fit'):.2f}x")
    r = paired_ratio(times, "eager fit", "bare step")
    ok = r <= TARGET_OVERHEAD
    lines += ["", "(w) fit's per-step overhead: fit against its bare traced step in a loop",
              f"  bare step   {format_seconds(statistics.median(times['bare step'])):>10}",
              f"  eager fit   {format_seconds(statistics.median(times['eager fit'])):>10}"
              f"   {r:6.3f}x bare step   target <= {TARGET_OVERHEAD}x: "
              f"{'ok' if ok else 'MISSED'}",
              f"  traces of the step: {times['traces']} (one per batch shape)"]
    if not ok:
        missed.append("(w) fit per-step overhead")
    return lines, missed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (smoke test)")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, default=ROWS, help=argparse.SUPPRESS)
    parser.add_argument("--tensorflow", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:  # the subprocess of `report`, BLAS already at one thread
        print(json.dumps(measure(args.child, args.tensorflow, rows=args.rows)))
        return 0
    rounds = args.rounds or (1 if args.quick else 30)
    others = {"tensorflow": None} if importlib.util.find_spec("tensorflow") else {}
    lines, missed = report(rounds, others, quick=args.quick)
    print("\n".join(lines))
    if missed:
        print("targets missed: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
