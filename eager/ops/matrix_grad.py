"""Gradients of the diagonal and band ops (`matrix_ops`): each is another of them.

    diag_part(x, k)' dy    = diag(dy, k) in x's shape
    diag(d, k)' dy         = diag_part(dy, k)
    set_diag(x, d, k)' dy  = (set_diag(dy, 0, k), diag_part(dy, k))
    band_part(x, l, u)' dy = band_part(dy, l, u)
"""

from __future__ import annotations

from ..core.dispatch import execute
from .creation_ops import zeros_like
from .matrix_ops import (MATRIX_BAND_PART, MATRIX_DIAG, MATRIX_DIAG_PART, MATRIX_SET_DIAG,
                         diag_part)


@MATRIX_DIAG_PART.def_gradient
def _diag_part_grad(forward, dy):
    rows, cols = forward.input_shapes[0][-2:]
    return execute(MATRIX_DIAG, (dy,), {"k": forward.attrs["k"], "num_rows": rows,
                                        "num_cols": cols, "padding_value": 0})


@MATRIX_DIAG.def_gradient
def _diag_grad(forward, dy):
    return diag_part(dy, k=forward.attrs["k"])


@MATRIX_SET_DIAG.def_gradient
def _set_diag_grad(forward, dy):
    k = forward.attrs["k"]
    along = diag_part(dy, k=k)
    return execute(MATRIX_SET_DIAG, (dy, zeros_like(along)), {"k": k}), along


@MATRIX_BAND_PART.def_gradient
def _band_part_grad(forward, dy):
    return execute(MATRIX_BAND_PART, (dy,), dict(forward.attrs))
