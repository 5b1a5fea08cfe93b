"""Rounding and special functions (`eager.math`): floor, ceil, round, rint, tan, reciprocal,
erf, erfc, lgamma, digamma, polygamma, zeta.

Each is one elementwise record under TensorFlow's op name with TensorFlow's dtypes (floating
only for the rounding and special functions, as TF's kernels; complex too for tan and
reciprocal). numpy has no erf, lgamma or digamma, so the kernels compute them here: erf/erfc
with Cody's approximations (`nn_ops.erf_of`), lgamma with the C library's (`math.lgamma`, one
element at a time: slow, about 0.1 us an element), digamma and the Hurwitz zeta by recurrence
to large arguments and their asymptotic series. On CuPy they use `cupyx.scipy.special` (lgamma
in float64 at any dtype, as on the CPU). Half precision is computed in float32 and rounded back.

TensorFlow's values at the poles are kept on every backend (set explicitly where CuPy's, which
are CUDA's and SciPy's, differ): lgamma is +inf at 0, the negative integers and -inf, digamma
NaN there (TF's Eigen kernel), `round` rounds half to even, and rounding an integer tensor
returns it unchanged (TF's `round` does so in Python). The gradients are in
`special_math_grad`.
"""

from __future__ import annotations

import math

import numpy as np

from ..base import dtypes as _dt
from ..base.ieee import quiet
from ..core.argument_conversion import as_tensor, check_dtype, same_type
from ..core.dispatch import execute, named
from ..core.registry import register_op
from ..core.shapes import broadcast_shapes
from ..core.specs import TensorSpec
from .nn_ops import erf_of, erfc_of

__all__ = ["floor", "ceil", "round", "rint", "tan", "reciprocal", "erf", "erfc", "lgamma",
           "digamma", "polygamma", "zeta"]

FLOATING = _dt.FLOATING
INEXACT = _dt.INEXACT


def _infer_same(x):
    return TensorSpec(x.shape, x.dtype)


def _on_cupy(xp):
    return xp is not np and hasattr(xp, "cuda")


