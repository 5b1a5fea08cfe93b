"""`eager.vectorized_map` against the loop it replaces: values, nesting, per-example gradients,
the fallback for side effects and ops without batch rules, and bad input."""

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager
from eager.runtime import vectorize as _vectorize


def _loop(fn, xs):
    return np.stack([np.asarray(fn(eager.constant(x))) for x in xs])


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 5), d=st.integers(1, 4), seed=st.integers(0, 1000))
def test_matches_the_loop(n, d, seed):
    rng = np.random.default_rng(seed)
    w = eager.constant(rng.standard_normal((d, 3)))
    b = eager.constant(rng.standard_normal(3))

    def fn(x):
        h = eager.nn.relu(eager.linalg.matvec(eager.transpose(w), x) + b)
        return eager.nn.softmax(h) * eager.reduce_sum(x * x)

    xs = rng.standard_normal((n, d))
    got = eager.vectorized_map(fn, eager.constant(xs))
    np.testing.assert_allclose(got.numpy(), _loop(fn, xs), rtol=1e-12, atol=1e-14)


def test_nested_elems_and_outputs():
    rng = np.random.default_rng(0)
    a, c = rng.standard_normal((4, 2)), rng.standard_normal((4, 2, 2))

    def fn(e):
        x, m = e["x"], e["m"]
        return {"y": eager.linalg.matvec(m, x), "pair": (x * 2.0, eager.reduce_sum(m))}

    out = eager.vectorized_map(fn, {"x": eager.constant(a), "m": eager.constant(c)})
    np.testing.assert_allclose(out["y"].numpy(), np.einsum("nij,nj->ni", c, a), rtol=1e-12)
    np.testing.assert_allclose(out["pair"][0].numpy(), a * 2.0)
    np.testing.assert_allclose(out["pair"][1].numpy(), c.sum(axis=(1, 2)), rtol=1e-12)


def test_per_example_gradients_vectorise():
    rng = np.random.default_rng(1)
    w = eager.Variable(rng.standard_normal((3, 2)))
    xs = rng.standard_normal((6, 3))

    def grad(x):
        with eager.GradientTape() as tape:
            loss = eager.reduce_sum(eager.tanh(eager.linalg.matvec(eager.transpose(w), x)))
        return tape.gradient(loss, w)

    programs = []
    original = _vectorize.vectorize

    def spy(program, batched, n):
        result = original(program, batched, n)
        programs.append(result)
        return result

    _vectorize_module = eager.functions.vectorized_map
    _vectorize_module.vectorize = spy
    try:
        got = eager.vectorized_map(grad, eager.constant(xs))
    finally:
        _vectorize_module.vectorize = original
    assert programs and programs[0] is not None  # vectorised, not looped
    expected = []
    for x in xs:
        t = np.tanh(x @ w.numpy())
        expected.append(np.outer(x, 1 - t * t))
    np.testing.assert_allclose(got.numpy(), np.stack(expected), rtol=1e-12)


def test_outputs_independent_of_the_elements_are_repeated():
    out = eager.vectorized_map(lambda x: (x + 1.0, eager.constant([7.0, 8.0])),
                               eager.constant(np.zeros((3, 2))))
    np.testing.assert_array_equal(out[1].numpy(), np.tile([7.0, 8.0], (3, 1)))


def test_side_effects_run_per_element(caplog):
    eager.random.set_seed(3)
    xs = eager.constant(np.zeros((4, 2), np.float32))
    with caplog.at_level(logging.WARNING, logger="eager"):
        out = eager.vectorized_map(lambda x: x + eager.random.normal([2]), xs)
    assert "element by element" in caplog.text
    rows = out.numpy()
    assert len({tuple(r) for r in rows}) == 4  # four draws, not one repeated
    with pytest.raises(ValueError, match="cannot be vectorised"):
        eager.vectorized_map(lambda x: x + eager.random.normal([2]), xs,
                             fallback_to_while_loop=False)


def test_an_op_without_a_batch_rule_falls_back_quietly_when_asked():
    xs = eager.constant(np.array([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]]))
    out = eager.vectorized_map(lambda x: eager.sort(x), xs, warn=False)
    np.testing.assert_array_equal(out.numpy(), np.sort(xs.numpy(), axis=1))


def test_bad_elems():
    with pytest.raises(ValueError, match="leading dimension"):
        eager.vectorized_map(lambda x: x, (eager.constant(np.zeros(3)),
                                            eager.constant(np.zeros(4))))
    with pytest.raises(ValueError, match="leading dimension"):
        eager.vectorized_map(lambda x: x, eager.constant(1.0))


def test_inside_a_traced_function_and_under_a_tape():
    rng = np.random.default_rng(2)
    w = eager.constant(rng.standard_normal((3, 2)))
    xs = eager.constant(rng.standard_normal((5, 3)))

    def fn(x):
        return eager.tanh(eager.linalg.matvec(eager.transpose(w), x))

    expected = np.tanh(xs.numpy() @ w.numpy())
    traced = eager.function(lambda v: eager.vectorized_map(fn, v))
    for _ in range(3):  # traced, then the compiled plan of the enclosing function
        np.testing.assert_allclose(traced(xs).numpy(), expected, rtol=1e-12)
    with eager.GradientTape() as tape:
        tape.watch(xs)
        total = eager.reduce_sum(eager.vectorized_map(fn, xs))
    g = tape.gradient(total, xs)
    np.testing.assert_allclose(g.numpy(), (1 - expected ** 2) @ w.numpy().T, rtol=1e-12)
