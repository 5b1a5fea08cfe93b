"""`target[flat[i]] += rows[i]` with repeated indices accumulating, on numpy or CuPy: the one
scatter-add behind `ResourceScatterAdd`, the sparse optimizer updates, `UnsortedSegmentSum` and
`ScatterNd`; `scatter_reduce`, its maximum/minimum/multiply form behind the other segment
reductions and `TensorScatterMax/Min`; and `scatter_update`, the plain write behind
`TensorScatterUpdate`, where of repeated indices the last row wins on every backend.

numpy's `add.at` takes every dtype. CuPy's `add.at` is an atomicAdd kernel, and CUDA has
atomics only for some dtypes (32/64-bit integers, float16/32/64), so the others go through one
that has them, with TensorFlow's results:

- complex: the real and imaginary parts are added as a trailing pair of floats, a view of the
  same memory, so the sum is the complex sum;
- 8- and 16-bit integers: added in 32 bits and cast back, which wraps exactly as adding in
  the narrow type would (two's complement sums agree modulo 2**bits);
- bool (`scatter_nd`): counted in 32 bits, true where anything true was added (a logical or).

On a GPU the order in which repeated indices are added is not fixed (atomics), so float sums
over repeated indices can differ in the last bit between runs, as in TensorFlow's GPU kernels.

A sum past the dtype's range is inf, silently, as in TensorFlow: numpy's floating-point signal
(`eager.base.ieee`) arrives after every row was added, so the update stands, whole, and callers
that update state in place are never left half applied.

CuPy's `maximum.at`/`minimum.at` are no better: they take only 32/64-bit integers and
float32/64, and their float atomics are CAS loops around `fmaxf`/`fminf`, which ignore a NaN
and round a float64 through float32 (so a segment's max would not equal any of its rows, and
the gradient, which looks for the rows equal to the max, would find none). So on a GPU only the
32/64-bit integers use them as they are: narrower integers are widened (the order, and each
value, survive), and floats are reduced as integer keys ordered as the floats are (`_keys`), with
a NaN given the key that wins, so the result is numpy's `ufunc.at`'s bit for bit (a NaN wins),
but for which NaN, and for a tie of -0 with +0, where a maximum keeps +0 and a minimum -0.

A fancy assignment `target[flat] = rows` with repeated indices keeps the last row on numpy but
any of them on a GPU (unordered writes); `scatter_update` finds each index's last row first (an
integer `maximum.at` of the row numbers), so the written positions are distinct.
"""

from __future__ import annotations

import numpy as np

from ..base.ieee import FP_SIGNALS

__all__ = ["scatter_add", "scatter_reduce", "scatter_update"]

#: dtypes CuPy's `add.at` adds natively.
_CUPY_ATOMIC = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64,
                                               np.float16, np.float32, np.float64))
#: dtypes CuPy's `maximum.at`/`minimum.at` reduce exactly (its float ones do not: module doc).
_CUPY_ORDERED = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64))
#: Narrow integers, added (or compared) in the 32-bit type of the same signedness.
_WIDER = {np.dtype(t): np.dtype(w) for t, w in ((np.int8, np.int32), (np.int16, np.int32),
                                                (np.uint8, np.uint32), (np.uint16, np.uint32))}


def scatter_add(xp, target, flat, rows):
    """Adds `rows[i]` into `target[flat[i]]` in place; `flat` is 1-D, `rows` has shape
    `flat.shape + target.shape[1:]`. Indices are assumed checked."""
    if xp is np:
        try:
            np.add.at(target, flat, rows)
        except FP_SIGNALS:  # after adding every row: `target` holds the IEEE sums
            pass
        return
    dtype = target.dtype
    if dtype in _CUPY_ATOMIC:
        _add_at(xp, target, flat, rows)
    elif dtype.kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        work = target if target.flags.c_contiguous else xp.ascontiguousarray(target)
        updates = xp.ascontiguousarray(rows, dtype=dtype)
        _add_at(xp, work.view(part).reshape(work.shape + (2,)), flat,
                updates.view(part).reshape(updates.shape + (2,)))
        if work is not target:
            target[...] = work
    elif dtype in _WIDER:
        wide = _WIDER[dtype]
        work = target.astype(wide)
        _add_at(xp, work, flat, rows.astype(wide))
        target[...] = work.astype(dtype)
    elif dtype.kind == "b":
        work = target.astype(np.uint32)
        _add_at(xp, work, flat, rows.astype(np.uint32))
        target[...] = work != 0
    else:  # no such dtype is registered for these ops; CuPy's own error names it
        _add_at(xp, target, flat, rows)


