"""Adversarial bad inputs: an axis out of range for every axis-taking op, zero-size dimensions
through every kind of op, odd things where a shape or a tensor is expected (NaN and inf in
shapes, tensors as shapes, objects whose `__array__` returns garbage or raises, nested lists of
mixed types, strings) and values at the edge of a dtype (uint64 beyond int64). Each gets the
result numpy (or TensorFlow) gives, or an error of eager's or TensorFlow's classes that names
the op or the value, never a numpy or Python error from inside a kernel."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager as tf
from eager.errors import InvalidArgumentError, OpError

#: Words of numpy's and Python's own errors, which must never be the message.
FOREIGN = ("is out of bounds for array of dimension", "numpy.", "AxisError", "cannot convert float",
           "object cannot be interpreted as an integer", "index out of range", "list index")


def _raises_clear(call, classes=(InvalidArgumentError, ValueError, TypeError)):
    with pytest.raises(Exception) as caught:  # noqa: B017, PT011 - the class is checked below
        out = call()
        if hasattr(out, "numpy"):
            out.numpy()
    exc = caught.value
    assert isinstance(exc, classes), (type(exc), exc)
    assert type(exc).__module__.split(".")[0] in ("builtins", "eager"), type(exc)
    text = str(exc)
    for foreign in FOREIGN:
        assert foreign not in text, text
    return exc


#: Axis-taking ops on a rank-2 float tensor: (name, call(x, axis)).
AXIS_OPS = [
    ("reduce_sum", lambda x, a: tf.reduce_sum(x, axis=a)),
    ("reduce_max", lambda x, a: tf.reduce_max(x, axis=a)),
    ("reduce_mean", lambda x, a: tf.reduce_mean(x, axis=a)),
    ("reduce_logsumexp", lambda x, a: tf.reduce_logsumexp(x, axis=a)),
    ("reduce_std", lambda x, a: tf.math.reduce_std(x, axis=a)),
    ("reduce_any", lambda x, a: tf.reduce_any(x > 0, axis=a)),
    ("argmax", lambda x, a: tf.math.argmax(x, axis=a)),
    ("argmin", lambda x, a: tf.math.argmin(x, axis=a)),
    ("cumsum", lambda x, a: tf.math.cumsum(x, axis=a)),
    ("cumprod", lambda x, a: tf.math.cumprod(x, axis=a, exclusive=True)),
    ("concat", lambda x, a: tf.concat([x, x], axis=a)),
    ("stack", lambda x, a: tf.stack([x, x], axis=a)),
    ("unstack", lambda x, a: tf.unstack(x, axis=a)[0]),
    ("split", lambda x, a: tf.split(x, 1, axis=a)[0]),
    ("expand_dims", lambda x, a: tf.expand_dims(x, axis=a)),
    ("softmax", lambda x, a: tf.nn.softmax(x, axis=a)),
    ("log_softmax", lambda x, a: tf.nn.log_softmax(x, axis=a)),
    ("gather", lambda x, a: tf.gather(x, [0], axis=a)),
    ("reverse", lambda x, a: tf.reverse(x, axis=[a])),
    ("sort", lambda x, a: tf.sort(x, axis=a)),
    ("argsort", lambda x, a: tf.argsort(x, axis=a)),
    ("l2_normalize", lambda x, a: tf.math.l2_normalize(x, axis=a)),
    ("norm", lambda x, a: tf.norm(x, axis=a)),
    ("one_hot", lambda x, a: tf.one_hot([[0, 1], [1, 0]], 3, axis=a)),
    ("count_nonzero", lambda x, a: tf.math.count_nonzero(x, axis=a)),
    ("moments", lambda x, a: tf.nn.moments(x, axes=[a])[1]),
]


def _axis_range(name):
    """The valid axes TensorFlow takes for the op on a rank-2 input (stack, expand_dims and
    one_hot make a rank-3 result, so they take one more)."""
    return (-3, 3) if name in ("stack", "expand_dims", "one_hot") else (-2, 2)


@settings(max_examples=120, deadline=None)
@given(op=st.sampled_from(AXIS_OPS), axis=st.integers(-6, 6),
       mode=st.sampled_from(["eager", "traced"]))
def test_every_axis_taking_op_refuses_an_axis_out_of_range_clearly(op, axis, mode):
    name, call = op
    x = tf.reshape(tf.range(1.0, 7.0), [2, 3])
    run = (lambda: call(x, axis)) if mode == "eager" else tf.function(lambda: call(x, axis))
    low, high = _axis_range(name)
    if low <= axis < high:
        out = run()
        assert np.isfinite(np.asarray(out.numpy(), np.float64)).all()
        return
    _raises_clear(run)


#: Ops through which a zero-size dimension must flow: (name, eager, numpy).
ZERO_SIZE_OPS = [
    ("add", lambda x: x + x, lambda a: a + a),
    ("exp", tf.exp, np.exp),
    ("matmul_t", lambda x: tf.matmul(x, x, transpose_b=True), lambda a: a @ a.T),
    ("reduce_sum_0", lambda x: tf.reduce_sum(x, axis=0), lambda a: a.sum(axis=0)),
    ("reduce_max_last", lambda x: tf.reduce_max(x, axis=-1),
     lambda a: np.max(a, axis=-1, initial=-np.inf)),
    ("cumsum", lambda x: tf.math.cumsum(x, axis=-1), lambda a: np.cumsum(a, axis=-1)),
    ("softmax", lambda x: tf.nn.softmax(x), None),
    ("transpose", tf.transpose, np.transpose),
    ("reshape", lambda x: tf.reshape(x, [-1]), lambda a: a.reshape(-1)),
    ("concat", lambda x: tf.concat([x, x], 0), lambda a: np.concatenate([a, a], 0)),
    ("tile", lambda x: tf.tile(x, [2, 0]), lambda a: np.tile(a, [2, 0])),
    ("pad", lambda x: tf.pad(x, [[1, 0], [0, 2]]), lambda a: np.pad(a, [[1, 0], [0, 2]])),
    ("gather", lambda x: tf.gather(x, tf.zeros([0], tf.int32)), lambda a: a[:0]),
    ("slice", lambda x: x[1:, ::-1], lambda a: a[1:, ::-1]),
    ("where", lambda x: tf.where(x > 0, x, -x), lambda a: np.where(a > 0, a, -a)),
    ("sort", lambda x: tf.sort(x), lambda a: np.sort(a, axis=-1)),
    ("cast", lambda x: tf.cast(x, tf.int8), lambda a: a.astype(np.int8)),
    ("broadcast_to", lambda x: tf.broadcast_to(x[:, :1], [x.shape[0], 4]) if x.shape[1]
     else tf.zeros([x.shape[0], 4]), lambda a: np.broadcast_to(a[:, :1], (a.shape[0], 4))
     if a.shape[1] else np.zeros((a.shape[0], 4), np.float32)),
    ("split", lambda x: tf.split(x, 1, axis=1)[0], lambda a: a),
    ("reverse", lambda x: tf.reverse(x, [0]), lambda a: a[::-1]),
    ("segment_sum", lambda x: tf.math.unsorted_segment_sum(x, tf.zeros([x.shape[0]], tf.int32),
                                                           2), None),
    ("l2_loss", lambda x: tf.nn.l2_loss(x), lambda a: np.float32(np.sum(a * a) / 2)),
]


@settings(max_examples=100, deadline=None)
@given(op=st.sampled_from(ZERO_SIZE_OPS),
       shape=st.sampled_from([(0, 3), (2, 0), (0, 0), (0, 1), (1, 0)]),
       mode=st.sampled_from(["eager", "traced", "async"]))
def test_zero_size_dimensions_flow_through_every_kind_of_op(op, shape, mode):
    name, fn, reference = op
    a = np.ones(shape, np.float32)
    if mode == "traced":
        got = tf.function(fn)(tf.constant(a))
    elif mode == "async":
        with tf.experimental.async_scope():
            got = fn(tf.constant(a))
    else:
        got = fn(tf.constant(a))
    value = got.numpy()
    if reference is None:
        assert value.size == 0 or name == "segment_sum"
        return
    expected = np.asarray(reference(a))
    assert value.shape == expected.shape, (name, value.shape, expected.shape)
    np.testing.assert_array_equal(value, expected.astype(value.dtype))


# -- shapes: tensors, NaN and inf, bools, odd objects -------------------------------------------

def _calling(make, shape):
    return lambda: make(shape)


@pytest.mark.parametrize("make", [
    lambda s: tf.zeros(s), lambda s: tf.ones(s, tf.int32), lambda s: tf.fill(s, 2.0),
    lambda s: tf.reshape(tf.range(6), s), lambda s: tf.broadcast_to(1.0, s),
    lambda s: tf.random.uniform(s, seed=1), lambda s: tf.tile(tf.ones([1, 1]), s),
], ids=["zeros", "ones", "fill", "reshape", "broadcast_to", "uniform", "tile"])
def test_a_shape_given_as_a_tensor_is_the_same_shape_in_every_mode(make):
    expected = make([2, 3]).shape
    for shape in (tf.constant([2, 3]), tf.constant([2, 3], tf.int64), np.array([2, 3]),
                  (np.int64(2), np.int32(3)), tf.TensorShape([2, 3])):
        assert make(shape).shape == expected
        assert tf.function(_calling(make, shape))().shape == expected  # a trace constant
        with tf.experimental.async_scope():
            assert make(shape).shape == expected


def _stable_id(text):
    """A test id without object addresses, which differ between processes (pytest-xdist's
    workers must collect the same ids)."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", text)


