"""Foundation benchmarks: small-op dispatch, a chain of small ops, one large matmul."""

from __future__ import annotations

import numpy as np

import eager

from .harness import Case


def small_add(others) -> Case:
    x = np.arange(4, dtype=np.float32)
    y = np.ones(4, dtype=np.float32)
    a, b = eager.constant(x), eager.constant(y)
    impls = {"numpy": lambda: x + y, "eager": lambda: a + b}
    if "torch" in others:
        torch = others["torch"]
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        impls["torch"] = lambda: tx + ty
    if "jax" in others:
        jnp = others["jax"].numpy
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        impls["jax"] = lambda: (jx + jy).block_until_ready()
    if "tensorflow" in others:
        tf = others["tensorflow"]
        fx, fy = tf.constant(x), tf.constant(y)
        impls["tensorflow"] = lambda: fx + fy
    if "autograd" in others:
        anp = others["autograd"].numpy
        impls["autograd"] = lambda: anp.add(x, y)
    return Case("(a) x + y, float32 (4,)", 2.0, impls, inner=2000)


def dispatch_path(others) -> Case:
    """Not a target: what a full trip through the op registry costs (`eager.add(x, y)`: argument
    conversion, dispatch, kernel, wrapping), against numpy's function call."""
    x = np.arange(4, dtype=np.float32)
    y = np.ones(4, dtype=np.float32)
    a, b = eager.constant(x), eager.constant(y)
    impls = {"numpy": lambda: np.add(x, y), "eager": lambda: eager.add(a, b)}
    if "torch" in others:
        torch = others["torch"]
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        impls["torch"] = lambda: torch.add(tx, ty)
    if "tensorflow" in others:
        tf = others["tensorflow"]
        fx, fy = tf.constant(x), tf.constant(y)
        impls["tensorflow"] = lambda: tf.add(fx, fy)
    return Case("(a') eager.add(x, y): full dispatch, float32 (4,)", None, impls, inner=2000)


def affine_chain(others) -> Case:
    x0 = np.arange(4, dtype=np.float32)

    def numpy_chain():
        x = x0
        for _ in range(50):
            x = x * 1.0001 + 0.5
        return x

    e0 = eager.constant(x0)

    def eager_chain():
        x = e0
        for _ in range(50):
            x = x * 1.0001 + 0.5
        return x.numpy()

    impls = {"numpy": numpy_chain, "eager": eager_chain}
    if "torch" in others:
        t0 = others["torch"].from_numpy(x0)

        def torch_chain():
            x = t0
            for _ in range(50):
                x = x * 1.0001 + 0.5
            return x.numpy()
        impls["torch"] = torch_chain
    if "tensorflow" in others:
        f0 = others["tensorflow"].constant(x0)

        def tf_chain():
            x = f0
            for _ in range(50):
                x = x * 1.0001 + 0.5
            return x.numpy()
        impls["tensorflow"] = tf_chain
    if "jax" in others:
        j0 = others["jax"].numpy.asarray(x0)

        def jax_chain():
            x = j0
            for _ in range(50):
                x = x * 1.0001 + 0.5
            return np.asarray(x)
        impls["jax"] = jax_chain
    return Case("(b) 50 x (x*1.0001 + 0.5), float32 (4,), to host", 2.0, impls, inner=40)


def large_matmul(others) -> Case:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1024, 1024), dtype=np.float32)
    y = rng.standard_normal((1024, 1024), dtype=np.float32)
    a, b = eager.constant(x), eager.constant(y)
    impls = {"numpy": lambda: x @ y, "eager": lambda: a @ b}
    if "torch" in others:
        torch = others["torch"]
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        impls["torch"] = lambda: tx @ ty
    if "tensorflow" in others:
        tf = others["tensorflow"]
        fx, fy = tf.constant(x), tf.constant(y)
        impls["tensorflow"] = lambda: (fx @ fy).numpy()
    if "jax" in others:
        jnp = others["jax"].numpy
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        impls["jax"] = lambda: (jx @ jy).block_until_ready()
    return Case("(c) 1024x1024 float32 matmul", 1.02, impls, inner=3)


def notebook_display(others) -> Case:
    """Not a ratio target: a notebook's display of a 1000x1000 tensor (`_repr_html_`) must take
    under 5 ms in absolute time and format a summary, never the whole array. The floor is
    numpy printing the same summary."""
    x = np.arange(1_000_000, dtype=np.float32).reshape(1000, 1000)
    a = eager.constant(x)
    impls = {"numpy": lambda: np.array2string(x, separator=" ", threshold=1000, edgeitems=3),
             "eager": a._repr_html_}
    return Case("(c') notebook display of a 1000x1000 tensor (_repr_html_)", None, impls,
                note="target: under 5 ms per display", inner=20)


CASES = [small_add, dispatch_path, affine_chain, large_matmul, notebook_display]
