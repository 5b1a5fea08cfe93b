"""Indexing and slicing: `Tensor.__getitem__`, strided_slice, slice, gather, gather_nd, scatter_nd
and IndexedSlices densification, differentially against numpy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager
from eager.errors import InvalidArgumentError
from eager.ops import slicing_ops

from strategies import NUMERIC_DTYPES, arrays, shapes

ALL_DTYPES = NUMERIC_DTYPES + [np.bool_]


def _same(result, expected):
    expected = np.asarray(expected)
    assert result.shape == expected.shape
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result.numpy(), expected)


# -----------------------------------------------------------------------------------------------
# Keys built from ints, slices, Ellipsis and None
# -----------------------------------------------------------------------------------------------

def _bound(d):
    return st.none() | st.integers(-d - 3, d + 3)


@st.composite
def basic_keys(draw, shape):
    """A numpy basic-indexing key valid for `shape`: ints in range, slices with any bounds and
    steps (negative included), at most one Ellipsis, any number of None."""
    rank = len(shape)
    kinds = draw(st.lists(st.sampled_from(["int", "slice", "slice", "new"]), max_size=rank + 2))
    consuming = [k for k in kinds if k != "new"]
    while len(consuming) > rank:
        kinds.remove(consuming.pop())
    ellipsis_at = draw(st.none() | st.integers(0, len(kinds)))
    if ellipsis_at is not None:
        kinds.insert(ellipsis_at, "ellipsis")
    # The input dimension each consuming item applies to.
    n_before = sum(1 for k in kinds[:ellipsis_at] if k in ("int", "slice")) \
        if ellipsis_at is not None else None
    n_total = sum(1 for k in kinds if k in ("int", "slice"))
    key, dim, seen = [], 0, 0
    for k in kinds:
        if k == "new":
            key.append(None)
            continue
        if k == "ellipsis":
            key.append(Ellipsis)
            dim = rank - (n_total - n_before)
            continue
        d = shape[dim]
        if k == "int" and d > 0:
            key.append(draw(st.integers(-d, d - 1)))
        else:
            step = draw(st.none() | st.integers(-3, 3).filter(bool))
            key.append(slice(draw(_bound(d)), draw(_bound(d)), step))
        dim += 1
        seen += 1
    return tuple(key)


@st.composite
def array_and_basic_key(draw):
    dtype = draw(st.sampled_from(ALL_DTYPES))
    shape = draw(shapes(max_dims=4))
    return draw(arrays(dtype, shape)), draw(basic_keys(shape))


@settings(max_examples=200)
@given(array_and_basic_key())
def test_getitem_matches_numpy_basic_indexing(case):
    arr, key = case
    t = eager.constant(arr)
    _same(t[key], arr[key])
    if len(key) == 1:
        _same(t[key[0]], arr[key[0]])


@settings(max_examples=50)
@given(array_and_basic_key())
def test_strided_slice_infers_partial_shapes(case):
    """Inference with every dimension unknown gives a shape compatible with the real one, and
    with known dimensions the exact one."""
    arr, key = case
    t = eager.constant(arr)
    out = t[key]
    op = slicing_ops.STRIDED_SLICE
    attrs = _attrs_of(key)
    spec = op.infer(eager.TensorSpec([None] * arr.ndim, t.dtype), **attrs)
    assert spec.shape.is_compatible_with(out.shape)
    assert op.infer(eager.TensorSpec(arr.shape, t.dtype), **attrs).shape == out.shape


def _attrs_of(key):
    """Strided-slice attrs for a basic key, built like TensorFlow's `_slice_helper`."""
    attrs = {"begin": [], "end": [], "strides": [], "begin_mask": 0, "end_mask": 0,
             "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}
    for i, k in enumerate(key):
        b, e, s = 0, 0, 1
        if k is None:
            attrs["new_axis_mask"] |= 1 << i
        elif k is Ellipsis:
            attrs["ellipsis_mask"] |= 1 << i
        elif isinstance(k, slice):
            attrs["begin_mask"] |= (k.start is None) << i
            attrs["end_mask"] |= (k.stop is None) << i
            b, e, s = k.start or 0, k.stop or 0, k.step or 1
        else:
            b, e = k, k + 1
            attrs["shrink_axis_mask"] |= 1 << i
        attrs["begin"].append(b)
        attrs["end"].append(e)
        attrs["strides"].append(s)
    return {k: tuple(v) if isinstance(v, list) else v for k, v in attrs.items()}


@settings(max_examples=50)
@given(array_and_basic_key())
def test_strided_slice_function_matches_getitem(case):
    arr, key = case
    attrs = _attrs_of(key)
    out = eager.strided_slice(arr, **attrs)
    _same(out, arr[key])


def test_getitem_examples():
    x = eager.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    a = x.numpy()
    _same(x[1], a[1])
    _same(x[-1, -1, -1], a[-1, -1, -1])
    _same(x[:, ::-1, 1:3], a[:, ::-1, 1:3])
    _same(x[..., None, ::-2], a[..., None, ::-2])
    _same(x[None, ..., 0], a[None, ..., 0])
    _same(x[5:], a[5:])  # empty
    _same(x[:, 3:0], a[:, 3:0])  # empty, positive step
    _same(x[..., 0:4:-1], a[..., 0:4:-1])  # empty, negative step
    _same(x[...], a)
    _same(x[()], a)
    assert x[0, 0, 0].shape == ()
    assert isinstance(x[0], eager.Tensor)


def test_getitem_scalar_tensors_and_tensor_bounds():
    x = eager.constant(np.arange(10))
    a = x.numpy()
    i = eager.constant(3)
    _same(x[i], a[3])
    _same(x[eager.constant(-2, dtype=eager.int64)], a[-2])
    _same(x[i:], a[3:])
    _same(x[eager.constant(8):i:eager.constant(-2)], a[8:3:-2])
    _same(x[np.int64(4)], a[4])
    _same(x[np.array(5)], a[5])


def test_getitem_on_scalar_tensor():
    s = eager.constant(2.5)
    _same(s[...], np.float32(2.5))
    _same(s[None], np.array([2.5], np.float32))
    _same(s[()], np.float32(2.5))
    with pytest.raises(InvalidArgumentError, match="StridedSlice"):
        s[0]


def test_iteration_uses_getitem():
    x = eager.constant([[1, 2], [3, 4]])
    rows = list(x)
    assert len(rows) == 2
    _same(rows[1], np.array([3, 4], np.int32))


# -----------------------------------------------------------------------------------------------
# Advanced (gathering) indices: beyond TensorFlow, numpy's semantics for one array per key
# -----------------------------------------------------------------------------------------------

@st.composite
def advanced_case(draw):
    dtype = draw(st.sampled_from([np.float32, np.int64, np.bool_, np.complex64]))
    shape = draw(shapes(min_dims=1, max_dims=4))
    arr = draw(arrays(dtype, shape))
    key = list(draw(basic_keys(shape)))
    # Replace one of the consuming items (or add one) by an integer array for its dimension.
    consuming = [i for i, k in enumerate(key) if k is not None and k is not Ellipsis]
    if not consuming:
        if sum(1 for k in key if k is not None and k is not Ellipsis) >= len(shape):
            key = []
        key.append(slice(None))
        consuming = [len(key) - 1]
    position = draw(st.sampled_from(consuming))
    dim = _dim_of(key, position, len(shape))
    d = shape[dim]
    index_shape = draw(shapes(min_dims=1, max_dims=2, max_side=3))
    if d == 0:
        index_shape = index_shape[:-1] + (0,)
    index = draw(arrays(np.int64, index_shape,
                        elements=st.integers(-d, max(d - 1, 0)) if d else st.just(0)))
    form = draw(st.sampled_from(["list", "ndarray", "tensor", "int32_tensor"]))
    key[position] = index
    ours = list(key)
    if form == "list" and index.size == 0:
        form = "ndarray"  # an empty nested list loses its shape
    ours[position] = {"list": index.tolist(), "ndarray": index,
                      "tensor": eager.constant(index),
                      "int32_tensor": eager.constant(index.astype(np.int32))}[form]
    return arr, tuple(key), tuple(ours)


def _dim_of(key, position, rank):
    consuming = [i for i, k in enumerate(key) if k is not None and k is not Ellipsis]
    if Ellipsis in key:
        e = key.index(Ellipsis)
        if position > e:
            after = sum(1 for i in consuming if i >= position)
            return rank - after
    return sum(1 for i in consuming if i < position)


@settings(max_examples=100)
@given(advanced_case())
def test_getitem_with_one_integer_array_matches_numpy(case):
    arr, np_key, key = case
    _same(eager.constant(arr)[key], arr[np_key])


def test_advanced_index_examples():
    x = eager.constant(np.arange(60).reshape(3, 4, 5))
    a = x.numpy()
    _same(x[[2, 0, 2]], a[[2, 0, 2]])
    _same(x[[[0, 1], [2, -1]]], a[[[0, 1], [2, -1]]])
    _same(x[:, np.array([3, -4])], a[:, np.array([3, -4])])
    _same(x[..., eager.constant([4, 0])], a[..., [4, 0]])
    _same(x[1, [0, 2]], a[1, [0, 2]])  # adjacent: gathered dims stay in place
    _same(x[1, :, [0, 2]], a[1, :, [0, 2]])  # separated: numpy moves them to the front
    _same(x[None, [1], 1:3], a[None, [1], 1:3])
    _same(x[[]], a[[]])
    _same(x[eager.constant([1], dtype=eager.uint8)], a[[1]])


def test_advanced_index_errors():
    # (`.numpy()` on values only the kernel can check: a device whose kernels run later
    # reports the failure there)
    x = eager.constant(np.arange(12).reshape(3, 4))
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = 7 is not in \[0, 3\)"):
        x[[0, 7]].numpy()
    with pytest.raises(InvalidArgumentError, match=r"GatherV2"):
        x[eager.constant([[0], [-9]])].numpy()
    with pytest.raises(TypeError, match="At most one integer tensor"):
        x[[0, 1], [1, 2]]


# -----------------------------------------------------------------------------------------------
# Bad keys
# -----------------------------------------------------------------------------------------------

def test_out_of_range_int_index():
    x = eager.constant([1, 2, 3])
    with pytest.raises(InvalidArgumentError,
                       match=r"slice index 5 of dimension 0 out of bounds\. \[Op:StridedSlice\]"):
        x[5]
    with pytest.raises(InvalidArgumentError, match="slice index -1 of dimension 0 out of bounds"):
        x[-4]
    y = eager.zeros([2, 3])
    with pytest.raises(InvalidArgumentError, match="slice index 3 of dimension 1 out of bounds"):
        y[:, 3]
    with pytest.raises(InvalidArgumentError, match="slice index 0 of dimension 0 out of bounds"):
        eager.zeros([0])[0]


@pytest.mark.parametrize("key", [np.array([True, False, True]), [True, False, True],
                                 eager.constant([True, False, True])])
def test_bool_index_is_a_type_error(key):
    x = eager.constant([1, 2, 3])
    with pytest.raises(TypeError, match="eager.where"):
        x[key]


@pytest.mark.parametrize("key", [True, np.bool_(False), eager.constant(True), (0, True)])
def test_scalar_bool_index_is_a_value_error(key):
    # TensorFlow 2.21 (verified): `t[True]` raises ValueError("mask cannot be scalar").
    x = eager.constant([[1, 2, 3]])
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        x[key]


@pytest.mark.parametrize("dtype", [eager.int8, eager.uint8, eager.uint16, eager.uint32,
                                   eager.uint64])
def test_scalar_tensor_index_must_be_int16_32_or_64(dtype):
    # TensorFlow 2.21 (verified): only int32/int64 (and int16) scalar tensors are indices.
    x = eager.constant([1, 2, 3])
    with pytest.raises(TypeError, match="valid indices"):
        x[eager.constant(1, dtype)]
    for ok in (eager.int16, eager.int32, eager.int64):
        assert int(x[eager.constant(1, ok)]) == 2
    assert int(x[np.uint8(1)]) == 2  # numpy integer scalars are plain ints


def test_bool_tensor_index_is_a_type_error():
    x = eager.constant([1, 2, 3])
    with pytest.raises(TypeError, match="boolean|Boolean"):
        x[eager.constant([True, False, True])]


@pytest.mark.parametrize("key", [1.5, "a", object(), [0.5, 1.0], {1: 2}, (0, 1.0),
                                 slice(0.5, 2), slice(None, None, "x")])
def test_junk_index_is_a_type_error(key):
    x = eager.constant([[1, 2, 3]])
    with pytest.raises(TypeError) as info:
        x[key]
    text = str(info.value)
    assert "integer" in text or "index" in text


def test_float_tensor_index_names_the_dtype():
    with pytest.raises(TypeError, match="float32 tensor"):
        eager.constant([1, 2])[eager.constant([0.0])]


def test_too_many_indices_and_ellipses():
    x = eager.zeros([2, 3])
    with pytest.raises(InvalidArgumentError, match="Index out of range using input dim 2"):
        x[0, 0, 0]
    with pytest.raises(InvalidArgumentError, match="Multiple ellipses"):
        x[..., ...]
    with pytest.raises(InvalidArgumentError, match=r"strides\[0\] must be non-zero"):
        x[::0]


# -----------------------------------------------------------------------------------------------
# strided_slice and slice
# -----------------------------------------------------------------------------------------------

def test_strided_slice_masks_like_tensorflow():
    a = np.arange(3 * 2 * 3).reshape(3, 2, 3)
    _same(eager.strided_slice(a, [1, 0, 0], [2, 1, 3], [1, 1, 1]), a[1:2, 0:1, 0:3])
    _same(eager.strided_slice(a, [1, -1, 0], [2, -3, 3], [1, -1, 1]), a[1:2, -1:-3:-1, 0:3])
    _same(eager.strided_slice(a, [0, 0], [0, 0], begin_mask=1, end_mask=1), a[:, 0:0])
    _same(eager.strided_slice(a, [1], [2], shrink_axis_mask=1), a[1])
    _same(eager.strided_slice(a, [0, 0, 1], [0, 0, 2], ellipsis_mask=1, new_axis_mask=2,
                              shrink_axis_mask=4), a[..., None, 1])
    with pytest.raises(NotImplementedError):
        eager.strided_slice(a, [0], [1], var=object())


def test_strided_slice_bad_arguments():
    with pytest.raises(InvalidArgumentError, match="equal size"):
        eager.strided_slice([1, 2], [0], [1, 2])
    # TF 2.21 (verified): a float in begin is rejected by the Index attr.
    with pytest.raises(InvalidArgumentError, match="StridedSlice"):
        eager.strided_slice([1, 2], [0.5], [1])


@settings(max_examples=50)
@given(st.data())
def test_slice_matches_numpy(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    shape = data.draw(shapes())
    arr = data.draw(arrays(dtype, shape))
    begin = [data.draw(st.integers(0, d)) for d in shape]
    size = [data.draw(st.sampled_from([-1, data.draw(st.integers(0, d - b))]))
            for d, b in zip(shape, begin)]
    expected = arr[tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))]
    _same(eager.slice(arr, begin, size), expected)
    _same(eager.slice(eager.constant(arr), eager.constant(np.array(begin, np.int64)), size),
          expected)


