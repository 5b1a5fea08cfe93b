"""Segment reductions, counting ops, scatter updates and the small math composites against
TensorFlow 2.21's results (recorded below as goldens: values, dtypes, error classes and
wording), their gradients against TensorFlow's and against finite differences, and traced
calls against eager ones."""

import numpy as np
import pytest

import eager as tf
from eager.errors import InvalidArgumentError
from gradcheck import check_gradient

F = np.float32
D = tf.constant([[1., 2.], [3., 4.], [5., 6.], [7., 8.]])
IDS = [0, 0, 2, 2]


def _np(t):
    return t.numpy()


# -----------------------------------------------------------------------------------------------
# Segment reductions
# -----------------------------------------------------------------------------------------------

SORTED = {  # TF 2.21: data D, ids [0, 0, 2, 2]; int data [1, 5, 3] with ids [0, 0, 2]
    "segment_mean": ([[2, 3], [0, 0], [6, 7]], [3, 0, 3]),
    "segment_max": ([[3, 4], [0, 0], [7, 8]], [5, 0, 3]),
    "segment_min": ([[1, 2], [0, 0], [5, 6]], [1, 0, 3]),
    "segment_prod": ([[3, 8], [1, 1], [35, 48]], [5, 1, 3]),
    "segment_sum": ([[4, 6], [0, 0], [12, 14]], [6, 0, 3]),
}


@pytest.mark.parametrize("op", sorted(SORTED))
def test_sorted_segments_match_tensorflow(op):
    fn = getattr(tf.math, op)
    floats, ints = SORTED[op]
    out = fn(D, IDS)
    assert out.dtype == tf.float32 and np.array_equal(_np(out), np.array(floats, F))
    out = fn(tf.constant([1, 5, 3]), tf.constant([0, 0, 2]))
    assert out.dtype == tf.int32 and _np(out).tolist() == ints
    assert fn(tf.zeros([0, 2]), tf.zeros([0], tf.int32)).shape == (0, 2)
    name = "Segment" + op.split("_")[1].capitalize()
    with pytest.raises(InvalidArgumentError, match=rf"segment ids are not increasing.*{name}"):
        fn(D, [1, 0, 2, 2])
    with pytest.raises(InvalidArgumentError,
                       match=r"Segment id -1 out of range \[0, 3\), possibly because "
                             "'segment_ids' input is not sorted"):
        fn(D, [-1, 0, 2, 2])


def test_segment_mean_of_integers_truncates_toward_zero():
    assert _np(tf.math.segment_mean(tf.constant([-3, 0, 7, 0]), [0, 0, 1, 1])).tolist() == [-1, 3]


UNSORTED = {  # TF 2.21: data D, ids [0, 3, 0, -1], 4 segments; int and uint8 data [1, 5, 3]
    "unsorted_segment_max": ([[5, 6], [F(-3.4028235e38)] * 2, [F(-3.4028235e38)] * 2, [3, 4]],
                             [5, -2147483648, 3, -2147483648], [5, 0, 3, 0]),
    "unsorted_segment_min": ([[1, 2], [F(3.4028235e38)] * 2, [F(3.4028235e38)] * 2, [3, 4]],
                             [1, 2147483647, 3, 2147483647], [1, 255, 3, 255]),
    "unsorted_segment_prod": ([[5, 12], [1, 1], [1, 1], [3, 4]], [5, 1, 3, 1], [5, 1, 3, 1]),
    "unsorted_segment_sum": ([[6, 8], [0, 0], [0, 0], [3, 4]], [6, 0, 3, 0], [6, 0, 3, 0]),
    "unsorted_segment_mean": ([[3, 4], [0, 0], [0, 0], [3, 4]], [3, 0, 3, 0], [3, 0, 3, 0]),
}
MEAN_DTYPES = {"int32": tf.float64, "uint8": tf.float32}  # TF's true division


