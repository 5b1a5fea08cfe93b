"""eager.data inside eager.function: `for x in dataset:` is one while loop read when the function
runs (one trace whatever the data), `iter`/`next` are iterator ops, and an eager iterator used in
a function is read at run time (TensorFlow 2.21's behaviour, including OutOfRangeError "End of
sequence" when `next` runs past the end)."""

import numpy as np
import pytest

import eager as tf
from eager import errors

D = tf.data.Dataset


def op_types(function, *args):
    graph = function.get_concrete_function(*args).graph
    return [op.type for op in graph.get_operations()]


def test_for_loop_over_a_dataset_runs_in_the_graph_and_traces_once():
    @tf.function
    def total(ds):
        s = tf.constant(0, tf.int64)
        for x in ds:
            s += x
        return s

    ds = D.range(5).map(lambda x: x * 2)
    assert int(total(ds)) == 20 and int(total(ds)) == 20
    assert total.experimental_get_tracing_count() == 1
    types = op_types(total, ds)
    assert "While" in types and "AnonymousIteratorV3" in types


def test_for_loop_with_break_and_a_structured_element():
    data = D.range(10)

    @tf.function
    def until_five():
        s = tf.constant(0, tf.int64)
        for x in data:
            if x > 5:
                break
            s += x
        return s
    assert int(until_five()) == 15 and int(until_five()) == 15

    pairs = D.from_tensor_slices((np.arange(6, dtype=np.float32).reshape(3, 2),
                                  np.array([1., 2., 3.], np.float32))).batch(2)

    @tf.function
    def weighted():
        s = tf.constant(0.0)
        for x, y in pairs:
            s += tf.reduce_sum(x * y[:, None])
        return s
    # rows [0,1]*1 + [2,3]*2 + [4,5]*3 = 1 + 10 + 27
    assert float(weighted()) == 38.0


def test_the_loop_sees_the_data_of_each_run():
    ds = D.range(3).shuffle(3, seed=2)

    @tf.function
    def order():
        ta = tf.TensorArray(tf.int64, size=0, dynamic_size=True)
        i = 0
        for x in ds:
            ta = ta.write(i, x)
            i += 1
        return ta.stack()
    first, second = order().numpy().tolist(), order().numpy().tolist()
    assert sorted(first) == sorted(second) == [0, 1, 2] and first != second
    assert order.experimental_get_tracing_count() == 1


def test_iter_and_next_inside_a_function():
    @tf.function
    def two():
        it = iter(D.range(3).batch(2))
        return next(it), next(it)
    a, b = two()
    assert a.numpy().tolist() == [0, 1] and b.numpy().tolist() == [2]

    @tf.function
    def too_many():
        it = iter(D.range(1))
        next(it)
        return next(it)
    with pytest.raises(errors.OutOfRangeError, match="End of sequence"):
        too_many()


def test_an_eager_iterator_is_read_when_the_function_runs():
    it = iter(D.range(3))

    @tf.function
    def step():
        return next(it) * 10
    assert [int(step()) for _ in range(3)] == [0, 10, 20]
    assert step.experimental_get_tracing_count() == 1
    with pytest.raises(errors.OutOfRangeError, match="End of sequence"):
        step()
    assert int(tf.constant(1)) == 1  # nothing left broken


def test_for_loop_over_an_eager_iterator_takes_what_is_left():
    it = iter(D.range(6))
    next(it)

    @tf.function
    def rest():
        s = tf.constant(0, tf.int64)
        for x in it:
            s += x
        return s
    assert int(rest()) == 15 and int(rest()) == 0


def test_reduce_inside_a_function():
    @tf.function
    def total():
        return D.range(5).reduce(tf.constant(0, tf.int64), lambda s, x: s + x)
    assert int(total()) == 10 and int(total()) == 10


