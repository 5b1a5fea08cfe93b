"""Sorting: `eager.sort`, `eager.argsort` and `eager.math.top_k`.

TensorFlow builds `sort`/`argsort` from `top_k` (transposing the axis last and negating values
for ascending order). Here one stable sort kernel serves all three, which gives the same results
(ties keep their original order in both directions, as TensorFlow's tie-breaking by lower index
does) without the negation tricks TensorFlow needs for unsigned and minimum integers.

NaN: TensorFlow's eager TopK orders NaN inconsistently (it depends on where the NaN is); XLA
treats NaN as larger than every number. We always follow that rule: NaNs (of either sign) come
first in `top_k` and descending sorts, last in ascending sorts, in their original order.
"""

from __future__ import annotations

import collections

import numpy as np

from ..base import dtypes as _dt
from ..core.specs import TensorSpec
from ..core.argument_conversion import as_tensor, check_dtype
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.shapes import static_int

__all__ = ["sort", "argsort", "top_k"]

REAL = _dt.REAL
_INDEX_TYPES = (_dt.int16, _dt.int32, _dt.int64)

#: ≈ TensorFlow's result type of `tf.math.top_k` (a namedtuple named after the op).
TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _sort_keys(xp, x):
    """`x` with every NaN replaced by the positive quiet NaN, so that NaNs of either sign sort
    as the largest value on every backend. numpy orders NaNs last whatever their sign bit, but
    CuPy's GPU sort orders floats by their bits, which puts a NaN with the sign bit set (the
    "default NaN" x86 produces for 0 * inf, or -nan) before -inf. Only the keys change: the
    sorted values are taken from `x`, so a NaN keeps its own bits."""
    if x.dtype.kind != "f":
        return x
    return xp.where(xp.isnan(x), x.dtype.type(np.nan), x)


def _stable_order(xp, x, axis, descending):
    """Indices that sort `x` along `axis` stably; NaN (of either sign) counts as the largest
    value.

    Descending: stable-sort the reversed axis ascending and reverse the result, so equal
    elements keep their original order (lower index first) and NaNs come first.
    """
    x = _sort_keys(xp, x)
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    flipped = xp.flip(x, axis=axis)
    order = xp.argsort(flipped, axis=axis, kind="stable")
    return (n - 1) - xp.flip(order, axis=axis)


def _take(xp, x, order, axis):
    return xp.take_along_axis(x, order, axis=axis)


# -----------------------------------------------------------------------------------------------
# Sort: one op for sort and argsort (values and int32 indices along `axis`)
# -----------------------------------------------------------------------------------------------

def _sort_infer(x, axis, descending):
    rank = x.shape.rank
    if rank == 0 or (rank is not None and not 0 <= axis < rank):
        raise op_error("Sort", f"axis {axis} is out of bounds for an input of rank {rank} "
                               "(sort needs at least 1 dimension)")
    return TensorSpec(x.shape, x.dtype), TensorSpec(x.shape, _dt.int32)


def _sort_kernel(xp, x, axis, descending):
    order = _stable_order(xp, x, axis, descending)
    return _take(xp, x, order, axis), order.astype(_dt.int32.dtype, copy=False)


SORT = register_op("Sort", _sort_kernel, _sort_infer, num_outputs=2, dtypes=REAL,
                   doc="Stable sort along an axis: (sorted values, int32 indices).")


def _input(api, values):
    """as_tensor, with the op's name in a conversion error."""
    try:
        return as_tensor(values)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{api}: {exc}") from None


def _direction(api, direction):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"{api}: argument `direction` should be one of ASCENDING, DESCENDING. "
                         f"Received: direction={direction}")
    return direction == "DESCENDING"


