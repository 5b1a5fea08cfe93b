"""Gradients of the neural-network ops (activations, softmax, cross-entropies, convolution, max
pooling) and of sorting, with the helper ops their gradients need.

Rules follow `math_grad`: `grad(forward, *output_grads)` written with ops, keeping only what it
reads.
Where TensorFlow differentiates through a dedicated backward op (ReluGrad, Conv2DBackpropInput,
Conv2DBackpropFilter, MaxPoolGrad, ...) so does this module: one kernel per backward step instead of
a chain of small ops (these run in every training step), and each backward op has its own gradient,
so second derivatives work. The convolution backward kernels share the forward kernel's window
arithmetic (`conv_ops`): the filter gradient is one matmul over the im2col matrix, the input
gradient one matmul and one strided add per filter tap, each over every pixel at once (never a
loop over pixels).
"""

from __future__ import annotations

import math

import numpy as np

from ..base import dtypes as _dt
from ..core.specs import TensorSpec
from . import math_ops as m
from .array_ops import concat, expand_dims, reshape, transpose
from .conv_ops import (_CONV, _POOL, AVG_POOL, CONV2D, _from_nhwc, _geometry, _lowest, _to_nhwc,
                       _windows, window_counts)
from .creation_ops import range as _range, zeros
from ..core.dispatch import execute
from .grad_utils import needs_gradient, output_unused, shape_tensor, unbroadcast
from .nn_ops import _normal_cdf, _upcast, log_softmax, softmax
from ..core.registry import get_op, register_op
from .shape_arguments import read_dims, shape_elements
from .slicing_ops import scatter_nd

FLOATING = _dt.FLOATING


# -----------------------------------------------------------------------------------------------
# Activations
# -----------------------------------------------------------------------------------------------

def _same_as_first(a, *rest, **attrs):
    return TensorSpec(a.shape, a.dtype)


def _relu_grad_into(dy, y, out):
    """ReluGrad(dy, y) = dy * (y > 0), written into `out` (called as a ufunc: `OpDef.ufunc`)."""
    return np.multiply(dy, y > 0, out=out)


RELU_GRAD = register_op("ReluGrad", lambda xp, dy, y: dy * (y > 0), _same_as_first,
                        dtypes=FLOATING, elementwise=True, ufunc=_relu_grad_into,
                        donatable_inputs=(0,),  # its dy
                        doc="dy where the relu's output is positive, else 0.")


def relu_grad(dy, y):
    return execute(RELU_GRAD, (dy, y))


@get_op("Relu").def_gradient(keep_outputs=True)
def _relu_grad(forward, dy):
    return relu_grad(dy, forward.outputs[0])


@RELU_GRAD.def_gradient(keep_inputs=(1,))
def _relu_grad_grad(forward, ddx):
    return relu_grad(ddx, forward.inputs[1]), None  # piecewise linear: nothing w.r.t. y


_SQRT_2PI = math.sqrt(2 * math.pi)
_TANH_C = 0.7978845608028654  # sqrt(2 / pi), TensorFlow's approximate gelu
_TANH_A = 0.044715


def _gelu_grad_kernel(xp, dy, x, approximate=False):
    xf = _upcast(xp, x)
    if approximate:
        t = xp.tanh(_TANH_C * (xf + _TANH_A * xf * xf * xf))
        slope = 0.5 * (1 + t) + 0.5 * xf * (1 - t * t) * (_TANH_C * (1 + 3 * _TANH_A * xf * xf))
    else:  # Phi(x) + x phi(x)
        slope = _normal_cdf(xp, xf) + xf * xp.exp(-0.5 * xf * xf) / _SQRT_2PI
    return (dy * slope).astype(dy.dtype, copy=False)


GELU_GRAD = register_op("GeluGrad", _gelu_grad_kernel, _same_as_first, dtypes=FLOATING,
                        elementwise=True, doc="dy * gelu'(x), exact or tanh-approximate.")


def _gelu_grad(dy, x, approximate):
    return execute(GELU_GRAD, (dy, x), {"approximate": approximate})