def test_slice_errors():
    x = eager.zeros([3, 4])
    with pytest.raises(InvalidArgumentError, match=r"Expected size\[0\] in \[0, 2\], but got 3"):
        eager.slice(x, [1, 0], [3, 2])
    with pytest.raises(InvalidArgumentError, match=r"Expected begin\[1\] in \[0, 4\], but got 5"):
        eager.slice(x, [0, 5], [1, 1])
    with pytest.raises(InvalidArgumentError, match=r"\[Op:Slice\]"):
        eager.slice(x, [0], [1])
    with pytest.raises(TypeError, match="Slice"):
        eager.slice(x, "a", [1, 1])


def test_slice_infers_partial_shape():
    spec = slicing_ops.SLICE.infer(eager.TensorSpec([None, 4]), begin=(0, 1), size=(2, -1))
    assert spec.shape.as_list() == [2, 3]
    spec = slicing_ops.SLICE.infer(eager.TensorSpec([None, 4]), begin=(0, 1), size=(-1, 2))
    assert spec.shape.as_list() == [None, 2]


# -----------------------------------------------------------------------------------------------
# gather, gather_nd, scatter_nd
# -----------------------------------------------------------------------------------------------

@settings(max_examples=50)
@given(st.data())
def test_gather_matches_numpy_take(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    shape = data.draw(shapes(min_dims=1))
    arr = data.draw(arrays(dtype, shape))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    d = shape[axis]
    ishape = data.draw(shapes(max_dims=2, max_side=3))
    if d == 0:
        ishape = ishape + (0,)
    index_dtype = data.draw(st.sampled_from([np.int32, np.int64, np.int16]))
    idx = data.draw(arrays(index_dtype, ishape,
                           elements=st.integers(0, max(d - 1, 0))))
    _same(eager.gather(arr, idx, axis=axis), np.take(arr, idx, axis=axis))


@settings(max_examples=30)
@given(st.data())
def test_gather_with_batch_dims(data):
    batch = data.draw(shapes(min_dims=1, max_dims=2, min_side=1, max_side=3))
    extra = data.draw(shapes(min_dims=1, max_dims=2, min_side=1, max_side=3))
    b = len(batch)
    arr = data.draw(arrays(np.float32, batch + extra))
    axis = data.draw(st.integers(b, len(batch + extra) - 1))
    d = arr.shape[axis]
    ishape = batch + data.draw(shapes(max_dims=2, max_side=3))
    idx = data.draw(arrays(np.int32, ishape, elements=st.integers(0, d - 1)))
    expected = _batched_take(arr, idx, axis, b)
    _same(eager.gather(arr, idx, axis=axis, batch_dims=b), expected)
    if idx.ndim > b:  # the same batch_dims counted from the end of the indices' dimensions
        _same(eager.gather(arr, idx, axis=axis, batch_dims=b - idx.ndim), expected)


def _batched_take(arr, idx, axis, b):
    if b == 0:
        return np.take(arr, idx, axis=axis)
    return np.stack([_batched_take(arr[i], idx[i], axis - 1, b - 1)
                     for i in range(arr.shape[0])])


def test_gather_defaults_and_errors():
    p = eager.constant([[1, 2], [3, 4], [5, 6]])
    _same(eager.gather(p, [2, 0]), np.array([[5, 6], [1, 2]], np.int32))
    _same(eager.gather(p, 1, axis=-1), np.array([2, 4, 6], np.int32))
    _same(eager.gather(p, [[0], [1], [0]], batch_dims=1), np.array([[1], [4], [5]], np.int32))
    # (`.numpy()` on values only the kernel can check: see test_advanced_index_errors)
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = 7 is not in \[0, 3\)"):
        eager.gather(p, [0, 7]).numpy()
    with pytest.raises(InvalidArgumentError, match=r"indices\[0,1\] = -1 is not in \[0, 2\)"):
        eager.gather(p, [[0, -1]], axis=1).numpy()
    with pytest.raises(InvalidArgumentError, match=r"indices = 3 is not in \[0, 3\)"):
        eager.gather(p, 3).numpy()
    with pytest.raises(InvalidArgumentError, match=r"axis in the range \[-2, 2\).*GatherV2"):
        eager.gather(p, [0], axis=2)
    with pytest.raises(InvalidArgumentError, match="at least 1 dimensional"):
        eager.gather(eager.constant(1.0), [0])
    with pytest.raises(InvalidArgumentError, match="batch_dims"):
        eager.gather(p, [[0]], axis=0, batch_dims=1)
    # TensorFlow 2.21 (verified): the dtype is not in the op's type list.
    with pytest.raises(InvalidArgumentError, match="GatherV2.*indices dtype float32"):
        eager.gather(p, [0.0])
    with pytest.raises(InvalidArgumentError, match="GatherV2.*indices dtype string"):
        eager.gather(p, "junk")


def test_gather_infers_partial_shapes():
    spec = slicing_ops.GATHER.infer(eager.TensorSpec([None, 3, 4]), eager.TensorSpec([5, None],
                                                                                     eager.int32),
                                    axis=1, batch_dims=0)
    assert spec.shape.as_list() == [None, 5, None, 4]
    assert slicing_ops.GATHER.infer(eager.TensorSpec(None), eager.TensorSpec([2], eager.int32),
                                    axis=0, batch_dims=0).shape.rank is None


@settings(max_examples=40)
@given(st.data())
def test_gather_nd_matches_numpy(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    shape = data.draw(shapes(min_dims=1, min_side=1))
    arr = data.draw(arrays(dtype, shape))
    depth = data.draw(st.integers(0, len(shape)))
    lead = data.draw(shapes(max_dims=2, max_side=3))
    cols = [data.draw(arrays(np.int64, lead, elements=st.integers(0, shape[k] - 1)))
            for k in range(depth)]
    idx = np.stack(cols, axis=-1) if depth else np.zeros(lead + (0,), np.int64)
    expected = arr[tuple(cols)] if depth else np.broadcast_to(arr, lead + arr.shape)
    _same(eager.gather_nd(arr, idx), expected)


def test_gather_nd_batch_dims_and_errors():
    p = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    idx = np.array([[[1], [0]], [[2], [2]]])
    expected = np.stack([p[0][[1, 0]], p[1][[2, 2]]])
    _same(eager.gather_nd(p, idx, batch_dims=1), expected)
    with pytest.raises(InvalidArgumentError,
                       match=r"indices\[1\] = \[2, 0\] does not index into param shape \[2,3,4\]"):
        eager.gather_nd(p, [[0, 0], [2, 0]]).numpy()  # (see test_advanced_index_errors)
    with pytest.raises(InvalidArgumentError, match="innermost dimension length must be <= params"):
        eager.gather_nd(p, [[0, 0, 0, 0]])
    with pytest.raises(InvalidArgumentError, match="at least a vector.*GatherNd"):
        eager.gather_nd(p, 0)
    # TensorFlow 2.21 (verified): the dtype is not in the op's type list.
    with pytest.raises(InvalidArgumentError, match="GatherNd"):
        eager.gather_nd(p, [[0.5]])


@settings(max_examples=40)
@given(st.data())
def test_scatter_nd_sums_duplicates_like_numpy_add_at(data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.complex64]))
    shape = data.draw(shapes(min_dims=1, min_side=1, max_side=4))
    depth = data.draw(st.integers(1, len(shape)))
    n = data.draw(st.integers(0, 6))
    idx = np.stack([data.draw(arrays(np.int32, (n,), elements=st.integers(0, shape[k] - 1)))
                    for k in range(depth)], axis=-1)
    updates = data.draw(arrays(dtype, (n,) + shape[depth:]))
    expected = np.zeros(shape, dtype)
    np.add.at(expected, tuple(idx[:, k] for k in range(depth)), updates)
    result = eager.scatter_nd(idx, updates, shape)
    assert result.dtype == dtype and result.shape == shape
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5)


