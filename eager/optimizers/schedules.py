"""Learning-rate schedules (≈ `tf.optimizers.schedules`): objects called with the step.

An optimizer calls a schedule with its `iterations` variable once per step and uses the result
(a number or a scalar tensor, cast to each variable's dtype) as that step's learning rate.
Subclass `LearningRateSchedule` and define `__call__(self, step)`; any other callable that
needs one argument is treated the same way, and a callable that takes none is called with
nothing (Keras 3's rule for plain callables).

The built-in schedules compute with eager ops on the step tensor, in Keras 3's order and
dtypes (the initial learning rate's: float32 for a Python float), so they trace: inside
`eager.function` the step is a graph tensor read on every call, and one trace serves every
step. Keras' `cond`s become `where`s (both sides are cheap scalars) or Python branches on
constructor arguments.
"""

from __future__ import annotations

import math

from ..core.tensor_conversion import convert_to_tensor
from ..ops import math_ops as _m
from ..ops.special_math_ops import ceil, floor

__all__ = ["LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay",
           "PolynomialDecay", "InverseTimeDecay", "CosineDecay", "CosineDecayRestarts",
           "serialize", "deserialize"]


class LearningRateSchedule:
    """≈ `tf.optimizers.schedules.LearningRateSchedule`: `schedule(step)` -> learning rate."""

    def __call__(self, step):
        raise NotImplementedError(f"Learning rate schedule '{type(self).__name__}' must "
                                  "override `__call__(self, step)`.")

    def get_config(self) -> dict:
        raise NotImplementedError(f"Learning rate schedule '{type(self).__name__}' must "
                                  "override `get_config()` in order to be serializable.")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _check_steps(name, value):
    if value <= 0:
        raise ValueError(f"Argument `{name}` must be > 0. Received: {name}={value}")


def _start(initial_learning_rate, step):
    """The initial rate as a tensor (its dtype is the schedule's) and the step in that dtype."""
    initial = convert_to_tensor(initial_learning_rate)
    return initial, _m.cast(step, initial.dtype)


class ExponentialDecay(LearningRateSchedule):
    """≈ `tf.optimizers.schedules.ExponentialDecay`: `initial_learning_rate * decay_rate **
    (step / decay_steps)`, the exponent floored with `staircase`."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="ExponentialDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name
        _check_steps("decay_steps", decay_steps)

    def __call__(self, step):
        initial, step = _start(self.initial_learning_rate, step)
        p = step / _m.cast(self.decay_steps, initial.dtype)
        if self.staircase:
            p = floor(p)
        return _m.multiply(initial, _m.pow(_m.cast(self.decay_rate, initial.dtype), p))

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class PiecewiseConstantDecay(LearningRateSchedule):
    """≈ `tf.optimizers.schedules.PiecewiseConstantDecay`: `values[0]` up to and including
    `boundaries[0]`, `values[1]` up to `boundaries[1]`, ..., `values[-1]` after the last."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError("The length of boundaries should be 1 less than the length of "
                             f"values. Received: boundaries={boundaries} of length "
                             f"{len(boundaries)}, and values={values} of length {len(values)}.")
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step):
        step = convert_to_tensor(step)
        boundaries = [_m.cast(convert_to_tensor(b), step.dtype) for b in self.boundaries]
        values = [convert_to_tensor(v) for v in self.values]
        dtype = values[0].dtype
        # A sum of value * [step in its range], as Keras computes it.
        result = _m.cast(step <= boundaries[0], dtype) * values[0]
        result = result + _m.cast(step > boundaries[-1], dtype) * values[-1]
        for low, high, value in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
            in_range = _m.logical_and(step > low, step <= high)
            result = result + _m.cast(in_range, dtype) * value
        return result

    def get_config(self) -> dict:
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """≈ `tf.optimizers.schedules.PolynomialDecay`: from `initial_learning_rate` to
    `end_learning_rate` along `(1 - step / decay_steps) ** power`; with `cycle`, the decay
    restarts at each multiple of `decay_steps`."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0,
                 cycle=False, name="PolynomialDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name
        _check_steps("decay_steps", decay_steps)

    def __call__(self, step):
        initial, step = _start(self.initial_learning_rate, step)
        dtype = initial.dtype
        end = _m.cast(self.end_learning_rate, dtype)
        decay_steps = _m.cast(self.decay_steps, dtype)
        if self.cycle:
            multiplier = _m.where(_m.equal(step, 0), _m.cast(1.0, dtype),
                                  ceil(step / _m.cast(self.decay_steps, dtype)))
            decay_steps = decay_steps * multiplier
        else:
            step = _m.minimum(step, decay_steps)
        p = step / decay_steps
        return (initial - end) * _m.pow(1 - p, _m.cast(self.power, dtype)) + end

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "end_learning_rate": self.end_learning_rate,
                "power": self.power, "cycle": self.cycle, "name": self.name}


class InverseTimeDecay(LearningRateSchedule):
    """≈ `tf.optimizers.schedules.InverseTimeDecay`: `initial_learning_rate / (1 + decay_rate *
    step / decay_steps)`, the quotient floored with `staircase`."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="InverseTimeDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name
        _check_steps("decay_steps", decay_steps)

    def __call__(self, step):
        initial, step = _start(self.initial_learning_rate, step)
        dtype = initial.dtype
        p = step / _m.cast(self.decay_steps, dtype)
        if self.staircase:
            p = floor(p)
        return initial / (_m.cast(1, dtype) + _m.cast(self.decay_rate, dtype) * p)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


