"""`target[flat[i]] += rows[i]` with repeated indices accumulating, on numpy or CuPy: the one
scatter-add behind `ResourceScatterAdd`, the sparse optimizer updates, `UnsortedSegmentSum` and
`ScatterNd`; and `scatter_reduce`, its maximum/minimum/multiply form behind the other segment
reductions and `TensorScatterMax/Min`.

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
"""

from __future__ import annotations

import numpy as np

from ..base.ieee import FP_SIGNALS

__all__ = ["scatter_add", "scatter_reduce"]

#: dtypes CuPy's `add.at` adds natively.
_CUPY_ATOMIC = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64,
                                               np.float16, np.float32, np.float64))
#: Narrow integers, added in the 32-bit type of the same signedness.
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
        _cupy_add_at(target, flat, rows)
    elif dtype.kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        work = target if target.flags.c_contiguous else xp.ascontiguousarray(target)
        updates = xp.ascontiguousarray(rows, dtype=dtype)
        _cupy_add_at(work.view(part).reshape(work.shape + (2,)), flat,
                     updates.view(part).reshape(updates.shape + (2,)))
        if work is not target:
            target[...] = work
    elif dtype in _WIDER:
        wide = _WIDER[dtype]
        work = target.astype(wide)
        _cupy_add_at(work, flat, rows.astype(wide))
        target[...] = work.astype(dtype)
    elif dtype.kind == "b":
        work = target.astype(np.uint32)
        _cupy_add_at(work, flat, rows.astype(np.uint32))
        target[...] = work != 0
    else:  # no such dtype is registered for these ops; CuPy's own error names it
        _cupy_add_at(target, flat, rows)


def _cupy_add_at(target, flat, rows):
    import cupy  # noqa: PLC0415 - GPU only

    add_at = getattr(cupy.add, "at", None)  # CuPy 13+; `cupyx.scatter_add` is deprecated there
    if add_at is not None:
        add_at(target, flat, rows)
    else:
        import cupyx  # noqa: PLC0415 - GPU only, as above

        cupyx.scatter_add(target, flat, rows)


def scatter_reduce(xp, reducer, target, flat, rows):
    """`target[flat[i]] = reducer(target[flat[i]], rows[i])` for every i, in place; `reducer` is
    "add", "maximum", "minimum" or "multiply" (a NaN wins a maximum or minimum; a product past
    the range is inf, silently, as TensorFlow's).

    numpy's `ufunc.at` does it for every dtype. CuPy has atomic `maximum.at`/`minimum.at` but no
    atomic multiply, so a product on a GPU is reduced on the host and copied back (products over
    segments are rare enough that this is not a hot path)."""
    if reducer == "add":
        scatter_add(xp, target, flat, rows)
        return
    if xp is np:
        with np.errstate(all="ignore"):
            getattr(np, reducer).at(target, flat, rows)
        return
    at = getattr(getattr(xp, reducer), "at", None)
    if at is not None and reducer != "multiply":
        at(target, flat, rows)
        return
    host = xp.asnumpy(target)
    with np.errstate(all="ignore"):
        getattr(np, reducer).at(host, xp.asnumpy(flat), xp.asnumpy(rows))
    target[...] = xp.asarray(host)
