"""Tensors: conversion rules, constant, conversion functions, every operator, Python and numpy
protocols, and the EagerTensor operator fast path (checked against full dispatch)."""

import copy
import operator
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import eager
from eager.core import context
from eager import errors
from eager.devices import registry
from eager.tensor import EagerTensor, TensorShape
from eager import tensor as tensor_module
from strategies import NUMERIC_DTYPES, arrays, broadcastable_pair, shapes

T = eager.constant


def same(t, expected):
    """`t` is an eager tensor equal to `expected` in dtype, shape and (nan-aware) values."""
    expected = np.asarray(expected)
    assert isinstance(t, EagerTensor), type(t)
    assert t.dtype == expected.dtype, (t.dtype, expected.dtype)
    assert t.shape == expected.shape, (t.shape, expected.shape)
    np.testing.assert_array_equal(np.asarray(t.numpy()), expected)


# -----------------------------------------------------------------------------------------------
# Conversion rules
# -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value,dtype", [
    (1.5, eager.float32), (1, eager.int32), (-2 ** 31, eager.int32), (2 ** 31 - 1, eager.int32),
    (2 ** 31, eager.int64), (-2 ** 31 - 1, eager.int64), (2 ** 63 - 1, eager.int64),
    (True, eager.bool), (1 + 2j, eager.complex128), ([1, 2], eager.int32),
    ([[1.0, 2], [3, 4]], eager.float32), ([1, 2 ** 40], eager.int64), ([True, False], eager.bool),
    ([1j, 2], eager.complex128), ([], eager.float32), ([[]], eager.float32),
    ((1, 2), eager.int32), ([np.float64(1), np.float64(2)], eager.float64),
    # TensorFlow 2.21 (verified): numpy integers inside a list count as Python ints; a numpy
    # float sets the precision when it comes first.
    ([np.int8(1)], eager.int32), ([np.int64(1), 2], eager.int32),
    ([np.int64(2 ** 40)], eager.int64),
    ([np.float32(1), 2.0], eager.float32), ([2.0, np.float64(1)], eager.float32),
    ([np.float16(1), np.float32(2)], eager.float16), ([[1.0], np.array([1.5])], eager.float32),
    ([np.array([1, 2]), [3, 4]], eager.int32), ([1, True], eager.int32),
    ([1.5, True], eager.float32),
    (range(3), eager.int32), ([np.complex64(1), 2], eager.complex128),
])
def test_python_values_convert_with_tf_dtypes(value, dtype):
    for convert in (eager.constant, eager.convert_to_tensor):
        t = convert(value)
        assert t.dtype is dtype, (value, t.dtype)
        same(t, np.array(value, dtype.dtype))


def test_an_empty_range_is_a_list_to_constant_and_a_range_to_convert_to_tensor():
    """TensorFlow 2.21: `constant` reads a range as a list (empty: float32), `convert_to_tensor`
    runs `tf.range` on it (its registered conversion), so the bounds give the dtype."""
    same(eager.constant(range(0)), np.zeros([0], np.float32))
    same(eager.convert_to_tensor(range(0)), np.zeros([0], np.int32))
    same(eager.convert_to_tensor(range(2 ** 40, 2 ** 40)), np.zeros([0], np.int64))


@pytest.mark.parametrize("value", [2 ** 63, -2 ** 63 - 1, 2 ** 100, [1, 2 ** 64]])
def test_ints_beyond_int64_are_value_errors(value):
    with pytest.raises(ValueError):
        eager.constant(value)
    with pytest.raises(ValueError):
        eager.convert_to_tensor(value)


@pytest.mark.parametrize("value", [[[1], [2, 3]], [1, [2]], [[1, 2], 3]])
def test_ragged_sequences_are_value_errors(value):
    with pytest.raises(ValueError, match="non-rectangular"):
        eager.constant(value)


@pytest.mark.parametrize("value,exc", [(None, ValueError), (object(), ValueError),
                                       (["a", 1], ValueError), ([b"a", ["b"]], ValueError),
                                       ({1: 2}, ValueError)])
def test_unconvertible_values(value, exc):
    with pytest.raises(exc):
        eager.constant(value)
    with pytest.raises(exc):
        eager.convert_to_tensor(value)


@given(x=st.sampled_from(NUMERIC_DTYPES + [np.bool_]).flatmap(lambda d: arrays(d, shapes())))
def test_numpy_values_keep_their_dtype(x):
    for convert in (eager.constant, eager.convert_to_tensor):
        t = convert(x)
        same(t, x)
    if x.ndim == 0:
        same(eager.constant(x[()]), x)  # numpy scalars too


def test_numpy_object_arrays_of_non_strings_are_rejected():
    # TensorFlow 2.21: "Failed to convert a NumPy array to a Tensor (Unsupported object type
    # int)." (string arrays convert: tests/test_strings.py)
    with pytest.raises(ValueError, match=r"Unsupported object type object"):
        eager.constant(np.array([object()], dtype=object))
    with pytest.raises(TypeError, match="dtype int32"):
        eager.constant(np.array(["a"]), eager.int32)


