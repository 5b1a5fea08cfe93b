"""The collective interface on MPI (mpi4py): one participant per process.

Buffers go to MPI through the buffer protocol (`Allreduce`, `Allgather`, `Bcast` with capital
letters), never as pickled objects: `all_reduce` reduces a contiguous array (anything else
through one contiguous copy) into a new one, leaving the caller's buffer as it was; large
buffers go through each host's shared-memory window (`shared_memory`), and in a job across
hosts, then between one leader process per host (`hierarchical`).
The engine works on a duplicate of the communicator it is given, so a training script's own
MPI traffic never matches eager's.

Waiting: with `timeout_seconds=None` (TensorFlow's default) a collective blocks inside MPI,
the fastest path; a worker that raises aborts the job (`eager.distribute.failure`), and the
MPI launcher ends every process when one dies. With a timeout, each collective is started
non-blocking and polled until its deadline, then raises `DeadlineExceededError`: the bound for
a peer that hangs, or exits while the others still wait on it.

Importing this module initializes MPI; `eager.distribute` imports it only when a multi-process
strategy is built.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Future

import numpy as np
from mpi4py import MPI

from ...base import errors
from ..failure import abort_on_uncaught_error
from .base import Collectives, check_reduce_op
from .ordered import OrderedCalls
from .hierarchical import window_engine

_MPI_OPS = {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}

#: Polling backs off to this sleep (seconds) while a timed collective is not yet done: short
#: enough to add little latency to a step, long enough not to burn a core per waiting process.
_MAX_POLL_SLEEP_S = 1e-3


def _describe(array) -> str:
    return f"{array.dtype.name}{list(array.shape)}"


class MPICollectives(Collectives):
    """`Collectives` over an MPI communicator (default `MPI.COMM_WORLD`).

    `timeout_seconds`: the longest any one collective may wait for the other processes before
    raising `eager.errors.DeadlineExceededError` (None: wait as long as MPI does).
    `abort_on_error`: an uncaught exception in this process aborts the whole job
    (`eager.distribute.failure`) instead of leaving the other processes waiting.
    `overlap`: whether started collectives (`start`) run on a communication thread while the
    caller carries on, so a traced step's all-reduces overlap its backward pass
    (`eager.runtime.passes.collectives`). None decides from the environment variable
    `EAGER_COLLECTIVE_OVERLAP` ("1" or "0") if set, else from the machine: on when this host
    has at least two cores per process (the thread waits inside MPI, which polls a core, and
    copies and reduces buffers: with no core of its own it slows the computation it should
    hide behind). Either way only if MPI lets two threads take turns calling it.
    `host_of_rank`: None (the default: processes that share a machine share a shared-memory
    window), or one non-negative int per rank naming its group, which refines the machines
    (ranks on different machines never share a window): for tests, which simulate several
    hosts on one machine, and for machines whose processes should be grouped otherwise.
    Every process must pass the same list (or every one None): the processes compare theirs
    when the engine is made, and a difference is the same ValueError on every process.
    """

    def __init__(self, comm=None, timeout_seconds: float | None = None,
                 abort_on_error: bool = True, overlap: bool | None = None,
                 host_of_rank=None):
        if timeout_seconds is not None and not timeout_seconds > 0:
            raise ValueError(f"timeout_seconds must be a positive number of seconds or None, "
                             f"got {timeout_seconds!r}.")
        world = MPI.COMM_WORLD if comm is None else comm
        problem, row = _host_row(host_of_rank, world.Get_size())
        self._comm = world.Dup()
        self.rank = self._comm.Get_rank()
        self.size = self._comm.Get_size()
        # Every process's `host_of_rank`, compared before anything depends on it: processes
        # that group themselves differently would wait on each other forever in the windows.
        rows = np.empty((self.size, self.size), np.int64)
        self._comm.Allgather(row, rows)
        problem = problem or _hosts_disagreement(rows)
        if problem is not None:
            self._comm.Free()
            self._comm = None
            raise ValueError(problem)
        host_of_rank = None if host_of_rank is None else [int(h) for h in row]
        self.timeout_seconds = timeout_seconds
        if abort_on_error:
            abort_on_uncaught_error(MPI.COMM_WORLD if comm is None else comm)
        # Large buffers are reduced through each host's shared-memory window (shared_memory.py),
        # and between hosts by one leader each (hierarchical.py); None: MPI's Allreduce.
        self._node = window_engine(self._comm, self._wait, host_of_rank)
        # Every call, started or synchronous, in one order (ordered.py). Started calls run on
        # a thread of their own only if MPI lets two threads take turns calling it.
        self._calls = OrderedCalls(f"eager-mpi-collectives-{self.rank}")
        if overlap is None:
            overlap = _overlap_by_default(self._comm, self._node)
        self.asynchronous = bool(overlap) and MPI.Query_thread() >= MPI.THREAD_SERIALIZED

    def __repr__(self):
        return f"MPICollectives(rank={self.rank}, size={self.size})"

    @property
    def started_count(self) -> int:
        """How many collectives went to the communication thread so far (started ones, and
        synchronous ones that had to wait behind them)."""
        return self._calls.submitted

    @property
    def comm(self):
        """The engine's own (duplicated) communicator."""
        self._check_open("comm")
        return self._comm

    # -- the interface ------------------------------------------------------------------------

    def start(self, fn) -> Future:
        self._check_open("start")
        if not self.asynchronous:
            return super().start(lambda: self._calls.call(fn))
        return self._calls.submit(fn)

    def all_reduce(self, arrays: list, op: str = "sum") -> list:
        self._check_open("all_reduce")
        op = check_reduce_op(op)
        return self._calls.call(lambda: self._all_reduce(arrays, op))

    def all_gather(self, array, axis: int = 0):
        self._check_open("all_gather")
        return self._calls.call(lambda: self._all_gather(array, axis))

    def broadcast(self, array, root: int = 0):
        self._check_open("broadcast")
        if not 0 <= root < self.size:
            raise ValueError(f"broadcast: root {root} is not a rank of this group of "
                             f"{self.size} workers.")
        return self._calls.call(lambda: self._broadcast(array, root))

    def barrier(self) -> None:
        self._check_open("barrier")
        self._calls.call(lambda: self._wait("barrier", None, self._comm.Barrier,
                                            self._comm.Ibarrier))

    def close(self) -> None:
        self._calls.close()  # what was started finishes first (idempotent)
        node, self._node = self._node, None
        if node is not None:
            node.close()
        comm, self._comm = self._comm, None
        if comm is not None and not MPI.Is_finalized():
            comm.Free()

    # -- the calls, on the thread `_calls` runs them on ---------------------------------------

    def _all_reduce(self, arrays, op):
        arrays = [np.asarray(a) for a in arrays]
        if (self._node is not None and len(arrays) > 1
                and len({a.dtype for a in arrays}) == 1
                and self._node.supports(arrays[0].dtype, op) and self._node.fits(arrays)):
            # A bucket of one dtype: one round through the shared-memory window for all.
            sources = [np.asarray(a, order="C") for a in arrays]  # keeps 0-d arrays 0-d
            results = [np.empty_like(a) for a in sources]
            self._node.all_reduce_packed(sources, results, "sum" if op == "mean" else op)
            if op == "mean":
                for result in results:
                    self._divide_by_size(result)
            return results
        return [self._all_reduce_one(a, op) for a in arrays]

    def _all_gather(self, array, axis):
        array = np.asarray(array)
        lengths = self._gathered_lengths("all_gather", array, axis)
        if lengths is None or len(set(lengths)) == 1:  # equal parts: one plain Allgather
            send = np.ascontiguousarray(array)
            received = np.empty((self.size,) + send.shape, dtype=send.dtype)
            self._wait("all_gather", send, self._comm.Allgather, self._comm.Iallgather,
                       send, received)
            return received if send.ndim == 0 else np.concatenate(list(received), axis=axis)
        # Parts of different lengths along `axis`: gather them axis-first with Allgatherv.
        send = np.ascontiguousarray(np.moveaxis(array, axis, 0))
        row = int(np.prod(send.shape[1:], dtype=np.int64))
        counts = [n * row for n in lengths]
        received = np.empty(sum(counts), dtype=send.dtype)
        self._wait("all_gather", send, self._comm.Allgatherv, self._comm.Iallgatherv,
                   send, [received, counts])
        stacked = received.reshape((sum(lengths),) + send.shape[1:])
        return np.ascontiguousarray(np.moveaxis(stacked, 0, axis))

    def _broadcast(self, array, root):
        buffer = _writable_contiguous(np.asarray(array))
        self._wait("broadcast", buffer, self._comm.Bcast, self._comm.Ibcast, buffer, root)
        return buffer

    # -- helpers ------------------------------------------------------------------------------

    def _all_reduce_one(self, array, op: str):
        """The reduction of every rank's `array` as a new array: the caller's buffer is never
        written (it may be a tensor's), and reducing into a fresh one costs MPI no more."""
        array = np.asarray(array)
        if array.dtype == np.bool_:
            if op in ("sum", "mean"):
                raise errors.InvalidArgumentError(
                    None, "CollectiveReduce",
                    f"all_reduce: reduction {op!r} is not defined for bool tensors "
                    f"({_describe(array)}); cast to an integer or float dtype first.")
            source = np.asarray(array, order="C").view(np.uint8)  # max/min of 0/1: or/and
        else:
            source = np.asarray(array, order="C")  # 0-d stays 0-d
        result = np.empty_like(source)
        try:
            if self._node is not None and self._node.accepts(source, op):
                self._node.all_reduce(source, result, "sum" if op == "mean" else op)
            else:
                self._wait("all_reduce", source, self._comm.Allreduce, self._comm.Iallreduce,
                           source, result, _MPI_OPS[op])
        except MPI.Exception as e:  # every rank has the same dtype, so every rank raises
            raise errors.InvalidArgumentError(
                None, "CollectiveReduce",
                f"all_reduce: MPI cannot reduce {_describe(array)} with {op!r}: "
                f"{e.Get_error_string().splitlines()[0]}") from None
        if op == "mean":
            self._divide_by_size(result)
        return result.view(np.bool_) if array.dtype == np.bool_ else result

    def _divide_by_size(self, result) -> None:
        """A sum into a mean, in place (floor division for integers, as TensorFlow's)."""
        if result.dtype.kind in "iu":
            result //= self.size
        else:
            result /= result.dtype.type(self.size)

    def _gathered_lengths(self, name: str, array, axis: int):
        """Every rank's length along `axis` (None for scalars), after checking on every rank
        that dtypes and the other dimensions agree: a mismatch is the same clear error on
        every worker instead of a truncated buffer or a hang."""
        header = np.full(10, -1, dtype=np.int64)
        header[0], header[1] = array.ndim, ord(array.dtype.char)
        header[2:2 + min(array.ndim, 8)] = array.shape[:8]
        headers = np.empty((self.size, 10), dtype=np.int64)
        self._wait(name, header, self._comm.Allgather, self._comm.Iallgather, header, headers)
        if array.ndim == 0:
            if (headers != headers[0]).any():
                raise _mismatch(name, headers)
            return None
        if not -array.ndim <= axis < array.ndim:
            raise errors.InvalidArgumentError(
                None, "CollectiveGather",
                f"{name}: axis {axis} is out of range for {_describe(array)}.")
        column = 2 + axis % array.ndim
        if (np.delete(headers, column, axis=1) != np.delete(headers, column, axis=1)[0]).any():
            raise _mismatch(name, headers)
        return [int(n) for n in headers[:, column]]

    def _wait(self, name: str, buffer, blocking, nonblocking, *args) -> None:
        if self.timeout_seconds is None:
            blocking(*args)
            return
        request = nonblocking(*args)
        deadline = time.monotonic() + self.timeout_seconds
        sleep = 0.0
        while not request.Test():
            if time.monotonic() > deadline:
                what = f" of {_describe(buffer)}" if buffer is not None else ""
                raise errors.DeadlineExceededError(
                    None, name,
                    f"Collective {name}{what} on worker {self.rank} of {self.size} did not "
                    f"complete within {self.timeout_seconds} s: another worker died, hangs, or "
                    f"stopped calling collectives (every worker must run the same collectives "
                    f"in the same order).")
            time.sleep(sleep)
            sleep = min(_MAX_POLL_SLEEP_S, sleep * 2 or 1e-5)

    def _check_open(self, name: str) -> None:
        if self._comm is None:
            raise errors.FailedPreconditionError(
                None, name, f"{name}: this MPICollectives was closed; build a new one.")


