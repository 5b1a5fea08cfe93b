"""A CuPy module for machines without a GPU: numpy underneath, every launch recorded.

`install()` puts it in `sys.modules` as `cupy` (and `cupyx`), so that eager's CUDA backend
(`eager/devices/cuda.py`, the CuPy kernel layer, the compiled programs' device form) runs its
real code on the CPU: one "GPU" whose arrays are `RecordedArray`s (numpy arrays that say they
are CuPy's), whose streams, events and devices are context managers that do nothing but count
how often they are entered, and whose kernel objects (`ElementwiseKernel`, `ReductionKernel`)
evaluate their C sources with numpy (`cupy_stand_in`). Install it only in a fresh process (a
test's subprocess, a benchmark's child): eager caches the CuPy module and its devices.

What it records, per launch as CuPy would issue one: a ufunc call (an operator, `xp.exp(...)`),
a module function that computes (`xp.matmul`, `xp.where`, ...), an array method that computes
(`x.sum()`, `x.astype(other dtype)`, `x.copy()`), a kernel object's call, a `cupy.fuse`d
function's call (one launch, whatever it runs inside). Views (reshape, transpose, basic
indexing) launch nothing, as on CuPy. `LAUNCHES` counts them by kind; `inside_seconds()` is the
host time spent inside them, the stand-in's own wrapping (numpy's error state, results viewed as
device arrays) included, so a benchmark can subtract it and see the caller's own time.
Integer-array indexing and `take` wrap out-of-range indices around, as CuPy's do.
`STREAM_ENTRIES` and `DEVICE_ENTRIES` count how often a stream or a device was made current
(`with stream:`, `with device:`). `HOST_READS` counts the reads of an array's values by the
host (`bool(a)`, `int(a)`, `a.item()`, `a.tolist()`, `a.get()`), each of which makes the host
wait for the GPU on CuPy; `HOST_WRITES` the copies of host values to the device
(`cupy.asarray` of a host array, `a.set(host)`). `install(device_count=2)` shows two devices
(their arrays all live in the one host memory).
"""

from __future__ import annotations

import collections
import contextlib
import importlib.machinery
import re
import sys
import threading
import time
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cupy_stand_in  # noqa: E402 - beside this file

LAUNCHES = collections.Counter()
STREAM_ENTRIES = [0]
DEVICE_ENTRIES = [0]
HOST_READS = [0]
HOST_WRITES = [0]
_state = {"inside": 0.0}
_nesting = threading.local()  # per thread: how deep in launches it is


def reset() -> None:
    LAUNCHES.clear()
    STREAM_ENTRIES[0] = DEVICE_ENTRIES[0] = HOST_READS[0] = HOST_WRITES[0] = 0
    _state["inside"] = 0.0


def launch_count() -> int:
    return sum(LAUNCHES.values())


def inside_seconds() -> float:
    return _state["inside"]


class _Launch:
    """Records one launch, unless it runs inside another (a fused function, a module function
    calling a ufunc): only the outermost counts, as CuPy issues one kernel for it. Inside, numpy
    signals nothing (`errstate(all="ignore")`): CuPy raises and warns on no IEEE condition."""

    __slots__ = ("kind", "start", "quiet")

    def __init__(self, kind):
        self.kind = kind

    def __enter__(self):
        depth = getattr(_nesting, "depth", 0)
        if not depth:
            self.start = time.perf_counter()
            LAUNCHES[self.kind] += 1
            self.quiet = np.errstate(all="ignore")  # a GPU signals no IEEE condition
            self.quiet.__enter__()
        _nesting.depth = depth + 1

    def __exit__(self, *exc):
        _nesting.depth -= 1
        if not _nesting.depth:
            self.quiet.__exit__(*exc)
            _state["inside"] += time.perf_counter() - self.start


def _to_device(result):
    if isinstance(result, np.generic):
        return np.asarray(result).view(RecordedArray)
    if isinstance(result, np.ndarray) and not isinstance(result, RecordedArray):
        return result.view(RecordedArray)
    if isinstance(result, (tuple, list)):  # (`cupy.split` gives a list of device arrays)
        return type(result)(_to_device(r) for r in result)
    return result


