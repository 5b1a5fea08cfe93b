"""`eager.pad` (≈ `tf.pad`): the PadV2 and MirrorPad ops, re-exported by array_ops."""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..core.specs import TensorSpec
from ..core.argument_conversion import as_tensor, check_dtype, same_type
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.shapes import static_array
from .slicing_ops import fmt_dims as _fmt

__all__ = ["pad"]

ALL = _dt.ALL


def _spec(array) -> TensorSpec:
    return TensorSpec(array.shape, _dt.BY_NUMPY[array.dtype])


def _paddings(value):
    """`paddings` as a tuple of (before, after) pairs."""
    if hasattr(value, "numpy") and not isinstance(value, (list, tuple)):
        value = static_array("Pad", value, "paddings")
    elif isinstance(value, (list, tuple)):  # rows may hold (symbolic) scalar tensors
        value = [[static_array("Pad", v, "paddings") if hasattr(v, "numpy") else v
                  for v in row] if isinstance(row, (list, tuple)) else row for row in value]
    arr = np.asarray(value)
    if arr.size == 0 and arr.ndim == 2:
        arr = arr.reshape(0, 2) if arr.shape[-1] == 2 else arr
    if arr.dtype.kind not in "iu" and arr.size:  # TF: attr Tpaddings rejects float
        raise op_error("Pad", f"paddings must be integers, got {value!r}")
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise op_error("Pad", f"paddings must be a matrix with 2 columns: {_fmt(arr.shape)}")
    return tuple((int(a), int(b)) for a, b in arr)


def _pad_infer(x, *constant, paddings, mode="CONSTANT"):
    op_name = "PadV2" if mode == "CONSTANT" else "MirrorPad"
    if constant and constant[0].shape.rank not in (0, None):
        raise op_error(op_name, f"constant_values must be a scalar. Shape of constant_values: "
                                f"{_fmt(constant[0].shape)}")
    for a, b in paddings:
        if a < 0 or b < 0:
            raise op_error(op_name, f"Paddings must be non-negative: {a} {b}")
    rank = x.shape.rank
    if rank is None:
        return TensorSpec([None] * len(paddings), x.dtype)
    if len(paddings) != rank:
        raise op_error(op_name, f"The first dimension of paddings must be the rank of inputs: "
                                f"paddings {_fmt((len(paddings), 2))}, input {_fmt(x.shape)}")
    for d, (a, b) in zip(x.shape, paddings):
        if d is None or mode == "CONSTANT":
            continue
        if mode == "REFLECT" and (a >= d or b >= d):
            raise op_error(op_name, f"paddings must be less than the dimension size: {a}, {b} "
                                    f"not less than {d}")
        if mode == "SYMMETRIC" and (a > d or b > d):
            raise op_error(op_name, f"paddings must be no greater than the dimension size: {a}, "
                                    f"{b} greater than {d}")
    return TensorSpec([None if d is None else d + a + b for d, (a, b) in zip(x.shape, paddings)],
                      x.dtype)


def _pad_kernel(xp, x, *constant, paddings, mode="CONSTANT"):
    _pad_infer(_spec(x), *map(_spec, constant), paddings=paddings, mode=mode)  # numpy's pad is
    if not paddings:                                                            # more lenient
        return xp.asarray(x).copy()
    if mode == "CONSTANT":
        # A filled buffer and one slice assignment: several times faster than xp.pad (which
        # dominated the gradient of every slice).
        x = xp.asarray(x)
        out = xp.full(tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, paddings)), constant[0],
                      dtype=x.dtype)
        out[tuple(slice(lo, lo + d) for d, (lo, _) in zip(x.shape, paddings))] = x
        return out
    return xp.pad(x, paddings, mode=mode.lower())


PAD = register_op("PadV2", _pad_kernel, _pad_infer, dtypes=ALL)
MIRROR_PAD = register_op("MirrorPad", _pad_kernel, _pad_infer, dtypes=ALL)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """≈ `tf.pad`: adds `paddings[i][0]` elements before and `paddings[i][1]` after dimension i.
    `mode` is "CONSTANT" (filled with `constant_values`), "REFLECT" (mirrored without the edge)
    or "SYMMETRIC" (mirrored with the edge), in any case; `constant_values` is ignored by the
    mirror modes, as in TensorFlow."""
    mode_upper = mode.upper() if isinstance(mode, str) else mode
    if mode_upper not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError('Value of argument `mode` expected to be one of "CONSTANT", '
                         f'"REFLECT", or "SYMMETRIC". Received `mode` = {mode}')
    paddings = _paddings(paddings)
    if mode_upper == "CONSTANT":
        if constant_values.__class__ is int and constant_values == 0:
            # TensorFlow's default pads with the dtype's zero (False for bool tensors).
            tensor = as_tensor(tensor)
            if tensor.dtype.is_bool:
                constant_values = False
        x, value = same_type(PAD, tensor, constant_values)
        return execute(PAD, (x, value), {"paddings": paddings})
    x = as_tensor(tensor)
    check_dtype(MIRROR_PAD, x, ALL)
    return execute(MIRROR_PAD, (x,), {"paddings": paddings, "mode": mode_upper})
