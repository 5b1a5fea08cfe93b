"""The segment/scatter extrema, TensorScatterUpdate and CumulativeLogsumexp kernels under CuPy's
semantics, without a GPU: each kernel runs with `xp` a numpy stand-in of CuPy
(`tests/cupy_semantics_stand_in.py`: CuPy's `ufunc.at` dtypes and float atomics, no
`logaddexp.accumulate`, repeated fancy writes keeping the first) and must give the CPU kernel's
results (bit for bit, or within rounding for the scan) and TensorFlow's goldens; the gradient
cases then run with the forward kernels on the stand-in."""

import itertools

import numpy as np
import pytest

import eager as tf
from eager.core.registry import get_op
from gradcheck import check_gradient

from cupy_semantics_stand_in import XP, device_array, on_host

_FLOATS = [np.float16, np.float32, np.float64]
_INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _values(dtype, n, seed=0):
    """n values of `dtype` with repeats, extremes, signed zeros, infinities and (floats) a
    NaN near the end; float64 ones that float32 cannot hold."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        v = rng.uniform(-3, 3, n) + 1e-9
        v[:6] = [0.0, -0.0, np.inf, -np.inf, np.finfo(dtype).max, np.finfo(dtype).min]
        v[3 * n // 4] = np.nan
        return rng.permutation(v).astype(dtype)
    info = np.iinfo(dtype)
    v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    v[:2] = [info.min, info.max]
    v[2:4] = v[4:6]  # ties
    return rng.permutation(v)


def _same(got, want):
    """Bit for bit, but any NaN equals any NaN."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":
        keep = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[keep]), np.signbit(want[keep]))


def _both(op_name, *arrays, **attrs):
    """The op's kernel on the stand-in (back on the host) and on numpy."""
    kernel = get_op(op_name).kernel
    on_gpu = kernel(XP, *[device_array(a) for a in arrays], **attrs)
    return on_host(on_gpu), kernel(np, *[np.array(a) for a in arrays], **attrs)


def _signed_zeros_apart(got, want):
    """Of equal zeros a GPU maximum keeps +0 and a minimum -0, where numpy's order keeps either:
    compare the values, and the signs elsewhere."""
    got, want = np.asarray(got), np.asarray(want)
    np.testing.assert_array_equal(got, want)
    keep = ~np.isnan(want) & (want != 0)
    np.testing.assert_array_equal(np.signbit(got[keep]), np.signbit(want[keep]))


