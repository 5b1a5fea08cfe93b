"""Neural-network activations and losses (`eager.nn`): relu, gelu, softmax, log_softmax and the
three cross-entropies. Convolution and pooling live in `conv_ops` and are re-exported here.

Numerics follow TensorFlow's stable formulations: softmax subtracts the row maximum, the
cross-entropies work from `log_softmax` (or `max(x, 0) - x*z + log1p(exp(-|x|))`), so large logits
never make inf or nan. float16 inputs are computed in float32 and rounded once at the end, as
TensorFlow does for its losses.
"""

from __future__ import annotations

import numpy as np

from ..base import device_checks, dtypes as _dt
from ..base.ieee import add_reduce
from ..core.specs import TensorSpec
from ..base.tensor_shape import TensorShape
from .conv_ops import avg_pool2d, conv2d, max_pool2d  # noqa: F401 - re-exported as eager.nn.*
from ..core.argument_conversion import as_tensor, check_dtype, same_type
from ..core.dispatch import execute
from .math_ops import cast
from ..core.registry import op_error, register_op
from ..core.shapes import normalize_axis

__all__ = ["relu", "gelu", "softmax", "log_softmax", "sigmoid_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits",
           "conv2d", "max_pool2d", "avg_pool2d"]

FLOATING = _dt.FLOATING


def _infer_same(x, **attrs):
    return TensorSpec(x.shape, x.dtype)


def _upcast(xp, x):
    """float16 is computed in float32 (one rounding at the end instead of one per step)."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


# -----------------------------------------------------------------------------------------------
# Activations
# -----------------------------------------------------------------------------------------------

def _relu_kernel(xp, x):
    return xp.maximum(x, x.dtype.type(0))  # NaN propagates, as in TensorFlow


RELU = register_op("Relu", _relu_kernel, _infer_same, dtypes=_dt.REAL, elementwise=True)


def relu(features, name=None):
    """≈ `tf.nn.relu`: max(features, 0), for any real dtype (NaN stays NaN)."""
    x = as_tensor(features)
    check_dtype(RELU, x, RELU.dtypes)
    return execute(RELU, (x,))


# The standard normal CDF, Phi(x) = erfc(-x / sqrt(2)) / 2, for exact gelu. numpy has no erf, and
# `math.erf` elementwise is far too slow, so this evaluates W. J. Cody's rational Chebyshev
# approximations ("Rational Chebyshev approximations for the error function", Math. Comp. 23,
# 1969), the algorithm behind most C libraries' erf/erfc. Measured against `math.erf`/`math.erfc`
# on a dense grid (tests/test_nn_ops.py): relative error < 4e-15 for z = x/sqrt(2) in float64 down
# to Phi ~ 1e-300 (erf for |z| <= 0.46875, erfc beyond, so both tails keep full relative accuracy);
# Phi's own conditioning adds ~x**2 * 1e-16 from rounding x/sqrt(2), e.g. 1.5e-13 at x = -30. In
# float32 the input's rounding dominates (about 1e-6 relative for typical activations). Large
# arguments are clamped (erfc(30) is 0 in float64), so nothing overflows; NaN propagates.
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERFC_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
           2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
           2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERFC_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
           1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
           3.43936767414372164e03, 1.23033935480374942e03)
_ERFC_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
           1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERFC_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
           6.05183413124413191e-2, 2.33520497626869185e-3)
_INV_SQRT_PI = 5.6418958354775628695e-1
_SQRT_HALF = 0.7071067811865476


def _rational(t, lead, num_coeffs, den_coeffs):
    """Cody's nested form ((lead*t + n0)*t + ...)/((t + d0)*t + ...), updated in place: this
    function runs ~15 times per gelu element and temporaries would dominate its cost."""
    num = lead * t
    den = t + 0  # a copy (t may be a numpy scalar, which simply rebinds below)
    for n, d in zip(num_coeffs[:-1], den_coeffs[:-1]):
        num += n
        num *= t
        den += d
        den *= t
    num += num_coeffs[-1]
    den += den_coeffs[-1]
    num /= den
    return num


def _erf_small(xp, z):
    """erf(z) for |z| <= 0.46875."""
    return z * _rational(z * z, _ERF_A[4], _ERF_A[:4], _ERF_B)


def _erfc_mid(xp, y):
    """erfc(y) for 0.46875 < y <= 4."""
    return _exp_minus_square(xp, y) * _rational(y, _ERFC_C[8], _ERFC_C[:8], _ERFC_D)


def _erfc_large(xp, y):
    """erfc(y) for y > 4 (NaN stays NaN)."""
    y = xp.minimum(y, 30)  # erfc(30) underflows even in float64
    inv = 1 / (y * y)
    r = _rational(inv, _ERFC_P[5], _ERFC_P[:5], _ERFC_Q)
    r *= -inv
    r += _INV_SQRT_PI
    r /= y
    return _exp_minus_square(xp, y) * r


def _exp_minus_square(xp, y):
    """exp(-y*y) without the rounding error of y*y: split y into a 4-bit head and the rest."""
    head = xp.trunc(y * 16) / 16
    return xp.exp(-head * head) * xp.exp(-(y - head) * (y + head))


def _normal_cdf(xp, x):
    """Phi(x) = erfc(-x / sqrt(2)) / 2, each element through the one branch its range needs
    (boolean-mask gathers cost less than evaluating every branch everywhere)."""
    z = xp.asarray(x * _SQRT_HALF)
    y = xp.abs(z)
    out = xp.empty_like(z)
    small = y <= 0.46875
    mid = (y <= 4) & ~small
    rest = ~(small | mid)  # large |z| and NaN
    out[small] = 0.5 + 0.5 * _erf_small(xp, z[small])
    for mask, erfc in ((mid, _erfc_mid), (rest, _erfc_large)):
        zm = z[mask]
        tail = 0.5 * erfc(xp, xp.abs(zm))
        out[mask] = xp.where(zm > 0, 1 - tail, tail)
    return out


def erfc_of(xp, z):
    """erfc(z) elementwise in z's (floating) dtype by Cody's approximations above: erf for
    |z| <= 0.46875, erfc of |z| beyond, reflected for negative z (erfc(-y) = 2 - erfc(y)), so
    the upper tail keeps full relative accuracy. `eager.math.erf`/`erfc` run on it."""
    z = xp.asarray(z)
    y = xp.abs(z)
    out = xp.empty_like(z)
    small = y <= 0.46875
    mid = (y <= 4) & ~small
    rest = ~(small | mid)  # large |z| and NaN
    out[small] = 1 - _erf_small(xp, z[small])
    for mask, erfc in ((mid, _erfc_mid), (rest, _erfc_large)):
        zm = z[mask]
        tail = erfc(xp, xp.abs(zm))
        out[mask] = xp.where(zm < 0, 2 - tail, tail)
    return out


def erf_of(xp, z):
    """erf(z) elementwise by Cody's approximations: the series form near 0 (full relative
    accuracy for tiny z), 1 - erfc(|z|) with z's sign beyond."""
    z = xp.asarray(z)
    y = xp.abs(z)
    out = xp.empty_like(z)
    small = y <= 0.46875
    out[small] = _erf_small(xp, z[small])
    big = ~small
    zb = z[big]
    out[big] = xp.where(zb < 0, -1, 1) * (1 - erfc_of(xp, xp.abs(zb)))
    return out