def test_scatter_nd_examples_and_errors():
    _same(eager.scatter_nd([[4], [3], [1], [7], [4]], [9, 10, 11, 12, 1], [8]),
          np.array([0, 11, 0, 10, 10, 0, 0, 12], np.int32))
    _same(eager.scatter_nd([[0]], [[True, False]], eager.constant([2, 2])),
          np.array([[True, False], [False, False]]))
    with pytest.raises(InvalidArgumentError,
                       match=r"indices\[1\] = \[5\] does not index into shape \[4\]"):
        eager.scatter_nd([[0], [5]], [1.0, 2.0], [4]).numpy()  # (see test_advanced_index_errors)
    with pytest.raises(InvalidArgumentError, match=r"updates must have shape.*\[2\].*ScatterNd"):
        eager.scatter_nd([[0], [1]], [1.0, 2.0, 3.0], [4])
    with pytest.raises(InvalidArgumentError, match="Dimension -1 must be >= 0"):  # TF 2.21
        eager.scatter_nd([[0]], [1.0], [-1])
    # TensorFlow 2.21 (verified): the dtype is not in the op's type list.
    with pytest.raises(InvalidArgumentError, match="ScatterNd"):
        eager.scatter_nd([[0.0]], [1.0], [2])


# -----------------------------------------------------------------------------------------------
# IndexedSlices densification
# -----------------------------------------------------------------------------------------------

