"""Gradients of the linear-algebra ops (Tensordot, Einsum, MatrixSpectralNorm), and the thin
singular value decomposition (`Svd`) that the spectral norm's gradient is written with.

Products differentiate into products: each operand's gradient is the same contraction of the
output gradient with the other operands (conjugated, TensorFlow's convention for complex inputs),
so every rule is differentiable again. The spectral norm's gradient is U diag(w) V^H from the SVD,
with w shared equally among tied largest singular values (as TensorFlow's reduce_max over the
singular values shares it); second derivatives go through the SVD's own gradient.
"""

from __future__ import annotations

import string

import numpy as np

from ..base import dtypes as _dt
from ..core.specs import TensorSpec
from . import math_ops as m
from .array_ops import expand_dims, reshape, transpose
from .creation_ops import eye, ones
from ..core.dispatch import execute
from .grad_utils import grad_conj, needs_gradient, unbroadcast
from .linalg_ops import (_ELLIPSIS, EINSUM, SPECTRAL_NORM, TENSORDOT, _parse_equation, einsum,
                         matmul, tensordot)
from ..core.registry import op_error, register_op

# -----------------------------------------------------------------------------------------------
# Tensordot
# -----------------------------------------------------------------------------------------------


def _to_order(t, axes_now):
    """Transposes `t`, whose axis k is input axis axes_now[k], into input axis order."""
    perm = [axes_now.index(i) for i in range(len(axes_now))]
    return t if perm == list(range(len(perm))) else transpose(t, perm)


@TENSORDOT.def_gradient(keep_inputs=True)
def _tensordot_grad(call, dy):
    a, b = call.inputs
    a_axes, b_axes = list(call.attrs["a_axes"]), list(call.attrs["b_axes"])
    ra, rb = len(call.input_shapes[0]), len(call.input_shapes[1])
    free_a = [i for i in range(ra) if i not in a_axes]
    free_b = [j for j in range(rb) if j not in b_axes]
    na = len(free_a)
    ga = gb = None
    if needs_gradient(call, 0):  # dy . b over b's free axes -> [free_a, contracted (b order)]
        ga = tensordot(dy, grad_conj(b), [list(range(na, na + len(free_b))), free_b])
        ga = _to_order(ga, free_a + [a_axes[b_axes.index(j)] for j in sorted(b_axes)])
    if needs_gradient(call, 1):  # a . dy over a's free axes -> [contracted (a order), free_b]
        gb = tensordot(grad_conj(a), dy, [free_a, list(range(na))])
        gb = _to_order(gb, [b_axes[a_axes.index(i)] for i in sorted(a_axes)] + free_b)
    return ga, gb


# -----------------------------------------------------------------------------------------------
# Einsum
# -----------------------------------------------------------------------------------------------

def _equation(terms, output):
    return ",".join("".join(t) for t in terms) + "->" + "".join(output)


def _einsum_operand_grad(dy, terms, output, others, i, shape):
    """The gradient of operand i: dy contracted with the other operands onto operand i's labels.

    Labels only operand i has (summed away) come back by broadcasting, repeated labels (a
    diagonal) by multiplying with an identity, and a broadcast ellipsis by summing.
    """
    term = terms[i]
    other_terms = [t for k, t in enumerate(terms) if k != i]
    available = set(output).union(*other_terms)
    unique = []
    for s in term:
        if s != _ELLIPSIS and s not in unique:
            unique.append(s)
    kept = tuple(s for s in unique if s in available)
    broadcast = _ELLIPSIS in output  # the broadcast axes of all operands, in dy
    target = ((_ELLIPSIS,) if broadcast else ()) + kept
    if not other_terms and tuple(output) == target:
        g = dy
    else:
        g = einsum(_equation([output] + other_terms, target), dy, *others)
    ellipsis = broadcast and _ELLIPSIS in term
    if broadcast:  # sum over the broadcast axes this operand does not have (or has as 1)
        ell_shape = []
        if ellipsis:
            start = term.index(_ELLIPSIS)
            ell_shape = list(shape[start:start + len(shape) - (len(term) - 1)])
        g = unbroadcast(g, ell_shape + list(g.shape[len(g.shape) - len(kept):]))
        target = ((_ELLIPSIS,) if ellipsis else ()) + kept
    # Lay the result out as operand i: missing labels broadcast, repeated labels on a diagonal.
    final = [s for s in term if s != _ELLIPSIS or ellipsis]
    if tuple(final) == target:
        return g
    sizes, axis = {}, 0
    for s in term:
        if s == _ELLIPSIS:
            axis += len(shape) - (len(term) - 1)
        else:
            sizes[s] = shape[axis]
            axis += 1
    used = set(s for t in terms for s in t) | set(output)
    fresh = iter(c for c in string.ascii_letters if c not in used)
    operands, op_terms, seen, out = [g], [target], set(), []
    for s in final:
        if s == _ELLIPSIS or s not in seen:
            seen.add(s)
            out.append(s)
            if s != _ELLIPSIS and s not in kept:  # summed away: constant along it
                operands.append(ones([sizes[s]], g.dtype))
                op_terms.append((s,))
            continue
        f = next(fresh)  # a repeat of s: its own label, tied to s by an identity
        operands.append(eye(sizes[s], dtype=g.dtype))
        op_terms.append((s, f))
        out.append(f)
    return einsum(_equation(op_terms, out), *operands)


