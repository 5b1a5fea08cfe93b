# ruff: noqa: N802, N803 - the fake keeps cupy.cuda.nccl's own (camelCase) names
"""A small fake of the parts of CuPy the NCCL engine uses, for tests on machines without CUDA.

`FakeNccl` stands in for `cupy.cuda.nccl`: its constants, `get_unique_id`, `groupStart`/
`groupEnd` and `NcclCommunicator` (`initAll`, or `(ndev, unique_id, rank)`; `allReduce`,
`allGather`, `broadcast`, `destroy`). It really reduces: buffers are reached through the
addresses the engine passes (host memory here), read as `count` elements of the NCCL dtype, so
a wrong count, dtype or pointer gives wrong numbers. Communicators that share a unique id form
a clique; the k-th collective of every member is performed once all members have issued it. A
collective issued by a communicator whose peers live in the same thread (made by `initAll`)
outside `groupStart`/`groupEnd` raises, as real NCCL would deadlock there. Every call is
recorded in `calls` for tests to inspect.

`FakeCupy` is the namespace `load_cupy()` returns: `cuda.nccl`, `cuda.Device`,
`cuda.get_current_stream`/`cuda.Stream` (a settable current stream with a `ptr`), `ndarray`
(`DeviceArray`, a numpy subclass standing in for device arrays) and the few array functions
the engine calls.
"""

from __future__ import annotations

import contextlib
import ctypes
import random
import threading
from types import SimpleNamespace

import numpy as np

WAIT_S = 60.0  # a missing peer fails a test instead of hanging it


class DeviceArray(np.ndarray):
    """A 'device' array: host memory, but not a plain numpy array to the engine."""


def device_array(values, dtype=None):
    return np.array(values, dtype=dtype).view(DeviceArray)


class _Clique:
    def __init__(self, size):
        self.size = size
        self.posted = {}  # seq -> {rank: (kind, args)}
        self.done = set()
        self.error = {}


class FakeNccl:
    NCCL_INT8, NCCL_UINT8, NCCL_INT32, NCCL_UINT32 = 0, 1, 2, 3
    NCCL_INT64, NCCL_UINT64, NCCL_FLOAT16, NCCL_FLOAT32, NCCL_FLOAT64 = 4, 5, 6, 7, 9
    NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN = 0, 1, 2, 3
    DTYPES = {0: np.int8, 1: np.uint8, 2: np.int32, 3: np.uint32, 4: np.int64, 5: np.uint64,
              6: np.float16, 7: np.float32, 9: np.float64}
    available = True

    def __init__(self):
        self.calls = []  # (kind, rank, count, dtype, op or root, stream, grouped)
        self.group_calls = []  # ("start"|"end") in order
        self.unique_ids = []
        self._cliques = {}
        self._cv = threading.Condition()
        self._local = threading.local()
        fake = self

        class NcclCommunicator:
            def __init__(self, ndev, commId, rank):
                self._init(tuple(commId), ndev, rank, same_thread=False)

            def _init(self, uid, ndev, rank, same_thread):
                with fake._cv:
                    self._clique = fake._cliques.setdefault(uid, _Clique(ndev))
                self._rank, self._size, self._seq = rank, ndev, 0
                self._same_thread = same_thread
                self.destroyed = False

            @staticmethod
            def initAll(devices):
                uid = fake.get_unique_id()
                comms = []
                for rank in range(len(devices)):
                    comm = NcclCommunicator.__new__(NcclCommunicator)
                    comm._init(uid, len(devices), rank, same_thread=True)
                    comm.device = devices[rank]
                    comms.append(comm)
                return comms

            def rank_id(self):
                return self._rank

            def size(self):
                return self._size

            def destroy(self):
                self.destroyed = True

            def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):
                fake._issue(self, "allReduce", (sendbuf, recvbuf, count, datatype, op), stream)

            def allGather(self, sendbuf, recvbuf, count, datatype, stream):
                fake._issue(self, "allGather", (sendbuf, recvbuf, count, datatype, None),
                            stream)

            def broadcast(self, sendbuf, recvbuf, count, datatype, root, stream):
                fake._issue(self, "broadcast", (sendbuf, recvbuf, count, datatype, root),
                            stream)

        self.NcclCommunicator = NcclCommunicator

    # -- the module's functions ----------------------------------------------------------------
    def get_unique_id(self):
        uid = tuple(random.randint(-128, 127) for _ in range(128))
        self.unique_ids.append(uid)
        return uid

    def groupStart(self):
        self.group_calls.append("start")
        self._local.depth = getattr(self._local, "depth", 0) + 1
        if self._local.depth == 1:
            self._local.pending = []

    def groupEnd(self):
        self.group_calls.append("end")
        self._local.depth -= 1
        if self._local.depth == 0:
            pending, self._local.pending = self._local.pending, []
            posts = [self._post(*p) for p in pending]
            for clique, seq in posts:
                self._wait(clique, seq)

    # -- the cliques --------------------------------------------------------------------------
    def _issue(self, comm, kind, args, stream):
        grouped = getattr(self._local, "depth", 0) > 0
        self.calls.append((kind, comm._rank, args[2], args[3], args[4], stream, grouped))
        if comm.destroyed:
            raise RuntimeError("NCCL error: communicator destroyed")
        if grouped:
            self._local.pending.append((comm, kind, args))
            return
        if comm._same_thread and comm._size > 1:
            raise RuntimeError("NCCL would deadlock: several communicators of one clique "
                               "used from one thread outside groupStart()/groupEnd()")
        self._wait(*self._post(comm, kind, args))

    def _post(self, comm, kind, args):
        clique = comm._clique
        with self._cv:
            seq = comm._seq
            comm._seq += 1
            posted = clique.posted.setdefault(seq, {})
            posted[comm._rank] = (kind, args)
            if len(posted) == clique.size:
                try:
                    _perform(self, [posted[r] for r in range(clique.size)])
                except Exception as e:  # noqa: BLE001 - every member sees it
                    clique.error[seq] = e
                clique.done.add(seq)
                del clique.posted[seq]
                self._cv.notify_all()
        return clique, seq

    def _wait(self, clique, seq):
        with self._cv:
            if not self._cv.wait_for(lambda: seq in clique.done, WAIT_S):
                raise RuntimeError("fake NCCL: a peer never issued its part")
            if seq in clique.error:
                raise clique.error[seq]


