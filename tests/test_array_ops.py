"""Array manipulation ops, differentially against numpy, plus TensorFlow's errors and dtype
rules."""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager
from eager.devices import registry
from eager.errors import InvalidArgumentError, NotFoundError
from eager.ops import array_ops, creation_ops

from strategies import NUMERIC_DTYPES, arrays, shapes

ALL_DTYPES = NUMERIC_DTYPES + [np.bool_]
dtypes_ = st.sampled_from(ALL_DTYPES)


def _same(result, expected, dtype=None):
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == (expected.dtype if dtype is None else dtype)
    np.testing.assert_array_equal(result.numpy(), expected)


@st.composite
def array(draw, min_dims=0, max_dims=4, min_side=0, max_side=5):
    dtype = draw(dtypes_)
    return draw(arrays(dtype, draw(shapes(min_dims, max_dims, min_side, max_side))))


# -----------------------------------------------------------------------------------------------
# reshape, squeeze, expand_dims, transpose
# -----------------------------------------------------------------------------------------------

@given(st.data())
def test_reshape_matches_numpy(data):
    arr = data.draw(array())
    target = list(data.draw(st.permutations(arr.shape)))  # same elements, other order of dims
    target = data.draw(st.sampled_from([target, [arr.size], target + [1], [1] + target]))
    if target and arr.size and data.draw(st.booleans()):
        target[data.draw(st.integers(0, len(target) - 1))] = -1
    _same(eager.reshape(arr, target), arr.reshape(target))
    _same(eager.reshape(eager.constant(arr), eager.constant(np.array(target, np.int64))),
          arr.reshape(target))


def test_reshape_errors_name_both_shapes():
    x = eager.zeros([2, 3])
    with pytest.raises(InvalidArgumentError, match=r"6 values, but the requested shape has 4 "
                                                   r"\(input shape \[2,3\], requested shape "
                                                   r"\[4\]\) \[Op:Reshape\]"):
        eager.reshape(x, [4])
    with pytest.raises(InvalidArgumentError, match=r"requires a multiple of 4"):
        eager.reshape(x, [-1, 4])
    with pytest.raises(InvalidArgumentError, match="Only one input size may be -1"):
        eager.reshape(x, [-1, -1])
    with pytest.raises(InvalidArgumentError, match="must be non-negative"):
        eager.reshape(x, [-2, -3])
    # TensorFlow 2.21 (verified): beside a zero size, -1 is inferred from the nonzero dims.
    assert eager.reshape(eager.zeros([0, 3]), [0, -1]).shape == (0, 3)
    assert eager.reshape(eager.zeros([0, 3]), [-1, 0]).shape == (3, 0)
    assert eager.reshape(eager.zeros([0]), [-1, 0]).shape == (1, 0)
    assert eager.reshape(eager.zeros([0, 3]), [2, -1, 0]).shape == (2, 1, 0)
    with pytest.raises(InvalidArgumentError, match="requested shape has 0"):
        eager.reshape(eager.zeros([6]), [-1, 0])
    with pytest.raises(InvalidArgumentError, match="must be non-negative, not -2"):
        eager.reshape(x, [-2, 3])  # numpy would take -2 as -1
    # TF 2.21 (verified): a float in a shape list is rejected by the op's integer attr.
    with pytest.raises(InvalidArgumentError, match="Reshape"):
        eager.reshape(x, [2.5, 3])
    with pytest.raises(InvalidArgumentError, match="Reshape"):
        eager.reshape(x, eager.constant([6.0]))
    with pytest.raises(TypeError, match="Reshape"):
        eager.reshape(x, object())


def test_reshape_infers_partial_shapes():
    infer = array_ops.RESHAPE.infer
    assert infer(eager.TensorSpec([None, 3]), shape=(-1,)).shape.as_list() == [None]
    assert infer(eager.TensorSpec([None, 3]), shape=(3, 2)).shape.as_list() == [3, 2]
    assert infer(eager.TensorSpec(None), shape=(-1, 4)).shape.as_list() == [None, 4]
    assert infer(eager.TensorSpec([2, 6]), shape=(-1, 4)).shape.as_list() == [3, 4]


