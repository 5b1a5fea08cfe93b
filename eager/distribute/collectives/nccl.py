"""The collective interface on NCCL (CuPy's `cupy.cuda.nccl`): all-reduce, all-gather and
broadcast of device buffers between GPUs, on the CUDA streams eager's GPU devices compute on.

Two constructions, for the two ways GPUs are driven:

- **One process, several local GPUs** (`NCCLCollectives.for_local_devices`, MirroredStrategy
  with `NcclAllReduce`): one communicator per GPU from `NcclCommunicator.initAll`. As a
  process group it has one participant (rank 0, size 1, like the in-process engine); the work
  is across the process's replicas, `all_reduce_replicas`. Every replica's kernel
  (`eager/ops/nccl_ops.py`) hands its buffer to the engine; the last one to arrive issues the
  collective for all of them between `groupStart()` and `groupEnd()` (one thread calling
  several communicators must group them, or NCCL deadlocks), each on its own device's compute
  stream. A CUDA kernel launch returns at once, so the earlier replicas' outputs are written by
  the grouped call queued on their own streams, ahead of anything later on those streams; a
  device whose kernels run on a worker thread (`Device.defers_kernels`) waits there for the
  grouped call, as a GPU stream waits inside an NCCL kernel for its peers.
- **One GPU per process** (`NCCLCollectives.over_mpi`, MultiWorkerMirroredStrategy with NCCL):
  rank 0 makes the NCCL unique id, and it reaches the other processes as the bytes of a
  numpy uint8 buffer through the MPI engine's `broadcast`; each process then joins the clique
  with its MPI rank. Device arrays go to NCCL on the current CuPy stream (inside an eager
  kernel, the tensor's device's compute stream); host (numpy) arrays, which NCCL cannot read,
  go to the MPI engine, which also serves `barrier`.

Buffers: contiguous only (a strided array is copied once); dtypes map to NCCL's
(`NCCL_FLOAT32`, ...; bool as uint8 for max/min, complex as pairs of floats for sum/mean);
"mean" is NCCL's sum followed by a division on the device.

CuPy is imported lazily (`load_cupy`): this module imports, and the suite runs, without it.
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np

from ...base import errors
from .base import Collectives, check_reduce_op

#: NCCL's name for each dtype it reduces (attributes of `cupy.cuda.nccl`).
_NCCL_DTYPES = {
    np.dtype(np.int8): "NCCL_INT8", np.dtype(np.uint8): "NCCL_UINT8",
    np.dtype(np.int32): "NCCL_INT32", np.dtype(np.uint32): "NCCL_UINT32",
    np.dtype(np.int64): "NCCL_INT64", np.dtype(np.uint64): "NCCL_UINT64",
    np.dtype(np.float16): "NCCL_FLOAT16", np.dtype(np.float32): "NCCL_FLOAT32",
    np.dtype(np.float64): "NCCL_FLOAT64",
}
#: NCCL's reduction for each of the interface's; "mean" is a sum, divided afterwards.
_NCCL_OPS = {"sum": "NCCL_SUM", "mean": "NCCL_SUM", "max": "NCCL_MAX", "min": "NCCL_MIN"}

#: How long a replica whose kernels run on a worker thread waits for its peers before raising
#: (seconds): far beyond any real step, so only a replica that never arrives reaches it.
REPLICA_WAIT_S = 300.0


def load_cupy():
    """CuPy with its NCCL bindings loaded (`cupy.cuda.nccl`); ImportError naming what is
    missing otherwise."""
    import cupy  # noqa: PLC0415 - deliberately lazy: importing cupy costs seconds
    from cupy.cuda import nccl  # noqa: PLC0415, F401 - ImportError without NCCL bindings

    if not getattr(nccl, "available", True):
        raise ImportError("cupy.cuda.nccl is present but CuPy was built without NCCL")
    return cupy


def cuda_device_id(device):
    """The CUDA device behind an eager device, or None for a device NCCL cannot use (a CPU,
    a simulated GPU)."""
    return getattr(device, "device_id", None)


def device_stream(device):
    """The CuPy stream of `device`'s compute stream: where eager queues the device's kernels,
    so a collective on it is ordered after the kernels that produced its buffers."""
    return device.compute_stream.cupy_stream


def unavailable_reason(devices) -> str | None:
    """Why NCCL cannot reduce across `devices` (eager devices), or None when it can: CuPy or its
    NCCL bindings missing, a device that is not a CUDA GPU, two logical GPUs on one CUDA
    device (NCCL needs one communicator per physical GPU)."""
    ids = []
    for device in devices:
        device_id = cuda_device_id(device)
        if device_id is None:
            return f"{device.name} is not a CUDA GPU (NCCL reduces between CUDA devices only)"
        ids.append(device_id)
    if len(set(ids)) != len(ids):
        return (f"several logical GPUs share a CUDA device (CUDA devices {ids}); NCCL needs one "
                f"communicator per physical GPU")
    try:  # after the devices: a CPU-only strategy never pays for importing cupy
        load_cupy()
    except Exception as e:  # noqa: BLE001 - ImportError, or a broken CUDA install at import
        return f"CuPy's NCCL bindings (cupy.cuda.nccl) cannot be imported ({e})"
    return None


def _nccl():
    return load_cupy().cuda.nccl


def _pointer(array) -> int:
    """The address of a contiguous buffer: a CuPy array's device pointer (a numpy buffer's
    address for host-memory stand-ins, as the tests' fake NCCL reduces)."""
    data = getattr(array, "data", None)
    ptr = getattr(data, "ptr", None)
    return int(ptr) if ptr is not None else int(array.ctypes.data)


