"""TensorFlow's rules for the variables a converted `if` or loop carries, with its errors.

A staged `if` (an `eager.cond`) outputs every variable its branches assign that is used later;
a staged loop (an `eager.while_loop`) carries every variable its body assigns that is used
later or in the next iteration. Such a variable must have a value on every path (defined in both
branches; defined before the loop, unless the loop can define it, see
`eager.autograph.operators.staging`), must not be None, and must keep its nested structure and
dtype; a loop variable must also keep its shape unless a shape invariant relaxes it
(`eager.autograph.experimental.set_loop_options(shape_invariants=...)`). The messages are
TensorFlow's, naming the variable, and end with the user's line (`located`). Values that are
not tensors (Python numbers are compared as the tensors they become) are checked for structure
only, as TensorFlow does.
"""

from __future__ import annotations

import numpy as np

from ...base.tensor_shape import TensorShape, as_shape
from ...core.tensor_conversion import convert_to_tensor
from ...tensor import Tensor
from .located import error
from .undefined import Undefined, UndefinedReturnValue

__all__ = ["check_branch", "check_branches", "check_loop_entry", "check_iteration",
           "LEGAL_LOOP_TYPES"]

LEGAL_LOOP_TYPES = "Tensor, int, float, bool or a list, tuple or dict thereof"

_PYTHON_SCALARS = (bool, int, float, np.ndarray, np.generic)
_NESTED = (list, tuple, dict)


def _checkable(value):
    """A Python number or numpy value as the tensor a staged statement makes of it."""
    if isinstance(value, _PYTHON_SCALARS):
        return convert_to_tensor(value)
    return value


def _describe(value) -> str:
    return f"type={type(value).__name__} str={value!r:.300}"


def _structure_mismatch(a, b) -> str | None:
    """None when `a` and `b` nest the same way (same sequence types, lengths and dict keys),
    else TensorFlow's explanation."""
    if _same_structure(a, b):
        return None
    return ("The two structures don't have the same nested structure.\n\n"
            f"First structure: {_describe(a)}\n\nSecond structure: {_describe(b)}")


