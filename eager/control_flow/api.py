"""`cond`, `switch_case`, `while_loop`: eager Python control flow, or traced sub-graphs.

The mode is the thread's: with no graph being built the functions run Python control flow over
ordinary ops (so tapes see every op, and gradients come for free); while a graph is built they
trace every branch and add one control-flow operation (see `eager.control_flow.ops`). A tape
recording that operation (a tape opened inside the traced function) differentiates it with the
op's gradient function (`eager.control_flow.control_flow_grad`); a traced `while_loop` whose
inputs such a tape follows accumulates each iteration's loop variables for it, out of sight: it
still returns only the loop variables.

Structure rules follow TensorFlow: branches must return the same nested structure and dtypes
(ValueError for a different number or nesting of values, TypeError for different sequence types
or dtypes); a loop body must return its loop variables' structure, dtypes and, unless a shape
invariant relaxes them, shapes (ValueError).

A `TensorArray` among the loop variables or the branches' results is carried by its flow (a
TensorList) while tracing, as in TensorFlow: the cond, body and the code after the op get
TensorArrays rebuilt on the flows (`build_ta_with_new_flow`, sharing the element-shape cell),
and a position that holds a TensorArray must hold one of the same dtype everywhere (TypeError).
Eagerly a TensorArray is an ordinary Python value of the loop.
"""

from __future__ import annotations

import numpy as np

from ..base import nest
from ..base.dtypes import as_dtype, bool as _bool, int32 as _int32
from ..graph import get_default_graph
from ..tensor import Tensor
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..base.tensor_shape import TensorShape, as_shape
from ..ops.tensor_array import TensorArray, build_ta_with_new_flow
from . import ops as _cf

__all__ = ["cond", "switch_case", "while_loop"]


# -- shared checks ---------------------------------------------------------------------------
def _check_scalar(t, what, dtypes):
    if t.dtype not in dtypes:
        raise TypeError(f"{what} must be a {' or '.join(d.name for d in dtypes)} tensor, got "
                        f"dtype {t.dtype.name}.")
    rank = t.shape.rank
    if rank is not None and rank != 0:
        raise ValueError(f"{what} must be a scalar, got a tensor of shape {t.shape}.")


def _eager_bool(value, what):
    """The Python bool of an eager predicate (a Python/numpy bool or a scalar bool tensor)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, Tensor):
        _check_scalar(value, what, (_bool,))
        return bool(value)
    if isinstance(value, np.ndarray):
        return _eager_bool(convert_to_tensor(value), what)
    raise TypeError(f"{what} must be a Python bool or a scalar bool tensor, got "
                    f"{type(value).__name__}.")


def _structure_of(x):
    """`x` with leaves replaced by None: comparable with `==` to another structure."""
    if isinstance(x, dict):
        return (dict, tuple((k, _structure_of(x[k])) for k in sorted(x)))
    if isinstance(x, (list, tuple)):
        return (type(x), tuple(_structure_of(v) for v in x))
    return None


def _assert_same_structure(a, b, message):
    """ValueError when `a` and `b` nest differently (number or nesting of values), TypeError when
    only the sequence types differ (list vs tuple), as TensorFlow's nest checks."""
    sa, sb = _structure_of(a), _structure_of(b)
    if sa == sb:
        return
    if _shape_only(sa) == _shape_only(sb):
        raise TypeError(f"{message}\n\nThe two structures have different sequence types: "
                        f"{a!r:.200} vs {b!r:.200}.")
    raise ValueError(f"{message}\n\nThe two structures don't have the same nested structure: "
                     f"{a!r:.200} vs {b!r:.200}.")


def _shape_only(s):
    if s is None:
        return None
    kind, items = s
    if kind is dict:
        return ("dict", tuple((k, _shape_only(v)) for k, v in items))
    return ("seq", tuple(_shape_only(v) for v in items))


def _flat_tensors(structure):
    """Flat leaves of a branch's return value, as tensors (None leaves kept as None, a
    TensorArray as its flow)."""
    return [v if v is None or isinstance(v, Tensor) else
            v.flow if isinstance(v, TensorArray) else convert_to_tensor(v)
            for v in nest.flatten(structure)]


def _rebuilt(templates, flat) -> list:
    """`flat` (tensors) with the flow at each position where `templates` holds a TensorArray
    turned back into a TensorArray like it."""
    return [build_ta_with_new_flow(t, v) if isinstance(t, TensorArray) else v
            for t, v in zip(templates, flat)]


