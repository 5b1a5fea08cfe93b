"""The options every Keras 3 optimizer takes, applied around its fused updates: loss-scale
unscaling, gradient clipping (`clipnorm`, `clipvalue`, `global_clipnorm`), decoupled weight
decay, gradient accumulation and the exponential moving average of the weights.

`Optimizer._apply` validates and converts the gradients, then calls `apply` here only when one
of these options is set, so a plain step never pays for them. The order is Keras 3's
(`BaseOptimizer.apply` and `_backend_apply_gradients`): gradients divided by
`loss_scale_factor`; then, on an update step, clipping, weight decay (`var -= var * wd * lr`,
one fused op per variable) and the optimizer's fused updates; with accumulation, the other
steps only add the gradients to the "gradient_accumulator" slots, and an update step uses
`(gradient + accumulated) / steps` and zeroes the accumulators; then the moving averages
(the "average" slots); the step counter is incremented by the caller.

Eagerly the accumulation and EMA-overwrite branches are Python `if`s on the step counter's
host value; while tracing (or with the counter on an accelerator) they are `eager.cond`s on
its tensor, so a traced step is traced once.
"""

from __future__ import annotations

import re

import numpy as np

from ..control_flow.api import cond
from ..core.tensor_conversion import convert_to_tensor
from ..ops import composite_ops as _composite
from ..ops import math_ops as _math
from ..ops.training_ops_options import APPLY_MOVING_AVERAGE, APPLY_WEIGHT_DECAY
from ..ops.array_ops import stack
from ..ops.creation_ops import zeros_like
from ..tensor import IndexedSlices
from .scalars import scalar_as

__all__ = ["SLOT_NAMES", "WeightDecayExclusions", "apply", "check_arguments",
           "overwrite_with_averages", "slot_groups"]

#: The slots the options keep per trained variable, in Keras' creation order.
SLOT_NAMES = ("average", "gradient_accumulator")


def check_arguments(clipnorm, clipvalue, global_clipnorm, use_ema, ema_momentum,
                    ema_overwrite_frequency, gradient_accumulation_steps):
    """Keras 3's checks of the base arguments, with its errors."""
    if gradient_accumulation_steps and not gradient_accumulation_steps >= 2:
        raise ValueError("`gradient_accumulation_steps` must be an integer >= 2. Received: "
                         f"gradient_accumulation_steps={gradient_accumulation_steps}")
    if use_ema:
        if ema_momentum > 1 or ema_momentum < 0:
            raise ValueError("`ema_momentum` must be in the range [0, 1]. Received: "
                             f"ema_momentum={ema_momentum}")
        if ema_overwrite_frequency and (not isinstance(ema_overwrite_frequency, int)
                                        or ema_overwrite_frequency < 1):
            raise ValueError("`ema_overwrite_frequency` must be an integer >= 1 or None. "
                             f"Received: ema_overwrite_frequency={ema_overwrite_frequency}")
    if sum(a is not None for a in (clipnorm, clipvalue, global_clipnorm)) > 1:
        raise ValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
                         f"Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
                         f"global_clipnorm={global_clipnorm}")


def slot_groups(opt) -> tuple:
    """The option slots `opt` needs, as creation groups (before the optimizer's own)."""
    groups = ()
    if opt.use_ema:
        groups += (("average",),)
    if opt.gradient_accumulation_steps:
        groups += (("gradient_accumulator",),)
    return groups


class WeightDecayExclusions:
    """Which variables weight decay skips: those given (by identity) and those whose name
    matches one of the patterns (`re.search`, as Keras); decisions are cached per variable."""

    __slots__ = ("_uids", "_pattern", "_cache")

    def __init__(self, var_list=None, var_names=None):
        self._uids = {v._handle.uid for v in var_list} if var_list else set()
        self._pattern = re.compile("|".join(set(var_names))) if var_names else None
        self._cache = {}

    def decays(self, var) -> bool:
        uid = var._handle.uid
        decision = self._cache.get(uid)
        if decision is None:
            decision = self._cache[uid] = not (
                uid in self._uids
                or (self._pattern is not None and self._pattern.search(var.name) is not None))
        return decision


# -----------------------------------------------------------------------------------------------
# One step
# -----------------------------------------------------------------------------------------------

def apply(opt, work, lr, fast):
    """One step of `opt` with its options; `work` holds (variable, slots, gradient, indices)
    (indices None for a dense gradient), validated and of the variables' dtypes."""
    scale = opt.loss_scale_factor
    if scale is not None:
        work = [(var, slots, grad / scale, indices) for var, slots, grad, indices in work]
    steps = opt.gradient_accumulation_steps
    if steps:
        _accumulate_or_update(opt, work, lr, fast, steps)
    else:
        _update(opt, work, lr, fast)
    if opt.use_ema:
        _update_moving_averages(opt)