@pytest.mark.parametrize("op", sorted(UNSORTED))
def test_unsorted_segments_match_tensorflow(op):
    fn = getattr(tf.math, op)
    floats, ints, uint8s = UNSORTED[op]
    out = fn(D, tf.constant([0, 3, 0, -1]), 4)
    assert out.dtype == tf.float32 and np.array_equal(_np(out), np.array(floats, F))
    for dtype, want in ((tf.int32, ints), (tf.uint8, uint8s)):
        out = fn(tf.constant([1, 5, 3], dtype), tf.constant([0, 0, 2]), 4)
        assert _np(out).tolist() == want
        expected = MEAN_DTYPES[dtype.name] if op.endswith("mean") else dtype
        assert out.dtype == expected
    wording = "UnsortedSegmentSum" if op.endswith("mean") else \
        "UnsortedSegment" + op.split("_")[-1].capitalize()
    with pytest.raises(InvalidArgumentError,
                       match=rf"segment_ids\[1\] = 4 is out of range \[0, 4\).*{wording}"):
        _np(fn(D, tf.constant([0, 4, 0, 1]), 4))  # (on a GPU the error comes at the sync)


def test_unsorted_segment_extrema_details():
    # multi-dimensional ids; float16's lowest value for an empty segment (TF 2.21)
    out = tf.math.unsorted_segment_max(tf.constant([[1., 2], [3, 4]]), [[0, 1], [1, 1]], 2)
    assert _np(out).tolist() == [1, 4]
    out = tf.math.unsorted_segment_max(tf.constant([1., 2], tf.float16), [0, 0], 2)
    assert _np(out).tolist() == [2, -65504] and out.dtype == tf.float16
    # complex products are TF's; complex max is not (InvalidArgumentError in TF too)
    assert _np(tf.math.unsorted_segment_prod(tf.constant([1j, 2]), [0, 0], 1)).tolist() == [2j]
    with pytest.raises(InvalidArgumentError, match="UnsortedSegmentMax"):
        tf.math.unsorted_segment_max(tf.constant([1j, 2]), [0, 0], 1)
    with pytest.raises(InvalidArgumentError, match="SegmentMax"):
        tf.math.segment_max(tf.constant([True, False]), [0, 0])


def test_unsorted_segment_sqrt_n_matches_tensorflow():
    out = tf.math.unsorted_segment_sqrt_n(D, [0, 3, 0, -1], 4)
    np.testing.assert_allclose(_np(out), [[4.242641, 5.656854], [0, 0], [0, 0], [3, 4]],
                               rtol=1e-6)
    with pytest.raises(InvalidArgumentError, match="Value for attr 'T' of int32"):
        tf.math.unsorted_segment_sqrt_n(tf.constant([1, 5, 3]), [0, 0, 2], 4)


X = [1., 3., 3., 2., 0., 5.]
SEG_GRADS = {  # TF 2.21: L = sum(op(X, [0,0,0,1,1,1]) * [1, 2]) (and [1,2,3] over 3 segments
    # with ids [0,0,0,1,1,-1] for the unsorted forms)
    "segment_max": [0, .5, .5, 0, 0, 2],
    "segment_min": [1, 0, 0, 0, 2, 0],
    "segment_prod": [9, 3, 3, 0, 20, 0],
    "segment_mean": [1 / 3] * 3 + [2 / 3] * 3,
    "unsorted_segment_max": [0, .5, .5, 2, 0, 0],
    "unsorted_segment_min": [1, 0, 0, 0, 2, 0],
    "unsorted_segment_prod": [9, 3, 3, 0, 4, 0],
}


@pytest.mark.parametrize("op", sorted(SEG_GRADS))
def test_segment_gradients_match_tensorflow(op):
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        if op.startswith("unsorted"):
            y = getattr(tf.math, op)(x, [0, 0, 0, 1, 1, -1], 3) * tf.constant([1., 2., 3.])
        else:
            y = getattr(tf.math, op)(x, [0, 0, 0, 1, 1, 1]) * tf.constant([1., 2.])
        loss = tf.reduce_sum(y)
    np.testing.assert_allclose(_np(tape.gradient(loss, x)), SEG_GRADS[op], rtol=1e-6)


def test_segment_prod_gradient_with_zeros_matches_tensorflow():
    x = tf.constant([0., 0., 3., 0., 2., 5.])  # two zeros: no gradient; one zero: the rest
    for fn in (lambda v: tf.math.segment_prod(v, [0, 0, 0, 1, 1, 1]),
               lambda v: tf.math.unsorted_segment_prod(v, [0, 0, 0, 1, 1, 1], 2)):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(fn(x) * tf.constant([1., 2.]))
        assert _np(tape.gradient(loss, x)).tolist() == [0, 0, 0, 20, 0, 0]