def _check_arrays(where, first, other, first_name, other_name):
    """TypeError unless `first` and `other` (two flat value lists) hold TensorArrays of one
    dtype at the same positions."""
    for k, (a, b) in enumerate(zip(first, other)):
        a_ta, b_ta = isinstance(a, TensorArray), isinstance(b, TensorArray)
        if not a_ta and not b_ta:
            continue
        if a_ta != b_ta:
            ta, plain = (first_name, other_name) if a_ta else (other_name, first_name)
            value = b if a_ta else a
            raise TypeError(f"{where} {k} is a TensorArray in {ta} but "
                            f"{type(value).__name__} {value!r:.80} in {plain}; a TensorArray "
                            f"is carried by its flow, so both must be TensorArrays.")
        if a.dtype != b.dtype:
            raise TypeError(f"{where} {k} is a TensorArray of {a.dtype.name} in {first_name} "
                            f"but of {b.dtype.name} in {other_name}.")


# -- cond / switch_case ----------------------------------------------------------------------
def cond(pred, true_fn=None, false_fn=None, name=None):
    """≈ `tf.cond(pred, true_fn, false_fn)`: `true_fn()` if `pred` else `false_fn()`.

    `pred` is a Python bool or a scalar bool tensor. Eagerly one branch runs. Traced, both are
    traced and must return the same structure and dtypes; the result's shapes are the most
    specific shapes compatible with both branches'."""
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    graph = get_default_graph()
    if graph is None or isinstance(pred, (bool, np.bool_)):
        # Eager, or a predicate known while tracing: only the chosen branch exists (≈ smart_cond).
        return true_fn() if _eager_bool(pred, "pred") else false_fn()
    pred = convert_to_tensor(pred)
    _check_scalar(pred, "pred", (_bool,))
    return _traced_case("If", "cond", pred, [false_fn, true_fn], ["false_fn", "true_fn"],
                        "true_fn and false_fn arguments to eager.cond must have the same number, "
                        "type, and overall structure of return values.", graph,
                        trace_order=(1, 0))


def switch_case(branch_index, branch_fns, default=None, name=None):
    """≈ `tf.switch_case(branch_index, branch_fns, default=None)`.

    `branch_fns` is a list of callables, a list of `(int, callable)` pairs or a dict from int to
    callable; the keys must be 0..N-1. An index outside [0, N) runs `default`, or the last branch
    when there is none (as TensorFlow)."""
    fns = _canonical_branches(branch_fns)
    if default is not None:
        if not callable(default):
            raise TypeError("default must be callable.")
        fns.append(default)
    graph = get_default_graph()
    if graph is None or not isinstance(branch_index, Tensor):
        if isinstance(branch_index, Tensor):
            _check_scalar(branch_index, "branch_index", (_int32, as_dtype("int64")))
        i = int(branch_index)
        return fns[i if 0 <= i < len(fns) else len(fns) - 1]()
    index = convert_to_tensor(branch_index)
    _check_scalar(index, "branch_index", (_int32, as_dtype("int64")))
    names = [f"branch_fns[{k}]" for k in range(len(fns))]
    return _traced_case("Case", "switch_case", index, fns, names,
                        "branch_fns arguments to eager.switch_case must have the same number, "
                        "type, and overall structure of return values.", graph)


def _canonical_branches(branch_fns):
    if isinstance(branch_fns, dict):
        items = list(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)):
        if not branch_fns:
            raise ValueError("branch_fns must not be empty.")
        if all(isinstance(f, (list, tuple)) and len(f) == 2 for f in branch_fns):
            items = [tuple(f) for f in branch_fns]
        else:
            items = list(enumerate(branch_fns))
    else:
        raise TypeError(f"branch_fns must be a list, tuple or dict, got "
                        f"{type(branch_fns).__name__}.")
    if not items:
        raise ValueError("branch_fns must not be empty.")
    for key, fn in items:
        if not isinstance(key, int) or isinstance(key, bool):
            raise TypeError(f"branch_fns keys must be ints, got {key!r}.")
        if not callable(fn):
            raise TypeError(f"branch_fns[{key}] must be callable.")
    keys = sorted(k for k, _ in items)
    if keys != list(range(len(items))):
        raise ValueError(f"branch_fns keys must be the integers 0..{len(items) - 1}, got "
                         f"{keys}.")
    return [fn for _, fn in sorted(items, key=lambda kv: kv[0])]


