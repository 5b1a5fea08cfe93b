"""Per-example gradients and Jacobians without a Python loop.

Differentially private SGD clips each example's gradient before averaging; saliency maps need
the Jacobian of every class score with respect to the input. Both are "the same backward pass,
many times". `eager.vectorized_map` traces a function once (a tape inside it included) and runs
it as one vectorised program over the examples; `GradientTape.jacobian` vectorises its backward
passes the same way. The example checks both against the loop they replace and times them.

    python examples/per_example_gradients.py
"""

import time

import numpy as np

import eager


def make_data(n=64, d=20, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.float32)
    return eager.constant(x), eager.constant(y)


def per_example_gradients(w, b, x, y):
    """The logistic-loss gradient of every example separately: [n, d] and [n]."""
    def grads(example):
        xi, yi = example
        with eager.GradientTape() as tape:
            logit = eager.reduce_sum(xi * w) + b
            loss = eager.nn.sigmoid_cross_entropy_with_logits(labels=yi, logits=logit)
        return tape.gradient(loss, [w, b])
    return eager.vectorized_map(grads, (x, y))


def dp_sgd_step(w, b, x, y, clip=1.0, lr=0.5):
    """One step of SGD with each example's gradient clipped to norm `clip` (no noise added:
    the clipping is the part that needs per-example gradients)."""
    gw, gb = per_example_gradients(w, b, x, y)
    norms = eager.sqrt(eager.reduce_sum(gw * gw, axis=1) + gb * gb)
    scale = eager.minimum(1.0, clip / (norms + 1e-12))
    w.assign_sub(lr * eager.reduce_mean(gw * eager.expand_dims(scale, 1), axis=0))
    b.assign_sub(lr * eager.reduce_mean(gb * scale))


def accuracy(w, b, x, y):
    predicted = eager.cast(eager.linalg.matvec(x, w) + b > 0.0, eager.float32)
    return float(eager.reduce_mean(eager.cast(eager.equal(predicted, y), eager.float32)))


def main(steps=30):
    x, y = make_data()
    w = eager.Variable(np.zeros(x.shape[1], np.float32))
    b = eager.Variable(0.0)

    # 1. Per-example gradients: vectorised against the loop they replace.
    start = time.perf_counter()
    gw, gb = per_example_gradients(w, b, x, y)
    vectorised_s = time.perf_counter() - start
    start = time.perf_counter()
    looped = []
    for xi, yi in zip(eager.unstack(x), eager.unstack(y)):
        with eager.GradientTape() as tape:
            loss = eager.nn.sigmoid_cross_entropy_with_logits(
                labels=yi, logits=eager.reduce_sum(xi * w) + b)
        looped.append(tape.gradient(loss, w).numpy())
    loop_s = time.perf_counter() - start
    gap = float(np.abs(gw.numpy() - np.stack(looped)).max())
    print(f"per-example gradients {tuple(gw.shape)}: vectorised {vectorised_s * 1e3:.1f} ms, "
          f"loop {loop_s * 1e3:.1f} ms, largest difference {gap:.1e}")

    # 2. Clipped SGD trains the classifier.
    for _ in range(steps):
        dp_sgd_step(w, b, x, y)
    acc = accuracy(w, b, x, y)
    print(f"after {steps} clipped SGD steps: training accuracy {acc:.2f}")

    # 3. A Jacobian: every output of a small network with respect to its input (timed on a
    #    second call: the first one compiles the vectorised backward pass, once).
    rng = np.random.default_rng(1)
    w1 = eager.constant(rng.standard_normal((20, 64)).astype(np.float32))
    w2 = eager.constant(rng.standard_normal((64, 50)).astype(np.float32))
    x0 = x[:1]
    jacobians = {}
    for pfor in (True, False):
        for _ in range(2):
            start = time.perf_counter()
            with eager.GradientTape() as tape:
                tape.watch(x0)
                scores = eager.matmul(eager.tanh(eager.matmul(x0, w1)), w2)
            jacobians[pfor] = (tape.jacobian(scores, x0, experimental_use_pfor=pfor),
                               time.perf_counter() - start)
    (jv, tv), (jl, tl) = jacobians[True], jacobians[False]
    print(f"Jacobian {tuple(jv.shape)}: vectorised {tv * 1e3:.1f} ms, loop {tl * 1e3:.1f} ms, "
          f"largest difference {float(np.abs(jv.numpy() - jl.numpy()).max()):.1e}")
    return gap, acc, jv, jl


if __name__ == "__main__":
    main()