@get_op("Gelu").def_gradient(keep_inputs=True)
def _gelu_grad_rule(forward, dy):
    return _gelu_grad(dy, forward.inputs[0], forward.attrs.get("approximate", False))


@GELU_GRAD.def_gradient(keep_inputs=True)
def _gelu_grad_grad(forward, ddx):
    dy, x = forward.inputs
    approximate = forward.attrs.get("approximate", False)
    if approximate:
        # gelu'' = (1 - t^2) (u' - x t u'^2 + x u'' / 2), t = tanh(u), u = c (x + a x^3).
        x2 = x * x
        t = m.tanh(_TANH_C * (x + _TANH_A * x2 * x))
        du = _TANH_C * (1 + 3 * _TANH_A * x2)
        curvature = (1 - t * t) * (du - x * t * du * du + (3 * _TANH_A * _TANH_C) * x2)
    else:  # gelu'' = phi(x) (2 - x^2)
        x2 = x * x
        curvature = m.exp(-0.5 * x2) * ((2 - x2) / _SQRT_2PI)
    return _gelu_grad(ddx, x, approximate), ddx * dy * curvature


# -----------------------------------------------------------------------------------------------
# Softmax and the cross-entropies
# -----------------------------------------------------------------------------------------------

@get_op("Softmax").def_gradient(keep_outputs=True)
def _softmax_grad(forward, dy):
    (y,) = forward.outputs
    axis = forward.attrs.get("axis", -1)
    return (dy - m.reduce_sum(dy * y, axis, keepdims=True)) * y


@get_op("LogSoftmax").def_gradient(keep_outputs=True)
def _log_softmax_grad(forward, dy):
    (y,) = forward.outputs
    axis = forward.attrs.get("axis", -1)
    return dy - m.exp(y) * m.reduce_sum(dy, axis, keepdims=True)


@get_op("SigmoidCrossEntropyWithLogits").def_gradient(keep_inputs=True)
def _sigmoid_xent_grad(forward, dy):
    x, z = forward.inputs
    dz = -dy * x if needs_gradient(forward, 1) else None
    return dy * (m.sigmoid(x) - z), dz


def _softmax_jacobian_product(g, logits, axis):
    """The gradient through softmax(logits) of `g`: the cross-entropies' backprop output is
    softmax(logits) - labels, so this is its gradient w.r.t. the logits (second derivatives)."""
    p = softmax(logits, axis)
    return (g - m.reduce_sum(g * p, axis, keepdims=True)) * p


@get_op("SoftmaxCrossEntropyWithLogits").def_gradient(keep_inputs=(0,), keep_outputs=(1,))
def _softmax_xent_grad(forward, dloss, dbackprop):
    """d loss / d logits is the op's second output (softmax - labels), kept from the forward
    pass; d loss / d labels = -log_softmax(logits). The second output's own gradient (nonzero only
    when differentiating a gradient) goes through softmax to the logits and negated to the labels
    (TensorFlow drops the labels' part)."""
    logits = forward.inputs[0]
    axis = forward.attrs.get("axis", -1)
    g = expand_dims(dloss, axis)
    dx = g * forward.outputs[1]
    second = not output_unused(forward, 1)
    if second:
        dx = dx + _softmax_jacobian_product(dbackprop, logits, axis)
    dz = None
    if needs_gradient(forward, 1):
        dz = g * -log_softmax(logits, axis)
        if second:
            dz = dz - dbackprop
        dz = unbroadcast(dz, forward.input_shapes[1])
    return dx, dz


@get_op("SparseSoftmaxCrossEntropyWithLogits").def_gradient(keep_inputs=(0,), keep_outputs=(1,))
def _sparse_softmax_xent_grad(forward, dloss, dbackprop):
    """As the dense loss; integer labels have no gradient. (TensorFlow refuses second derivatives
    of this op; here they are the softmax Jacobian, as for the dense loss.)"""
    dx = expand_dims(dloss, -1) * forward.outputs[1]
    if not output_unused(forward, 1):
        dx = dx + _softmax_jacobian_product(dbackprop, forward.inputs[0], -1)
    return dx, None