@pytest.mark.parametrize("fn", [
    lambda d: tf.math.segment_max(d, [0, 0, 1, 3]),
    lambda d: tf.math.segment_prod(d, [0, 1, 1, 1]),
    lambda d: tf.math.segment_mean(d, [0, 0, 2, 2]),
    lambda d: tf.math.unsorted_segment_min(d, [1, 0, 1, -1], 2),
    lambda d: tf.math.unsorted_segment_prod(d, [2, 2, 0, 2], 3),
    lambda d: tf.math.unsorted_segment_sqrt_n(d, [1, 1, 0, 1], 2),
], ids=["segment_max", "segment_prod", "segment_mean", "unsorted_min", "unsorted_prod",
        "sqrt_n"])
def test_segment_gradients_match_finite_differences(fn):
    data = np.random.default_rng(3).uniform(0.5, 2.0, (4, 3)) * np.array([1, -1, 1])
    check_gradient(fn, [data])


def test_traced_segments_match_eager_and_leave_the_row_count_unknown():
    fn = tf.function(lambda d, i: [tf.math.segment_max(d, i), tf.math.segment_mean(d, i),
                                   tf.math.unsorted_segment_prod(d, i, 3)])
    concrete = fn.get_concrete_function(tf.TensorSpec([None, 2], tf.float32),
                                        tf.TensorSpec([None], tf.int32))
    assert [tuple(o.shape) for o in concrete.structured_outputs] == [(None, 2), (None, 2), (3, 2)]
    ids = tf.constant(IDS)
    for got, want in zip(fn(D, ids), [tf.math.segment_max(D, ids), tf.math.segment_mean(D, ids),
                                      tf.math.unsorted_segment_prod(D, ids, 3)]):
        assert np.array_equal(_np(got), _np(want))


# -----------------------------------------------------------------------------------------------
# unique, unique_with_counts, bincount
# -----------------------------------------------------------------------------------------------

def test_unique_and_counts_match_tensorflow():
    y, idx, count = tf.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8])
    assert _np(y).tolist() == [1, 2, 4, 7, 8] and _np(idx).tolist() == [0, 0, 1, 2, 2, 2, 3, 4, 4]
    assert _np(count).tolist() == [2, 1, 3, 1, 2] and count.dtype == idx.dtype == tf.int32
    y, idx = tf.unique(tf.constant([3., 1, 3]), out_idx=tf.int64)
    assert _np(y).tolist() == [3, 1] and idx.dtype == tf.int64 and _np(idx).tolist() == [0, 1, 0]
    assert tf.unique_with_counts([1, 1, 2], out_idx=tf.int64).count.dtype == tf.int64
    assert _np(tf.unique(tf.constant(["a", "b", "a"])).y).tolist() == [b"a", b"b"]
    nan = tf.unique(tf.constant([np.nan, 1., np.nan]))  # NaN != NaN: each its own entry
    assert _np(nan.idx).tolist() == [0, 1, 2]
    assert _np(tf.unique(tf.constant([0., -0., 1.])).idx).tolist() == [0, 0, 1]
    assert type(tf.unique([1])).__name__ == "Unique"
    with pytest.raises(InvalidArgumentError, match="unique expects a 1D vector"):
        tf.unique([[1, 2]])
    with pytest.raises(InvalidArgumentError, match="'out_idx' of float32 is not in the list"):
        tf.unique_with_counts([1], out_idx=tf.float32)


def test_unique_has_no_gradient_and_an_unknown_length_when_traced():
    x = tf.constant([1., 2., 1.])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.unique(x).y
    assert tape.gradient(y, x) is None
    fn = tf.function(lambda v: tf.unique(v).y)
    assert tuple(fn.get_concrete_function(tf.TensorSpec([None], tf.int32)).structured_outputs
                 .shape) == (None,)
    assert _np(fn(tf.constant([5, 5, 2]))).tolist() == [5, 2]