def _add_at(xp, target, flat, rows):
    add_at = getattr(xp.add, "at", None)  # CuPy 13+; `cupyx.scatter_add` is deprecated there
    if add_at is not None:
        add_at(target, flat, rows)
    else:
        import cupyx  # noqa: PLC0415 - GPU only, as above

        cupyx.scatter_add(target, flat, rows)


def scatter_reduce(xp, reducer, target, flat, rows):
    """`target[flat[i]] = reducer(target[flat[i]], rows[i])` for every i, in place; `reducer` is
    "add", "maximum", "minimum" or "multiply" (a NaN wins a maximum or minimum; a product past
    the range is inf, silently, as TensorFlow's).

    numpy's `ufunc.at` does it for every dtype. On a GPU a maximum or minimum is CuPy's atomic
    `ufunc.at` on integers (module doc); CuPy has no atomic multiply, so a product on a GPU is
    reduced on the host and copied back (products over segments are rare enough that this is
    not a hot path)."""
    if reducer == "add":
        scatter_add(xp, target, flat, rows)
        return
    if xp is np:
        with np.errstate(all="ignore"):
            getattr(np, reducer).at(target, flat, rows)
        return
    if reducer != "multiply":
        _extremum_at(xp, reducer, target, flat, rows)
        return
    host = xp.asnumpy(target)
    with np.errstate(all="ignore"):
        np.multiply.at(host, xp.asnumpy(flat), xp.asnumpy(rows))
    target[...] = xp.asarray(host)


def _extremum_at(xp, reducer, target, flat, rows):
    """CuPy's `maximum.at`/`minimum.at` on a dtype it reduces exactly (module doc)."""
    at = getattr(xp, reducer).at
    dtype = target.dtype
    if dtype in _CUPY_ORDERED:
        at(target, flat, rows)
    elif dtype in _WIDER:
        work = target.astype(_WIDER[dtype])
        at(work, flat, rows.astype(work.dtype))
        target[...] = work.astype(dtype)
    elif dtype.kind == "f":
        work = _keys(xp, target, reducer)
        at(work, flat, _keys(xp, rows.astype(dtype, copy=False), reducer))
        target[...] = _floats(xp, work, dtype)
    else:  # no such dtype is registered for these ops; CuPy's own error names it
        at(target, flat, rows)


def _keys(xp, x, reducer):
    """Integers ordered as the floats `x` are (-0 just below +0), in a dtype CuPy's atomics
    take: the bits, as a signed integer, with all but the sign flipped where the sign is set
    (so a larger magnitude is a smaller key). A NaN gets the key that wins `reducer`."""
    bits = np.dtype(f"i{x.dtype.itemsize}")
    flip = bits.type(np.iinfo(bits).max)  # every bit but the sign
    raw = x.view(bits)
    keys = xp.where(raw < 0, raw ^ flip, raw)
    nan_key = np.iinfo(bits).max if reducer == "maximum" else np.iinfo(bits).min
    keys = xp.where(xp.isnan(x), bits.type(nan_key), keys)
    return keys.astype(_WIDER.get(bits, bits), copy=False)


def _floats(xp, keys, dtype):
    """The floats of `_keys` (a NaN's key gives a NaN)."""
    bits = np.dtype(f"i{dtype.itemsize}")
    keys = keys.astype(bits, copy=False)
    flip = bits.type(np.iinfo(bits).max)
    return xp.where(keys < 0, keys ^ flip, keys).view(dtype)


def scatter_update(xp, target, flat, rows):
    """`target[flat[i]] = rows[i]` in place, the last `i` winning for a repeated index (numpy's
    order, TensorFlow's CPU kernel's) on every backend: see the module doc."""
    if xp is np:
        target[flat] = rows
        return
    last = xp.full(target.shape[0], -1, np.int64)
    xp.maximum.at(last, flat, xp.arange(flat.shape[0], dtype=np.int64))
    written = last >= 0
    target[written] = rows[last[written]]
