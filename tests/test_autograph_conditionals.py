"""AutoGraph's `if`, conditional expressions and `and`/`or`/`not`, against TensorFlow 2.21.

Each case ran under `tf.function` in TensorFlow 2.21 (CPU); the values and the errors' wording
are recorded here (TensorFlow's `tf.bool` / `tf.cast` read `eager.bool` / `eager.cast`). A
converted statement's error names the variable and ends with the user's line, as TensorFlow's
"in user code" block does.
"""

import inspect
import sys

import numpy as np
import pytest

import eager

c = eager.constant


def _line_of(function, text):
    """The file line number of the first line of `function` containing `text`."""
    lines, start = inspect.getsourcelines(function)
    return start + next(i for i, line in enumerate(lines) if text in line)


def _ops(function, *args):
    return [op.type for op in function.get_concrete_function(*args).graph.get_operations()]


# -- if / elif / else ----------------------------------------------------------------------------
def test_if_on_a_tensor_becomes_one_cond_and_runs_the_taken_branch():
    @eager.function
    def f(x):
        if x > 0:
            y = x * 2
        else:
            y = -x
        return y

    assert int(f(c(3))) == 6 and int(f(c(-2))) == 2  # TF: 6, 2
    assert f.experimental_get_tracing_count() == 1
    assert _ops(f, c(1)).count("If") == 1


def test_elif_chain_is_nested_conds():
    @eager.function
    def classify(i):
        if i % 15 == 0:
            label = 0
        elif i % 3 == 0:
            label = 1
        elif i % 5 == 0:
            label = 2
        else:
            label = 3
        return label

    got = [int(classify(c(i))) for i in (15, 9, 10, 7)]
    assert got == [0, 1, 2, 3]
    assert classify.experimental_get_tracing_count() == 1


def test_if_on_a_python_value_stays_python():
    traced = []

    @eager.function
    def f(x, training):
        if training:
            traced.append("train")
            x = x * 2.0
        else:
            traced.append("eval")
        return x

    assert float(f(c(1.0), True)) == 2.0 and float(f(c(1.0), False)) == 1.0
    assert traced == ["train", "eval"]  # one branch per trace, as Python runs it
    assert "If" not in _ops(f, c(1.0), True)


def test_branches_trace_main_first_like_tensorflow():
    seen = []

    @eager.function
    def f(x):
        if x > 0:
            seen.append("main")
        else:
            seen.append("else")
        return x

    f(c(1))
    assert seen == ["main", "else"]


def test_python_number_outputs_become_tensors():
    @eager.function
    def f(x):
        if x > 0:
            y = 1
        else:
            y = 2
        return y

    out = f(c(1))
    assert isinstance(out, eager.Tensor) and int(out) == 1 and out.dtype == eager.int32


def test_variable_assigned_in_one_branch_and_used_after_is_tensorflows_error():
    @eager.function
    def main_only(x):
        if x > 0:
            y = x * 2
        return y

    @eager.function
    def else_only(x):
        if x > 0:
            pass
        else:
            y = x
        return y

    with pytest.raises(ValueError, match="^'y' must also be initialized in the else branch") \
            as info:
        main_only(c(1))
    assert f'line {_line_of(main_only.python_function, "if x > 0")}' in str(info.value)
    assert "if x > 0:" in str(info.value) and __file__ in str(info.value)
    with pytest.raises(ValueError, match="^'y' must also be initialized in the main branch"):
        else_only(c(1))


def test_variable_assigned_in_one_branch_but_dead_after_is_fine():
    @eager.function
    def f(x):
        if x > 0:
            y = x * 2
            x = y
        return x

    assert int(f(c(1))) == 2 and int(f(c(-1))) == -1  # TF: 2


def test_python_if_that_skips_an_assignment_leaves_the_variable_unbound():
    @eager.function
    def f(x, flag=False):
        if flag:
            y = x
        return y

    with pytest.raises(UnboundLocalError, match="'y' is used before assignment"):  # TF's words
        f(c(1))