BINCOUNT = [  # (kwargs, TF 2.21's values, dtype)
    (dict(arr=[1, 1, 2, 3, 2, 4, 4, 5]), [0, 2, 2, 1, 2, 1], tf.int32),
    (dict(arr=[1, 1, 2], weights=[.5, 1., 2.]), [0, 1.5, 2], tf.float32),
    (dict(arr=[1, 1, 9], minlength=4, maxlength=5), [0, 2, 0, 0, 0], tf.int32),
    (dict(arr=[1, 1, 9], maxlength=2), [0, 2], tf.int32),
    (dict(arr=[1, 1, 2], dtype=tf.float32), [0, 2, 1], tf.float32),
    (dict(arr=[1, 1, 2], dtype=tf.int64), [0, 2, 1], tf.int64),
    (dict(arr=np.zeros(0, np.int32)), [], tf.int32),
    (dict(arr=[[1, 1], [2, 0]]), [1, 2, 1], tf.int32),
    (dict(arr=[[1, 1], [2, 0]], axis=-1), [[0, 2, 0], [1, 0, 1]], tf.int32),
    (dict(arr=[[1, 1], [2, 0]], axis=-1, binary_output=True), [[0, 1, 0], [1, 0, 1]], tf.int32),
    (dict(arr=[1, 1, 2], binary_output=True), [0, 1, 1], tf.int32),
    (dict(arr=[1., 2.]), [0, 1, 1], tf.int32),
    (dict(arr=[1, 2], weights=[3, 4]), [0, 3, 4], tf.int32),
    (dict(arr=[1, 2], weights=[3., 4.], dtype=tf.int64), [0, 3, 4], tf.float32),
]


@pytest.mark.parametrize("kwargs,values,dtype", BINCOUNT)
def test_bincount_matches_tensorflow(kwargs, values, dtype):
    out = tf.math.bincount(**kwargs)
    assert out.dtype == dtype and _np(out).tolist() == values


def test_bincount_errors_are_tensorflows():
    with pytest.raises(InvalidArgumentError, match="Input arr must be non-negative!"):
        tf.math.bincount([1, -1, 2])
    with pytest.raises(InvalidArgumentError, match="`weights` must be the same shape as `arr`"):
        tf.math.bincount([1, 2], weights=[1.])
    with pytest.raises(ValueError, match="`binary_output` and `weights` are mutually exclusive"):
        tf.math.bincount([1, 2], weights=[3., 4.], binary_output=True)
    with pytest.raises(ValueError, match="Only 0 and -1 are currently supported"):
        tf.math.bincount([[1, 1]], axis=1)


def test_traced_bincount_matches_eager():
    fn = tf.function(lambda v: tf.math.bincount(v, minlength=3))
    assert _np(fn(tf.constant([4, 1, 1]))).tolist() == [0, 2, 0, 0, 1]
    assert _np(fn(tf.constant([0]))).tolist() == [1, 0, 0]


# -----------------------------------------------------------------------------------------------
# confusion_matrix, in_top_k, top_k, sort
# -----------------------------------------------------------------------------------------------

def test_confusion_matrix_matches_tensorflow():
    m = tf.math.confusion_matrix([1, 2, 4], [2, 2, 4])
    assert m.dtype == tf.int32 and m.shape == (5, 5)
    want = np.zeros((5, 5), int)
    want[1, 2] = want[2, 2] = want[4, 4] = 1
    assert np.array_equal(_np(m), want)
    assert tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], num_classes=6).shape == (6, 6)
    weighted = _np(tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], weights=[.5, 1., 2.]))
    assert weighted[1, 2] == 0 and weighted[2, 2] == 1 and weighted[4, 4] == 2  # cast to int32
    w64 = tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], weights=[1, 2, 3], dtype=tf.int64)
    assert w64.dtype == tf.int64 and _np(w64)[4, 4] == 3
    assert tf.math.confusion_matrix([1., 2.], [1., 2.]).shape == (3, 3)
    traced = tf.function(lambda a, b: tf.math.confusion_matrix(a, b))
    assert np.array_equal(_np(traced(tf.constant([1, 2, 4]), tf.constant([2, 2, 4]))), want)


