"""Stand-ins for variables that have no value yet, in converted code.

Converted control flow passes variables between the user's scope and the branch and loop
functions it generates (`get_state` / `set_state`), so a variable a statement assigns must exist
before the statement even when the user's code has not assigned it yet. The converter then
binds it to `Undefined(name)`; reads the converter cannot prove safe go through `ld`, which
raises the `UnboundLocalError` Python would have raised. `UndefinedReturnValue` is the value of
the converter's return variable until a `return` runs (`retval` turns it into None at the end).
Runtime operators test for both to give TensorFlow's errors ("'y' must also be initialized in
the else branch").
"""

from __future__ import annotations

__all__ = ["Undefined", "UndefinedReturnValue", "ld", "retval", "is_undefined"]


def _unbound(name):
    return UnboundLocalError(f"'{name}' is used before assignment")


class Undefined:
    """The value of variable `symbol_name` before anything assigned it. Any use of it raises
    the UnboundLocalError Python raises for an unassigned local."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name):
        object.__setattr__(self, "symbol_name", symbol_name)

    def __repr__(self):
        return f"<undefined {self.symbol_name}>"

    def __getattr__(self, name):
        raise _unbound(object.__getattribute__(self, "symbol_name"))

    def __setattr__(self, name, value):
        raise _unbound(self.symbol_name)

    def _use(self, *_args):
        raise _unbound(self.symbol_name)

    __bool__ = __len__ = __iter__ = __call__ = __getitem__ = __setitem__ = _use
    __index__ = __int__ = __float__ = __neg__ = __pos__ = __abs__ = __invert__ = _use
    __add__ = __radd__ = __iadd__ = __sub__ = __rsub__ = __isub__ = _use
    __mul__ = __rmul__ = __imul__ = __truediv__ = __rtruediv__ = __itruediv__ = _use
    __floordiv__ = __rfloordiv__ = __ifloordiv__ = __mod__ = __rmod__ = __imod__ = _use
    __pow__ = __rpow__ = __ipow__ = __matmul__ = __rmatmul__ = __imatmul__ = _use
    __and__ = __rand__ = __iand__ = __or__ = __ror__ = __ior__ = _use
    __xor__ = __rxor__ = __ixor__ = __lshift__ = __rlshift__ = __ilshift__ = _use
    __rshift__ = __rrshift__ = __irshift__ = __lt__ = __le__ = __gt__ = __ge__ = _use


class UndefinedReturnValue:
    """The converter's return variable before a `return` statement ran."""

    __slots__ = ()

    def __repr__(self):
        return "<no return value>"


def is_undefined(value) -> bool:
    """Whether `value` is one of the stand-ins (an unassigned variable or return value)."""
    return isinstance(value, (Undefined, UndefinedReturnValue))


def ld(value):
    """`value`, read by converted code: an `Undefined` raises UnboundLocalError instead."""
    if value.__class__ is Undefined:
        raise _unbound(value.symbol_name)
    return value


def retval(value):
    """The converted function's result: None when no `return` statement ran."""
    if value.__class__ is UndefinedReturnValue:
        return None
    return value
