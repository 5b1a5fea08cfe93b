"""`eager.pad` (≈ `tf.pad`): the PadV2 and MirrorPad ops, re-exported by array_ops."""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..core.specs import TensorSpec
from ..core.argument_conversion import as_tensor, check_dtype, same_type
from ..core.dispatch import execute
from ..core.registry import get_op, op_error, register_op
from ..core.shapes import UnknownDimensionError, known_elements, static_array
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import Tensor
from .shape_arguments import SHAPE_DTYPES, shape_argument
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


def _paddings_tensor(value):
    """Paddings known only when a traced function runs, as one [n, 2] integer tensor (a nested
    list holding symbolic scalars is stacked, as TensorFlow packs it)."""
    if isinstance(value, Tensor):
        return value
    rows = [shape_argument("Pad", list(row), "paddings")[1] if _holds_tensor(row)
            else convert_to_tensor(np.asarray(row, np.int32)) for row in value]
    dtype = _dt.int64 if any(r.dtype == _dt.int64 for r in rows) else _dt.int32
    rows = [r if r.dtype == dtype else execute(get_op("Cast"), (r,), {"dtype": dtype})
            for r in rows]
    return execute(get_op("Pack"), tuple(rows), {"axis": 0})


def _holds_tensor(row) -> bool:
    return isinstance(row, (list, tuple)) and any(isinstance(v, Tensor) for v in row)


def _pad_infer(x, *constant, paddings, mode="CONSTANT"):
    op_name = "PadV2" if mode == "CONSTANT" else "MirrorPad"
    if paddings is None:  # PadV2(x, constant, paddings): paddings read when the op runs
        constant, amounts = constant[:-1], constant[-1]
        paddings = _known_paddings(amounts, x.shape.rank)
        if paddings is None:
            return TensorSpec([None] * x.shape.rank if x.shape.rank is not None else None,
                              x.dtype)
    if constant and constant[0].shape.rank not in (0, None):
        raise op_error(op_name, f"constant_values must be a scalar. Shape of constant_values: "
                                f"{_fmt(constant[0].shape)}")
    for a, b in paddings:
        if a is not None and a < 0 or b is not None and b < 0:
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
    return TensorSpec([None if d is None or a is None or b is None else d + a + b
                       for d, (a, b) in zip(x.shape, paddings)], x.dtype)


def _known_paddings(amounts, rank):
    """What inference knows of a paddings tensor read at run time: (before, after) pairs with
    None for amounts known only then; None when not even the pairs' number is known."""
    if amounts.dtype not in SHAPE_DTYPES:
        raise op_error("PadV2", f"paddings must be an int32 or int64 tensor, got "
                                f"{amounts.dtype.name}")
    shape = amounts.shape
    if shape.rank not in (2, None) or shape.rank == 2 and shape[1] not in (2, None):
        raise op_error("PadV2", f"paddings must be a matrix with 2 columns: {_fmt(shape)}")
    known = known_elements(amounts)
    if known is None:
        return None if rank is None else ((None, None),) * rank
    return tuple(zip(known[::2], known[1::2]))


def _pad_kernel(xp, x, *constant, paddings, mode="CONSTANT"):
    if paddings is None:
        constant, amounts = constant[:-1], constant[-1]
        if amounts.ndim != 2 or amounts.dtype.kind not in "iu":
            raise op_error("PadV2", f"paddings must be an integer matrix with 2 columns, got "
                                    f"{amounts.dtype}{list(amounts.shape)}")
        paddings = tuple((a, b) for a, b in amounts.tolist())
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


#: PadV2(x, constant) by the `paddings` attribute, or, with `paddings=None`, PadV2(x, constant,
#: paddings) by amounts read when the op runs (`shape_arguments`).
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
    amounts = None
    try:
        paddings = _paddings(paddings)
    except UnknownDimensionError:
        if mode_upper != "CONSTANT":  # mirrored pads need their amounts when traced
            raise
        amounts = _paddings_tensor(paddings)
    if mode_upper == "CONSTANT":
        if constant_values.__class__ is int and constant_values == 0:
            # TensorFlow's default pads with the dtype's zero (False for bool tensors).
            tensor = as_tensor(tensor)
            if tensor.dtype.is_bool:
                constant_values = False
        x, value = same_type(PAD, tensor, constant_values)
        if amounts is not None:
            return execute(PAD, (x, value, amounts), {"paddings": None})
        return execute(PAD, (x, value), {"paddings": paddings})
    x = as_tensor(tensor)
    check_dtype(MIRROR_PAD, x, ALL)
    return execute(MIRROR_PAD, (x,), {"paddings": paddings, "mode": mode_upper})