def _gelu_kernel(xp, x, approximate=False):
    xf = _upcast(xp, x)
    if approximate:
        # TensorFlow's tanh formula (Hendrycks & Gimpel): 0.7978845608 = sqrt(2 / pi).
        y = 0.5 * xf * (1 + xp.tanh(0.7978845608028654 * (xf + 0.044715 * (xf * xf * xf))))
    else:
        y = xf * _normal_cdf(xp, xf)
    return y.astype(x.dtype, copy=False)


GELU = register_op("Gelu", _gelu_kernel, _infer_same, dtypes=FLOATING, elementwise=True)


def gelu(features, approximate=False, name=None):
    """≈ `tf.nn.gelu`: x * Phi(x) with Phi the standard normal CDF (exact, via erf), or TF's tanh
    approximation when `approximate=True`. Like TensorFlow, a non-floating input is a ValueError.

    Beyond TF: the exact form is computed as x * erfc(-x/sqrt(2)) / 2, which keeps full relative
    accuracy for very negative x where TF's 1 + erf(...) cancels to 0.
    """
    x = as_tensor(features)
    if not x.dtype.is_floating:
        raise ValueError(f"Gelu: `features.dtype` must be a floating point tensor. Received: "
                         f"features.dtype={x.dtype.name}")
    return execute(GELU, (x,), {"approximate": bool(approximate)})


# -----------------------------------------------------------------------------------------------
# Softmax
# -----------------------------------------------------------------------------------------------