@pytest.mark.parametrize("shape", [[float("nan"), 3], [float("inf")], [2.5, 3], [2, "3"], "23",
                                   [[2], [3]], [2, None, object()], {"a": 1}, [2, [3]],
                                   tf.constant([2.0, 3.0]), tf.constant([[2, 3]])],
                         ids=lambda v: _stable_id(repr(v)))
@pytest.mark.parametrize("which", ["zeros", "fill", "reshape", "tile", "uniform"])
def test_bad_shapes_are_clear_errors_in_every_mode(which, shape):
    make = {"zeros": lambda: tf.zeros(shape), "fill": lambda: tf.fill(shape, 1.0),
            "reshape": lambda: tf.reshape(tf.range(6), shape),
            "tile": lambda: tf.tile(tf.ones([1, 1]), shape),
            "uniform": lambda: tf.random.uniform(shape)}[which]
    first = _raises_clear(make)
    traced = _raises_clear(tf.function(make))
    assert type(traced) in (type(first), TypeError)  # (a dtype refused while tracing)

    def queued():
        with tf.experimental.async_scope():
            make()
    try:
        queued_error = _raises_clear(queued)
    finally:
        tf.experimental.async_clear_error()
    assert type(queued_error) is type(first)


class _Garbage:
    def __init__(self, result):
        self.result = result

    def __array__(self, dtype=None, copy=None):
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


