"""map_fn, scan, foldl, foldr: values against Python loops over numpy (TensorFlow's documented
results), nested structures, traced calls equal to eager ones (one While op), and gradients
against finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager as tf
from gradcheck import check_gradient

X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def test_map_fn_values_and_signatures():
    assert tf.map_fn(lambda r: r * 2, X).numpy().tolist() == (X * 2).tolist()
    got = tf.map_fn(lambda r: tf.reduce_sum(r), tf.constant(X, tf.float32),
                    fn_output_signature=tf.float32)
    assert got.dtype == tf.float32 and got.numpy().tolist() == [3.0, 7.0, 11.0]
    a, b = tf.map_fn(lambda p: (p[0] + p[1], tf.cast(p[1], tf.int32)), (X, X),
                     fn_output_signature=(tf.float64, tf.int32))
    assert a.numpy().tolist() == (2 * X).tolist() and b.dtype == tf.int32
    got = tf.map_fn(lambda d: d["x"] * d["y"], {"x": X, "y": X},
                    fn_output_signature=tf.TensorSpec([2], tf.float64))
    assert got.numpy().tolist() == (X * X).tolist()
    got = tf.map_fn(lambda r: r, X, dtype=tf.float64, parallel_iterations=4)
    assert got.numpy().tolist() == X.tolist()


def test_map_fn_results_may_have_another_shape_than_the_elements():
    # Without fn_output_signature only the elements' structure and dtypes are assumed
    # (TensorFlow's docstring example: a range of three per scalar element).
    got = tf.map_fn(lambda t: tf.range(t, t + 3), tf.constant([3, 5, 2]))
    assert got.numpy().tolist() == [[3, 4, 5], [5, 6, 7], [2, 3, 4]]
    row_norms = tf.function(lambda x: tf.map_fn(lambda r: tf.reduce_sum(r * r), x))
    got = row_norms(tf.constant(X))
    assert got.numpy().tolist() == [5.0, 25.0, 61.0]
    assert row_norms.get_concrete_function(tf.constant(X)).structured_outputs.shape == (3,)


def test_map_fn_errors_as_tensorflow():
    with pytest.raises(ValueError, match="not scalars"):
        tf.map_fn(lambda r: r, tf.constant(1.0))
    with pytest.raises(TypeError, match="callable"):
        tf.map_fn(3, X)
    with pytest.raises(ValueError, match="same size in the first dimension"):
        tf.map_fn(lambda p: p[0], (np.ones(3), np.ones(4)))


def test_scan_and_folds_match_tensorflows_documented_results():
    elems = tf.constant([1, 2, 3, 4, 5, 6])
    assert tf.scan(lambda a, x: a + x, elems).numpy().tolist() == [1, 3, 6, 10, 15, 21]
    assert tf.scan(lambda a, x: a + x, elems, reverse=True).numpy().tolist() == [
        21, 20, 18, 15, 11, 6]
    # TF's docstring example: two accumulators from one sequence
    a, b = tf.scan(lambda acc, x: (acc[0] * x, acc[1] + x), tf.constant([1, 2, 3]),
                   initializer=(tf.constant(1), tf.constant(0)))
    assert a.numpy().tolist() == [1, 2, 6] and b.numpy().tolist() == [1, 3, 6]
    assert int(tf.foldl(lambda a, x: a + x, elems)) == 21
    assert int(tf.foldl(lambda a, x: a - x, tf.constant([1, 2, 3]), initializer=10)) == 4
    assert int(tf.foldr(lambda a, x: a - x, tf.constant([1, 2, 3]))) == 0
    assert int(tf.foldr(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]), initializer=0)) == 321


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=8), st.booleans())
def test_scan_is_a_running_fold(values, reverse):
    x = np.array(values)
    got = tf.scan(lambda a, v: a * 0.5 + v, x, reverse=reverse).numpy()
    seq = x[::-1] if reverse else x
    want, acc = [], None
    for v in seq:
        acc = v if acc is None else acc * 0.5 + v
        want.append(acc)
    want = np.array(want)[::-1] if reverse else np.array(want)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_traced_calls_are_one_loop_and_match_eager():
    def g(x):
        return (tf.map_fn(lambda r: tf.reduce_sum(r * r), x, fn_output_signature=tf.float64),
                tf.scan(lambda a, v: a + v, x), tf.foldr(lambda a, v: a * v, x))

    f = tf.function(g)
    for got, want in zip(f(X), g(X)):
        np.testing.assert_allclose(got.numpy(), want.numpy())
    graph = f.get_concrete_function(tf.TensorSpec([None, 2], tf.float64)).graph
    assert [op.type for op in graph.get_operations()].count("While") == 3


def test_gradients_through_the_loops():
    check_gradient(lambda x: tf.map_fn(lambda r: tf.sin(r) * r, x), [X])
    check_gradient(lambda x: tf.scan(lambda a, v: a * v + 1.0, x), [X])
    check_gradient(lambda x, i: tf.foldl(lambda a, v: a * v, x, initializer=i),
                   [X, np.array([0.5, -1.5])])
    traced = tf.function(lambda x: tf.map_fn(lambda r: r * r * r, x))
    check_gradient(traced, [X])