def _softmax_infer(op_name):
    def infer(logits, axis=-1):
        rank = logits.shape.rank
        if rank == 0:
            raise op_error(op_name, "logits must have >= 1 dimension, got shape []", [logits])
        if rank is not None:
            normalize_axis(op_name, axis, rank)
        return TensorSpec(logits.shape, logits.dtype)
    return infer


def _softmax_kernel(xp, x, axis=-1):
    if x.size == 0:
        return xp.asarray(x).copy()
    xf = _upcast(xp, x)
    e = xp.exp(xf - xf.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype, copy=False)


def _log_softmax(xp, xf, axis):
    shifted = xf - xf.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


def _log_softmax_kernel(xp, x, axis=-1):
    if x.size == 0:
        return xp.asarray(x).copy()
    return _log_softmax(xp, _upcast(xp, x), axis).astype(x.dtype, copy=False)


SOFTMAX = register_op("Softmax", _softmax_kernel, _softmax_infer("Softmax"), dtypes=FLOATING)
LOG_SOFTMAX = register_op("LogSoftmax", _log_softmax_kernel, _softmax_infer("LogSoftmax"),
                          dtypes=FLOATING)


def _softmax_api(op, logits, axis):
    x = as_tensor(logits)
    check_dtype(op, x, FLOATING)
    axis = -1 if axis is None else axis
    rank = x.shape.rank
    if rank == 0:
        op.infer(x)  # raises TensorFlow's rank error
    axis = normalize_axis(op.name, axis, rank)
    return execute(op, (x,), {"axis": axis})


def softmax(logits, axis=None, name=None):
    """≈ `tf.nn.softmax`: exp(x) / sum(exp(x)) along `axis` (default -1), computed as
    exp(x - max) so no logit overflows. Rank-0 logits are an InvalidArgumentError (as TF)."""
    return _softmax_api(SOFTMAX, logits, axis)


def log_softmax(logits, axis=None, name=None):
    """≈ `tf.nn.log_softmax`: x - max - log(sum(exp(x - max))) along `axis` (default -1)."""
    return _softmax_api(LOG_SOFTMAX, logits, axis)


# -----------------------------------------------------------------------------------------------
# Cross-entropies
# -----------------------------------------------------------------------------------------------

def _require_both(name, labels, logits):
    if labels is None or logits is None:
        raise ValueError(f"Both `labels` and `logits` must be provided for {name}. Received: "
                         f"labels={labels!r} and logits={logits!r}")


def _sigmoid_xent_infer(logits, labels):
    if not logits.shape.is_compatible_with(labels.shape):
        raise op_error("SigmoidCrossEntropyWithLogits", "logits and labels must have the same "
                       f"shape ({logits.shape} vs {labels.shape})", [logits, labels])
    return TensorSpec(logits.shape.merge_with(labels.shape), logits.dtype)


def _sigmoid_xent_kernel(xp, logits, labels):
    x, z = _upcast(xp, logits), _upcast(xp, labels)
    loss = xp.maximum(x, 0) - x * z + xp.log1p(xp.exp(-xp.abs(x)))
    return loss.astype(logits.dtype, copy=False)


SIGMOID_XENT = register_op("SigmoidCrossEntropyWithLogits", _sigmoid_xent_kernel,
                           _sigmoid_xent_infer, dtypes=FLOATING)


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """≈ `tf.nn.sigmoid_cross_entropy_with_logits`: elementwise
    max(x, 0) - x * z + log1p(exp(-|x|)) for logits x and labels z (the overflow-free form of
    -z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x))). Shapes must be equal (ValueError as TF)."""
    _require_both("sigmoid_cross_entropy_with_logits", labels, logits)
    x, z = same_type(SIGMOID_XENT, logits, labels)
    if not x.shape.is_compatible_with(z.shape):
        raise ValueError(f"SigmoidCrossEntropyWithLogits: `logits` and `labels` must have the "
                         f"same shape, received ({x.shape} vs {z.shape}).")
    return execute(SIGMOID_XENT, (x, z))