def _traced_case(op_name, scope, selector, fns, fn_names, message, graph, trace_order=None):
    """Traces the branches (in `trace_order`: cond traces `true_fn` first, as TensorFlow, so
    the trace-time Python effects of its branches come in TensorFlow's order) and adds the
    op, its branches in selector order."""
    branches, results = [None] * len(fns), [None] * len(fns)
    for k in (trace_order or range(len(fns))):
        branches[k], results[k] = _cf.trace_branch(fns[k], graph, f"{scope}_{fn_names[k]}")
    flats = [_flat_tensors(r) for r in results]
    leaves = [nest.flatten(r) for r in results]
    for r, flat, fn_name, leaf in zip(results[1:], flats[1:], fn_names[1:], leaves[1:]):
        _assert_same_structure(results[0], r, message)
        _check_arrays(f"{message} Output", leaves[0], leaf, fn_names[0], fn_name)
        for a, b in zip(flats[0], flat):
            if (a is None) != (b is None):
                raise ValueError(f"{message} {fn_names[0]} returned {a!r} where {fn_name} "
                                 f"returned {b!r}.")
            if a is not None and a.dtype != b.dtype:
                raise TypeError(f"{message} Outputs of {fn_names[0]} and {fn_name} must have the "
                                f"same dtypes: {a.dtype.name} vs {b.dtype.name}.")
    present = [i for i, t in enumerate(flats[0]) if t is not None]
    outputs = _cf.add_case_op(op_name, selector, branches,
                              [[flat[i] for i in present] for flat in flats])
    flat_out = [None] * len(flats[0])
    for i, t in zip(present, outputs):
        flat_out[i] = t
    # TensorArrays come back like the true branch's (TensorFlow's choice), or branch 0's.
    template = results[-1] if op_name == "If" else results[0]
    return nest.pack_sequence_as(template, _rebuilt(nest.flatten(template), flat_out))


# -- while_loop ------------------------------------------------------------------------------
def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """≈ `tf.while_loop`: repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` is
    true, at most `maximum_iterations` times; returns the final loop variables in
    `loop_vars`'s structure.

    `loop_vars` is a list/tuple (a single tensor is treated as a one-element tuple and returned
    unwrapped); `body` returns the same structure (a single value for a one-element list is
    accepted). Without `shape_invariants` every loop variable must keep its shape; an invariant
    with None dims (or None rank) lets those vary. `parallel_iterations`, `back_prop` and
    `swap_memory` are accepted for compatibility and have no effect."""
    del parallel_iterations, back_prop, swap_memory, name
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    single = not isinstance(loop_vars, (list, tuple))
    if single:
        loop_vars = (loop_vars,)
        if shape_invariants is not None:
            shape_invariants = (shape_invariants,)
    if not loop_vars:
        raise ValueError("No loop variables provided")
    flat_vars = nest.flatten(loop_vars)
    invariants = _flat_invariants(loop_vars, shape_invariants, len(flat_vars))
    graph = get_default_graph()
    if graph is None:
        result = _eager_while(cond, body, loop_vars, flat_vars, invariants, maximum_iterations)
    else:
        result = _traced_while(cond, body, loop_vars, flat_vars, invariants,
                               maximum_iterations, graph)
    return result[0] if single else result


def _flat_invariants(loop_vars, shape_invariants, n):
    if shape_invariants is None:
        return [None] * n
    # An invariant is a TensorShape/list leaf: flatten only down to loop_vars' structure.
    flat = _flatten_up_to(loop_vars, shape_invariants)
    return [None if s is None else as_shape(s) for s in flat]


def _flatten_up_to(structure, values):
    if isinstance(structure, dict):
        if not isinstance(values, dict) or sorted(values) != sorted(structure):
            raise ValueError("shape_invariants must have the same structure as loop_vars.")
        out = []
        for k in sorted(structure):
            out.extend(_flatten_up_to(structure[k], values[k]))
        return out
    if isinstance(structure, (list, tuple)):
        if not isinstance(values, (list, tuple)) or isinstance(values, TensorShape) or \
                len(values) != len(structure):
            raise ValueError("shape_invariants must have the same structure as loop_vars.")
        out = []
        for s, v in zip(structure, values):
            out.extend(_flatten_up_to(s, v))
        return out
    return [values]


def _body_result(result, loop_vars):
    """The body's return value in loop_vars' top-level form (a bare value for one var)."""
    if len(loop_vars) == 1 and not isinstance(result, (list, tuple)):
        result = (result,)
    if isinstance(result, (list, tuple)) and type(result) in (list, tuple) and \
            type(loop_vars) in (list, tuple):
        result = type(loop_vars)(result)  # the top level may be a list or tuple either way
    return result


def _shape_allowed(shape, invariant) -> bool:
    """Whether `shape` fits `invariant` (TensorFlow's 'less than or equal': the invariant's known
    dims equal, its None dims anything)."""
    if invariant.rank is None:
        return True
    if shape.rank != invariant.rank:
        return False
    return all(b is None or a == b for a, b in zip(shape.as_list(), invariant.as_list()))


