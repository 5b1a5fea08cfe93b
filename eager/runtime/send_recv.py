"""`_Send` / `_Recv`: how a value produced in one device's partition reaches another's.

Partitioning (`eager.runtime.partition`) cuts every edge between devices into a `_Send` node in
the producer's partition and a `_Recv` node in the consumer's, joined by a rendezvous key. The
two meet in a `Rendezvous`, one per call: a dictionary of sent values and one condition
variable. A send never blocks (it deposits and returns); a receive waits until its key has
been sent, or until the call is aborted because some partition failed, so a failure anywhere
never leaves another partition waiting forever.

How a kernel reaches its call's rendezvous: as an *input*. Every partition that sends or
receives has one extra feed, the rendezvous, wrapped in a per-device `variant` tensor
(`rendezvous_tensor`), and every `_Send`/`_Recv` takes it as input 0. The alternatives are worse:
a thread-local or context variable set by the runner is invisible to the worker thread a
simulated GPU runs its kernels on (and to any executor that hands nodes to a pool), and an
attribute filled per call would mean rebuilding (recompiling) the program for every call. As an
input, the rendezvous is ordinary data flow: any runner and any compiled form that can feed a
program can run a partition, concurrently with other calls of the same program.

Moving the value (where the kernels care about devices):

* `_Send` runs on the producer's device and never blocks. It deposits `(array, source device)`.
  On a simulated GPU a kernel sees the raw pool block behind its input, which goes back to the
  pool as soon as the input tensor is dropped, so the send takes a host copy then (it runs
  after the producer in stream order, so the bytes are there). CPU and CuPy arrays are owned
  values and are handed over as they are. An input living on another device than the send's
  (a control-flow op's result left where its sub-graph made it: `OpDef.returns_tensors`)
  reaches the kernel as its tensor (`OpDef.keeps_input_devices`) and is sent as it lives.
* `_Recv` waits, so it always runs on the host: on the consumer's device when that is a CPU
  (its kernels run on the calling thread), else on CPU:0, with an `Identity` on the GPU after
  it (`partition` arranges this). A receive blocking a GPU's stream instead would stall every
  later kernel and every host synchronization of that stream behind a value another partition
  may need that very synchronization to produce. It returns the value as a tensor of the
  device it lives on (`OpDef.returns_tensors`), not copied: its consumer's dispatch moves it
  where it needs it (the GPU's `Identity` after a host receive copies a CPU value there, and
  takes a GPU value as it is), and a control-flow op takes it where it lives. So a value
  crossing between a GPU's partition and the CPU's `While` is never copied to the host and
  back.
"""

from __future__ import annotations

import threading

import numpy as np

from ..base import dtypes as _dt
from ..devices import registry as _registry
from ..base.errors import CancelledError, InternalError
from ..core.registry import register_op
from ..tensor import EagerTensor, wrap_value
from ..core.specs import TensorSpec

__all__ = ["Rendezvous", "SEND", "RECV", "rendezvous_tensor", "RENDEZVOUS_SPEC"]

_variant = _dt.variant


