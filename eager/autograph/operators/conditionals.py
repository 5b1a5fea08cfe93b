"""Converted `if` statements and conditional expressions: `eager.cond` on a traced tensor,
Python's `if` on anything else.

The converter turns

    if x > 0:
        y = x
    else:
        y = -x

into two functions that assign `y` through `nonlocal` and `if_stmt(x > 0, if_body, else_body,
("y",), 1)`. When the condition is a symbolic tensor of a function being traced, both branches
are traced into one `eager.cond`: each starts from the same values of the state variables
(`state.State`, through the branches' closure cells), and its first `nouts` state variables
(those used after the statement) become the cond's outputs, checked by TensorFlow's rules
(`loop_vars`); the others (assigned, read in a branch, dead after) get their values back. Any
other condition (a Python value, an eager tensor) runs Python's `if`: only the taken branch
runs, exactly as the unconverted code would.
"""

from __future__ import annotations

from ...base.dtypes import bool as _bool
from ...control_flow.api import cond as _cond
from ...core.tensor_conversion import convert_to_tensor
from ...graph.symbolic import SymbolicTensor
from ...ops.array_ops import reshape
from .located import caller, error
from .loop_vars import check_branch, check_branches
from .state import State

__all__ = ["if_stmt", "if_exp", "is_staged", "checked_condition"]


def is_staged(value) -> bool:
    """Whether `value` decides control flow only when the traced function runs (a symbolic
    tensor), so the statement must become a control-flow op."""
    return isinstance(value, SymbolicTensor)


def checked_condition(value, statement, where):
    """The scalar bool tensor a staged `statement` ("if statement", "while loop") branches on;
    TensorFlow's ValueError for another dtype or more than one element."""
    value = convert_to_tensor(value)
    hint = "to check for None, use `is not None`"
    if value.dtype != _bool:
        raise error(ValueError, f"condition of {statement} expected to be `eager.bool` scalar, "
                                f"got {value!r}; to use as boolean Tensor, use `eager.cast`; "
                                f"{hint}", where)
    shape = value.shape
    if shape.rank is None:
        return reshape(value, ())
    if shape.rank > 0:
        known = [d for d in shape.as_list() if d is not None]
        size = 1
        for d in known:
            size *= d
        if size > 1:
            raise error(ValueError, f"condition of {statement} expected to be `eager.bool` "
                                    f"scalar, got {value!r}; {hint}", where)
        return reshape(value, ())
    return value


def if_stmt(cond, body, orelse, symbol_names, nouts):
    """A converted `if` statement (see the module doc)."""
    if isinstance(cond, SymbolicTensor):
        _staged_if(cond, body, orelse, symbol_names, nouts, caller())
    elif cond:
        body()
    else:
        orelse()


def _staged_if(cond, body, orelse, names, nouts, where):
    pred = checked_condition(cond, "if statement", where)
    state = State(body, names)
    get_state, set_state = state.get, state.set
    initial = get_state()
    outputs = names[:nouts]
    done = {}

    def branch(run, label, other):
        def traced():
            set_state(initial)
            run()
            values = tuple(get_state()[:nouts])
            check_branch(values, outputs, label, where)
            done[label] = values
            if other in done:
                main, rest = (values, done[other]) if label == "main" else (done[other], values)
                check_branches(main, rest, outputs, where)
            return values[0] if single else values
        return traced

    single = nouts == 1  # (one output goes through the cond as itself, not in a tuple)
    final = _cond(pred, branch(body, "main", "else"), branch(orelse, "else", "main"))
    set_state(((final,) if single else tuple(final)) + tuple(initial[nouts:]))


def if_exp(cond, if_true, if_false, expression):
    """A converted conditional expression `a if cond else b` (`expression`: its source, for
    errors): `eager.cond` on a traced tensor, else Python's."""
    if isinstance(cond, SymbolicTensor):
        where = caller()
        pred = checked_condition(cond, f"conditional expression `{expression}`", where)
        return _cond(pred, if_true, if_false)
    return if_true() if cond else if_false()
