"""Bad inputs get TensorFlow's error, class and words (recorded from TensorFlow 2.21 below),
naming the op; never numpy's text, and the same error synchronously, under `async_scope` and
inside `eager.function`: shapes that are None, negative, too large to count or to allocate,
`range` with infinite or NaN bounds, unsorted or negative segment ids. And what TensorFlow
converts (numpy arrays in the other byte order), eager converts."""

import re
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import eager as tf
from eager.core import dispatch
from eager.errors import InvalidArgumentError, OpError, ResourceExhaustedError

INF, NAN = float("inf"), float("nan")
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"

# TensorFlow 2.21's messages (eager, CPU; TensorFlow prefixes "{{function_node ...}} " and
# eager names the op first, "Zeros: ", so the goldens are the words in between).
NONE_TO_TENSOR = ("Attempt to convert a value (None) with an unsupported type (<class "
                  "'NoneType'>) to a Tensor.")
EYE_NONE = ("Arguments `num_rows` and `num_columns` must be positive integer values. Received: "
            "num_rows=None, num_columns=None")
RANGE_TOO_LONG = "Requires ((limit - start) / delta) <= 9223372036854775807"
OUT_OF_RANGE_INT = "Can't convert Python sequence with out-of-range integer to Tensor."


@pytest.fixture(autouse=True)
def _on_the_cpu(cpu_only):
    """The goldens name the CPU (a GPU's OOM names its own device and allocator)."""


def _x():
    return tf.constant([1.0, 2.0])