def _widened(xp, x):
    """x in a dtype the formulas keep their accuracy in: half precision becomes float32."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _unary(api_name, op_name, kernel, dtypes, differentiable=True, doc=""):
    op = register_op(op_name, kernel, _infer_same, dtypes=dtypes, differentiable=differentiable,
                     infer_from_types=True, elementwise=True, doc=doc)

    def api(x, name=None):
        x = as_tensor(x)
        if x.dtype not in dtypes:
            check_dtype(op, x, dtypes)
        out = execute(op, (x,))
        return out if name is None else named(out, name)

    api.__name__ = api.__qualname__ = api_name
    api.__doc__ = f"≈ `tf.math.{api_name}(x)`: {doc}"
    return op, api


# -- rounding ----------------------------------------------------------------------------------

FLOOR, floor = _unary("floor", "Floor", lambda xp, x: xp.floor(x), FLOATING, False,
                      "the largest integer not greater than x (no gradient, as in TF).")
CEIL, ceil = _unary("ceil", "Ceil", lambda xp, x: xp.ceil(x), FLOATING, False,
                    "the smallest integer not less than x (no gradient, as in TF).")
RINT, rint = _unary("rint", "Rint", lambda xp, x: xp.rint(x), FLOATING, False,
                    "the nearest integer, halves to even.")
ROUND = register_op("Round", lambda xp, x: xp.round(x), _infer_same,
                    dtypes=FLOATING | _dt.SIGNED_INTEGER | _dt.COMPLEX, differentiable=False,
                    infer_from_types=True, elementwise=True,
                    doc="Nearest integer, halves to even (banker's rounding).")


def round(x, name=None):  # noqa: A001 - TensorFlow's name
    """≈ `tf.math.round`: the nearest integer, halves rounded to even (0.5 -> 0, 1.5 -> 2,
    -2.5 -> -2). An integer tensor is returned as it is, as TensorFlow does."""
    x = as_tensor(x)
    if x.dtype.is_integer:
        return x
    check_dtype(ROUND, x, ROUND.dtypes)
    out = execute(ROUND, (x,))
    return out if name is None else named(out, name)


# -- tan, reciprocal ---------------------------------------------------------------------------

TAN, tan = _unary("tan", "Tan", lambda xp, x: xp.tan(x), INEXACT, doc="Tangent.")
RECIPROCAL, reciprocal = _unary("reciprocal", "Reciprocal", lambda xp, x: 1 / x, INEXACT,
                                doc="1 / x.")
# TensorFlow declares integer Reciprocal kernels but registers none on CPU: NotFoundError.
RECIPROCAL.no_kernel_dtypes = _dt.SIGNED_INTEGER


# -- erf, erfc ---------------------------------------------------------------------------------

def _erf_kernel(xp, x):
    if _on_cupy(xp):
        from cupyx.scipy import special  # noqa: PLC0415 - GPU only

        return special.erf(x).astype(x.dtype, copy=False)
    return erf_of(xp, _widened(xp, x)).astype(x.dtype, copy=False)


def _erfc_kernel(xp, x):
    if _on_cupy(xp):
        from cupyx.scipy import special  # noqa: PLC0415 - GPU only

        return special.erfc(x).astype(x.dtype, copy=False)
    return erfc_of(xp, _widened(xp, x)).astype(x.dtype, copy=False)


ERF, erf = _unary("erf", "Erf", _erf_kernel, FLOATING, doc="The error function.")
ERFC, erfc = _unary("erfc", "Erfc", _erfc_kernel, FLOATING,
                    doc="The complementary error function 1 - erf(x), accurate in its tail.")


# -- lgamma, digamma ---------------------------------------------------------------------------

def _lgamma_scalar(v):
    try:
        return math.lgamma(v)
    except ValueError:  # the poles 0, -1, -2, ...: TensorFlow gives +inf
        return math.inf


_LGAMMA = np.frompyfunc(_lgamma_scalar, 1, 1)


def lgamma_poles(xp, x, out):
    """`out`, an lgamma of `x`, with TensorFlow's +inf at the poles (0 and the negative
    integers) and at both infinities, whatever the backend's function gives there (CUDA's
    `lgamma`, and so CuPy's `gammaln`, is -inf at -inf, as SciPy's)."""
    pole = (x <= 0) & (x == xp.floor(x))  # (-inf included)
    return xp.where(pole | (x == np.inf), np.inf, out)


def _lgamma_kernel(xp, x):
    if _on_cupy(xp):
        from cupyx.scipy import special  # noqa: PLC0415 - GPU only

        # In float64 whatever the dtype, rounded once, as on the CPU: CUDA's lgammaf is
        # documented within 6 ulps only outside (-10.001, -2.264), its lgamma within 4.
        wide = x.astype(np.float64, copy=False)
        return lgamma_poles(xp, wide, special.gammaln(wide)).astype(x.dtype, copy=False)
    flat = np.asarray(x, np.float64)
    out = _LGAMMA(flat) if flat.size else flat
    with quiet():  # float32/float16 overflow to inf is the IEEE result
        return np.asarray(out, np.float64).astype(x.dtype)


# Bernoulli numbers B_2k / (2k) for the digamma asymptotic series.
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def digamma_of(xp, x):
    """psi(x) in float64: reflection for x < 0.5 (psi(x) = psi(1 - x) - pi / tan(pi x)), the
    recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series. NaN at 0
    and the negative integers, as TensorFlow."""
    x = xp.asarray(x, np.float64)
    with quiet():
        reflect = x < 0.5
        pole = reflect & (x == xp.floor(x))
        y = xp.where(reflect, 1 - x, x)
        # pi / tan(pi x) with the argument reduced first: tan(pi x) for huge x is meaningless.
        # (tan has period pi, so x - rint(x) in [-0.5, 0.5] keeps the digits near integers).
        frac = x - xp.rint(x)
        cot = xp.where(reflect, math.pi / xp.tan(math.pi * frac), 0.0)
        shift = xp.zeros_like(y)
        for _ in range(10):  # y < 10 at most ten steps away (y >= 0.5 here)
            small = y < 10
            shift = shift - xp.where(small, 1 / xp.where(small, y, 1), 0)
            y = xp.where(small, y + 1, y)
        inv2 = 1 / (y * y)
        series = xp.zeros_like(y)
        for c in reversed(_DIGAMMA_SERIES):
            series = (series + c) * inv2
        psi = xp.log(y) - 0.5 / y - series + shift
        psi = xp.where(reflect, psi - cot, psi)
        psi = xp.where(pole, np.nan, psi)
        return xp.where(x == np.inf, np.inf, psi)


def _digamma_kernel(xp, x):
    if _on_cupy(xp):
        from cupyx.scipy import special  # noqa: PLC0415 - GPU only

        out = special.digamma(x)
        return xp.where((x <= 0) & (x == xp.floor(x)), np.nan, out).astype(x.dtype, copy=False)
    return digamma_of(xp, x).astype(x.dtype)


LGAMMA, lgamma = _unary("lgamma", "Lgamma", _lgamma_kernel, FLOATING,
                        doc="log |Gamma(x)| (+inf at 0 and the negative integers).")
DIGAMMA, digamma = _unary("digamma", "Digamma", _digamma_kernel, FLOATING,
                          doc="psi(x), the derivative of lgamma (NaN at the poles).")


# -- zeta, polygamma ---------------------------------------------------------------------------

# (2k)! / B_2k for Euler-Maclaurin's correction terms (Cephes' table).
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def zeta_of(xp, s, q):
    """The Hurwitz zeta function sum_k (q + k)^-s (s > 1), in float64, by Euler-Maclaurin
    summation (the algorithm of Cephes' `zeta`): the first terms summed until q + k > 9, the
    rest by the integral and Bernoulli corrections. NaN for s < 1, inf at s = 1 and at q a
    non-positive integer; NaN for other q <= 0 unless s is an integer."""
    s, q = xp.broadcast_arrays(xp.asarray(s, np.float64), xp.asarray(q, np.float64))
    with quiet():
        bad = (s < 1) | ((q <= 0) & (s != xp.floor(s)))
        pole = (s == 1) | ((q <= 0) & (q == xp.floor(q)))
        # Sum terms until q + k > 9 (at least nine of them); far negative q needs more.
        steps = int(max(9, math.ceil(9 - float(xp.min(xp.where(bad | pole, 0, q)))))) if q.size \
            else 0
        a = q.copy()
        total = xp.where(bad | pole, 0.0, xp.power(xp.abs(a), -s) * xp.where(
            (a < 0) & (xp.fmod(s, 2) == 1), -1.0, 1.0))
        for _ in range(steps):
            a = a + 1
            term = xp.power(xp.abs(a), -s) * xp.where((a < 0) & (xp.fmod(s, 2) == 1), -1.0, 1.0)
            total = total + xp.where(a == 0, 0.0, term)
        w = a
        total = total + w * xp.power(w, -s) / (s - 1) - 0.5 * xp.power(w, -s)
        fac = xp.ones_like(s)
        k = xp.zeros_like(s)
        b = xp.power(w, -s)
        for coef in _ZETA_A:
            fac = fac * (s + k)
            b = b / w
            total = total + fac * b / coef
            k = k + 1
            fac = fac * (s + k)
            b = b / w
            k = k + 1
        total = xp.where(pole, np.inf, total)
        return xp.where(bad | xp.isnan(s) | xp.isnan(q), np.nan, total)


def _zeta_infer(x, q):
    return TensorSpec(broadcast_shapes("Zeta", x.shape, q.shape), x.dtype)


def _zeta_kernel(xp, x, q):
    if _on_cupy(xp):
        from cupyx.scipy import special  # noqa: PLC0415 - GPU only

        return special.zeta(x, q).astype(x.dtype, copy=False)
    return zeta_of(xp, x, q).astype(x.dtype)


def _polygamma_kernel(xp, a, x):
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1, digamma for n = 0; NaN for a
    non-integer or negative order, as TensorFlow."""
    if _on_cupy(xp):
        from cupyx.scipy import special  # noqa: PLC0415 - GPU only

        return special.polygamma(a, x).astype(x.dtype, copy=False)
    dtype = x.dtype
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    with quiet():
        order_ok = (a >= 0) & (a == np.floor(a))
        n = np.where(order_ok, a, 1)
        sign = np.where(np.fmod(n, 2) == 0, -1.0, 1.0)
        fact = np.exp(np.asarray(_LGAMMA(n + 1) if n.size else n, np.float64))
        out = np.where(n == 0, digamma_of(np, x), sign * fact * zeta_of(np, n + 1, x))
        return np.where(order_ok, out, np.nan).astype(dtype)


_ZETA_DTYPES = frozenset({_dt.float32, _dt.float64})  # TensorFlow's Zeta and Polygamma


def _binary(api_name, op_name, kernel, doc):
    def infer(x, y):
        return TensorSpec(broadcast_shapes(op_name, x.shape, y.shape), x.dtype)

    op = register_op(op_name, kernel, infer, dtypes=_ZETA_DTYPES, infer_from_types=True,
                     elementwise=True, doc=doc)

    def api(x, y, name=None):
        x, y = same_type(op, x, y)
        check_dtype(op, x, _ZETA_DTYPES)
        out = execute(op, (x, y))
        return out if name is None else named(out, name)

    api.__name__ = api.__qualname__ = api_name
    return op, api


ZETA, zeta = _binary("zeta", "Zeta", _zeta_kernel, "The Hurwitz zeta function sum_k (q + k)^-x.")
zeta.__doc__ = "≈ `tf.math.zeta(x, q)`: the Hurwitz zeta function, sum over k >= 0 of (q + k)^-x."
POLYGAMMA, polygamma = _binary("polygamma", "Polygamma", _polygamma_kernel,
                               "The n-th derivative of digamma.")
polygamma.__doc__ = ("≈ `tf.math.polygamma(a, x)`: the a-th derivative of digamma at x (a a "
                     "non-negative integer value; NaN otherwise).")