@given(st.data())
def test_squeeze_and_expand_dims_match_numpy(data):
    dtype = data.draw(dtypes_)
    shape = data.draw(shapes(max_side=2))
    arr = data.draw(arrays(dtype, shape))
    _same(eager.squeeze(arr), np.squeeze(arr))
    ones = [i for i, d in enumerate(shape) if d == 1]
    if ones:
        axes = data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
        negative = [a - len(shape) for a in axes]
        _same(eager.squeeze(arr, axes), np.squeeze(arr, tuple(axes)))
        _same(eager.squeeze(arr, negative[0]), np.squeeze(arr, axes[0]))
    axis = data.draw(st.integers(-arr.ndim - 1, arr.ndim))
    _same(eager.expand_dims(arr, axis), np.expand_dims(arr, axis))


def test_squeeze_expand_dims_errors():
    x = eager.zeros([1, 3])
    with pytest.raises(InvalidArgumentError, match=r"Can not squeeze dim\[1\], expected a "
                                                   r"dimension of 1, got 3 \[Op:Squeeze\]"):
        eager.squeeze(x, 1)
    with pytest.raises(InvalidArgumentError, match="Tried to squeeze dim index 2"):
        eager.squeeze(x, [2])
    with pytest.raises(InvalidArgumentError, match="Tried to expand dim index 3 for tensor with 2 "
                                                   "dimensions"):
        eager.expand_dims(x, 3)
    # TensorFlow 2.21 (verified): None is a ValueError, a one-element list or tensor works.
    with pytest.raises(ValueError, match="ExpandDims"):
        eager.expand_dims(x, None)
    assert eager.expand_dims(x, [0]).shape == (1, 1, 3)
    assert eager.expand_dims(x, [[2]]).shape == (1, 3, 1)
    assert eager.expand_dims(x, eager.constant([-1])).shape == (1, 3, 1)
    with pytest.raises(InvalidArgumentError, match="single value"):
        eager.expand_dims(x, [0, 1])
    with pytest.raises(TypeError, match="ExpandDims"):
        eager.expand_dims(x, 1.0)
    infer = array_ops.SQUEEZE.infer
    assert infer(eager.TensorSpec([None, 1, 3]), axis=(1,)).shape.as_list() == [None, 3]
    assert infer(eager.TensorSpec([None, 1, 3]), axis=None).shape.rank is None
    assert infer(eager.TensorSpec([None, 3]), axis=(0,)).shape.as_list() == [3]


@given(st.data())
def test_transpose_matches_numpy(data):
    arr = data.draw(array())
    perm = data.draw(st.permutations(range(arr.ndim)))
    _same(eager.transpose(arr, perm), np.transpose(arr, perm))
    _same(eager.transpose(arr), arr.T)


def test_transpose_conjugate_and_errors():
    z = np.array([[1 + 2j, 3 - 1j]], np.complex64)
    _same(eager.transpose(z, conjugate=True), np.conj(z.T))
    _same(eager.transpose(z), z.T)
    _same(eager.transpose([[1, 2]], conjugate=True), np.array([[1], [2]], np.int32))
    x = eager.zeros([2, 3, 4])
    with pytest.raises(InvalidArgumentError, match=r"3 is out of range \[0 \.\. 3\)"):
        eager.transpose(x, [0, 1, 3])
    with pytest.raises(InvalidArgumentError, match="1 is duplicated in perm"):
        eager.transpose(x, [1, 1, 0])
    with pytest.raises(InvalidArgumentError, match=r"vector of size 3.*\[Op:Transpose\]"):
        eager.transpose(x, [1, 0])
    spec = array_ops.TRANSPOSE.infer(eager.TensorSpec([None, 3]), perm=(1, 0))
    assert spec.shape.as_list() == [3, None]


# -----------------------------------------------------------------------------------------------
# identity, stop_gradient, shape, size, rank
# -----------------------------------------------------------------------------------------------

@given(array())
def test_identity_shape_size_rank(arr):
    _same(eager.identity(arr), arr)
    _same(eager.stop_gradient(arr), arr)
    _same(eager.shape(arr), np.array(arr.shape, np.int32))
    _same(eager.shape(arr, out_type=eager.int64), np.array(arr.shape, np.int64))
    _same(eager.size(arr), np.int32(arr.size))
    _same(eager.size(arr, out_type="int64"), np.int64(arr.size))
    _same(eager.rank(arr), np.int32(arr.ndim))