# -----------------------------------------------------------------------------------------------
# Conv2D: backward ops for the input and the filter
# -----------------------------------------------------------------------------------------------

_CONV_ATTRS = ("strides", "dilations", "padding", "explicit_paddings", "data_format")


def _conv_attrs(attrs):
    return {k: attrs[k] for k in _CONV_ATTRS if k in attrs}


def _nhwc(shape, data_format):
    shape = tuple(shape)
    if data_format == "NCHW":
        return shape[:-3] + shape[-2:] + shape[-3:-2]
    return shape


def _conv_plan(x_nhwc_shape, w_shape, strides, dilations, padding, explicit_paddings):
    """(batch, n, h, w, depth, groups, out-channels per group, (oh, pt, pb), (ow, pl, pr))."""
    batch, (h, wd, depth) = tuple(x_nhwc_shape[:-3]), x_nhwc_shape[-3:]
    kh, kw, cin, cout = w_shape
    groups = depth // cin
    rows, cols = _geometry(_CONV, (h, wd), (kh, kw), strides, dilations, padding,
                           explicit_paddings)
    return batch, math.prod(batch), h, wd, depth, groups, cout // groups, rows, cols


def _conv_filter_grad_kernel(xp, x, dy, filter_shape, strides=(1, 1), dilations=(1, 1),
                             padding="VALID", explicit_paddings=(), data_format="NHWC"):
    dtype = x.dtype
    x, dy = _to_nhwc(xp, x, data_format), _to_nhwc(xp, dy, data_format)
    kh, kw, cin, cout = filter_shape
    _, n, h, wd, depth, groups, og, (oh, pt, pb), (ow, pl, pr) = _conv_plan(
        x.shape, filter_shape, strides, dilations, padding, explicit_paddings)
    view = _windows(xp, x.reshape(n, h, wd, depth), (oh, ow), (kh, kw), strides, dilations,
                    ((pt, pb), (pl, pr)), 0)
    m_, taps = n * oh * ow, kh * kw * cin
    cols = view.reshape(n, oh, ow, kh, kw, groups, cin).transpose(5, 0, 1, 2, 3, 4, 6)
    cols = cols.reshape(groups, m_, taps)
    g = dy.reshape(m_, groups, og).transpose(1, 0, 2)
    if dtype == np.float16:
        cols, g = cols.astype(np.float32), g.astype(np.float32)
    dw = xp.matmul(cols.transpose(0, 2, 1), g)  # [G, taps, og]
    dw = dw.reshape(groups, kh * kw, cin, og).transpose(1, 2, 0, 3).reshape(kh, kw, cin, cout)
    return xp.ascontiguousarray(dw.astype(dtype, copy=False))


def _batch_from(input_shape, dy):
    """`input_shape` with its batch sizes (those before the last three) taken from `dy` where
    the attribute leaves them unknown: a traced function with a None batch dimension."""
    if None not in input_shape:
        return input_shape
    return tuple(dy.shape[:len(input_shape) - 3]) + tuple(input_shape[-3:])


def _input_shape_arg(shape):
    """A backward op's `input_shape` attribute and extra inputs, from the recorded input shape:
    the attribute when the image size and depth are known (an unknown batch size the kernel
    takes from dy), else None and the shape read when the graph runs, as a last input."""
    if None not in tuple(shape)[-3:]:
        return tuple(shape), ()
    return None, (shape_tensor(shape),)