@pytest.mark.parametrize("labels,predictions,num_classes,message", [
    ([1, -2, 4], [2, 2, 4], None, "`labels` contains negative values"),
    ([1, 2, 4], [2, 2, 4], 3, "`labels` out of bound"),
    ([1, 2, 1], [2, 2, 4], 3, "`predictions` out of bound"),
    ([1, 2, 4], [2, 2], None, r"Shapes of all inputs must match: values\[0\].shape = \[3\] != "
                              r"values\[1\].shape = \[2\]"),
])
def test_confusion_matrix_errors_are_tensorflows(labels, predictions, num_classes, message):
    with pytest.raises(InvalidArgumentError, match=message):
        tf.math.confusion_matrix(labels, predictions, num_classes=num_classes)


P = tf.constant([[.1, .3, .3, .2], [.1, .5, .5, 0], [np.nan, .1, .2, .3], [.1, .2, np.inf, 0]])


def test_in_top_k_matches_tensorflow():
    assert _np(tf.math.in_top_k([3, 1, 0, 2], P, 2)).tolist() == [False, True, False, False]
    assert _np(tf.math.in_top_k([3, 1, 3, 2], P, 3)).tolist() == [True, True, False, False]
    two = tf.constant([[.1, .3], [.1, .5]])
    assert _np(tf.math.in_top_k([5, -1], two, 1)).tolist() == [False, False]
    assert _np(tf.math.in_top_k([0, 1], two, 0)).tolist() == [False, False]
    assert _np(tf.math.in_top_k([0, 1], two, 5)).tolist() == [True, True]
    assert _np(tf.nn.in_top_k(tf.constant([0], tf.int64), [[.1, .3]], 1)).tolist() == [False]
    fn = tf.function(lambda t, p: tf.math.in_top_k(t, p, 2))
    assert _np(fn(tf.constant([3, 1, 0, 2]), P)).tolist() == [False, True, False, False]
    with pytest.raises(InvalidArgumentError, match="expected to be a float tensor but is a "
                                                   "double tensor"):
        tf.math.in_top_k([0, 1], tf.constant([[.1, .3], [.1, .5]], tf.float64), 1)
    with pytest.raises(InvalidArgumentError, match="First dimension of predictions 2 must match "
                                                   "length of targets 3"):
        tf.math.in_top_k([0, 1, 1], two, 1)
    with pytest.raises(InvalidArgumentError, match="predictions must be 2-dimensional"):
        tf.math.in_top_k([0], [.1, .3], 1)


def test_top_k_and_sorting_break_ties_as_tensorflow():
    x = tf.constant([[3., 1., 3., 2., 1.], [0., 0., 5., 5., 0.]])
    top = tf.math.top_k(x, 3)
    assert _np(top.values).tolist() == [[3, 3, 2], [5, 5, 0]]
    assert _np(top.indices).tolist() == [[0, 2, 3], [2, 3, 0]]
    assert _np(tf.argsort(x)).tolist() == [[1, 4, 3, 0, 2], [0, 1, 4, 2, 3]]
    assert _np(tf.argsort(x, direction="DESCENDING")).tolist() == [[0, 2, 3, 1, 4],
                                                                   [2, 3, 0, 1, 4]]
    assert _np(tf.sort(x, axis=0, direction="DESCENDING")).tolist() == [[3, 1, 5, 5, 1],
                                                                       [0, 0, 3, 2, 0]]
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.math.top_k(x, 2).values * tf.constant([[1., 2.], [3., 4.]]))
    assert _np(tape.gradient(loss, x)).tolist() == [[1, 0, 2, 0, 0], [0, 0, 3, 4, 0]]


# -----------------------------------------------------------------------------------------------
# tensor_scatter_nd_update / max / min
# -----------------------------------------------------------------------------------------------

T = tf.constant([1., 2., 3., 4.])