@pytest.mark.cpu_only(reason="asserts that the output is the input's own buffer object; a "
                              "simulated GPU writes every kernel's output into a new pool block")
def test_identity_shares_the_buffer_on_one_device():
    t = eager.constant([1.0, 2.0])
    assert eager.identity(t)._value is t._value
    assert array_ops.STOP_GRADIENT.name == "StopGradient"
    assert not array_ops.STOP_GRADIENT.differentiable


def test_identity_copies_to_the_scoped_device(logical_cpus):
    logical_cpus(2)
    t = eager.constant([1.0, 2.0, 3.0])
    assert t.device == registry.default_device().name  # GPU:0 where there is one
    with eager.device("CPU:1"):
        moved = eager.identity(t)
    assert moved.device == "CPU:1"
    _same(moved, t.numpy())
    assert moved._value is not t._value


def test_shape_errors():
    # TensorFlow 2.21 (verified): Shape's out_type attr takes int32/int64 only
    # (InvalidArgumentError); tf.size converts the count to any out_type.
    with pytest.raises(InvalidArgumentError, match="out_type"):
        eager.shape([1], out_type=eager.float32)
    with pytest.raises(InvalidArgumentError, match="out_type"):
        eager.shape([1], out_type=eager.int16)
    for dtype, value in [(eager.int16, 2), (eager.uint8, 2), (eager.float32, 2.0),
                         (eager.bool, True)]:
        result = eager.size([1, 2], out_type=dtype)
        assert result.dtype == dtype and result.numpy() == value
    with pytest.raises((TypeError, ValueError)):
        eager.shape(object())
    spec = array_ops.SHAPE.infer(eager.TensorSpec([None, 3]), out_type=eager.int32)
    assert spec.shape.as_list() == [2] and spec.dtype == eager.int32


# -----------------------------------------------------------------------------------------------
# concat, stack, unstack, split
# -----------------------------------------------------------------------------------------------