def _conv_input_grad_kernel(xp, w, dy, sizes=None, input_shape=None, strides=(1, 1),
                            dilations=(1, 1), padding="VALID", explicit_paddings=(),
                            data_format="NHWC"):
    dtype = dy.dtype
    input_shape = _batch_from(read_dims("Conv2DBackpropInput", sizes, "input_sizes")
                              if input_shape is None else input_shape, dy)
    dy = _to_nhwc(xp, dy, data_format)
    kh, kw, cin, cout = w.shape
    batch, n, h, wd, depth, groups, og, (oh, pt, pb), (ow, pl, pr) = _conv_plan(
        _nhwc(input_shape, data_format), w.shape, strides, dilations, padding, explicit_paddings)
    work = np.float32 if dtype == np.float16 else dtype
    padded = xp.zeros((n, h + pt + pb, wd + pl + pr, depth), dtype=work)
    if n * oh * ow:
        g = dy.reshape(n * oh * ow, groups, og).transpose(1, 0, 2).astype(work, copy=False)
        # per tap [G, og, cin]: dy @ w[i, j]^T gives that tap's columns, contiguous, ready to add
        filt = w.reshape(kh, kw, cin, groups, og).transpose(0, 1, 3, 4, 2).astype(work,
                                                                                 copy=False)
        (sh, sw), (dh, dw) = strides, dilations
        for i in range(kh):  # one matmul and one strided add per tap, over every pixel at once
            for j in range(kw):
                cols = xp.matmul(g, filt[i, j])  # [G, M, cin]
                cols = cols[0] if groups == 1 else cols.transpose(1, 0, 2)
                padded[:, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                       j * dw:j * dw + sw * (ow - 1) + 1:sw, :] += cols.reshape(n, oh, ow, depth)
    dx = padded[:, pt:pt + h, pl:pl + wd, :].astype(dtype, copy=False)
    return _from_nhwc(xp, xp.ascontiguousarray(dx).reshape(*batch, h, wd, depth), data_format)


def _conv_filter_grad_infer(x, dy, filter_shape, **attrs):
    return TensorSpec(filter_shape, x.dtype)


def _conv_input_grad_infer(w, dy, sizes=None, input_shape=None, **attrs):
    if input_shape is None:  # the shape is the last input, read when the op runs
        input_shape = shape_elements("Conv2DBackpropInput", sizes, "input_sizes")
    return TensorSpec(input_shape, dy.dtype)


_CONV_DTYPES = frozenset({_dt.float16, _dt.float32, _dt.float64})
CONV2D_INPUT_GRAD = register_op("Conv2DBackpropInput", _conv_input_grad_kernel,
                                _conv_input_grad_infer, dtypes=_CONV_DTYPES, host_inputs=(2,),
                                doc="Gradient of Conv2D w.r.t. its input (filter, dy); the "
                                    "input's shape is an attribute, or a last input.")
CONV2D_FILTER_GRAD = register_op("Conv2DBackpropFilter", _conv_filter_grad_kernel,
                                 _conv_filter_grad_infer, dtypes=_CONV_DTYPES,
                                 doc="Gradient of Conv2D w.r.t. its filter (input, dy).")


def _conv_input_grad(w, dy, input_shape, attrs):
    shape, sizes = _input_shape_arg(input_shape)
    return execute(CONV2D_INPUT_GRAD, (w, dy, *sizes), {**_conv_attrs(attrs),
                                                        "input_shape": shape})


def _conv_filter_grad(x, dy, filter_shape, attrs):
    return execute(CONV2D_FILTER_GRAD, (x, dy), {**_conv_attrs(attrs),
                                                 "filter_shape": tuple(filter_shape)})


@CONV2D.def_gradient(keep_inputs=True)
def _conv2d_grad(forward, dy):
    x, w = forward.inputs
    dx = _conv_input_grad(w, dy, forward.input_shapes[0], forward.attrs) \
        if needs_gradient(forward, 0) else None
    dw = _conv_filter_grad(x, dy, forward.input_shapes[1], forward.attrs) \
        if needs_gradient(forward, 1) else None
    return dx, dw


@CONV2D_INPUT_GRAD.def_gradient(keep_inputs=(0, 1))
def _conv_input_grad_grad(forward, ddx):
    w, dy = forward.inputs[:2]  # dx is linear in each: swap the roles
    return (_conv_filter_grad(ddx, dy, forward.input_shapes[0], forward.attrs),
            execute(CONV2D, (ddx, w), _conv_attrs(forward.attrs))) + (
        None,) * (len(forward.input_ids) - 2)  # the run-time input shape, if any


