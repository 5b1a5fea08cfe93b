"""`expm` (`eager.linalg.expm`): the matrix exponential by scaling and squaring with Pade
approximants of degree 3..13 chosen by the 1-norm (Higham 2005, the algorithm TF's expm
implements).

It lives with the functions layer because it loops: the number of squarings depends on the
matrix's norm, so they run in a `while_loop`, and a traced function squares as many times as
each call's matrix needs. The rest is ops, so it differentiates through matmul and solve.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..control_flow.api import while_loop
from ..core.argument_conversion import as_tensor, check_dtype
from ..core.registry import OpDef
from ..ops import math_ops as m
from ..ops.creation_ops import eye
from ..ops.linalg_ops import solve
from ..ops.product_ops import matmul
from ..ops.special_math_ops import ceil

__all__ = ["expm"]

_DTYPES = _dt.INEXACT


# -- expm --------------------------------------------------------------------------------------

# Pade coefficients b_k of degree 3, 5, 7, 9, 13 and the 1-norm bounds theta below which each is
# accurate to double precision (Higham 2005, table 2.3).
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
_THETA64 = {3: 1.495585217958292e-2, 5: 2.539398330063230e-1, 7: 9.504178996162932e-1,
            9: 2.097847961257068e0, 13: 5.371920351148152e0}
_THETA32 = {3: 4.258730016922831e-1, 5: 1.880152677804762e0, 13: 3.925724783138660e0}


def _pade(a, degree, identity):
    """(U, V) of the degree's Pade approximant: expm(A) ~ (V - U)^-1 (V + U)."""
    b = _PADE[degree]
    a2 = matmul(a, a)
    if degree == 13:
        a4 = matmul(a2, a2)
        a6 = matmul(a4, a2)
        u = matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
        u = matmul(a, u + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * identity)
        v = matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
        v = v + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * identity
        return u, v
    powers = [identity, a2]
    while len(powers) <= degree // 2:
        powers.append(matmul(powers[-1], a2))
    u = sum(b[2 * k + 1] * powers[k] for k in range(degree // 2 + 1))
    v = sum(b[2 * k] * powers[k] for k in range(degree // 2 + 1))
    return matmul(a, u), v


def expm(input, name=None):  # noqa: A002
    """≈ `tf.linalg.expm`: the matrix exponential of each square matrix (float and complex)."""
    x = as_tensor(input)
    check_dtype(_EXPM, x, _DTYPES)
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ValueError(f"expm: the input must have rank >= 2, got shape {x.shape}.")
    n = x.shape[-1]
    identity = eye(n, dtype=x.dtype)
    norm1 = m.reduce_max(m.reduce_sum(m.abs(x), axis=-2), axis=-1)  # per matrix
    double = x.dtype in (_dt.float64, _dt.complex128)
    thetas = _THETA64 if double else _THETA32
    # One degree for the batch: the smallest whose bound holds for every matrix, else 13 with
    # scaling by 2^-s, s = ceil(log2(max norm / theta_13)).
    top = m.reduce_max(norm1)
    squarings = m.cast(m.maximum(ceil(m.log(m.maximum(m.cast(top, _dt.float64)
                                                         / thetas[13], 1.0)) / np.log(2.0)),
                                 0.0), _dt.int32)
    scaled = x / m.cast(m.pow(m.cast(2.0, _dt.float64), m.cast(squarings, _dt.float64)),
                        x.dtype)
    degree = 13
    top_value = _static_value(top)
    if top_value is not None:
        for d in sorted(thetas):
            if d != 13 and top_value <= thetas[d]:
                degree = d
                break
    u, v = _pade(scaled, degree, identity)
    result = solve(v - u, v + u)
    _, result = while_loop(lambda i, r: m.less(i, squarings),
                           lambda i, r: (i + 1, matmul(r, r)),
                           (m.cast(0, _dt.int32), result))
    return result


_EXPM = OpDef("MatrixExponential", None, None, dtypes=_DTYPES)  # checks arguments only


def _static_value(t):
    """The Python float of an eager scalar, None while tracing (degree 13 then serves all)."""
    if getattr(t, "is_symbolic", False):
        return None
    return float(t.numpy())

