"""Diagonals and bands of matrices (`eager.linalg`): `diag`, `diag_part`, `set_diag`,
`band_part`, and the compositions on them `matrix_transpose`, `adjoint`, `trace`.

Each works on the last two axes, batched over the others, as TensorFlow's MatrixDiagV3 /
MatrixDiagPartV3 / MatrixSetDiagV3 / MatrixBandPart. The diagonal offset `k` is one integer
(k > 0 above the main diagonal, k < 0 below); TensorFlow's pair form (a band of diagonals at
once) is an UnimplementedError here. Offsets outside the matrix are TF's InvalidArgumentError.
Gradients are in `matrix_grad`: each op's gradient is another of them.
"""

from __future__ import annotations

import operator

from ..base import dtypes as _dt
from ..base.errors import UnimplementedError
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from ..core.argument_conversion import as_tensor, check_dtype, same_type
from ..core.dispatch import execute, named
from ..core.registry import op_error, register_op
from ..core.specs import TensorSpec
from . import math_ops as _m
from .array_ops import transpose

__all__ = ["diag", "diag_part", "set_diag", "band_part", "matrix_transpose", "adjoint", "trace"]

_DTYPES = _dt.ALL  # TF's diagonal ops take any type


def _offset(op_name, k):
    if isinstance(k, (list, tuple)) or (hasattr(k, "shape") and len(getattr(k, "shape", ())) > 0):
        ks = [operator.index(v) for v in (k.numpy().tolist() if hasattr(k, "numpy") else k)]
        if len(ks) == 1 or (len(ks) == 2 and ks[0] == ks[1]):
            return ks[0]
        raise UnimplementedError(None, op_name, f"{op_name}: k as a pair of different offsets "
                                               f"(a band of diagonals) is not supported; take "
                                               f"the diagonals one at a time. [Op:{op_name}]")
    return operator.index(int(k)) if hasattr(k, "numpy") else operator.index(k)


def _diag_length(rows, cols, k):
    return min(rows + min(k, 0), cols - max(k, 0))


def _diag_indices(xp, rows, cols, k):
    n = _diag_length(rows, cols, k)
    i = xp.arange(n) + max(-k, 0)
    return i, i + k


def _check_matrix(op_name, shape, k, what="input"):
    if shape._rank_known and len(shape) < 2:
        raise op_error(op_name, f"{what} must be at least 2-dim, received shape: {shape}")
    if shape._rank_known:
        rows, cols = shape[-2], shape[-1]
        if rows is not None and cols is not None and rows and cols and not (-rows < k < cols):
            raise op_error(op_name, f"Diagonal index {k} is out of bounds: the matrix is "
                                    f"{rows}x{cols}, so k must be in ({-rows}, {cols}).")


# -- diag_part ---------------------------------------------------------------------------------

def _diag_part_infer(x, k=0, padding_value=0):
    shape = x.shape
    _check_matrix("MatrixDiagPartV3", shape, k)
    if not shape._rank_known:
        return TensorSpec(UNKNOWN_SHAPE, x.dtype)
    rows, cols = shape[-2], shape[-1]
    n = None if rows is None or cols is None else max(_diag_length(rows, cols, k), 0)
    return TensorSpec(TensorShape(tuple(shape)[:-2] + (n,)), x.dtype)


def _diag_part_kernel(xp, x, k=0, padding_value=0):
    _check_matrix("MatrixDiagPartV3", TensorShape(x.shape), k)
    return xp.ascontiguousarray(xp.diagonal(x, offset=k, axis1=-2, axis2=-1))


MATRIX_DIAG_PART = register_op("MatrixDiagPartV3", _diag_part_kernel, _diag_part_infer,
                               dtypes=_DTYPES, infer_from_types=True,
                               doc="The k-th diagonal of each matrix in the last two axes.")


def diag_part(input, name="diag_part", k=0, padding_value=0,  # noqa: A002 - TF's names
              align="RIGHT_LEFT"):
    """≈ `tf.linalg.diag_part`: the k-th diagonal of each matrix (k > 0 above the main one)."""
    x = as_tensor(input)
    k = _offset("MatrixDiagPartV3", k)
    return execute(MATRIX_DIAG_PART, (x,), {"k": k})


