"""Gradients of the special functions (`special_math_ops`), a table of derivatives:

    tan' = 1 + tan^2            reciprocal' = -y^2            erf' = 2/sqrt(pi) exp(-x^2)
    erfc' = -erf'               lgamma' = digamma             digamma' = polygamma(1, .)
    polygamma(n, .)' = polygamma(n + 1, .)                   zeta(s, q) d/dq = -s zeta(s + 1, q)

Complex inputs follow TensorFlow's convention (the conjugate of the derivative). The orders
(polygamma's n, zeta's s) get no gradient, as in TensorFlow. Floor, ceil, round and rint have
none at all (their records say so).
"""

from __future__ import annotations

import math

from . import math_ops as m
from . import special_math_ops as sp
from .grad_utils import grad_conj, unbroadcast

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


@sp.TAN.def_gradient(keep_outputs=True)
def _tan_grad(forward, dy):
    (y,) = forward.outputs
    y = grad_conj(y)
    return dy * (1 + y * y)


@sp.RECIPROCAL.def_gradient(keep_outputs=True)
def _reciprocal_grad(forward, dy):
    (y,) = forward.outputs
    y = grad_conj(y)
    return -dy * y * y


@sp.ERF.def_gradient(keep_inputs=True)
def _erf_grad(forward, dy):
    (x,) = forward.inputs
    return dy * (_TWO_OVER_SQRT_PI * m.exp(-m.square(x)))


@sp.ERFC.def_gradient(keep_inputs=True)
def _erfc_grad(forward, dy):
    (x,) = forward.inputs
    return dy * (-_TWO_OVER_SQRT_PI * m.exp(-m.square(x)))


@sp.LGAMMA.def_gradient(keep_inputs=True)
def _lgamma_grad(forward, dy):
    (x,) = forward.inputs
    return dy * sp.digamma(x)


@sp.DIGAMMA.def_gradient(keep_inputs=True)
def _digamma_grad(forward, dy):
    (x,) = forward.inputs
    return dy * sp.polygamma(m.cast(1, x.dtype), x)


@sp.POLYGAMMA.def_gradient(keep_inputs=True)
def _polygamma_grad(forward, dy):
    n, x = forward.inputs
    sn, sx = forward.input_shapes
    return None, unbroadcast(dy * sp.polygamma(n + 1, x), sx, (sn,))


@sp.ZETA.def_gradient(keep_inputs=True)
def _zeta_grad(forward, dy):
    s, q = forward.inputs
    ss, sq = forward.input_shapes
    return None, unbroadcast(dy * (-s * sp.zeta(s + 1, q)), sq, (ss,))
