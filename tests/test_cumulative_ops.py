"""eager.ops.cumulative_ops (cumsum, cumprod): differential tests against numpy over hypothesis
shapes and dtypes, TensorFlow's examples and edge cases, bad inputs, namespaces."""

from inspect import unwrap  # public functions wrap the ops' (traceback filtering)
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager
from eager import errors
from eager.ops import cumulative_ops, math_ops
from eager.core.specs import TensorSpec
from strategies import COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES, arrays, shapes

INT_DTYPES = INT_DTYPES + [np.uint16, np.uint32, np.uint64]
NUMERIC_DTYPES = FLOAT_DTYPES + INT_DTYPES + COMPLEX_DTYPES
ALL_DTYPES = NUMERIC_DTYPES + [np.bool_]
T = eager.constant
OPS = {"cumsum": (np.cumsum, 0), "cumprod": (np.cumprod, 1)}


def _wide(x):
    return x.astype({"f": np.float64, "c": np.complex128, "i": np.int64, "u": np.int64}
                    [x.dtype.kind])


def _expected(name, x, axis, exclusive, reverse):
    """The scan in a wide dtype (integers wrap identically once cast back)."""
    running, identity = OPS[name]
    y = np.flip(x, axis) if reverse else x
    out = running(_wide(y), axis=axis)
    if exclusive and out.shape[axis]:
        first = np.full_like(np.take(out, [0], axis=axis), identity)
        out = np.concatenate([first, np.take(out, range(out.shape[axis] - 1), axis=axis)],
                             axis=axis)
    return np.flip(out, axis) if reverse else out


