"""Linear algebra composed of other ops, as TensorFlow composes it in Python (`eager.linalg`):
`logdet`, `pinv`, `lstsq` (`expm`, which loops, is `eager.functions.expm`).

Being compositions, they run eagerly, trace, and differentiate through their parts' gradients:

* `logdet(A)` = 2 sum(log(diag(cholesky(A)))) for Hermitian positive-definite A (TF's formula).
* `pinv(a, rcond)` = V diag(1/s) U^H from the SVD, singular values below rcond * max(s) dropped
  (rcond defaults to 10 * max(M, N) * eps of the dtype, as TF).
* `lstsq(A, B, l2_regularizer, fast=True)`: the normal equations through a Cholesky factor,
  (A^H A + l2 I)^-1 A^H B for M >= N, A^H (A A^H + l2 I)^-1 B for M < N (TF's fast path);
  `fast=False` uses the pseudo-inverse (more robust for ill-conditioned A; with a regulariser it
  is the same regularised formula).
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor, check_dtype, same_type
from . import math_ops as m
from .array_ops import expand_dims, shape as _shape
from ..core.registry import OpDef
from .creation_ops import eye, ones_like
from .decomposition_ops import cholesky, svd, triangular_solve
from .matrix_ops import diag_part
from .product_ops import matmul

__all__ = ["logdet", "pinv", "lstsq"]

_DTYPES = _dt.INEXACT


def logdet(matrix, name=None):
    """≈ `tf.linalg.logdet`: log(det(matrix)) of Hermitian positive-definite matrices, via the
    Cholesky factor (NaN for a matrix that is not positive definite)."""
    x = as_tensor(matrix)
    low = cholesky(x)
    return 2.0 * m.reduce_sum(m.log(m.real(diag_part(low))), axis=-1) if not x.dtype.is_complex \
        else m.cast(2.0 * m.reduce_sum(m.log(m.real(diag_part(low))), axis=-1), x.dtype)


def pinv(a, rcond=None, validate_args=False, name=None):
    """≈ `tf.linalg.pinv`: the Moore-Penrose pseudo-inverse of each matrix, from its SVD;
    singular values at most rcond * max(s) count as zero."""
    x = as_tensor(a)
    check_dtype(_PINV, x, _dt.FLOATING)
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ValueError(f"pinv: Input `a` must have at least 2 dimensions, got shape {x.shape}.")
    s, u, v = svd(x, full_matrices=False)
    if rcond is None:
        rows, cols = x.shape[-2], x.shape[-1]
        size = max(rows, cols) if rows is not None and cols is not None else \
            m.cast(m.reduce_max(_shape(x)[-2:]), x.dtype)
        rcond = 10.0 * size * float(np.finfo(x.dtype.as_numpy_dtype).eps)
    cutoff = m.multiply(m.cast(rcond, s.dtype), m.reduce_max(s, axis=-1, keepdims=True))
    keep = m.greater(s, cutoff)
    safe = m.where(keep, s, ones_like(s))
    inv_s = m.where(keep, 1.0 / safe, m.multiply(s, 0.0))
    return matmul(v * expand_dims(m.cast(inv_s, v.dtype), -2), u, adjoint_b=True)


# How pinv's and lstsq's arguments are checked (never registered: the ops they compose run).
_PINV = OpDef("Svd", None, None, dtypes=_dt.FLOATING)
_LSTSQ = OpDef("MatrixSolveLs", None, None, dtypes=_DTYPES)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """≈ `tf.linalg.lstsq`: the X minimising ||matrix @ X - rhs||^2 + l2 ||X||^2 for each
    matrix (see the module doc for how)."""
    a, b = same_type(_LSTSQ, matrix, rhs)
    check_dtype(_LSTSQ, a, _DTYPES)
    if a.shape.rank is not None and a.shape.rank < 2 or b.shape.rank is not None and \
            b.shape.rank < 2:
        raise ValueError(f"lstsq: matrix and rhs must have rank >= 2, got shapes {a.shape} and "
                         f"{b.shape}.")
    rows, cols = a.shape[-2], a.shape[-1]
    if rows is not None and b.shape[-2] is not None and rows != b.shape[-2]:
        raise ValueError(f"lstsq: matrix and rhs must have the same number of rows, got "
                         f"{a.shape} and {b.shape}.")
    l2 = float(l2_regularizer) if not hasattr(l2_regularizer, "dtype") else l2_regularizer
    if not fast and isinstance(l2, float) and l2 == 0.0:
        return matmul(pinv(a), b)
    if rows is not None and cols is not None and rows < cols:  # underdetermined
        gram = matmul(a, a, adjoint_b=True)
        low = cholesky(gram + m.cast(l2, a.dtype) * eye(rows, dtype=a.dtype))
        y = _cholesky_solve(low, b)
        return matmul(a, y, adjoint_a=True)
    gram = matmul(a, a, adjoint_a=True)
    n = cols if cols is not None else _shape(a)[-1]
    low = cholesky(gram + m.cast(l2, a.dtype) * eye(n, dtype=a.dtype))
    return _cholesky_solve(low, matmul(a, b, adjoint_a=True))


def _cholesky_solve(low, rhs):
    """X with L L^H X = rhs."""
    y = triangular_solve(low, rhs, lower=True)
    return triangular_solve(low, y, lower=True, adjoint=True)