def _dims(shape):
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _labels_to_logits_shape(op_name, logits, labels):
    """Labels broadcast to the logits' shape (never the other way), as TF's kernel allows."""
    ls, zs = logits.shape, labels.shape
    if not ls._rank_known:
        return ls
    if zs._rank_known:
        ok = len(zs) <= len(ls)
        out = list(ls)
        for i, d in enumerate(zs[::-1] if ok else ()):
            g = out[-1 - i]
            if d is None or d == 1 or d == g:
                continue
            if g is None:
                out[-1 - i] = d
            else:
                ok = False
        if not ok:
            raise op_error(op_name, f"logits and labels must be broadcastable: logits_size="
                                    f"{_dims(ls)} labels_size={_dims(zs)}", [logits, labels])
        return TensorShape(out)
    return ls


def _softmax_xent_infer(logits, labels, axis=-1):
    op_name = "SoftmaxCrossEntropyWithLogits"
    if logits.shape.rank == 0:
        raise op_error(op_name, "logits must have rank >= 1, got shape []", [logits, labels])
    shape = _labels_to_logits_shape(op_name, logits, labels)
    if not shape._rank_known:
        return TensorSpec(shape, logits.dtype), TensorSpec(shape, logits.dtype)
    axis = normalize_axis(op_name, axis, len(shape))
    loss = TensorShape([d for i, d in enumerate(shape) if i != axis])
    return TensorSpec(loss, logits.dtype), TensorSpec(shape, logits.dtype)


def _softmax_xent_kernel(xp, logits, labels, axis=-1):
    """TensorFlow's XentFunctor, operation for operation: shifted = x - max(x),
    s = sum(exp(shifted)), loss = sum(labels * (log(s) - shifted)),
    backprop = exp(shifted) / s - labels. Reductions are the arrays' own methods (numpy's
    module-level `sum`/`max` add a Python wrapper that costs more than a small reduction), but
    the loss's sum, which can overflow, is `add.reduce` itself: its signal is then raised here,
    where eager's filter sees it (`eager.base.ieee`)."""
    x = _upcast(xp, logits)
    z = labels if labels.dtype == x.dtype else labels.astype(x.dtype)
    if z.shape != x.shape:
        z = xp.broadcast_to(z, x.shape)
    if x.shape[axis] == 0:  # no classes: zero loss
        axis %= x.ndim
        loss_shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
        return (xp.zeros(loss_shape, dtype=logits.dtype),
                xp.zeros(x.shape, dtype=logits.dtype))
    shifted = x - x.max(axis=axis, keepdims=True)
    e = xp.exp(shifted)
    total = e.sum(axis=axis, keepdims=True)
    loss = add_reduce(xp, z * (xp.log(total) - shifted), axis)
    backprop = e / total - z
    return loss.astype(logits.dtype, copy=False), backprop.astype(logits.dtype, copy=False)


SOFTMAX_XENT = register_op("SoftmaxCrossEntropyWithLogits", _softmax_xent_kernel,
                           _softmax_xent_infer, dtypes=FLOATING, num_outputs=2)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """≈ `tf.nn.softmax_cross_entropy_with_logits` (v2): -sum(labels * log_softmax(logits)) along
    `axis`; the result has the logits' shape without `axis`.

    As in TF, labels are cast to the logits' dtype, may broadcast to the logits' shape, and float16
    is computed in float32. The op's second output (softmax - labels, TF's "backprop") is what its
    gradient will use.
    """
    _require_both("softmax_cross_entropy_with_logits", labels, logits)
    x = as_tensor(logits)
    check_dtype(SOFTMAX_XENT, x, FLOATING)
    z = as_tensor(labels)
    if z.dtype is not x.dtype:
        z = cast(z, x.dtype)
    rank = x.shape.rank
    if rank == 0:
        SOFTMAX_XENT.infer(x, z)  # raises the rank error
    axis = normalize_axis(SOFTMAX_XENT.name, axis, rank)
    return execute(SOFTMAX_XENT, (x, z), {"axis": axis})[0]


_SPARSE = "SparseSoftmaxCrossEntropyWithLogits"


def _sparse_xent_infer(logits, labels):
    ls, zs = logits.shape, labels.shape
    if labels.dtype not in (_dt.int32, _dt.int64):
        raise op_error(_SPARSE, f"labels must be int32 or int64, got {labels.dtype.name}",
                       [logits, labels])
    if ls.rank == 0:
        raise op_error(_SPARSE, "logits cannot be a scalar (shape [])", [logits, labels])
    if ls._rank_known and zs._rank_known:
        if len(zs) != len(ls) - 1 or not zs.is_compatible_with(ls[:-1]):
            raise op_error(_SPARSE, f"labels shape {list(zs)} must equal the logits shape "
                                    f"{list(ls)} without its last dimension", [logits, labels])
        batch = zs.merge_with(ls[:-1])
        return (TensorSpec(batch, logits.dtype),
                TensorSpec(batch.concatenate(ls[-1:]), logits.dtype))
    if ls._rank_known:
        return TensorSpec(ls[:-1], logits.dtype), TensorSpec(ls, logits.dtype)
    if zs._rank_known:
        return (TensorSpec(zs, logits.dtype),
                TensorSpec(zs.concatenate([None]), logits.dtype))
    return TensorSpec(None, logits.dtype), TensorSpec(None, logits.dtype)