# -- diag --------------------------------------------------------------------------------------

def _diag_dims(n, k, num_rows, num_cols):
    """TensorFlow's output size for an n-long diagonal at offset k: square n + |k| unless the
    rows or columns are given (the other is then the smallest that holds the diagonal)."""
    if n is None:
        return num_rows if num_rows > 0 else None, num_cols if num_cols > 0 else None
    rows = num_rows if num_rows > 0 else None
    cols = num_cols if num_cols > 0 else None
    if rows is None and cols is None:
        rows = cols = n + abs(k)
    elif rows is None:
        rows = n + max(-k, 0)
    elif cols is None:
        cols = n + max(k, 0)
    return rows, cols


def _diag_infer(d, k=0, num_rows=-1, num_cols=-1, padding_value=0):
    shape = d.shape
    if not shape._rank_known:
        return TensorSpec(UNKNOWN_SHAPE, d.dtype)
    if len(shape) < 1:
        raise op_error("MatrixDiagV3", f"diagonal must be at least 1-dim, received shape: "
                                       f"{shape}")
    n = shape[-1]
    rows, cols = _diag_dims(n, k, num_rows, num_cols)
    if n is not None and rows is not None and cols is not None and \
            _diag_length(rows, cols, k) != n:
        raise op_error("MatrixDiagV3", f"The number of diagonal elements {n} does not fit a "
                                       f"{rows}x{cols} matrix at offset k = {k}.")
    return TensorSpec(TensorShape(tuple(shape)[:-1] + (rows, cols)), d.dtype)


def _diag_kernel(xp, d, k=0, num_rows=-1, num_cols=-1, padding_value=0):
    spec = _diag_infer(TensorSpec(TensorShape(d.shape), _dt.as_dtype(d.dtype)), k, num_rows,
                       num_cols)
    rows, cols = spec.shape[-2], spec.shape[-1]
    out = xp.full(d.shape[:-1] + (rows, cols), padding_value, dtype=d.dtype)
    i, j = _diag_indices(xp, rows, cols, k)
    out[..., i, j] = d
    return out


MATRIX_DIAG = register_op("MatrixDiagV3", _diag_kernel, _diag_infer, dtypes=_DTYPES,
                          infer_from_types=True,
                          doc="Matrices with the given k-th diagonal, padding elsewhere.")


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1,
         padding_value=0, align="RIGHT_LEFT"):
    """≈ `tf.linalg.diag`: a matrix (batched over leading axes) whose k-th diagonal is
    `diagonal` and whose other elements are `padding_value`; square of side len + |k| unless
    `num_rows` / `num_cols` say otherwise."""
    d = as_tensor(diagonal)
    k = _offset("MatrixDiagV3", k)
    attrs = {"k": k, "num_rows": int(num_rows), "num_cols": int(num_cols),
             "padding_value": padding_value.item() if hasattr(padding_value, "item")
             else padding_value}
    out = execute(MATRIX_DIAG, (d,), attrs)
    return out if name in (None, "diag") else named(out, name)


# -- set_diag ----------------------------------------------------------------------------------

def _set_diag_infer(x, d, k=0):
    shape = x.shape
    _check_matrix("MatrixSetDiagV3", shape, k)
    if shape._rank_known and d.shape._rank_known:
        expected = _diag_part_infer(x, k).shape
        if not expected.is_compatible_with(d.shape):
            raise op_error("MatrixSetDiagV3", f"diagonal must have shape {expected} for input "
                                              f"shape {shape} and k = {k}, got {d.shape}")
    return TensorSpec(shape, x.dtype)


def _set_diag_kernel(xp, x, d, k=0):
    _set_diag_infer(TensorSpec(TensorShape(x.shape), _dt.as_dtype(x.dtype)),
                    TensorSpec(TensorShape(d.shape), _dt.as_dtype(d.dtype)), k)
    out = x.copy()
    i, j = _diag_indices(xp, x.shape[-2], x.shape[-1], k)
    out[..., i, j] = d
    return out