@pytest.mark.parametrize("value", [
    _Garbage("garbage"), _Garbage(np.array([object()])),
    _Garbage(RuntimeError("boom")), _Garbage(np.array([1, 2], dtype="datetime64[D]")),
    [1, "a"], [[1, 2], [3]], [1, None], [[1], 2], [1.5, [2]], [tf.constant([1]), [2, 3]],
    [1 + 2j, "x"], np.array([1, "a"], dtype=object), {1, 2}, object(),
], ids=lambda v: type(v).__name__ + ":" + _stable_id(repr(getattr(v, "result", v)))[:30])
@pytest.mark.parametrize("how", ["constant", "add", "variable", "traced"])
def test_odd_objects_are_refused_clearly(value, how):
    call = {"constant": lambda: tf.constant(value), "add": lambda: tf.add(value, 1),
            "variable": lambda: tf.Variable(value),
            "traced": lambda: tf.function(lambda: tf.identity(value))()}[how]
    exc = _raises_clear(call, (ValueError, TypeError, RuntimeError, InvalidArgumentError))
    if isinstance(exc, RuntimeError) and not isinstance(exc, OpError):
        assert str(exc) == "boom"  # the object's own error passes through untouched


@pytest.mark.parametrize("value", ["text", b"bytes", _Garbage(np.array(["a", "b"]))],
                         ids=lambda v: _stable_id(repr(v)))
def test_strings_are_string_tensors_but_not_numbers(value):
    """TensorFlow 2.21: text (and an object whose array is text) converts to a string tensor;
    adding a number to it is refused."""
    assert tf.constant(value).dtype == tf.string
    assert tf.Variable(value).dtype == tf.string
    assert tf.function(lambda: tf.identity(value))().dtype == tf.string
    _raises_clear(lambda: tf.add(value, 1), (ValueError, TypeError, InvalidArgumentError))


@pytest.mark.parametrize("nested", [[1, 2.5, True], [[1, 2], [3.5, 4]], [np.float16(1), 2.0],
                                    [np.int8(1), 300], [[], []], [(), ()],
                                    [np.array([1, 2]), [3.5, 4]]], ids=repr)
def test_nested_lists_of_mixed_numbers_convert_as_numpy_promotes_or_refuse(nested):
    """A numeric nested list converts to the values numpy gives (float32 when any float, as
    TensorFlow infers) or is refused clearly (a bool mixed with numbers is TensorFlow's
    ValueError)."""
    try:
        got = tf.constant(nested)
    except (ValueError, TypeError) as exc:
        assert "convert" in str(exc).lower(), exc
        return
    np.testing.assert_array_equal(got.numpy(), np.array(nested).astype(got.numpy().dtype))


# -- uint64 beyond int64 ------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.one_of(st.integers(0, 2 ** 64 - 1),
                                 st.sampled_from([2 ** 63, 2 ** 64 - 1, 0, 2 ** 63 - 1])),
                       min_size=1, max_size=5),
       nest=st.booleans())
def test_uint64_values_beyond_int64_convert_exactly(values, nest):
    data = [[v] for v in values] if nest else values
    expected = np.array(values, np.uint64).reshape((-1, 1) if nest else (-1,))
    for t in (tf.constant(data, tf.uint64), tf.convert_to_tensor(data, tf.uint64),
              tf.Variable(data, dtype=tf.uint64)):
        np.testing.assert_array_equal(t.numpy(), expected)
        assert t.dtype == tf.uint64
    np.testing.assert_array_equal(tf.constant(data, tf.float64).numpy(),
                                  expected.astype(np.float64))
    if max(values) > 2 ** 63 - 1:
        _raises_clear(lambda: tf.constant(data))  # no dtype asked for: TensorFlow's ValueError
        _raises_clear(lambda: tf.constant(data, tf.int64))
    _raises_clear(lambda: tf.constant(data + [[-1]] if nest else data + [-1], tf.uint64))
    _raises_clear(lambda: tf.constant(data + [[2 ** 64]] if nest else data + [2 ** 64],
                                      tf.uint64))
