"""Matrix decompositions and triangular solves (`eager.linalg`): `cholesky`, `qr`, `eigh`,
`eigvalsh`, `svd`, `slogdet`, `triangular_solve`.

Each is TensorFlow's op (Cholesky, Qr, SelfAdjointEigV2, Svd, LogMatrixDeterminant,
MatrixTriangularSolve) on the last two axes, batched over the others, for TF's float and complex
dtypes. Values follow TensorFlow's CPU kernels where LAPACK leaves a choice: `cholesky` and `eigh`
read only the lower triangle; a matrix that is not positive definite gives NaNs from `cholesky`
(TF 2.21 raises nothing); a singular triangular system gives infs, by substitution as in TF's
kernel. Both hold on every backend: CuPy is made to report what it cannot factor
(`_reporting`), as numpy does. Singular vectors and eigenvectors are determined only up to sign
(phase), so only products of them are compared with TensorFlow's. The Svd record lives in
`linalg_grad` (the spectral norm's gradient uses it); its public function, and the other
gradients, are here and in `decomposition_grad`.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..base import dtypes as _dt
from ..base.ieee import quiet
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from ..core.argument_conversion import as_tensor, check_dtype, same_type
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.shapes import broadcast_shapes
from ..core.specs import TensorSpec
from .linalg_grad import SVD

__all__ = ["cholesky", "qr", "eigh", "eigvalsh", "svd", "slogdet", "triangular_solve"]

_DTYPES = _dt.INEXACT  # TensorFlow's: half, float, double, complex64, complex128


def _matrix_shape(op_name, shape, square=False):
    """(batch, rows, cols) of a shape, or None for an unknown rank; TF's rank/square errors."""
    if not shape._rank_known:
        return None
    if len(shape) < 2:
        raise op_error(op_name, f"Input tensor 0 must have rank >= 2, got {len(shape)}")
    rows, cols = shape[-2], shape[-1]
    if square and rows is not None and cols is not None and rows != cols:
        raise op_error(op_name, "Input matrix must be square.")
    return list(shape[:-2]), rows, cols


def _lapack(xp, x):
    """x in a dtype LAPACK has (half precision is computed in float32)."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _reporting(xp):
    """A context in which `xp.linalg` raises LinAlgError for a matrix it cannot factor, as
    numpy's always does (the kernels then compute TensorFlow's NaNs or infs). CuPy checks
    cuSOLVER's status only under `cupyx.errstate(linalg="raise")` (a device-to-host read of the
    status); otherwise its `cholesky` returns the partial factor and its `solve` the infs of a
    pivoted LU, in other places than TensorFlow's."""
    if xp is np:
        return contextlib.nullcontext()
    import cupyx  # noqa: PLC0415 - GPU only

    return cupyx.errstate(linalg="raise")


def _real(dtype):
    return np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype


# -- Cholesky ----------------------------------------------------------------------------------

def _cholesky_infer(x):
    _matrix_shape("Cholesky", x.shape, square=True)
    return TensorSpec(x.shape, x.dtype)


def _cholesky_kernel(xp, x):
    _matrix_shape("Cholesky", TensorShape(x.shape), square=True)
    a = _lapack(xp, x)
    lower = xp.tril(a)
    sym = lower + xp.conj(xp.swapaxes(xp.tril(a, -1), -1, -2))  # the lower triangle only
    with quiet(), _reporting(xp):
        try:
            out = xp.linalg.cholesky(sym)
        except Exception as exc:  # noqa: BLE001 - LinAlgError: TF gives NaNs, no error
            if type(exc).__name__ != "LinAlgError":
                raise
            out = _cholesky_each(xp, sym)
    return out.astype(x.dtype, copy=False)


def _cholesky_each(xp, sym):
    """Matrix by matrix, NaN in the lower triangle of those not positive definite (called
    under `_reporting`)."""
    flat = sym.reshape((-1,) + sym.shape[-2:])
    out = xp.zeros_like(flat)
    nan_lower = xp.tril(xp.full(flat.shape[-2:], np.nan, dtype=flat.dtype))
    for i in range(flat.shape[0]):
        try:
            out[i] = xp.linalg.cholesky(flat[i])
        except Exception:  # noqa: BLE001 - LinAlgError
            out[i] = nan_lower
    return out.reshape(sym.shape)


CHOLESKY = register_op("Cholesky", _cholesky_kernel, _cholesky_infer, dtypes=_DTYPES,
                       infer_from_types=True, doc="Lower Cholesky factor of each matrix.")