def test_tensor_scatter_updates_match_tensorflow():
    assert _np(tf.tensor_scatter_nd_update(T, [[1], [3]], [9., 10.])).tolist() == [1, 9, 3, 10]
    assert _np(tf.tensor_scatter_nd_update(T, [[1], [1]], [9., 10.])).tolist() == [1, 10, 3, 4]
    assert _np(tf.tensor_scatter_nd_max(T, [[1], [3], [1]], [0., 10., 5.])).tolist() == \
        [1, 5, 3, 10]
    assert _np(tf.tensor_scatter_nd_min(T, [[1], [3], [1]], [0., 10., 5.])).tolist() == \
        [1, 0, 3, 4]
    assert _np(tf.tensor_scatter_nd_update(T, [[1]], [9])).tolist() == [1, 9, 3, 4]
    assert _np(tf.tensor_scatter_nd_update(tf.zeros([2, 3]), [[1]], [[1., 2, 3]])).tolist() == \
        [[0, 0, 0], [1, 2, 3]]
    assert _np(tf.tensor_scatter_nd_max(tf.constant([1, 2]), [[0]], [5])).tolist() == [5, 2]
    assert _np(tf.tensor_scatter_nd_update(tf.constant(["a", "b"]), [[0]], ["z"])).tolist() == \
        [b"z", b"b"]
    assert _np(tf.tensor_scatter_nd_update(tf.constant([True, False]), [[0]],
                                           [False])).tolist() == [False, False]
    with pytest.raises(InvalidArgumentError, match=r"indices\[0\] = \[5\] does not index into "
                                                   r"shape \[4\].*TensorScatterUpdate"):
        _np(tf.tensor_scatter_nd_update(T, [[5]], [9.]))
    with pytest.raises(InvalidArgumentError, match=r"indices\[0\] = \[-1\] does not index into "
                                                   r"shape \[4\].*TensorScatterMin"):
        _np(tf.tensor_scatter_nd_min(T, [[-1]], [9.]))
    with pytest.raises(InvalidArgumentError, match="Outer dimensions of indices and update must "
                                                   r"match. Indices shape: \[1,1\], updates "
                                                   r"shape:\[2\]"):
        _np(tf.tensor_scatter_nd_update(T, [[1]], [9., 3.]))


@pytest.mark.parametrize("op,updates,grads", [  # TF 2.21: L = sum(out * [1, 2, 3, 4])
    ("update", [0., 10., 2.], [[0, 0, 3, 0], [2, 4, 1]]),
    ("max", [0., 10., 2.], [[0, 2, 3, 0], [0, 4, 1]]),
    ("min", [0., 10., 2.], [[1, 0, 3, 4], [2, 0, 0]]),
    ("max", [2., 10., 2.], [[0, 1, 3, 0], [1, 4, 1]]),  # a tie shares the gradient
])
def test_tensor_scatter_gradients_match_tensorflow(op, updates, grads):
    u = tf.constant(updates)
    with tf.GradientTape() as tape:
        tape.watch([T, u])
        out = getattr(tf, f"tensor_scatter_nd_{op}")(T, [[1], [3], [0]], u)
        loss = tf.reduce_sum(out * tf.constant([1., 2., 3., 4.]))
    assert [_np(g).tolist() for g in tape.gradient(loss, [T, u])] == grads


# -----------------------------------------------------------------------------------------------
# repeat, saturate_cast, cumulative_logsumexp, loss scaling
# -----------------------------------------------------------------------------------------------

M = tf.constant([[1, 2], [3, 4]])


@pytest.mark.parametrize("args,want", [
    ((M, 2), [1, 1, 2, 2, 3, 3, 4, 4]),
    ((M, [1, 2], 0), [[1, 2], [3, 4], [3, 4]]),
    ((M, 3, 1), [[1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4]]),
    ((M, [0, 2], -1), [[2, 2], [4, 4]]),
    ((M, [1, -1], 0), [[1, 2]]),
    ((M, [2], 0), [[1, 2], [1, 2], [3, 4], [3, 4]]),
    ((tf.constant(3), 2), [3, 3]),
    ((tf.constant(3), 2, 0), [3, 3]),
    ((tf.constant(["a", "b"]), 2), [b"a", b"a", b"b", b"b"]),
])
def test_repeat_matches_tensorflow(args, want):
    assert _np(tf.repeat(*args)).tolist() == want


