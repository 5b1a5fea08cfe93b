"""Autodiff benchmarks: a tiny gradient (tape overhead) and an MLP training step."""

from __future__ import annotations

import itertools
import threading

import numpy as np

import eager

from .harness import Case


def tiny_gradient(others) -> Case:
    xn = np.arange(4, dtype=np.float32)
    x = eager.constant(xn)

    def numpy_grad():
        np.sum(xn * xn)
        return 2 * xn

    def eager_grad():
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.reduce_sum(x * x)
        return tape.gradient(y, x)

    impls = {"numpy": numpy_grad, "eager": eager_grad,
             "minimal Python tape": _minimal_tape_gradient(xn)}
    if "torch" in others:
        torch = others["torch"]

        def torch_grad():
            t = torch.from_numpy(xn).requires_grad_()
            (t * t).sum().backward()
            return t.grad
        impls["torch"] = torch_grad
    if "autograd" in others:
        ag = others["autograd"]
        grad_fn = ag.grad(lambda v: ag.numpy.sum(v * v))
        impls["autograd"] = lambda: grad_fn(xn)
    if "tensorflow" in others:
        tf = others["tensorflow"]
        tx = tf.constant(xn)

        def tf_grad():
            with tf.GradientTape() as tape:
                tape.watch(tx)
                y = tf.reduce_sum(tx * tx)
            return tape.gradient(y, tx)
        impls["tensorflow"] = tf_grad
    if "jax" in others:
        jax = others["jax"]
        jx = jax.numpy.asarray(xn)
        g = jax.grad(lambda v: jax.numpy.sum(v * v))
        impls["jax"] = lambda: g(jx).block_until_ready()
    return Case("(d) gradient of sum(x*x), float32 (4,)", 4.0, impls, inner=300)


def _minimal_tape_gradient(xn):
    """A reference point, not a framework: the least a tape written in Python must do for
    (d). A thread-local tape stack, two recorded ops (one small object each, with the ids and
    kept arrays a backward needs) and a backward pass that looks its rule up and runs it, with
    no dtype, device or structure checks, no placement, no error handling and no caching
    decisions. Whatever eager costs beyond this is framework overhead; this much is the price of
    running the tape in Python at all."""
    new_id = itertools.count(2).__next__  # 1 is x's
    state = threading.local()
    state.tapes = []

    class Tape:
        __slots__ = ("ids", "entries")

        def __init__(self):
            self.ids, self.entries = set(), []

        def __enter__(self):
            state.tapes.append(self)
            return self

        def __exit__(self, *exc):
            state.tapes.pop()

    def record(op, inputs, out, out_id):
        for tape in state.tapes:
            if any(i in tape.ids for i, _ in inputs):
                tape.ids.add(out_id)
                tape.entries.append((op, inputs, out_id))

    def mul(a, b):  # (id, array) pairs stand for tensors
        out = (new_id(), a[1] * b[1])
        if state.tapes:
            record("mul", (a, b), out[1], out[0])
        return out

    def reduce_sum(a):
        out = (new_id(), a[1].sum())
        if state.tapes:
            record("sum", (a,), out[1], out[0])
        return out

    rules = {"mul": lambda g, a, b: (g * b[1], g * a[1]),
             "sum": lambda g, a: (np.broadcast_to(g, a[1].shape),)}

    def gradient(tape, y, x):
        grads = {y[0]: np.ones_like(y[1])}
        for op, inputs, out_id in reversed(tape.entries):
            g = grads.pop(out_id, None)
            if g is not None:
                for (i, _), gi in zip(inputs, rules[op](g, *inputs)):
                    grads[i] = grads[i] + gi if i in grads else gi
        return grads.get(x[0])

    x = (1, xn)

    def run():
        with Tape() as tape:
            tape.ids.add(x[0])
            y = reduce_sum(mul(x, x))
        return gradient(tape, y, x)

    return run


SIZES = (784, 256, 256, 10)
BATCH, LR = 128, 0.1


def mlp_data(seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        params.append(rng.standard_normal((fan_in, fan_out), dtype=np.float32)
                      * np.float32(np.sqrt(2.0 / fan_in)))
        params.append(np.zeros(fan_out, dtype=np.float32))
    x = rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32)
    labels = rng.integers(0, SIZES[-1], BATCH)
    y = np.eye(SIZES[-1], dtype=np.float32)[labels]
    return params, x, y


def mlp_gradients(xp, params, x, y, with_loss=True):
    """Hand-written forward + backward of the MLP with `xp` (numpy, or CuPy for the GPU floor):
    (loss or None, the six gradients)."""
    w1, b1, w2, b2, w3, b3 = params
    h1 = x @ w1 + b1
    a1 = xp.maximum(h1, 0)
    h2 = a1 @ w2 + b2
    a2 = xp.maximum(h2, 0)
    logits = a2 @ w3 + b3
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = xp.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    loss = xp.mean(xp.sum(y * (xp.log(s) - shifted), axis=1)) if with_loss else None
    dlogits = (e / s - y) / BATCH
    dw3 = a2.T @ dlogits
    db3 = dlogits.sum(axis=0)
    dh2 = (dlogits @ w3.T) * (h2 > 0)
    dw2 = a1.T @ dh2
    db2 = dh2.sum(axis=0)
    dh1 = (dh2 @ w2.T) * (h1 > 0)
    dw1 = x.T @ dh1
    db1 = dh1.sum(axis=0)
    return loss, (dw1, db1, dw2, db2, dw3, db3)


