"""`CollectiveReduceV2`: the all-reduce of one tensor across the processes of a collective
group, as a stateful op, so that a traced step holds its all-reduces as graph nodes.

Why an op: processes that all-reduce together must issue their collectives in the same order,
or they wait on each other forever. Eagerly, program order is that order; in a traced function
the graph's automatic control dependencies chain every op marked `collective` in the order the
trace created them (`eager/graph/control_deps.py`), so every worker running the same function
issues the same sequence, whatever else the graph runs in parallel.

The op sits below `eager.distribute`: the distribute layer registers each strategy's collective
engine (`register_group(engine)` gives its `group_key`) and the kernel calls that engine's
`all_reduce` on a contiguous host copy of the input (a device engine, NCCL, on the
device array itself). A group of one process needs no engine:
its all-reduce is the input. The reduction across a process's own replicas happens before
this op, in ordinary ops; this op is the cross-process part (`group_size` processes).
"""

from __future__ import annotations

import itertools
import threading

import numpy as np

from ..base import dtypes as _dt
from ..base.ieee import quiet
from ..core.dispatch import execute
from ..core.registry import get_op, op_error, register_op
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor

__all__ = ["COLLECTIVE_REDUCE", "collective_reduce", "register_group", "unregister_group",
           "group_engine"]

_NAME = "CollectiveReduceV2"
_MERGE_OPS = {"Add": "sum", "Mul": "prod", "Max": "max", "Min": "min"}
_FINAL_OPS = ("Id", "Div")
_DTYPES = (_dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64)

_GROUPS = {}  # group_key -> the collective engine (`eager.distribute.collectives.Collectives`)
_KEYS = itertools.count(1)
_LOCK = threading.Lock()


def register_group(engine) -> int:
    """A new group key whose all-reduces go to `engine` (its `all_reduce(arrays, op)`)."""
    with _LOCK:
        key = next(_KEYS)
        _GROUPS[key] = engine
    return key


def unregister_group(group_key) -> None:
    with _LOCK:
        _GROUPS.pop(group_key, None)


def group_engine(group_key):
    """The engine registered under `group_key`, or None."""
    return _GROUPS.get(group_key)


def _check_attrs(x, group_size, merge_op, final_op):
    if merge_op not in _MERGE_OPS:
        raise op_error(_NAME, f"merge_op must be one of {sorted(_MERGE_OPS)}, got "
                              f"{merge_op!r}", [x])
    if final_op not in _FINAL_OPS:
        raise op_error(_NAME, f"final_op must be one of {list(_FINAL_OPS)}, got {final_op!r}",
                       [x])
    if int(group_size) < 1:
        raise op_error(_NAME, f"group_size must be positive, got {group_size}", [x])


def _infer(x, *, group_size, group_key, instance_key, merge_op="Add", final_op="Id"):
    _check_attrs(x, group_size, merge_op, final_op)
    return TensorSpec(x.shape, x.dtype)


def _kernel(xp, x, *, group_size, group_key, instance_key, merge_op="Add", final_op="Id"):
    _check_attrs(x, group_size, merge_op, final_op)
    if group_size == 1:  # one process: nothing to exchange
        return x.copy()
    engine = _GROUPS.get(group_key)
    if engine is None:
        raise op_error(_NAME, f"no collective group with group_key={group_key} is registered "
                              f"(instance_key={instance_key})", [x])
    if engine.size != group_size:
        raise op_error(_NAME, f"group_size={group_size} but the group with group_key="
                              f"{group_key} has {engine.size} members", [x])
    if getattr(engine, "takes_device_arrays", False) and hasattr(xp, "asnumpy"):
        # A device engine (NCCL) reduces the device buffer on the current stream: the one
        # this kernel runs on. Its own copy, reduced in place.
        out = engine.all_reduce([x.copy()], _MERGE_OPS[merge_op])[0]
        if final_op == "Div":
            out = (out / group_size).astype(x.dtype, copy=False)
        return out
    host = np.ascontiguousarray(xp.asnumpy(x) if hasattr(xp, "asnumpy") else x)
    # Never re-run (its peers would wait for a second exchange): IEEE results, no signals.
    with quiet():
        out = engine.all_reduce([host], _MERGE_OPS[merge_op])[0]
        if final_op == "Div":
            out = (out / group_size).astype(host.dtype, copy=False)
    return xp.asarray(out)


COLLECTIVE_REDUCE = register_op(_NAME, _kernel, _infer, stateful=True, collective=True,
                                dtypes=_DTYPES, infer_from_types=True)


def collective_reduce(x, group_size, group_key, instance_key, merge_op="Add", final_op="Id",
                      name=None):
    """≈ `tf.raw_ops.CollectiveReduceV2` with its keys as attributes: `x` reduced across the
    `group_size` processes of the group (`merge_op`), then divided by `group_size` for
    `final_op="Div"` (a mean)."""
    del name
    x = convert_to_tensor(x)
    return execute(COLLECTIVE_REDUCE, (x,), {
        "group_size": int(group_size), "group_key": int(group_key),
        "instance_key": int(instance_key), "merge_op": merge_op, "final_op": final_op})


@get_op(_NAME).def_gradient
def _collective_reduce_grad(forward, dy):
    """Every process's output depends on every input: the input's gradient is the sum of the
    output gradients over the group, divided like the forward for a mean."""
    attrs = forward.attrs
    if attrs["merge_op"] != "Add":
        raise NotImplementedError(f"{_NAME} has a gradient for merge_op='Add' only.")
    return collective_reduce(dy, attrs["group_size"], attrs["group_key"],
                             attrs["instance_key"], "Add", attrs["final_op"])
