"""Profile a few ops and a small training loop, run synchronously and then asynchronously.

Run: python examples/async_and_profiler.py [TRACE_DIR_OR_FILE.json]
It writes a Chrome/Perfetto trace (to a temporary directory unless given a path) and prints
where it is. In the trace, synchronous ops are slices on the "host dispatch" lane only; inside
`async_scope()` the host lane shows ops being issued (short slices) while the "executor" lane
shows their kernels running a little later, on a worker thread.
"""

import sys
import tempfile

import numpy as np

import eager as tf


def train_steps(x, y, w, b, steps, learning_rate=0.1):
    """Linear regression by gradient descent; returns the final (w, b, loss)."""
    for _ in range(steps):
        with tf.GradientTape() as tape:
            tape.watch([w, b])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        dw, db = tape.gradient(loss, [w, b])
        w, b = w - learning_rate * dw, b - learning_rate * db
    return w, b, loss


def main(path=None, steps=20):
    path = path or tempfile.mkdtemp(prefix="eager_trace_")
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((256, 8)).astype(np.float32))
    noise = tf.constant(0.1 * rng.standard_normal((256, 1)).astype(np.float32))
    y = tf.matmul(x, tf.ones([8, 1])) + 0.5 + noise  # to find: weights all ones, bias 0.5

    with tf.profiler.trace(path) as trace:
        # A few single ops: each is one slice, named after the op (MatMul, AddV2, Exp, Sum...).
        z = tf.exp(tf.matmul(x, tf.transpose(x)) / 100.0)
        print("sum of z:", float(tf.reduce_sum(z)))

        w, b = tf.zeros([8, 1]), tf.zeros([1])
        w, b, loss = train_steps(x, y, w, b, steps)  # synchronous: each op runs as it is issued
        print(f"loss after {steps} synchronous steps: {float(loss):.4f}")
        with tf.experimental.async_scope():  # asynchronous: ops are queued, kernels run behind
            w, b, loss = train_steps(x, y, w, b, steps)
        print(f"loss after {steps} more, asynchronous steps: {float(loss):.4f}")

    print(f"trace written to {trace.path}")
    for lane, count in trace.slices_per_lane().items():
        print(f"  {count:5d} slices on {lane}")
    print("open it in https://ui.perfetto.dev (or chrome://tracing)")
    return trace


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
