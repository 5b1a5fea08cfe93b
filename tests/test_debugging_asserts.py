"""`eager.debugging`'s checks: TensorFlow 2.21's results and wording (recorded from TF),
eagerly (raise at once) and traced (static checks while tracing, `Assert` nodes when the
function runs), and check_numerics' gradient."""

import re

import numpy as np
import pytest

import eager
from eager.errors import InvalidArgumentError

D = eager.debugging
INF, NAN = float("inf"), float("nan")

# TF 2.21: tf.debugging.assert_equal(tf.constant([1, 2, 3]), tf.constant([1, 3, 3])), eagerly.
EAGER_EQUAL = """Condition x == y did not hold.
Indices of first 1 different values:
[[1]]
Corresponding x values:
[2]
Corresponding y values:
[3]
First 3 elements of x:
[1 2 3]
First 3 elements of y:
[1 3 3]"""
EAGER_EQUAL_MSG = """hey
Condition x == y did not hold.
Indices of first 1 different values:
[[1]]
Corresponding x values:
[2]
Corresponding y values:
[3]
First 2 elements of x:
[1 2]
First 2 elements of y:
[1 3]"""
EAGER_GREATER = """Condition x > y did not hold.
First 2 elements of x:
[ 1. -2.]
First 1 elements of y:
[0.]"""
EAGER_NON_NEGATIVE = """
Condition x >= 0 did not hold element-wise:
x (shape=(2,) dtype=float32) = 
['1.0', '-2.0']"""  # noqa: W291 - TF's trailing space


def _message(fn):
    with pytest.raises(InvalidArgumentError) as info:
        fn()
    return info.value.message


def test_eager_wording():
    c = eager.constant
    assert _message(lambda: D.assert_equal(c([1, 2, 3]), c([1, 3, 3]))) == EAGER_EQUAL
    assert _message(lambda: D.assert_equal(c([1, 2, 3]), c([1, 3, 3]), message="hey",
                                           summarize=2)) == EAGER_EQUAL_MSG
    assert _message(lambda: D.assert_greater(c([1., -2.]), 0.)) == EAGER_GREATER
    assert _message(lambda: D.assert_non_negative(c([1., -2.]))) == EAGER_NON_NEGATIVE
    assert "Condition x < y did not hold." in _message(
        lambda: D.assert_less(c([1, 2, 3]), c([2, 2, 4])))
    assert "x and y not equal to tolerance" in _message(
        lambda: D.assert_near(c([1., 2.]), c([1., 2.1])))


def test_passing_checks_return_none():
    c = eager.constant
    assert D.assert_equal(c([1, 2]), c([1, 2])) is None
    assert D.assert_less(c([1, 2]), 3) is None
    assert D.assert_near(c([1., 2.]), c([1., 2. + 1e-7])) is None
    assert D.assert_rank(c([1, 2]), 1) is None
    assert D.assert_shapes([(c([1, 2, 3]), ("N",)), (eager.zeros([2, 3]), ("M", "N"))]) is None
    assert D.assert_type(c([1.]), eager.float32) is None
    for f in (D.assert_positive, D.assert_non_negative):
        assert f(c([1., 2.])) is None


def test_static_checks_wording():
    with pytest.raises(ValueError, match=r"^Tensor  must have rank 2\.  Received rank 1, "
                                         r"shape \(3,\)$"):
        D.assert_rank(eager.constant([1, 2, 3]), 2)
    with pytest.raises(ValueError) as info:
        D.assert_shapes([(eager.constant([1, 2, 3]), ("N",)), (eager.zeros([2, 4]), ("M", "N"))])
    assert str(info.value) == ("Specified by tensor shape=(3,) dtype=int32 dimension 0.  Tensor "
                               "shape=(2, 4) dtype=float32 dimension 1 must have size 3.  "
                               "Received size 4, shape (2, 4)")
    with pytest.raises(TypeError, match=r"^tensor must be of type tf.int32; got tf.float32$"):
        D.assert_type(eager.constant([1.]), eager.int32)
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes: \[3\] vs. \[2\]"):
        D.assert_equal(eager.constant([1, 2, 3]), eager.constant([1, 2]))


