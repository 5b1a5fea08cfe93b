"""AutoGraph's `while` and `for` (with `break`, `continue`, `return`), against TensorFlow 2.21.

The values and the errors' wording are TensorFlow 2.21's under `tf.function` (CPU), recorded
here (TensorFlow's `tf.autograph.experimental.set_loop_options` reads
`eager.autograph.experimental.set_loop_options`). A loop over a traced tensor is one `While`
op, traced once for every length; a loop over Python values is unrolled into the trace.
"""

import inspect

import numpy as np
import pytest

import eager
from eager import errors

c = eager.constant


def _ops(function, *args):
    return [op.type for op in function.get_concrete_function(*args).graph.get_operations()]


def _line_of(function, text):
    lines, start = inspect.getsourcelines(function)
    return start + next(i for i, line in enumerate(lines) if text in line)


# -- for -----------------------------------------------------------------------------------------
def test_for_over_range_of_a_tensor_is_one_loop_op():
    @eager.function
    def total(n):
        s = 0
        for i in range(n):
            s += i
        return s

    assert [int(total(c(k))) for k in (5, 1, 0, -3)] == [10, 0, 0, 0]  # TF: 10 for 5
    assert total.experimental_get_tracing_count() == 1
    assert _ops(total, c(5)).count("While") == 1
    assert int(total(5)) == 10  # a Python int: Python's range, unrolled


def test_for_over_range_with_start_and_step():
    @eager.function
    def odd_sum(n):
        s = c(0.0)
        for i in range(1, n, 2):
            s += eager.cast(i, eager.float32)
        return s

    assert float(odd_sum(c(8))) == 16.0  # TF: 16.0


def test_for_over_eager_range():
    @eager.function
    def f(n):
        s = c(0)
        for i in eager.range(1, n + 1):
            s += i * i
        return s

    assert int(f(c(4))) == 30
    assert int(f(c(5))) == 55 and f.experimental_get_tracing_count() == 1

    @eager.function
    def static(x):
        for i in eager.range(3):
            x = x + eager.cast(i, eager.float32)
        return x

    assert float(static(c(1.0))) == 4.0
    assert "While" in _ops(static, c(1.0))  # a tensor loop, as TensorFlow's for tf.range(3)


def test_for_over_a_traced_range_builds_no_range():
    # The loop runs over the bounds: the Range op (and range's clamp) the same call would
    # build elsewhere is never made, for `range` and `eager.range` alike.
    @eager.function
    def total(n):
        s = 0
        for i in range(n):
            s += i
        return s

    @eager.function
    def from_three(n):
        s = 0
        for i in eager.range(3, n):
            s += i
        return s

    for f in (total, from_three):
        ops = _ops(f, c(5))
        assert ops.count("While") == 1
        assert "Range" not in ops and "Maximum" not in ops
    assert [int(total(c(k))) for k in (5, 0, -3)] == [10, 0, 0]
    assert [int(from_three(c(k))) for k in (6, 1)] == [12, 0]  # TF: 12, 0 (no error)


def test_for_over_a_traced_range_keeps_the_ranges_dtype_and_steps():
    @eager.function
    def total_and_last(n):
        s = eager.zeros((), n.dtype)
        last = eager.zeros((), n.dtype)
        for i in range(n):
            s += i
            last = i
        return s, last

    # TF 2.21: the iterate has the bound's dtype; a float bound counts 0, 1, ... below it.
    for bound, dtype, expected in ((c(5, eager.int64), eager.int64, (10, 4)),
                                   (c(4.5), eager.float32, (10.0, 4.0)),
                                   (c(2.5, eager.float64), eager.float64, (3.0, 2.0))):
        s, last = total_and_last(bound)
        assert (s.dtype, last.dtype) == (dtype, dtype)
        assert (s.numpy().item(), last.numpy().item()) == expected

    @eager.function
    def down(n):
        s = 0
        for i in range(n, 0, -2):
            s += i
        return s

    assert int(down(c(7))) == 16  # TF: 16

    @eager.function
    def near_the_top(n):
        s = 0
        for _ in range(n, 2**31 - 1):
            s += 1
            if s > 3:
                break
        return s

    assert int(near_the_top(c(2**31 - 3))) == 2  # TF: 2

    @eager.function
    def mixed(a, b):
        s = c(0, eager.int64)
        for i in range(a, b):
            s += eager.cast(i, eager.int64)
        return s

    # Bounds of two dtypes still go through range's clamp, and its error (TF 2.21: TypeError
    # "Input 'y' of 'Maximum' Op has type int64 that does not match type int32 of argument
    # 'x'.").
    with pytest.raises(TypeError, match="Maximum"):
        mixed(c(2), c(6, eager.int64))


