"""Gradients of the math ops, one rule per op, read like a table of derivatives.

Each rule is `grad(forward, dy) -> one gradient per input` (None where an input has none), written
with ops so it runs eagerly, traced, and under an outer tape. `keep_inputs` / `keep_outputs`
name what the rule reads, so a tape keeps nothing else alive. Broadcasting is undone by one
shared helper (`unbroadcast`); complex inputs follow TensorFlow's convention (the gradient is
conjugated, so `dy * conj(y)` for products).
"""

from __future__ import annotations

from ..base import dtypes as _dt
from . import math_ops as m
from .array_ops import concat, reshape, transpose
from ..core.shapes import RunTimeShape
from .creation_ops import ones_like, zeros_like
from .cumulative_ops import cumprod, cumsum, cumulative_logsumexp
from .grad_utils import (broadcast_to_shape, count_as, grad_conj, is_known, needs_gradient,
                         reduced_count, reshape_to, restore_reduced, shape_tensor, unbroadcast)
from .product_ops import MATMUL, matmul
from ..core.registry import get_op

# -- arithmetic ----------------------------------------------------------------------------------


@get_op("AddV2").def_gradient
def _add_grad(forward, dy):
    sx, sy = forward.input_shapes
    return unbroadcast(dy, sx, (sy,)), unbroadcast(dy, sy, (sx,))


@get_op("Sub").def_gradient
def _sub_grad(forward, dy):
    sx, sy = forward.input_shapes
    return unbroadcast(dy, sx, (sy,)), unbroadcast(-dy, sy, (sx,))


@get_op("Mul").def_gradient(keep_inputs=True)
def _mul_grad(forward, dy):
    x, y = forward.inputs
    sx, sy = forward.input_shapes
    return (unbroadcast(dy * grad_conj(y), sx, (sy,)),
            unbroadcast(grad_conj(x) * dy, sy, (sx,)))


@get_op("RealDiv").def_gradient(keep_inputs=True)
def _realdiv_grad(forward, dy):
    x, y = forward.inputs
    y = grad_conj(y)
    sx, sy = forward.input_shapes
    return (unbroadcast(dy / y, sx, (sy,)),
            unbroadcast(dy * (-grad_conj(x) / y) / y, sy, (sx,)))


@get_op("FloorMod").def_gradient(keep_inputs=True)
def _floormod_grad(forward, dy):
    x, y = forward.inputs
    sx, sy = forward.input_shapes
    return (unbroadcast(dy, sx, (sy,)), unbroadcast(-dy * m.floordiv(x, y), sy, (sx,)))


@get_op("Pow").def_gradient(keep_inputs=True, keep_outputs=True)
def _pow_grad(forward, dy):
    x, y = forward.inputs
    (z,) = forward.outputs
    gx = dy * grad_conj(y * m.pow(x, y - 1))
    # d(x^y)/dy = x^y log(x), taken as 0 where log(x) is undefined (x <= 0), as in TensorFlow.
    if x.dtype.is_complex:
        nonzero = m.not_equal(x, 0)
        log_x = m.where(nonzero, m.log(m.where(nonzero, x, ones_like(x))), zeros_like(x))
    else:
        positive = m.greater(x, 0)
        log_x = m.where(positive, m.log(m.where(positive, x, ones_like(x))), zeros_like(x))
    gy = dy * grad_conj(z * log_x)
    sx, sy = forward.input_shapes
    return unbroadcast(gx, sx, (sy,)), unbroadcast(gy, sy, (sx,))


def _select_grad(mask_for_x):
    def grad(forward, dy):
        x, y = forward.inputs
        mask = mask_for_x(x, y)
        zero = zeros_like(dy)
        sx, sy = forward.input_shapes
        return (unbroadcast(m.where(mask, dy, zero), sx, (sy,)),
                unbroadcast(m.where(mask, zero, dy), sy, (sx,)))
    return grad


get_op("Maximum").def_gradient(_select_grad(m.greater_equal), keep_inputs=True)
get_op("Minimum").def_gradient(_select_grad(m.less_equal), keep_inputs=True)


@get_op("Neg").def_gradient
def _neg_grad(forward, dy):
    return -dy