class Rendezvous:
    """Where one call's sends meet its receives (see the module doc). Each key is sent once and
    received once; `abort(error)` wakes every waiting receive with a CancelledError naming
    `error` and makes later receives fail the same way; later sends are dropped (a send may
    run on a GPU stream, where raising would only leave a stale error for a later call)."""

    __slots__ = ("_items", "_lock", "_cv", "error")

    # What dispatch and EagerTensor read from a value: a scalar of dtype `variant`.
    eager_dtype = dtype = _variant
    shape = ()
    ndim = 0

    def __init__(self):
        self._items = {}
        # Blocks take `_lock`, not `with self._cv` (whose Python `__enter__` a Ctrl-C can cut
        # after the acquire, leaving the lock held; see eager.devices.virtual).
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)
        self.error = None  # the error the call was aborted with (the first one)

    def send(self, key, payload) -> None:
        with self._lock:
            if self.error is not None:
                return
            if key in self._items:
                raise InternalError(None, "_Send", f"_Send: key {key!r} was sent twice in one "
                                                   "call (a partitioning bug).")
            self._items[key] = payload
            self._cv.notify_all()

    def recv(self, key):
        with self._lock:
            items = self._items
            while key not in items:
                if self.error is not None:
                    raise self._cancelled(key)
                self._cv.wait()
            return items.pop(key)

    def abort(self, error) -> bool:
        """Records `error` (if it is the first) and wakes every receive; True if it was."""
        with self._lock:
            first = self.error is None
            if first:
                self.error = error
                self._items.clear()
            self._cv.notify_all()
            return first

    def _cancelled(self, key):
        return CancelledError(None, "_Recv",
                              f"Transfer {key!r} was cancelled because another partition of "
                              f"the same call failed: {type(self.error).__name__}: {self.error}")

    def pending(self) -> int:
        """Values sent and not received yet (tests look at it)."""
        with self._lock:
            return len(self._items)

    def __repr__(self):
        return f"<Rendezvous pending={len(self._items)} aborted={self.error is not None}>"


#: The spec of the rendezvous feed of a partition.
RENDEZVOUS_SPEC = TensorSpec((), _variant)


def rendezvous_tensor(rendezvous, device) -> EagerTensor:
    """`rendezvous` as a scalar variant tensor on `device` (a Device): the feed a partition on
    that device gets, so that dispatch hands the kernels the object itself, uncopied."""
    return wrap_value(rendezvous, device, _variant)


# -- the kernels -----------------------------------------------------------------------------------
def _device(name):
    device = _registry.lookup(name)
    if device is None:
        raise InternalError(None, "_Send", f"Device {name!r} of a partition no longer exists "
                                           "(the devices were reconfigured since partitioning).")
    return device


def _send_kernel(xp, rendezvous, *value, key, send_device, recv_device):
    if not value:  # a control edge: only the fact that this point was reached travels
        rendezvous.send(key, None)
        return ()
    array = value[0]
    if array.__class__ is EagerTensor:  # a value living on another device: sent as it lives
        rendezvous.send(key, (array._value, array._meta.device))
        return ()
    source = _device(send_device)
    if isinstance(array, np.ndarray) and not source.inline:
        # A simulated GPU's kernel sees a pool block that is reused once its tensor is gone:
        # keep the bytes, as the host has them.
        array, source = array.copy(), _device("CPU:0")
    rendezvous.send(key, (array, source))
    return ()


def _send_infer(rendezvous, *value, key, send_device, recv_device):
    return ()


def _recv_kernel(xp, rendezvous, *, key, send_device, recv_device, dtype, shape):
    payload = rendezvous.recv(key)
    if dtype is None:  # a control edge
        return ()
    array, source = payload
    if source is _device(recv_device):
        return (array,)
    return (wrap_value(array, source, dtype),)  # where it lives: its consumer moves it if need be


def _recv_infer(rendezvous, *, key, send_device, recv_device, dtype, shape):
    if dtype is None:
        return ()
    return (TensorSpec(shape, dtype),)


#: `_Send(rendezvous[, value]; key, send_device, recv_device)`: deposits `value` (nothing, for
#: a control edge) under `key`. Stateful: never folded, merged or pruned away.
SEND = register_op("_Send", _send_kernel, _send_infer, stateful=True, num_outputs=0,
                   differentiable=False,
                   doc="Hands a value to the partition of another device (see send_recv).")
SEND.keeps_input_devices = True  # (a control-flow result: see the module doc)

#: `_Recv(rendezvous; key, send_device, recv_device, dtype, shape)`: the value sent under `key`,
#: in this device's memory; no output for a control edge (`dtype` None), hence `num_outputs`
#: None (the inference's tuple says how many).
RECV = register_op("_Recv", _recv_kernel, _recv_infer, stateful=True, num_outputs=None,
                   differentiable=False,
                   doc="Receives a value from the partition of another device (see send_recv).")
RECV.returns_tensors = True  # a value on the sender's device: see the module doc