def numpy_mlp_step(params, x, y):
    """Hand-written forward + backward + SGD update (in place), the numpy floor."""
    loss, grads = mlp_gradients(np, params, x, y)
    for p, g in zip(params, grads):
        p -= LR * g
    return loss


def eager_mlp_step(params, x, y):
    """The same step with a GradientTape; parameters are tensors replaced by the update."""
    with eager.GradientTape() as tape:
        tape.watch(params)
        w1, b1, w2, b2, w3, b3 = params
        a1 = eager.nn.relu(eager.matmul(x, w1) + b1)
        a2 = eager.nn.relu(eager.matmul(a1, w2) + b2)
        logits = eager.matmul(a2, w3) + b3
        loss = eager.reduce_mean(
            eager.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
    grads = tape.gradient(loss, params)
    params[:] = [p - LR * g for p, g in zip(params, grads)]
    return loss


def mlp_step(others) -> Case:
    np_params, xn, yn = mlp_data()
    e_params = [eager.constant(p) for p in np_params]
    x, y = eager.constant(xn), eager.constant(yn)
    impls = {"numpy": lambda: numpy_mlp_step(np_params, xn, yn),
             "eager": lambda: eager_mlp_step(e_params, x, y)}
    if "torch" in others:
        torch = others["torch"]
        t_params = [torch.from_numpy(p.copy()).requires_grad_() for p in mlp_data()[0]]
        tx, ty = torch.from_numpy(xn), torch.from_numpy(yn)

        def torch_step():
            w1, b1, w2, b2, w3, b3 = t_params
            a1 = torch.relu(tx @ w1 + b1)
            a2 = torch.relu(a1 @ w2 + b2)
            logits = a2 @ w3 + b3
            loss = torch.nn.functional.cross_entropy(logits, ty)
            grads = torch.autograd.grad(loss, t_params)
            with torch.no_grad():
                for p, g in zip(t_params, grads):
                    p -= LR * g
            return loss
        impls["torch"] = torch_step
    if "tensorflow" in others:
        tf = others["tensorflow"]
        f_params = [tf.constant(p) for p in mlp_data()[0]]
        fx, fy = tf.constant(xn), tf.constant(yn)

        def tf_step():
            with tf.GradientTape() as tape:
                tape.watch(f_params)
                w1, b1, w2, b2, w3, b3 = f_params
                a1 = tf.nn.relu(fx @ w1 + b1)
                a2 = tf.nn.relu(a1 @ w2 + b2)
                logits = a2 @ w3 + b3
                loss = tf.reduce_mean(
                    tf.nn.softmax_cross_entropy_with_logits(labels=fy, logits=logits))
            grads = tape.gradient(loss, f_params)
            f_params[:] = [p - LR * g for p, g in zip(f_params, grads)]
            return loss
        impls["tensorflow"] = tf_step
    return Case("(e) MLP 784-256-256-10 SGD step, batch 128", 1.25, impls, inner=5)


def jacobian(others) -> Case:
    """The Jacobian of tanh(W x) (64 outputs, 32 inputs): vectorised (one backward pass for all
    64 rows), and the per-row loop for comparison. The floor is the hand-derived Jacobian."""
    rng = np.random.default_rng(0)
    wn = rng.standard_normal((64, 32)).astype(np.float32)
    xn = rng.standard_normal(32).astype(np.float32)
    w, x = eager.constant(wn), eager.constant(xn)

    def numpy_jacobian():
        t = np.tanh(wn @ xn)
        return (1 - t * t)[:, None] * wn

    def eager_jacobian(pfor):
        def run():
            with eager.GradientTape() as tape:
                tape.watch(x)
                y = eager.tanh(eager.linalg.matvec(w, x))
            return tape.jacobian(y, x, experimental_use_pfor=pfor)
        return run

    impls = {"numpy": numpy_jacobian, "eager": eager_jacobian(True),
             "eager loop": eager_jacobian(False)}
    if "torch" in others:
        torch = others["torch"]
        tw, tx = torch.from_numpy(wn), torch.from_numpy(xn)
        impls["torch"] = lambda: torch.autograd.functional.jacobian(
            lambda v: torch.tanh(tw @ v), tx, vectorize=True)
    if "jax" in others:
        jax = others["jax"]
        jw, jx = jax.numpy.asarray(wn), jax.numpy.asarray(xn)
        jac = jax.jacrev(lambda v: jax.numpy.tanh(jw @ v))
        impls["jax"] = lambda: jac(jx).block_until_ready()
    if "tensorflow" in others:
        tf = others["tensorflow"]
        fw, fx = tf.constant(wn), tf.constant(xn)

        def tf_jacobian():
            with tf.GradientTape() as tape:
                tape.watch(fx)
                y = tf.tanh(tf.linalg.matvec(fw, fx))
            return tape.jacobian(y, fx)
        impls["tensorflow"] = tf_jacobian
    return Case("(d2) Jacobian of tanh(W x), W float32 64x32 (no target)", None, impls,
                inner=20)


CASES = [tiny_gradient, mlp_step, jacobian]
