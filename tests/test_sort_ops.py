"""sort, argsort and top_k: differential tests against an independent Python reference (stable,
ties by lower index, NaN largest), edge cases and bad inputs."""

from inspect import unwrap  # public functions wrap the ops' (traceback filtering)
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager
from eager.errors import InvalidArgumentError
from eager.ops import sort_ops
from tests.strategies import REAL_DTYPES, arrays, shapes

UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]


def _ref_order(row, descending):
    """Stable order of a 1-D sequence; NaN is larger than everything."""
    def key(i):
        v = row[i]
        nan = isinstance(v, float) and math.isnan(v)
        if descending:
            return (0 if nan else 1, 0 if nan else -v, i)
        return (1 if nan else 0, 0 if nan else v, i)

    return sorted(range(len(row)), key=key)


def _ref_argsort(x, axis, descending):
    moved = np.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    flat = moved.reshape(-1, n) if moved.size else np.zeros((0, n), x.dtype)
    out = np.array([_ref_order(row.tolist(), descending) for row in flat],
                   dtype=np.int64).reshape(moved.shape)
    return np.moveaxis(out, -1, axis)


@st.composite
def array_and_axis(draw, dtypes=REAL_DTYPES + UNSIGNED[1:], min_dims=1):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(shapes(min_dims=min_dims, max_dims=3, max_side=5))
    info_elements = None
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        # Extremes included: TensorFlow's negation tricks break on them, ours must not.
        info_elements = st.one_of(st.integers(int(info.min), int(info.max)),
                                  st.sampled_from([int(info.min), int(info.max), 0, 1]))
    x = draw(arrays(dtype, shape, info_elements))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    return x, axis


@given(array_and_axis(), st.sampled_from(["ASCENDING", "DESCENDING"]))
def test_sort_and_argsort_match_reference(data, direction):
    x, axis = data
    descending = direction == "DESCENDING"
    order = _ref_argsort(x, axis, descending)
    got_idx = eager.argsort(x, axis=axis, direction=direction)
    assert got_idx.dtype == eager.int32
    np.testing.assert_array_equal(got_idx.numpy(), order)
    got = eager.sort(x, axis=axis, direction=direction)
    assert got.dtype == eager.as_dtype(x.dtype) and got.shape == x.shape
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(x, order, axis=axis))


@given(array_and_axis(min_dims=1), st.data())
def test_top_k_matches_reference(data, draw):
    x, _ = data
    n = x.shape[-1]
    k = draw.draw(st.integers(0, n))
    order = _ref_argsort(x, -1, True)[..., :k]
    result = eager.math.top_k(x, k=k)
    assert result.indices.dtype == eager.int32
    assert result.values.shape == x.shape[:-1] + (k,)
    np.testing.assert_array_equal(result.indices.numpy(), order)
    np.testing.assert_array_equal(result.values.numpy(), np.take_along_axis(x, order, -1))


def test_sort_matches_numpy_for_floats():
    x = np.random.default_rng(0).normal(size=(4, 50)).astype(np.float32)
    np.testing.assert_array_equal(eager.sort(x).numpy(), np.sort(x))
    np.testing.assert_array_equal(eager.sort(x, axis=0).numpy(), np.sort(x, axis=0))
    np.testing.assert_array_equal(eager.sort(x, direction="DESCENDING").numpy(),
                                  -np.sort(-x))


def test_tf_docstring_examples():
    a = [1, 10, 26.9, 2.8, 166.32, 62.3]
    np.testing.assert_allclose(eager.sort(a).numpy(), [1, 2.8, 10, 26.9, 62.3, 166.32])
    np.testing.assert_array_equal(eager.argsort(a).numpy(), [0, 3, 1, 2, 5, 4])
    mat = [[3, 2, 1], [2, 1, 3], [1, 3, 2]]
    np.testing.assert_array_equal(eager.sort(mat, axis=0).numpy(),
                                  [[1, 1, 1], [2, 2, 2], [3, 3, 3]])
    np.testing.assert_array_equal(eager.argsort([[30, 20, 10], [20, 10, 30], [10, 30, 20]]),
                                  [[2, 1, 0], [1, 0, 2], [0, 2, 1]])