def _memory(ptr, count, dtype):
    dtype = np.dtype(dtype)
    raw = (ctypes.c_byte * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(raw, dtype=dtype, count=count)


def _perform(fake, parts):
    kinds = {p[0] for p in parts}
    counts = {p[1][2] for p in parts}
    dtypes = {p[1][3] for p in parts}
    if len(kinds) != 1 or len(counts) != 1 or len(dtypes) != 1:
        raise RuntimeError(f"NCCL error: mismatched collectives {parts}")
    kind, count, dtype = kinds.pop(), counts.pop(), fake.DTYPES[dtypes.pop()]
    sends = [_memory(p[1][0], count, dtype).copy() for p in parts]
    if kind == "allReduce":
        op = parts[0][1][4]
        reduce = {fake.NCCL_SUM: np.add, fake.NCCL_PROD: np.multiply, fake.NCCL_MAX: np.maximum,
                  fake.NCCL_MIN: np.minimum}[op]
        result = sends[0]
        for s in sends[1:]:
            result = reduce(result, s)
        for p in parts:
            _memory(p[1][1], count, dtype)[...] = result
    elif kind == "allGather":
        result = np.concatenate(sends)
        for p in parts:
            _memory(p[1][1], count * len(parts), dtype)[...] = result
    else:  # broadcast
        root = parts[0][1][4]
        for p in parts:
            _memory(p[1][1], count, dtype)[...] = sends[root]


class FakeStream:
    """A CuPy stream stand-in: a `ptr`, and `with stream:` makes it current."""

    def __init__(self, ptr):
        self.ptr = ptr

    def __enter__(self):
        _current_streams().append(self)
        return self

    def __exit__(self, *exc):
        _current_streams().pop()


_THREAD = threading.local()


def _current_streams():
    """This thread's stack of current streams (as CuPy's: per thread), the null stream first."""
    if not hasattr(_THREAD, "streams"):
        _THREAD.streams = [FakeStream(0)]
    return _THREAD.streams


def fake_cupy(nccl=None):
    nccl = nccl or FakeNccl()
    cuda = SimpleNamespace(nccl=nccl, Device=lambda i: contextlib.nullcontext(),
                           Stream=FakeStream, get_current_stream=lambda: _current_streams()[-1])
    return SimpleNamespace(
        cuda=cuda, ndarray=DeviceArray, asnumpy=np.asarray,
        ascontiguousarray=lambda a: np.ascontiguousarray(a).view(DeviceArray),
        empty=lambda shape, dtype: np.empty(shape, dtype).view(DeviceArray),
        concatenate=lambda arrays, axis=0: np.concatenate(arrays, axis).view(DeviceArray))


class FakeMPIGroup:
    """Host engines for `size` ranks run as threads (the MPI engine's interface, enough for
    the NCCL engine: rank, size, broadcast, all_gather, all_reduce, barrier, close)."""

    def __init__(self, size):
        self.size = size
        self._barrier = threading.Barrier(size, timeout=WAIT_S)
        self._slots = [None] * size
        self.broadcasts = []

    def engine(self, rank):
        return _FakeMPIEngine(self, rank)

    def exchange(self, rank, value):
        self._slots[rank] = value
        self._barrier.wait()
        values = list(self._slots)
        self._barrier.wait()
        return values


class _FakeMPIEngine:
    def __init__(self, group, rank):
        self._group, self.rank, self.size = group, rank, group.size
        self.closed = False

    def broadcast(self, array, root=0):
        assert isinstance(array, np.ndarray) and array.flags.c_contiguous
        self._group.broadcasts.append((self.rank, array.dtype, array.shape))
        return self._group.exchange(self.rank, array.copy())[root].copy()

    def all_gather(self, array, axis=0):
        return np.concatenate(self._group.exchange(self.rank, np.asarray(array)), axis=axis)

    def all_reduce(self, arrays, op="sum"):
        out = []
        for a in arrays:
            parts = self._group.exchange(self.rank, np.asarray(a))
            out.append({"sum": np.sum, "max": np.max, "min": np.min,
                        "mean": np.mean}[op](np.stack(parts), axis=0).astype(a.dtype))
        return out

    def barrier(self):
        self._group.exchange(self.rank, None)

    def close(self):
        self.closed = True
