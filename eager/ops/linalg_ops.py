"""Linear algebra beyond products (`eager.linalg`; `norm` also at top level): `norm`, and the
square-matrix ops `linalg.inv`, `linalg.det`, `linalg.solve`.

`norm` is composed of math ops exactly as TensorFlow composes it, so it gives TF's numbers and
dtypes (and differentiates through those ops), except the matrix 2-norm, which needs singular
values and is one op of its own (MatrixSpectralNorm).

The square-matrix ops are batched over leading axes, as TensorFlow's MatrixInverse /
MatrixDeterminant / MatrixSolve. A singular matrix is an InvalidArgumentError naming the op, as
TensorFlow's "Input is not invertible"; a singular determinant is simply 0. Their gradients,
and the spectral norm's, are in `linalg_grad`.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from ..base import dtypes as _dt
from ..base.ieee import quiet
from ..core.specs import TensorSpec
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from . import math_ops as _m
from ..core.argument_conversion import as_tensor, check_dtype, same_type
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.shapes import normalize_axis, reduced_shape

__all__ = ["norm", "inv", "det", "solve"]


# -----------------------------------------------------------------------------------------------
# norm
# -----------------------------------------------------------------------------------------------

_NORM = "Norm"
_SPECTRAL = "MatrixSpectralNorm"


def _spectral_infer(x, axes=(0, 1), keepdims=False):
    s = x.shape
    if s._rank_known:
        for a in axes:
            normalize_axis(_SPECTRAL, a, len(s))
    return TensorSpec(reduced_shape(s, axes if s._rank_known else None, keepdims),
                      x.dtype.real_dtype)


def _spectral_kernel(xp, x, axes=(0, 1), keepdims=False):
    real = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype
    m = xp.moveaxis(xp.asarray(x), axes, (-2, -1))
    if x.dtype == np.float16:  # LAPACK has no half precision
        m = m.astype(np.float32)
    if 0 in m.shape[-2:]:
        out = xp.zeros(m.shape[:-2], dtype=real)
    else:
        with quiet():  # np.linalg's Python code signals out of eager's reach (base.ieee)
            out = xp.linalg.svd(m, compute_uv=False).max(axis=-1)
    if keepdims:
        for a in sorted(axes):
            out = xp.expand_dims(out, a)
    return xp.asarray(out).astype(real, copy=False)


SPECTRAL_NORM = register_op(_SPECTRAL, _spectral_kernel, _spectral_infer, dtypes=_dt.INEXACT,
                            doc="The largest singular value over two axes (TF's matrix 2-norm "
                                "computes it as max(abs(svd(x))) after a transpose).")

_MATRIX_ORDS = ["euclidean", "fro", 1, 2, np.inf]


def _is_ord(ord, value):  # noqa: A002 - TensorFlow's argument name
    return (isinstance(ord, str) == isinstance(value, str)) and ord == value


def _matrix_axes(axis):
    try:
        a0, a1 = (operator.index(a) for a in axis)
    except TypeError:
        a0 = a1 = None
    if a0 is None or a0 == a1:
        raise ValueError(f"{_NORM}: 'axis' must be None, an integer, or a tuple of 2 unique "
                         f"integers, got {axis}")
    return a0, a1


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    """≈ `tf.norm`: vector norms ('euclidean' = 2, 1, np.inf, any p > 0) over all elements
    (axis None) or one axis; matrix norms ('fro' = 'euclidean', 1, 2, np.inf) over an axis pair.

    TF's composition is reproduced, so are its numbers and dtypes: the euclidean norm is
    sqrt(sum(x * conj(x))) (complex for complex input, as in TF), the others work on abs(x).
    'fro' on vectors and ord <= 0 are ValueErrors, as TF raises. The matrix 2-norm is the largest
    singular value; for an empty matrix it is 0 (TF gives the dtype's lowest value there).
    """
    keepdims = bool(keepdims)
    is_matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix:
        axis = _matrix_axes(axis)
        if not any(_is_ord(ord, o) for o in _MATRIX_ORDS):
            raise ValueError(f"{_NORM}: 'ord' must be a supported matrix norm in "
                             f"{_MATRIX_ORDS}, got {ord!r}")
    else:
        if axis is not None:
            try:
                axis = (operator.index(axis),)
            except TypeError:
                raise ValueError(f"{_NORM}: 'axis' must be None, an integer, or a tuple of 2 "
                                 f"unique integers, got {axis!r}") from None
        vector_ok = _is_ord(ord, "euclidean") or (
            isinstance(ord, numbers.Real) and not isinstance(ord, str) and ord > 0)
        if not vector_ok:
            raise ValueError(f"{_NORM}: 'ord' must be a supported vector norm ('euclidean', 1, 2, "
                             f"np.inf or a positive real number), got {ord!r}")
    x = as_tensor(tensor)
    if x.dtype.is_bool:  # TensorFlow's Python check, before any op
        raise TypeError(f"{_NORM}: Expected numeric or variant tensor, got dtype bool.")
    rank = x.shape.rank
    if axis is not None and rank is not None:
        axis = tuple(normalize_axis(_NORM, a, rank) for a in axis)
        if len(set(axis)) != len(axis):
            raise ValueError(f"{_NORM}: the two matrix axes {axis} name the same axis.")
    if _is_ord(ord, "euclidean") or _is_ord(ord, "fro") or _is_ord(ord, 2):
        if is_matrix and _is_ord(ord, 2):
            check_dtype(SPECTRAL_NORM, x, SPECTRAL_NORM.dtypes)
            return execute(SPECTRAL_NORM, (x,), {"axes": axis, "keepdims": keepdims})
        return _m.sqrt(_m.reduce_sum(_m.multiply(x, _m.conj(x)), axis, keepdims))
    magnitude = _m.abs(x)
    if _is_ord(ord, 1):
        if is_matrix:  # max over columns of the column sums
            return _m.reduce_max(_m.reduce_sum(magnitude, axis[0], True), axis, keepdims)
        return _m.reduce_sum(magnitude, axis, keepdims)
    if _is_ord(ord, np.inf):
        if is_matrix:  # max over rows of the row sums
            return _m.reduce_max(_m.reduce_sum(magnitude, axis[1], True), axis, keepdims)
        return _m.reduce_max(magnitude, axis, keepdims)
    return _m.pow(_m.reduce_sum(_m.pow(magnitude, ord), axis, keepdims), 1.0 / ord)


# -----------------------------------------------------------------------------------------------
# Square matrices: inverse, determinant, solve
# -----------------------------------------------------------------------------------------------

_DTYPES = _dt.FLOATING | _dt.COMPLEX


def _square(op_name, shape):
    if not shape._rank_known:
        return None
    if len(shape) < 2:
        raise op_error(op_name, f"Input must have rank >= 2, got shape {shape}")
    n, k = shape[-2], shape[-1]
    if n is not None and k is not None and n != k:
        raise op_error(op_name, f"Input matrix must be square, got shape {shape}")
    return shape


def _factored(op_name, xp, routine, *args):
    """`routine(*args)` with a singular matrix reported as TensorFlow's "Input is not
    invertible." numpy raises LinAlgError itself (and computes under `quiet()`: np.linalg's
    Python code casts its result where eager's filter cannot see the signal, `eager.base.ieee`);
    CuPy checks the factorization's status only under `cupyx.errstate(linalg="raise")` (a
    device-to-host read of the status, as TF's GPU kernels check theirs) and otherwise returns
    infs and NaNs."""
    try:
        if xp is np:
            with quiet():
                return routine(*args)
        import cupyx  # noqa: PLC0415 - GPU only

        with cupyx.errstate(linalg="raise"):
            return routine(*args)
    except Exception as exc:  # noqa: BLE001 - numpy/CuPy's LinAlgError: TF's message
        if type(exc).__name__ == "LinAlgError":
            raise op_error(op_name, "Input is not invertible.") from exc
        raise


# -- inverse -----------------------------------------------------------------------------------

def _inv_infer(x, adjoint=False):
    shape = _square("MatrixInverse", x.shape)
    return TensorSpec(UNKNOWN_SHAPE if shape is None else shape, x.dtype)


def _inv_kernel(xp, x, adjoint=False):
    _square("MatrixInverse", TensorShape(x.shape))
    if adjoint:
        x = xp.conj(x.swapaxes(-1, -2))
    return _factored("MatrixInverse", xp, xp.linalg.inv, x)


MATRIX_INVERSE = register_op("MatrixInverse", _inv_kernel, _inv_infer, dtypes=_DTYPES,
                             infer_from_types=True)


def inv(input, adjoint=False, name=None):  # noqa: A002 - TensorFlow's argument name
    """≈ `tf.linalg.inv`: the inverse of each square matrix in the last two axes (of its
    adjoint with `adjoint=True`)."""
    x = as_tensor(input)
    check_dtype(MATRIX_INVERSE, x, _DTYPES)
    return execute(MATRIX_INVERSE, (x,), {"adjoint": bool(adjoint)})


# -- determinant -------------------------------------------------------------------------------

def _det_infer(x):
    shape = _square("MatrixDeterminant", x.shape)
    return TensorSpec(UNKNOWN_SHAPE if shape is None else TensorShape(tuple(shape)[:-2]), x.dtype)


def _det_kernel(xp, x):
    _square("MatrixDeterminant", TensorShape(x.shape))
    with quiet():  # np.linalg's Python code signals out of eager's reach (base.ieee)
        return xp.asarray(xp.linalg.det(x), dtype=x.dtype)


MATRIX_DETERMINANT = register_op("MatrixDeterminant", _det_kernel, _det_infer, dtypes=_DTYPES,
                                 infer_from_types=True)


def det(input, name=None):  # noqa: A002
    """≈ `tf.linalg.det`: the determinant of each square matrix in the last two axes."""
    x = as_tensor(input)
    check_dtype(MATRIX_DETERMINANT, x, _DTYPES)
    return execute(MATRIX_DETERMINANT, (x,))


# -- solve -------------------------------------------------------------------------------------

def _solve_infer(matrix, rhs, adjoint=False):
    return TensorSpec(_solve_shapes(matrix.shape, rhs.shape), matrix.dtype)


def _solve_shapes(matrix_shape, rhs_shape):
    """The solution's shape, raising TensorFlow's errors for matrix and rhs shapes."""
    a = _square("MatrixSolve", matrix_shape)
    b = rhs_shape
    if a is None or not b._rank_known:
        return UNKNOWN_SHAPE
    if len(b) < 2:
        raise op_error("MatrixSolve", f"rhs must have rank >= 2, got shape {b}")
    if a[-1] is not None and b[-2] is not None and a[-1] != b[-2]:
        raise op_error("MatrixSolve", f"Input matrix and right-hand side must have the same "
                                      f"number of rows, got {a} and {b}")
    batch_a, batch_b = TensorShape(tuple(a)[:-2]), TensorShape(tuple(b)[:-2])
    if not batch_a.is_compatible_with(batch_b):  # as TensorFlow's kernel: no broadcasting
        raise op_error("MatrixSolve", f"Input matrix and right-hand side must have the same "
                                      f"batch shape, got {a} and {b}")
    return batch_a.merge_with(batch_b).concatenate([a[-1], b[-1]])


def _solve_kernel(xp, matrix, rhs, adjoint=False):
    _solve_shapes(TensorShape(matrix.shape), TensorShape(rhs.shape))  # TF's shape errors
    if adjoint:
        matrix = xp.conj(matrix.swapaxes(-1, -2))
    return _factored("MatrixSolve", xp, xp.linalg.solve, matrix, rhs)


MATRIX_SOLVE = register_op("MatrixSolve", _solve_kernel, _solve_infer, dtypes=_DTYPES,
                           infer_from_types=True)


def solve(matrix, rhs, adjoint=False, name=None):
    """≈ `tf.linalg.solve`: X with matrix @ X = rhs (matrix^H @ X = rhs with `adjoint=True`),
    for each matrix in the last two axes."""
    matrix, rhs = same_type(MATRIX_SOLVE, matrix, rhs)
    check_dtype(MATRIX_SOLVE, matrix, _DTYPES)
    return execute(MATRIX_SOLVE, (matrix, rhs), {"adjoint": bool(adjoint)})