def test_ties_keep_original_order():
    x = [2, 1, 2, 1, 2]
    np.testing.assert_array_equal(eager.argsort(x).numpy(), [1, 3, 0, 2, 4])
    np.testing.assert_array_equal(eager.argsort(x, direction="DESCENDING").numpy(),
                                  [0, 2, 4, 1, 3])
    np.testing.assert_array_equal(eager.math.top_k(x, 3).indices.numpy(), [0, 2, 4])
    # -0.0 and 0.0 are equal: a tie.
    np.testing.assert_array_equal(eager.argsort([0.0, -0.0, 0.0]).numpy(), [0, 1, 2])


def test_nan_is_largest():
    x = np.array([1.0, np.nan, -np.inf, -np.nan, 3.0], np.float32)
    np.testing.assert_array_equal(eager.argsort(x).numpy(), [2, 0, 4, 1, 3])
    np.testing.assert_array_equal(eager.argsort(x, direction="DESCENDING").numpy(),
                                  [1, 3, 4, 0, 2])
    top = eager.math.top_k(x, 3)
    np.testing.assert_array_equal(top.indices.numpy(), [1, 3, 4])
    assert np.isnan(top.values.numpy()[:2]).all() and top.values.numpy()[2] == 3.0
    # Wherever the NaN is, it is selected (TensorFlow's eager kernel is position dependent).
    np.testing.assert_array_equal(eager.math.top_k([1.0, 2.0, 3.0, np.nan], 3).indices, [3, 2, 1])