@CONV2D_FILTER_GRAD.def_gradient(keep_inputs=True)
def _conv_filter_grad_grad(forward, ddw):
    x, dy = forward.inputs
    return (_conv_input_grad(ddw, dy, forward.input_shapes[0], forward.attrs),
            execute(CONV2D, (x, ddw), _conv_attrs(forward.attrs)))


# -----------------------------------------------------------------------------------------------
# MaxPool: the gradient goes to the element of each window that TensorFlow's CPU kernel picks
# (`_pool_hits`); MaxPoolGradGrad is its transpose.
# -----------------------------------------------------------------------------------------------

_POOL_ATTRS = ("ksize", "strides", "padding", "explicit_paddings", "data_format")


def _pool_hits(xp, x, ksize, strides, padding, explicit_paddings):
    """Yields (i, j, hit) per window tap (i, j): hit marks the windows whose gradient goes to
    that tap. As TensorFlow's CPU kernel finds it: a window's first element (padding aside) is
    taken, then each later one greater than the one taken, so tied maxima give the first, and
    a window of -inf and NaN alone, whose MaxPool is the lowest finite value, its first element
    (a NaN first element too: nothing compares greater than it). So the forward output is not
    needed to find it. Also returns the padded geometry first."""
    n, h, w, c = x.shape
    rows, cols = _geometry(_POOL, (h, w), ksize, strides, (1, 1), padding, explicit_paddings)
    yield rows, cols
    out_hw, pads = (rows[0], cols[0]), ((rows[1], rows[2]), (cols[1], cols[2]))
    view = _windows(xp, x, out_hw, ksize, strides, (1, 1), pads, _lowest(x.dtype))
    inside = None  # which taps of which windows are padding: only when there is padding
    if any(pads[0]) or any(pads[1]):
        inside = _windows(xp, xp.ones((1, h, w, 1), dtype=bool), out_hw, ksize, strides,
                          (1, 1), pads, False)
    taps = [(i, j) for i in range(ksize[0]) for j in range(ksize[1])]
    best = chosen = unset = None
    for t, (i, j) in enumerate(taps):
        v = view[:, :, :, i, j, :]
        if best is None:
            best, chosen = v.copy(), xp.zeros(v.shape, dtype=np.int32)
            if inside is None:
                continue
            unset = ~xp.broadcast_to(inside[:, :, :, i, j, :], v.shape)
            continue
        take = best < v
        if inside is not None:
            valid = inside[:, :, :, i, j, :]
            take = (take | unset) & valid
            unset = unset & ~valid
        best = xp.where(take, v, best)
        chosen = xp.where(take, np.int32(t), chosen)
    for t, (i, j) in enumerate(taps):
        yield i, j, chosen == t


def _spread_over_windows(xp, taps, shape, geometry, strides, dtype):
    """The input-shaped ([N, H, W, C]) sum of each window tap's contribution: `taps` yields
    (i, j, values), `values` shaped like the pooled output, added at tap (i, j) of every window
    (one strided add per tap, each over every window at once); padding is cropped off."""
    n, h, w, c = shape
    (oh, pt, pb), (ow, pl, pr) = geometry
    padded = xp.zeros((n, h + pt + pb, w + pl + pr, c), dtype=dtype)
    sh, sw = strides
    if n and c and oh and ow:
        for i, j, values in taps:
            padded[:, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw, :] += values
    return xp.ascontiguousarray(padded[:, pt:pt + h, pl:pl + w, :])


def _max_pool_grad_kernel(xp, x, y, dy, ksize=(1, 1), strides=(1, 1), padding="VALID",
                          explicit_paddings=(), data_format="NHWC"):
    x, y, dy = (_to_nhwc(xp, t, data_format) for t in (x, y, dy))
    hits = _pool_hits(xp, x, ksize, strides, padding, explicit_paddings)
    geometry = next(hits)
    zero = dy.dtype.type(0)
    taps = ((i, j, xp.where(hit, dy, zero)) for i, j, hit in hits)
    dx = _spread_over_windows(xp, taps, x.shape, geometry, strides, dy.dtype)
    return _from_nhwc(xp, dx, data_format)


