"""`eager.autograph.experimental` ≈ `tf.autograph.experimental`: `do_not_convert`,
`set_loop_options`, `Feature`."""

from __future__ import annotations

import enum
import functools

__all__ = ["do_not_convert", "set_loop_options", "Feature"]


class Feature(enum.Enum):
    """≈ `tf.autograph.experimental.Feature`: optional conversions
    (`eager.function(experimental_autograph_options=...)`, `to_graph(...,
    experimental_optional_features=...)`). `BUILTIN_FUNCTIONS` (also in `ALL`) makes `print`
    of a traced tensor an `eager.print`; the others are accepted and change nothing (eager
    orders stateful ops itself, and converts asserts, equality and lists never)."""

    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


def uses_builtin_functions(features) -> bool:
    """Whether `features` (None, a Feature or a sequence of them) turns on
    `BUILTIN_FUNCTIONS`."""
    if features is None:
        return False
    if isinstance(features, Feature):
        features = (features,)
    found = set()
    for f in features:
        if not isinstance(f, Feature):
            raise TypeError(f"optional features must be eager.autograph.experimental.Feature "
                            f"values, got {f!r}.")
        found.add(f)
    return Feature.ALL in found or Feature.BUILTIN_FUNCTIONS in found


def do_not_convert(func=None):
    """≈ `tf.autograph.experimental.do_not_convert`: `func` is never converted, not when
    `eager.function` traces it nor when converted code calls it; its `if` on a traced tensor is
    then a TypeError, as without AutoGraph. Use as `@do_not_convert` or `do_not_convert(f)`."""
    if func is None:
        return do_not_convert

    @functools.wraps(func)
    def not_converted(*args, **kwargs):
        return func(*args, **kwargs)

    return not_converted


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                     shape_invariants=None):
    """≈ `tf.autograph.experimental.set_loop_options`: inside a loop of a converted function,
    options for the loop op it becomes (`maximum_iterations`; `shape_invariants`, a list of
    `(variable, shape)` pairs letting that variable's shape change across iterations;
    `parallel_iterations` and `swap_memory` are accepted and change nothing). The converter
    reads the call where it stands; run as a function, it does nothing."""
    del parallel_iterations, swap_memory, maximum_iterations, shape_invariants
