"""matmul, tensordot, einsum and norm against numpy, plus TF's static and run-time errors."""

from inspect import unwrap  # public functions wrap the ops' (traceback filtering)
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import eager
from eager.errors import InvalidArgumentError, NotFoundError, OpError
from eager.ops import linalg_ops, product_ops

from gradcheck import check_second_order
from strategies import arrays, shapes

TOL = {np.float16: dict(rtol=1e-2, atol=1e-2), np.float32: dict(rtol=1e-4, atol=1e-4),
       np.float64: dict(rtol=1e-10, atol=1e-10), np.complex64: dict(rtol=1e-4, atol=1e-4),
       np.complex128: dict(rtol=1e-10, atol=1e-10)}
PRODUCT_DTYPES = [np.float16, np.float32, np.float64, np.int32, np.int64, np.complex64,
                  np.complex128]
SMALL_INTS = st.integers(-5, 5)


def _small(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return SMALL_INTS
    if dtype.kind == "c":
        part = st.floats(-3, 3, width=32)
        return st.builds(complex, part, part)
    return st.floats(-3, 3, width=min(32, dtype.itemsize * 8))


def _check(actual, expected, dtype):
    actual = np.asarray(actual)
    assert actual.dtype == np.dtype(dtype)
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(actual, expected, **TOL[np.dtype(dtype).type])


# -----------------------------------------------------------------------------------------------
# matmul
# -----------------------------------------------------------------------------------------------

@st.composite
def matmul_case(draw):
    dtype = draw(st.sampled_from(PRODUCT_DTYPES))
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    m, k, n = (draw(st.integers(0, 4)) for _ in range(3))
    flags = draw(st.sampled_from([{}, {"transpose_a": True}, {"transpose_b": True},
                                  {"adjoint_a": True, "transpose_b": True},
                                  {"adjoint_b": True}, {"adjoint_a": True, "adjoint_b": True}]))
    ta = flags.get("transpose_a") or flags.get("adjoint_a")
    tb = flags.get("transpose_b") or flags.get("adjoint_b")
    a = draw(arrays(dtype, batch.input_shapes[0] + ((k, m) if ta else (m, k)), _small(dtype)))
    b = draw(arrays(dtype, batch.input_shapes[1] + ((n, k) if tb else (k, n)), _small(dtype)))
    return a, b, flags


def _apply(x, transpose, adjoint):
    if transpose or adjoint:
        x = np.swapaxes(x, -1, -2)
    return np.conj(x) if adjoint else x


@given(matmul_case())
def test_matmul_broadcasts_batches_and_applies_flags(case):
    a, b, flags = case
    out = eager.matmul(a, b, **flags)
    ref = np.matmul(_apply(a, flags.get("transpose_a"), flags.get("adjoint_a")),
                    _apply(b, flags.get("transpose_b"), flags.get("adjoint_b")))
    assert out.shape == ref.shape
    _check(out.numpy(), ref, a.dtype)


def test_matmul_int32_is_exact_and_operator_works():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = eager.matmul(a, b)
    assert out.dtype == eager.int32
    np.testing.assert_array_equal(out.numpy(), a @ b)
    np.testing.assert_array_equal((eager.constant(a) @ b).numpy(), a @ b)
    assert eager.linalg.matmul is eager.matmul


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.uint16, np.uint32,
                                   np.uint64])
def test_matmul_rejects_dtypes_tensorflow_has_no_kernel_for(dtype):
    # TensorFlow 2.21 (verified): MatMul runs float, complex, int32 and int64 on the CPU; int8
    # and int16 are not in its type list (InvalidArgumentError), the unsigned types are listed
    # without a CPU kernel (NotFoundError). tensordot runs MatMul, so it fails the same way.
    cls = NotFoundError if np.dtype(dtype).kind == "u" else InvalidArgumentError
    x = eager.constant(np.ones([2, 2], dtype))
    for fn, name in ((eager.matmul, "MatMul"), (lambda a, b: eager.tensordot(a, b, 1),
                                                 "Tensordot")):
        with pytest.raises((InvalidArgumentError, NotFoundError),
                           match=rf"{name}.*{np.dtype(dtype).name}") as info:
            fn(x, x)
        assert type(info.value) is cls


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.uint16, np.uint32,
                                   np.uint64, np.bool_])
