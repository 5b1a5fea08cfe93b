"""Calls in converted code: `converted_call(f, args, kwargs)` converts the callee first.

The converter rewrites every call `f(a, *b, k=c)` into `ag__.converted_call(f, (a, *b),
{"k": c})`, so functions called from a converted function are converted too (recursively, when
they run), as TensorFlow's AutoGraph does. What a call does, first match wins:

1. a builtin with an overload (`len`, `range`, `int`, ...; see `builtins`): the overload;
2. a class, a builtin, or any callable without Python code of its own: called as it is;
3. a Python function, a bound method (its function, with `self`) or an object whose class
   defines `__call__` in Python: the `convert` function given to the `Caller` returns its
   converted form, or None to call it as it is (eager's own code, numpy's and the standard
   library's, code the converter generated, generators, `do_not_convert`, and functions whose
   source is unavailable, which warn once; see `eager.autograph.conversion`).

`functools.partial` objects are unwrapped first. With `recursive=False` (`to_graph(f,
recursive=False)`) only the overloads apply.

The iterable of a converted `for`, when it is a call, goes through `Caller.iterable`
(`ag__.converted_iterable`): the same, except that `range` or `eager.range` of a traced bound is
the loop's bounds (`builtins.loop_range`), with no Range op built for the loop to ignore.
"""

from __future__ import annotations

import functools
import types

from .builtins import OVERLOADS, loop_range, range_, tensor_range

__all__ = ["Caller"]

_FUNCTION = types.FunctionType
_METHOD = types.MethodType
_RANGES = (range_, tensor_range)  # the overloads of `range` and `eager.range`


def _inherited_call(cls):
    """The `__call__` defined by `cls` or a base, or None (looked up on the class, not the
    instance, as Python's call does)."""
    for base in cls.__mro__:
        found = base.__dict__.get("__call__")
        if found is not None:
            return found
    return None


class Caller:
    """`ag__.converted_call` of one set of conversion options (see the module doc);
    `convert(function)` returns the converted function or None."""

    __slots__ = ("recursive", "convert")

    def __init__(self, convert, recursive=True):
        self.convert = convert
        self.recursive = recursive

    def __call__(self, f, args, kwargs=None):
        overload = OVERLOADS.get(id(f))
        if overload is not None and overload[0] is f:
            f = overload[1]
        elif self.recursive:
            cls = f.__class__
            if cls is _FUNCTION:
                converted = self.convert(f)
                if converted is not None:
                    f = converted
            elif cls is _METHOD:
                function = f.__func__
                if function.__class__ is _FUNCTION:
                    converted = self.convert(function)
                    if converted is not None:
                        args = (f.__self__,) + tuple(args)
                        f = converted
            elif cls is functools.partial:
                merged = dict(f.keywords)
                if kwargs:
                    merged.update(kwargs)
                return self(f.func, f.args + tuple(args), merged)
            elif not isinstance(f, type):
                call = cls.__dict__.get("__call__") or _inherited_call(cls)
                if call.__class__ is _FUNCTION:
                    converted = self.convert(call)
                    if converted is not None:
                        args = (f,) + tuple(args)
                        f = converted
        if kwargs:
            return f(*args, **kwargs)
        return f(*args)

    def iterable(self, f, args, kwargs=None):
        """`self(f, args, kwargs)` for the iterable of a converted `for` (see the module
        doc)."""
        if not kwargs and 0 < len(args) <= 3:
            overload = OVERLOADS.get(id(f))
            if overload is not None and overload[0] is f and overload[1] in _RANGES:
                bounds = loop_range(*args)
                if bounds is not None:
                    return bounds
        return self(f, args, kwargs)
