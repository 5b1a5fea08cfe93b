"""Training benchmarks: a tiny variable update, and the MLP step with variables and SGD.

(f) `v.assign_add(ones)` on a float32 (4,) variable against numpy's in-place
    `np.add(a, ones, out=a)`: what a resource update costs beyond the arithmetic (lock, sharing
    check, version bump, and the unread-variable result TF returns).
(g) The MLP 784-256-256-10 SGD step of `cases_autodiff` (same data, same numpy floor), written as
    a TensorFlow user writes it: `eager.Variable` parameters, a GradientTape, and
    `eager.optimizers.SGD(0.1).apply_gradients`, whose fused ResourceApplyGradientDescent updates
    each parameter in place (the forward pass's reads are released with the tape, so the
    buffers are unshared by the time the update runs).

Add `cases_training.CASES` to the case list in bench/run.py.
"""

from __future__ import annotations

import numpy as np

import eager

from .cases_autodiff import LR, mlp_data, numpy_mlp_step
from .harness import Case


def assign_add_small(others) -> Case:
    a = np.zeros(4, dtype=np.float32)
    ones = np.ones(4, dtype=np.float32)
    v = eager.Variable(np.zeros(4, dtype=np.float32))
    eones = eager.constant(ones)

    impls = {"numpy": lambda: np.add(a, ones, out=a),
             "eager": lambda: v.assign_add(eones)}  # as TF code writes it (an unread result)
    if "torch" in others:
        torch = others["torch"]
        tv, tones = torch.zeros(4), torch.ones(4)
        impls["torch"] = lambda: tv.add_(tones)
    if "tensorflow" in others:
        tf = others["tensorflow"]
        fv, fones = tf.Variable(np.zeros(4, np.float32)), tf.constant(ones)
        impls["tensorflow"] = lambda: fv.assign_add(fones)
    return Case("(f) v.assign_add(ones), float32 (4,) variable", 3.0, impls)


def eager_mlp_loss(params, x, y):
    w1, b1, w2, b2, w3, b3 = params
    a1 = eager.nn.relu(eager.matmul(x, w1) + b1)
    a2 = eager.nn.relu(eager.matmul(a1, w2) + b2)
    logits = eager.matmul(a2, w3) + b3
    return eager.reduce_mean(eager.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))


def eager_variable_mlp_step(params, optimizer, x, y):
    """One training step as TF code writes it (`import eager as tf` and this is TF code)."""
    with eager.GradientTape() as tape:
        loss = eager_mlp_loss(params, x, y)
    grads = tape.gradient(loss, params)
    optimizer.apply_gradients(zip(grads, params))
    return loss


def torch_mlp_step(torch, params, optimizer, x, y):
    """The same step in PyTorch (`torch.optim` applies the update)."""
    w1, b1, w2, b2, w3, b3 = params
    a1 = torch.relu(x @ w1 + b1)
    a2 = torch.relu(a1 @ w2 + b2)
    loss = torch.nn.functional.cross_entropy(a2 @ w3 + b3, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss


def mlp_variables_step(others) -> Case:
    np_params, xn, yn = mlp_data()
    e_params = [eager.Variable(p) for p in mlp_data()[0]]
    e_opt = eager.optimizers.SGD(LR)
    x, y = eager.constant(xn), eager.constant(yn)
    impls = {"numpy": lambda: numpy_mlp_step(np_params, xn, yn),
             "eager": lambda: eager_variable_mlp_step(e_params, e_opt, x, y)}
    if "torch" in others:
        torch = others["torch"]
        t_params = [torch.nn.Parameter(torch.from_numpy(p.copy())) for p in mlp_data()[0]]
        t_opt = torch.optim.SGD(t_params, lr=LR)
        tx, ty = torch.from_numpy(xn), torch.from_numpy(yn)
        impls["torch"] = lambda: torch_mlp_step(torch, t_params, t_opt, tx, ty)
    if "tensorflow" in others:
        tf = others["tensorflow"]
        f_params = [tf.Variable(p) for p in mlp_data()[0]]
        f_opt = tf.optimizers.SGD(LR)
        fx, fy = tf.constant(xn), tf.constant(yn)

        def tf_step():
            with tf.GradientTape() as tape:
                w1, b1, w2, b2, w3, b3 = f_params
                a1 = tf.nn.relu(fx @ w1 + b1)
                a2 = tf.nn.relu(a1 @ w2 + b2)
                logits = a2 @ w3 + b3
                loss = tf.reduce_mean(
                    tf.nn.softmax_cross_entropy_with_logits(labels=fy, logits=logits))
            grads = tape.gradient(loss, f_params)
            f_opt.apply_gradients(zip(grads, f_params))
            return loss
        impls["tensorflow"] = tf_step
    return Case("(g) MLP 784-256-256-10 step, Variables + optimizers.SGD, batch 128", 1.25,
                impls, inner=5)


CASES = [assign_add_small, mlp_variables_step]
