"""Arguments of a traced function: binding them to parameters, and the cache key they give.

Binding (`Binder`) puts every call in one canonical form, a tuple of parameter values in
declaration order with defaults applied, so `f(x, 2)`, `f(x, n=2)` and `f(x)` (with `n=2` the
default) are one trace, as in TensorFlow.

Cache keys (`describe`), as TensorFlow 2.21's tracing types:

* a tensor (eager or symbolic; a numpy array is converted to one first) by shape and dtype, its
  value never matters; a `TensorSpec` (in `get_concrete_function`) the same way;
* a Python value by type and value (`1`, `1.0` and `True` are three keys), so it must be hashable;
* a Variable by shape and dtype (TensorFlow 2.21), whichever variable it is; its handle is the
  tensor the call feeds;
* lists, tuples, namedtuples and dicts by their type, length / keys, and their leaves' keys.

Leaves are visited in `eager.base.nest` order (sequences in order, dicts by sorted key), the order
`nest.flatten` gives, so the tensors `describe` collects line up with the placeholders tracing
makes.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..tensor import Tensor
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..variables import Variable

__all__ = ["Binder", "describe", "TENSOR", "VARIABLE"]

TENSOR = "Tensor"  # first element of a tensor leaf's key
VARIABLE = "Variable"  # first element of a variable leaf's key


class Binder:
    """Binds `(args, kwargs)` to a Python function's parameters (see the module doc); `call`
    calls the function with bound values. `skip_first` drops `self` for a method bound per
    instance."""

    __slots__ = ("_signature", "names", "kinds")

    def __init__(self, python_function, skip_first=False):
        try:
            signature = inspect.signature(python_function)
        except (TypeError, ValueError):
            signature = None  # no introspectable signature: (args, kwargs) as given
        if signature is not None and skip_first:
            params = list(signature.parameters.values())[1:]
            signature = signature.replace(parameters=params)
        self._signature = signature
        if signature is None:
            self.names = ("args", "kwargs")
            self.kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        else:
            self.names = tuple(signature.parameters)
            self.kinds = tuple(p.kind for p in signature.parameters.values())

    @property
    def signature(self):
        """The `inspect.Signature` calls are bound to (`self` dropped for a method), or None
        when the function has no introspectable signature."""
        return self._signature

    def bind(self, args, kwargs) -> tuple:
        """The parameter values, in declaration order, defaults applied (TypeError as Python
        gives for a call that does not fit the signature)."""
        if self._signature is None:
            return (tuple(args), dict(kwargs))
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = bound.arguments
        return tuple(arguments[name] for name in self.names)

    def call(self, python_function, values):
        """Calls `python_function` with bound `values` (what `bind` returned, possibly with
        tensors replaced)."""
        args, kwargs = self.split(values)
        return python_function(*args, **kwargs)

    def split(self, values):
        """Bound `values` back into (positional args, keyword args) as a call would pass them."""
        args = []
        kwargs = {}
        for name, kind, value in zip(self.names, self.kinds, values):
            if kind is inspect.Parameter.VAR_POSITIONAL:
                args.extend(value)
            elif kind is inspect.Parameter.VAR_KEYWORD:
                kwargs.update(value)
            elif kind is inspect.Parameter.KEYWORD_ONLY:
                kwargs[name] = value
            else:
                args.append(value)
        return args, kwargs

    def plain_arity(self) -> int:
        """The parameter count when every parameter is positional with no default (so a call
        with that many positional arguments and no keywords binds them as given, and `bind`
        can be skipped), else -1."""
        if self._signature is None:
            return -1
        for p in self._signature.parameters.values():
            if p.kind not in (inspect.Parameter.POSITIONAL_ONLY,
                              inspect.Parameter.POSITIONAL_OR_KEYWORD) or \
                    p.default is not inspect.Parameter.empty:
                return -1
        return len(self.names)

    def positional_count(self) -> int:
        """How many leading parameters can be given positionally (for input_signature)."""
        n = 0
        for kind in self.kinds:
            if kind in (inspect.Parameter.POSITIONAL_ONLY,
                        inspect.Parameter.POSITIONAL_OR_KEYWORD):
                n += 1
            else:
                break
        return n


def shape_key(shape):
    """A hashable form of a TensorShape: None for unknown rank, else a tuple (None dims kept)."""
    return None if shape.rank is None else tuple(shape.as_list())


def describe(value, tensors, specs_allowed=False, erase_shapes=False):
    """The cache key of `value` (see the module doc); appends its tensor leaves (tensors, or
    TensorSpecs when `specs_allowed`) to `tensors` in nest order. `erase_shapes` keys tensors by
    dtype only (to find traces a call may fit with relaxed shapes)."""
    if isinstance(value, Tensor):
        tensors.append(value)
        if erase_shapes:
            return (TENSOR, value.dtype)
        return (TENSOR, shape_key(value.shape), value.dtype)
    if isinstance(value, dict):
        keys = _sorted_keys(value)
        return (type(value), tuple((k, describe(value[k], tensors, specs_allowed, erase_shapes))
                                   for k in keys))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(describe(v, tensors, specs_allowed, erase_shapes)
                                   for v in value))
    if isinstance(value, np.ndarray):
        return describe(convert_to_tensor(value), tensors, specs_allowed, erase_shapes)
    if specs_allowed and isinstance(value, TensorSpec):
        tensors.append(value)
        if erase_shapes:
            return (TENSOR, value.dtype)
        return (TENSOR, shape_key(value.shape), value.dtype)
    if isinstance(value, Variable):
        # TensorFlow 2.21 keys a variable by shape and dtype: one trace serves every variable of
        # that shape and dtype. The call feeds the variable's handle (see `lifting`).
        tensors.append(value.handle)
        return (VARIABLE, shape_key(value.shape), value.dtype)
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"eager.function: an argument of type {type(value).__name__} ({value!r:.80}) is not "
            "hashable. Python values are part of a traced function's cache key (a new value "
            "retraces); pass tensors, or hashable Python values.") from None
    return (type(value), value)


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:
        raise TypeError(f"eager.function: dict arguments need sortable keys, got {list(d)}.") \
            from None