def test_indexed_slices_convert_to_dense_summing_duplicates():
    values = eager.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    s = eager.IndexedSlices(values, eager.constant([0, 2, 0]), eager.constant([4, 2]))
    dense = eager.convert_to_tensor(s)
    _same(dense, np.array([[6, 8], [0, 0], [3, 4], [0, 0]], np.float32))
    _same(eager.convert_to_tensor(eager.IndexedSlices(values, [1, 1, 1], [2, 2])),
          np.array([[0, 0], [9, 12]], np.float32))
    # Ops accept IndexedSlices wherever they take tensors.
    _same(eager.reshape(eager.IndexedSlices(values[:1], [0], [1, 2]), [2]),
          np.array([1, 2], np.float32))


def test_indexed_slices_conversion_errors():
    s = eager.IndexedSlices(eager.constant([[1.0]]), eager.constant([0]))
    with pytest.raises(ValueError, match="without dense_shape"):
        eager.convert_to_tensor(s)
    s = eager.IndexedSlices(eager.constant([[1.0]]), eager.constant([0]), [1, 1])
    with pytest.raises(ValueError, match="Incompatible tensor conversion requested to dtype int32"):
        eager.convert_to_tensor(s, dtype=eager.int32)
    with pytest.raises(InvalidArgumentError, match="does not index into shape"):
        eager.convert_to_tensor(eager.IndexedSlices(eager.constant([[1.0]]), [3],
                                                    [2, 1])).numpy()  # (a value's check)