@EINSUM.def_gradient(keep_inputs=True)
def _einsum_grad(call, dy):
    terms, output, _ = _parse_equation(call.attrs["equation"])
    wanted = [i for i in range(len(terms)) if needs_gradient(call, i)]
    conj = {k: grad_conj(x) for k, x in enumerate(call.inputs)
            if any(i != k for i in wanted)}  # each operand conjugated once, where used
    grads = [None] * len(terms)
    for i in wanted:
        others = [conj[k] for k in range(len(terms)) if k != i]
        grads[i] = _einsum_operand_grad(dy, terms, output, others, i, call.input_shapes[i])
    return tuple(grads)


# -----------------------------------------------------------------------------------------------
# Svd: the thin SVD a = u diag(s) v^H, for the spectral norm's gradient
# -----------------------------------------------------------------------------------------------

def _svd_infer(x):
    shape = x.shape
    if not shape._rank_known:
        return (TensorSpec(None, x.dtype.real_dtype), TensorSpec(None, x.dtype),
                TensorSpec(None, x.dtype))
    if len(shape) < 2:
        raise op_error("Svd", f"input must have rank >= 2, got shape {list(shape)}", [x])
    batch, mm, nn = list(shape[:-2]), shape[-2], shape[-1]
    k = None if mm is None or nn is None else min(mm, nn)
    return (TensorSpec(batch + [k], x.dtype.real_dtype), TensorSpec(batch + [mm, k], x.dtype),
            TensorSpec(batch + [nn, k], x.dtype))


def _svd_kernel(xp, x):
    real = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype
    a = x.astype(np.float32) if x.dtype == np.float16 else x  # LAPACK has no half precision
    *batch, rows, cols = x.shape
    k = min(rows, cols)
    if k == 0:
        return (xp.zeros((*batch, 0), real), xp.zeros((*batch, rows, 0), x.dtype),
                xp.zeros((*batch, cols, 0), x.dtype))
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    v = xp.ascontiguousarray(xp.conj(xp.swapaxes(vh, -1, -2)))
    return s.astype(real, copy=False), u.astype(x.dtype, copy=False), v.astype(x.dtype,
                                                                                copy=False)


SVD = register_op("Svd", _svd_kernel, _svd_infer, num_outputs=3, dtypes=_dt.INEXACT,
                  doc="Thin SVD of the last two axes: (s, u, v) with a = u diag(s) v^H.")


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
def _svd_grad(call, gs, gu, gv):
    """The thin SVD's gradient (Townsend, "Differentiating the singular value decomposition",
    2016, and its complex extension): infinite (nan) where singular values repeat, as in
    TensorFlow, since the singular vectors are not determined there."""
    s, u, v = call.outputs
    rows, cols = call.input_shapes[0][-2:]
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
def _spectral_norm_grad(call, dy):
    (x,) = call.inputs
    shape = call.input_shapes[0]
    a0, a1 = call.attrs["axes"]
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