def _max_pool_grad_grad_kernel(xp, x, y, ddx, ksize=(1, 1), strides=(1, 1), padding="VALID",
                               explicit_paddings=(), data_format="NHWC"):
    x, y, ddx = (_to_nhwc(xp, t, data_format) for t in (x, y, ddx))
    hits = _pool_hits(xp, x, ksize, strides, padding, explicit_paddings)
    rows, cols = next(hits)
    view = _windows(xp, ddx, (rows[0], cols[0]), ksize, strides, (1, 1),
                    ((rows[1], rows[2]), (cols[1], cols[2])), 0)
    ddy = xp.zeros(y.shape, dtype=ddx.dtype)
    if ddy.size:
        for i, j, hit in hits:
            ddy = xp.where(hit, view[:, :, :, i, j, :], ddy)
    return _from_nhwc(xp, ddy, data_format)


MAX_POOL_GRAD = register_op("MaxPoolGrad", _max_pool_grad_kernel,
                            lambda x, y, dy, **attrs: TensorSpec(x.shape, dy.dtype),
                            dtypes=FLOATING, doc="Routes dy (pool-shaped) to each window's "
                                                 "max; inputs (x, y = max_pool(x), dy).")
MAX_POOL_GRAD_GRAD = register_op("MaxPoolGradGrad", _max_pool_grad_grad_kernel,
                                 lambda x, y, ddx, **attrs: TensorSpec(y.shape, ddx.dtype),
                                 dtypes=FLOATING, doc="Reads ddx (input-shaped) at each "
                                                      "window's max; inputs (x, y, ddx).")


def _pool_call(op, x, y, g, attrs):
    return execute(op, (x, y, g), {k: attrs[k] for k in _POOL_ATTRS if k in attrs})


@get_op("MaxPool").def_gradient(keep_inputs=True, keep_outputs=True)
def _max_pool_grad(forward, dy):
    return _pool_call(MAX_POOL_GRAD, forward.inputs[0], forward.outputs[0], dy, forward.attrs)


@MAX_POOL_GRAD.def_gradient(keep_inputs=(0, 1))
def _max_pool_grad_grad(forward, ddx):
    x, y = forward.inputs[:2]  # the routing is piecewise constant in x: no gradient for x, y
    return None, None, _pool_call(MAX_POOL_GRAD_GRAD, x, y, ddx, forward.attrs)


@MAX_POOL_GRAD_GRAD.def_gradient(keep_inputs=(0, 1))
def _max_pool_grad_grad_grad(forward, dddy):
    x, y = forward.inputs[:2]
    return None, None, _pool_call(MAX_POOL_GRAD, x, y, dddy, forward.attrs)


# -----------------------------------------------------------------------------------------------
# Sorting: the values' gradient goes back to where each value came from
# -----------------------------------------------------------------------------------------------

def _scatter_last_axis(dy, indices, n):
    """Zeros of dy's shape with the last axis n long, and dy[..., j] added at [..., indices[..., j]]
    (one scatter_nd over the flattened rows)."""
    shape = list(dy.shape)
    if None in shape or n.__class__ is not int:
        return _scatter_last_axis_at_run_time(dy, indices, n)
    rows, k = math.prod(shape[:-1]), shape[-1]
    if not rows * k:
        return zeros(shape[:-1] + [n], dy.dtype)
    index_dtype = _dt.int64 if rows * n >= 2 ** 31 else _dt.int32
    if indices.dtype is not index_dtype:
        indices = m.cast(indices, index_dtype)
    flat = reshape(indices, [rows, k]) + reshape(_range(0, rows * n, n, dtype=index_dtype),
                                                 [rows, 1])
    out = scatter_nd(reshape(flat, [rows * k, 1]), reshape(dy, [rows * k]), [rows * n])
    return reshape(out, shape[:-1] + [n])


