"""`NcclAllReduce`: one replica's part of an all-reduce across this process's GPUs.

≈ `tf.raw_ops.NcclAllReduce(input, reduction, num_devices, shared_name)`: the strategy issues
one such op per replica, each on its replica's device, back to back; their kernels meet in the
engine registered under `group_key` (`eager.distribute.collectives.nccl`, through
`collective_ops.register_group`), which runs one grouped NCCL call for all of them once the
last one arrives (`instance_key` names the bucket). Each output is its replica's copy of the
reduction, on its device. It is a collective op, so a traced step keeps these ops in the
order the trace made them on each device, as eager mode does (never one replica's op after
another's: each finishes only once all have started).
"""

from __future__ import annotations

from ..base import dtypes as _dt
from ..base.ieee import quiet
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from .collective_ops import group_engine

__all__ = ["NCCL_ALL_REDUCE", "nccl_all_reduce"]

_NAME = "NcclAllReduce"
_REDUCTIONS = ("sum", "mean", "max", "min")
_DTYPES = (_dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64)


def _check_attrs(x, reduction, num_devices, replica):
    if reduction not in _REDUCTIONS:
        raise op_error(_NAME, f"reduction must be one of {list(_REDUCTIONS)}, got "
                              f"{reduction!r}", [x])
    if not 0 <= int(replica) < int(num_devices):
        raise op_error(_NAME, f"replica {replica} is out of range for num_devices="
                              f"{num_devices}", [x])


def _infer(x, *, reduction, num_devices, group_key, instance_key, replica):
    _check_attrs(x, reduction, num_devices, replica)
    return TensorSpec(x.shape, x.dtype)


def _kernel(xp, x, *, reduction, num_devices, group_key, instance_key, replica):
    _check_attrs(x, reduction, num_devices, replica)
    if num_devices == 1:
        return x.copy()
    engine = group_engine(group_key)
    if engine is None:
        raise op_error(_NAME, f"no NCCL group with group_key={group_key} is registered "
                              f"(instance_key={instance_key})", [x])
    with quiet():  # never re-run: its peers take part in the same call
        return engine.all_reduce_replicas(instance_key, int(replica), x, reduction)


# Not differentiable: it reduces gradients after the backward pass; a gradient through it
# would need every replica's backward to meet in the same all-reduce.
NCCL_ALL_REDUCE = register_op(_NAME, _kernel, _infer, stateful=True, collective=True,
                              dtypes=_DTYPES, infer_from_types=True, differentiable=False)


def nccl_all_reduce(x, reduction, num_devices, group_key, instance_key, replica, name=None):
    """Replica `replica`'s part of the all-reduce `instance_key` of the group `group_key`
    across `num_devices` local GPUs (see the module doc); run it on the replica's device."""
    del name
    x = convert_to_tensor(x)
    return execute(NCCL_ALL_REDUCE, (x,), {
        "reduction": str(reduction), "num_devices": int(num_devices),
        "group_key": int(group_key), "instance_key": int(instance_key),
        "replica": int(replica)})