@get_op("Abs").def_gradient(keep_inputs=True)
def _abs_grad(forward, dy):
    (x,) = forward.inputs
    if x.dtype.is_complex:
        # d|x| pulls back to x / |x| (TensorFlow's ComplexAbs gradient), 0 at 0.
        mag = m.cast(m.abs(x), x.dtype)
        return m.cast(dy, x.dtype) * m.where(m.equal(mag, 0), zeros_like(x), x / mag)
    return dy * m.sign(x)


@get_op("Sign").def_gradient
def _sign_grad(forward, dy):
    return zeros_like(dy)


@get_op("Square").def_gradient(keep_inputs=True)
def _square_grad(forward, dy):
    (x,) = forward.inputs
    return dy * (2 * grad_conj(x))


@get_op("Sqrt").def_gradient(keep_outputs=True)
def _sqrt_grad(forward, dy):
    (y,) = forward.outputs
    return dy * 0.5 / grad_conj(y)


@get_op("Rsqrt").def_gradient(keep_outputs=True)
def _rsqrt_grad(forward, dy):
    (y,) = forward.outputs
    y = grad_conj(y)
    return dy * (-0.5 * y * y * y)


@get_op("Exp").def_gradient(keep_outputs=True)
def _exp_grad(forward, dy):
    (y,) = forward.outputs
    return dy * grad_conj(y)


@get_op("Log").def_gradient(keep_inputs=True)
def _log_grad(forward, dy):
    (x,) = forward.inputs
    return dy / grad_conj(x)


@get_op("Log1p").def_gradient(keep_inputs=True)
def _log1p_grad(forward, dy):
    (x,) = forward.inputs
    return dy / (1 + grad_conj(x))


@get_op("Sin").def_gradient(keep_inputs=True)
def _sin_grad(forward, dy):
    (x,) = forward.inputs
    return dy * grad_conj(m.cos(x))


@get_op("Cos").def_gradient(keep_inputs=True)
def _cos_grad(forward, dy):
    (x,) = forward.inputs
    return -dy * grad_conj(m.sin(x))


@get_op("Tanh").def_gradient(keep_outputs=True)
def _tanh_grad(forward, dy):
    (y,) = forward.outputs
    y = grad_conj(y)
    return dy * (1 - y * y)


@get_op("Sigmoid").def_gradient(keep_outputs=True)
def _sigmoid_grad(forward, dy):
    (y,) = forward.outputs
    y = grad_conj(y)
    return dy * (y * (1 - y))


@get_op("Real").def_gradient
def _real_grad(forward, dy):
    return m.cast(dy, forward.input_dtypes[0])


@get_op("Imag").def_gradient
def _imag_grad(forward, dy):
    dtype = forward.input_dtypes[0]
    return m.cast(dy, dtype) * m.cast(1j, dtype)  # TensorFlow: complex(0, dy)


@get_op("Conj").def_gradient
def _conj_grad(forward, dy):
    return m.conj(dy)


@get_op("Cast").def_gradient
def _cast_grad(forward, dy):
    source = forward.input_dtypes[0]
    if not (source.is_floating or source.is_complex):
        return None
    if source.is_complex or not dy.dtype.is_complex:
        return m.cast(dy, source)
    return m.cast(m.real(dy), source)


# -- selection and clipping ----------------------------------------------------------------------


@get_op("SelectV2").def_gradient(keep_inputs=(0,))
def _select_v2_grad(forward, dy):
    condition = forward.inputs[0]
    zero = zeros_like(dy)
    sc, sx, sy = forward.input_shapes
    return (None, unbroadcast(m.where(condition, dy, zero), sx, (sc, sy)),
            unbroadcast(m.where(condition, zero, dy), sy, (sc, sx)))


@get_op("ClipByValue").def_gradient(keep_inputs=True)
def _clip_grad(forward, dy):
    t, lo, hi = forward.inputs
    zero = zeros_like(dy)
    below, above = m.less(t, lo), m.greater(t, hi)
    inside = m.logical_not(m.logical_or(below, above))
    st, slo, shi = forward.input_shapes
    return (m.where(inside, dy, zero),
            unbroadcast(m.where(below, dy, zero), slo, (st, shi)),
            unbroadcast(m.where(above, dy, zero), shi, (st, slo)))


# -- reductions ----------------------------------------------------------------------------------


@m.SUM_TO_SHAPE.def_gradient
def _sum_to_shape_grad(forward, dy):
    return broadcast_to_shape(dy, forward.input_shapes[0]), None