@pytest.mark.parametrize("dtype", _FLOATS + _INTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op_name", ["UnsortedSegmentMax", "UnsortedSegmentMin"])
def test_unsorted_segment_extrema_on_cupy_match_the_cpu_for_every_dtype(op_name, dtype):
    data = _values(dtype, 48).reshape(16, 3)
    ids = np.random.default_rng(1).integers(-1, 5, 16).astype(np.int32)  # -1 drops; 5 is empty
    got, want = _both(op_name, data, ids, num_segments=6)
    _signed_zeros_apart(got, want)


@pytest.mark.parametrize("dtype", _FLOATS + _INTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op_name", ["SegmentMax", "SegmentMin"])
def test_sorted_segment_extrema_on_cupy_match_the_cpu_for_every_dtype(op_name, dtype):
    data = _values(dtype, 20, seed=2).reshape(10, 2)
    ids = np.array([0, 0, 0, 2, 2, 3, 3, 3, 3, 5], np.int64)  # 1 and 4 have no rows
    got, want = _both(op_name, data, ids)
    _signed_zeros_apart(got, want)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.uint8, np.int64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op_name", ["TensorScatterMax", "TensorScatterMin"])
def test_tensor_scatter_extrema_on_cupy_match_the_cpu(op_name, dtype):
    tensor = _values(dtype, 12, seed=3).reshape(4, 3)
    indices = np.array([[2], [0], [2], [2], [3]], np.int32)
    updates = _values(dtype, 15, seed=4).reshape(5, 3)
    got, want = _both(op_name, tensor, indices, updates)
    _signed_zeros_apart(got, want)


def test_float64_extrema_on_cupy_are_exact_and_a_nan_wins():
    # CuPy's float atomics would round 1 + 2**-40 to 1 and drop the NaN
    data = np.array([1 + 2.0**-40, 1.0, 0.5, np.nan, -2 - 2.0**-40, -2.0])
    ids = np.array([0, 0, 1, 1, 2, 2], np.int32)
    got, _ = _both("UnsortedSegmentMax", data, ids, num_segments=3)
    assert got[0] == 1 + 2.0**-40 and np.isnan(got[1]) and got[2] == -2.0
    got, _ = _both("SegmentMin", data, ids.astype(np.int64))
    assert got[0] == 1.0 and np.isnan(got[1]) and got[2] == -2 - 2.0**-40
    got, _ = _both("UnsortedSegmentMax", np.array([1.0, 2.0], np.float16), [0, 0],
                   num_segments=2)
    assert got.tolist() == [2, -65504] and got.dtype == np.float16  # TF 2.21


def test_tensor_scatter_update_on_cupy_keeps_the_last_of_repeated_indices():
    # the stand-in's fancy assignment keeps the first write, a GPU's may keep any
    tensor = np.array([1.0, 2.0, 3.0, 4.0])
    got, want = _both("TensorScatterUpdate", tensor, [[1], [1]], [9.0, 10.0])
    assert got.tolist() == want.tolist() == [1, 10, 3, 4]  # TF 2.21
    tensor = np.arange(12, dtype=np.int32).reshape(4, 3)
    indices = np.array([[3], [0], [3], [1], [0], [3]], np.int32)
    updates = np.arange(100, 118, dtype=np.int32).reshape(6, 3)
    got, want = _both("TensorScatterUpdate", tensor, indices, updates)
    _same(got, want)
    assert got[3].tolist() == [115, 116, 117] and got[0].tolist() == [112, 113, 114]


def test_the_stand_in_refuses_what_cupy_refuses():
    target = device_array([1, 2], np.float16)
    with pytest.raises(TypeError, match="maximum.at"):
        XP.maximum.at(target, device_array([0]), device_array([3], np.float16))
    with pytest.raises(NotImplementedError, match="accumulate"):
        XP.logaddexp.accumulate(device_array([1.0, 2.0]))
    target = device_array([0, 0, 0])
    target[device_array([1, 1])] = device_array([5, 6])
    assert on_host(target).tolist() == [0, 5, 0]  # the first write kept


C = [[1.0, 2.0, 3.0], [-1e3, 0.0, 1e3]]


@pytest.mark.parametrize("kwargs,want", [  # TF 2.21, as test_math_segments_and_counts
    (dict(axis=1, exclusive=False, reverse=False), [[1, 2.3132617, 3.4076061], [-1000, 0, 1000]]),
    (dict(axis=1, exclusive=True, reverse=False), [[-np.inf, 1, 2.3132617], [-np.inf, -1000, 0]]),
    (dict(axis=1, exclusive=False, reverse=True), [[3.4076061, 3.3132617, 3], [1000, 1000, 1000]]),
    (dict(axis=0, exclusive=True, reverse=True), [[-1000, 0, 1000], [-np.inf] * 3]),
])
def test_cumulative_logsumexp_on_cupy_matches_tensorflow(kwargs, want):
    got, _ = _both("CumulativeLogsumexp", np.array(C), **kwargs)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 9, 33])
