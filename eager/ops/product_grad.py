"""Gradients of the products Tensordot and Einsum (MatMul's is in `math_grad`).

Products differentiate into products: each operand's gradient is the same contraction of the
output gradient with the other operands (conjugated, TensorFlow's convention for complex inputs),
so every rule is differentiable again.
"""

from __future__ import annotations

import string

from .array_ops import transpose
from .creation_ops import eye, ones
from .grad_utils import grad_conj, needs_gradient, unbroadcast
from .product_ops import ELLIPSIS, EINSUM, TENSORDOT, einsum, parse_equation, tensordot


# -----------------------------------------------------------------------------------------------
# Tensordot
# -----------------------------------------------------------------------------------------------


def _to_order(t, axes_now):
    """Transposes `t`, whose axis k is input axis axes_now[k], into input axis order."""
    perm = [axes_now.index(i) for i in range(len(axes_now))]
    return t if perm == list(range(len(perm))) else transpose(t, perm)


@TENSORDOT.def_gradient(keep_inputs=True)
def _tensordot_grad(forward, dy):
    a, b = forward.inputs
    a_axes, b_axes = list(forward.attrs["a_axes"]), list(forward.attrs["b_axes"])
    ra, rb = len(forward.input_shapes[0]), len(forward.input_shapes[1])
    free_a = [i for i in range(ra) if i not in a_axes]
    free_b = [j for j in range(rb) if j not in b_axes]
    na = len(free_a)
    ga = gb = None
    if needs_gradient(forward, 0):  # dy . b over b's free axes -> [free_a, contracted (b order)]
        ga = tensordot(dy, grad_conj(b), [list(range(na, na + len(free_b))), free_b])
        ga = _to_order(ga, free_a + [a_axes[b_axes.index(j)] for j in sorted(b_axes)])
    if needs_gradient(forward, 1):  # a . dy over a's free axes -> [contracted (a order), free_b]
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
        if s != ELLIPSIS and s not in unique:
            unique.append(s)
    kept = tuple(s for s in unique if s in available)
    broadcast = ELLIPSIS in output  # the broadcast axes of all operands, in dy
    target = ((ELLIPSIS,) if broadcast else ()) + kept
    if not other_terms and tuple(output) == target:
        g = dy
    else:
        g = einsum(_equation([output] + other_terms, target), dy, *others)
    ellipsis = broadcast and ELLIPSIS in term
    if broadcast:  # sum over the broadcast axes this operand does not have (or has as 1)
        ell_shape = []
        if ellipsis:
            start = term.index(ELLIPSIS)
            ell_shape = list(shape[start:start + len(shape) - (len(term) - 1)])
        g = unbroadcast(g, ell_shape + list(g.shape[len(g.shape) - len(kept):]))
        target = ((ELLIPSIS,) if ellipsis else ()) + kept
    # Lay the result out as operand i: missing labels broadcast, repeated labels on a diagonal.
    final = [s for s in term if s != ELLIPSIS or ellipsis]
    if tuple(final) == target:
        return g
    sizes, axis = {}, 0
    for s in term:
        if s == ELLIPSIS:
            axis += len(shape) - (len(term) - 1)
        else:
            sizes[s] = shape[axis]
            axis += 1
    used = set(s for t in terms for s in t) | set(output)
    fresh = iter(c for c in string.ascii_letters if c not in used)
    operands, op_terms, seen, out = [g], [target], set(), []
    for s in final:
        if s == ELLIPSIS or s not in seen:
            seen.add(s)
            out.append(s)
            if s != ELLIPSIS and s not in kept:  # summed away: constant along it
                operands.append(ones([sizes[s]], g.dtype))
                op_terms.append((s,))
            continue
        f = next(fresh)  # a repeat of s: its own label, tied to s by an identity
        operands.append(eye(sizes[s], dtype=g.dtype))
        op_terms.append((s, f))
        out.append(f)
    return einsum(_equation(op_terms, out), *operands)


@EINSUM.def_gradient(keep_inputs=True)
def _einsum_grad(forward, dy):
    terms, output, _ = parse_equation(forward.attrs["equation"])
    wanted = [i for i in range(len(terms)) if needs_gradient(forward, i)]
    conj = {k: grad_conj(x) for k, x in enumerate(forward.inputs)
            if any(i != k for i in wanted)}  # each operand conjugated once, where used
    grads = [None] * len(terms)
    for i in wanted:
        others = [conj[k] for k in range(len(terms)) if k != i]
        grads[i] = _einsum_operand_grad(dy, terms, output, others, i, forward.input_shapes[i])
    return tuple(grads)