def _plain(value):
    if isinstance(value, RecordedArray):
        return value.view(np.ndarray)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def _wrapped_key(key, shape):
    """An integer-array index as CuPy reads it: out-of-range indices wrap around (NumPy raises);
    a key with `None`, `...` or a boolean mask is left to numpy."""
    keys = key if isinstance(key, tuple) else (key,)
    if any(k is None or k is Ellipsis or getattr(k, "dtype", None) == np.bool_ for k in keys):
        return key
    wrapped = tuple(np.mod(k, shape[i]) if isinstance(k, np.ndarray) and k.dtype.kind in "iu"
                    and shape[i] else k for i, k in enumerate(keys))
    return wrapped if isinstance(key, tuple) else wrapped[0]


def _basic_index(key) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice))
               for k in keys)


class _DeviceMemory:
    """`ndarray.data`: a pointer, and the device-to-device copy CuPy's memory offers."""

    def __init__(self, array):
        self._array = array
        self.ptr = array.__array_interface__["data"][0]

    def copy_from_device_async(self, source, nbytes, stream=None):
        np.copyto(self._array.view(np.ndarray).reshape(-1).view(np.uint8)[:nbytes],
                  source._array.view(np.ndarray).reshape(-1).view(np.uint8)[:nbytes])


class RecordedArray(np.ndarray):
    """A numpy array standing for a CuPy array on the recorded GPU."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        with _Launch(f"ufunc {ufunc.__name__}" + ("" if method == "__call__" else f".{method}")):
            if "out" in kwargs:
                kwargs["out"] = _plain(kwargs["out"])
            result = getattr(ufunc, method)(*_plain(inputs), **kwargs)
            return _to_device(result)

    def get(self, stream=None, order="C", out=None):
        HOST_READS[0] += 1
        return np.array(self.view(np.ndarray))

    def __bool__(self):
        HOST_READS[0] += 1
        return bool(self.view(np.ndarray))

    def __int__(self):
        HOST_READS[0] += 1
        return int(self.view(np.ndarray))

    def __float__(self):
        HOST_READS[0] += 1
        return float(self.view(np.ndarray))

    def item(self, *args):
        HOST_READS[0] += 1
        return self.view(np.ndarray).item(*args)

    def tolist(self):
        HOST_READS[0] += 1
        return self.view(np.ndarray).tolist()

    def set(self, array, stream=None):
        HOST_WRITES[0] += 1
        self.view(np.ndarray)[...] = array

    @property
    def data(self):
        return _DeviceMemory(self)

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        if not copy and np.dtype(dtype) == self.dtype:
            return self  # CuPy launches nothing either
        with _Launch("astype"):
            result = self.view(np.ndarray).astype(dtype, order=order, copy=copy)
            return _to_device(result)

    def __getitem__(self, key):
        if _basic_index(key):
            return np.ndarray.__getitem__(self, key)
        with _Launch("take"):
            result = self.view(np.ndarray)[_wrapped_key(_plain(key), self.shape)]
            return _to_device(result)

    def take(self, indices, axis=None, out=None, mode="wrap"):
        with _Launch("take"):
            result = np.take(self.view(np.ndarray), _plain(indices), axis, mode="wrap")
            return _to_device(result)

    def __setitem__(self, key, value):
        with _Launch("setitem"):
            self.view(np.ndarray)[_plain(key)] = _plain(value)


def _computing_method(name):
    base = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        with _Launch(name):
            result = base(self.view(np.ndarray), *_plain(args), **kwargs)
            return _to_device(result)

    method.__name__ = name
    return method


for _name in ("sum", "max", "min", "mean", "prod", "any", "all", "argmax", "argmin", "cumsum",
              "cumprod", "clip", "dot", "repeat", "nonzero", "copy", "fill", "var",
              "std", "sort", "argsort"):
    setattr(RecordedArray, _name, _computing_method(_name))


class _Ufunc:
    """`cupy.exp` and friends: one launch per call (and per `reduce`, `at`, ...)."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        with _Launch(f"ufunc {self.__name__}"):
            if "out" in kwargs:
                kwargs["out"] = _plain(kwargs["out"])
            result = self._ufunc(*_plain(args), **kwargs)
            return _to_device(result)

    def __getattr__(self, name):
        attribute = getattr(self._ufunc, name)
        if not callable(attribute):
            return attribute

        def method(*args, **kwargs):
            with _Launch(f"ufunc {self.__name__}.{name}"):
                result = attribute(*_plain(args), **kwargs)
                return _to_device(result)

        return method