def test_check_numerics():
    # `.numpy()`: on a device whose kernels run later (a GPU), the error surfaces at the next
    # synchronization, as every kernel error does there.
    with pytest.raises(InvalidArgumentError, match=r"my msg : Tensor had Inf and NaN values "
                                                   r"\[Op:CheckNumerics\]"):
        D.check_numerics(eager.constant([1., INF, NAN]), "my msg").numpy()
    with pytest.raises(InvalidArgumentError, match="bad : Tensor had Inf values"):
        D.assert_all_finite(eager.constant([1., INF]), "bad").numpy()
    x = eager.constant([1., 2.])
    np.testing.assert_array_equal(D.check_numerics(x, "ok").numpy(), [1., 2.])


def test_check_numerics_gradient():
    x = eager.constant([1., 0.])
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = eager.reduce_sum(D.check_numerics(x, "fwd") * 3.)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3., 3.])
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = eager.reduce_sum(eager.sqrt(D.check_numerics(x, "fwd")))
    with pytest.raises(InvalidArgumentError, match=r"Not a number \(NaN\) or infinity \(Inf\) "
                                                   r"values detected in gradient. fwd"):
        tape.gradient(y, x).numpy()


def test_traced_asserts_run_at_call_time():
    @eager.function
    def f(x, y):
        D.assert_equal(x, y)
        return x + 1

    np.testing.assert_array_equal(f(eager.constant([1, 2]), eager.constant([1, 2])).numpy(),
                                  [2, 3])
    # TF 2.21's graph wording.
    with pytest.raises(InvalidArgumentError, match=re_escape(
            "assertion failed: [Condition x == y did not hold element-wise:] [x (x:0) = ] "
            "[1 2 3] [y (y:0) = ] [1 3 3]")):
        f(eager.constant([1, 2, 3]), eager.constant([1, 3, 3]))

    @eager.function
    def k(x):
        D.assert_all_finite(x, "in k")
        D.assert_non_negative(x)
        return x

    with pytest.raises(InvalidArgumentError, match=re_escape(
            "assertion failed: [] [Condition x >= 0 did not hold element-wise:] [x (x:0) = ] "
            "[1 -1]")):
        k(eager.constant([1., -1.]))
    with pytest.raises(InvalidArgumentError, match="in k : Tensor had Inf values"):
        k(eager.constant([1., INF]))

    @eager.function
    def near(x, y):
        D.assert_near(x, y)
        return x

    near(eager.constant([1.]), eager.constant([1.]))
    with pytest.raises(InvalidArgumentError, match="x and y not equal to tolerance"):
        near(eager.constant([1.]), eager.constant([2.]))


def re_escape(text):
    return re.escape(text)


def test_traced_static_checks_raise_while_tracing():
    @eager.function
    def m(x):
        return D.assert_shapes([(x, ("N", 2))])

    with pytest.raises(ValueError, match=re_escape(
            "Specified explicitly.  Tensor x:0 dimension 1 must have size 2.  Received size 3, "
            "shape (3, 3)")):
        m(eager.zeros([3, 3]))

    @eager.function(input_signature=[eager.TensorSpec([None])])
    def n(x):
        D.assert_rank(x, 2)
        return x

    with pytest.raises(ValueError, match=re_escape(
            "Tensor x:0 must have rank 2.  Received rank 1, shape (None,)")):
        n(eager.zeros([3]))


def test_traced_dynamic_shapes_checked_at_run_time():
    @eager.function(input_signature=[eager.TensorSpec([None]), eager.TensorSpec([None])])
    def f(a, b):
        D.assert_shapes([(a, ("N",)), (b, ("N",))])
        return a + b

    np.testing.assert_array_equal(f(eager.ones([2]), eager.ones([2])).numpy(), [2., 2.])
    # On the CPU the check runs before the add (program order); on a device whose kernels run
    # later, the add's own shape error may be the first one raised, as in TensorFlow.
    with eager.device("CPU:0"), pytest.raises(InvalidArgumentError,
                                              match="dimension 0 must have the specified size"):
        f(eager.ones([2]), eager.ones([3]))


def test_enable_check_numerics_exists_and_assert():
    assert callable(D.enable_check_numerics) and callable(D.disable_check_numerics)
    with pytest.raises(InvalidArgumentError, match="Expected 'eager.Tensor\\(False"):
        D.Assert(eager.constant(False), ["bad", eager.constant([1, 2])])
    assert D.Assert(eager.constant(True), ["fine"]) is None
    assert D.is_numeric_tensor(eager.constant(1.)) and not D.is_numeric_tensor(1.)