# -----------------------------------------------------------------------------------------------
# Scalar indices known only when a traced function runs (IndexAxis)
# -----------------------------------------------------------------------------------------------

def _run_time_indices(key):
    """`key` with every int, and every slice start and stop, replaced by a slot for a tensor
    argument of a traced function (so the trace cannot know them), and those ints as the
    arguments."""
    template, values = [], []

    def slot(v):
        if v is None:
            return None
        values.append(eager.constant(v))
        return len(values) - 1

    for k in key:
        if isinstance(k, int):
            template.append(("int", slot(k)))
        elif isinstance(k, slice):
            template.append(("slice", slot(k.start), slot(k.stop), k.step))
        else:
            template.append(("as is", k))
    return template, values


def _traced_getitem(template):
    def index(x, *values):
        def value(i):
            return None if i is None else values[i]
        key = []
        for item in template:
            if item[0] == "int":
                key.append(values[item[1]])
            elif item[0] == "slice":
                key.append(slice(value(item[1]), value(item[2]), item[3]))
            else:
                key.append(item[1])
        return x[tuple(key)]
    return eager.function(index)


@settings(max_examples=60)
@given(array_and_basic_key())
def test_run_time_indices_and_slice_bounds_in_a_traced_function_match_numpy(case):
    x_np, key = case
    template, values = _run_time_indices(key)
    traced = _traced_getitem(template)
    _same(traced(eager.constant(x_np), *values), x_np[key])
    graph = traced.get_concrete_function(eager.constant(x_np), *values).graph
    run_time_items = sum(item[0] == "int" or (item[0] == "slice" and item[1:3] != (None, None))
                         for item in template)
    assert sum(op.type in ("IndexAxis", "SliceAxis")  # unknown to the trace: taken at run time
               for op in graph.get_operations()) == run_time_items


