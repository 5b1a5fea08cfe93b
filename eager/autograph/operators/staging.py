"""Staged loops: a converted `while` or `for` as one `eager.while_loop`.

The converted body assigns the user's variables through `nonlocal`; `get_state` reads the loop
variables and `set_state` writes them (through the body's closure cells, `state.State`; a `for`
loop adds its iterate, see `eager.autograph.operators.loops`). `staged_while`
turns that into `while_loop(cond, body, loop_vars)`: each traced iteration starts by writing the
loop's placeholders into the variables, runs the user's body, checks the new values against
TensorFlow's rules (`loop_vars.check_iteration`) and returns them; the loop's results are
written back at the end.

A loop variable with no value before the loop (assigned only inside it, or None) is what
TensorFlow's AutoGraph accepts when one traced iteration shows what the loop makes of it: the
body is traced once into a throwaway branch graph, the variable starts as zeros of that type
(with None dims where its shape varies), and the loop carries a flag that an assertion checks
after it, so a loop that ran zero times is TensorFlow's InvalidArgumentError "loop must iterate
at least once to initialize y" when the function runs.

`for` loops reduce to `staged_while`: over a range (`range_loop`: an iterate from `start` by
`delta`, the Range op itself never built) or over the first dimension of a tensor, a
TensorArray, or a zip/enumerate of them (`indexed_loop`).
"""

from __future__ import annotations

import numpy as np

from ...base import nest
from ...base.dtypes import int32 as _int32
from ...base.tensor_shape import as_shape
from ...control_flow.api import cond as _cond, while_loop as _while_loop
from ...control_flow.ops import trace_branch
from ...core.specs import TensorSpec
from ...core.tensor_conversion import convert_to_tensor
from ...graph import get_default_graph
from ...graph.constant_value import constant_value
from ...ops.creation_ops import zeros
from ...ops.debug_ops import assert_that
from ...ops.math_ops import cast, logical_and, logical_or
from ...tensor import Tensor
from .conditionals import checked_condition
from .loop_vars import check_iteration, check_loop_entry
from .undefined import Undefined, UndefinedReturnValue, is_undefined

__all__ = ["staged_while", "range_loop", "indexed_loop"]

_AUTOCAST = (bool, int, float, np.ndarray, np.generic)


def _invariants_by_identity(opts):
    """The `shape_invariants` loop option, `[(variable, shape), ...]`, keyed by the identity
    of the variable's value before the loop (TensorFlow's pairing)."""
    pairs = opts.get("shape_invariants", ())
    found = {}
    for pair in pairs:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError("shape_invariants must be a list of (variable, shape) pairs, got "
                             f"{pair!r}.")
        found[id(pair[0])] = pair[1]
    return found


def staged_while(test, body, get_state, set_state, names, opts, where):
    """Runs the converted loop (`test()`, `body()` over the variables `get_state` / `set_state`
    reach) as one `eager.while_loop` (see the module doc)."""
    init = original = tuple(get_state())
    by_identity = _invariants_by_identity(opts)
    invariants = [by_identity.get(id(v)) for v in init]
    nulls = [v is None or is_undefined(v) for v in init]
    require_one = any(nulls)
    if require_one:
        init, extra = _values_from_first_iteration(body, get_state, set_state, init, nulls,
                                                   invariants, names, where)
        invariants = [i if i is not None else e for i, e in zip(invariants, extra)]
    else:
        check_loop_entry(init, names, where)
    empty = not init

    def entry_values(loop_vars):
        if require_one:
            loop_vars = loop_vars[1:]
        return () if empty else tuple(loop_vars)

    def loop_test(*loop_vars):
        set_state(entry_values(loop_vars))
        return checked_condition(test(), "while loop", where)

    def loop_body(*loop_vars):
        entry = entry_values(loop_vars)
        set_state(entry)
        body()
        new = tuple(get_state())
        check_iteration(init, entry, new, names, invariants, where)
        if empty:
            new = (0,)
        return (True,) + new if require_one else new

    if empty:
        loop_vars, shape_invariants = (0,), [None]
    else:
        loop_vars = init
        shape_invariants = [_structured_invariant(v, s) for v, s in zip(init, invariants)]
    if require_one:
        loop_vars = (False,) + loop_vars
        shape_invariants = [None] + shape_invariants
    if all(s is None for s in shape_invariants):
        shape_invariants = None
    final = _while_loop(loop_test, loop_body, loop_vars, shape_invariants=shape_invariants,
                        maximum_iterations=opts.get("maximum_iterations"))
    final = tuple(final)
    if require_one:
        missing = ", ".join("the function return value" if v.__class__ is UndefinedReturnValue
                            else name for name, v, null in zip(names, original, nulls) if null)
        assert_that(final[0], f"loop must iterate at least once to initialize {missing}")
        final = final[1:]
    set_state(() if empty else final)