def _on_host(array) -> bool:
    """Whether `array` is a host buffer (not CuPy's): one for the host engine (MPI)."""
    return not isinstance(array, load_cupy().ndarray)


def _describe(array) -> str:
    return f"{np.dtype(array.dtype).name}{list(array.shape)}"


def nccl_layout(array, op: str, name: str = "all_reduce"):
    """(count, NCCL dtype name) for sending `array` with reduction `op`: how many elements NCCL
    sees and as what. InvalidArgumentError for what NCCL cannot reduce."""
    dtype = np.dtype(array.dtype)
    count = int(array.size)
    if dtype == np.bool_:
        if op in ("sum", "mean"):
            raise errors.InvalidArgumentError(
                None, "NcclAllReduce", f"{name}: reduction {op!r} is not defined for bool "
                f"tensors ({_describe(array)}); cast to an integer or float dtype first.")
        return count, "NCCL_UINT8"  # max/min of 0/1 is or/and
    if dtype.kind == "c":
        if op not in ("sum", "mean", None):
            raise errors.InvalidArgumentError(
                None, "NcclAllReduce", f"{name}: reduction {op!r} is not defined for complex "
                f"tensors ({_describe(array)}).")
        return 2 * count, _NCCL_DTYPES[np.dtype(np.float32 if dtype.itemsize == 8
                                                else np.float64)]
    if dtype not in _NCCL_DTYPES:
        raise errors.InvalidArgumentError(
            None, "NcclAllReduce", f"{name}: NCCL has no type for {_describe(array)}; "
            f"supported: {', '.join(sorted(d.name for d in _NCCL_DTYPES))}, bool, complex.")
    return count, _NCCL_DTYPES[dtype]


def _divide(array, n: int) -> None:
    """`array /= n` in place (floor division for integers), on the current stream."""
    if np.dtype(array.dtype).kind in "iu":
        array //= n
    else:
        array /= np.dtype(array.dtype).type(n)


class _Round:
    """One bucket's all-reduce across local replicas, filled as the replicas' kernels arrive."""

    __slots__ = ("parts", "done", "error")

    def __init__(self, n):
        self.parts = [None] * n  # (input, output) per replica
        self.done = threading.Event()
        self.error = None