@st.composite
def arrays_along_axis(draw, min_dims=1):
    """Several arrays of one dtype whose shapes differ only along `axis`."""
    dtype = draw(dtypes_)
    shape = list(draw(shapes(min_dims=min_dims)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    n = draw(st.integers(1, 4))
    out = []
    for _ in range(n):
        shape[axis] = draw(st.integers(0, 4))
        out.append(draw(arrays(dtype, tuple(shape))))
    return out, axis


@given(arrays_along_axis())
def test_concat_matches_numpy(case):
    values, axis = case
    _same(eager.concat(values, axis), np.concatenate(values, axis))
    _same(eager.concat([eager.constant(v) for v in values], eager.constant(axis)),
          np.concatenate(values, axis))


def test_concat_errors():
    a, b = eager.zeros([2, 3]), eager.zeros([2, 4])
    with pytest.raises(InvalidArgumentError, match=r"Dimension 1 in both shapes must be equal: "
                                                   r"shape\[0\] = \[2,3\] vs\. shape\[1\] = "
                                                   r"\[2,4\] \[Op:ConcatV2\]"):
        eager.concat([a, b], 0)
    with pytest.raises(InvalidArgumentError, match="Ranks of all input tensors should match"):
        eager.concat([a, eager.zeros([3])], 0)
    with pytest.raises(InvalidArgumentError, match=r"range \[-2, 2\), but got 2"):
        eager.concat([a, a], 2)
    with pytest.raises(InvalidArgumentError, match="Can't concatenate scalars"):
        eager.concat([1.0, 2.0], 0)
    with pytest.raises(InvalidArgumentError, match="ConcatV2"):
        eager.concat([a, eager.zeros([2, 3], dtype=eager.int32)], 0)
    with pytest.raises(InvalidArgumentError, match="at least one"):  # TF 2.21: no kernel, N=0
        eager.concat([], 0)
    _same(eager.concat([a], 7), np.zeros([2, 3], np.float32))  # TF: one value, axis unchecked
    spec = array_ops.CONCAT.infer(eager.TensorSpec([None, 3]), eager.TensorSpec([2, None]),
                                  axis=0)
    assert spec.shape.as_list() == [None, 3]
    spec = array_ops.CONCAT.infer(eager.TensorSpec([1, 3]), eager.TensorSpec([2, None]), axis=0)
    assert spec.shape.as_list() == [3, 3]


@given(st.data())
def test_stack_and_unstack_match_numpy(data):
    dtype = data.draw(dtypes_)
    shape = data.draw(shapes(max_dims=3))
    n = data.draw(st.integers(1, 4))
    values = [data.draw(arrays(dtype, shape)) for _ in range(n)]
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    stacked = np.stack(values, axis)
    _same(eager.stack([eager.constant(v) for v in values], axis), stacked)
    pieces = eager.unstack(stacked, axis=axis)
    assert isinstance(pieces, list) and len(pieces) == n
    for piece, value in zip(pieces, values):
        _same(piece, value)
    assert len(eager.unstack(eager.constant(stacked), num=n, axis=axis)) == n


def test_stack_follows_tensorflow_conversion():
    # Verified against TensorFlow 2.21: along axis 0 a value without tensors is converted as a
    # whole (TF's fast path), a tensor is unstacked first.
    _same(eager.stack([1, 2.5]), np.array([1, 2.5], np.float32))
    _same(eager.stack([]), np.zeros([0], np.float32))
    _same(eager.stack([np.array([0, 1], np.int8), np.array([2, 3], np.int8)]),
          np.array([[0, 1], [2, 3]], np.int32))
    _same(eager.stack([np.array([0.5], np.float64)]), np.array([[0.5]], np.float64))
    _same(eager.stack([[1, 2], [3.5, 4]]), np.array([[1, 2], [3.5, 4]], np.float32))
    m = eager.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert eager.stack(m) is m
    _same(eager.stack(m, axis=1), m.numpy().T)
    _same(eager.stack([eager.zeros([2]), [1, 2]]), np.array([[0, 0], [1, 2]], np.float32))
    with pytest.raises(TypeError):
        eager.stack([eager.constant(1), 2.5])
    with pytest.raises(ValueError, match="axis"):
        eager.stack([1, 2], axis=1)


def test_transpose_takes_negative_perm_entries():
    # Verified against TensorFlow 2.21: perm entries in [-rank, 0) count from the end.
    x = np.arange(24).reshape(2, 3, 4)
    _same(eager.transpose(x, [-1, 0, 1]), x.transpose(2, 0, 1))
    _same(eager.transpose(x, [-1, -2, -3]), x.transpose(2, 1, 0))
    with pytest.raises(InvalidArgumentError, match="out of range"):
        eager.transpose(x, [-4, 1, 0])
    with pytest.raises(InvalidArgumentError, match="Transpose"):
        eager.transpose(x, [-1, 2, 0])


def test_pad_tensorflow_edge_cases():
    # Verified against TensorFlow 2.21.
    _same(eager.pad(eager.constant([True]), [[1, 0]]), np.array([False, True]))
    _same(eager.pad(eager.constant([True]), [[1, 0]], constant_values=True),
          np.array([True, True]))
    with pytest.raises(TypeError):
        eager.pad(eager.constant([True]), [[1, 0]], constant_values=1)
    with pytest.raises(InvalidArgumentError, match="2 columns"):
        eager.pad(eager.constant(1.0), [])
    _same(eager.pad(eager.constant(1.0), np.zeros([0, 2], np.int32)), np.float32(1.0))
    with pytest.raises(InvalidArgumentError, match="Pad"):
        eager.pad(eager.zeros([2]), [[1.0, 0]])


def test_stack_unstack_errors():
    with pytest.raises(InvalidArgumentError, match=r"Shapes of all inputs must match: "
                                                   r"values\[0\]\.shape = \[2\] != "
                                                   r"values\[1\]\.shape = \[3\] \[Op:Pack\]"):
        eager.stack([eager.zeros([2]), eager.zeros([3])])
    with pytest.raises(ValueError, match=r"`axis` = 2 not in range \[-2, 2\)"):
        eager.stack([eager.zeros([2])], axis=2)
    with pytest.raises(ValueError, match=r"`axis` = 1 not in range \[-1, 1\)"):
        eager.unstack(eager.zeros([2]), axis=1)
    with pytest.raises(ValueError):
        eager.unstack(eager.constant(1.0))
    with pytest.raises(InvalidArgumentError, match="Input shape axis 0 must equal 3"):
        eager.unstack(eager.zeros([2, 2]), num=3)
    assert eager.unstack(eager.zeros([0, 2])) == []
    specs = array_ops.UNPACK.infer(eager.TensorSpec([None, 3]), num=3, axis=1)
    assert [s.shape.as_list() for s in specs] == [[None]] * 3


@given(st.data())
def test_split_matches_numpy(data):
    arr = data.draw(array(min_dims=1))
    axis = data.draw(st.integers(-arr.ndim, arr.ndim - 1))
    d = arr.shape[axis]
    divisors = [k for k in range(1, max(d, 1) + 1) if d % k == 0]
    k = data.draw(st.sampled_from(divisors))
    pieces = eager.split(arr, k, axis)
    assert isinstance(pieces, list) and len(pieces) == k
    for piece, expected in zip(pieces, np.split(arr, k, axis)):
        _same(piece, expected)
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    total = sum(sizes)
    if total <= d:
        sizes[data.draw(st.integers(0, len(sizes) - 1))] = -1
        free = d - sum(s for s in sizes if s != -1)
        bounds = np.cumsum([free if s == -1 else s for s in sizes])[:-1]
        pieces = eager.split(eager.constant(arr), sizes, axis=axis)
        for piece, expected in zip(pieces, np.split(arr, bounds, axis)):
            _same(piece, expected)


def test_split_errors():
    x = eager.zeros([5, 2])
    with pytest.raises(InvalidArgumentError, match=r"evenly divide the split dimension, but got "
                                                   r"split_dim 0 \(size = 5\) and num_split 2"):
        eager.split(x, 2)
    with pytest.raises(InvalidArgumentError, match=r"Got: 7.*\[Op:SplitV\]"):
        eager.split(x, [3, 4])
    with pytest.raises(InvalidArgumentError, match="Only one dimensions can have a value of -1"):
        eager.split(x, [-1, -1])
    with pytest.raises(InvalidArgumentError, match="Invalid axis"):
        eager.split(x, 1, axis=2)
    with pytest.raises(ValueError, match="Rank-0 tensors"):
        eager.split(x, eager.constant(5))
    with pytest.raises(InvalidArgumentError, match="rank"):  # TF 2.21 (verified)
        eager.split(eager.constant(1.0), 1)
    with pytest.raises(ValueError, match="num=3"):
        eager.split(x, [2, 3], num=3)
    specs = array_ops.SPLIT_V.infer(eager.TensorSpec([None, 4]), axis=1, size_splits=(1, -1))
    assert [s.shape.as_list() for s in specs] == [[None, 1], [None, 3]]


# -----------------------------------------------------------------------------------------------
# tile, broadcast_to, pad
# -----------------------------------------------------------------------------------------------

@given(st.data())
def test_tile_matches_numpy(data):
    arr = data.draw(array(max_dims=3, max_side=3))
    multiples = data.draw(st.lists(st.integers(0, 3), min_size=arr.ndim, max_size=arr.ndim))
    _same(eager.tile(arr, multiples), np.tile(arr, multiples) if multiples else arr)


def test_tile_errors():
    with pytest.raises(InvalidArgumentError, match="vector of length 2 but got length 1"):
        eager.tile(eager.zeros([2, 2]), [2])
    with pytest.raises(InvalidArgumentError, match=r"Expected multiples\[0\] >= 0, but got -1"):
        eager.tile(eager.zeros([2]), [-1])


@given(st.data())
def test_broadcast_to_matches_numpy(data):
    target = data.draw(shapes(max_side=4))
    in_shape = target[data.draw(st.integers(0, len(target))):]
    in_shape = tuple(data.draw(st.sampled_from([d, 1])) for d in in_shape)
    arr = data.draw(arrays(data.draw(dtypes_), in_shape))
    _same(eager.broadcast_to(arr, target), np.broadcast_to(arr, target))


def test_broadcast_to_errors():
    with pytest.raises(InvalidArgumentError, match=r"Unable to broadcast tensor of shape \[2\] "
                                                   r"to tensor of shape \[3\]"):
        eager.broadcast_to([1, 2], [3])
    with pytest.raises(InvalidArgumentError, match="BroadcastTo"):
        eager.broadcast_to([[1, 2]], [2])


@pytest.mark.cpu_only(reason="asserts the flags of the result's numpy buffer")
def test_broadcast_to_copies():
    out = eager.broadcast_to([1.0, 2.0], [3, 2])
    assert out._value.flags.c_contiguous and out._value.base is None


@given(st.data())
def test_pad_matches_numpy(data):
    arr = data.draw(array(max_dims=3, min_side=1, max_side=4))
    mode = data.draw(st.sampled_from(["CONSTANT", "REFLECT", "SYMMETRIC", "reflect"]))
    limit = {"CONSTANT": 3, "SYMMETRIC": None, "REFLECT": -1}[mode.upper()]
    paddings = []
    for d in arr.shape:
        high = 3 if limit == 3 else min(3, d + (limit or 0))
        paddings.append([data.draw(st.integers(0, high)), data.draw(st.integers(0, high))])
    if mode == "CONSTANT":
        value = arr.dtype.type(data.draw(st.sampled_from([0, 1])))
        result = eager.pad(arr, np.reshape(paddings, (-1, 2)).astype(np.int32),
                           constant_values=value)
        expected = np.pad(arr, paddings, constant_values=value) if arr.ndim else arr
    else:
        result = eager.pad(eager.constant(arr), eager.constant(np.array(paddings, np.int32).
                                                               reshape(-1, 2)), mode)
        expected = np.pad(arr, paddings, mode=mode.lower()) if arr.ndim else arr
    _same(result, expected)


def test_pad_errors_and_dtypes():
    x = eager.constant([[1, 2], [3, 4]])
    _same(eager.pad(x, [[0, 0], [1, 0]], constant_values=9), [[9, 1, 2], [9, 3, 4]],
          np.int32)
    with pytest.raises(InvalidArgumentError, match="paddings must be less than the dimension "
                                                   "size: 2, 0 not less than 2"):
        eager.pad(x, [[2, 0], [0, 0]], "REFLECT")
    with pytest.raises(InvalidArgumentError, match="no greater than the dimension size"):
        eager.pad(x, [[3, 0], [0, 0]], "SYMMETRIC")
    with pytest.raises(InvalidArgumentError, match="Paddings must be non-negative: -1 0"):
        eager.pad(x, [[-1, 0], [0, 0]])
    with pytest.raises(InvalidArgumentError, match="rank of inputs"):
        eager.pad(x, [[1, 1]])
    with pytest.raises(InvalidArgumentError, match="matrix with 2 columns"):
        eager.pad(x, [1, 1])
    with pytest.raises(ValueError, match="CONSTANT"):
        eager.pad(x, [[1, 1], [1, 1]], "WRAP")
    with pytest.raises(TypeError):
        eager.pad(x, [[1, 1], [1, 1]], constant_values=0.5)
    with pytest.raises(InvalidArgumentError, match="constant_values must be a scalar"):
        eager.pad(x, [[1, 1], [1, 1]], constant_values=[1, 2])


# -----------------------------------------------------------------------------------------------
# zeros, ones, fill, range, eye, one_hot, zeros_like, ones_like
# -----------------------------------------------------------------------------------------------

@given(shapes(), dtypes_)
def test_zeros_ones_fill_match_numpy(shape, dtype):
    _same(eager.zeros(shape, dtype), np.zeros(shape, dtype))
    _same(eager.ones(list(shape), dtype=dtype), np.ones(shape, dtype))
    value = np.ones((), dtype)[()]
    _same(eager.fill(eager.constant(np.array(shape, np.int64)), value), np.full(shape, value))
    like = np.zeros(shape, dtype)
    _same(eager.zeros_like(like), np.zeros(shape, dtype))
    _same(eager.ones_like(eager.constant(like)), np.ones(shape, dtype))
    _same(eager.ones_like(like, dtype=eager.int64), np.ones(shape, np.int64))


def test_creation_defaults_and_errors():
    _same(eager.zeros([2]), np.zeros(2, np.float32))
    _same(eager.zeros(3, eager.bool), np.zeros(3, bool))
    _same(eager.fill([2], 9), np.full(2, 9, np.int32))
    _same(eager.fill([2], 9.0), np.full(2, 9, np.float32))
    with pytest.raises(InvalidArgumentError, match=r"Dimension -1 must be >= 0"):  # TF 2.21
        eager.zeros([-1, 2])
    with pytest.raises(InvalidArgumentError, match="value must be a scalar.*Fill"):
        eager.fill([2], [1, 2])
    with pytest.raises(TypeError, match="Zeros"):
        eager.zeros([2], eager.resource)
    with pytest.raises(TypeError):
        eager.ones([2.5])
    with pytest.raises(TypeError):
        eager.zeros([2], "not a dtype")


def test_ops_without_inputs_run_on_the_scoped_device(logical_cpus):
    logical_cpus(2)
    with eager.device("CPU:1"):
        for t in (eager.zeros([2]), eager.ones([2]), eager.range(3), eager.eye(2),
                  eager.fill([2], 1.0)):
            assert t.device == "CPU:1"
    assert eager.zeros([1]).device == registry.default_device().name


def test_range_like_tensorflow():
    _same(eager.range(5), np.arange(5, dtype=np.int32))
    _same(eager.range(1, 10, 2), np.arange(1, 10, 2, dtype=np.int32))
    _same(eager.range(10, 1, -3), np.arange(10, 1, -3, dtype=np.int32))
    _same(eager.range(3, 1, -0.5), np.array([3, 2.5, 2, 1.5], np.float32))
    _same(eager.range(0, 1, 0.25), np.arange(0, 1, 0.25, dtype=np.float32))
    _same(eager.range(4, 4), np.zeros(0, np.int32))
    _same(eager.range(5, dtype=eager.float64), np.arange(5, dtype=np.float64))
    _same(eager.range(eager.constant(3, eager.int64)), np.arange(3, dtype=np.int64))
    _same(eager.range(2, eager.constant(4.0, eager.float64)), np.arange(2, 4, dtype=np.float64))
    _same(eager.range(2 ** 40, 2 ** 40 + 2), np.arange(2 ** 40, 2 ** 40 + 2, dtype=np.int64))
    _same(eager.range(eager.constant(5.7), dtype=eager.int32), np.arange(5, dtype=np.int32))
    with pytest.raises(InvalidArgumentError, match=r"Requires delta != 0: 0 \[Op:Range\]"):
        eager.range(1, 5, 0)
    with pytest.raises(InvalidArgumentError, match="Requires start <= limit when delta > 0: 5/1"):
        eager.range(5, 1)
    with pytest.raises(InvalidArgumentError, match="Requires start >= limit when delta < 0"):
        eager.range(1, 5, -1)
    with pytest.raises(TypeError):
        eager.range(1.5, dtype=eager.int32)
    # TensorFlow 2.21 (verified): uint8 is outside Range's type list (InvalidArgumentError);
    # int8/int16/uint16/uint32/uint64 are listed but have no CPU kernel (NotFoundError).
    with pytest.raises(InvalidArgumentError, match="Range"):
        eager.range(3, dtype=eager.uint8)
    for dtype in (eager.int8, eager.int16, eager.uint16, eager.uint32, eager.uint64):
        with pytest.raises(NotFoundError, match="Range"):
            eager.range(3, dtype=dtype)
    with pytest.raises(InvalidArgumentError, match="limit must be a scalar"):
        eager.range([1, 2])
    with pytest.raises((TypeError, ValueError)):
        eager.range("a")


@given(st.integers(-20, 20), st.integers(-20, 20),
       st.integers(-5, 5).filter(bool), st.sampled_from([np.int32, np.int64, np.float32,
                                                         np.float64]))
def test_range_matches_numpy(start, limit, delta, dtype):
    if (limit - start) * delta < 0:
        with pytest.raises(InvalidArgumentError, match="Requires start"):
            eager.range(start, limit, delta, dtype=dtype)
        return
    _same(eager.range(start, limit, delta, dtype=dtype),
          np.arange(start, limit, delta, dtype=dtype))


@given(st.integers(0, 4), st.none() | st.integers(0, 4), shapes(max_dims=2, max_side=3),
       dtypes_)
def test_eye_matches_numpy(rows, cols, batch, dtype):
    expected = np.broadcast_to(np.eye(rows, cols, dtype=dtype),
                               batch + (rows, rows if cols is None else cols))
    _same(eager.eye(rows, cols, batch_shape=list(batch), dtype=dtype), expected)


def test_eye_errors():
    _same(eager.eye(2), np.eye(2, dtype=np.float32))
    with pytest.raises(InvalidArgumentError, match="Eye"):
        eager.eye(-1)
    with pytest.raises(TypeError, match=re.escape(  # TF 2.21's words
            "Arguments `num_rows` and `num_columns` must be positive integer values. Received: "
            "num_rows=2.5, num_columns=2.5")):
        eager.eye(2.5)


@given(st.data())
def test_one_hot_matches_numpy(data):
    depth = data.draw(st.integers(0, 5))
    ishape = data.draw(shapes(max_dims=3, max_side=4))
    idx_dtype = data.draw(st.sampled_from([np.int32, np.int64, np.uint8, np.int8]))
    low = 0 if idx_dtype == np.uint8 else -2
    idx = data.draw(arrays(idx_dtype, ishape, elements=st.integers(low, depth + 2)))
    axis = data.draw(st.integers(-1, len(ishape)))
    hot = (idx[..., None] == np.arange(depth)).astype(np.float32)
    expected = hot if axis == -1 else np.moveaxis(hot, -1, axis)
    _same(eager.one_hot(idx, depth, axis=axis), expected)
    _same(eager.one_hot(idx, depth, on_value=5, off_value=-1, axis=axis),
          np.where(expected == 1, 5, -1).astype(np.int32))


def test_one_hot_dtypes_and_errors():
    _same(eager.one_hot([0, 3], 2), [[1, 0], [0, 0]], np.float32)
    _same(eager.one_hot([1], 2, dtype=eager.int64), [[0, 1]], np.int64)
    _same(eager.one_hot([1], 2, on_value=True, off_value=False), [[False, True]], np.bool_)
    _same(eager.one_hot([1], 2, off_value=2.0), [[2, 1]], np.float32)
    _same(eager.one_hot([1], 2, on_value=7, dtype=eager.float64), [[0, 7]], np.float64)
    with pytest.raises(TypeError, match="does not match dtype"):
        eager.one_hot([1], 2, on_value=1, off_value=0.0)
    with pytest.raises(TypeError, match="dtype parameter"):
        eager.one_hot([1], 2, on_value=1.5, dtype=eager.int32)
    with pytest.raises(InvalidArgumentError, match="depth must be non-negative, got: -1"):
        eager.one_hot([1], -1)
    with pytest.raises(InvalidArgumentError, match="Expected axis to be -1 or between"):
        eager.one_hot([1], 2, axis=3)
    # TensorFlow 2.21 (verified): the dtype is not in the op's type list.
    with pytest.raises(InvalidArgumentError, match="OneHot.*indices dtype float32"):
        eager.one_hot([1.0], 2)
    with pytest.raises(InvalidArgumentError, match="on_value must be a scalar"):
        eager.one_hot([1], 2, on_value=[1.0, 2.0])
    spec = creation_ops.ONE_HOT.infer(eager.TensorSpec([None, 2], eager.int32),
                                      eager.TensorSpec([]), eager.TensorSpec([]), depth=4, axis=1)
    assert spec.shape.as_list() == [None, 4, 2]


# -----------------------------------------------------------------------------------------------
# Conversion of non-tensor arguments and junk
# -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda v: eager.reshape(v, [1]), lambda v: eager.squeeze(v), lambda v: eager.expand_dims(v, 0),
    lambda v: eager.transpose(v), lambda v: eager.tile(v, [1]), lambda v: eager.identity(v),
    lambda v: eager.concat([v, v], 0), lambda v: eager.stack([v]), lambda v: eager.unstack(v),
    lambda v: eager.split(v, 1), lambda v: eager.gather(v, [0]), lambda v: eager.zeros_like(v),
    lambda v: eager.pad(v, [[1, 1]]), lambda v: eager.broadcast_to(v, [1]),
])
@pytest.mark.parametrize("junk", [object(), None])  # (strings: tests/test_strings.py)
def test_junk_inputs_are_rejected(fn, junk):
    with pytest.raises((TypeError, ValueError)):
        fn(junk)
