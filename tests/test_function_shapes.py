"""Functions whose signature leaves dimensions unknown: sizes computed from them, and the
gradient rules that need them, are read when the function runs, so one trace serves every
shape, gives what eager execution gives, and warns about nothing; signatures are enforced. An
op that has no run-time form for a size raises its UnknownDimensionError (a TypeError naming
it) instead of tracing again per call shape."""

import warnings

import numpy as np
import pytest

import eager
from eager.core.shapes import UnknownDimensionError
from eager.graph import constant_value as cv


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


def test_training_step_with_a_none_batch_dimension_traces_once_and_matches_eager():
    step, w, b = _model()
    eager_step, ew, eb = _model()
    traced = eager.function(step, input_signature=[eager.TensorSpec([None, 3]),
                                                   eager.TensorSpec([None], eager.int32)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: nothing is specialized
        losses = [traced(*_batch(n, s)) for n, s in ((4, 0), (7, 7), (4, 4), (1, 1))]
    expected = [eager_step(*_batch(n, s)) for n, s in ((4, 0), (7, 7), (4, 4), (1, 1))]
    for got, want in zip(losses, expected):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    np.testing.assert_allclose(w.numpy(), ew.numpy(), rtol=1e-5)
    np.testing.assert_allclose(b.numpy(), eb.numpy(), rtol=1e-5)
    assert traced.experimental_get_tracing_count() == 1


def test_the_signature_trace_keeps_its_none_dimensions_and_is_enforced():
    step, _, _ = _model()
    traced = eager.function(step, input_signature=[eager.TensorSpec([None, 3]),
                                                   eager.TensorSpec([None], eager.int32)])
    traced(*_batch(2, 0))
    x, labels = _batch(2, 1)
    with pytest.raises(TypeError, match="Can not cast"):
        traced(eager.cast(x, eager.float64), labels)
    with pytest.raises(TypeError, match="Can not cast"):
        traced(eager.constant(np.ones((2, 4), np.float32)), labels)
    cf = traced.get_concrete_function()
    assert cf.inputs[0].shape.as_list() == [None, 3]
    assert traced.get_concrete_function(*_batch(5, 2)) is cf
    assert traced.experimental_get_tracing_count() == 1


def test_reduce_retracing_relaxes_once_and_the_relaxed_trace_serves_later_shapes():
    step, _, _ = _model()
    traced = eager.function(step, reduce_retracing=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        traced(*_batch(3, 0))
        traced(*_batch(5, 1))  # relaxed to [None, 3] and [None]
        traced(*_batch(6, 2))
        traced(*_batch(1, 3))
    assert traced.experimental_get_tracing_count() == 2


def test_functions_that_need_no_static_dims_keep_one_relaxed_trace():
    f = eager.function(lambda x: eager.reduce_sum(x * 2.0, axis=1),
                       input_signature=[eager.TensorSpec([None, 3])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (1, 4, 9):
            np.testing.assert_allclose(f(eager.ones([n, 3])).numpy(), np.full(n, 6.0))
    assert f.experimental_get_tracing_count() == 1


# -- sizes computed at trace time (`graph.constant_value`) ----------------------------------------

def _sized_by_shapes(x):
    """Ops whose sizes are static attributes, given sizes computed from x's shape and from
    constants: the trace must find their values, as TensorFlow's constant_value does."""
    n = eager.shape(x)[0]
    return (eager.reshape(x, [n, -1]),
            eager.zeros(eager.stack([n, 2])),
            eager.range(eager.size(x)),
            eager.tile(x[:1], [eager.rank(x) - 1, 1, 1]),
            eager.one_hot(eager.constant([0, 1]), depth=n + 1),
            eager.pad(x, [[0, n - 1], [0, 0], [0, 0]]),
            eager.fill(eager.shape(x)[1:] * 2, 7.0),
            eager.ones(eager.constant([2, 3]) // 2 + eager.cast(eager.size(x) > 0, eager.int32)))


@pytest.mark.parametrize("shape", [(2, 3, 4), (1, 2, 5), (4, 1, 1)])
def test_sizes_computed_from_static_shapes_and_constants_trace_as_eager_runs(shape):
    x = eager.constant(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
    traced = eager.function(_sized_by_shapes)
    for got, expected in zip(traced(x), _sized_by_shapes(x)):
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert traced.experimental_get_tracing_count() == 1


def test_a_size_from_a_none_dimension_is_read_when_the_function_runs():
    traced = eager.function(lambda x: eager.reshape(x, [eager.shape(x)[0] * 3]),
                            input_signature=[eager.TensorSpec([None, 3])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert traced(eager.ones([2, 3])).shape == (6,)
        assert traced(eager.ones([5, 3])).shape == (15,)
    assert traced.get_concrete_function().outputs[0].shape.as_list() == [None]
    assert traced.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("size", ["argument", "random", "variable"])
def test_a_size_known_only_at_run_time_is_an_input_of_the_op(size):
    v = eager.Variable(3)

    def body(n):
        k = {"argument": n, "random": eager.random.uniform([], 3, 4, dtype=eager.int32),
             "variable": v.read_value()}[size]
        return eager.zeros([k, 2])

    traced = eager.function(body)
    out = traced(eager.constant(3))
    np.testing.assert_array_equal(out.numpy(), np.zeros((3, 2), np.float32))
    assert traced.get_concrete_function(eager.constant(3)).outputs[0].shape.as_list() == [None, 2]


def test_an_op_that_needs_a_size_at_trace_time_names_itself_instead_of_retracing():
    # A reduction axis has no run-time form here (TensorFlow's Sum takes one): the trace fails
    # with the op's name, once, and nothing is traced per call shape.
    traced = eager.function(lambda x, axis: eager.reduce_sum(x, axis=axis),
                            input_signature=[eager.TensorSpec([None, 3]),
                                             eager.TensorSpec([], eager.int32)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            with pytest.raises(UnknownDimensionError, match="Sum: axis must be known when the "
                                                            "function is traced"):
                traced(eager.ones([2, 3]), eager.constant(1))


def test_trace_time_values_are_bounded_and_skip_effects():
    seen = {}

    def body(x):
        chain = eager.constant(1)
        for _ in range(cv.MAX_OPS + 5):
            chain = chain + 0
        seen["long"] = cv.constant_value(chain)
        seen["short"] = cv.constant_value(eager.constant(2) * 3 + eager.size(x))
        seen["partial"] = cv.constant_value(eager.shape(x))
        seen["rank"] = cv.constant_value(eager.rank(x))
        seen["identity"] = cv.constant_value(eager.identity(eager.constant(5)))
        seen["partial shape"] = cv.partial_value(eager.shape(x))
        seen["known size"] = cv.constant_value(eager.shape(x)[1])
        seen["unknown size"] = cv.constant_value(eager.shape(x)[0])
        seen["stacked"] = cv.partial_value(eager.stack([eager.shape(x)[0], eager.shape(x)[1],
                                                        eager.shape(x)[1] + 2]))
        return x

    eager.function(body, input_signature=[eager.TensorSpec([None, 4])])(eager.ones([2, 4]))
    assert seen["long"] is None  # more ops than MAX_OPS: not evaluated
    assert seen["short"] is None  # size of a partially known shape
    assert seen["partial"] is None
    assert int(seen["rank"]) == 2 and int(seen["identity"]) == 5
    # What the trace knows of a partly known shape (TensorFlow's constant_value_as_shape).
    assert seen["partial shape"].tolist() == [None, 4]
    assert int(seen["known size"]) == 4 and seen["unknown size"] is None
    assert seen["stacked"].tolist() == [None, 4, 6]