def test_for_over_a_tensor_iterates_its_first_dimension():
    @eager.function
    def rows(x):
        s = eager.zeros([3])
        for row in x:
            s += row
        return s

    np.testing.assert_allclose(rows(eager.ones([4, 3])).numpy(), [4.0, 4.0, 4.0])  # TF
    assert "While" in _ops(rows, eager.ones([4, 3]))

    any_length = eager.function(rows.python_function,
                                input_signature=[eager.TensorSpec([None, 3], eager.float32)])
    np.testing.assert_allclose(any_length(eager.ones([2, 3])).numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(any_length(eager.ones([5, 3])).numpy(), [5.0, 5.0, 5.0])
    assert any_length.experimental_get_tracing_count() == 1


def test_for_over_a_scalar_tensor_is_tensorflows_error():
    @eager.function
    def f(x):
        for v in x:
            x = v
        return x

    # TF 2.21: ValueError "len requires a non-scalar tensor, got one of shape ..."
    with pytest.raises(ValueError, match="len requires a non-scalar tensor"):
        f(c(1))


def test_for_over_a_python_list_is_unrolled():
    @eager.function
    def f(x):
        for k in [1, 2, 3]:
            x = x * k
        return x

    assert float(f(c(1.0))) == 6.0  # TF: 6.0
    assert "While" not in _ops(f, c(1.0))


class _TensorArrayLike:
    """What a converted `for` asks of a TensorArray: `size()` and `read(i)`."""

    def __init__(self, values):
        self.values = eager.stack(values)

    def size(self):
        return eager.shape(self.values)[0]

    def read(self, index):
        return eager.gather(self.values, index)


def test_for_over_a_tensor_array_reads_each_element():
    @eager.function
    def f(x):
        s = c(0.0)
        for v in _TensorArrayLike([x, x * 2.0, x * 3.0]):
            s += v
        return s

    assert float(f(c(1.0))) == 6.0
    assert "While" in _ops(f, c(1.0))
    eagerly = eager.autograph.to_graph(f.python_function)
    assert float(eagerly(c(2.0))) == 12.0  # run eagerly: a Python loop over size()


def test_enumerate_and_zip_of_tensors_are_loop_ops():
    # TF 2.21 refuses both ("Iterating over a symbolic `tf.Tensor` is not allowed"); here they
    # are loops over the first dimension, like a loop over the tensor itself.
    @eager.function
    def weighted(x):
        s = c(0.0)
        for i, v in enumerate(x):
            s += eager.cast(i, eager.float32) * v
        return s

    @eager.function
    def dot(x, y):
        s = c(0.0)
        for a, b in zip(x, y):
            s += a * b
        return s

    assert float(weighted(c([1.0, 2.0, 3.0]))) == 8.0
    assert float(dot(c([1.0, 2.0, 3.0]), c([4.0, 5.0, 6.0]))) == 32.0
    assert "While" in _ops(dot, c([1.0, 2.0]), c([1.0, 2.0]))


def test_iterables_can_run_the_loop_themselves():
    """The extension point (for a future Dataset): `__eager_for_loop__(self, loop)`."""
    class Counter:
        def __init__(self, n):
            self.n = n

        def __eager_for_loop__(self, loop):
            loop.run_indexed(self.n, lambda i: i * 10)

    @eager.function
    def f(n):
        s = c(0)
        for v in Counter(n):
            s += v
        return s

    assert int(f(c(4))) == 60 and "While" in _ops(f, c(4))


# -- while ---------------------------------------------------------------------------------------
def test_while_on_a_tensor_condition():
    @eager.function
    def f(x):
        while eager.reduce_sum(x) > 1:
            x = eager.tanh(x)
        return x

    x0 = np.array([1.0, 2.0], np.float32)
    expected = x0
    while expected.sum() > 1:
        expected = np.tanh(expected)
    np.testing.assert_allclose(f(c(x0)).numpy(), expected, rtol=1e-6)
    assert "While" in _ops(f, c(x0))


def test_while_on_a_python_condition_is_unrolled():
    @eager.function
    def f(x):
        i = 0
        while i < 3:
            x = x + 1.0
            i += 1
        return x

    assert float(f(c(0.0))) == 3.0 and "While" not in _ops(f, c(0.0))


def test_nested_loops():
    @eager.function
    def f(n):
        s = 0
        for i in range(n):
            j = 0
            while j < i:
                s += j
                j += 1
        return s

    assert int(f(c(5))) == 10


# -- break / continue / else ---------------------------------------------------------------------
def test_break_and_continue_in_a_tensor_for_loop():
    @eager.function
    def f(n):
        s = 0
        for i in eager.range(n):
            if i > 3:
                break
            if i % 2 == 0:
                continue
            s += i
        return s

    assert int(f(c(10))) == 4  # TF: 4


def test_break_in_a_tensor_while_loop():
    @eager.function
    def f(x):
        while eager.reduce_sum(x) > 1:
            x = x / 2
            if eager.reduce_max(x) < 3:
                break
        return x

    np.testing.assert_allclose(f(c([10.0, 20.0])).numpy(), [1.25, 2.5])  # TF: [1.25, 2.5]


def test_continue_in_a_while_loop():
    @eager.function
    def f(n):
        s, i = 0, 0
        while i < n:
            i += 1
            if i % 2 == 0:
                continue
            s += i
        return s

    assert int(f(c(7))) == 16


def test_loop_else_runs_when_no_break():
    @eager.function
    def f(x, n):
        s = c(0.0)
        for i in eager.range(n):
            if i > 6:
                break
            s += x
        else:
            s = s * 100
        return s

    assert float(f(c(1.0), c(10))) == 7.0 and float(f(c(1.0), c(5))) == 500.0


def test_break_in_a_python_loop():
    @eager.function
    def f(x):
        for k in [1, 2, 3, 4]:
            if k == 3:
                break
            x = x * k
        return x

    assert float(f(c(1.0))) == 2.0


def test_break_on_a_tensor_inside_a_python_loop_is_tensorflows_error():
    @eager.function
    def f(x):
        for _ in [1, 2, 3, 4]:
            if x > 3:
                break
            x = x * 2
        return x

    # TF 2.21: NotImplementedError "break and return statements which depend on a TF condition
    # are not supported in Python for loops. Did you intend to make it a TF loop?"
    with pytest.raises(NotImplementedError, match="break and return statements which depend on "
                                                  "a tensor condition are not supported in "
                                                  "Python for loops"):
        f(c(1.0))


def test_return_inside_a_tensor_loop_is_tensorflows_error():
    @eager.function
    def f(n):
        for i in eager.range(n):
            if i > 2:
                return i
        return -1

    with pytest.raises(NotImplementedError, match="^a return statement cannot be placed inside "
                                                  "this TensorFlow loop; this may happen if a "
                                                  "return statement depends on a static Python "
                                                  "condition such as a hyperparameter"):
        f(c(5))


def test_return_inside_a_python_loop():
    @eager.function
    def f(x):
        for k in [1, 2, 3]:
            if k == 2:
                return x * k
        return x

    assert float(f(c(3.0))) == 6.0


# -- loop variables ------------------------------------------------------------------------------
def test_a_loop_variable_changing_dtype_is_tensorflows_error():
    @eager.function
    def f(n):
        x = c(0)
        for _ in eager.range(n):
            x = eager.cast(x, eager.float32)
        return x

    with pytest.raises(TypeError, match="^'x' has dtype int32 before the loop, but dtype float32 "
                                        "after one iteration") as info:
        f(c(3))
    line = _line_of(f.python_function, "for _ in eager.range(n)")
    assert f'File "{__file__}", line {line}' in str(info.value)


def test_a_loop_variable_changing_shape_needs_a_shape_invariant():
    def grow(n):
        x = c([1])
        while eager.size(x) < n:
            x = eager.concat([x, x], 0)
        return x

    def grow_relaxed(n):
        x = c([1])
        while eager.size(x) < n:
            eager.autograph.experimental.set_loop_options(
                shape_invariants=[(x, eager.TensorShape([None]))])
            x = eager.concat([x, x], 0)
        return x

    with pytest.raises(ValueError, match=r"^'x' has shape \(1,\) before the loop, but shape "
                                         r"\(2,\) after one iteration. Use eager.autograph."
                                         r"experimental.set_loop_options to set shape "
                                         r"invariants."):
        eager.function(grow)(c(5))
    np.testing.assert_array_equal(eager.function(grow_relaxed)(c(5)).numpy(), [1] * 8)  # TF


def test_a_loop_variable_changing_structure_is_tensorflows_error():
    @eager.function
    def f(n):
        x = (c(1), c(2))
        for _ in eager.range(n):
            x = [c(1), c(2)]
        return x

    with pytest.raises(TypeError, match="^'x' does not have the same nested structure after one "
                                        "iteration."):
        f(c(5))


def test_set_loop_options_maximum_iterations():
    @eager.function
    def f(x):
        i = c(0)
        while i < 100:
            eager.autograph.experimental.set_loop_options(maximum_iterations=5)
            i += 1
        return i

    assert int(f(c(1))) == 5  # TF: 5


def test_a_variable_first_assigned_in_the_loop_is_defined_by_one_iteration():
    @eager.function
    def f(n):
        for i in eager.range(n):
            y = i * 2
        return y

    assert int(f(c(5))) == 8  # TF: 8
    # TF 2.21, zero iterations: InvalidArgumentError "assertion failed: [loop must iterate at
    # least once to initialize y]"
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"assertion failed: \[loop must iterate at least once to "
                             r"initialize y\]"):
        f(c(0))