#: (name, bad call, TensorFlow's error class, TensorFlow's words, the op eager names or None
#: for an error raised before any op).
BAD = [
    ("zeros(None)", lambda: tf.zeros(None), ValueError, NONE_TO_TENSOR, None),
    ("ones(None)", lambda: tf.ones(None), ValueError, NONE_TO_TENSOR, None),
    ("fill(None, 1)", lambda: tf.fill(None, 1), ValueError, NONE_TO_TENSOR, None),
    ("reshape(x, None)", lambda: tf.reshape(_x(), None), ValueError, NONE_TO_TENSOR, None),
    ("constant(None)", lambda: tf.constant(None), ValueError, NONE_TO_TENSOR, None),
    ("eye(None)", lambda: tf.eye(None), TypeError, EYE_NONE, None),
    ("range(inf)", lambda: tf.range(INF), InvalidArgumentError, RANGE_TOO_LONG, "Range"),
    ("range(0, inf)", lambda: tf.range(0, INF), InvalidArgumentError, RANGE_TOO_LONG, "Range"),
    ("range(1e20)", lambda: tf.range(1e20), InvalidArgumentError, RANGE_TOO_LONG, "Range"),
    ("range(inf, 0, -1)", lambda: tf.range(INF, 0.0, -1.0), InvalidArgumentError,
     RANGE_TOO_LONG, "Range"),
    ("range(2, 1, nan)", lambda: tf.range(2.0, 1.0, NAN), InvalidArgumentError, RANGE_TOO_LONG,
     "Range"),
    ("range(nan)", lambda: tf.range(NAN), InvalidArgumentError,
     "Requires start <= limit when delta > 0: 0/nan", "Range"),
    ("range(-inf)", lambda: tf.range(-INF), InvalidArgumentError,
     "Requires start <= limit when delta > 0: 0/-inf", "Range"),
    ("range(0.1, -2.)", lambda: tf.range(0.1, -2.0), InvalidArgumentError,
     "Requires start <= limit when delta > 0: 0.1/-2", "Range"),
    ("range(0, 10, 0)", lambda: tf.range(0.0, 10.0, 0.0), InvalidArgumentError,
     "Requires delta != 0: 0", "Range"),
    ("zeros([-1])", lambda: tf.zeros([-1]), InvalidArgumentError, "Dimension -1 must be >= 0",
     "Zeros"),
    ("ones([2, -3])", lambda: tf.ones([2, -3]), InvalidArgumentError,
     "Dimension -3 must be >= 0", "Ones"),
    ("fill([-1], 1.)", lambda: tf.fill([-1], 1.0), InvalidArgumentError,
     "Dimension -1 must be >= 0", "Fill"),
    ("eye(-1)", lambda: tf.eye(-1), InvalidArgumentError, "Dimension -1 must be >= 0", "Eye"),
    ("eye(2, batch_shape=[-1])", lambda: tf.eye(2, batch_shape=[-1]), InvalidArgumentError,
     "Dimension -1 must be >= 0", "Eye"),
    ("zeros([2**40, 2**40])", lambda: tf.zeros([2 ** 40, 2 ** 40]), InvalidArgumentError,
     "Shape [1099511627776,1099511627776] would have more than 2**63 - 1 elements", "Zeros"),
    ("ones([2**62, 4])", lambda: tf.ones([2 ** 62, 4]), InvalidArgumentError,
     "Shape [4611686018427387904,4] would have more than 2**63 - 1 elements", "Ones"),
    ("fill([3, 2**62], 1.)", lambda: tf.fill([3, 2 ** 62], 1.0), InvalidArgumentError,
     "Shape [3,4611686018427387904] would have more than 2**63 - 1 elements", "Fill"),
    ("constant(0., shape=[2**40, 2**40])", lambda: tf.constant(0.0, shape=[2 ** 40, 2 ** 40]),
     InvalidArgumentError,
     "Shape [1099511627776,1099511627776] would have more than 2**63 - 1 elements", "Fill"),
    ("eye(2**32)", lambda: tf.eye(2 ** 32), InvalidArgumentError,
     "Encountered overflow when multiplying 4294967296 with 4294967296, result: -1", "Eye"),
    ("reshape(x, [2**40, 2**40])", lambda: tf.reshape(_x(), [2 ** 40, 2 ** 40]),
     InvalidArgumentError, "Shape [1099511627776, 1099511627776] has too many elements",
     "Reshape"),
    ("reshape(x, [-1, 2**62, 4])", lambda: tf.reshape(_x(), [-1, 2 ** 62, 4]),
     InvalidArgumentError, "Shape [-1, 4611686018427387904, 4] has too many elements",
     "Reshape"),
    ("zeros([2**63])", lambda: tf.zeros([2 ** 63]), ValueError, OUT_OF_RANGE_INT, None),
    ("fill([2**63], 1.)", lambda: tf.fill([2 ** 63], 1.0), ValueError, OUT_OF_RANGE_INT, None),
    ("reshape(x, [2**63])", lambda: tf.reshape(_x(), [2 ** 63]), ValueError, OUT_OF_RANGE_INT,
     None),
    # Memory that cannot be had (256 TiB: more than any address space, so no overcommit hides
    # it), and byte counts numpy cannot even express (2**62 float32 elements).
    ("zeros([2**23, 2**23])", lambda: tf.zeros([2 ** 23, 2 ** 23]), ResourceExhaustedError,
     f"OOM when allocating tensor with shape[8388608,8388608] and type float on {CPU0} by "
     "allocator cpu", "Zeros"),
    ("ones([2**31, 2**31])", lambda: tf.ones([2 ** 31, 2 ** 31]), ResourceExhaustedError,
     f"OOM when allocating tensor with shape[2147483648,2147483648] and type float on {CPU0} by "
     "allocator cpu", "Ones"),
    ("fill([2**23, 2**23], 1.)", lambda: tf.fill([2 ** 23, 2 ** 23], 1.0),
     ResourceExhaustedError, f"OOM when allocating tensor with shape[8388608,8388608] and type "
                             f"float on {CPU0} by allocator cpu", "Fill"),
    ("eye(2**23, dtype=float64)", lambda: tf.eye(2 ** 23, dtype=tf.float64),
     ResourceExhaustedError, f"OOM when allocating tensor with shape[8388608,8388608] and type "
                             f"double on {CPU0} by allocator cpu", "Eye"),
    ("constant(0., shape=[2**23, 2**23])", lambda: tf.constant(0.0, shape=[2 ** 23, 2 ** 23]),
     ResourceExhaustedError, f"OOM when allocating tensor with shape[8388608,8388608] and type "
                             f"float on {CPU0} by allocator cpu", "Fill"),
    ("range(2**62, int64)", lambda: tf.range(2 ** 62, dtype=tf.int64), ResourceExhaustedError,
     f"OOM when allocating tensor with shape[4611686018427387904] and type int64 on {CPU0} by "
     "allocator cpu", "Range"),
    ("range(1e18)", lambda: tf.range(1e18), ResourceExhaustedError,
     f"OOM when allocating tensor with shape[999999984306749440] and type float on {CPU0} by "
     "allocator cpu", "Range"),
    ("segment_sum unsorted", lambda: tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]),
                                                         tf.constant([1, 0, 1])),
     InvalidArgumentError, "segment ids are not increasing", "SegmentSum"),
    ("segment_sum [2, 3, 1, 4]", lambda: tf.math.segment_sum(tf.constant([1.0, 2, 3, 4]),
                                                             tf.constant([2, 3, 1, 4])),
     InvalidArgumentError, "segment ids are not increasing", "SegmentSum"),
    ("segment_sum negative first", lambda: tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]),
                                                               tf.constant([-1, 0, 1])),
     InvalidArgumentError,
     "Segment id -1 out of range [0, 2), possibly because 'segment_ids' input is not sorted.",
     "SegmentSum"),
    ("segment_sum negative last", lambda: tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]),
                                                              tf.constant([0, 0, -1])),
     InvalidArgumentError, "segment ids must be >= 0", "SegmentSum"),
    ("segment_sum 2-D ids", lambda: tf.math.segment_sum(tf.constant([[1.0, 2.0]]),
                                                        tf.constant([[0, 0]])),
     InvalidArgumentError, "segment_ids should be a vector.", "SegmentSum"),
    ("segment_sum lengths", lambda: tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]),
                                                        tf.constant([0, 0])),
     InvalidArgumentError, "segment_ids should be the same size as dimension 0 of input.",
     "SegmentSum"),
]
BAD_IDS = [b[0] for b in BAD]