@pytest.mark.parametrize("value,dtype,expected", [
    (1, eager.float32, np.float32(1)), (1, eager.float16, np.float16(1)),
    (1, eager.int8, np.int8(1)), (1, eager.complex64, np.complex64(1)),
    (1.5, eager.float64, np.float64(1.5)), (1.5, eager.complex128, np.complex128(1.5)),
    ([1, 2], eager.float64, np.array([1, 2], np.float64)),
    ([1, 2], "uint8", np.array([1, 2], np.uint8)),
    (2 ** 70, eager.float32, np.float32(2 ** 70)),
    (2 ** 64 - 1, eager.uint64, np.uint64(2 ** 64 - 1)),
    (np.array([1, 2], np.int64), eager.float32, np.array([1, 2], np.float32)),
    (True, eager.bool, np.bool_(True)),
    # TensorFlow 2.21 (verified): a scalar True converts to integer and float dtypes, and an
    # empty list to any dtype.
    (True, eager.int32, np.int32(1)), (True, eager.float16, np.float16(1)),
    ([], eager.int64, np.zeros([0], np.int64)), ([[], []], eager.bool, np.zeros([2, 0], bool)),
    ([[]], eager.complex64, np.zeros([1, 0], np.complex64)),
])
def test_dtype_argument_compatible_values(value, dtype, expected):
    same(eager.constant(value, dtype=dtype), expected)
    same(eager.convert_to_tensor(value, dtype=dtype), expected)


@pytest.mark.parametrize("value,dtype", [
    (1.5, eager.int32), ([1.0, 2.5], eager.int64), (1 + 2j, eager.float32),
    ([True, False], eager.int8), (True, eager.complex64), (1, eager.bool), (1.0, eager.bool),
    (np.array([1.5]), eager.int32),
    (np.array([1j]), eager.float64),
])
def test_dtype_argument_incompatible_values_are_type_errors(value, dtype):
    with pytest.raises(TypeError):
        eager.constant(value, dtype=dtype)
    with pytest.raises(TypeError):
        eager.convert_to_tensor(value, dtype=dtype)


@pytest.mark.parametrize("value,dtype", [(300, eager.int8), (-1, eager.uint8),
                                         ([1, 128], eager.int8), (2 ** 31, eager.int32),
                                         (2 ** 70, eager.int64)])
def test_out_of_range_ints_for_the_dtype_are_value_errors(value, dtype):
    with pytest.raises(ValueError, match="range"):
        eager.constant(value, dtype=dtype)


def test_constant_with_shape():
    same(eager.constant(7, shape=[2, 3]), np.full((2, 3), 7, np.int32))
    same(eager.constant([1.5], shape=(2, 2)), np.full((2, 2), 1.5, np.float32))
    same(eager.constant([1, 2, 3, 4], shape=[2, 2]), np.array([[1, 2], [3, 4]], np.int32))
    same(eager.constant(np.arange(6.0), shape=TensorShape([3, 2])),
         np.arange(6.0).reshape(3, 2))
    same(eager.constant([[1, 2]], shape=[2]), np.array([1, 2], np.int32))
    same(eager.constant(1.0, dtype=eager.float64, shape=[]), np.float64(1.0))
    same(eager.constant(0, shape=[0, 2]), np.zeros((0, 2), np.int32))
    with pytest.raises(TypeError, match=r"\(3,\).*\(2, 2\)"):
        eager.constant([1, 2, 3], shape=[2, 2])
    with pytest.raises(TypeError):
        eager.constant([1, 2], shape=[None])


def test_sequence_conversion_errors_follow_tensorflow():
    # Verified against TensorFlow 2.21.
    for value in ([True, 1], [True, 1.5], [[True], [1]], [1, 2j]):  # mixed types
        with pytest.raises(ValueError, match="mixed types"):
            T(value)
    for value in ([1, 2 ** 70], [2 ** 63], [1, 2 ** 64 - 1]):
        with pytest.raises(ValueError, match="out-of-range integer"):
            T(value)
    same(T([2 ** 70], dtype=eager.float64), np.array([2.0 ** 70]))
    for value in (1e40, [1e40, 1.0], 1e300):  # out of float32's range when float32 is inferred
        with pytest.raises(ValueError, match="float32"):
            T(value)
    same(T(1e40, dtype=eager.float32), np.float32(np.inf))
    same(T([np.float64(1e40)]), np.array([1e40]))
    # tensors inside a list must share a dtype, which the other elements take
    with pytest.raises(errors.InvalidArgumentError, match="Pack"):
        eager.convert_to_tensor([T(1), T(2.0)])
    same(eager.convert_to_tensor([1, T(1.5)]), np.array([1, 1.5], np.float32))
    same(eager.convert_to_tensor([T(1.0), np.float64(2)]), np.array([1, 2], np.float32))
    with pytest.raises(TypeError):
        eager.convert_to_tensor([T(1), 2.5])


def test_constant_of_a_tensor():
    t = T([1, 2])
    same(eager.constant(t), np.array([1, 2], np.int32))
    same(eager.constant(t, dtype=eager.int32), np.array([1, 2], np.int32))
    same(eager.constant(t, shape=[2, 1]), np.array([[1], [2]], np.int32))
    with pytest.raises(TypeError):  # TensorFlow 2.21 (verified): constant never casts a tensor
        eager.constant(t, dtype=eager.float32)