def _cosine(dtype, fraction):
    return 0.5 * (1.0 + _m.cos(_m.cast(math.pi, dtype) * fraction))


class CosineDecay(LearningRateSchedule):
    """≈ `tf.optimizers.schedules.CosineDecay`: an optional linear warmup from
    `initial_learning_rate` to `warmup_target` over `warmup_steps`, then a cosine decay over
    `decay_steps` down to `alpha` times the rate it started from."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_steps = warmup_steps
        self.warmup_target = warmup_target
        _check_steps("decay_steps", decay_steps)

    def _decayed(self, step, decay_steps, decay_from, dtype):
        decayed = (1 - self.alpha) * _cosine(dtype, step / decay_steps) + self.alpha
        return decay_from * decayed

    def __call__(self, step):
        initial, step = _start(self.initial_learning_rate, step)
        dtype = initial.dtype
        decay_steps = _m.cast(self.decay_steps, dtype)
        if self.warmup_target is None:
            return self._decayed(_m.minimum(step, decay_steps), decay_steps, initial, dtype)
        target = _m.cast(self.warmup_target, dtype)
        warmup_steps = _m.cast(self.warmup_steps, dtype)
        step = _m.minimum(step, decay_steps + warmup_steps)
        warming = (target - initial) * (step / warmup_steps) + initial
        decaying = self._decayed(step - warmup_steps, decay_steps, target, dtype)
        return _m.where(step < warmup_steps, warming, decaying)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


class CosineDecayRestarts(LearningRateSchedule):
    """≈ `tf.optimizers.schedules.CosineDecayRestarts` (SGDR): cosine decays over periods
    that grow by `t_mul`, each restarting from a rate `m_mul` times the previous one."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0,
                 alpha=0.0, name="SGDRDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name
        _check_steps("first_decay_steps", first_decay_steps)

    def __call__(self, step):
        initial, step = _start(self.initial_learning_rate, step)
        dtype = initial.dtype
        alpha = _m.cast(self.alpha, dtype)
        t_mul = _m.cast(self._t_mul, dtype)
        fraction = step / _m.cast(self.first_decay_steps, dtype)
        if self._t_mul == 1.0:
            restart = floor(fraction)
            fraction = fraction - restart
        else:  # periods growing geometrically: which one, and how far into it
            restart = floor(_m.log(1.0 - fraction * (1.0 - t_mul)) / _m.log(t_mul))
            done = (1.0 - _m.pow(t_mul, restart)) / (1.0 - t_mul)
            fraction = (fraction - done) / _m.pow(t_mul, restart)
        factor = _m.pow(_m.cast(self._m_mul, dtype), restart)
        cosine = 0.5 * factor * (1.0 + _m.cos(_m.cast(math.pi, dtype) * fraction))
        return initial * ((1 - alpha) * cosine + alpha)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self._t_mul,
                "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}


_BUILT_IN = {cls.__name__: cls for cls in (ExponentialDecay, PiecewiseConstantDecay,
                                           PolynomialDecay, InverseTimeDecay, CosineDecay,
                                           CosineDecayRestarts)}


def serialize(learning_rate_schedule) -> dict:
    """A schedule as the dict Keras 3 writes (module, class name, config)."""
    return {"module": "keras.optimizers.schedules",
            "class_name": type(learning_rate_schedule).__name__,
            "config": learning_rate_schedule.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    """The schedule a `serialize` dict (or `{"class_name", "config"}`) describes; classes are
    looked up in `custom_objects`, then among the built-in schedules."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret serialized decay: {config!r}. Expected a dict "
                         "with 'class_name' and 'config' keys.")
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _BUILT_IN.get(name)
    if cls is None:
        raise ValueError(f"Unknown decay: '{name}'. Please ensure you are using a "
                         "`keras.utils.custom_object_scope` and that this object is included "
                         "in the scope. See "
                         "https://keras.io/guides/serialization_and_saving/"
                         "#registering-the-custom-object for details.")
    return cls.from_config(dict(config.get("config", {})))

