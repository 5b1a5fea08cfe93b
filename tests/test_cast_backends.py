"""The Cast kernel gives TensorFlow's CPU values on any array module, not only on numpy, whose
float-to-integer cast of NaN, inf and out-of-range values happens to be x86's. `CUDA_LIKE` is
numpy except that a float array's `astype` to an integer dtype is CUDA's conversion (as CuPy's
is): it saturates to the integer's range and maps NaN to 0. The goldens are TensorFlow's
(`tests/adversarial/tf_goldens.py`), evaluated with the Cast op's kernel given `CUDA_LIKE`."""

import types

import numpy as np
import pytest

import eager as tf
from eager.core.registry import get_op
from tests.adversarial.test_adversarial_numerics import assert_golden, run_code
from tests.adversarial.tf_goldens import VALUES


class CudaArray(np.ndarray):
    """A numpy array whose float-to-integer `astype` is CUDA's saturating conversion (and,
    as CuPy's, never warns)."""

    def astype(self, dtype, *args, **kwargs):
        dtype = np.dtype(dtype)
        if self.dtype.kind != "f" or dtype.kind not in "iu":
            with np.errstate(all="ignore"):
                return super().astype(dtype, *args, **kwargs)
        info = np.iinfo(dtype)
        whole = np.trunc(self.view(np.ndarray).astype(np.float64))  # exact for float16/32
        nan = np.isnan(whole)
        below = whole < np.float64(info.min)
        above = whole >= np.float64(info.max) + 1  # 2**31, 2**63, 2**64: exact in float64
        safe = np.where(nan | below | above, 0, whole).astype(dtype)
        out = np.where(above, dtype.type(info.max), np.where(below, dtype.type(info.min), safe))
        return out.astype(dtype).view(CudaArray)


def _wrapped(function):
    def call(*args, **kwargs):
        out = function(*args, **kwargs)
        return out.view(CudaArray) if type(out) is np.ndarray else out
    return call


class _CudaLike(types.ModuleType):
    """numpy, with the arrays its functions return made `CudaArray`s (ufuncs keep the
    subclass themselves)."""

    def __getattr__(self, name):
        value = getattr(np, name)
        if callable(value) and not isinstance(value, (type, np.ufunc)):
            return _wrapped(value)
        return value


CUDA_LIKE = _CudaLike("cuda_like")


def test_the_stand_in_converts_as_cuda_does():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 1e20, 2.0 ** 63, -1.5, 300.7]).view(
        CudaArray)
    assert x.astype(np.int32).tolist() == [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 2**31 - 1,
                                          2**31 - 1, -1, 300]
    assert x.astype(np.int64).tolist()[6] == 2**63 - 1
    assert x.astype(np.uint16).tolist() == [0, 65535, 0, 65535, 0, 65535, 65535, 0, 300]
    assert x.astype(np.uint64).tolist()[:3] == [0, 2**64 - 1, 0]
    assert type(CUDA_LIKE.where(x > 0, x, 0)) is CudaArray
    assert np.int32(7).astype(np.int8) == 7  # integers wrap as numpy's


@pytest.fixture
def cast_on_cuda_like(monkeypatch):
    """The Cast op's kernel run with `CUDA_LIKE` as its array module."""
    op = get_op("Cast")
    kernel = op.kernel

    def cuda_like_kernel(xp, x, **attrs):
        return np.asarray(kernel(CUDA_LIKE, np.asarray(x).view(CudaArray), **attrs))
    monkeypatch.setattr(op, "kernel", cuda_like_kernel)
    return cuda_like_kernel


CAST_GOLDENS = [g for g in VALUES if g[0].startswith("tf.cast(")]


def test_the_goldens_include_float_to_int_casts_of_every_kind():
    targets = {g[1] for g in CAST_GOLDENS}
    assert {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"} <= targets


@pytest.mark.parametrize("golden", CAST_GOLDENS, ids=[g[0] for g in CAST_GOLDENS])
def test_casts_give_tensorflows_values_where_float_to_int_conversion_saturates(
        cast_on_cuda_like, golden):
    assert_golden(run_code(golden[0]), *golden[1:])


@pytest.mark.parametrize("values,src,dst,want", [  # TF 2.21 (test_math_segments_and_counts)
    ([-300., 1.7, 300., np.nan, np.inf], tf.float32, tf.int8, [-128, 1, 127, 0, 127]),
    ([-3., 1.7, 300.], tf.float32, tf.uint8, [0, 1, 255]),
    ([-1e30, 1e30], tf.float32, tf.int64, [-2 ** 63, -2 ** 63]),  # TF's bound is 2**63: wraps
    ([-1e30, 1e30, 2147483520.], tf.float32, tf.int32, [-2 ** 31, 2147483520, 2147483520]),
    ([1e10 + 2j], tf.complex128, tf.int32, [2 ** 31 - 1]),
])
def test_saturate_cast_gives_tensorflows_values_where_float_to_int_conversion_saturates(
        cast_on_cuda_like, values, src, dst, want):
    out = tf.saturate_cast(tf.constant(values, src), dst)
    assert out.dtype == dst and out.numpy().tolist() == want


@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("dst", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                 np.uint32, np.uint64])
def test_numpys_fast_path_gives_the_masked_paths_values(src, dst):
    """On numpy the kernel may answer with one cast after two reductions; on any other module it
    takes the masked path. Both give the same values, in range or not."""
    kernel = get_op("Cast").kernel
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.99, 1.7, -1.7, 127.9, -128.9, 255.5,
                300.5, 65504.0, -65504.0, 2.0**31 - 1, 2.0**31, -2.0**31, -2.0**31 - 1, 3e9,
                -3e9, 4.3e9, 2.0**32, 9.3e18, -9.3e18, 2.0**63, -2.0**63, 1.8e19, 2.0**64, 1e20,
                -1e20, 1e300]
    dtype = tf.as_dtype(dst)
    with np.errstate(all="ignore"):
        pools = [np.array(specials, np.float64).astype(src),
                 np.linspace(-3e4, 3e4, 101).astype(src),
                 np.linspace(-3e9, 3e9, 101).astype(src)]
    for x in pools:  # all of them (the slow path), and in range (one cast or two)
        for part in (x, x[np.isfinite(x)], x[np.abs(x) < 100]):
            want = kernel(CUDA_LIKE, part.view(CudaArray), dtype=dtype)
            got = kernel(np, part, dtype=dtype)
            assert got.dtype == want.dtype == dst
            np.testing.assert_array_equal(got, np.asarray(want), err_msg=str(part))