def test_a_variable_read_before_its_loop_assigns_it_is_tensorflows_error():
    @eager.function
    def f(n):
        for i in eager.range(n):
            y = y + i  # noqa: F821 - read before assigned, on purpose
        return y

    with pytest.raises(ValueError, match="^'y' must be defined before the loop\nNote: AutoGraph "
                                         "tried to define it automatically, but ran into a "
                                         "UnboundLocalError: 'y' is used before assignment"):
        f(c(5))


def test_a_variable_that_is_none_before_the_loop():
    @eager.function
    def f(n):
        y = None
        for i in eager.range(n):
            y = i
        return y

    assert int(f(c(5))) == 4  # TF: 4


def test_gradient_through_a_converted_loop():
    @eager.function
    def cube_by_loop(x):
        y = c(1.0)
        for _ in range(3):
            y = y * x
        return y

    @eager.function
    def grad(x):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = cube_by_loop(x)
        return tape.gradient(y, x)

    assert float(grad(c(2.0))) == 12.0

    @eager.function
    def power(x, n):
        y = c(1.0)
        for _ in range(n):
            y = y * x
        return y

    x = c(2.0)
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = power(x, c(4))
    assert float(y) == 16.0 and float(tape.gradient(y, x)) == 32.0
    assert "While" in _ops(power, x, c(4))
    x = c(2.0)
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = cube_by_loop(x)
    assert float(tape.gradient(y, x)) == 12.0