@pytest.mark.parametrize("dtype", _FLOATS, ids=lambda d: np.dtype(d).name)
def test_cumulative_logsumexp_on_cupy_matches_the_cpu(dtype, n):
    x = np.random.default_rng(n).uniform(-30, 30, (3, n, 2)).astype(dtype)
    for axis, exclusive, reverse in itertools.product((1, 0, 2), (False, True), (False, True)):
        got, want = _both("CumulativeLogsumexp", x, axis=axis, exclusive=exclusive,
                          reverse=reverse)
        assert got.dtype == want.dtype and got.shape == want.shape
        tol = 2e-3 if dtype == np.float16 else 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_cumulative_logsumexp_on_cupy_keeps_infinities_and_stays_finite():
    x = np.array([-np.inf, np.inf, 1.0, np.nan, 1.0])
    got, want = _both("CumulativeLogsumexp", x, axis=0, exclusive=False, reverse=False)
    _same(got, want)
    _same(got, [-np.inf, np.inf, np.inf, np.nan, np.nan])  # TF 2.21
    got, _ = _both("CumulativeLogsumexp", np.full(7, -np.inf), axis=0, exclusive=True,
                   reverse=False)
    _same(got, np.full(7, -np.inf))  # -inf, never NaN
    big = np.array([800.0, 800.0, -800.0, 900.0], np.float64)  # exp would overflow
    got, want = _both("CumulativeLogsumexp", big, axis=0, exclusive=False, reverse=False)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    tiny = np.array([-800.0] * 4)  # exp would underflow to 0 and the log to -inf
    got, _ = _both("CumulativeLogsumexp", tiny, axis=0, exclusive=False, reverse=False)
    np.testing.assert_allclose(got, -800 + np.log([1.0, 2.0, 3.0, 4.0]), rtol=1e-15)


# -- the gradients, with the forward kernels on the stand-in ------------------------------------

_STAND_IN_OPS = ["SegmentMax", "SegmentMin", "UnsortedSegmentMax", "UnsortedSegmentMin",
                 "TensorScatterMax", "TensorScatterMin", "TensorScatterUpdate",
                 "CumulativeLogsumexp"]


@pytest.fixture
def kernels_on_the_stand_in(monkeypatch):
    """The ops above run their kernels on the stand-in, on the CPU device."""
    for name in _STAND_IN_OPS:
        op = get_op(name)

        def kernel(xp, *arrays, _kernel=op.kernel, **attrs):
            return on_host(_kernel(XP, *[device_array(a) for a in arrays], **attrs))
        monkeypatch.setattr(op, "kernel", kernel)


_SEGMENT_CASES = {
    "segment_max": lambda d: tf.math.segment_max(d, [0, 0, 2, 2]),
    "segment_min": lambda d: tf.math.segment_min(d, [0, 1, 1, 1]),
    "unsorted_max": lambda d: tf.math.unsorted_segment_max(d, [2, 0, 1, -1], 3),
    "unsorted_max_2d_ids": lambda d: tf.math.unsorted_segment_max(
        tf.reshape(d, [2, 2, 3]), np.array([[1, 0], [1, 1]]), 2),
    "unsorted_min": lambda d: tf.math.unsorted_segment_min(d, [1, 0, 1, -1], 2),
    "scatter_max": lambda d: tf.tensor_scatter_nd_max(d[:3], [[2], [0]], d[2:] * 0.5),
    "scatter_min": lambda d: tf.tensor_scatter_nd_min(d[:3], [[1], [2], [1]], d[1:] * 0.5),
    "cumulative_logsumexp": lambda d: tf.math.cumulative_logsumexp(d, axis=1),
    "cumulative_logsumexp_reverse": lambda d: tf.math.cumulative_logsumexp(  # not exclusive:
        d, axis=0, reverse=True),  # a -inf output has no finite difference
}


@pytest.mark.parametrize("case", sorted(_SEGMENT_CASES))
def test_gradients_with_kernels_on_cupy_match_finite_differences(kernels_on_the_stand_in, case):
    data = np.random.default_rng(3).uniform(0.5, 2.0, (4, 3)) * np.array([1, -1, 1])
    check_gradient(_SEGMENT_CASES[case], [data])


def test_tied_extrema_share_the_gradient_with_kernels_on_cupy(kernels_on_the_stand_in):
    x = tf.constant([1.0, 3.0, 3.0, 2.0, 0.0, 5.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.math.segment_max(x, [0, 0, 0, 1, 1, 1]) * tf.constant([1., 2.]))
    assert tape.gradient(loss, x).numpy().tolist() == [0, 0.5, 0.5, 0, 0, 2]  # TF 2.21