#: numpy's and Python's words, which must never be inside ours.
FOREIGN = ("array is too big", "Maximum allowed", "Unable to allocate", "NoneType' object",
           "cannot convert float", "MemoryError", "OverflowError", "RuntimeWarning")


def _check(exc, cls, words, op):
    assert type(exc) is cls or (cls is ValueError and type(exc) is ValueError), type(exc)
    text = str(exc)
    assert words in text, text
    for foreign in FOREIGN:
        assert foreign not in text, text
    if op is not None:
        assert text.startswith(f"{op}: ") and f"[Op:{op}]" in text, text


@pytest.mark.parametrize("bad", BAD, ids=BAD_IDS)
def test_bad_inputs_raise_tensorflows_errors(bad):
    _, call, cls, words, op = bad
    with pytest.raises(cls) as caught:
        call()
    _check(caught.value, cls, words, op)


_ISSUED_AT = re.compile(r" \(issued at [^)]*\)$")


def _error_in(mode, call):
    """The exception `call` raises when run in `mode`: synchronously, inside `async_scope`
    (wherever it surfaces: at the call, or at the scope's sync point; without the "issued at"
    it adds there), or as an `eager.function` (its first and later calls: each must raise the
    same)."""
    if mode == "sync":
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - what is compared
            return exc
        raise AssertionError("no error")
    if mode == "async":
        try:
            with tf.experimental.async_scope():
                call()
        except Exception as exc:  # noqa: BLE001
            tf.experimental.async_clear_error()
            if isinstance(exc, OpError):
                return type(exc)(exc.node_def, exc.op, _ISSUED_AT.sub("", exc.message))
            return exc
        raise AssertionError("no error")
    traced = tf.function(call)
    errors = []
    for _ in range(3):
        try:
            traced()
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)
    assert len(errors) == 3
    assert len({(type(e), str(e)) for e in errors}) == 1, errors
    return errors[0]


@pytest.mark.parametrize("mode", ["async", "traced"])
@pytest.mark.parametrize("bad", BAD, ids=BAD_IDS)
def test_a_bad_input_gives_the_same_error_in_every_mode(bad, mode):
    _, call, cls, words, op = bad
    expected = _error_in("sync", call)
    got = _error_in(mode, call)
    assert type(got) is type(expected)
    assert str(got) == str(expected)
    _check(got, cls, words, op)


# -- byte order: TensorFlow converts, to the native dtype with the same values -----------------

OTHER_ORDER = ">" if sys.byteorder == "little" else "<"


@pytest.mark.parametrize("kind", ["f2", "f4", "f8", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
                                  "c8", "c16"])