def test_convert_to_tensor_of_a_tensor():
    t = T([1.0, 2.0])
    assert eager.convert_to_tensor(t) is t
    assert eager.convert_to_tensor(t, dtype=eager.float32) is t
    assert eager.convert_to_tensor(t, dtype="float32") is t
    with pytest.raises(ValueError, match="int32.*float32|float32.*int32"):
        eager.convert_to_tensor(t, dtype=eager.int32)
    with pytest.raises(ValueError):
        eager.convert_to_tensor(t, dtype=eager.float64)


def test_convert_to_tensor_dtype_hint():
    assert eager.convert_to_tensor(1, dtype_hint=eager.float32).dtype is eager.float32
    assert eager.convert_to_tensor([1, 2], dtype_hint="int64").dtype is eager.int64
    # An incompatible hint is dropped silently (TF).
    assert eager.convert_to_tensor(1.5, dtype_hint=eager.int32).dtype is eager.float32
    assert eager.convert_to_tensor(T([1]), dtype_hint=eager.float32).dtype is eager.int32


def test_tensors_are_immutable_copies_of_their_source():
    source = np.array([1.0, 2.0], np.float32)
    for make in (eager.constant, eager.convert_to_tensor):
        t = make(source)
        source[0] = 99.0
        assert t.numpy()[0] == 1.0
        source[0] = 1.0
    values = [1, 2]
    t = T(values)
    values[0] = 5
    assert t.numpy()[0] == 1
    with pytest.raises(ValueError):
        t.numpy()[0] = 3
    with pytest.raises(ValueError):
        np.asarray(t)[0] = 3
    assert t.numpy()[0] == 1
    assert eager.is_tensor(t) and not eager.is_tensor(source)


# -----------------------------------------------------------------------------------------------
# register_tensor_conversion_function
# -----------------------------------------------------------------------------------------------

def test_conversion_function_is_used_by_convert_and_ops():
    class Meters:
        def __init__(self, v):
            self.v = v

    calls = []

    def convert(value, dtype=None, name=None, as_ref=False):
        calls.append(dtype)
        return eager.constant(value.v, dtype=dtype or eager.float32)

    eager.register_tensor_conversion_function(Meters, convert)
    same(eager.convert_to_tensor(Meters(2.0)), np.float32(2.0))
    same(eager.convert_to_tensor(Meters(2.0), dtype=eager.float64), np.float64(2.0))
    assert calls == [None, eager.float64]
    # In ops, a converted object is a tensor: a Python scalar adopts its dtype.
    same(eager.add(1, Meters(2.0)), np.float32(3.0))
    same(eager.multiply(T([2.0]), Meters(3.0)), np.array([6.0], np.float32))

    class SubMeters(Meters):
        pass

    same(eager.convert_to_tensor(SubMeters(4.0)), np.float32(4.0))


def test_conversion_functions_run_in_priority_order_with_notimplemented_fallthrough():
    class Thing:
        pass

    order = []

    def make(tag, result):
        def fn(value, dtype=None, name=None, as_ref=False):
            order.append(tag)
            return result
        return fn

    eager.register_tensor_conversion_function(Thing, make("late", T(3)), priority=200)
    eager.register_tensor_conversion_function(Thing, make("decline", NotImplemented),
                                              priority=10)
    eager.register_tensor_conversion_function(Thing, make("early", T(2)), priority=50)
    same(eager.convert_to_tensor(Thing()), np.int32(2))
    assert order == ["decline", "early"]

    class Other:
        pass

    eager.register_tensor_conversion_function(Other, make("no", NotImplemented))
    with pytest.raises(ValueError):  # every function declined: not convertible
        eager.convert_to_tensor(Other())


@pytest.mark.parametrize("base", [int, float, bool, np.float32, np.int64, np.ndarray, np.generic,
                                  (list, int)])
def test_conversion_functions_cannot_be_registered_for_numeric_types(base):
    with pytest.raises(TypeError):
        eager.register_tensor_conversion_function(base, lambda v, **k: T(1))


def test_conversion_function_registration_rejects_subclasses_of_numbers_and_non_types():
    class MyInt(int):
        pass

    class MyFloat(float):
        pass

    for base in (MyInt, MyFloat):
        with pytest.raises(TypeError):
            eager.register_tensor_conversion_function(base, lambda v, **k: T(1))
    with pytest.raises(TypeError):
        eager.register_tensor_conversion_function("list", lambda v, **k: T(1))


def test_conversion_function_results_are_checked():
    class Wrong:
        pass

    class NotATensor:
        pass

    eager.register_tensor_conversion_function(
        Wrong, lambda value, dtype=None, name=None, as_ref=False: T(1.0))
    eager.register_tensor_conversion_function(
        NotATensor, lambda value, dtype=None, name=None, as_ref=False: 1.0)
    with pytest.raises(RuntimeError, match="int32"):
        eager.convert_to_tensor(Wrong(), dtype=eager.int32)
    same(eager.convert_to_tensor(Wrong()), np.float32(1.0))
    with pytest.raises(RuntimeError):
        eager.convert_to_tensor(NotATensor())


# -----------------------------------------------------------------------------------------------
# Operators
# -----------------------------------------------------------------------------------------------