class _KernelObject:
    """A `cupy.ElementwiseKernel` / `ReductionKernel`: the stand-in evaluates its source."""

    def __init__(self, kind, made):
        self._kind, self._made = kind, made
        self.name = made.name

    def __call__(self, *args, **kwargs):
        with _Launch(f"{self._kind} {self.name}"):
            result = self._made(*_plain(args), **kwargs)
            return _to_device(result)


class Stream:
    def __init__(self, null=False, non_blocking=False, ptds=False):
        self.ptr = id(self)

    def __enter__(self):
        STREAM_ENTRIES[0] += 1
        return self

    def __exit__(self, *exc):
        return None

    def use(self):
        return self

    def synchronize(self):
        return None

    def wait_event(self, event):
        return None


class Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.done = True

    def record(self, stream=None):
        return None

    def synchronize(self):
        return None


class Device:
    def __init__(self, device=0):
        self.id = device

    def __enter__(self):
        DEVICE_ENTRIES[0] += 1
        return self

    def __exit__(self, *exc):
        return None

    def use(self):
        return None

    def synchronize(self):
        return None


class _MemoryPool:
    def malloc(self, size):
        raise NotImplementedError("the recorded GPU allocates through numpy")

    def free_all_blocks(self):
        return None

    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0


class RawKernel:
    """`cupy.RawKernel`: CUDA C the stand-in cannot read. A launch checks its argument count
    against the kernel's signature and is recorded; it computes only where eager provides the
    kernel's numpy reference (`_raw_reference`), else nothing (what a benchmark's launch floor
    needs)."""

    def __init__(self, code, name, options=(), backend="nvrtc"):
        self.name = name
        signature = re.search(rf"\b{re.escape(name)}\s*\(([^)]*)\)", code)
        if signature is None:
            raise ValueError(f"RawKernel: no kernel named {name!r} in its source")
        self.arity = len([p for p in signature.group(1).split(",") if p.strip()])
        self.reference = _raw_reference(name)

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        if len(args) != self.arity:
            raise TypeError(f"RawKernel {self.name}: {len(args)} arguments for {self.arity} "
                            f"parameters")
        with _Launch(f"RawKernel {self.name}"):
            if self.reference is not None:
                self.reference(args)


def _raw_reference(name):
    """The numpy computation of eager's raw kernel `name` (a grouped optimizer update: checked
    against its CUDA source compiled for the host in `test_grouped_updates`), or None."""
    if name.startswith("eager_grouped_"):
        from eager.ops.cupy_grouped_updates import GROUPED  # noqa: PLC0415

        return GROUPED[name[len("eager_grouped_"):name.rindex("_")]].reference
    return None


class _RandomState:
    """`cupy.random.RandomState`: takes CuPy's 64-bit seeds (numpy's stops at 2**32 - 1); its
    draws are numpy's, launching as CuPy's would."""

    def __init__(self, seed=None):
        self._state = np.random.RandomState(None if seed is None else int(seed) % 2**32)

    def __getattr__(self, name):
        draw = getattr(self._state, name)

        def launch(*args, dtype=None, **kwargs):  # CuPy's draws take a dtype
            with _Launch(f"random {name}"):
                result = draw(*_plain(args), **kwargs)
                if dtype is not None:
                    result = np.asarray(result).astype(dtype)
                return _to_device(result)

        return launch