@get_op("Sum").def_gradient
def _sum_grad(forward, dy):
    attrs = forward.attrs
    return restore_reduced(dy, forward.input_shapes[0], attrs.get("axes"), attrs.get("keepdims"))


@get_op("Mean").def_gradient
def _mean_grad(forward, dy):
    attrs = forward.attrs
    shape = forward.input_shapes[0]
    axes = attrs.get("axes")
    if not is_known(shape):
        # Known only at run time: the count divides dy before it is broadcast (the same
        # quotient in every element, for one division instead of one per element).
        return restore_reduced(dy / count_as(reduced_count(shape, axes), dy.dtype), shape, axes,
                               attrs.get("keepdims"))
    grad = restore_reduced(dy, shape, axes, attrs.get("keepdims"))
    return grad / count_as(reduced_count(shape, axes), grad.dtype)


def _extremum_grad(forward, dy):
    """Max/Min: the gradient is shared equally among the elements equal to the extremum."""
    (x,) = forward.inputs
    (y,) = forward.outputs
    attrs = forward.attrs
    shape, axes, keepdims = forward.input_shapes[0], attrs.get("axes"), attrs.get("keepdims")
    y = restore_reduced(y, shape, axes, keepdims)
    indicators = m.cast(m.equal(y, x), dy.dtype)
    count = restore_reduced(m.reduce_sum(indicators, axes, keepdims=keepdims), shape, axes,
                            keepdims)
    return indicators / count * restore_reduced(dy, shape, axes, keepdims)


get_op("Max").def_gradient(_extremum_grad, keep_inputs=True, keep_outputs=True)
get_op("Min").def_gradient(_extremum_grad, keep_inputs=True, keep_outputs=True)


@get_op("ReduceLogSumExp").def_gradient(keep_inputs=True, keep_outputs=True)
def _logsumexp_grad(forward, dy):
    (x,) = forward.inputs
    (y,) = forward.outputs
    attrs = forward.attrs
    shape, axes, keepdims = forward.input_shapes[0], attrs.get("axes"), attrs.get("keepdims")
    return restore_reduced(dy, shape, axes, keepdims) * m.exp(
        x - restore_reduced(y, shape, axes, keepdims))


@get_op("Prod").def_gradient(keep_inputs=True)
def _prod_grad(forward, dy):
    """Each element's gradient is the product of the others in its group: the exclusive running
    products from both ends, multiplied (no division, so zeros are exact)."""
    (x,) = forward.inputs
    attrs = forward.attrs
    shape, axes, keepdims = forward.input_shapes[0], attrs.get("axes"), attrs.get("keepdims")
    rank = len(shape)
    reduced = tuple(range(rank)) if axes is None else tuple(axes)
    grad = restore_reduced(dy, shape, axes, keepdims)
    if not reduced:
        return grad
    if len(reduced) == 1:
        others = _exclusive_both_ways(x, reduced[0])
    elif len(reduced) == rank:
        others = reshape_to(_exclusive_both_ways(reshape(x, [-1]), 0), shape)
    else:  # move the reduced axes last, as one axis
        kept = [i for i in range(rank) if i not in reduced]
        perm = kept + list(reduced)
        moved = transpose(x, perm)
        moved_shape = tuple(moved.shape) if is_known(moved.shape) else RunTimeShape(moved)
        if all(shape[i] is not None for i in kept):
            flat = reshape(moved, [shape[i] for i in kept] + [-1])
        else:  # the kept sizes read at run time
            flat = reshape(moved, concat([shape_tensor(moved_shape)[:len(kept)], [-1]], 0))
        others = reshape_to(_exclusive_both_ways(flat, len(kept)), moved_shape)
        others = transpose(others, [perm.index(i) for i in range(rank)])
    return grad * grad_conj(others)


def _exclusive_both_ways(x, axis):
    return cumprod(x, axis, exclusive=True) * cumprod(x, axis, exclusive=True, reverse=True)


@get_op("Cumsum").def_gradient
def _cumsum_grad(forward, dy):
    attrs = forward.attrs
    return cumsum(dy, attrs["axis"], exclusive=attrs["exclusive"], reverse=not attrs["reverse"])