MATRIX_SET_DIAG = register_op("MatrixSetDiagV3", _set_diag_kernel, _set_diag_infer,
                              dtypes=_DTYPES, infer_from_types=True,
                              doc="The input with its k-th diagonal replaced.")


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """≈ `tf.linalg.set_diag`: `input` with its k-th diagonal replaced by `diagonal`."""
    x, d = same_type(MATRIX_SET_DIAG, input, diagonal)
    k = _offset("MatrixSetDiagV3", k)
    return execute(MATRIX_SET_DIAG, (x, d), {"k": k})


# -- band_part ---------------------------------------------------------------------------------

def _band_infer(x, num_lower=-1, num_upper=-1):
    shape = x.shape
    if shape._rank_known and len(shape) < 2:
        raise op_error("MatrixBandPart", f"input must be at least 2-dim, received shape: {shape}")
    if shape._rank_known:
        rows, cols = shape[-2], shape[-1]
        if rows is not None and num_lower > rows:
            raise op_error("MatrixBandPart", f"num_lower must be negative or less or equal to "
                                             f"number of rows ({rows}) got: {num_lower}")
        if cols is not None and num_upper > cols:
            raise op_error("MatrixBandPart", f"num_upper must be negative or less or equal to "
                                             f"number of columns ({cols}) got: {num_upper}")
    return TensorSpec(shape, x.dtype)


def band_mask(xp, rows, cols, num_lower, num_upper):
    """The (rows, cols) boolean mask of the band: i - j <= num_lower and j - i <= num_upper
    (a negative bound keeps that whole triangle)."""
    i = xp.arange(rows)[:, None]
    j = xp.arange(cols)[None, :]
    keep = xp.ones((rows, cols), dtype=bool)
    if num_lower >= 0:
        keep &= (i - j) <= num_lower
    if num_upper >= 0:
        keep &= (j - i) <= num_upper
    return keep


def _band_kernel(xp, x, num_lower=-1, num_upper=-1):
    _band_infer(TensorSpec(TensorShape(x.shape), _dt.as_dtype(x.dtype)), num_lower, num_upper)
    keep = band_mask(xp, x.shape[-2], x.shape[-1], num_lower, num_upper)
    return xp.where(keep, x, xp.zeros((), x.dtype))


MATRIX_BAND_PART = register_op("MatrixBandPart", _band_kernel, _band_infer, dtypes=_DTYPES,
                               infer_from_types=True,
                               doc="Zeros outside a band around the main diagonal.")


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """≈ `tf.linalg.band_part`: each matrix with the elements more than `num_lower` below or
    `num_upper` above the diagonal set to 0 (a negative count keeps that whole triangle):
    band_part(x, -1, 0) is the lower triangle, band_part(x, 0, 0) the diagonal."""
    x = as_tensor(input)
    lower = operator.index(int(num_lower) if hasattr(num_lower, "numpy") else num_lower)
    upper = operator.index(int(num_upper) if hasattr(num_upper, "numpy") else num_upper)
    out = execute(MATRIX_BAND_PART, (x,), {"num_lower": lower, "num_upper": upper})
    return out if name is None else named(out, name)


# -- compositions ------------------------------------------------------------------------------

def _swap_last_two(op_name, x, conjugate):
    rank = x.shape.rank
    if rank is None:
        raise ValueError(f"{op_name}: the input's rank must be known, got shape {x.shape}.")
    if rank < 2:
        raise ValueError(f"{op_name}: Argument `a` should be a (batch) matrix with rank >= 2. "
                         f"Received `a` = {x} with shape: {x.shape}")
    return transpose(x, list(range(rank - 2)) + [rank - 1, rank - 2], conjugate=conjugate)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """≈ `tf.linalg.matrix_transpose`: the last two axes swapped (conjugated too with
    `conjugate=True`)."""
    return _swap_last_two("matrix_transpose", as_tensor(a), bool(conjugate))


def adjoint(matrix, name=None):
    """≈ `tf.linalg.adjoint`: the conjugate transpose of the last two axes."""
    return _swap_last_two("adjoint", as_tensor(matrix), True)


def trace(x, name=None):
    """≈ `tf.linalg.trace`: the sum of each matrix's main diagonal."""
    x = as_tensor(x)
    check_dtype(MATRIX_DIAG_PART, x, _dt.NUMERIC)
    return _m.reduce_sum(diag_part(x), axis=-1)