def _same_structure(a, b) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        if type(a) is not type(b) or set(a) != set(b):
            return False
        return all(_same_structure(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        return all(_same_structure(x, y) for x, y in zip(a, b))
    return True


def _leaves(structure):
    if isinstance(structure, dict):
        for k in sorted(structure, key=repr):
            yield from _leaves(structure[k])
    elif isinstance(structure, (list, tuple)):
        for item in structure:
            yield from _leaves(item)
    else:
        yield structure


# -- conditionals ------------------------------------------------------------------------------
def check_branch(values, names, branch, where):
    """The values a branch (`branch`: "main" or "else") leaves in the statement's outputs are all
    defined."""
    for name, value in zip(names, values):
        if value.__class__ is Undefined:
            raise error(ValueError, f"'{name}' must also be initialized in the {branch} branch",
                        where)
        if value.__class__ is UndefinedReturnValue:
            raise error(ValueError, f"the {branch} branch must also have a return statement.",
                        where)


def check_branches(main, orelse, names, where):
    """The two branches' outputs agree: structure, no None, dtype."""
    for name, a, b in zip(names, main, orelse):
        mismatch = _structure_mismatch(a, b)
        if mismatch is not None:
            raise error(TypeError, f"'{name}' must have the same nested structure in the main "
                                   f"and else branches:\n\n{mismatch}", where)
        for x, y in zip(_leaves(a), _leaves(b)):
            if x is None:
                raise error(ValueError, f"'{name}' is None at the end of the main branch.", where)
            if y is None:
                raise error(ValueError, f"'{name}' is None at the end of the else branch.", where)
            x, y = _checkable(x), _checkable(y)
            if isinstance(x, Tensor) and isinstance(y, Tensor) and x.dtype != y.dtype:
                raise error(TypeError, f"'{name}' has dtype {x.dtype.name} in the main branch, "
                                       f"but dtype {y.dtype.name} in the else branch", where)


# -- loops -------------------------------------------------------------------------------------
def check_loop_entry(values, names, where, first_iteration=None, note=None):
    """Every loop variable has a value when a staged loop starts (`first_iteration`: the
    values after one iteration, when they were worked out; `note`: why that failed)."""
    if first_iteration is None:
        first_iteration = (None,) * len(values)
    for name, value, after in zip(names, values, first_iteration):
        if value.__class__ is UndefinedReturnValue:
            if after is not None and after.__class__ is not UndefinedReturnValue:
                raise error(ValueError, f"the return value from a TensorFlow loop may only be a "
                                        f"{LEGAL_LOOP_TYPES}; got {type(after)}", where)
            raise error(NotImplementedError,
                        "a return statement cannot be placed inside this TensorFlow loop; this "
                        "may happen if a return statement depends on a static Python condition "
                        "such as a hyperparameter", where)
        if value is None:
            raise error(ValueError, f"'{name}' is not allowed to be None before the loop",
                        where)
        if value.__class__ is Undefined:
            message = f"'{name}' must be defined before the loop"
            if note:
                message += "\n" + note
            raise error(ValueError, message, where)


def _is_subshape(left, right) -> bool:
    """Whether shape `left` is at least as specific as `right` (TensorFlow's rule)."""
    if left == right:  # (the common case: a loop variable keeps its shape)
        return True
    if right.rank is None:
        return True
    if left.rank != right.rank:
        return False
    return all(r is None or l_ == r for l_, r in zip(left.as_list(), right.as_list()))


def _check_leaf(name, init, entry, exit_, invariant, where):
    if exit_ is None:
        raise error(ValueError, f"'{name}' is None at the end of the iteration.", where)
    entry, exit_ = _checkable(entry), _checkable(exit_)
    if not isinstance(entry, Tensor) or not isinstance(exit_, Tensor):
        return
    if entry.dtype != exit_.dtype:
        raise error(TypeError, f"'{name}' has dtype {entry.dtype.name} before the loop, but "
                               f"dtype {exit_.dtype.name} after one iteration", where)
    if invariant is None:
        if not _is_subshape(exit_.shape, entry.shape):
            raise error(ValueError,
                        f"'{name}' has shape {entry.shape} before the loop, but shape "
                        f"{exit_.shape} after one iteration. Use "
                        "eager.autograph.experimental.set_loop_options to set shape "
                        "invariants.", where)
        return
    invariant = as_shape(invariant)
    init = _checkable(init)  # (only an invariant reads the value before the loop)
    if isinstance(init, Tensor) and not _is_subshape(init.shape, invariant):
        raise error(ValueError, f"'{name}' has shape {init.shape} before the loop, which does "
                                f"not conform with the shape invariant {invariant}.", where)
    if not _is_subshape(exit_.shape, invariant):
        raise error(ValueError, f"'{name}' has shape {exit_.shape} after one iteration, which "
                                f"does not conform with the shape invariant {invariant}.", where)


def check_iteration(init, entry, exit_, names, invariants, where):
    """One iteration of a staged loop kept every variable's structure, dtype and (within its
    invariant) shape. `init`: the values before the loop; `entry` / `exit_`: the values at the
    start and end of the traced body; `invariants`: per variable, None or a shape (a structure
    of them for a nested variable)."""
    for k, name in enumerate(names):
        first, start, end, invariant = init[k], entry[k], exit_[k], invariants[k]
        if not isinstance(first, _NESTED) and not isinstance(start, _NESTED) and \
                not isinstance(end, _NESTED):  # one leaf each (a tensor, a number): no nesting
            _check_leaf(name, first, start, end, invariant, where)
            continue
        mismatch = _structure_mismatch(first, start) or _structure_mismatch(start, end)
        if mismatch is not None:
            raise error(TypeError, f"'{name}' does not have the same nested structure after one "
                                   f"iteration.\n\n{mismatch}", where)
        leaf_invariants = _invariants_up_to(first, invariant)
        if leaf_invariants is None:
            raise error(TypeError, f"'{name}' does not have the same nested structure as its "
                                   f"corresponding shape invariant.", where)
        for a, b, c, leaf_invariant in zip(_leaves(first), _leaves(start), _leaves(end),
                                           leaf_invariants):
            _check_leaf(name, a, b, c, leaf_invariant, where)


def _invariants_up_to(value, invariant):
    """The shape invariants of `value`'s leaves, in `_leaves` order ([None, ...] for no
    invariant); None when `invariant` does not nest like `value` (a shape, itself a sequence, is
    a leaf)."""
    if invariant is None:
        return [None] * len(list(_leaves(value)))
    if isinstance(value, dict):
        if not isinstance(invariant, dict) or set(invariant) != set(value):
            return None
        out = []
        for k in sorted(value, key=repr):
            part = _invariants_up_to(value[k], invariant[k])
            if part is None:
                return None
            out.extend(part)
        return out
    if isinstance(value, (list, tuple)):
        if (not isinstance(invariant, (list, tuple)) or isinstance(invariant, TensorShape)
                or len(invariant) != len(value)):
            return None
        out = []
        for v, i in zip(value, invariant):
            part = _invariants_up_to(v, i)
            if part is None:
                return None
            out.extend(part)
        return out
    return [invariant]