def _scatter_last_axis_at_run_time(dy, indices, n):
    """`_scatter_last_axis` for sizes known only when the graph runs (int64 positions)."""
    dims = execute(get_op("Shape"), (dy,), {"out_type": _dt.int64})
    rows, k = m.reduce_prod(dims[:-1]), dims[-1]
    n = m.cast(n, _dt.int64)
    flat = reshape(m.cast(indices, _dt.int64), [rows, k]) + reshape(
        _range(m.cast(0, _dt.int64), rows * n, n, dtype=_dt.int64), [rows, 1])
    out = scatter_nd(reshape(flat, [rows * k, 1]), reshape(dy, [rows * k]), [rows * n])
    return reshape(out, concat([dims[:-1], reshape(n, [1])], 0))


def _size_along(shape, axis):
    """shape[axis]: an int, or a scalar read from the run-time shape."""
    if shape[axis] is not None:
        return shape[axis]
    return shape_tensor(shape)[axis]


@get_op("TopKV2").def_gradient(keep_outputs=(1,))
def _top_k_grad(forward, dvalues, dindices):
    shape = forward.input_shapes[0]
    return _scatter_last_axis(dvalues, forward.outputs[1], _size_along(shape, len(shape) - 1))


@get_op("Sort").def_gradient(keep_outputs=(1,))
def _sort_grad(forward, dvalues, dindices):
    indices = forward.outputs[1]
    shape = forward.input_shapes[0]
    axis, last = forward.attrs["axis"], len(shape) - 1
    if axis == last:
        return _scatter_last_axis(dvalues, indices, _size_along(shape, axis))
    perm = list(range(len(shape)))
    perm[axis], perm[last] = last, axis  # a swap is its own inverse
    out = _scatter_last_axis(transpose(dvalues, perm), transpose(indices, perm),
                             _size_along(shape, axis))
    return transpose(out, perm)


# -----------------------------------------------------------------------------------------------
# AvgPool: linear, so its gradient spreads dy / count over each window (AvgPoolGrad, which needs
# the input's static shape), and AvgPoolGrad's gradient is AvgPool again.
# -----------------------------------------------------------------------------------------------

def _avg_pool_grad_kernel(xp, dy, sizes=None, input_shape=(), ksize=(1, 1), strides=(1, 1),
                          padding="VALID", explicit_paddings=(), data_format="NHWC"):
    input_shape = _batch_from(read_dims("AvgPoolGrad", sizes, "orig_input_shape")
                              if input_shape is None else input_shape, dy)
    dy = _to_nhwc(xp, dy, data_format)
    hw = tuple(input_shape[2:]) if data_format == "NCHW" else tuple(input_shape[1:3])
    counts, geometry = window_counts(xp, hw, ksize, strides, padding, dy.dtype)
    share = dy / counts
    taps = ((i, j, share) for i in range(ksize[0]) for j in range(ksize[1]))
    dx = _spread_over_windows(xp, taps, (dy.shape[0], *hw, dy.shape[3]), geometry, strides,
                              dy.dtype)
    return _from_nhwc(xp, dx, data_format)


def _avg_pool_grad_infer(dy, sizes=None, input_shape=(), **attrs):
    if input_shape is None:  # the shape is the last input, read when the op runs
        input_shape = shape_elements("AvgPoolGrad", sizes, "orig_input_shape")
    return TensorSpec(input_shape, dy.dtype)


AVG_POOL_GRAD = register_op("AvgPoolGrad", _avg_pool_grad_kernel, _avg_pool_grad_infer,
                            dtypes=FLOATING, host_inputs=(1,),
                            doc="Spreads dy (pool-shaped) evenly over each window; the input's "
                                "shape is an attribute, or a last input.")


@get_op("AvgPool").def_gradient
def _avg_pool_grad(forward, dy):
    shape, sizes = _input_shape_arg(forward.input_shapes[0])
    attrs = {k: forward.attrs[k] for k in _POOL_ATTRS if k in forward.attrs}
    return execute(AVG_POOL_GRAD, (dy, *sizes), dict(attrs, input_shape=shape))


@AVG_POOL_GRAD.def_gradient
def _avg_pool_grad_grad(forward, ddx):
    attrs = {k: forward.attrs[k] for k in _POOL_ATTRS if k in forward.attrs}
    g = execute(AVG_POOL, (ddx,), attrs)
    return g if len(forward.input_ids) == 1 else (g, None)