def _small(dtype):
    """Elements small enough that running products stay finite and normal-ish in float16."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return st.floats(-2, 2, width=min(dtype.itemsize * 8, 64))
    if dtype.kind == "c":
        part = st.floats(-2, 2, width=32)
        return st.builds(complex, part, part)
    return st.integers(0 if dtype.kind == "u" else -3, 3)


def _case(dtypes):
    return st.sampled_from(dtypes).flatmap(
        lambda d: arrays(d, shapes(min_dims=1, max_dims=3), _small(d)))


@pytest.mark.parametrize("name", sorted(OPS))
@given(data=st.data())
def test_matches_numpy(name, data):
    x = data.draw(_case(NUMERIC_DTYPES))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    exclusive, reverse = data.draw(st.booleans()), data.draw(st.booleans())
    expected = _expected(name, x, axis, exclusive, reverse)
    result = getattr(eager.math, name)(T(x), axis=axis, exclusive=exclusive, reverse=reverse)
    assert result.dtype == x.dtype and result.shape == x.shape
    if x.dtype.kind in "fc":
        finfo = np.finfo(x.dtype)
        n = x.shape[axis] + 1
        if name == "cumsum":
            scale = np.sum(np.abs(_wide(x)), axis=axis, keepdims=True)
        else:
            scale = np.abs(_expected(name, np.abs(x), axis, exclusive, reverse))
        bound = 2 * n * finfo.eps * scale + 2 ** n * finfo.tiny
        assert np.all(np.abs(result.numpy() - expected) <= bound)
    else:
        np.testing.assert_array_equal(result.numpy(), expected.astype(x.dtype))


def test_cumsum_examples():
    x = T([1, 2, 3])
    assert eager.cumsum(x).numpy().tolist() == [1, 3, 6]
    assert eager.cumsum(x, exclusive=True).numpy().tolist() == [0, 1, 3]
    assert eager.cumsum(x, reverse=True).numpy().tolist() == [6, 5, 3]
    assert eager.cumsum(x, exclusive=True, reverse=True).numpy().tolist() == [5, 3, 0]
    y = eager.cumsum(T([[1.0, 2.0], [3.0, 4.0]]), axis=-1, exclusive=True)
    assert y.dtype == eager.float32 and y.numpy().tolist() == [[0, 1], [0, 3]]


def test_cumprod_examples():
    # TensorFlow 2.21 (verified): tf.math.cumprod([1, 2, 3], exclusive=True, reverse=True)
    # is [6, 3, 1] (int32).
    x = T([1, 2, 3])
    assert eager.math.cumprod(x).numpy().tolist() == [1, 2, 6]
    assert eager.math.cumprod(x, exclusive=True).numpy().tolist() == [1, 1, 2]
    assert eager.math.cumprod(x, reverse=True).numpy().tolist() == [6, 6, 3]
    y = eager.math.cumprod(x, exclusive=True, reverse=True)
    assert y.dtype == eager.int32 and y.numpy().tolist() == [6, 3, 1]
    y = eager.math.cumprod(T([[1.0, 2.0], [3.0, 4.0]]), axis=eager.constant(1))
    assert y.numpy().tolist() == [[1, 2], [3, 12]]
    assert eager.math.cumprod(T(np.array([100, 100], np.int8))).numpy().tolist() == [100, 16]


@pytest.mark.parametrize("name", sorted(OPS))
def test_empty_inputs(name):
    fn = getattr(eager.math, name)
    for shape, axis in (((0, 2), 0), ((2, 0), 1)):
        for dtype in (np.int32, np.float32, np.complex64):
            y = fn(T(np.zeros(shape, dtype)), axis=axis, exclusive=True, reverse=True)
            assert y.shape == shape and y.dtype == dtype


@pytest.mark.parametrize("name,op_name", [("cumsum", "Cumsum"), ("cumprod", "Cumprod")])
def test_bad_inputs(name, op_name):
    # TensorFlow 2.21 (verified): out-of-range axes, bool inputs, scalar inputs and list axes are
    # InvalidArgumentErrors; a string axis is rejected before any op.
    fn = getattr(eager.math, name)
    with pytest.raises(errors.InvalidArgumentError, match=op_name):
        fn(T([1, 2]), axis=1)
    with pytest.raises(errors.InvalidArgumentError, match=op_name):
        fn(T([[1, 2]]), axis=-3)
    with pytest.raises(errors.InvalidArgumentError, match=rf"\[Op:{op_name}\]"):
        fn(T([True, False]))
    with pytest.raises(TypeError, match=op_name):
        fn(T([1, 2]), axis="0")
    with pytest.raises(TypeError, match=op_name):
        fn(T([1.0, 2.0]), axis=1.0)
    for axis in (0, -1):
        with pytest.raises(errors.InvalidArgumentError, match=op_name):
            fn(T(2.5), axis=axis)
    with pytest.raises(errors.InvalidArgumentError, match=op_name):
        fn(T([[1, 2]]), axis=[1])


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("junk", [object(), "abc", None, b"bytes", {"a": 1}],
                         ids=["object", "str", "None", "bytes", "dict"])
def test_junk_inputs_raise_type_or_value_error(name, junk):
    # A str or bytes is a string tensor, whose dtype the op refuses (TF 2.21).
    expected = eager.errors.InvalidArgumentError if isinstance(junk, (str, bytes)) else (
        TypeError, ValueError)
    with pytest.raises(expected):
        getattr(eager.math, name)(junk)


@pytest.mark.parametrize("name,op", [("cumsum", cumulative_ops.CUMSUM),
                                     ("cumprod", cumulative_ops.CUMPROD)])
def test_accepts_exactly_the_numeric_dtypes(name, op):
    fn = getattr(eager.math, name)
    for dtype in ALL_DTYPES:
        x = T(np.ones(2, dtype))
        if np.dtype(dtype).kind == "b":
            with pytest.raises(errors.InvalidArgumentError, match=op.name):
                fn(x)
        else:
            assert np.dtype(dtype) in {d.dtype for d in op.dtypes}
            assert fn(x).dtype == dtype


def test_inference_on_partial_shapes():
    for op in (cumulative_ops.CUMSUM, cumulative_ops.CUMPROD):
        spec = op.infer(TensorSpec([None, 3], eager.float32), axis=1, exclusive=False,
                        reverse=True)
        assert spec.shape.as_list() == [None, 3] and spec.dtype == eager.float32
        assert op.infer(TensorSpec(None, eager.int32), axis=5, exclusive=True,
                        reverse=False).shape.rank is None
        with pytest.raises(errors.InvalidArgumentError, match=op.name):
            op.infer(TensorSpec([None, 3], eager.float32), axis=2, exclusive=False,
                     reverse=False)


def test_namespaces_match_tensorflow():
    # TensorFlow 2: tf.math.cumsum and tf.math.cumprod; only cumsum at the top level.
    assert unwrap(eager.math.cumsum) is cumulative_ops.cumsum is unwrap(eager.cumsum)
    assert unwrap(eager.math.cumprod) is cumulative_ops.cumprod
    assert not hasattr(eager, "cumprod")
    assert not hasattr(math_ops, "cumsum") and not hasattr(math_ops, "CUMSUM")