@get_op("CumulativeLogsumexp").def_gradient(keep_inputs=True, keep_outputs=True)
def _cumulative_logsumexp_grad(forward, dy):
    """TensorFlow's rule: d y_j / d x_k = exp(x_k - y_j) for the j whose scan holds k, summed
    as a logsumexp the other way over log(dy_j) - y_j, with dy's positive and negative parts
    apart (a logarithm needs a positive argument)."""
    (x,) = forward.inputs
    (y,) = forward.outputs
    attrs = forward.attrs
    minus_inf = m.cast(float("-inf"), dy.dtype)
    one = ones_like(dy)

    def part(positive):
        mask = m.greater(dy, 0) if positive else m.less(dy, 0)
        size = dy if positive else m.negative(dy)
        log_dy = m.where(mask, m.log(m.where(mask, size, one)), minus_inf)
        scanned = cumulative_logsumexp(log_dy - y, attrs["axis"], exclusive=attrs["exclusive"],
                                       reverse=not attrs["reverse"])
        return m.exp(scanned + x)

    return part(True) - part(False)


@get_op("Cumprod").def_gradient(keep_inputs=True, keep_outputs=True)
def _cumprod_grad(forward, dy):
    """d y_j / d x_k = y_j / x_k, summed over the later j by a cumsum the other way. The quotient
    fails only where x_k = 0. At the first zero of a slice (in scan order) the gradient is that
    sum with x_k taken as 1; past it every product holds that zero, so the gradient is 0.

    TensorFlow's rule (the quotient, 0 where x_k = 0) is wrong at the first zero, and does not
    conjugate complex inputs; this one is exact. Its own derivative (cumprod's second order) is
    exact where x has no zeros."""
    (x,) = forward.inputs
    (y,) = forward.outputs
    attrs = forward.attrs
    axis, exclusive, reverse = attrs["axis"], attrs["exclusive"], attrs["reverse"]

    def later_sum(t):
        return cumsum(t, axis, exclusive=exclusive, reverse=not reverse)

    zero = m.equal(x, 0)
    zeros_before = cumsum(m.cast(zero, _dt.int32), axis, exclusive=True, reverse=reverse)
    clean = m.equal(zeros_before, 0)  # no zero before this element (in scan order)
    first_zero = m.logical_and(zero, clean)
    one = ones_like(x)
    by_quotient = later_sum(dy * grad_conj(y)) / grad_conj(m.where(zero, one, x))
    y_without_first_zero = cumprod(m.where(first_zero, one, x), axis, exclusive=exclusive,
                                   reverse=reverse)
    at_first_zero = later_sum(dy * grad_conj(y_without_first_zero))
    return m.where(clean, m.where(zero, at_first_zero, by_quotient), zeros_like(dy))


# -- matrix product ------------------------------------------------------------------------------


@MATMUL.def_gradient(keep_inputs=True)
def _matmul_grad(forward, dy):
    """d a = dy b^T and d b = a^T dy (with the op's transposes folded in, conjugated for complex
    inputs); a product nobody needs (e.g. d input images) is never computed."""
    a, b = forward.inputs
    attrs = forward.attrs
    ta = attrs.get("transpose_a", False) or attrs.get("adjoint_a", False)
    tb = attrs.get("transpose_b", False) or attrs.get("adjoint_b", False)
    adj = a.dtype.is_complex
    t_a = {"adjoint_a": adj, "transpose_a": not adj}  # use the 1st operand's (conj.) transpose
    t_b = {"adjoint_b": adj, "transpose_b": not adj}
    ga = gb = None
    if needs_gradient(forward, 0):
        if not ta:
            ga = matmul(dy, b) if tb else matmul(dy, b, **t_b)
        else:
            ga = matmul(b, dy, **t_a, **t_b) if tb else matmul(b, dy, **t_b)
        ga = _unbroadcast_batch(ga, forward.input_shapes[0])
    if needs_gradient(forward, 1):
        if not tb:
            gb = matmul(a, dy) if ta else matmul(a, dy, **t_a)
        else:
            gb = matmul(dy, a, **t_a, **t_b) if ta else matmul(dy, a, **t_a)
        gb = _unbroadcast_batch(gb, forward.input_shapes[1])
    return ga, gb


def _unbroadcast_batch(grad, shape):
    """Matmul broadcasts only batch axes: sum them back to the input's batch shape."""
    if grad.shape == shape:
        return grad
    return unbroadcast(grad, shape)