def test_the_guides_fizzbuzz_traces_each_branch_once_and_prints_per_call(capsys):
    """TensorFlow's "Better performance with tf.function" guide, AutoGraph section, run as
    written with `import eager as tf`; TensorFlow 2.21's output recorded."""
    tf = eager

    @tf.function
    def fizzbuzz(n):
        for i in tf.range(1, n + 1):
            print('Tracing for loop')
            if i % 15 == 0:
                print('Tracing fizzbuzz branch')
                tf.print('fizzbuzz')
            elif i % 3 == 0:
                print('Tracing fizz branch')
                tf.print('fizz')
            elif i % 5 == 0:
                print('Tracing buzz branch')
                tf.print('buzz')
            else:
                print('Tracing default branch')
                tf.print(i)

    fizzbuzz(tf.constant(5))
    fizzbuzz(tf.constant(20))
    out, err = capsys.readouterr()
    assert out.splitlines() == ["Tracing for loop", "Tracing fizzbuzz branch",
                                "Tracing fizz branch", "Tracing buzz branch",
                                "Tracing default branch"]
    assert err.split() == ("1 2 fizz 4 buzz 1 2 fizz 4 buzz fizz 7 8 fizz buzz 11 fizz 13 14 "
                           "fizzbuzz 16 17 fizz 19 buzz").split()


def test_the_guides_sum_even_and_simple_relu():
    """TensorFlow's guides ("Better performance with tf.function", "Introduction to graphs")."""
    @eager.function
    def sum_even(items):
        s = 0
        for c in items:
            if c % 2 > 0:
                continue
            s += c
        return s

    def simple_relu(x):
        if eager.greater(x, 0):
            return x
        else:
            return 0

    tf_simple_relu = eager.function(simple_relu)
    assert int(sum_even(c([10, 12, 15, 20]))) == 42  # TF: 42
    assert int(tf_simple_relu(c(1))) == 1 and int(tf_simple_relu(c(-1))) == 0  # TF: 1, 0
    assert "ag__.if_stmt" in eager.autograph.to_code(simple_relu)


def test_an_iterables_loop_hook_also_runs_eagerly():
    class Steps:
        def __eager_for_loop__(self, loop):
            loop.run_range(0, 6, 2)

    def body():
        s = c(0)
        for v in Steps():
            s += v
        return s

    assert int(eager.autograph.to_graph(body)()) == 6  # eagerly: 0 + 2 + 4
    assert int(eager.function(body)()) == 6
