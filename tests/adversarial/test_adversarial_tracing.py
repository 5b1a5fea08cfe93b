"""Adversarial tracing: random sequences of calls with new and repeated shapes, dtypes and
Python values trace each signature once and give the eager results; an error that only the data
decides (integer division by zero, an index out of range) is the same error on the first call
(op by op), the second (compiled) and later ones (array form), and under async dispatch; a
function that creates its variable and is dropped releases the variable."""

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager as tf
from eager.core import dispatch
from eager.errors import InvalidArgumentError


def body(x, k):
    return tf.reduce_sum(x * k, axis=-1) + tf.cast(tf.shape(x)[0], x.dtype)


@pytest.mark.filterwarnings("ignore:.*triggered eager.function retracing")
@settings(max_examples=30, deadline=None)
@given(calls=st.lists(st.tuples(st.integers(1, 3), st.sampled_from(["float32", "float64"]),
                                st.sampled_from([1, 2])), min_size=1, max_size=8))
def test_random_call_sequences_trace_each_signature_once_and_match_eager(calls):
    f = tf.function(body)
    for n, dtype, k in calls:
        x = tf.ones([n, 2], dtype)
        np.testing.assert_array_equal(f(x, k).numpy(), body(x, k).numpy())
    assert f.experimental_get_tracing_count() == len(set(calls))


#: Errors only the data decides: (name, fn(x) on int32 [4] with x[-1] as the bad value).
DATA_ERRORS = [
    ("floordiv by zero", lambda x: tf.math.floordiv(x, x[-1] * 0 + x[:1] * 0),
     "Integer division by zero"),
    ("floormod by zero", lambda x: tf.math.floormod(x, x * 0), "Integer division by zero"),
    ("gather out of range", lambda x: tf.gather(x, x), "indices"),
    ("segment ids unsorted", lambda x: tf.math.segment_sum(x, x[::-1] - 1),
     "segment ids are not increasing"),
]


@pytest.mark.parametrize("case", DATA_ERRORS, ids=[c[0] for c in DATA_ERRORS])
def test_errors_the_data_decides_are_the_same_on_every_call_and_under_async(case):
    _, fn, words = case
    x = tf.constant([1, 2, 3, 9])
    messages = []
    traced = tf.function(fn)
    for k in range(4):
        if k >= 2:
            dispatch.check_inference(False)  # the array form runs only without the check
        try:
            with pytest.raises(InvalidArgumentError, match=words) as caught:
                traced(x).numpy()
            messages.append(str(caught.value))
        finally:
            dispatch.check_inference(True)
    assert len(set(messages)) == 1, messages
    with pytest.raises(InvalidArgumentError, match=words):
        fn(x).numpy()
    try:
        with pytest.raises(InvalidArgumentError, match=words):
            with tf.experimental.async_scope():
                traced(x).numpy()
    finally:
        tf.experimental.async_clear_error()
        try:  # on a GPU the failed kernel's stream reports it too: it was seen above
            tf.experimental.sync_devices()
        except InvalidArgumentError:
            pass
    # The function still works on good data afterwards.
    good = tf.constant([3, 2, 1, 1]) if "segment" in words else tf.constant([1, 2, 3, 3])
    if "Integer" not in words:
        traced(good).numpy()


def _make_use_and_drop_a_function_with_a_variable():
    holder = []

    @tf.function
    def f(a):
        if not holder:
            holder.append(tf.Variable(lambda: tf.zeros([2])))
        holder[0].assign_add(a)
        return holder[0].read_value()

    assert f(tf.ones([2])).numpy().tolist() == [1.0, 1.0]
    assert f(tf.ones([2])).numpy().tolist() == [2.0, 2.0]


def test_functions_that_create_variables_and_are_dropped_release_them():
    gc.collect()
    before = tf.experimental.live_resource_count()
    for _ in range(30):
        _make_use_and_drop_a_function_with_a_variable()
    gc.collect()
    tf.experimental.sync_devices()
    assert tf.experimental.live_resource_count() == before