def test_einsum_dtypes_without_a_kernel_are_not_found(dtype):
    # TensorFlow 2.21 (verified): Einsum's type attr has no list, so every dtype outside its
    # CPU kernels (float, complex, int32, int64) is a NotFoundError.
    with pytest.raises(NotFoundError, match=rf"Einsum.*{np.dtype(dtype).name}"):
        eager.einsum("ij->ji", eager.constant(np.ones((2, 2), dtype)))


def test_einsum_of_a_scalar_and_norm_of_bools():
    # Verified against TensorFlow 2.21.
    assert eager.einsum("->", eager.constant(2.5)).numpy() == np.float32(2.5)
    assert eager.einsum("", eager.constant(2.5)).numpy() == np.float32(2.5)
    assert eager.einsum("i->", eager.constant([1.0, 2.0])).numpy() == np.float32(3.0)
    with pytest.raises(TypeError, match="numeric"):
        eager.norm(eager.constant([True, False]))


def test_matmul_errors():
    with pytest.raises(InvalidArgumentError, match=r"MatMul.*rank >= 2") as raised:
        eager.matmul([1.0, 2.0], [[1.0], [2.0]])
    assert raised.value.__cause__ is None or isinstance(raised.value.__cause__, OpError)
    with pytest.raises(InvalidArgumentError, match=r"shapes \(2,\) and \(2, 2\)"):
        eager.constant([1.0, 2.0]) @ eager.constant(np.ones((2, 2), np.float32))  # fast path
    with pytest.raises(InvalidArgumentError, match=r"MatMul.*rank >= 2"):
        eager.matmul([[1.0, 2.0]], [1.0, 2.0])
    with pytest.raises(InvalidArgumentError, match=r"Matrix size-incompatible: In\[0\]: \[2, 3\], "
                                                   r"In\[1\]: \[4, 5\]"):
        eager.matmul(np.ones((2, 3), np.float32), np.ones((4, 5), np.float32))
    with pytest.raises(InvalidArgumentError, match=r"MatMul.*Incompatible shapes"):
        eager.matmul(np.ones((2, 1, 3)), np.ones((3, 3, 1)))
    with pytest.raises(InvalidArgumentError, match="MatMul.*float64"):
        eager.matmul(eager.constant(np.ones((2, 2))), eager.constant(np.ones((2, 2), np.float32)))
    with pytest.raises(NotFoundError, match="MatMul.*uint8"):
        eager.matmul(np.ones((2, 2), np.uint8), np.ones((2, 2), np.uint8))
    with pytest.raises(ValueError, match="transpose_a and adjoint_a"):
        eager.matmul(np.ones((2, 2)), np.ones((2, 2)), transpose_a=True, adjoint_a=True)
    with pytest.raises(NotImplementedError):
        eager.matmul(np.ones((2, 2)), np.ones((2, 2)), output_type=eager.float64)
    with pytest.raises(ValueError):
        eager.matmul(object(), np.ones((2, 2)))
    with pytest.raises(InvalidArgumentError, match="MatMul"):  # TF 2.21: a string
        eager.matmul("str", np.ones((2, 2)))


def test_matmul_inference_on_partial_shapes():
    spec = eager.TensorSpec
    out = product_ops.MATMUL.infer(spec([None, 2, 3]), spec([3, None]))
    assert out.shape == [None, 2, None]
    assert product_ops.MATMUL.infer(spec(None), spec([3, 4])).shape.rank is None


# -----------------------------------------------------------------------------------------------
# tensordot
# -----------------------------------------------------------------------------------------------