def _check_loop_var(name, before, after, invariant, iteration):
    if before.dtype != after.dtype:
        raise TypeError(f"Loop var {name} enters the loop with type {before.dtype.name}, but has "
                        f"type {after.dtype.name} after {iteration} iteration(s).")
    allowed = invariant if invariant is not None else before.shape
    if not _shape_allowed(as_shape(after.shape), as_shape(allowed)):
        raise ValueError(
            f"Input tensor {name} enters the loop with shape {allowed}, but has shape "
            f"{after.shape} after {iteration} iteration(s). To allow the shape to vary across "
            "iterations, use the `shape_invariants` argument of eager.while_loop to specify a "
            "less-specific shape.")


def _max_iterations_tensor(maximum_iterations):
    m = convert_to_tensor(maximum_iterations)
    if m.shape.rank is not None and m.shape.rank != 0:
        raise ValueError(f"maximum_iterations must be a scalar, saw shape: {m.shape}")
    if not m.dtype.is_integer:
        raise TypeError(f"maximum_iterations must be an integer, got dtype {m.dtype.name}.")
    return m


def _eager_while(cond, body, loop_vars, flat_vars, invariants, maximum_iterations):
    limit = None
    if maximum_iterations is not None:
        limit = int(_max_iterations_tensor(maximum_iterations))
    message = "body must return the same structure as loop_vars."
    first = flat_vars
    for s, t in zip(invariants, flat_vars):
        if s is not None and isinstance(t, Tensor) and not _shape_allowed(t.shape, s):
            raise ValueError(f"The shape invariant specified for {t!r:.80} is not compatible "
                             f"with the initial shape of the loop variable. It enters the loop "
                             f"with shape {t.shape}, but the specified shape invariant is {s}.")
    i = 0
    while (limit is None or i < limit) and _eager_bool(cond(*loop_vars), "cond's result"):
        result = _body_result(body(*loop_vars), loop_vars)
        _assert_same_structure(loop_vars, result, message)
        flat = nest.flatten(result)
        i += 1
        for k, (before, after, s) in enumerate(zip(first, flat, invariants)):
            if isinstance(before, Tensor):
                if not isinstance(after, Tensor):
                    after = convert_to_tensor(after, dtype=before.dtype)
                    flat[k] = after
                _check_loop_var(f"loop_vars[{k}]", before, after, s, i)
        loop_vars = nest.pack_sequence_as(loop_vars, flat)
    return loop_vars


def _traced_while(cond, body, loop_vars, flat_vars, invariants, maximum_iterations, graph):
    arrays = list(flat_vars)  # TensorArrays are carried by their flows (module doc)
    flat_vars = [v.flow if isinstance(v, TensorArray) else convert_to_tensor(v)
                 for v in flat_vars]
    invariants = [None if isinstance(a, TensorArray) else s for a, s in zip(arrays, invariants)]
    specs = []
    for k, (t, s) in enumerate(zip(flat_vars, invariants)):
        if s is not None and not _shape_allowed(t.shape, s):
            raise ValueError(f"The shape invariant specified for loop_vars[{k}] is not "
                             f"compatible with the initial shape of the loop variable. It "
                             f"enters the loop with shape {t.shape}, but the specified shape "
                             f"invariant is {s}.")
        specs.append(TensorSpec(t.shape if s is None else s, t.dtype))
    limit = None
    if maximum_iterations is not None:
        limit = _max_iterations_tensor(maximum_iterations)

    def args(placeholders):
        return nest.pack_sequence_as(loop_vars, _rebuilt(arrays, placeholders))

    cond_graph, keep = _cf.trace_branch(cond, graph, "while_cond", args, specs)
    if not isinstance(keep, Tensor):
        keep = convert_to_tensor(keep)
    _check_scalar(keep, "while_loop cond's result", (_bool,))
    body_graph, result = _cf.trace_branch(body, graph, "while_body", args, specs)
    result = _body_result(result, loop_vars)
    _assert_same_structure(loop_vars, result, "body must return the same structure as "
                                              "loop_vars.")
    outs = []
    flat_result = nest.flatten(result)
    _check_arrays("Loop var", arrays, flat_result, "loop_vars", "the body's result")
    for k, (after, spec) in enumerate(zip(flat_result, specs)):
        if isinstance(after, TensorArray):
            after = after.flow
        elif not isinstance(after, Tensor):
            after = convert_to_tensor(after, dtype=spec.dtype)
        _check_loop_var(f"loop_vars[{k}]", spec, after, spec.shape, 1)
        outs.append(after)
    final = _cf.add_while_op(cond_graph, body_graph, flat_vars, limit, keep, outs)
    return nest.pack_sequence_as(loop_vars, _rebuilt(arrays, final))