def cholesky(input, name=None):  # noqa: A002 - TensorFlow's argument name
    """≈ `tf.linalg.cholesky`: the lower-triangular L with L L^H = input, reading only the
    lower triangle; NaNs for a matrix that is not positive definite, as TensorFlow."""
    x = as_tensor(input)
    check_dtype(CHOLESKY, x, _DTYPES)
    return execute(CHOLESKY, (x,))


# -- Qr ----------------------------------------------------------------------------------------

def _qr_infer(x, full_matrices=False):
    dims = _matrix_shape("Qr", x.shape)
    if dims is None:
        return TensorSpec(UNKNOWN_SHAPE, x.dtype), TensorSpec(UNKNOWN_SHAPE, x.dtype)
    batch, rows, cols = dims
    k = rows if full_matrices else (None if rows is None or cols is None else min(rows, cols))
    return (TensorSpec(TensorShape(batch + [rows, k]), x.dtype),
            TensorSpec(TensorShape(batch + [k, cols]), x.dtype))


def _qr_kernel(xp, x, full_matrices=False):
    _matrix_shape("Qr", TensorShape(x.shape))
    a = _lapack(xp, x)
    *batch, rows, cols = a.shape
    k = rows if full_matrices else min(rows, cols)
    if 0 in a.shape:
        q = xp.broadcast_to(xp.eye(rows, k, dtype=a.dtype), (*batch, rows, k)).copy()
        return q.astype(x.dtype), xp.zeros((*batch, k, cols), x.dtype)
    with quiet():
        q, r = xp.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)


QR = register_op("Qr", _qr_kernel, _qr_infer, dtypes=_DTYPES, num_outputs=2,
                 infer_from_types=True, doc="QR decomposition of each matrix: (q, r).")


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """≈ `tf.linalg.qr`: (q, r) with q orthonormal columns and r upper triangular, q @ r =
    input; q is [..., M, min(M, N)] (or [..., M, M] with `full_matrices`)."""
    x = as_tensor(input)
    check_dtype(QR, x, _DTYPES)
    return execute(QR, (x,), {"full_matrices": bool(full_matrices)})


# -- SelfAdjointEigV2 --------------------------------------------------------------------------

def _eigh_infer(x):
    dims = _matrix_shape("SelfAdjointEigV2", x.shape, square=True)
    if dims is None:
        return TensorSpec(UNKNOWN_SHAPE, x.dtype), TensorSpec(UNKNOWN_SHAPE, x.dtype)
    batch, rows, cols = dims
    n = rows if rows is not None else cols
    return TensorSpec(TensorShape(batch + [n]), x.dtype), TensorSpec(x.shape, x.dtype)


def _eigh_kernel(xp, x):
    _matrix_shape("SelfAdjointEigV2", TensorShape(x.shape), square=True)
    if 0 in x.shape:
        return xp.zeros(x.shape[:-1], x.dtype), xp.zeros(x.shape, x.dtype)
    with quiet():
        e, v = xp.linalg.eigh(_lapack(xp, x), UPLO="L")
    # TensorFlow's eigenvalues have the input's dtype (complex for complex input).
    return e.astype(x.dtype), v.astype(x.dtype, copy=False)


EIGH = register_op("SelfAdjointEigV2", _eigh_kernel, _eigh_infer, dtypes=_DTYPES, num_outputs=2,
                   infer_from_types=True,
                   doc="Eigenvalues (ascending) and eigenvectors of self-adjoint matrices.")


def eigh(tensor, name=None):
    """≈ `tf.linalg.eigh`: (e, v) of each self-adjoint matrix (its lower triangle is read):
    eigenvalues ascending, in the input's dtype; v's columns the eigenvectors."""
    x = as_tensor(tensor)
    check_dtype(EIGH, x, _DTYPES)
    return execute(EIGH, (x,))


def eigvalsh(tensor, name=None):
    """≈ `tf.linalg.eigvalsh`: the eigenvalues of `eigh`, ascending."""
    return eigh(tensor)[0]


# -- Svd (the record is linalg_grad.SVD) -------------------------------------------------------

def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """≈ `tf.linalg.svd`: (s, u, v) with tensor = u diag(s) v^H, singular values descending (TF's
    order: s first, and v, not v^H); only s with `compute_uv=False`. `full_matrices` makes u
    [..., M, M] and v [..., N, N]."""
    x = as_tensor(tensor)
    check_dtype(SVD, x, SVD.dtypes)
    s, u, v = execute(SVD, (x,), {"full_matrices": bool(full_matrices) and bool(compute_uv)})
    return (s, u, v) if compute_uv else s


# -- LogMatrixDeterminant ----------------------------------------------------------------------