@st.composite
def tensordot_case(draw):
    dtype = draw(st.sampled_from(PRODUCT_DTYPES))
    a_shape = draw(shapes(max_dims=4, max_side=3))
    n = draw(st.integers(0, len(a_shape)))
    a_axes = draw(st.permutations(range(len(a_shape))))[:n]
    b_free = draw(shapes(max_dims=2, max_side=3))
    b_shape = [a_shape[i] for i in a_axes] + list(b_free)
    order = draw(st.permutations(range(len(b_shape))))
    b_shape = [b_shape[i] for i in order]
    b_axes = [order.index(j) for j in range(n)]
    a = draw(arrays(dtype, a_shape, _small(dtype)))
    b = draw(arrays(dtype, tuple(b_shape), _small(dtype)))
    negative = draw(st.booleans())
    if negative:
        a_axes = [i - a.ndim for i in a_axes]
    return a, b, a_axes, b_axes


@given(tensordot_case())
def test_tensordot_matches_numpy(case):
    a, b, a_axes, b_axes = case
    out = eager.tensordot(a, b, [a_axes, b_axes])
    ref = np.tensordot(a, b, (a_axes, b_axes))
    assert out.shape == ref.shape
    _check(out.numpy(), ref, a.dtype)


def test_tensordot_integer_axes_and_pair_of_ints():
    a = np.arange(24.0).reshape(2, 3, 4)
    b = np.arange(60.0).reshape(3, 4, 5)
    np.testing.assert_allclose(eager.tensordot(a, b, 2).numpy(), np.tensordot(a, b, 2))
    np.testing.assert_allclose(eager.tensordot(a, b, 0).numpy(), np.tensordot(a, b, 0))
    np.testing.assert_allclose(eager.tensordot(a, b, [1, 0]).numpy(),
                               np.tensordot(a, b, ([1], [0])))
    axes = eager.constant([[2], [1]])
    np.testing.assert_allclose(eager.tensordot(a, b, axes).numpy(), np.tensordot(a, b, (2, 1)))
    scalar = eager.tensordot(np.float32(2), np.float32(3), 0)
    assert scalar.shape == () and scalar.numpy() == 6