def test_arrays_in_the_other_byte_order_convert_as_in_tensorflow(kind):
    foreign = np.arange(6).reshape(2, 3).astype(OTHER_ORDER + kind)
    native = foreign.astype(foreign.dtype.newbyteorder("="))
    for t in (tf.constant(foreign), tf.convert_to_tensor(foreign), tf.identity(foreign),
              tf.constant(foreign[:, ::2]), tf.constant(foreign[0, 1])):
        assert t.dtype == tf.as_dtype(native.dtype)
        assert t.numpy().dtype.isnative
    np.testing.assert_array_equal(tf.constant(foreign).numpy(), native)
    np.testing.assert_array_equal(tf.constant(foreign[:, ::2]).numpy(), native[:, ::2])
    np.testing.assert_array_equal(tf.Variable(foreign).numpy(), native)
    if kind[0] in "fc":
        np.testing.assert_array_equal((tf.constant(foreign) * 2).numpy(), native * 2)
        np.testing.assert_array_equal(tf.add(foreign, foreign).numpy(), native + native)
    # TensorFlow 2.21 (verified): with a dtype asked for, converted like a native array.
    if kind[0] in "iu":
        assert tf.constant(foreign, dtype=tf.int64).dtype == tf.int64
        np.testing.assert_array_equal(tf.constant(foreign, dtype=tf.float64).numpy(),
                                      native.astype(np.float64))


def test_lists_of_foreign_arrays_and_bool_arrays_convert():
    a = np.array([1, 2], OTHER_ORDER + "i4")
    np.testing.assert_array_equal(tf.constant([a, a]).numpy(), [[1, 2], [1, 2]])
    assert tf.constant([a, a]).dtype == tf.int32
    np.testing.assert_array_equal(tf.constant(np.array([True], "|b1")).numpy(), [True])


# -- adversarial: random shapes with huge, negative and None sizes ------------------------------

_SIZES = st.sampled_from([0, 1, 3, -1, -7, 2 ** 20, 2 ** 23, 2 ** 31, 2 ** 40, 2 ** 62,
                          2 ** 63 - 1, 2 ** 63])
_DTYPES = {"float32": 4, "float64": 8, "int32": 4, "uint8": 1, "bool": 1, "complex64": 8}
_SAFE_BYTES, _IMPOSSIBLE_BYTES = 1 << 26, 1 << 49  # run only what fits, or what never can


def _expected_for(dims, itemsize, shape_tensor=True):
    """TensorFlow's answer for a tensor of `dims`: (class, words) of its error, or None when it
    makes one; None too (`assume`) for sizes between "fits easily" and "never fits". With
    `shape_tensor`, the dims are converted to an int64 tensor first (zeros, ones, fill; not
    `constant`'s shape)."""
    if shape_tensor and any(not -(2 ** 63) <= d < 2 ** 63 for d in dims):
        return ValueError, OUT_OF_RANGE_INT
    for d in dims:
        if d < 0:
            return InvalidArgumentError, f"Dimension {d} must be >= 0"
    n = int(np.prod(dims, dtype=object)) if dims else 1
    if n > 2 ** 63 - 1:
        return InvalidArgumentError, (f"Shape [{','.join(map(str, dims))}] would have more than "
                                      "2**63 - 1 elements")
    if n * itemsize >= _IMPOSSIBLE_BYTES:
        return ResourceExhaustedError, (f"OOM when allocating tensor with "
                                        f"shape[{','.join(map(str, dims))}]")
    assume(n * itemsize <= _SAFE_BYTES)
    return None


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(dims=st.lists(_SIZES, max_size=3), dtype=st.sampled_from(sorted(_DTYPES)),
       which=st.sampled_from(["zeros", "ones", "fill", "constant"]),
       mode=st.sampled_from(["sync", "async", "traced"]))
def test_random_shapes_give_tensorflows_error_or_the_tensor(dims, dtype, which, mode):
    expected = _expected_for(dims, _DTYPES[dtype], shape_tensor=which != "constant")
    d = tf.as_dtype(dtype)
    value = np.zeros((), d.as_numpy_dtype)
    op = {"zeros": "Zeros", "ones": "Ones", "fill": "Fill", "constant": "Fill"}[which]
    if which == "constant":
        assume(all(x >= 0 for x in dims))  # (TensorShape refuses those itself)
    make = {"zeros": lambda: tf.zeros(dims, d), "ones": lambda: tf.ones(dims, d),
            "fill": lambda: tf.fill(dims, tf.constant(value)),
            "constant": lambda: tf.constant(value, shape=dims)}[which]
    if expected is None:
        t = make()
        assert t.shape == tuple(dims) and t.dtype == d
        return
    exc = _error_in(mode, make)
    cls, words = expected
    _check(exc, cls, words, None if cls is ValueError else op)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.one_of(st.sampled_from([0.0, 1.5, -2.0, INF, -INF, NAN, 1e20, -1e38]),
                       st.floats(-100, 100)),
       limit=st.one_of(st.sampled_from([0.0, 10.0, INF, -INF, NAN, 1e20]), st.floats(-100, 100)),
       delta=st.sampled_from([1.0, -1.0, 0.0, 0.5, -3.0, INF, NAN, 1e-30]),
       mode=st.sampled_from(["sync", "async", "traced"]))