class NCCLCollectives(Collectives):
    """`Collectives` on NCCL communicators (see the module doc; build it with
    `for_local_devices` or `over_mpi`)."""

    takes_device_arrays = True  # CollectiveReduceV2 hands it the tensor's device array

    def __init__(self, comms, devices, rank=0, size=1, host=None):
        self._comms = list(comms)
        self.devices = list(devices)  # eager devices, one per communicator
        self.rank, self.size = rank, size
        self._host = host  # the engine for host buffers (MPI), or None
        self._rounds = {}
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def for_local_devices(cls, devices):
        """One communicator per device (eager GPU devices of this process), by `initAll`."""
        reason = unavailable_reason(devices)
        if reason is not None:
            raise errors.UnavailableError(None, "NcclAllReduce",
                                          f"NCCL cannot reduce across these devices: {reason}.")
        ids = [cuda_device_id(d) for d in devices]
        comms = _nccl().NcclCommunicator.initAll(ids)
        return cls(comms, devices)

    @classmethod
    def over_mpi(cls, mpi_engine, device):
        """This process's `device` joined with the other processes' GPUs: rank 0's NCCL
        unique id goes to every process through `mpi_engine.broadcast` of a uint8 buffer."""
        reason = unavailable_reason([device])
        if reason is not None:
            raise errors.UnavailableError(None, "NcclAllReduce",
                                          f"NCCL cannot reduce on {device.name}: {reason}.")
        cupy = load_cupy()
        nccl = cupy.cuda.nccl
        unique_id = exchange_unique_id(mpi_engine, nccl)
        with cupy.cuda.Device(cuda_device_id(device)):
            comm = nccl.NcclCommunicator(mpi_engine.size, unique_id, mpi_engine.rank)
        return cls([comm], [device], mpi_engine.rank, mpi_engine.size, host=mpi_engine)

    def __repr__(self):
        names = ", ".join(d.name for d in self.devices)
        return f"NCCLCollectives(rank={self.rank}, size={self.size}, devices=[{names}])"

    # -- across processes (one communicator per process) ------------------------------------

    def all_reduce(self, arrays, op="sum"):
        self._check_open("all_reduce")
        op = check_reduce_op(op)
        host = [a for a in arrays if _on_host(a)]
        if host:  # NCCL reads device memory only
            if len(host) != len(arrays):
                raise ValueError("all_reduce: pass host (numpy) and device arrays in separate "
                                 "calls.")
            return self._host_engine("all_reduce").all_reduce(arrays, op)
        comm = self._process_comm("all_reduce")
        cupy = load_cupy()
        nccl = cupy.cuda.nccl
        stream = cupy.cuda.get_current_stream()
        buffers = [a if a.flags.c_contiguous else cupy.ascontiguousarray(a) for a in arrays]
        layouts = [nccl_layout(b, op) for b in buffers]
        grouped = len(buffers) > 1  # several collectives: one launch (NCCL aggregates them)
        if grouped:
            nccl.groupStart()
        try:
            for b, (count, dtype) in zip(buffers, layouts):
                comm.allReduce(_pointer(b), _pointer(b), count, getattr(nccl, dtype),
                               getattr(nccl, _NCCL_OPS[op]), stream.ptr)
        finally:
            if grouped:
                nccl.groupEnd()
        if op == "mean":
            for b in buffers:
                _divide(b, self.size)
        return buffers

    def all_gather(self, array, axis=0):
        self._check_open("all_gather")
        if _on_host(array):
            return self._host_engine("all_gather").all_gather(array, axis)
        comm = self._process_comm("all_gather")
        cupy = load_cupy()
        nccl = cupy.cuda.nccl
        self._check_same_shapes(array)
        if array.ndim and not -array.ndim <= axis < array.ndim:
            raise errors.InvalidArgumentError(
                None, "CollectiveGather", f"all_gather: axis {axis} is out of range for "
                f"{_describe(array)}.")
        send = cupy.ascontiguousarray(array)
        received = cupy.empty((self.size,) + send.shape, dtype=send.dtype)
        count, dtype = nccl_layout(send, None, "all_gather")
        comm.allGather(_pointer(send), _pointer(received), count, getattr(nccl, dtype),
                       cupy.cuda.get_current_stream().ptr)
        if send.ndim == 0:
            return received
        return cupy.concatenate(list(received), axis=axis)

    def broadcast(self, array, root=0):
        self._check_open("broadcast")
        if not 0 <= root < self.size:
            raise ValueError(f"broadcast: root {root} is not a rank of this group of "
                             f"{self.size} workers.")
        if _on_host(array):
            return self._host_engine("broadcast").broadcast(array, root)
        comm = self._process_comm("broadcast")
        cupy = load_cupy()
        nccl = cupy.cuda.nccl
        buffer = array if array.flags.c_contiguous else cupy.ascontiguousarray(array)
        count, dtype = nccl_layout(buffer, None, "broadcast")
        comm.broadcast(_pointer(buffer), _pointer(buffer), count, getattr(nccl, dtype), root,
                       cupy.cuda.get_current_stream().ptr)
        return buffer

    def barrier(self):
        self._check_open("barrier")
        if self.size > 1:
            self._host_engine("barrier").barrier()

    def close(self):
        if self._closed:
            return
        self._closed = True
        for comm in self._comms:
            comm.destroy()
        self._comms = []
        if self._host is not None:
            self._host.close()

    # -- across this process's GPUs (one communicator per local device) ----------------------

    def all_reduce_replicas(self, key, replica: int, array, op: str = "sum"):
        """Replica `replica`'s part of the all-reduce `key` (one per bucket): its reduced copy
        of `array`, a buffer on its device (see the module doc). Called by each replica's
        kernel, with that device's stream current; the last to arrive issues the grouped
        collective for all."""
        self._check_open("all_reduce")
        op = check_reduce_op(op)
        n = len(self._comms)
        device = self.devices[replica]
        xp = device.xp  # the kernel's array module: cupy on a CUDA device
        nccl_layout(array, op)  # a bad dtype fails in every replica's kernel, before any waits
        with self._on_replica_stream(device):  # (a kernel has them current already)
            send = xp.ascontiguousarray(array)
            out = xp.empty_like(send)  # from the pool of the stream NCCL writes it on
        with self._lock:
            round_ = self._rounds.get(key)
            if round_ is None:
                round_ = self._rounds[key] = _Round(n)
            round_.parts[replica] = (send, out)
            last = all(p is not None for p in round_.parts)
            if last:
                del self._rounds[key]  # a traced step reuses its keys: the next round is new
        if last:
            try:
                self._group_all_reduce(round_.parts, op)
            except BaseException as e:
                round_.error = e
                raise
            finally:
                round_.done.set()
        elif device.defers_kernels:
            if not round_.done.wait(REPLICA_WAIT_S):
                raise errors.DeadlineExceededError(
                    None, "NcclAllReduce", f"all_reduce of {_describe(send)}: replica "
                    f"{replica} waited {REPLICA_WAIT_S} s for the other replicas' parts.")
            if round_.error is not None:
                raise errors.AbortedError(
                    None, "NcclAllReduce", f"all_reduce of {_describe(send)} failed in "
                    f"another replica: {round_.error}")
        return out

    @staticmethod
    def _on_replica_stream(device):
        """`device` and its compute stream current (CuPy's), for a CUDA device."""
        if cuda_device_id(device) is None:
            return contextlib.nullcontext()
        scope = contextlib.ExitStack()
        scope.enter_context(_on_device(load_cupy(), device))
        scope.enter_context(device_stream(device))
        return scope

    def _group_all_reduce(self, parts, op):
        cupy = load_cupy()
        nccl = cupy.cuda.nccl
        nccl_op = getattr(nccl, _NCCL_OPS[op])
        streams = [device_stream(d) for d in self.devices]
        nccl.groupStart()
        try:
            for comm, (send, out), stream in zip(self._comms, parts, streams):
                count, dtype = nccl_layout(send, op)
                comm.allReduce(_pointer(send), _pointer(out), count, getattr(nccl, dtype),
                               nccl_op, stream.ptr)
        finally:
            nccl.groupEnd()
        if op == "mean":
            for device, (_, out), stream in zip(self.devices, parts, streams):
                with _on_device(cupy, device), stream:
                    _divide(out, len(parts))

    # -- helpers -----------------------------------------------------------------------------

    def _process_comm(self, name):
        if len(self._comms) != 1:
            raise errors.FailedPreconditionError(
                None, name, f"{name}: this NCCLCollectives drives {len(self._comms)} local "
                f"GPUs; reduce across them with all_reduce_replicas.")
        return self._comms[0]

    def _host_engine(self, name):
        if self._host is None:
            if self.size == 1:
                return _SELF_ONLY
            raise errors.FailedPreconditionError(None, name, f"{name}: no host engine.")
        return self._host

    def _check_same_shapes(self, array):
        """Every worker's dtype and shape, compared through the host engine: NCCL's allGather
        needs equal buffers, and a mismatch must be the same clear error on every worker."""
        if self.size == 1:
            return
        header = np.full((1, 10), -1, dtype=np.int64)
        header[0, 0], header[0, 1] = array.ndim, ord(np.dtype(array.dtype).char)
        header[0, 2:2 + min(array.ndim, 8)] = array.shape[:8]
        headers = self._host_engine("all_gather").all_gather(header, axis=0)
        if (headers != headers[0]).any():
            described = "; ".join(
                f"worker {r}: {np.dtype(chr(int(h[1]))).name}"
                f"{[int(d) for d in h[2:2 + min(int(h[0]), 8)]]}" for r, h in enumerate(headers))
            raise errors.InvalidArgumentError(
                None, "CollectiveGather", f"all_gather: NCCL gathers equal buffers, but the "
                f"workers' tensors differ ({described}); gather host tensors (over MPI) to "
                f"concatenate different lengths.")

    def _check_open(self, name):
        if self._closed:
            raise errors.FailedPreconditionError(
                None, name, f"{name}: this NCCLCollectives was closed; build a new one.")