class _StrictTensordotXP:
    """numpy, except that tensordot rejects a rank-0 input unless axes is 0, as cupy's does."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def tensordot(a, b, axes=2):
        if (np.ndim(a) == 0 or np.ndim(b) == 0) and axes != 0 and axes != ((), ()):
            raise ValueError("An input is zero-dim while axes has dimensions")
        return np.tensordot(a, b, axes)


def test_tensordot_of_a_scalar_is_the_product_on_every_array_module():
    kernel, xp = product_ops._tensordot_kernel, _StrictTensordotXP()
    a, b = np.array(2.0, np.float32), np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for x, y in ((a, a), (a, b), (b, a)):
        out = kernel(xp, x, y, (), ())
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, np.tensordot(x, y, 0))
    np.testing.assert_array_equal(kernel(xp, b, b.T, (1,), (0,)), b @ b.T)


def test_tensordot_errors():
    a, b = np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)
    with pytest.raises(InvalidArgumentError, match=r"Tensordot.*a.shape\[1\] = 3.*b.shape\[0\] "
                                                   r"= 4.*\[2, 3\].*\[4, 5\]"):
        eager.tensordot(a, b, 1)
    with pytest.raises(ValueError, match="must not be larger"):
        eager.tensordot(a, b, 3)
    with pytest.raises(ValueError, match="at least 0"):
        eager.tensordot(a, b, -1)
    with pytest.raises(ValueError, match="length 2"):
        eager.tensordot(a, b, [[0], [1], [0]])
    with pytest.raises(ValueError, match="Different number of contraction axes"):
        eager.tensordot(a, b, [[0, 1], [0]])
    with pytest.raises(InvalidArgumentError, match="Tensordot.*out of range"):
        eager.tensordot(a, b, [[2], [0]])
    with pytest.raises(InvalidArgumentError, match="Tensordot.*repeat"):
        eager.tensordot(np.ones((3, 3)), np.ones((3, 3)), [[0, 0], [0, 1]])
    with pytest.raises(InvalidArgumentError, match="Tensordot.*float64"):
        eager.tensordot(eager.constant(a), eager.constant(np.ones((2, 3))), 2)
    with pytest.raises(TypeError, match="Tensordot.*axes"):
        eager.tensordot(a, b, "1")
    with pytest.raises(ValueError):
        eager.tensordot(None, b, 0)
    out = product_ops.TENSORDOT.infer(eager.TensorSpec([None, 3]), eager.TensorSpec([3, None]),
                                      a_axes=(1,), b_axes=(0,))
    assert out.shape == [None, None]


# -----------------------------------------------------------------------------------------------
# einsum
# -----------------------------------------------------------------------------------------------

EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->", [(3, 3)]),
    ("ii->i", [(4, 4)]),
    ("ij->ji", [(2, 5)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("i,i", [(5,), (5,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...i->...", [(2, 3, 4)]),
    ("i...->...i", [(2, 3, 4)]),
    ("...", [()]),
    ("a...b,b...->a...", [(2, 3, 4), (4, 1)]),
    ("AbC,bC->A", [(2, 3, 4), (3, 4)]),
    (" i j , j k -> i k ", [(2, 3), (3, 2)]),
    ("ij,jk->ik", [(0, 3), (3, 2)]),
]


@pytest.mark.parametrize("equation,operand_shapes", EQUATIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex128])
def test_einsum_matches_numpy(equation, operand_shapes, dtype):
    rng = np.random.default_rng(len(equation))
    operands = [rng.integers(-4, 5, s).astype(dtype) for s in operand_shapes]
    out = eager.einsum(equation, *operands)
    ref = np.einsum(equation.replace(" ", ""), *operands)
    assert out.shape == ref.shape
    _check(out.numpy(), ref, dtype)


@given(st.data())
def test_einsum_ellipsis_broadcasting(data):
    shapes_ = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    i, j, k = (data.draw(st.integers(1, 3)) for _ in range(3))
    a = data.draw(arrays(np.float64, shapes_.input_shapes[0] + (i, j), _small(np.float64)))
    b = data.draw(arrays(np.float64, shapes_.input_shapes[1] + (j, k), _small(np.float64)))
    out = eager.einsum("...ij,...jk->...ik", a, b)
    np.testing.assert_allclose(out.numpy(), np.matmul(a, b), rtol=1e-12, atol=1e-12)


def test_einsum_infers_shapes_without_data():
    spec, infer = eager.TensorSpec, product_ops.EINSUM.infer
    assert infer(spec([None, 3]), spec([3, 4]), equation="ij,jk->ik").shape == [None, 4]
    assert infer(spec([1, None, 3]), spec([5, 3, 4]),
                 equation="...ij,...jk->...ik").shape == [5, None, 4]
    assert infer(spec(None), spec([3, 4]), equation="ij,jk->ki").shape == [4, None]
    assert infer(spec(None), spec([3, 4]), equation="...j,jk->...k").shape.rank is None
    assert infer(spec([2, 3, 4]), equation="...ij->ji...").shape == [4, 3, 2]
    with pytest.raises(InvalidArgumentError, match="Einsum.*Expected dimension 3"):
        infer(spec([2, 3]), spec([4, 5]), equation="ij,jk->ik")


def test_einsum_errors():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="Einsum.*incorrect format"):
        eager.einsum("ij,jk->i->k", a, b)
    with pytest.raises(ValueError, match="Einsum.*incorrect format"):
        eager.einsum("i1,jk", a, b)
    with pytest.raises(ValueError, match="Einsum.*ellipsis"):
        eager.einsum("i..j", a)
    with pytest.raises(ValueError, match='Einsum: got 1 inputs for equation "ij,jk->ik", '
                                         "expecting 2"):
        eager.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="Einsum.*'z'.*appears in no input"):
        eager.einsum("ij,jk->iz", a, b)
    with pytest.raises(NotImplementedError, match="Einsum.*repeated output"):
        eager.einsum("i->ii", np.ones(3))
    with pytest.raises(InvalidArgumentError, match="Einsum.*Expected input 0 to have rank 3 but "
                                                   "got: 2"):
        eager.einsum("ijk,jk->i", a, b)
    with pytest.raises(InvalidArgumentError, match=r"Einsum.*Expected dimension 3 at axis 0 of "
                                                   r"the input shaped \[1, 4\]"):
        eager.einsum("ij,jk->ik", a, np.ones((1, 4), np.float32))  # numpy would broadcast
    with pytest.raises(InvalidArgumentError, match="Einsum.*broadcasting dimension.*no ellipsis"):
        eager.einsum("...ij->ij", np.ones((2, 3, 4)))
    with pytest.raises(InvalidArgumentError, match="Einsum.*Incompatible shapes"):
        eager.einsum("...i,...i->...", np.ones((2, 3)), np.ones((4, 3)))
    with pytest.raises(InvalidArgumentError, match="Einsum.*float64"):
        eager.einsum("ij,jk", eager.constant(a), eager.constant(np.ones((3, 4))))
    with pytest.raises(NotFoundError, match="Einsum.*uint8"):
        eager.einsum("ij->ji", np.ones((2, 2), np.uint8))
    with pytest.raises(TypeError, match="Einsum.*string"):
        eager.einsum(None, a)
    with pytest.raises(TypeError, match="Einsum.*keyword"):
        eager.einsum("ij->ji", a, bogus=1)
    with pytest.raises(ValueError):
        eager.einsum("ij->ji", object())


# -----------------------------------------------------------------------------------------------
# norm
# -----------------------------------------------------------------------------------------------

def _np_vector_norm(x, ord_, axis, keepdims):
    p = 2 if ord_ == "euclidean" else ord_
    a = np.abs(x.astype(np.float64 if x.dtype.kind == "f" else np.complex128))
    if p == np.inf:
        return np.max(a, axis=axis, keepdims=keepdims)
    return np.sum(a ** p, axis=axis, keepdims=keepdims) ** (1 / p)


@st.composite
def vector_norm_case(draw):
    dtype = draw(st.sampled_from([np.float16, np.float32, np.float64]))
    x = draw(arrays(dtype, shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
                    st.floats(-10, 10, width=16)))
    axis = draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    ord_ = draw(st.sampled_from(["euclidean", 1, 2, np.inf, 3, 0.5, 1.5]))
    return x, ord_, axis, draw(st.booleans())


@given(vector_norm_case())
def test_vector_norms_match_numpy(case):
    x, ord_, axis, keepdims = case
    out = eager.norm(x, ord=ord_, axis=axis, keepdims=keepdims)
    if axis is None:
        ref = _np_vector_norm(x.ravel(), ord_, None, False)
        ref = np.reshape(ref, (1,) * x.ndim) if keepdims else ref
    else:
        ref = _np_vector_norm(x, ord_, axis, keepdims)
    assert out.dtype == x.dtype and out.shape == np.shape(ref)
    np.testing.assert_allclose(out.numpy().astype(np.float64), ref,
                               **TOL[x.dtype.type] if x.dtype != np.float16
                               else dict(rtol=5e-3, atol=5e-3))


@st.composite
def matrix_norm_case(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64, np.complex128]))
    x = draw(arrays(dtype, shapes(min_dims=2, max_dims=4, min_side=1, max_side=4),
                    _small(dtype)))
    axis = tuple(draw(st.permutations(range(x.ndim)))[:2])
    if draw(st.booleans()):
        axis = (axis[0] - x.ndim, axis[1])
    ord_ = draw(st.sampled_from(["euclidean", "fro", 1, 2, np.inf]))
    return x, ord_, axis, draw(st.booleans())


@given(matrix_norm_case())
def test_matrix_norms_match_numpy(case):
    x, ord_, axis, keepdims = case
    out = eager.norm(x, ord=ord_, axis=axis, keepdims=keepdims)
    ref = np.linalg.norm(x, ord="fro" if ord_ == "euclidean" else ord_, axis=axis,
                         keepdims=keepdims)
    assert out.shape == ref.shape
    # TF's quirk: the Frobenius norm of a complex tensor is complex (sqrt(sum(x * conj(x)))).
    expect_complex = x.dtype.kind == "c" and ord_ in ("fro", "euclidean")
    assert out.dtype == (x.dtype if expect_complex else x.real.dtype)
    np.testing.assert_allclose(out.numpy(), ref, **TOL[x.dtype.type])


def test_norm_axis_none_treats_a_matrix_as_a_vector_and_int_l1():
    m = np.array([[3.0, -4.0], [0.0, 12.0]], np.float32)
    assert eager.norm(m).numpy() == pytest.approx(13.0)
    assert eager.norm(m, ord=1).numpy() == pytest.approx(19.0)
    ints = eager.norm(np.array([[1, -2], [3, -4]], np.int32), ord=1, axis=[0, 1])
    assert ints.dtype == eager.int32 and ints.numpy() == 6
    assert eager.linalg.norm is eager.norm


def test_norm_errors():
    m = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="supported vector norm.*'fro'"):
        eager.norm(m, ord="fro")
    with pytest.raises(ValueError, match="supported vector norm"):
        eager.norm(m, ord=0)
    with pytest.raises(ValueError, match="supported vector norm"):
        eager.norm(m, ord=-np.inf, axis=1)
    with pytest.raises(ValueError, match="supported matrix norm.*'nuc'"):
        eager.norm(m, ord="nuc", axis=(0, 1))
    with pytest.raises(ValueError, match="supported matrix norm"):
        eager.norm(m, ord=3, axis=(0, 1))
    with pytest.raises(ValueError, match="'axis' must be None, an integer, or a tuple"):
        eager.norm(m, axis=(0, 0))
    with pytest.raises(ValueError, match="'axis' must be None, an integer, or a tuple"):
        eager.norm(m, axis=(0, 1, 2))
    with pytest.raises(ValueError, match="same axis"):
        eager.norm(m, axis=(1, -1))
    with pytest.raises(InvalidArgumentError, match="Norm.*axis 2"):
        eager.norm(m, axis=2)
    # TensorFlow 2.21 (verified): int32 is not in Sqrt's (Svd's) type list.
    with pytest.raises(InvalidArgumentError, match="Sqrt.*int32"):
        eager.norm([1, 2])
    with pytest.raises(InvalidArgumentError, match="MatrixSpectralNorm.*int32"):
        eager.norm([[1, 2]], ord=2, axis=(0, 1))
    with pytest.raises(ValueError):
        eager.norm(None)


def test_spectral_norm_edge_cases():
    x = np.zeros((2, 0, 3), np.float16)
    out = eager.norm(x, ord=2, axis=(1, 2))
    assert out.dtype == eager.float16 and out.shape == (2,)
    np.testing.assert_array_equal(out.numpy(), [0, 0])
    half = eager.norm(np.diag([3.0, 4.0]).astype(np.float16), ord=2, axis=[-2, -1])
    assert half.dtype == eager.float16 and float(half) == 4.0
    spec = linalg_ops.SPECTRAL_NORM.infer(eager.TensorSpec([None, 3, 4], eager.complex64),
                                          axes=(1, 2), keepdims=True)
    assert spec.shape == [None, 1, 1] and spec.dtype == eager.float32


def test_top_level_exports():
    for module, name in ((product_ops, "matmul"), (product_ops, "tensordot"),
                         (product_ops, "einsum"), (linalg_ops, "norm")):
        assert unwrap(getattr(eager, name)) is getattr(module, name)
        assert name in module.__all__


@given(batch=st.lists(st.integers(1, 3), max_size=2), m=st.integers(1, 4), n=st.integers(1, 4),
       transpose=st.booleans(), seed=st.integers(0, 1000))
def test_matvec_matches_numpy(batch, m, n, transpose, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, m) if transpose else (*batch, m, n))
    b = rng.standard_normal((*batch, n))
    got = eager.linalg.matvec(a, b, transpose_a=transpose)
    expected = np.einsum("...ij,...j->...i", np.swapaxes(a, -1, -2) if transpose else a, b)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    assert got.shape == expected.shape


def test_matvec_rank_errors_and_gradient():
    with pytest.raises(ValueError, match="rank >= 2"):
        eager.linalg.matvec(np.ones(3), np.ones(3))
    w = eager.constant(np.arange(6.0).reshape(2, 3))
    x = eager.constant(np.array([1.0, -1.0, 2.0]))
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = eager.reduce_sum(eager.linalg.matvec(w, x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), w.numpy().sum(axis=0))


# -- square matrices: inv, det, solve -------------------------------------------------------------

def _near_identity(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-0.3, 0.3, shape) + np.eye(shape[-1])


@settings(max_examples=20)
@given(batch=st.lists(st.integers(1, 3), max_size=2), n=st.integers(1, 4), k=st.integers(1, 3),
       seed=st.integers(0, 100))
def test_inv_det_solve_match_numpy(batch, n, k, seed):
    a = _near_identity(*batch, n, n, seed=seed)
    b = np.random.default_rng(seed + 1).normal(size=(*batch, n, k))
    np.testing.assert_allclose(eager.linalg.inv(a).numpy(), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(eager.linalg.inv(a, adjoint=True).numpy(),
                               np.linalg.inv(np.swapaxes(a, -1, -2)), rtol=1e-10)
    np.testing.assert_allclose(eager.linalg.det(a).numpy(), np.linalg.det(a), rtol=1e-10)
    np.testing.assert_allclose(eager.linalg.solve(a, b).numpy(), np.linalg.solve(a, b),
                               rtol=1e-10)
    np.testing.assert_allclose(eager.linalg.solve(a, b, adjoint=True).numpy(),
                               np.linalg.solve(np.swapaxes(a, -1, -2), b), rtol=1e-10)


@pytest.mark.parametrize("fn", [eager.linalg.inv, eager.linalg.det,
                                lambda a: eager.linalg.solve(a, a[..., :1] * 2.0 + 1.0)])
def test_inv_det_solve_second_order(fn):
    check_second_order(fn, [_near_identity(2, 3, 3, seed=7)])


def test_inv_det_solve_errors():
    # (`.numpy()`: a device whose kernels run later reports a singular input there)
    with pytest.raises(InvalidArgumentError, match="MatrixInverse: Input is not invertible"):
        eager.linalg.inv(np.zeros((2, 2))).numpy()
    with pytest.raises(InvalidArgumentError, match="MatrixSolve: Input is not invertible"):
        eager.linalg.solve(np.ones((2, 2)), np.ones((2, 1))).numpy()
    assert float(eager.linalg.det(np.ones((2, 2)))) == 0.0  # singular: a determinant of 0
    with pytest.raises(InvalidArgumentError, match="must be square"):
        eager.linalg.inv(np.ones((2, 3)))
    with pytest.raises(InvalidArgumentError, match="same batch shape"):
        eager.linalg.solve(np.eye(2)[None].repeat(3, 0), np.ones((2, 2, 1)))
    with pytest.raises(InvalidArgumentError, match="rank >= 2"):
        eager.linalg.det(np.ones(3))
