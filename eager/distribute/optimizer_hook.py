"""Gradients applied to distributed variables (installed into the optimizers at import: the
optimizers sit below this layer and call the hook, never import it).

Inside `strategy.run`, `optimizer.apply_gradients` pauses each replica in a `merge_call`; the
merge sums the replicas' gradients (TF's rule: SUM, the loss is scaled by the global batch
size) in buckets, then runs the optimizer's fused update once per component device
(`extended._component_devices`: every replica's device for mirrored variables, the parameter
device for `CentralStorageStrategy`'s central ones) on that device's components and slots, and
advances `iterations` once. In cross-replica context the given gradients go to every component.
"""

from __future__ import annotations

from ..core import context as _core
from ..optimizers import optimizer as _optimizer
from . import context as _ctx
from .reduce_util import ReduceOp


def _is_distributed(variables):
    return any(getattr(v, "_is_distributed_variable", False) for v in variables)


def _apply_components(strategy, opt, grads_per_component, variables):
    with strategy.scope(), opt._slot_lock:  # slots of distributed variables are distributed
        opt._create_slots(variables)
    opt.built = True
    lr = opt._current_lr()
    for r, device in enumerate(strategy.extended._component_devices):
        work = []
        for grad, var in zip(grads_per_component[r], variables):
            if grad is None:
                continue
            slots, _ = opt._slots_of[var._handle.uid]
            work.append((var.values[r], tuple(s.values[r] for s in slots), grad, None))
        if not work:
            raise ValueError("No gradients provided for any variable.")
        with _core.device(device):
            opt.run_updates(work, lr, False)
    for var in variables:
        if getattr(var, "_constraint", None) is not None:
            var.assign(var._constraint(var), read_value=False)
    opt._iterations.assign_add(1, read_value=False)


def _merge_apply(strategy, opt, grads, variables):
    present = [i for i, g in enumerate(grads) if g is not None]
    reduced = strategy.extended.batch_reduce_to(ReduceOp.SUM, [grads[i] for i in present])
    n = len(strategy.extended._component_devices)  # mirrored: this process's replicas
    per_component = [[None] * len(grads) for _ in range(n)]
    for i, mirrored in zip(present, reduced):
        for r in range(n):
            per_component[r][i] = mirrored.values[r]
    _apply_components(strategy, opt, per_component, variables)


def distributed_apply(opt, grads, variables) -> bool:
    """True when the variables were distributed and the update was done here."""
    if not _is_distributed(variables):
        return False
    strategy, replica = _ctx.current()
    if strategy is None:
        strategy = variables[0]._strategy
    if replica is not None:
        replica.merge_call(_merge_apply, args=(opt, list(grads), variables))
        return True
    n = len(strategy.extended._component_devices)
    _apply_components(strategy, opt, [list(grads)] * n, variables)
    return True


_optimizer.DISTRIBUTED_APPLY = distributed_apply