def test_random_ranges_follow_tensorflows_checks(start, limit, delta, mode):
    f32 = np.float32
    s, lim, dl = (float(f32(v)) for v in (start, limit, delta))
    # TensorFlow's kernel: `if (delta > 0) {start <= limit} else {start >= limit}`, so a NaN
    # delta is held to the second rule.
    if dl == 0:
        expected = f"Requires delta != 0: {dl:g}"
    elif dl > 0 and not s <= lim:
        expected = "Requires start <= limit when delta > 0"
    elif not dl > 0 and not s >= lim:
        expected = "Requires start >= limit when delta < 0"
    else:
        with np.errstate(all="ignore"):
            size = np.ceil(np.abs((f32(lim) - f32(s)) / f32(dl)))
        if not size <= 2 ** 63 - 1:
            expected = RANGE_TOO_LONG
        else:
            assume(size <= 1 << 20)
            t = tf.range(start, limit, delta)
            assert t.shape == (int(size),) and t.dtype == tf.float32
            return
    exc = _error_in(mode, lambda: tf.range(start, limit, delta))
    _check(exc, InvalidArgumentError, expected, "Range")


def _tf_segment_walk(ids):
    """TensorFlow's SegmentSum kernel's checks as its C++ walks them (an independent
    statement of the same rules): the error's words, or the output's row count."""
    if not ids:
        return 0
    if ids[-1] < 0:
        return "segment ids must be >= 0"
    rows = ids[-1] + 1
    start = 0
    while start < len(ids):
        end = start
        while end < len(ids) and ids[end] == ids[start]:
            end += 1
        if end < len(ids) and not ids[start] < ids[end]:
            return "segment ids are not increasing"
        if not 0 <= ids[start] < rows:
            return (f"Segment id {ids[start]} out of range [0, {rows}), possibly because "
                    "'segment_ids' input is not sorted.")
        start = end
    return rows


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(st.integers(-3, 6), max_size=7), width=st.integers(1, 3),
       sort=st.booleans(), dtype=st.sampled_from([np.int32, np.int64]))
def test_random_segment_ids_follow_tensorflows_checks(ids, width, sort, dtype):
    if sort:
        ids = sorted(ids)
    data = np.arange(len(ids) * width, dtype=np.float32).reshape(len(ids), width)
    walked = _tf_segment_walk(ids)
    if isinstance(walked, str):
        with pytest.raises(InvalidArgumentError) as caught:
            tf.math.segment_sum(data, np.array(ids, dtype))
        _check(caught.value, InvalidArgumentError, walked, "SegmentSum")
        return
    expected = np.zeros((walked, width), np.float32)
    np.add.at(expected, np.array(ids, np.int64), data)
    got = tf.math.segment_sum(data, np.array(ids, dtype))
    np.testing.assert_array_equal(got.numpy(), expected)


def test_segment_sum_in_functions_and_async_checks_the_values():
    data = tf.constant([1.0, 2.0, 3.0])
    traced = tf.function(lambda d, i: tf.math.segment_sum(d, i))
    np.testing.assert_array_equal(traced(data, tf.constant([0, 0, 2])).numpy(), [3, 0, 3])
    dispatch.check_inference(False)
    try:
        for _ in range(3):
            with pytest.raises(InvalidArgumentError, match="segment ids are not increasing"):
                traced(data, tf.constant([1, 0, 2]))
    finally:
        dispatch.check_inference(True)
    with tf.experimental.async_scope():
        pending = tf.math.segment_sum(data, tf.constant([0, 1, 1]))
        assert pending.shape.as_list() in ([None], [2])
    np.testing.assert_array_equal(pending.numpy(), [1, 5])