def check_sparse_labels(xp, labels, classes, logits_shape):
    """TF's CPU check: the first out-of-range label is an InvalidArgumentError (on every device:
    also the CuPy kernel layer's `SparseXent`). On a GPU the check stays on the device and a
    failure is raised at its next synchronization (`device_checks`): a training step does not
    wait for its labels to be read."""
    flat = xp.asarray(labels).reshape(-1)
    if flat.size == 0:
        return
    if classes == 0:
        raise op_error(_SPARSE, f"Must have at least one class, but got logits shape "
                                f"{list(logits_shape)}")

    def error():
        values = [int(v) for v in flat.tolist()]
        first = next(v for v in values if not 0 <= v < classes)
        shown = " ".join(str(v) for v in values[:100])
        more = " ..." if len(values) > 100 else ""
        return op_error(_SPARSE, f"Received a label value of {first} which is outside the "
                                 f"valid range of [0, {classes}).  Label values: {shown}{more}")

    device_checks.require(xp, ((flat < 0) | (flat >= classes)).any(), error)


def _sparse_xent_kernel(xp, logits, labels):
    x = _upcast(xp, xp.asarray(logits))
    labels = xp.asarray(labels)
    classes = x.shape[-1]
    check_sparse_labels(xp, labels, classes, x.shape)
    if classes == 0:  # then there are no labels either
        return (xp.zeros(x.shape[:-1], dtype=logits.dtype), xp.zeros(x.shape, dtype=logits.dtype))
    log_p = _log_softmax(xp, x, -1)
    index = labels.astype(np.int64, copy=False)[..., None]  # (read only: no copy of int64)
    loss = -xp.take_along_axis(log_p, index, axis=-1)[..., 0]
    backprop = xp.exp(log_p) - (xp.arange(classes) == index).astype(log_p.dtype)
    return loss.astype(logits.dtype, copy=False), backprop.astype(logits.dtype, copy=False)


SPARSE_XENT = register_op(_SPARSE, _sparse_xent_kernel, _sparse_xent_infer, dtypes=FLOATING,
                          num_outputs=2)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """≈ `tf.nn.sparse_softmax_cross_entropy_with_logits`: -log_softmax(logits)[..., label] for
    int32/int64 class indices `labels` of the logits' shape without its last axis.

    Static shape mismatches are ValueErrors (as TF's Python layer raises them); a label outside
    [0, num_classes) is TF's CPU InvalidArgumentError ("Received a label value of 7 which is
    outside the valid range of [0, 5)"), not TF-GPU's silent NaN; on a GPU it is raised at the
    device's next synchronization (`device_checks`), so a step does not wait for its labels.
    """
    _require_both("sparse_softmax_cross_entropy_with_logits", labels, logits)
    x = as_tensor(logits)
    check_dtype(SPARSE_XENT, x, FLOATING)
    z = as_tensor(labels)
    check_dtype(SPARSE_XENT, z, (_dt.int32, _dt.int64), "labels")
    ls, zs = x.shape, z.shape
    if ls.rank == 0:
        raise ValueError(f"{_SPARSE}: `logits` cannot be a scalar. Received logits shape {ls}.")
    if ls.rank is not None and zs.rank is not None:
        if zs.rank != ls.rank - 1:
            raise ValueError(f"{_SPARSE}: `labels.shape.rank` must equal `logits.shape.rank - 1`."
                             f" Received: labels.shape={zs} of rank {zs.rank} and logits.shape="
                             f"{ls} of rank {ls.rank}")
        if not zs.is_compatible_with(ls[:-1]):
            raise ValueError(f"{_SPARSE}: `labels.shape` must equal `logits.shape` except for "
                             f"the last dimension. Received: labels.shape={zs} and logits.shape="
                             f"{ls}")
    return execute(SPARSE_XENT, (x, z))[0]