BINARY_OPERATORS = [
    (operator.add, np.add, eager.add), (operator.sub, np.subtract, eager.subtract),
    (operator.mul, np.multiply, eager.multiply),
]


@pytest.mark.parametrize("op,np_op,fn", BINARY_OPERATORS)
@given(data=st.data())
def test_arithmetic_operators_match_numpy(op, np_op, fn, data):
    dtype = data.draw(st.sampled_from(NUMERIC_DTYPES))
    a, b = data.draw(broadcastable_pair(dtype))
    same(op(T(a), T(b)), np_op(a, b))
    same(fn(T(a), T(b)), np_op(a, b))


def test_every_operator_with_tensors():
    a, b = T([6.0, -7.0]), T([4.0, 2.0])
    same(a + b, np.array([10.0, -5.0], np.float32))
    same(a - b, np.array([2.0, -9.0], np.float32))
    same(a * b, np.array([24.0, -14.0], np.float32))
    same(a / b, np.array([1.5, -3.5], np.float32))
    same(a // b, np.array([1.0, -4.0], np.float32))
    same(a % b, np.array([2.0, 1.0], np.float32))
    same(b ** T([0.5, 3.0]), np.array([2.0, 8.0], np.float32))
    same(-a, np.array([-6.0, 7.0], np.float32))
    assert +a is a
    same(abs(a), np.array([6.0, 7.0], np.float32))
    same(a < b, np.array([False, True]))
    same(a <= b, np.array([False, True]))
    same(a > b, np.array([True, False]))
    same(a >= T([6.0, 0.0]), np.array([True, False]))
    same(a == T([6.0, 0.0]), np.array([True, False]))
    same(a != T([6.0, 0.0]), np.array([False, True]))
    m = T([[1.0, 2.0], [3.0, 4.0]])
    same(m @ T([[1.0], [1.0]]), np.array([[3.0], [7.0]], np.float32))
    same(abs(T([3 + 4j])), np.array([5.0]))


def test_integer_operators():
    a, b = T([7, -7]), T([2, 2])
    same(a // b, np.array([3, -4], np.int32))
    same(a % b, np.array([1, 1], np.int32))
    same(a / b, np.array([3.5, -3.5], np.float64))  # TF: int32 truediv gives float64
    same(a ** 2, np.array([49, 49], np.int32))
    same(-a, np.array([-7, 7], np.int32))
    same(abs(a), np.array([7, 7], np.int32))
    same(T(np.array([6], np.int8)) & T(np.array([3], np.int8)), np.array([2], np.int8))
    same(T([6]) | 3, np.array([7], np.int32))
    same(T([6]) ^ 3, np.array([5], np.int32))
    same(3 & T([6]), np.array([2], np.int32))
    same(~T([5]), np.array([-6], np.int32))
    same(~T(np.array([0], np.uint8)), np.array([255], np.uint8))


def test_bool_operators():
    a, b = T([True, True, False]), T([True, False, False])
    same(a & b, np.array([True, False, False]))
    same(a | b, np.array([True, True, False]))
    same(a ^ b, np.array([False, True, False]))
    same(~a, np.array([False, False, True]))
    same(True & b, np.array([True, False, False]))
    same(False | b, np.array([True, False, False]))
    same(a ^ True, np.array([False, False, True]))


def test_bitwise_and_logical_operators_reject_other_dtypes():
    # As TF 2.21 (verified): logical for bools, bitwise for everything else, whose type list
    # has no float or complex (InvalidArgumentError).
    with pytest.raises(errors.InvalidArgumentError, match="BitwiseAnd.*float32"):
        T([1.5]) & T([2.5])
    with pytest.raises(errors.InvalidArgumentError, match="BitwiseOr"):
        T([1.5]) | T([2.5])
    with pytest.raises(errors.InvalidArgumentError, match="BitwiseXor"):
        T([1.5]) ^ T([2.5])
    with pytest.raises(errors.InvalidArgumentError, match="BitwiseXor.*complex128"):
        T([1j]) ^ 1j
    with pytest.raises(errors.InvalidArgumentError, match="Invert"):
        ~T([1.5])
    with pytest.raises(TypeError):
        T([True]) & 1
    with pytest.raises(errors.InvalidArgumentError):
        T([True]) & T([1])


@pytest.mark.parametrize("scalar", [2, 2.5])
def test_reflected_operators_with_python_scalars(scalar):
    x = T([1.0, 4.0])
    n = np.array([1.0, 4.0], np.float32)
    same(scalar + x, np.float32(scalar) + n)
    same(scalar - x, np.float32(scalar) - n)
    same(scalar * x, np.float32(scalar) * n)
    same(scalar / x, np.float32(scalar) / n)
    same(scalar // x, np.floor(np.float32(scalar) / n))
    same(scalar % x, np.mod(np.float32(scalar), n))
    same(scalar ** x, np.power(np.float32(scalar), n))
    same(x ** scalar, np.power(n, np.float32(scalar)))
    same(scalar < x, np.float32(scalar) < n)
    same(scalar >= x, np.float32(scalar) >= n)
    same(scalar == x, np.float32(scalar) == n)
    same(scalar != x, np.float32(scalar) != n)


def test_reflected_operators_with_python_ints_on_int_tensors():
    x = T([3, 4])
    same(10 - x, np.array([7, 6], np.int32))
    same(10 // x, np.array([3, 2], np.int32))
    same(10 % x, np.array([1, 2], np.int32))
    same(2 ** x, np.array([8, 16], np.int32))
    same(12 / x, np.array([4.0, 3.0], np.float64))


@pytest.mark.parametrize("np_scalar", [np.float32(2), np.float64(2), np.int32(2)])
def test_numpy_scalars_on_the_left_give_eager_tensors(np_scalar):
    x = T([1.0, 4.0])
    for result, expected in [(np_scalar * x, [2.0, 8.0]), (np_scalar + x, [3.0, 6.0]),
                             (np_scalar - x, [1.0, -2.0]), (np_scalar / x, [2.0, 0.5])]:
        same(result, np.array(expected, np.float32))
    same(np_scalar < x, np.array([False, True]))


def test_numpy_arrays_on_either_side():
    x = T([1.0, 4.0])
    arr = np.array([2.0, 2.0], np.float32)
    for result, expected in [(arr + x, [3.0, 6.0]), (x + arr, [3.0, 6.0]),
                             (arr * x, [2.0, 8.0]), (x - arr, [-1.0, 2.0]),
                             (arr - x, [1.0, -2.0]), (arr / x, [2.0, 0.5]),
                             (x / arr, [0.5, 2.0])]:
        same(result, np.array(expected, np.float32))
    same(arr < x, np.array([False, True]))
    m = np.eye(2, dtype=np.float32)
    same(m @ T([[1.0], [2.0]]), np.array([[1.0], [2.0]], np.float32))
    same(T([[1.0, 2.0]]) @ m, np.array([[1.0, 2.0]], np.float32))
    # A float64 numpy array adopts the tensor's dtype (as a Python float would).
    same(x + np.array([0.5, 0.5]), np.array([1.5, 4.5], np.float32))


def test_python_scalars_adopt_the_tensors_dtype():
    same(T(np.array([1.0], np.float16)) + 1.5, np.array([2.5], np.float16))
    same(1.5 * T(np.array([2.0], np.float64)), np.array([3.0], np.float64))
    same(T(np.array([1], np.int8)) + 1, np.array([2], np.int8))
    same(T(np.array([1], np.uint8)) * 200, np.array([200], np.uint8))
    same(T(np.array([1j], np.complex64)) + 1, np.array([1 + 1j], np.complex64))
    same(T([1.0]) + 2 ** 70, np.array([np.float32(2 ** 70) + 1], np.float32))
    # TensorFlow 2.21 (verified): `+` converts the right operand with the tensor's dtype only as
    # a hint, so a float for an int tensor reaches AddV2 as float32 (InvalidArgumentError); the
    # other operators, and every reflected one, convert it strictly (TypeError).
    with pytest.raises(errors.InvalidArgumentError, match=r"AddV2.*int32.*float32"):
        T([1]) + 1.5
    with pytest.raises(TypeError):
        T([1]) * 1.5
    with pytest.raises(TypeError):
        1.5 + T([1])
    with pytest.raises(TypeError):
        1.5 - T(np.array([1], np.int64))
    with pytest.raises(ValueError):
        T(np.array([1], np.int8)) + 300
    with pytest.raises(ValueError):
        T(np.array([1], np.uint8)) - (-1)
    # TensorFlow 2.21 (verified): a Python bool is a number for a numeric tensor.
    same(T([1.0]) + True, np.array([2.0], np.float32))
    same(T([1, 2]) + True, np.array([2, 3], np.int32))
    same(T([1]) & True, np.array([1], np.int32))


def test_operator_errors():
    with pytest.raises(errors.InvalidArgumentError, match="AddV2"):
        T([1.0]) + T([1])
    with pytest.raises(errors.InvalidArgumentError, match=r"Incompatible shapes: \[3\] vs\. \[4\]"):
        T([1, 2, 3]) * T([1, 2, 3, 4])
    with pytest.raises(errors.InvalidArgumentError, match="string"):
        T([1.0]) + "abc"  # TF 2.21: "abc" converts by itself; AddV2 refuses the mix
    with pytest.raises((TypeError, ValueError)):
        T([1.0]) - None
    with pytest.raises((TypeError, ValueError)):
        object() * T([1.0])


def test_equality_is_elementwise_with_tf2_special_cases():
    x = T([1.0, 2.0, 3.0])
    same(x == x, np.array([True, True, True]))
    same(x == 2.0, np.array([False, True, False]))
    same(x != 2.0, np.array([True, False, True]))
    # None compares unequal: Python bools. TensorFlow 2.21 (verified): a value that cannot take
    # the tensor's dtype raises, as for any other op.
    assert (x == None) is False  # noqa: E711
    assert (x != None) is True  # noqa: E711
    with pytest.raises(TypeError):
        x == "abc"  # noqa: B015
    with pytest.raises(TypeError):
        T([1, 2]) == 1.5  # noqa: B015
    with pytest.raises(TypeError):
        T([1, 2]) != 1.5  # noqa: B015
    with pytest.raises(ValueError):
        x != object()  # noqa: B015
    # Shapes that do not broadcast: a scalar False / True, not an error.
    same(x == T([1.0, 2.0]), np.bool_(False))
    same(x != T([1.0, 2.0]), np.bool_(True))
    # Different dtypes are an error, as in TF.
    with pytest.raises(errors.InvalidArgumentError):
        x == T([1, 2, 3])  # noqa: B015


def test_tensors_are_unhashable_and_ref_is_a_key():
    x, y = T([1.0]), T([1.0])
    with pytest.raises(TypeError, match="ref"):
        hash(x)
    with pytest.raises(TypeError):
        {x: 1}  # noqa: B018
    table = {x.ref(): "x", y.ref(): "y"}
    assert table[x.ref()] == "x" and table[y.ref()] == "y"
    assert x.ref() == x.ref() and x.ref() != y.ref()
    assert x.ref().deref() is x
    assert x.experimental_ref() == x.ref()
    assert x.ref() in {x.ref()} and y.ref() not in {x.ref()}


# -----------------------------------------------------------------------------------------------
# numpy, DLPack and Python protocols
# -----------------------------------------------------------------------------------------------

def test_numpy_and_array_protocol():
    t = T([[1, 2], [3, 4]])
    n = t.numpy()
    assert isinstance(n, np.ndarray) and n.dtype == np.int32 and not n.flags.writeable
    np.testing.assert_array_equal(n, [[1, 2], [3, 4]])
    a = np.asarray(t)
    assert a.dtype == np.int32 and not a.flags.writeable
    np.testing.assert_array_equal(a, n)
    f = np.asarray(t, dtype=np.float64)
    assert f.dtype == np.float64 and f[1, 1] == 4.0
    c = np.array(t)  # a copy: writeable, independent of the tensor
    c[0, 0] = 100
    assert t.numpy()[0, 0] == 1
    assert np.sum(t) == 10 and np.add(t, 1).dtype == np.int32


def test_numpy_of_a_scalar_is_a_numpy_scalar():
    for value, np_type in [(1.5, np.float32), (3, np.int32), (True, np.bool_),
                           (1j, np.complex128)]:
        n = T(value).numpy()
        assert isinstance(n, np_type) and isinstance(n, np.generic)
        assert n == value


@given(x=st.sampled_from(NUMERIC_DTYPES + [np.bool_]).flatmap(lambda d: arrays(d, shapes())))
def test_dlpack_round_trip(x):
    with eager.device("CPU:0"):  # numpy imports host memory only (a GPU tensor says kDLCUDA)
        t = T(x)
    assert t.__dlpack_device__() == (1, 0)  # kDLCPU, device 0
    back = np.from_dlpack(t)
    assert back.dtype == x.dtype and back.shape == x.shape
    np.testing.assert_array_equal(back, x)


def test_len_iter_and_python_scalars():
    t = T([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(isinstance(r, eager.Tensor) for r in rows)
    same(rows[2], np.array([5, 6], np.int32))
    assert [int(v) for v in T([7, 8])] == [7, 8]
    with pytest.raises(TypeError):
        len(T(1))
    with pytest.raises(TypeError):
        iter(T(1.0)).__next__()
    assert len(T(np.zeros((0, 2)))) == 0 and list(T(np.zeros((0, 2)))) == []
    assert bool(T(True)) is True and bool(T(0.0)) is False
    assert float(T(2.5)) == 2.5 and isinstance(float(T(2)), float)
    assert int(T(2.7)) == 2 and int(T(-2.7)) == -2
    assert complex(T(1 + 2j)) == 1 + 2j
    with pytest.raises(ValueError):
        bool(T([True, False]))


CONVERSION_DTYPES = NUMERIC_DTYPES + [np.uint16, np.uint32, np.uint64, np.bool_]


@given(dtype=st.sampled_from(CONVERSION_DTYPES),
       shape=shapes(min_dims=1).filter(lambda s: 0 in s))
def test_bool_of_an_empty_tensor_is_false(dtype, shape):
    # Verified against TF 2.21: bool(tf.constant([])) is False (TF defers to numpy 1.x, which
    # allowed it; numpy 2 raises, so eager checks the size itself).
    assert bool(T(np.zeros(shape, dtype))) is False


@given(dtype=st.sampled_from(CONVERSION_DTYPES), rank=st.integers(0, 3), data=st.data())
def test_bool_of_one_element_is_its_truth_and_of_more_an_error(dtype, rank, data):
    x = data.draw(arrays(dtype, (1,) * rank))
    assert bool(T(x)) is bool(x.reshape(()).item())
    with pytest.raises(ValueError, match="ambiguous"):  # verified against TF 2.21
        bool(T(np.zeros((2,) + (1,) * rank, dtype)))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@given(re=st.floats(-1e6, 1e6, width=32), im=st.floats(-1e6, 1e6, width=32))
def test_float_and_int_of_a_complex_scalar_are_its_real_part(dtype, re, im):
    # Verified against TF 2.21: float(tf.constant(1+2j)) == 1.0 and int(tf.constant(3.7+2j))
    # == 3, with numpy's ComplexWarning.
    t = T(np.array(complex(re, im), dtype))
    real = np.array(complex(re, im), dtype).real
    with pytest.warns(np.exceptions.ComplexWarning, match="imaginary part"):
        f = float(t)
    assert type(f) is float and f == float(real)
    with pytest.warns(np.exceptions.ComplexWarning, match="imaginary part"):
        i = int(t)
    assert type(i) is int and i == int(real)
    assert complex(t) == complex(np.array(complex(re, im), dtype))


def test_python_scalar_conversions_of_several_elements_fail_and_real_ones_do_not_warn():
    # Verified against TF 2.21: only a single-element rank-0 value converts (TypeError).
    for t in (T([1 + 2j]), T([[2.5]]), T([]), T([1, 2])):
        for convert in (float, int, complex):
            with pytest.raises(TypeError):
                convert(t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(T(2.5)) == 2.5 and int(T(np.float16(-3.5))) == -3
        assert float(T(True)) == 1.0 and int(T(np.uint64(2 ** 63))) == 2 ** 63


def test_index_only_for_integer_scalars():
    assert operator.index(T(3)) == 3
    assert operator.index(T(np.int64(2 ** 40))) == 2 ** 40
    assert [10, 20, 30][T(1)] == 20
    assert list(range(10))[T(1):T(3)] == [1, 2]
    for bad in (T(1.0), T(True), T([1]), T([[1]])):
        with pytest.raises(TypeError):
            operator.index(bad)


def test_repr_and_str():
    # TensorFlow's repr (goldens from TF 2.21: `<tf.Tensor: shape=(2,), dtype=float32,
    # numpy=array([1., 2.], dtype=float32)>`), with eager's name and, off the host, the device.
    device = registry.default_device().name  # where unscoped tensors live: GPU:0 if any
    where = "" if device == "CPU:0" else f", device={device}"
    assert repr(T([1.0, 2.0])) == (f"<eager.Tensor: shape=(2,), dtype=float32{where}, "
                                   "numpy=array([1., 2.], dtype=float32)>")
    assert repr(T(3)) == f"<eager.Tensor: shape=(), dtype=int32{where}, numpy=3>"
    assert repr(T(1.5)) == f"<eager.Tensor: shape=(), dtype=float32{where}, numpy=1.5>"
    assert repr(T([[1, 2], [3, 4]])) == (
        f"<eager.Tensor: shape=(2, 2), dtype=int32{where}, numpy=\n"
        "array([[1, 2],\n       [3, 4]], dtype=int32)>")
    with eager.device("CPU:0"):
        assert repr(T(True)) == "<eager.Tensor: shape=(), dtype=bool, numpy=True>"
    assert str(T([1.0, 2.0])) == "eager.Tensor([1. 2.], shape=(2,), dtype=float32)"
    assert str(T(True)) == "eager.Tensor(True, shape=(), dtype=bool)"
    assert f"{T(2.5):.2f}" == "2.50"


def test_symbolic_str_and_repr_are_tensorflows():
    seen = []

    @eager.function(input_signature=[eager.TensorSpec([None], eager.int32)])
    def f(x):
        seen.append((str(x), repr(x)))
        return x

    f(T([1, 2]))
    assert seen == [('Tensor("x:0", shape=(None,), dtype=int32)',
                     "<eager.Tensor 'x:0' shape=(None,) dtype=int32>")]


def test_tensor_attributes():
    t = T(np.zeros((2, 3, 0), np.float16))
    assert isinstance(t.shape, TensorShape) and t.shape == (2, 3, 0)
    assert t.ndim == 3 and T(1).ndim == 0
    assert t.dtype is eager.float16
    assert t.device == registry.default_device().name
    assert isinstance(t, eager.Tensor) and isinstance(t, EagerTensor)
    assert copy.copy(t) is t and copy.deepcopy(t) is t
    u = pickle.loads(pickle.dumps(T([1, 2])))
    same(u, np.array([1, 2], np.int32))
    with pytest.raises(AttributeError):
        t.op  # noqa: B018 - graph-only
    t.set_shape([2, None, 0])
    with pytest.raises(ValueError):
        t.set_shape([2, 3, 1])


# -----------------------------------------------------------------------------------------------
# The fast path: EagerTensor's + - * / skip dispatch when possible; results must be exactly
# those of full dispatch (values, dtypes, shapes, exception classes).
# -----------------------------------------------------------------------------------------------

FAST_OPERATORS = {
    "+": (operator.add, eager.add), "-": (operator.sub, eager.subtract),
    "*": (operator.mul, eager.multiply), "/": (operator.truediv, eager.truediv),
}
FAST_DTYPES = NUMERIC_DTYPES + [np.bool_]

python_scalars = st.one_of(
    st.integers(-300, 300),
    # Ints at and beyond the int32 / int64 / uint64 limits (hypothesis rarely draws these).
    st.sampled_from([2 ** 31 - 1, 2 ** 31, -2 ** 31 - 1, 2 ** 63 - 1, 2 ** 63, -2 ** 63 - 1,
                     2 ** 64, 2 ** 70, -2 ** 70, 10 ** 400]),
    st.integers(2 ** 63, 2 ** 80), st.integers(-2 ** 80, -2 ** 63 - 1),
    st.floats(allow_nan=True, allow_infinity=True), st.floats(-1e3, 1e3),
    st.sampled_from([0.0, -0.0, 1e40, -1e40, 5e-324, 70000.0]))


@st.composite
def fast_path_operands(draw):
    """(left, right): tensors of equal or mixed dtypes with broadcasting or incompatible
    shapes, or a tensor and a Python scalar on either side."""
    kind = draw(st.sampled_from(["same", "mixed", "incompatible", "scalar_right",
                                 "scalar_left", "scalar_right", "scalar_left"]))
    dtype = draw(st.sampled_from(FAST_DTYPES))
    if kind == "same":
        a, b = draw(broadcastable_pair(dtype))
        return T(a), T(b)
    if kind == "mixed":
        other = draw(st.sampled_from(FAST_DTYPES))
        s = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
        return T(draw(arrays(dtype, s.input_shapes[0]))), T(draw(arrays(other,
                                                                         s.input_shapes[1])))
    if kind == "incompatible":
        n = draw(st.integers(2, 4))
        return T(draw(arrays(dtype, (n,)))), T(draw(arrays(dtype, (n + 1,))))
    t = T(draw(arrays(dtype, shapes(max_dims=3, max_side=3))))
    scalar = draw(python_scalars)
    return (t, scalar) if kind == "scalar_right" else (scalar, t)


def _outcome(fn, left, right):
    try:
        result = fn(left, right)
    except Exception as exc:  # noqa: BLE001 - the exception class is the outcome compared
        return type(exc)
    assert isinstance(result, EagerTensor), type(result)
    return result


def _same_outcome(fast, slow):
    if isinstance(slow, type):
        assert fast is slow, (fast, slow)
        return
    assert isinstance(fast, EagerTensor), fast
    assert fast.dtype is slow.dtype and fast.shape == slow.shape, (fast, slow)
    assert fast.device == slow.device
    np.testing.assert_array_equal(np.asarray(fast.numpy()), np.asarray(slow.numpy()))


@pytest.mark.parametrize("symbol", sorted(FAST_OPERATORS))
@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                   HealthCheck.too_slow])
@given(operands=fast_path_operands())
def test_fast_path_matches_full_dispatch(cpu_only, no_inference_check, symbol, operands):
    left, right = operands
    op, slow_fn = FAST_OPERATORS[symbol]
    assert context.FAST_PATH.kernel_only, "the fast path is off: this test would not exercise it"
    with np.errstate(all="ignore"):
        fast = _outcome(op, left, right)
        slow = _outcome(slow_fn, left, right)
    _same_outcome(fast, slow)


def test_fast_path_is_taken_for_same_dtype_tensors(cpu_only, no_inference_check, monkeypatch):
    """The + of two float32 tensors and of a float tensor and a Python scalar never reaches
    the op library while the fast path is on (and does with the fast path off)."""
    calls = []
    slow_add = tensor_module._LIBRARY.add

    def counting_add(x, y):
        calls.append((x, y))
        return slow_add(x, y)

    monkeypatch.setattr(tensor_module._LIBRARY, "add", counting_add)
    a, b = T([1.0, 2.0]), T([3.0, 4.0])
    assert context.FAST_PATH.kernel_only
    same(a + b, np.array([4.0, 6.0], np.float32))
    same(a + 1.5, np.array([2.5, 3.5], np.float32))
    same(2 + a, np.array([3.0, 4.0], np.float32))
    assert calls == []
    same(T([1]) + T([2]), np.array([3], np.int32))  # same-dtype ints are fast too
    assert calls == []
    same(T([1]) + 2, np.array([3], np.int32))  # int + Python int: slow (range check)
    assert len(calls) == 1
    with pytest.raises(errors.InvalidArgumentError):
        a + T([1.0, 2.0], dtype=eager.float64)  # mixed dtypes: slow, which raises
    assert len(calls) == 2
    with context.slow_path_reason():
        assert not context.FAST_PATH.kernel_only
        same(a + b, np.array([4.0, 6.0], np.float32))
    assert len(calls) == 3
    assert context.FAST_PATH.kernel_only


def test_fast_path_examples(cpu_only, no_inference_check):
    assert context.FAST_PATH.kernel_only
    same(T([1.0]) + 2 ** 70, np.array([np.float32(2 ** 70) + 1], np.float32))
    same(T(np.array([1.0], np.float16)) * 1e10, np.array([np.inf], np.float16))
    same(T([2.0]) / 0, np.array([np.inf], np.float32))
    same(1.5 - T(np.array([1.0], np.float16)), np.array([0.5], np.float16))
    same(T([7]) / T([2]), np.array([3.5], np.float64))
    same(T(np.array([100], np.int8)) + T(np.array([100], np.int8)), np.array([-56], np.int8))
    with pytest.raises(errors.InvalidArgumentError, match="AddV2"):
        T([1.0]) + T([1])
    with pytest.raises(errors.InvalidArgumentError, match="Incompatible shapes"):
        T([1.0, 2.0]) - T([1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        T([1]) * 1.5
    with pytest.raises(ValueError):
        T([1]) + 2 ** 40
    with pytest.raises(ValueError):
        T([1.0]) + 10 ** 400
    with pytest.raises(TypeError):
        T([1.0]) / T([1])