def _update(opt, work, lr, fast):
    work = _clipped(opt, work)
    if opt.weight_decay is not None:
        exclusions = opt._exclude_from_weight_decay
        prepared = {}
        for var, _, _, _ in work:
            if exclusions.decays(var):
                dtype = var.dtype.as_numpy_dtype
                scalars = prepared.get(dtype)
                if scalars is None:  # Keras casts the Python float through float32
                    scalars = prepared[dtype] = (np.array(np.float32(opt.weight_decay), dtype),
                                                 scalar_as(lr, dtype))
                opt._run(APPLY_WEIGHT_DECAY, (var,), scalars, {}, fast)
    opt.run_updates(work, lr, fast)


def _dense(grad, indices, var):
    """An IndexedSlices gradient as the dense tensor Keras' arithmetic turns it into."""
    if indices is None:
        return grad
    return convert_to_tensor(IndexedSlices(grad, indices, var.shape.as_list()))


def _clipped(opt, work):
    """Keras 3's `_clip_gradients`: a positive `clipnorm` clips each gradient by its norm (the
    slices' values for IndexedSlices, as `tf.clip_by_norm`), a positive `global_clipnorm` all of
    them by their global norm, a positive `clipvalue` each element (the slices summed first)."""
    if opt.clipnorm and opt.clipnorm > 0:
        return [(var, slots, _composite.clip_by_norm(grad, opt.clipnorm), indices)
                for var, slots, grad, indices in work]
    if opt.global_clipnorm and opt.global_clipnorm > 0:
        # Keras' clip_by_global_norm: sqrt(sum(stack(sum(g**2)))); scale = clip * min(1 / norm,
        # 1 / clip), plus (norm - norm) so that an infinite or NaN norm gives NaN.
        squares = [_math.reduce_sum(_math.square(grad)) for _, _, grad, _ in work]
        dtype = squares[0].dtype
        norm = _math.sqrt(_math.reduce_sum(stack([_math.cast(s, dtype)
                                                          for s in squares])))
        clip = opt.global_clipnorm
        scale = clip * _math.minimum(1.0 / norm, 1.0 / clip)
        scale = scale + (norm - norm)
        return [(var, slots, grad * _math.cast(scale, grad.dtype), indices)
                for var, slots, grad, indices in work]
    if opt.clipvalue and opt.clipvalue > 0:
        v = opt.clipvalue
        return [(var, slots, _math.clip_by_value(_dense(grad, indices, var), -v, v), None)
                for var, slots, grad, indices in work]
    return work


def _accumulate_or_update(opt, work, lr, fast, steps):
    """Keras 3's gradient accumulation: every `steps`-th step updates with the mean gradient
    of the last `steps` steps; the others only accumulate."""
    accumulators = [opt._option_slots_of[var._handle.uid][1] for var, _, _, _ in work]

    def update():
        averaged = [(var, slots, (_dense(grad, indices, var) + acc) / steps, None)
                    for (var, slots, grad, indices), acc in zip(work, accumulators)]
        _update(opt, averaged, lr, False)
        for acc in opt._slots["gradient_accumulator"]:
            acc.assign(zeros_like(acc), read_value=False)

    def accumulate():
        for (var, _, grad, indices), acc in zip(work, accumulators):
            acc.assign(acc + _dense(grad, indices, var), read_value=False)

    step = opt.host_iterations()
    if step is not None:
        (update if (step + 1) % steps == 0 else accumulate)()
    else:
        cond(_math.equal((opt._iterations.value() + 1) % steps, 0),
             lambda: _none(update()), lambda: _none(accumulate()))


def _none(_):
    return None


def _update_moving_averages(opt):
    """average = m * average + (1 - m) * var for every trained variable, with m = ema_momentum
    except on the first update (m = 0: the average starts at the variable); then, every
    `ema_overwrite_frequency` updates, the variables take their averages."""
    step = opt.host_iterations()
    steps = opt.gradient_accumulation_steps
    if step is not None and steps:
        step //= steps
    for var, average in zip(opt._trained, opt._slots["average"]):
        dtype = var.dtype
        if step is not None:
            momentum = np.array(opt.ema_momentum if step != 0 else 0.0, dtype.as_numpy_dtype)
        else:
            momentum = (_math.cast(_math.not_equal(opt.iterations, 0), dtype)
                        * _math.cast(np.float32(opt.ema_momentum), dtype))
        opt._run(APPLY_MOVING_AVERAGE, (average,), (momentum, var.value()), {}, False)
    frequency = opt.ema_overwrite_frequency
    if frequency:
        if step is not None:
            if (step + 1) % frequency == 0:
                overwrite_with_averages(opt, opt._trained)
        else:
            cond(_math.equal((opt.iterations + 1) % frequency, 0),
                 lambda: _none(overwrite_with_averages(opt, opt._trained)), lambda: None)


def overwrite_with_averages(opt, variables):
    """Each variable takes its moving average (Keras' `finalize_variable_values`)."""
    averages = opt._slots["average"]
    if len(variables) != len(averages):
        raise ValueError(f"The length of model variables ({len(variables)}) to override does "
                         "not match the length of model variables stored in the optimizer "
                         f"({len(averages)}). Please check if the optimizer was called on your "
                         "model.")
    for var, average in zip(variables, averages):
        var.assign(average, read_value=False)

