"""Square-matrix ops: `linalg.inv`, `linalg.det`, `linalg.solve`, with their gradients.

Batched over leading axes, as TensorFlow's MatrixInverse/MatrixDeterminant/MatrixSolve. The
gradients are TensorFlow's, written with these same ops so that they differentiate again:
d inv(A) = -inv(A)^H dY inv(A)^H; d det(A) = dY det(A) inv(A)^H; for X = solve(A, B),
dB = solve(A^H, dY) and dA = -dB X^H. A singular matrix is an InvalidArgumentError naming the
op, as TensorFlow's "Input is not invertible"; a singular determinant is simply 0.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..core.specs import TensorSpec
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from . import math_ops as m
from .array_ops import expand_dims, transpose
from ..core.argument_conversion import as_tensor, check_dtype, same_type
from ..core.dispatch import execute
from .linalg_ops import matmul
from ..core.registry import op_error, register_op

__all__ = ["inv", "det", "solve"]

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
    invertible." numpy raises LinAlgError itself; CuPy checks the factorization's status only
    under `cupyx.errstate(linalg="raise")` (a device-to-host read of the status, as TF's GPU
    kernels check theirs) and otherwise returns infs and NaNs."""
    try:
        if xp is np:
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


@MATRIX_INVERSE.def_gradient(keep_outputs=True)
def _inv_grad(call, dy):
    y = call.outputs[0]  # inv(A), or inv(A^H) with adjoint
    g = m.negative(matmul(matmul(y, dy, adjoint_a=True), y, adjoint_b=True))
    if call.attrs["adjoint"]:
        g = m.conj(_swap(g))
    return g


def _swap(t):
    rank = t.shape.rank
    return transpose(t, list(range(rank - 2)) + [rank - 1, rank - 2])


# -- determinant -------------------------------------------------------------------------------

def _det_infer(x):
    shape = _square("MatrixDeterminant", x.shape)
    return TensorSpec(UNKNOWN_SHAPE if shape is None else TensorShape(tuple(shape)[:-2]), x.dtype)


def _det_kernel(xp, x):
    _square("MatrixDeterminant", TensorShape(x.shape))
    return xp.asarray(xp.linalg.det(x), dtype=x.dtype)


MATRIX_DETERMINANT = register_op("MatrixDeterminant", _det_kernel, _det_infer, dtypes=_DTYPES,
                                 infer_from_types=True)


def det(input, name=None):  # noqa: A002
    """≈ `tf.linalg.det`: the determinant of each square matrix in the last two axes."""
    x = as_tensor(input)
    check_dtype(MATRIX_DETERMINANT, x, _DTYPES)
    return execute(MATRIX_DETERMINANT, (x,))


@MATRIX_DETERMINANT.def_gradient(keep_inputs=True, keep_outputs=True)
def _det_grad(call, dy):
    (a,), (d,) = call.inputs, call.outputs
    scale = expand_dims(expand_dims(m.multiply(dy, m.conj(d)), -1), -1)
    return m.multiply(scale, inv(a, adjoint=True))


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


@MATRIX_SOLVE.def_gradient(keep_inputs=(0,), keep_outputs=True)
def _solve_grad(call, dy):
    a, x = call.inputs[0], call.outputs[0]
    adjoint = call.attrs["adjoint"]
    grad_b = solve(a, dy, adjoint=not adjoint)
    if adjoint:
        grad_a = m.negative(matmul(x, grad_b, adjoint_b=True))
    else:
        grad_a = m.negative(matmul(grad_b, x, adjoint_b=True))
    return grad_a, grad_b