def test_repeat_errors_gradient_and_tracing():
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        tf.repeat(M, [1, 2, 3], axis=0)
    with pytest.raises(InvalidArgumentError, match="Expected multiples\\[1\\] >= 0, but got -1"):
        tf.repeat(M, -1, axis=0)
    with pytest.raises(ValueError, match="axis=2 out of bounds: expected -2<=axis<2"):
        tf.repeat(M, 2, axis=2)
    with pytest.raises(TypeError, match=r"Argument `tensor` \(name: repeats\) must be of type "
                                        "integer"):
        tf.repeat(M, 2.0, axis=0)
    with pytest.raises(ValueError, match=r"Shape \(1, 2\) must have rank at most 1"):
        tf.repeat(M, [[1, 2]], axis=0)
    x = tf.constant([1., 2., 3.])
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.repeat(x, [1, 0, 3]) * tf.range(4, dtype=tf.float32))
    assert _np(tape.gradient(loss, x)).tolist() == [0, 0, 6]  # TF 2.21, a dense tensor
    fn = tf.function(lambda v, r: tf.repeat(v, r, axis=0),
                     input_signature=[tf.TensorSpec([None, 2], tf.int32),
                                      tf.TensorSpec([], tf.int32)])
    assert _np(fn(M, tf.constant(2))).tolist() == [[1, 2], [1, 2], [3, 4], [3, 4]]
    check_gradient(lambda v: tf.repeat(v, [2, 1], axis=1), [np.arange(6.).reshape(3, 2)])


@pytest.mark.parametrize("values,src,dst,want", [  # TF 2.21
    ([-300., 1.7, 300., np.nan, np.inf], tf.float32, tf.int8, [-128, 1, 127, 0, 127]),
    ([-3., 1.7, 300.], tf.float32, tf.uint8, [0, 1, 255]),
    ([-3, 7, 300], tf.int32, tf.uint8, [0, 7, 255]),
    ([-1e30, 1e30], tf.float32, tf.int64, [-2 ** 63, -2 ** 63]),  # TF's bound is 2**63: wraps
    ([-1e30, 1e30, 2147483520.], tf.float32, tf.int32, [-2 ** 31, 2147483520, 2147483520]),
    ([-1e30, 1e30, 70000.], tf.float64, tf.float16, [-65504, 65504, 65504]),
    ([1 + 2j], tf.complex128, tf.float32, [1]),
    ([1e10 + 2j], tf.complex128, tf.int32, [2 ** 31 - 1]),
    ([100000], tf.int64, tf.float16, [65504]),
    ([200], tf.uint8, tf.int8, [127]),
    ([-5], tf.int64, tf.uint64, [0]),
    ([3], tf.int32, tf.float32, [3]),
])
def test_saturate_cast_matches_tensorflow(values, src, dst, want):
    out = tf.saturate_cast(tf.constant(values, src), dst)
    assert out.dtype == dst and _np(out).tolist() == want


def test_saturate_cast_rejects_bool_and_passes_the_gradient():
    with pytest.raises(TypeError, match="Cannot find minimum value of <dtype: 'bool'>"):
        tf.saturate_cast(tf.constant([True]), tf.int8)
    x = tf.constant([-2., 0.5, 300.])
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.cast(tf.saturate_cast(x, tf.float16), tf.float32))
    assert _np(tape.gradient(loss, x)).tolist() == [1, 1, 1]  # TF 2.21


C = tf.constant([[1., 2., 3.], [-1e3, 0., 1e3]])


@pytest.mark.parametrize("kwargs,want", [  # TF 2.21
    (dict(axis=1), [[1, 2.3132617, 3.4076061], [-1000, 0, 1000]]),
    (dict(axis=1, exclusive=True), [[-np.inf, 1, 2.3132617], [-np.inf, -1000, 0]]),
    (dict(axis=1, reverse=True), [[3.4076061, 3.3132617, 3], [1000, 1000, 1000]]),
    (dict(axis=0, exclusive=True, reverse=True), [[-1000, 0, 1000], [-np.inf] * 3]),
])
def test_cumulative_logsumexp_matches_tensorflow(kwargs, want):
    np.testing.assert_allclose(_np(tf.math.cumulative_logsumexp(C, **kwargs)), want, rtol=1e-6)
    traced = tf.function(lambda v: tf.math.cumulative_logsumexp(v, **kwargs))
    np.testing.assert_array_equal(_np(traced(C)), _np(tf.math.cumulative_logsumexp(C, **kwargs)))