def test_a_loop_counter_indexes_a_tensor_and_its_gradient_is_dense():
    """The RNN shape of code: x[:, t] read with the loop counter, inside eager.function; the
    gradient (dense, as StridedSlice's) matches the same loop run eagerly."""
    def unrolled(x, w):
        def body(t, h):
            return t + 1, eager.tanh(h * w + x[:, t])
        return eager.while_loop(lambda t, h: t < x.shape[1], body,
                                (eager.constant(0), eager.zeros([x.shape[0]], x.dtype)))[1]

    x = eager.constant(np.random.default_rng(3).normal(size=(2, 5)))
    w = eager.constant(0.7, eager.float64)
    results = []
    for fn in (unrolled, eager.function(unrolled)):
        with eager.GradientTape() as tape:
            tape.watch([x, w])
            y = eager.reduce_sum(fn(x, w))
        results.append([y, *tape.gradient(y, [x, w])])
    for traced, eager_value in zip(results[1], results[0]):
        assert isinstance(traced, eager.Tensor)
        np.testing.assert_allclose(traced.numpy(), eager_value.numpy(), rtol=1e-12)


@pytest.mark.parametrize("index", [1, -1])
def test_a_run_time_index_gradient_is_zero_off_the_index_even_for_infinite_dy(index):
    """As eager's StridedSlice gradient: dy lands at the index and nowhere else, so an infinite
    dy leaves the other elements' gradient 0 (a one-hot product would make them NaN); second
    order matches eager too."""
    def infinite(x, i):  # (separate functions: a call's unused outputs are seeded with zeros)
        return x[:, i] * np.inf

    def cubes(x, i):
        return eager.reduce_sum(x[:, i] ** 3)

    x = eager.constant(np.arange(6.0).reshape(2, 3))
    i = eager.constant(index)
    results = []
    for wrap in (lambda f: f, eager.function):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = wrap(infinite)(x, i)
        dy_infinite = tape.gradient(y, x)
        with eager.GradientTape() as outer:
            outer.watch(x)
            with eager.GradientTape() as inner:
                inner.watch(x)
                y = wrap(cubes)(x, i)
            g = inner.gradient(y, x)
            s = eager.reduce_sum(g)
        results.append((dy_infinite.numpy(), g.numpy(), outer.gradient(s, x).numpy()))
    for traced, eager_value in zip(results[1], results[0]):
        np.testing.assert_array_equal(traced, eager_value)
    assert not np.isnan(results[1][0]).any()