def _slogdet_infer(x):
    dims = _matrix_shape("LogMatrixDeterminant", x.shape, square=True)
    shape = UNKNOWN_SHAPE if dims is None else TensorShape(dims[0])
    return TensorSpec(shape, x.dtype), TensorSpec(shape, x.dtype)


def _slogdet_kernel(xp, x):
    _matrix_shape("LogMatrixDeterminant", TensorShape(x.shape), square=True)
    with quiet():
        sign, logdet = xp.linalg.slogdet(_lapack(xp, x))
    return xp.asarray(sign).astype(x.dtype), xp.asarray(logdet).astype(x.dtype)


SLOGDET = register_op("LogMatrixDeterminant", _slogdet_kernel, _slogdet_infer, dtypes=_DTYPES,
                      num_outputs=2, infer_from_types=True,
                      doc="(sign, log |det|) of each square matrix.")


def slogdet(input, name=None):  # noqa: A002
    """≈ `tf.linalg.slogdet`: (sign, log_abs_determinant) of each square matrix, both in the
    input's dtype (sign 0 and -inf for a singular matrix)."""
    x = as_tensor(input)
    check_dtype(SLOGDET, x, _DTYPES)
    return execute(SLOGDET, (x,))


# -- MatrixTriangularSolve ---------------------------------------------------------------------

def _tri_shapes(matrix_shape, rhs_shape):
    a = _matrix_shape("MatrixTriangularSolve", matrix_shape, square=True)
    b = _matrix_shape("MatrixTriangularSolve", rhs_shape)
    if a is None or b is None:
        return UNKNOWN_SHAPE
    if a[2] is not None and b[1] is not None and a[2] != b[1]:
        raise op_error("MatrixTriangularSolve", f"In[0] mismatch In[1] shape: {a[2]} vs. {b[1]}: "
                                                f"{list(matrix_shape)} {list(rhs_shape)}")
    batch = broadcast_shapes("MatrixTriangularSolve", TensorShape(a[0]), TensorShape(b[0]))
    return batch.concatenate([a[1], b[2]])


def _tri_infer(matrix, rhs, lower=True, adjoint=False):
    return TensorSpec(_tri_shapes(matrix.shape, rhs.shape), matrix.dtype)


def _tri_kernel(xp, matrix, rhs, lower=True, adjoint=False):
    shape = _tri_shapes(TensorShape(matrix.shape), TensorShape(rhs.shape))
    a = _lapack(xp, matrix)
    a = xp.tril(a) if lower else xp.triu(a)
    if adjoint:
        a = xp.conj(xp.swapaxes(a, -1, -2))
    b = _lapack(xp, rhs)
    a = xp.broadcast_to(a, tuple(shape[:-2]) + a.shape[-2:])
    b = xp.broadcast_to(b, tuple(shape[:-2]) + b.shape[-2:])
    if 0 in a.shape or 0 in b.shape:
        return xp.zeros(tuple(shape), matrix.dtype)
    with quiet():
        try:
            with _reporting(xp):
                out = xp.linalg.solve(a, b)
        except Exception as exc:  # noqa: BLE001 - LinAlgError: a zero on the diagonal
            if type(exc).__name__ != "LinAlgError":
                raise
            out = _substitute(xp, a, b, lower != adjoint)
    return out.astype(matrix.dtype, copy=False)


def _substitute(xp, a, b, lower):
    """Forward (or back) substitution, row by row: what TF's kernel computes for a singular
    triangular matrix (infs and NaNs from the zero pivots, no error)."""
    n = a.shape[-1]
    out = xp.zeros(b.shape, np.result_type(a, b))
    order = range(n) if lower else range(n - 1, -1, -1)
    for i in order:
        acc = b[..., i, :] - xp.einsum("...j,...jk->...k", a[..., i, :], out)
        out[..., i, :] = acc / a[..., i, i][..., None]
    return out


TRIANGULAR_SOLVE = register_op("MatrixTriangularSolve", _tri_kernel, _tri_infer, dtypes=_DTYPES,
                               infer_from_types=True,
                               doc="X with triangular(matrix) @ X = rhs, batch axes broadcast.")


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """≈ `tf.linalg.triangular_solve`: X with A @ X = rhs (A^H @ X = rhs with `adjoint`), A the
    lower (or, `lower=False`, upper) triangle of `matrix`; batch axes broadcast."""
    matrix, rhs = same_type(TRIANGULAR_SOLVE, matrix, rhs)
    check_dtype(TRIANGULAR_SOLVE, matrix, _DTYPES)
    return execute(TRIANGULAR_SOLVE, (matrix, rhs),
                   {"lower": bool(lower), "adjoint": bool(adjoint)})