def test_the_loop_hook_runs_python_loops_when_functions_run_eagerly():
    @tf.function
    def total(ds):
        s = tf.constant(0, tf.int64)
        for x in ds:
            s += x
        return s
    tf.config.run_functions_eagerly(True)
    try:
        assert int(total(D.range(4))) == 6
    finally:
        tf.config.run_functions_eagerly(False)


def test_datasets_of_datasets_cannot_be_iterated_in_a_function():
    @tf.function
    def f():
        for _window in D.range(4).window(2):
            pass
        return 0
    with pytest.raises(TypeError, match="window"):
        f()


def test_map_errors_name_the_users_function():
    def reshape_to_two(x):
        return tf.reshape(tf.fill([x], x), [2])
    it = iter(D.range(3).map(reshape_to_two))
    for _ in range(2):
        with pytest.raises(errors.InvalidArgumentError) as info:
            next(it)
        notes = "\n".join(getattr(info.value, "__notes__", []))
        assert __file__ in notes
        assert "reshape_to_two" in notes or "tf.reshape(tf.fill([x], x), [2])" in notes


def test_a_python_for_over_a_dataset_without_autograph_is_tensorflows_error():
    ds = D.range(3)

    @tf.function(autograph=False)
    def f():
        s = tf.constant(0, tf.int64)
        for x in ds:
            s += x
        return s
    with pytest.raises(ValueError, match=r"^An unusually high number of `tf.data.Iterator."
                                         r"get_next\(\)` calls was detected. This suggests that "
                                         r"the `for elem in dataset: ...` idiom is used within "
                                         r"tf.function with AutoGraph disabled."):
        f()


def test_datasets_built_from_a_functions_symbolic_tensors_read_each_calls_values():
    """TF 2.21 goldens: f(ones((3, 2)), 5) == (12.0, 10), f(2 * ones((3, 2)), 6) == (24.0, 15),
    traced once; g([1, 2, 3]) == ([1, 2], [10, 20])."""
    traces = []

    @tf.function
    def f(x, n):
        traces.append(1)
        ds = D.from_tensor_slices(x).map(lambda a: a * 2.)
        assert ds.element_spec == tf.TensorSpec([2], tf.float32)
        s = tf.constant(0.)
        for v in ds:
            s += tf.reduce_sum(v)
        r = D.range(n).reduce(tf.constant(0, tf.int64), lambda a, b: a + b)
        return s, r
    out = f(np.ones((3, 2), np.float32), tf.constant(5, tf.int64))
    assert (float(out[0]), int(out[1])) == (12.0, 10)
    out = f(np.ones((3, 2), np.float32) * 2, tf.constant(6, tf.int64))
    assert (float(out[0]), int(out[1])) == (24.0, 15)
    assert len(traces) == 1

    @tf.function
    def g(x):
        it = iter(D.from_tensor_slices((x, x * 10)).batch(2).repeat(2))
        return next(it), D.from_tensors(x).reduce(tf.constant(0.), lambda s, v: s + v[0])
    (a, b), first = g(tf.constant([1., 2., 3.]))
    assert a.numpy().tolist() == [1., 2.] and b.numpy().tolist() == [10., 20.]
    assert float(first) == 1.0


def test_a_dataset_of_symbolic_tensors_is_iterated_only_inside_its_function():
    kept = []

    @tf.function
    def build(x):
        kept.append(D.from_tensor_slices(x))
        return x
    build(tf.constant([1., 2.]))
    with pytest.raises(ValueError, match="can be iterated only inside that function"):
        list(kept[0])

    @tf.function
    def counter_of(n):
        return D.counter(n).take(2).reduce(tf.constant(0, tf.int64), lambda s, v: s + v)
    with pytest.raises(TypeError, match="Dataset.counter needs eager values"):
        counter_of(tf.constant(3, tf.int64))


def test_pending_tensors_of_async_execution_build_datasets():
    with tf.experimental.async_scope():
        x = tf.constant([1., 2.]) * 2
        ds = D.from_tensor_slices(x)
        assert [float(v) for v in ds] == [2.0, 4.0]