def _on_device(cupy, device):
    device_id = cuda_device_id(device)
    return cupy.cuda.Device(device_id) if device_id is not None else contextlib.nullcontext()


class _SelfOnly(Collectives):
    """The host engine of a one-process group: every collective returns its input."""

    def all_reduce(self, arrays, op="sum"):
        check_reduce_op(op)
        return list(arrays)

    def all_gather(self, array, axis=0):
        return array

    def broadcast(self, array, root=0):
        return array

    def barrier(self):
        return None


_SELF_ONLY = _SelfOnly()


def exchange_unique_id(mpi_engine, nccl):
    """Rank 0's `nccl.get_unique_id()`, on every rank: its 128 bytes as a numpy uint8 buffer
    through the MPI engine's `broadcast` (CuPy gives and takes the id as a tuple of C chars)."""
    buffer = np.zeros(128, np.uint8)
    if mpi_engine.rank == 0:
        unique_id = np.asarray(nccl.get_unique_id(), dtype=np.int64)
        if unique_id.shape != (128,):
            raise errors.InternalError(None, "NcclCommunicator",
                                       f"nccl.get_unique_id() gave {unique_id.shape[0]} values; "
                                       f"expected 128 bytes.")
        buffer[:] = (unique_id & 0xFF).astype(np.uint8)
    buffer = mpi_engine.broadcast(buffer, root=0)
    return tuple(int(b) for b in np.asarray(buffer, np.uint8).view(np.int8))
