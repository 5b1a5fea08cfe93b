"""Functions whose signature leaves dimensions unknown while an op (or a gradient rule) needs
them: eager.function traces once per call shape instead, warns once, and gives what eager
execution gives; signatures are still enforced."""

import warnings

import numpy as np
import pytest

import eager
from eager.ops.shapes import UnknownDimensionError


def _model():
    w = eager.Variable(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2))
    b = eager.Variable(np.zeros(2, np.float32))

    def step(x, labels):
        with eager.GradientTape() as tape:
            logits = eager.matmul(x, w) + b
            loss = eager.reduce_mean(eager.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits)) + eager.reduce_mean(eager.square(x - 1.0))
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return loss

    return step, w, b


def _batch(n, seed):
    rng = np.random.default_rng(seed)
    return (eager.constant(rng.standard_normal((n, 3)).astype(np.float32)),
            eager.constant(rng.integers(0, 2, n).astype(np.int32)))


def test_training_step_with_a_none_batch_dimension_matches_eager():
    step, w, b = _model()
    eager_step, ew, eb = _model()
    traced = eager.function(step, input_signature=[eager.TensorSpec([None, 3]),
                                                   eager.TensorSpec([None], eager.int32)])
    with pytest.warns(UserWarning, match="once per call shape"):
        first = traced(*_batch(4, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once only
        losses = [first] + [traced(*_batch(n, n)) for n in (7, 4, 7)]
    expected = [eager_step(*_batch(n, s)) for n, s in ((4, 0), (7, 7), (4, 4), (7, 7))]
    for got, want in zip(losses, expected):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    np.testing.assert_allclose(w.numpy(), ew.numpy(), rtol=1e-5)
    np.testing.assert_allclose(b.numpy(), eb.numpy(), rtol=1e-5)
    assert traced.experimental_get_tracing_count() == 2  # one per batch size


def test_signature_is_still_enforced_when_tracing_per_shape():
    step, _, _ = _model()
    traced = eager.function(step, input_signature=[eager.TensorSpec([None, 3]),
                                                   eager.TensorSpec([None], eager.int32)])
    with pytest.warns(UserWarning):
        traced(*_batch(2, 0))
    x, labels = _batch(2, 1)
    with pytest.raises(TypeError, match="input_signature"):
        traced(eager.cast(x, eager.float64), labels)
    with pytest.raises(TypeError, match="input_signature"):
        traced(eager.constant(np.ones((2, 4), np.float32)), labels)
    # no shapes to trace with: the error that made it per-shape
    with pytest.raises(UnknownDimensionError, match="must be an integer known"):
        traced.get_concrete_function()
    cf = traced.get_concrete_function(*_batch(5, 2))
    assert cf.inputs[0].shape.as_list() == [5, 3]


def test_reduce_retracing_falls_back_to_exact_shapes():
    step, _, _ = _model()
    traced = eager.function(step, reduce_retracing=True)
    traced(*_batch(3, 0))
    with pytest.warns(UserWarning, match="once per call shape"):
        traced(*_batch(5, 1))  # the relaxed [None, 3] trace fails; exact shapes work
    traced(*_batch(6, 2))
    assert traced.experimental_get_tracing_count() == 3


def test_functions_that_need_no_static_dims_keep_one_relaxed_trace():
    f = eager.function(lambda x: eager.reduce_sum(x * 2.0, axis=1),
                       input_signature=[eager.TensorSpec([None, 3])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (1, 4, 9):
            np.testing.assert_allclose(f(eager.ones([n, 3])).numpy(), np.full(n, 6.0))
    assert f.experimental_get_tracing_count() == 1
