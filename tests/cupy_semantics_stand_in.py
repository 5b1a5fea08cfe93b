"""A numpy stand-in for the CuPy module as a kernel sees it (`xp`), where CuPy's results or
refusals differ from numpy's in ways the op kernels must not depend on:

- `ufunc.at` takes only the dtypes CuPy's atomics do (`add`: 32/64-bit integers and
  float16/32/64; `maximum`/`minimum`: 32/64-bit integers and float32/64; no other ufunc has
  one), and a float `maximum.at`/`minimum.at` is CuPy's CAS loop around `fmaxf`/`fminf`: a NaN
  loses, and each float64 write is rounded through float32;
- `ufunc.accumulate` exists only for `add` and `multiply` (CuPy's `cumsum`/`cumprod`);
- a fancy assignment `a[idx] = v` with a repeated index keeps the FIRST write where numpy keeps
  the last (the GPU's order is unspecified, so either is legal there);
- arrays are `GpuArray`s, so `xp is np` is false and `xp.asnumpy` is the way back to the host.

`XP` is the module object; `on_host(a)` turns a result back into a plain numpy array.
"""

from __future__ import annotations

import numpy as np

#: The dtypes each CuPy `ufunc.at` takes (`cupy/_core/_routines_indexing.pyx`).
AT_DTYPES = {
    "add": frozenset(np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64,
                                           np.float16, np.float32, np.float64)),
    "maximum": frozenset(np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64,
                                               np.float32, np.float64)),
}
AT_DTYPES["minimum"] = AT_DTYPES["maximum"]


class GpuArray(np.ndarray):
    """A numpy array whose fancy assignment keeps the first of repeated writes."""

    def __setitem__(self, key, value):
        if not _fancy(key):
            super().__setitem__(key, value)
            return
        base = self.view(np.ndarray)
        positions = np.arange(base.size).reshape(base.shape)[_plain(key)]
        values = np.broadcast_to(np.asarray(value).astype(base.dtype), positions.shape)
        # np.put writes in order, the last of repeated positions winning: reversed, the first
        np.put(base, positions.reshape(-1)[::-1], values.reshape(-1)[::-1])


def _fancy(key):
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, (np.ndarray, list)) and np.asarray(k).dtype.kind in "iu"
               for k in keys)


def _plain(value):
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value.view(np.ndarray) if isinstance(value, np.ndarray) else value


def _wrap(value):
    if isinstance(value, np.ndarray) and not isinstance(value, GpuArray):
        return value.view(GpuArray)
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    return value


def on_host(value):
    """A result as a plain numpy array (what `cupy.asnumpy` gives)."""
    return np.array(value.view(np.ndarray) if isinstance(value, np.ndarray) else value)


class _Ufunc:
    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        return _wrap(self._ufunc(*args, **kwargs))

    def __getattr__(self, name):
        return getattr(self._ufunc, name)

    def at(self, a, indices, b=None):
        name = self._ufunc.__name__
        if name not in AT_DTYPES:
            raise NotImplementedError(f"`cupy_{name}.at` is not supported yet")
        if a.dtype not in AT_DTYPES[name]:
            raise TypeError(f"cupy.{name}.at only supports "
                            f"{sorted(str(d) for d in AT_DTYPES[name])} as data type")
        target = a.view(np.ndarray)
        indices = _plain(indices)
        values = np.asarray(b).astype(a.dtype)
        if name == "add" or a.dtype.kind != "f":
            self._ufunc.at(target, indices, values)
            return
        # CuPy's float atomicMax/Min: fmaxf/fminf (a NaN loses), in float32 for a float64
        narrow = np.float32
        touched = np.zeros(target.shape, bool)
        touched[indices] = True
        work = target.astype(narrow)
        (np.fmax if name == "maximum" else np.fmin).at(work, indices, values.astype(narrow))
        target[touched] = work[touched].astype(a.dtype)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        if self._ufunc.__name__ not in ("add", "multiply"):
            raise NotImplementedError(
                f"`cupy_{self._ufunc.__name__}.accumulate` is not supported yet")
        return _wrap(self._ufunc.accumulate(array, axis=axis, dtype=dtype, out=out))


class _CupyLike:
    """The module: numpy's functions, returning `GpuArray`s, and CuPy's ufunc limits."""

    __name__ = "cupy_semantics_stand_in"

    def __getattr__(self, name):
        value = getattr(np, name)
        if isinstance(value, np.ufunc):
            return _Ufunc(value)
        if callable(value) and not isinstance(value, type):
            return lambda *args, **kwargs: _wrap(value(*args, **kwargs))
        return value

    @staticmethod
    def asnumpy(value):
        return on_host(value)

    @staticmethod
    def asarray(value, dtype=None):
        return _wrap(np.array(_plain(value), dtype=dtype))


XP = _CupyLike()


def device_array(value, dtype=None):
    """`value` as an array of the stand-in (an input a kernel receives)."""
    return XP.asarray(np.asarray(value, dtype=dtype))