def test_cumulative_logsumexp_edges_and_gradient():
    out = tf.math.cumulative_logsumexp(tf.constant([-np.inf, np.inf, 1., np.nan, 1.]))
    np.testing.assert_array_equal(_np(out), [-np.inf, np.inf, np.inf, np.nan, np.nan])
    assert tf.math.cumulative_logsumexp(tf.constant([1., 2.], tf.float16)).dtype == tf.float16
    with pytest.raises(InvalidArgumentError, match="CumulativeLogsumexp"):
        tf.math.cumulative_logsumexp(tf.constant([1, 2]))
    x = tf.constant([[1., 2., 3.], [-3., 0., 1.]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.math.cumulative_logsumexp(x, axis=1, exclusive=True, reverse=True)
        loss = tf.reduce_sum(y * tf.constant([[1., -2., 3.], [4, 5, -6]]))
    np.testing.assert_allclose(_np(tape.gradient(loss, x)),
                               [[0, 0.2689414, -1.2689414], [0, 1.0757656, 7.924235]], rtol=1e-5)
    check_gradient(lambda v: tf.math.cumulative_logsumexp(v, axis=0), [np.linspace(-3, 40, 8)])


def test_loss_scaling_matches_tensorflow():
    loss = tf.constant([1., 2., 3., 6.])
    assert float(tf.nn.compute_average_loss(loss)) == 3.0
    assert float(tf.nn.compute_average_loss(loss, sample_weight=[1., 0., 1., .5])) == 1.75
    assert float(tf.nn.compute_average_loss(loss, sample_weight=2.)) == 6.0
    assert float(tf.nn.compute_average_loss(loss, global_batch_size=8)) == 1.5
    assert float(tf.nn.compute_average_loss(tf.constant([[1., 2.], [3., 6.]]))) == 6.0
    assert float(tf.nn.compute_average_loss(loss, global_batch_size=0)) == 0.0
    assert float(tf.nn.compute_average_loss(tf.zeros([0]))) == 0.0
    assert tf.nn.compute_average_loss(tf.constant([1, 2])).dtype == tf.float64
    with pytest.raises(ValueError, match="Expected a tensor with at least rank 1"):
        tf.nn.compute_average_loss(tf.constant(3.))
    with pytest.raises(TypeError, match="global_batch_size must be an integer"):
        tf.nn.compute_average_loss(loss, global_batch_size=2.5)
    with pytest.raises(InvalidArgumentError, match="global_batch_size must be non-negative"):
        tf.nn.compute_average_loss(loss, global_batch_size=-2)
    assert float(tf.nn.scale_regularization_loss(tf.constant([1., 2.]))) == 3.0
    assert float(tf.nn.scale_regularization_loss([tf.constant(1.), tf.constant(2.)])) == 3.0
    assert tf.nn.scale_regularization_loss(tf.constant([1, 2])).dtype == tf.float64


def test_complex_matches_tensorflow():
    z = tf.complex(tf.constant([1., np.inf]), tf.constant([np.inf, 2.]))
    assert z.dtype == tf.complex64 and _np(z).tolist() == [complex(1, np.inf), complex(np.inf, 2)]
    z = tf.dtypes.complex(tf.constant([1.], tf.float64), tf.constant([[2.], [3.]], tf.float64))
    assert z.dtype == tf.complex128 and _np(z).tolist() == [[1 + 2j], [1 + 3j]]
    for a, b in (([1], [2]), (tf.constant([1.]), tf.constant([1.], tf.float64))):
        with pytest.raises(TypeError, match="The `real` and `imag` components have incorrect "
                                            "types"):
            tf.complex(a, b)
    x, y = tf.constant([1., 2.]), tf.constant(3.)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        w = tf.constant([1 + 2j, 3 - 1j], tf.complex64)
        loss = tf.reduce_sum(tf.math.real(tf.complex(x, y) * w))
    gx, gy = tape.gradient(loss, [x, y])
    assert _np(gx).tolist() == [1, 3] and float(gy) == -1  # TF 2.21
