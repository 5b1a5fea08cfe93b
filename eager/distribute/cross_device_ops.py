"""TF's `cross_device_ops` names (≈ `tf.distribute.NcclAllReduce`, `ReductionToOneDevice`,
`HierarchicalCopyAllReduce`) and the rules that choose a collective engine.

What each name does in eager:
- `NcclAllReduce()`: the NCCL engine (`collectives/nccl.py`) all-reduces each gradient bucket
  across the strategy's GPUs, device to device, one `NcclAllReduce` op per replica.
- `ReductionToOneDevice()` and `HierarchicalCopyAllReduce()`: the in-process rule, the sum of
  the replicas' buffers on the first device (in replica order) copied back to every device.

`MirroredStrategy` without `cross_device_ops` uses NCCL when every device is a CUDA GPU and
CuPy's NCCL bindings import, else the in-process rule (with the reason logged); asked for
`NcclAllReduce` where NCCL cannot run, it raises an error naming what is missing.
`MultiWorkerMirroredStrategy` chooses by `CommunicationOptions.implementation`
(`select_process_engine`).
"""

from __future__ import annotations

import itertools
import logging

import numpy as np

from ..base import errors
from ..core import context as _core
from ..devices import registry as _devices
from ..ops import collective_ops, nccl_ops
from .collective_util import CommunicationImplementation
from .collectives import nccl as _nccl

_LOG = logging.getLogger("eager.distribute")

#: The dtypes the `NcclAllReduce` op takes.
_NCCL_OP_DTYPES = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64),
                   np.dtype(np.int32), np.dtype(np.int64)}

__all__ = ["CrossDeviceOps", "NcclAllReduce", "ReductionToOneDevice",
           "HierarchicalCopyAllReduce"]


class CrossDeviceOps:
    """≈ `tf.distribute.CrossDeviceOps`: how a `MirroredStrategy` reduces across its devices."""

    #: Whether the reduction runs on NCCL (else in-process ops).
    uses_nccl = False

    def __repr__(self):
        return f"<eager.distribute.{type(self).__name__}>"


class ReductionToOneDevice(CrossDeviceOps):
    """≈ `tf.distribute.ReductionToOneDevice(reduce_to_device=None, accumulation_fn=None)`:
    the replicas' values summed on one device and copied back (eager sums on the first)."""

    def __init__(self, reduce_to_device=None, accumulation_fn=None):
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn


class HierarchicalCopyAllReduce(CrossDeviceOps):
    """≈ `tf.distribute.HierarchicalCopyAllReduce(num_packs=1)`: in eager, the same in-process
    reduction as `ReductionToOneDevice` (there is no DGX-1 topology to follow)."""

    def __init__(self, num_packs=1):
        if num_packs < 0:
            raise ValueError(f"NCCL all-reduce requires num_packs >= 0, but {num_packs} is "
                             f"specified.")
        self.num_packs = num_packs


class NcclAllReduce(CrossDeviceOps):
    """≈ `tf.distribute.NcclAllReduce(num_packs=1)`: all-reduce across GPUs with NCCL. The
    buckets (`bytes_per_pack`-sized, see `buckets.py`) play the part of TF's packs."""

    uses_nccl = True

    def __init__(self, num_packs=1):
        if num_packs < 0:
            raise ValueError(f"NCCL all-reduce requires num_packs >= 0, but {num_packs} is "
                             f"specified.")
        self.num_packs = num_packs


def _eager_devices(names):
    return [_devices.resolve(_devices.parse_device(n), soft=False)[0] for n in names]


def select_cross_device_ops(devices):
    """(the `CrossDeviceOps` a `MirroredStrategy` over `devices` uses by default, why)."""
    if len(devices) < 2:
        return ReductionToOneDevice(), "one device: nothing to reduce across"
    found = _eager_devices(devices)
    if None in found:  # e.g. "/gpu:1" on a machine without it: soft placement, as in TF
        missing = devices[found.index(None)]
        return ReductionToOneDevice(), f"not using NCCL: {missing} does not exist here"
    reason = _nccl.unavailable_reason(found)
    if reason is None:
        return NcclAllReduce(), "every device is a CUDA GPU and CuPy's NCCL imports"
    return ReductionToOneDevice(), f"not using NCCL: {reason}"


class ReplicaAllReduce:
    """A `MirroredStrategy`'s all-reduce of a bucket across its devices on the NCCL engine:
    one `NcclAllReduce` op per replica, on the replica's device, back to back."""

    def __init__(self, engine, devices):
        self.engine = engine
        self._devices = list(devices)
        self._group_key = collective_ops.register_group(engine)
        self._instance_keys = itertools.count(1)

    @staticmethod
    def supports(dtype) -> bool:
        """Whether buffers of numpy `dtype` go through NCCL (the others: the in-process
        rule)."""
        return np.dtype(dtype) in _NCCL_OP_DTYPES

    def __call__(self, per_replica, reduction):
        """Each replica's copy of the reduction of `per_replica` (one tensor per device)."""
        key = next(self._instance_keys)
        out = []
        for r, (device, value) in enumerate(zip(self._devices, per_replica)):
            with _core.device(device):
                out.append(nccl_ops.nccl_all_reduce(value, reduction, len(self._devices),
                                                    self._group_key, key, r))
        return out


def replica_all_reduce(cross_device_ops, devices):
    """The NCCL all-reduce a `MirroredStrategy` over `devices` (names) uses, or None for the
    in-process rule. `NcclAllReduce` asked for where NCCL cannot run: UnavailableError naming
    what is missing."""
    if cross_device_ops is None:
        cross_device_ops, why = select_cross_device_ops(devices)
        _LOG.info("MirroredStrategy reduces with %s: %s", type(cross_device_ops).__name__, why)
    if not getattr(cross_device_ops, "uses_nccl", False) or len(devices) < 2:
        return None
    engine = _nccl.NCCLCollectives.for_local_devices(_eager_devices(devices))
    return ReplicaAllReduce(engine, devices)


def select_process_engine(mpi_engine, implementation, device):
    """The engine a `MultiWorkerMirroredStrategy` all-reduces with across processes: NCCL on
    `device` (the worker's first device) for `implementation` NCCL, or AUTO where NCCL can run;
    the MPI engine otherwise (RING, or AUTO without CUDA GPUs and CuPy's NCCL, the reason
    logged). NCCL asked for where it cannot run: UnavailableError naming what is missing."""
    if implementation is CommunicationImplementation.RING:
        return mpi_engine
    reason = _nccl.unavailable_reason([_eager_devices([device])[0]])
    if reason is not None:
        if implementation is CommunicationImplementation.NCCL:
            raise errors.UnavailableError(
                None, "MultiWorkerMirroredStrategy",
                f"CommunicationImplementation.NCCL was requested but NCCL cannot run here: "
                f"{reason}. Use CommunicationImplementation.AUTO or RING (MPI) instead.")
        _LOG.info("MultiWorkerMirroredStrategy all-reduces over MPI: %s", reason)
        return mpi_engine
    return _nccl.NCCLCollectives.over_mpi(mpi_engine, _eager_devices([device])[0])
