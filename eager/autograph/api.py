"""The entry points: `to_graph`, `to_code`, and what `eager.function(autograph=True)` traces.
"""

from __future__ import annotations

import types

from .conversion import Options, convert, converted_source, why_not_converted
from .errors import ConversionError
from .experimental import uses_builtin_functions

__all__ = ["to_graph", "to_code", "converting_call"]


def _options(recursive, features) -> Options:
    return Options.get(recursive=recursive, builtin_functions=uses_builtin_functions(features))


def _function_of(entity):
    """(the Python function to convert, the object it is bound to or None). An
    `eager.function` stands for the Python function it traces (its `python_function`)."""
    if isinstance(entity, types.MethodType) and isinstance(entity.__func__, types.FunctionType):
        return entity.__func__, entity.__self__
    if isinstance(entity, types.FunctionType):
        return entity, None
    traced = getattr(type(entity), "python_function", None)
    if isinstance(traced, property):
        return _function_of(entity.python_function)
    raise TypeError(f"eager.autograph converts Python functions and methods, got "
                    f"{type(entity).__name__} {entity!r}.")


def to_graph(entity, recursive=True, experimental_optional_features=None):
    """≈ `tf.autograph.to_graph`: the converted form of a Python function or method, whose
    `if` / `while` / `for` on a traced tensor become `eager.cond` / `eager.while_loop` when it
    runs inside `eager.function` (and run as Python eagerly). With `recursive=True` the
    functions it calls are converted when called. Eager's own functions and `do_not_convert`
    ones are returned as they are; a function whose source cannot be read is a
    `ConversionError` (a ValueError)."""
    function, bound = _function_of(entity)
    options = _options(recursive, experimental_optional_features)
    converted = convert(function, options)
    if converted is None:
        reason = why_not_converted(function)
        if isinstance(reason, ConversionError):
            raise reason
        return entity
    return converted if bound is None else types.MethodType(converted, bound)


def to_code(entity, recursive=True, experimental_optional_features=None) -> str:
    """≈ `tf.autograph.to_code`: the converted code of a Python function or method, as Python
    source (what `to_graph` runs; its lines keep the user's line numbers in tracebacks)."""
    function, _ = _function_of(entity)
    return converted_source(function, _options(recursive, experimental_optional_features))


class converting_call:  # noqa: N801 - a function-like object
    """`python_function(*args, **kwargs)` through AutoGraph: what `eager.function` traces when
    `autograph=True`. The function is converted on the first call (and found in the cache
    after), or called as it is when it is not converted (see `eager.autograph.conversion`)."""

    __slots__ = ("_function", "_call", "__name__", "__wrapped__")

    def __init__(self, python_function, experimental_autograph_options=None):
        self._function = python_function
        self._call = _options(True, experimental_autograph_options).caller
        self.__name__ = getattr(python_function, "__name__", "function")
        self.__wrapped__ = python_function

    def __call__(self, *args, **kwargs):
        return self._call(self._function, args, kwargs)

    def __repr__(self):
        # The user's function: messages that name what is traced (TensorFlow's "in compilation
        # of <function f at ...>") name the function the user wrote, not this wrapper.
        return repr(self._function)
