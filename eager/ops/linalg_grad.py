"""Gradients of the linear-algebra ops beyond products: MatrixSpectralNorm, MatrixInverse,
MatrixDeterminant, MatrixSolve, and the thin singular value decomposition (`Svd`) that the
spectral norm's gradient is written with.

Every rule is written with ops, so it differentiates again. The spectral norm's gradient is
U diag(w) V^H from the SVD, with w shared equally among tied largest singular values (as
TensorFlow's reduce_max over the singular values shares it); second derivatives go through the
SVD's own gradient. The square-matrix gradients are TensorFlow's:
d inv(A) = -inv(A)^H dY inv(A)^H; d det(A) = dY det(A) inv(A)^H; for X = solve(A, B),
dB = solve(A^H, dY) and dA = -dB X^H.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base.ieee import quiet
from ..core.specs import TensorSpec
from . import math_ops as m
from .array_ops import expand_dims, reshape, transpose
from .creation_ops import eye
from ..core.dispatch import execute
from .linalg_ops import (MATRIX_DETERMINANT, MATRIX_INVERSE, MATRIX_SOLVE, SPECTRAL_NORM, inv,
                         solve)
from .product_ops import matmul
from ..core.registry import op_error, register_op


# -----------------------------------------------------------------------------------------------
# Svd: the thin SVD a = u diag(s) v^H, for the spectral norm's gradient
# -----------------------------------------------------------------------------------------------

def _svd_infer(x, full_matrices=False):
    shape = x.shape
    if not shape._rank_known:
        return (TensorSpec(None, x.dtype.real_dtype), TensorSpec(None, x.dtype),
                TensorSpec(None, x.dtype))
    if len(shape) < 2:
        raise op_error("Svd", f"Input tensor 0 must have rank >= 2, got {len(shape)}", [x])
    batch, mm, nn = list(shape[:-2]), shape[-2], shape[-1]
    k = None if mm is None or nn is None else min(mm, nn)
    return (TensorSpec(batch + [k], x.dtype.real_dtype),
            TensorSpec(batch + [mm, mm if full_matrices else k], x.dtype),
            TensorSpec(batch + [nn, nn if full_matrices else k], x.dtype))


def _svd_kernel(xp, x, full_matrices=False):
    real = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype
    a = x.astype(np.float32) if x.dtype == np.float16 else x  # LAPACK has no half precision
    *batch, rows, cols = x.shape
    k = min(rows, cols)
    if k == 0:
        ku, kv = (rows, cols) if full_matrices else (0, 0)
        eye_u = xp.broadcast_to(xp.eye(rows, ku, dtype=x.dtype), (*batch, rows, ku)).copy()
        eye_v = xp.broadcast_to(xp.eye(cols, kv, dtype=x.dtype), (*batch, cols, kv)).copy()
        return xp.zeros((*batch, 0), real), eye_u, eye_v
    with quiet():  # np.linalg's Python code signals out of eager's reach (base.ieee)
        u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    v = xp.ascontiguousarray(xp.conj(xp.swapaxes(vh, -1, -2)))
    return s.astype(real, copy=False), u.astype(x.dtype, copy=False), v.astype(x.dtype,
                                                                                copy=False)


SVD = register_op("Svd", _svd_kernel, _svd_infer, num_outputs=3, dtypes=_dt.INEXACT,
                  infer_from_types=True,
                  doc="SVD of the last two axes: (s, u, v) with a = u diag(s) v^H (thin unless "
                      "full_matrices).")


def svd(x):
    """(s, u, v): the thin SVD of the last two axes, singular values descending."""
    return execute(SVD, (x,))


def _adjoint(x):
    rank = len(x.shape)
    return transpose(x, list(range(rank - 2)) + [rank - 1, rank - 2], conjugate=True)


def _safe_reciprocal(x, eps=1e-20):
    """x / (x^2 + eps): 1/x, and 0 where x is 0 (degenerate singular values)."""
    return x / (x * x + eps)


@SVD.def_gradient(keep_outputs=True)
def _svd_grad(forward, gs, gu, gv):
    """The thin SVD's gradient (Townsend, "Differentiating the singular value decomposition",
    2016, and its complex extension): infinite (nan) where singular values repeat, as in
    TensorFlow, since the singular vectors are not determined there."""
    s, u, v = forward.outputs
    rows, cols = forward.input_shapes[0][-2:]
    if forward.attrs.get("full_matrices") and rows != cols:
        if abs(rows - cols) > 1:
            raise NotImplementedError(
                f"svd gradient is not implemented for abs(m - n) > 1 when full_matrices is "
                f"True. Received: m={rows} and n={cols}.")
        # The one extra column of the larger factor is fixed only up to sign: its gradient
        # is left out, and the thin factors' rule applies.
        k = min(rows, cols)
        u, v = u[..., :k], v[..., :k]
        gu = None if gu is None else gu[..., :k]
        gv = None if gv is None else gv[..., :k]
    half = u.dtype is _dt.float16  # too narrow for the reciprocals below: work in float32
    if half:
        s, u, v, gs, gu, gv = (m.cast(t, _dt.float32) for t in (s, u, v, gs, gu, gv))
    if rows > cols:  # differentiate a^H = v s u^H, and take the adjoint at the end
        u, v, gu, gv = v, u, gv, gu
    dtype = u.dtype
    s2 = s * s
    f = m.cast(_safe_reciprocal(expand_dims(s2, -2) - expand_dims(s2, -1)), dtype)
    sc = m.cast(s, dtype)
    s_inv = m.cast(_safe_reciprocal(s), dtype)
    k = s.shape[-1]
    identity = eye(k, dtype=dtype)
    utgu = matmul(u, gu, adjoint_a=True)
    vtgv = matmul(v, gv, adjoint_a=True)
    fu, fv = f * utgu, f * vtgv
    core = ((fu + _adjoint(fu)) * expand_dims(sc, -2) + expand_dims(sc, -1) * (fv + _adjoint(fv))
            + identity * expand_dims(m.cast(gs, dtype), -1))
    if dtype.is_complex:  # the phase of each singular pair
        diag = identity * vtgv
        core = core + 0.5 * expand_dims(s_inv, -1) * (_adjoint(diag) - diag)
    grad = matmul(u, matmul(core, v, adjoint_b=True))
    if min(rows, cols) != max(rows, cols):  # v is not square: its complement's part
        gvt = _adjoint(gv)
        rest = gvt - matmul(matmul(gvt, v), v, adjoint_b=True)
        grad = grad + matmul(u * expand_dims(s_inv, -2), rest)
    grad = _adjoint(grad) if rows > cols else grad
    return m.cast(grad, _dt.float16) if half else grad


# -----------------------------------------------------------------------------------------------
# MatrixSpectralNorm
# -----------------------------------------------------------------------------------------------

@SPECTRAL_NORM.def_gradient(keep_inputs=True)
def _spectral_norm_grad(forward, dy):
    (x,) = forward.inputs
    shape = forward.input_shapes[0]
    a0, a1 = forward.attrs["axes"]
    rank = len(shape)
    batch_axes = [i for i in range(rank) if i not in (a0, a1)]
    perm = batch_axes + [a0, a1]
    identity = perm == list(range(rank))
    s, u, v = svd(x if identity else transpose(x, perm))
    ties = m.cast(m.equal(s, m.reduce_max(s, -1, keepdims=True)), s.dtype)
    weights = ties / m.reduce_sum(ties, -1, keepdims=True)
    batch = [shape[i] for i in batch_axes]
    if list(dy.shape) != batch:
        dy = reshape(dy, batch)
    weights = m.cast(weights * expand_dims(dy, -1), x.dtype)
    grad = matmul(u * expand_dims(weights, -2), v, adjoint_b=True)
    return grad if identity else transpose(grad, [perm.index(i) for i in range(rank)])


# -----------------------------------------------------------------------------------------------
# Square matrices: inverse, determinant, solve
# -----------------------------------------------------------------------------------------------

@MATRIX_INVERSE.def_gradient(keep_outputs=True)
def _inv_grad(forward, dy):
    y = forward.outputs[0]  # inv(A), or inv(A^H) with adjoint
    g = m.negative(matmul(matmul(y, dy, adjoint_a=True), y, adjoint_b=True))
    if forward.attrs["adjoint"]:
        g = m.conj(_swap(g))
    return g


def _swap(t):
    rank = t.shape.rank
    return transpose(t, list(range(rank - 2)) + [rank - 1, rank - 2])


@MATRIX_DETERMINANT.def_gradient(keep_inputs=True, keep_outputs=True)
def _det_grad(forward, dy):
    (a,), (d,) = forward.inputs, forward.outputs
    scale = expand_dims(expand_dims(m.multiply(dy, m.conj(d)), -1), -1)
    return m.multiply(scale, inv(a, adjoint=True))


@MATRIX_SOLVE.def_gradient(keep_inputs=(0,), keep_outputs=True)
def _solve_grad(forward, dy):
    a, x = forward.inputs[0], forward.outputs[0]
    adjoint = forward.attrs["adjoint"]
    grad_b = solve(a, dy, adjoint=not adjoint)
    if adjoint:
        grad_a = m.negative(matmul(x, grad_b, adjoint_b=True))
    else:
        grad_a = m.negative(matmul(grad_b, x, adjoint_b=True))
    return grad_a, grad_b