def _structured_invariant(value, invariant):
    """The `shape_invariants` entry of one loop variable for `eager.while_loop`: its invariant,
    or None for each of its leaves."""
    if invariant is not None:
        return invariant
    if isinstance(value, (list, tuple, dict)):
        return nest.map_structure(lambda _: None, value)
    return None


def _values_from_first_iteration(body, get_state, set_state, init, nulls, invariants, names,
                                 where):
    """TensorFlow's way with loop variables that have no value before the loop: trace one
    iteration apart, then start each such variable at zeros of what the iteration made of it.
    Returns (initial values, extra shape invariants)."""
    graph = get_default_graph()
    flat = nest.flatten(list(init))
    positions, specs = [], []
    for k, leaf in enumerate(flat):
        if isinstance(leaf, Tensor):
            specs.append(TensorSpec(leaf.shape, leaf.dtype))
        elif isinstance(leaf, _AUTOCAST):
            t = convert_to_tensor(leaf)
            specs.append(TensorSpec(t.shape, t.dtype))
        else:
            continue
        positions.append(k)

    def arguments(placeholders):
        leaves = list(flat)
        for k, p in zip(positions, placeholders):
            leaves[k] = p
        return (nest.pack_sequence_as(list(init), leaves),)

    def one_iteration(values=None):
        set_state(tuple(init if values is None else values))
        body()
        return tuple(get_state())

    first, note = None, None
    values, extra = init, (None,) * len(init)
    try:
        _, first = trace_branch(one_iteration, graph, "loop_probe", arguments, specs)
        pairs = [_placeholder_value(after, invariant, before) if null else (before, None)
                 for before, null, after, invariant in zip(init, nulls, first, invariants)]
        values = tuple(p[0] for p in pairs)
        extra = tuple(p[1] for p in pairs)
    except (NameError, TypeError, ValueError, KeyError) as exc:
        note = (f"Note: AutoGraph tried to define it automatically, but ran into a "
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    finally:
        set_state(init)
    check_loop_entry(values, names, where, first, note)
    return values, extra


def _placeholder_value(like, invariant, original):
    """(a starting value standing in for `original`, its shape invariant or None): zeros of
    the type `like` (the value after one iteration) has."""
    if like is None or is_undefined(like):
        return original, None
    if isinstance(like, (bool, int, float)):
        return type(like)(0), None
    if isinstance(like, Tensor):
        shape = like.shape if invariant is None else as_shape(invariant)
        if shape.rank is None:
            return zeros((), like.dtype), shape
        dims, dynamic = [], False
        for actual, allowed in zip(like.shape.as_list(), shape.as_list()):
            if actual is None:
                dims.append(0 if allowed is None else allowed)
                dynamic = True
            else:
                dims.append(actual)
        return zeros(dims, like.dtype), (shape if dynamic else None)
    if isinstance(like, (list, tuple, dict)):
        leaves = nest.flatten(like)
        leaf_invariants = ([None] * len(leaves) if invariant is None
                           else nest.flatten(invariant))
        pairs = [_placeholder_value(v, i, None) for v, i in zip(leaves, leaf_invariants)]
        return (nest.pack_sequence_as(like, [p[0] for p in pairs]),
                nest.pack_sequence_as(like, [p[1] for p in pairs]))
    raise TypeError(f"Found an unsupported type '{type(like).__name__}' while creating "
                    f"placeholder for {like!r}. Supported types include Tensor, int, float, "
                    "bool, list, tuple or dict.")


# -- for loops ---------------------------------------------------------------------------------
def range_loop(loop, start, limit, delta, dtype=None):
    """`for target in range(start, limit, delta)` as a staged loop over an iterate (`loop`: the
    statement's `ForLoop`)."""
    if dtype is None:
        dtype = _int32
        for v in (limit, start, delta):
            if isinstance(v, Tensor):
                dtype = v.dtype
                break
    start, limit, delta = _as(start, dtype), _as(limit, dtype), _as(delta, dtype)
    iterate = start
    step = constant_value(delta) if isinstance(delta, Tensor) else delta
    if step is None:
        ascending = None  # known when the function runs: the test asks both ways
    else:
        ascending = step >= 0 if step.__class__ is int else bool(np.all(step >= 0))
    iterate_name = loop.opts.get("iterate_names")
    symbol_names = loop.symbol_names

    def state():
        values = loop.get_state()
        if iterate_name in symbol_names:
            # The target is a loop variable: while it is unbound, it reads as the iterate.
            values = tuple(iterate if name == iterate_name and value.__class__ is Undefined
                           else value for name, value in zip(symbol_names, values))
        return (iterate, *values)

    def set_state(values):
        nonlocal iterate
        iterate = values[0]
        loop.set_state(tuple(values[1:]))

    def body():
        nonlocal iterate
        loop.body(iterate)
        iterate = iterate + delta

    def test():
        if ascending is not None:
            going = iterate < limit if ascending else iterate > limit
        else:
            going = logical_or(logical_and(delta >= 0, iterate < limit),
                               logical_and(delta < 0, iterate > limit))
        return _with_extra_test(going, loop.extra_test)

    staged_while(test, body, state, set_state, ("<internal iterate>",) + loop.symbol_names,
                 _loop_opts(loop.opts), loop.where)


def indexed_loop(loop, length, element_at):
    """`for target in iterable` as a staged loop over indices `0 .. length - 1` (`length`: an
    int or a scalar tensor), the target being `element_at(index)`."""
    index = convert_to_tensor(0, _int32)
    if isinstance(length, Tensor) and length.dtype != _int32:
        length = cast(length, _int32)

    def state():
        return (index,) + tuple(loop.get_state())

    def set_state(values):
        nonlocal index
        index = values[0]
        loop.set_state(tuple(values[1:]))

    def body():
        nonlocal index
        loop.body(element_at(index))
        index = index + 1

    def test():
        return _with_extra_test(index < length, loop.extra_test)

    staged_while(test, body, state, set_state, ("<internal iterate>",) + loop.symbol_names,
                 _loop_opts(loop.opts), loop.where)


def _with_extra_test(going, extra_test):
    """`going and extra_test()`, staged (TensorFlow: the extra test, from `break` or `return`,
    runs only while the loop is going)."""
    if extra_test is None:
        return going
    return _cond(going, extra_test, lambda: False)


def _as(value, dtype):
    """`value` as a `dtype` scalar: a tensor cast if needed, a Python int kept when it stays
    an int32 (the loop makes it one; kept as a number, it is a constant in the loop's graph
    instead of a captured input)."""
    if isinstance(value, Tensor):
        return value if value.dtype == dtype else cast(value, dtype)
    if dtype == _int32 and isinstance(value, int) and not isinstance(value, bool) and \
            -2**31 <= value < 2**31:
        return value
    return convert_to_tensor(value, dtype)


def _loop_opts(opts):
    return {k: v for k, v in opts.items() if k != "iterate_names"}
