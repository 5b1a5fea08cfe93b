"""`tf.data.Options`: settings a pipeline carries (`with_options`, `options()`).

The options are recorded and merged as TensorFlow merges them (an option set later wins over
one set earlier, unset ones leave the other's value), and typed as TensorFlow types them (a
wrong type is its TypeError). `iterator_context` applies the ones eager acts on (determinism,
the thread limit, AUTOTUNE's budgets) to every iterator of the pipeline; the others are
recorded only (docs/API.md lists which).
"""

from __future__ import annotations

import enum

__all__ = ["Options", "OptimizationOptions", "ThreadingOptions", "AutotuneOptions",
           "DistributeOptions", "AutoShardPolicy", "ExternalStatePolicy"]


class _OptionsGroup:
    """Attributes named in `_FIELDS` (name -> default); others cannot be set."""

    _FIELDS: dict = {}
    _GROUPS: dict = {}
    _TYPES: dict = {}  # name -> the type TensorFlow requires of a value that is not None

    def __init__(self):
        object.__setattr__(self, "_values", {})
        for name, cls in self._GROUPS.items():
            self._values[name] = cls()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        if name in self._FIELDS:
            return self._FIELDS[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        if name not in self._FIELDS or name in self._GROUPS:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        kind = self._TYPES.get(name)
        if kind is not None and value is not None and not isinstance(value, kind):
            raise TypeError(f"Property \"{name}\" must be of type {kind}, got: {value!r} "
                            f"(type: {type(value)})")
        self._values[name] = value

    def _merged(self, other):
        out = type(self)()
        for name in self._FIELDS:
            if name in self._GROUPS:
                out._values[name] = self._values[name]._merged(other._values[name])
            elif name in other._values:
                out._values[name] = other._values[name]
            elif name in self._values:
                out._values[name] = self._values[name]
        return out

    def changes(self, other):
        """(field, value here, value in `other`) for each field both set to different values
        (what merging `other` in changes, which TensorFlow warns about)."""
        for name in self._FIELDS:
            if name in self._GROUPS:
                yield from self._values[name].changes(other._values[name])
            elif name in self._values and name in other._values and \
                    self._values[name] != other._values[name]:
                yield name, self._values[name], other._values[name]

    def __eq__(self, other):
        return type(other) is type(self) and all(
            getattr(self, n) == getattr(other, n) for n in self._FIELDS)

    __hash__ = None


class OptimizationOptions(_OptionsGroup):
    _FIELDS = dict(apply_default_optimizations=None, filter_fusion=None,
                   filter_parallelization=None, inject_prefetch=None, map_and_batch_fusion=None,
                   map_and_filter_fusion=None, map_fusion=None, map_parallelization=None,
                   noop_elimination=None, parallel_batch=None, seq_interleave_prefetch=None,
                   shuffle_and_repeat_fusion=None)
    _TYPES = dict.fromkeys(_FIELDS, bool)


class ThreadingOptions(_OptionsGroup):
    _FIELDS = dict(max_intra_op_parallelism=None, private_threadpool_size=None)
    _TYPES = dict(max_intra_op_parallelism=int, private_threadpool_size=int)


class AutotuneOptions(_OptionsGroup):
    _FIELDS = dict(enabled=None, cpu_budget=None, ram_budget=None, autotune_algorithm=None,
                   initial_parallelism=None, min_parallelism=None)
    _TYPES = dict(enabled=bool, cpu_budget=int, ram_budget=int, initial_parallelism=int,
                  min_parallelism=int)


class AutoShardPolicy(enum.IntEnum):
    """≈ `tf.data.experimental.AutoShardPolicy`: how a multi-worker strategy splits a dataset
    between workers (`eager.distribute.auto_shard`)."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class DistributeOptions(_OptionsGroup):
    _FIELDS = dict(auto_shard_policy=AutoShardPolicy.AUTO, num_devices=None)
    _TYPES = dict(auto_shard_policy=AutoShardPolicy, num_devices=int)


class ExternalStatePolicy:
    WARN, IGNORE, FAIL = 0, 1, 2


class Options(_OptionsGroup):
    """≈ `tf.data.Options()`."""

    _GROUPS = dict(autotune=AutotuneOptions, experimental_distribute=DistributeOptions,
                   experimental_optimization=OptimizationOptions, threading=ThreadingOptions)
    _FIELDS = dict(deterministic=None,
                   experimental_external_state_policy=None, experimental_slack=None,
                   experimental_symbolic_checkpoint=None, experimental_warm_start=None,
                   dataset_name=None, framework_type=None,
                   autotune=None, experimental_distribute=None, experimental_optimization=None,
                   threading=None)
    _TYPES = dict(deterministic=bool, experimental_slack=bool,
                  experimental_symbolic_checkpoint=bool, experimental_warm_start=bool)

    def __getattr__(self, name):
        if name == "experimental_deterministic":  # TensorFlow's older name, an alias
            name = "deterministic"
        return super().__getattr__(name)

    def __setattr__(self, name, value):
        if name == "experimental_deterministic":
            name = "deterministic"
        super().__setattr__(name, value)

    def merge(self, options):
        """The options with `options`' set values taking precedence."""
        if not isinstance(options, Options):
            raise TypeError(f"Expected `tf.data.Options` but got {type(options)}.")
        return self._merged(options)