class _RadixOrderXP:
    """numpy, except that argsort orders floats as a GPU radix sort does (CUB's, under CuPy):
    by their bits, sign-twiddled, with -0.0 read as 0.0. A NaN with the sign bit set then sorts
    before -inf, as it did on the H100."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def argsort(x, axis=-1, kind=None):
        if x.dtype.kind != "f":
            return np.argsort(x, axis=axis, kind="stable")
        x = np.where(x == 0, np.zeros_like(x), x)  # -0.0 -> 0.0
        bits = x.view(f"u{x.dtype.itemsize}")
        high = bits.dtype.type(1) << bits.dtype.type(8 * x.dtype.itemsize - 1)
        keys = np.where(bits & high, ~bits, bits | high)
        return np.argsort(keys, axis=axis, kind="stable")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_nan_of_either_sign_is_largest_under_a_radix_sort(dtype):
    x = np.array([1.0, np.nan, -np.inf, -np.nan, 3.0, -0.0, 0.0], dtype)
    fake = _RadixOrderXP()
    assert list(fake.argsort(x)) == [3, 2, 5, 6, 0, 4, 1]  # the GPU's order of the raw values
    values, order = sort_ops._sort_kernel(fake, x, 0, False)
    np.testing.assert_array_equal(order, [2, 5, 6, 0, 4, 1, 3])
    assert np.isnan(values[-2:]).all() and np.signbit(values[-1])  # NaNs keep their bits
    np.testing.assert_array_equal(sort_ops._sort_kernel(fake, x, 0, True)[1],
                                  [1, 3, 4, 0, 5, 6, 2])
    np.testing.assert_array_equal(sort_ops._top_k_kernel(fake, x, 3, eager.int32)[1], [1, 3, 4])


def test_unsigned_and_integer_extremes():
    x = np.array([255, 0, 7, 255, 1], np.uint8)
    np.testing.assert_array_equal(eager.sort(x).numpy(), [0, 1, 7, 255, 255])
    np.testing.assert_array_equal(eager.argsort(x, direction="DESCENDING").numpy(),
                                  [0, 3, 2, 4, 1])
    i = np.iinfo(np.int64)
    y = np.array([0, i.max, i.min, -1], np.int64)
    np.testing.assert_array_equal(eager.sort(y).numpy(), [i.min, -1, 0, i.max])
    np.testing.assert_array_equal(eager.math.top_k(y, 2).values.numpy(), [i.max, 0])


def test_top_k_result_type_and_namespaces():
    r = eager.math.top_k([[1, 5, 3]], k=2)
    assert isinstance(r, tuple) and r._fields == ("values", "indices")
    values, indices = r
    np.testing.assert_array_equal(values.numpy(), [[5, 3]])
    np.testing.assert_array_equal(indices.numpy(), [[1, 2]])
    assert eager.math.top_k([1, 2], index_type=eager.int64).indices.dtype == eager.int64
    assert eager.math.top_k([1.0, 2.0], k=eager.constant(1)).values.numpy().tolist() == [2.0]
    assert eager.math.top_k([3, 1], sorted=False).values.numpy().tolist() == [3]
    assert unwrap(eager.sort) is sort_ops.sort and unwrap(eager.math.top_k) is sort_ops.top_k
    assert eager.argsort([1, 0], stable=True).numpy().tolist() == [1, 0]


def test_empty_and_single_element():
    e = np.zeros((3, 0), np.float32)
    assert eager.sort(e).shape == (3, 0)
    assert eager.argsort(e, axis=0).shape == (3, 0)
    r = eager.math.top_k(e, 0)
    assert r.values.shape == (3, 0) and r.indices.shape == (3, 0)
    assert eager.sort([7]).numpy().tolist() == [7]


def test_records():
    assert sort_ops.SORT.num_outputs == 2 and sort_ops.TOP_K.num_outputs == 2
    assert not sort_ops.SORT.stateful


# -- bad inputs ------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [4, -1])
def test_top_k_bad_k(k):
    with pytest.raises(InvalidArgumentError, match="TopKV2"):
        eager.math.top_k([1, 2, 3], k=k)


def test_top_k_bad_arguments():
    with pytest.raises(InvalidArgumentError, match="TopKV2.*1-D"):
        eager.math.top_k(3.0)
    with pytest.raises(TypeError, match="TopKV2"):
        eager.math.top_k([1, 2], k=1.5)
    with pytest.raises(TypeError, match="TopKV2"):
        eager.math.top_k([1, 2], index_type=eager.float32)
    # TensorFlow 2.21 (verified): bool and complex are not in TopKV2's type list.
    with pytest.raises(InvalidArgumentError, match="TopKV2.*bool"):
        eager.math.top_k([True, False])
    with pytest.raises(InvalidArgumentError, match="TopKV2.*complex128"):
        eager.math.top_k([1 + 2j])


@pytest.mark.parametrize("junk", [object(), "str", None])
def test_junk_inputs(junk):
    for fn, name in [(eager.sort, "sort"), (eager.argsort, "argsort"),
                     (eager.math.top_k, "top_k")]:
        if isinstance(junk, str):  # a string tensor: TF 2.21 refuses its dtype
            with pytest.raises(InvalidArgumentError, match="dtype string"):
                fn(junk)
            continue
        with pytest.raises((TypeError, ValueError), match=name):
            fn(junk)


def test_sort_bad_arguments():
    with pytest.raises(InvalidArgumentError, match="Sort.*axis 2"):
        eager.sort([[1, 2]], axis=2)
    with pytest.raises(InvalidArgumentError, match="Sort.*axis -3"):
        eager.argsort([[1, 2]], axis=-3)
    with pytest.raises(InvalidArgumentError, match="Sort.*scalar"):
        eager.sort(1.0)
    with pytest.raises(ValueError, match="sort.*direction"):
        eager.sort([1], direction="ascending")
    with pytest.raises(ValueError, match="argsort.*axis"):
        eager.argsort([1], axis=[0])
    with pytest.raises(ValueError, match="sort.*axis"):
        eager.sort([1], axis="x")
    # TensorFlow 2.21 (verified): InvalidArgumentError (TF's sort runs Neg and TopKV2).
    with pytest.raises(InvalidArgumentError, match="Sort.*bool"):
        eager.sort([True, False])
    with pytest.raises(InvalidArgumentError, match="Sort.*complex"):
        eager.argsort([1j])


def test_sort_accepts_tensor_axis():
    x = [[3, 1], [2, 4]]
    np.testing.assert_array_equal(eager.sort(x, axis=eager.constant(0)).numpy(),
                                  [[2, 1], [3, 4]])