def _fuse(*args, kernel_name=None, **kwargs):
    def decorate(fn):
        def fused(*arrays):
            with _Launch("fused kernel"):
                result = fn(*arrays)
                return _to_device(result)
        return fused
    return decorate


# CuPy's gathers wrap out-of-range indices around (NumPy's raise): module functions to match.
_WRAPPING = {
    "take": lambda a, indices, axis=None, out=None, mode="wrap": np.take(
        a, indices, axis, out, mode="wrap"),
    "take_along_axis": lambda a, indices, axis: np.take_along_axis(
        a, np.mod(indices, a.shape[axis]) if a.shape[axis] else indices, axis),
}


def _module(device_count):
    cupy = types.ModuleType("cupy")
    cupy.__spec__ = importlib.machinery.ModuleSpec("cupy", None)
    cupy.__version__ = "recorded (numpy)"
    cupy.ndarray = RecordedArray
    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: device_count,
        getDeviceProperties=lambda i: {"name": b"recorded GPU", "totalGlobalMem": 1 << 34},
        memGetInfo=lambda: (1 << 33, 1 << 34))
    cupy.cuda = types.SimpleNamespace(
        Stream=Stream, Event=Event, Device=Device, runtime=runtime, MemoryPool=_MemoryPool,
        get_elapsed_time=lambda start, end: 0.0, get_current_stream=Stream,
        get_device_id=lambda: 0)
    cupy.get_default_memory_pool = _MemoryPool
    cupy.get_default_pinned_memory_pool = _MemoryPool
    cupy.ElementwiseKernel = lambda *a, **k: _KernelObject(
        "ElementwiseKernel", cupy_stand_in.ElementwiseKernel(*a, **k))
    cupy.ReductionKernel = lambda *a, **k: _KernelObject(
        "ReductionKernel", cupy_stand_in.ReductionKernel(*a, **k))
    cupy.fuse = _fuse
    cupy.RawKernel = RawKernel

    def asarray(a, dtype=None, order=None, **kwargs):  # a device array as it is: no launch
        if isinstance(a, RecordedArray) and (dtype is None or np.dtype(dtype) == a.dtype):
            return a
        if not isinstance(a, RecordedArray):
            HOST_WRITES[0] += 1
        with _Launch("cupy.asarray"):
            result = np.asarray(_plain(a), dtype=dtype, order=order)
        return _to_device(np.array(result, copy=True) if result is a else result)

    cupy.asarray = asarray
    cupy.random = types.SimpleNamespace(RandomState=_RandomState)
    cupy.asnumpy = lambda a, stream=None, order="C", out=None: np.array(_plain(a))
    wrapped = {}

    def attribute(name):  # module-level `cupy.<name>`: numpy's, launching where it computes
        if name in wrapped:
            return wrapped[name]
        value = _WRAPPING.get(name) or getattr(np, name)
        if isinstance(value, np.ufunc):
            value = _Ufunc(value)
        elif callable(value) and not isinstance(value, type):
            numpy_fn = value

            def value(*args, **kwargs):
                with _Launch(f"cupy.{name}"):
                    result = numpy_fn(*_plain(args), **kwargs)
                    return _to_device(result)

            value.__name__ = name
        wrapped[name] = value
        return value

    cupy.__getattr__ = attribute
    cupyx = types.ModuleType("cupyx")
    cupyx.__spec__ = importlib.machinery.ModuleSpec("cupyx", None)
    cupyx.errstate = lambda **kwargs: contextlib.nullcontext()
    cupyx.empty_pinned = lambda shape, dtype=np.float64: np.empty(shape, dtype)
    cupyx.scatter_add = lambda a, indices, values: np.add.at(_plain(a), _plain(indices),
                                                             _plain(values))
    return cupy, cupyx


def install(device_count=1):
    """Makes `import cupy` give the recorded GPUs' module (module doc). Returns it."""
    cupy, cupyx = _module(device_count)
    sys.modules["cupy"] = cupy
    sys.modules["cupyx"] = cupyx
    return cupy
