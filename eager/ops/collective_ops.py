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

Overlap: `CollectiveReduceNStart` hands a bucket's all-reduce to the engine's communication
thread and returns at once with a handle (a variant scalar); `CollectiveReduceNDone` waits for
it and returns the reduced tensors. Started in the order issued, on every worker
(`eager.distribute.collectives.ordered`). A traced step never holds them: the graph keeps one
`CollectiveReduceN` (one meaning, one gradient) and the runtime's `overlap_collectives` pass
splits it, moving the start to just after the bucket's last gradient is computed, so the
exchange runs while the backward pass computes the next bucket. An eager step issues the
start itself, from the backward walk, as soon as a bucket's gradients are final
(`eager.distribute.eager_overlap`).

`CollectiveReduceN` is the same all-reduce of several tensors at once (a gradient bucket),
one output per input, shapes kept: the engine packs them into its own transfer buffer (the
shared-memory window among one host's processes), so a worker with one replica needs no
concatenation into a fused buffer and no split back, two copies of every gradient and a dozen
small ops per step fewer.
"""

from __future__ import annotations

import functools
import itertools
import threading

import numpy as np

from ..base import dtypes as _dt
from ..base.ieee import quiet
from ..core.dispatch import execute
from ..core.registry import get_op, op_error, register_op
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from .creation_ops import zeros_like

__all__ = ["COLLECTIVE_REDUCE", "COLLECTIVE_REDUCE_N", "COLLECTIVE_REDUCE_N_START",
           "COLLECTIVE_REDUCE_N_DONE", "StartedReduction", "collective_reduce",
           "collective_reduce_n", "register_group", "unregister_group", "group_engine",
           "overlaps"]

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
    host = np.asarray(xp.asnumpy(x) if hasattr(xp, "asnumpy") else x, order="C")  # 0-d kept
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


_NAME_N = "CollectiveReduceN"


def _infer_n(*xs, group_size, group_key, instance_key, merge_op="Add", final_op="Id"):
    if not xs:
        raise op_error(_NAME_N, "needs at least one tensor to reduce")
    for x in xs:
        _check_attrs(x, group_size, merge_op, final_op)
    return tuple(TensorSpec(x.shape, x.dtype) for x in xs)


def _kernel_n(xp, *xs, group_size, group_key, instance_key, merge_op="Add", final_op="Id"):
    if group_size == 1:
        return tuple(x.copy() for x in xs)
    engine = _GROUPS.get(group_key)
    if engine is None or engine.size != group_size or hasattr(xp, "asnumpy"):
        # No engine, a size mismatch (the one-tensor kernel says which), or device arrays:
        # one tensor at a time through CollectiveReduceV2's kernel.
        return tuple(_kernel(xp, x, group_size=group_size, group_key=group_key,
                             instance_key=instance_key, merge_op=merge_op, final_op=final_op)
                     for x in xs)
    hosts = [np.asarray(x, order="C") for x in xs]  # 0-d arrays stay 0-d
    return _reduce_hosts(engine, hosts, merge_op, final_op, group_size)


def _reduce_hosts(engine, hosts, merge_op, final_op, group_size) -> tuple:
    """The engine's all-reduce of contiguous host arrays, divided for a mean. Quietly: never
    re-run (peers would wait for a second exchange), IEEE results, no signals."""
    with quiet():
        outs = engine.all_reduce(hosts, _MERGE_OPS[merge_op])
        if final_op == "Div":
            outs = [(out / group_size).astype(host.dtype, copy=False)
                    for out, host in zip(outs, hosts)]
    return tuple(outs)


COLLECTIVE_REDUCE_N = register_op(_NAME_N, _kernel_n, _infer_n, stateful=True, collective=True,
                                  dtypes=_DTYPES, infer_from_types=True, num_outputs=None)


def collective_reduce_n(tensors, group_size, group_key, instance_key, merge_op="Add",
                        final_op="Id"):
    """Each of `tensors` reduced across the group's processes as by `collective_reduce`, in one
    exchange (see the module doc); a list of tensors of the inputs' shapes."""
    tensors = tuple(convert_to_tensor(t) for t in tensors)
    return list(execute(COLLECTIVE_REDUCE_N, tensors, {
        "group_size": int(group_size), "group_key": int(group_key),
        "instance_key": int(instance_key), "merge_op": merge_op, "final_op": final_op}))


def overlaps(group_key, group_size) -> bool:
    """Whether an all-reduce of this group is worth splitting into a start and a wait: more
    than one process, a host engine (not NCCL, which runs on device streams) with a
    communication thread (`Collectives.asynchronous`)."""
    engine = _GROUPS.get(group_key)
    return (group_size > 1 and engine is not None and engine.size == group_size
            and engine.asynchronous and not getattr(engine, "takes_device_arrays", False))


class StartedReduction:
    """The value of a `CollectiveReduceNStart` handle: the engine's Future of the reduced
    arrays. A variant scalar, as TensorFlow's handles to things in flight are."""

    __slots__ = ("future",)

    eager_dtype = dtype = _dt.variant
    shape = ()
    ndim = 0

    def __init__(self, future):
        self.future = future

    def __repr__(self):
        return f"<StartedReduction {'done' if self.future.done() else 'in flight'}>"


def _start_kernel(xp, *xs, group_size, group_key, instance_key, merge_op="Add", final_op="Id"):
    if not overlaps(group_key, group_size):
        raise op_error(_NAME_START, f"collective group {group_key} (instance_key="
                                    f"{instance_key}) has no asynchronous engine of "
                                    f"{group_size} processes", xs)
    engine = _GROUPS[group_key]
    hosts = [np.asarray(x, order="C") for x in xs]  # 0-d arrays stay 0-d
    # The communication thread runs the exchange (`_reduce_hosts` sets its own error state).
    return StartedReduction(engine.start(functools.partial(
        _reduce_hosts, engine, hosts, merge_op, final_op, group_size)))


def _infer_start(*xs, group_size, group_key, instance_key, merge_op="Add", final_op="Id"):
    _infer_n(*xs, group_size=group_size, group_key=group_key, instance_key=instance_key,
             merge_op=merge_op, final_op=final_op)
    return TensorSpec((), _dt.variant)


def _done_kernel(xp, handle, *, shapes, dtypes, group_key, instance_key):
    outs = handle.future.result()
    if len(outs) != len(shapes):
        raise op_error(_NAME_DONE, f"the started all-reduce (group_key={group_key}, "
                                   f"instance_key={instance_key}) returned {len(outs)} tensors "
                                   f"for {len(shapes)}")
    return tuple(xp.asarray(out) for out in outs)


def _infer_done(handle, *, shapes, dtypes, group_key, instance_key):
    if handle.dtype is not _dt.variant:
        raise op_error(_NAME_DONE, f"expects the variant handle of a {_NAME_START}, got "
                                   f"{handle.dtype.name}", [handle])
    return tuple(TensorSpec(shape, dtype) for shape, dtype in zip(shapes, dtypes))


_NAME_START = "CollectiveReduceNStart"
_NAME_DONE = "CollectiveReduceNDone"
COLLECTIVE_REDUCE_N_START = register_op(_NAME_START, _start_kernel, _infer_start, stateful=True,
                                        collective=True, dtypes=_DTYPES,
                                        infer_from_types=True, differentiable=False)
COLLECTIVE_REDUCE_N_DONE = register_op(_NAME_DONE, _done_kernel, _infer_done, stateful=True,
                                       num_outputs=None, differentiable=False)


def done_attrs(tensors_or_specs, attrs) -> dict:
    """`CollectiveReduceNDone`'s attributes for a started bucket of these tensors (or specs)."""
    return {"shapes": tuple(tuple(t.shape) for t in tensors_or_specs),
            "dtypes": tuple(t.dtype for t in tensors_or_specs),
            "group_key": attrs["group_key"], "instance_key": attrs["instance_key"]}


@get_op(_NAME_N).def_gradient
def _collective_reduce_n_grad(forward, *dys):
    """As `CollectiveReduceV2`'s gradient, for every output at once (an unused output's
    gradient is zeros)."""
    attrs = forward.attrs
    if attrs["merge_op"] != "Add":
        raise NotImplementedError(f"{_NAME_N} has a gradient for merge_op='Add' only.")
    dys = [zeros_like(x) if dy is None else dy for dy, x in zip(dys, forward.inputs)]
    return tuple(collective_reduce_n(dys, attrs["group_size"], attrs["group_key"],
                                     attrs["instance_key"], "Add", attrs["final_op"]))


@get_op(_NAME).def_gradient
def _collective_reduce_grad(forward, dy):
    """Every process's output depends on every input: the input's gradient is the sum of the
    output gradients over the group, divided like the forward for a mean."""
    attrs = forward.attrs
    if attrs["merge_op"] != "Add":
        raise NotImplementedError(f"{_NAME} has a gradient for merge_op='Add' only.")
    return collective_reduce(dy, attrs["group_size"], attrs["group_key"],
                             attrs["instance_key"], "Add", attrs["final_op"])
