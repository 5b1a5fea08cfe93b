"""Segment reductions against numpy (np.add.at), TensorFlow's dropped negative ids and range
errors, traced against eager."""

import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager as tf
from eager.errors import InvalidArgumentError
from eager.ops.scatter_add import scatter_add


@settings(max_examples=30)
@given(rows=st.integers(0, 6), num_segments=st.integers(1, 4), width=st.integers(1, 3),
       seed=st.integers(0, 1000))
def test_unsorted_segment_sum_and_mean_match_numpy(rows, num_segments, width, seed):
    rng = np.random.default_rng(seed)
    data = rng.normal(size=(rows, width))
    ids = rng.integers(-1, num_segments, rows)
    expected = np.zeros((num_segments, width))
    np.add.at(expected, ids[ids >= 0], data[ids >= 0])
    got = tf.math.unsorted_segment_sum(data, ids, num_segments)
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)
    counts = np.bincount(ids[ids >= 0], minlength=num_segments)[:, None]
    np.testing.assert_allclose(tf.math.unsorted_segment_mean(data, ids, num_segments).numpy(),
                               expected / np.maximum(counts, 1), atol=1e-12)


def test_segment_sum_of_sorted_ids_and_errors():
    data = np.arange(10.0).reshape(5, 2)
    np.testing.assert_array_equal(tf.math.segment_sum(data, [0, 0, 1, 3, 3]).numpy(),
                                  [[2, 4], [4, 5], [0, 0], [14, 16]])
    with pytest.raises(InvalidArgumentError, match=r"segment_ids\[1\] = 4 is out of range"):
        # (`.numpy()`: a device whose kernels run later reports the failure there)
        tf.math.unsorted_segment_sum(data, [0, 4, 0, 0, 1], 3).numpy()
    with pytest.raises(InvalidArgumentError, match="does not start with"):
        tf.math.unsorted_segment_sum(data, [0, 1], 2)
    with pytest.raises(InvalidArgumentError, match="vector"):
        tf.math.segment_sum(data, [[0], [1]])


def test_segment_sums_trace_when_their_count_is_known():
    def pooled(x, ids):
        return tf.math.unsorted_segment_sum(x * 2.0, ids, 3)

    x = tf.constant(np.arange(8.0).reshape(4, 2))
    ids = tf.constant([2, 0, 2, 1])
    np.testing.assert_array_equal(tf.function(pooled)(x, ids).numpy(), pooled(x, ids).numpy())
    # segment_sum's count is its last id plus one: known when the kernel runs, as in TensorFlow.
    sorted_ids = tf.constant([0, 0, 1, 3])
    traced = tf.function(lambda x, ids: tf.math.segment_sum(x, ids))
    assert traced.get_concrete_function(x, sorted_ids).graph.outputs[0].shape.as_list() == [
        None, 2]
    np.testing.assert_array_equal(traced(x, sorted_ids).numpy(),
                                  tf.math.segment_sum(x, sorted_ids).numpy())


_CUDA_ATOMIC = {np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64, np.float16,
                                      np.float32, np.float64)}


def _strict_add_at(target, flat, rows):
    """CuPy's add.at as far as dtypes go: an atomicAdd kernel, refusing dtypes CUDA has no
    atomics for (tests/test_cuda.py runs the real one)."""
    if target.dtype not in _CUDA_ATOMIC:
        raise TypeError(f"add.at does not support {target.dtype}")
    np.add.at(target, flat, rows)


@settings(max_examples=40)
@given(dtype=st.sampled_from([np.complex64, np.complex128, np.int8, np.int16, np.uint8,
                              np.uint16, np.bool_, np.float32, np.int64]),
       rows=st.integers(1, 7), width=st.integers(2, 3), seed=st.integers(0, 1000))
def test_scatter_add_without_cuda_atomics_matches_numpy_add_at(dtype, rows, width, seed):
    """The CuPy path of `scatter_add` for dtypes without CUDA atomics (complex as float pairs,
    narrow integers in 32 bits, wrapping as the narrow type; bool as a logical or), on a
    stand-in for CuPy that refuses those dtypes, against numpy's add.at."""
    rng = np.random.default_rng(seed)

    def draw(shape):  # large enough that int8 sums wrap
        values = rng.integers(-100, 100, shape)
        if dtype is np.bool_:
            return values % 3 == 0
        if np.dtype(dtype).kind == "c":
            return (values + 1j * rng.normal(size=shape)).astype(dtype)
        return values.astype(dtype)

    updates, flat = draw((rows, width)), rng.integers(0, 5, rows)
    contiguous = draw((5, width))
    transposed = np.ascontiguousarray(contiguous.T).T  # not C-contiguous: written back in place
    fake_cupy = types.SimpleNamespace(add=types.SimpleNamespace(at=_strict_add_at),
                                      ascontiguousarray=np.ascontiguousarray)
    for target in (contiguous, transposed):
        expected = target.copy()
        np.add.at(expected, flat, updates)
        scatter_add(fake_cupy, target, flat, updates)
        np.testing.assert_array_equal(target, expected)