def _overlap_by_default(comm, node) -> bool:
    """`EAGER_COLLECTIVE_OVERLAP` if set, else whether this host has two cores per process of
    `comm` on it (see `MPICollectives`; `node`: the engine's window engine, which knows them
    when every process shares this host). Collective: every process of `comm` calls it."""
    if node is not None and node.size == comm.Get_size():
        processes = node.size
    else:
        host = comm.Split_type(MPI.COMM_TYPE_SHARED)
        processes = host.Get_size()
        host.Free()
    chosen = os.environ.get("EAGER_COLLECTIVE_OVERLAP", "").strip()
    if chosen in ("0", "1"):
        return chosen == "1"
    if chosen:
        raise ValueError(f"EAGER_COLLECTIVE_OVERLAP must be 0 or 1, got {chosen!r}.")
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    return cores >= 2 * processes


_NOT_GIVEN, _MALFORMED = -2, -1  # a process's row in the `host_of_rank` comparison


def _host_row(host_of_rank, size: int):
    """(this process's complaint about its `host_of_rank` or None, its row for the comparison:
    the groups, or `size` copies of _NOT_GIVEN / _MALFORMED)."""
    if host_of_rank is None:
        return None, np.full(size, _NOT_GIVEN, np.int64)
    hosts = list(host_of_rank)
    if len(hosts) != size or not all(isinstance(h, (int, np.integer)) and not isinstance(h, bool)
                                     and h >= 0 for h in hosts):
        return (f"host_of_rank must hold one non-negative int per rank ({size}), got "
                f"{host_of_rank!r}.", np.full(size, _MALFORMED, np.int64))
    return None, np.array(hosts, np.int64)


def _hosts_disagreement(rows):
    """The same complaint on every process when the processes' `host_of_rank` rows differ."""
    if (rows == rows[0]).all():
        return None

    def shown(row):
        return {_NOT_GIVEN: "None", _MALFORMED: "an invalid list"}.get(int(row[0]), row.tolist())
    return ("every process must pass the same host_of_rank: "
            + "; ".join(f"rank {r} passed {shown(row)}" for r, row in enumerate(rows)) + ".")


def _writable_contiguous(array):
    if array.flags.c_contiguous and array.flags.writeable:
        return array
    return np.array(array, order="C", copy=True)


def _mismatch(name: str, headers) -> errors.InvalidArgumentError:
    described = []
    for rank, header in enumerate(headers):
        ndim, dtype = int(header[0]), np.dtype(chr(int(header[1])))
        shape = [int(d) for d in header[2:2 + min(ndim, 8)]]
        described.append(f"worker {rank}: {dtype.name}{shape}")
    return errors.InvalidArgumentError(
        None, "CollectiveGather",
        f"{name}: the workers' tensors differ in dtype or in shape outside the gathered axis "
        f"({'; '.join(described)}); every worker must pass the same dtype and shape.")