def _sort_args(api, values, axis, direction):
    descending = _direction(api, direction)
    if getattr(axis, "is_symbolic", False) or getattr(getattr(axis, "shape", ()), "rank",
                                                      0) not in (0, None):
        raise ValueError(f"{api}: argument `axis` must be a constant scalar. Received: "
                         f"axis={axis!r}.")
    try:
        axis = static_int("Sort", axis, "axis")
    except TypeError:
        raise ValueError(f"{api}: argument `axis` must be a constant scalar. Received: "
                         f"axis={axis!r}.") from None
    x = _input(api, values)
    check_dtype(SORT, x, REAL)
    rank = x.shape.rank
    if rank is not None:
        if rank == 0:
            raise op_error("Sort", f"{api} needs a tensor of rank >= 1, got a scalar", [x])
        if not -rank <= axis < rank:
            raise op_error("Sort", f"axis {axis} is out of bounds for an input of rank "
                                   f"{rank}", [x])
        axis %= rank
    elif axis < 0:
        raise NotImplementedError(f"{api}: a negative axis needs the input's rank, which is "
                                  "unknown while tracing.")
    return x, {"axis": axis, "descending": descending}


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """≈ `tf.sort`: `values` sorted along `axis` (stable; NaN sorts as the largest value).
    Real dtypes only (InvalidArgumentError otherwise); `axis` must be a constant int."""
    x, attrs = _sort_args("sort", values, axis, direction)
    return execute(SORT, (x,), attrs)[0]


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """≈ `tf.argsort`: int32 indices that sort `values` along `axis`. The sort is always stable
    (TensorFlow's is too, despite `stable=False`); ties keep their original order."""
    x, attrs = _sort_args("argsort", values, axis, direction)
    return execute(SORT, (x,), attrs)[1]


# -----------------------------------------------------------------------------------------------
# TopKV2
# -----------------------------------------------------------------------------------------------

def _check_k(k, n, shape):
    if k < 0:
        raise op_error("TopKV2", f"Need k >= 0, got {k}")
    if n is not None and k > n:
        raise op_error("TopKV2", f"input must have at least k columns. Had {n}, needed {k} "
                                 f"(input shape {list(shape)})")


def _top_k_infer(x, k, index_type):
    rank = x.shape.rank
    if rank == 0:
        raise op_error("TopKV2", "input must be >= 1-D, got shape []")
    _check_k(k, x.shape[-1] if rank else None, x.shape)
    if rank is None:
        return TensorSpec(None, x.dtype), TensorSpec(None, index_type)
    shape = list(x.shape[:-1]) + [k]
    return TensorSpec(shape, x.dtype), TensorSpec(shape, index_type)


def _top_k_kernel(xp, x, k, index_type):
    _check_k(k, x.shape[-1], x.shape)  # inference cannot check dims unknown when traced
    order = _stable_order(xp, x, -1, True)[..., :k]
    return _take(xp, x, order, -1), order.astype(index_type.dtype, copy=False)


TOP_K = register_op("TopKV2", _top_k_kernel, _top_k_infer, num_outputs=2, dtypes=REAL,
                    doc="The k largest entries of the last axis and their indices.")


def top_k(input, k=1, sorted=True, index_type=_dt.int32, name=None):  # noqa: A002
    """≈ `tf.math.top_k`: the `k` largest entries along the last axis, largest first, and their
    indices, as a namedtuple `(values, indices)`. Ties go to the lower index (as TensorFlow);
    NaN counts as the largest value (see the module doc). `k` larger than the last dimension,
    negative `k` or a scalar input are InvalidArgumentError. The result is always sorted
    (`sorted=False` allows any order, so sorted order is valid)."""
    x = _input("top_k", input)
    check_dtype(TOP_K, x, REAL)
    if getattr(k, "is_symbolic", False):
        raise NotImplementedError("top_k: k must be known when the function is traced (a "
                                  "Python int or an eager tensor).")
    k = static_int("TopKV2", k, "k")
    index_type = _dt.as_dtype(index_type)
    if index_type not in _INDEX_TYPES:
        raise TypeError(f"TopKV2: index_type must be int16, int32 or int64, got "
                        f"{index_type.name}.")
    _top_k_infer(x, k, index_type)
    values, indices = execute(TOP_K, (x,), {"k": k, "index_type": index_type})
    return TopKV2(values, indices)
