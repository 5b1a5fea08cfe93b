"""`tf.data.Options`: settings a pipeline carries (`with_options`, `options()`).

The options are recorded and merged as TensorFlow merges them (an option set later wins over
one set earlier, unset ones leave the other's value), so code that sets and reads them works;
eager does not act on any of them yet (a parallel `map` or `batch` is deterministic unless its
own `deterministic=False`).
"""

from __future__ import annotations

__all__ = ["Options", "OptimizationOptions", "ThreadingOptions", "AutotuneOptions",
           "DistributeOptions", "AutoShardPolicy", "ExternalStatePolicy"]


class _OptionsGroup:
    """Attributes named in `_FIELDS` (name -> default); others cannot be set."""

    _FIELDS: dict = {}
    _GROUPS: dict = {}

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


class ThreadingOptions(_OptionsGroup):
    _FIELDS = dict(max_intra_op_parallelism=None, private_threadpool_size=None)


class AutotuneOptions(_OptionsGroup):
    _FIELDS = dict(enabled=None, cpu_budget=None, ram_budget=None, autotune_algorithm=None,
                   initial_parallelism=None, min_parallelism=None)


class DistributeOptions(_OptionsGroup):
    _FIELDS = dict(auto_shard_policy=None, num_devices=None)


class AutoShardPolicy:
    OFF, AUTO, FILE, DATA, HINT = -1, 0, 1, 2, 3


class ExternalStatePolicy:
    WARN, IGNORE, FAIL = 0, 1, 2


class Options(_OptionsGroup):
    """≈ `tf.data.Options()`."""

    _GROUPS = dict(autotune=AutotuneOptions, experimental_distribute=DistributeOptions,
                   experimental_optimization=OptimizationOptions, threading=ThreadingOptions)
    _FIELDS = dict(deterministic=None, experimental_deterministic=None,
                   experimental_external_state_policy=None, experimental_slack=None,
                   experimental_symbolic_checkpoint=None, experimental_warm_start=None,
                   dataset_name=None, framework_type=None,
                   autotune=None, experimental_distribute=None, experimental_optimization=None,
                   threading=None)

    def merge(self, options):
        """The options with `options`' set values taking precedence."""
        if not isinstance(options, Options):
            raise TypeError(f"Expected `tf.data.Options` but got {type(options)}.")
        return self._merged(options)