def test_a_run_time_index_out_of_range_is_an_error_when_it_runs():
    traced = eager.function(lambda x, i: x[:, i])
    x = eager.constant(np.ones((2, 3)))
    assert traced(x, eager.constant(-3)).shape == (2,)
    with pytest.raises(InvalidArgumentError, match="slice index 3 of dimension 1 out of bounds"):
        traced(x, eager.constant(3)).numpy()  # (on an accelerator: at the next sync point)


def test_a_run_time_index_and_an_integer_array_in_one_key_is_a_type_error():
    traced = eager.function(lambda x, i: x[i, [0, 1]])
    with pytest.raises(TypeError, match="cannot be combined"):
        traced(eager.constant(np.ones((2, 3))), eager.constant(1))


def test_a_run_time_window_and_its_gradient_match_eager():
    """x[n:n + 2] with n an argument: the sliced axis has no static length in the trace, and
    the gradient (dense) matches eager's StridedSlice gradient; second order too."""
    def window(x, n):
        return eager.reduce_sum(eager.sin(x[n:n + 2, ::-1]) ** 2)

    x = eager.constant(np.random.default_rng(5).normal(size=(5, 3)))
    n = eager.constant(2)
    traced = eager.function(window)
    graph = traced.get_concrete_function(x, n).graph
    (op,) = [o for o in graph.get_operations() if o.type == "SliceAxis"]
    assert op.outputs[0].shape.as_list() == [None, 3]
    results = []
    for fn in (window, traced):
        with eager.GradientTape() as outer:
            outer.watch(x)
            with eager.GradientTape() as inner:
                inner.watch(x)
                y = fn(x, n)
            g = inner.gradient(y, x)
            s = eager.reduce_sum(g * g)
        results.append((y.numpy(), g.numpy(), outer.gradient(s, x).numpy()))
    for traced_value, eager_value in zip(results[1], results[0]):
        np.testing.assert_allclose(traced_value, eager_value, rtol=1e-12, atol=1e-12)


def test_a_trace_time_known_index_stays_a_static_slice():
    traced = eager.function(lambda x: x[eager.shape(x)[0] - 1])
    x = eager.constant(np.arange(6.0).reshape(3, 2))
    _same(traced(x), x.numpy()[2])
    graph = traced.get_concrete_function(x).graph
    assert [op.type for op in graph.get_operations()].count("IndexAxis") == 0
