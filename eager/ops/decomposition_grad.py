"""Gradients of the decompositions (`decomposition_ops`), TensorFlow's rules, written with ops
so they differentiate again:

    Cholesky  A = L L^H:   Phi(L^H dL) with Phi the lower triangle, half diagonal;
                           dA = sym(L^-H Phi L^-1) / 2 (only A's lower triangle is read)
    Qr        A = Q R:     (M >= N) Q (dR + copyltu(M) R^-H) + (dQ - Q Q^H dQ) R^-H, with
                           M = R dR^H - dQ^H Q (Walter and Lehmann; TF's _QrGrad)
    eigh      A = V E V^H: V (diag(dE) + F o (V^H dV)) V^H, F_ij = 1 / (e_j - e_i),
                           symmetrised onto the lower triangle the op reads
    slogdet:               d log|det A| = dY inv(A)^H; the sign has no gradient
    triangular_solve X = A^-1 B:  dB = A^-H dY, dA = -dB X^H on A's triangle,
                           summed over broadcast batch axes
"""

from __future__ import annotations

from . import math_ops as m
from .array_ops import expand_dims
from .creation_ops import eye, ones_like, zeros_like
from .decomposition_ops import CHOLESKY, EIGH, QR, SLOGDET, TRIANGULAR_SOLVE, triangular_solve
from .grad_utils import unbroadcast
from .linalg_ops import inv
from .matrix_ops import adjoint, band_part, diag, diag_part, set_diag
from .product_ops import matmul
from .special_math_ops import reciprocal


@CHOLESKY.def_gradient(keep_outputs=True)
def _cholesky_grad(forward, dl):
    (low,) = forward.outputs
    n = forward.input_shapes[0][-1]
    low_inv = triangular_solve(low, eye(n, dtype=low.dtype))  # batch axes broadcast
    middle = matmul(low, dl, adjoint_a=True)
    middle = set_diag(middle, 0.5 * diag_part(middle))
    middle = band_part(middle, -1, 0)
    grad = matmul(matmul(low_inv, middle, adjoint_a=True), low_inv)
    grad = grad + adjoint(grad)
    return 0.5 * grad


def _right_solve_r(x, r):
    """y with y R^H = x, that is (R^-1 x^H)^H (TF's `_TriangularSolve` in its QR gradient)."""
    return adjoint(triangular_solve(r, adjoint(x), lower=False, adjoint=False))


@QR.def_gradient(keep_outputs=True)
def _qr_grad(forward, dq, dr):
    q, r = forward.outputs
    rows, cols = forward.input_shapes[0][-2:]
    if rows is None or cols is None or (forward.attrs["full_matrices"] and rows != cols) \
            or rows < cols:
        raise NotImplementedError(
            "QrGrad not implemented when nrows < ncols and full_matrices is true, or for wide "
            f"matrices (got {rows}x{cols}, full_matrices={forward.attrs['full_matrices']}).")
    qdq = matmul(q, dq, adjoint_a=True)
    qdq_ = qdq - adjoint(qdq)
    rdr = matmul(r, dr, adjoint_b=True)
    rdr_ = rdr - adjoint(rdr)
    tril = band_part(qdq_ + rdr_, -1, 0)
    grad_a = matmul(q, dr + _right_solve_r(tril, r))
    grad_b = _right_solve_r(dq - matmul(q, qdq), r)
    out = grad_a + grad_b
    if q.dtype.is_complex:
        mm = rdr - adjoint(qdq)
        eyem = set_diag(zeros_like(mm), diag_part(mm))
        correction = eyem - m.cast(m.real(eyem), q.dtype)
        out = out + _right_solve_r(matmul(q, adjoint(correction)), r)
    return out


@EIGH.def_gradient(keep_outputs=True)
def _eigh_grad(forward, de, dv):
    e, v = forward.outputs
    gaps = expand_dims(e, -2) - expand_dims(e, -1)
    f = reciprocal(set_diag(gaps, ones_like(e)))
    f = set_diag(f, zeros_like(e))  # no gap to itself: 0 on the diagonal
    inner = diag(de) + f * matmul(v, dv, adjoint_a=True)
    grad = matmul(v, matmul(inner, v, adjoint_b=True))
    grad = band_part(grad + adjoint(grad), -1, 0)
    return set_diag(grad, 0.5 * diag_part(grad))


@SLOGDET.def_gradient(keep_inputs=True)
def _slogdet_grad(forward, dsign, dlog):
    (a,) = forward.inputs
    scale = expand_dims(expand_dims(dlog, -1), -1)
    return scale * inv(a, adjoint=True)


@TRIANGULAR_SOLVE.def_gradient(keep_inputs=(0,), keep_outputs=True)
def _triangular_solve_grad(forward, dy):
    a, x = forward.inputs[0], forward.outputs[0]
    lower, adj = forward.attrs["lower"], forward.attrs["adjoint"]
    sa, sb = forward.input_shapes
    grad_b = triangular_solve(a, dy, lower=lower, adjoint=not adj)
    if adj:
        grad_a = m.negative(matmul(x, grad_b, adjoint_b=True))
    else:
        grad_a = m.negative(matmul(grad_b, x, adjoint_b=True))
    grad_a = band_part(grad_a, -1, 0) if lower else band_part(grad_a, 0, -1)
    # Matrix axes are not broadcast: no `others` (unbroadcast's hint is for elementwise ops).
    return unbroadcast(grad_a, sa), unbroadcast(grad_b, sb)