@pytest.mark.parametrize("case,error,message", [
    ("dtype", TypeError, "'y' has dtype int32 in the main branch, but dtype float32 in the else "
                         "branch"),
    ("structure", TypeError, "'y' must have the same nested structure in the main and else "
                             "branches:"),
    ("none", ValueError, "'y' is None at the end of the main branch."),
])
def test_branch_outputs_must_agree(case, error, message):
    main = {"dtype": lambda: c(1), "structure": lambda: (c(1), c(1)), "none": lambda: None}[case]
    orelse = {"dtype": lambda: c(1.0), "structure": lambda: c(1), "none": lambda: c(1)}[case]

    @eager.function
    def f(x):
        if x > 0:
            y = main()
        else:
            y = orelse()
        return y

    with pytest.raises(error, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        f(c(1))


def test_condition_must_be_a_scalar_bool():
    @eager.function
    def f(x):
        if x:
            y = 1
        else:
            y = 2
        return y

    # TF 2.21: "condition of if statement expected to be `tf.bool` scalar, got Tensor(...);
    # to use as boolean Tensor, use `tf.cast`; to check for None, use `is not None`"
    with pytest.raises(ValueError, match=r"condition of if statement expected to be `eager.bool` "
                                         r"scalar, got .*; to use as boolean Tensor, use "
                                         r"`eager.cast`; to check for None, use `is not None`"):
        f(c(1))
    with pytest.raises(ValueError, match=r"expected to be `eager.bool` scalar, got .*shape=\(2,\)"
                                         r".*; to check for None, use `is not None`"):
        f(c([True, False]))
    assert int(f(c([True]))) == 1  # one element: reshaped to a scalar, as TF does


# -- return --------------------------------------------------------------------------------------
def test_return_in_branches():
    @eager.function
    def f(x):
        if x > 0:
            return x
        return -x

    assert int(f(c(-3))) == 3 and int(f(c(4))) == 4  # TF: 3


def test_return_in_one_branch_only_is_tensorflows_error():
    @eager.function
    def f(x):
        if x > 0:
            return x

    with pytest.raises(ValueError, match="^the else branch must also have a return statement."):
        f(c(-3))


def test_early_return_guards_the_rest_of_the_function():
    @eager.function
    def f(x):
        if x > 10:
            return x * 0
        x = x + 1
        if x > 5:
            return x * 10
        return x

    assert [int(f(c(v))) for v in (11, 6, 1)] == [0, 70, 2]


# -- expressions ---------------------------------------------------------------------------------
def test_conditional_expression():
    @eager.function
    def f(x):
        return x if x > 0 else -x

    assert int(f(c(-4))) == 4 and int(f(c(5))) == 5  # TF: 4


def test_and_or_not_on_tensors():
    @eager.function
    def f(x, y):
        return x > 0 and y > 0, x > 0 or y > 0, not x > 0

    got = [bool(v) for v in f(c(1), c(-1))]
    assert got == [False, True, False]  # TF: False, True, False


def test_and_or_on_tensors_are_lazy():
    traced = []

    def right():
        traced.append("right")
        return c(True)

    @eager.function
    def f(x):
        return x > 0 and right()

    assert bool(f(c(1))) and not bool(f(c(-1)))
    assert traced == ["right"]  # traced once, in the cond's branch
    assert "If" in _ops(f, c(1))


def test_and_or_not_on_python_values_keep_python_semantics():
    seen = []

    def side(v):
        seen.append(v)
        return v

    @eager.function
    def f(x):
        return (0 and side(x)), (3 or side(x)), (not 0), (1 and side(2))

    a, b, n, d = f(c(1))
    assert (a, b, n) == (0, 3, True)  # TF: 0, 3, True (as tensors)
    assert int(d) == 2 and seen == [2]


# -- print ---------------------------------------------------------------------------------------
def test_print_stays_python_unless_builtin_functions_is_on(capsys):
    def body(x):
        print("value", x)
        return x

    plain = eager.function(body)
    plain(c(3))
    plain(c(4))
    out = capsys.readouterr().out
    assert out.count("value") == 1  # TF's default: a Python print runs while tracing

    feature = eager.autograph.experimental.Feature.BUILTIN_FUNCTIONS
    printing = eager.function(body, experimental_autograph_options=feature)
    printing(c(3))
    printing(c(4))
    assert capsys.readouterr().out.splitlines() == ["value 3", "value 4"]  # eager.print, each call
    np.testing.assert_equal(printing(c(5)).numpy(), 5)
    assert "value 5" in capsys.readouterr().out
    assert sys.stdout is not None
