"""Gradient functions of the control-flow ops `If`, `Case` and `While`, written with ops.

They run when a tape records one of these ops *as one op*: a tape active while a graph is traced
(the op is emitted whole and recorded symbolically), a function's derived gradient (which
records the function graph's ops on a tape of its own), or any caller that emits the op under a
tape. (A runner replaying a function op by op for an eager tape expands the op instead, see
`eager.control_flow.ops`.) Each rule builds control flow again: the gradient of an `If`/`Case` is
an `If`/`Case` on the same predicate or index, the gradient of a `While` is a `While` running the
forward iteration count backwards. Because the rules only emit ops, they work in a graph being
traced and eagerly, and an outer tape records the control-flow ops they emit, whose gradients
are these same rules: higher order works (see "Higher order" below).

Gradient graphs: rematerialisation. The gradient graph of a branch (or of a loop body) is built
by running the branch's operations again inside it, on the values the forward op received,
under a private tape, and running the backward pass of that tape from the output gradients
(`_graph_gradient`). Intermediates of the forward branch are thus recomputed instead of being
exported by the forward op (TensorFlow's cond_v2 adds them as extra outputs, which means
rewriting the forward op once a gradient is asked for). The cost is one more forward pass of the
branch taken (of each iteration's body, for loops) during the backward pass; the benefit is
that forward ops never change and keep nothing alive for a gradient nobody asks for. An input
that only a branch not taken reads (or that only a loop that ran zero times reads) gets a zero
gradient, not None: the op is connected to it (TensorFlow's cond_v2/while_v2 do the same).
Recomputing differentiates the branch's primitive ops: a `custom_gradient` inside a traced
branch is not seen (neither does the eager replay see it).

Recomputing is only right when running the ops again gives the same values and does nothing
else. So a branch, loop body (and, when the whole loop must be recomputed, loop condition)
containing a stateful op (an assign, a random draw, a variable created in the graph, or nested
control flow containing one) makes the rule raise `NotRecomputableError` (an
`UnimplementedError`, and a `LookupError` like the backward pass's "no gradient" error, so a
function's derived gradient falls back to replaying the ops actually run) naming that op; record
the tape outside the function instead (the eager path replays the ops actually run), or use
stateless random ops. Prints are skipped when recomputing (they would print twice). Variable
*reads* are recomputed: they read the variable again when the gradient runs, which gives the
forward value unless the variable was assigned in between (TensorFlow's cond_v2 would export
the value read).

While loops: TensorList accumulation. The backward loop needs each iteration's loop variables.
A `While` op made while a tape follows one of its inputs is *accumulating* (see
`ops.emit_while`): before each iteration its kernel pushes every loop variable the body reads
onto a TensorList, and it outputs the iteration count and the lists (hidden from `while_loop`'s
caller). The gradient is a `While` whose loop variables are a counter running from that count
down to 0, the gradients of the floating loop variables, and the running sums of the gradients
of the captured inputs (tensors and variable handles the body reads); its body reads iteration
r's loop variables from the lists (`TensorListGetItem`, the lists being loop-invariant captures),
recomputes the body on them and applies the body's backward pass. TensorFlow's while_v2 pushes
every intermediate the body's gradient needs; pushing only the loop variables and recomputing
the body trades one more body evaluation per iteration for memory of O(iterations x loop
variables) instead of O(iterations x intermediates). Integer loop variables (counters) are
pushed when the body reads them (the recomputation needs them) and get no gradient.
`maximum_iterations` needs nothing: the count says how many iterations ran. A TensorList loop
variable (a TensorArray's flow) is differentiated like a floating one: its values are pushed onto
a list of lists, its gradient is a list gradient. A loop variable the body reads that a
TensorList cannot hold (a resource) makes the rule raise `NotRecomputableError` too. A `While`
op emitted without accumulators (by code that copies a graph's ops under a tape, such as a
function's derived gradient) is differentiated by running the loop again with them first, from
the op's inputs (so its cond must be stateless too); `ops.emit_while` emits a copy with
accumulators instead when a tape follows its inputs.

Higher order. The gradient ops are differentiable: an If gradient's branches are ordinary graphs
of recomputed forward ops and backward ops, so an outer tape differentiates the gradient If with
the same rule (second and higher order through `cond`/`switch_case`). The gradient While is made
accumulating when an outer tape follows its inputs, and its rule handles gradients arriving at
an accumulating op's lists (they add to the read loop variables' gradients), so second order
through `while_loop` works too, and higher orders: the second-order loop carries TensorList
gradients, accumulated as lists of lists, and an unset slot of a gradient of such a list reads
as a list gradient as long as the list it stands for (`TENSOR_LIST_GRADIENT_ITEM`).
"""

from __future__ import annotations

import contextlib
import weakref

from ..core import context as _context
from ..autodiff.tape_backward import NotRecomputableError, aggregate, backward
from ..autodiff.tape import Tape
from ..base.dtypes import int32, resource, variant
from ..graph import building, get_default_graph
from ..graph.placeholder import PLACEHOLDER
from ..core import dispatch
from ..ops.creation_ops import zeros, zeros_like
from ..ops.grad_utils import needs_gradient, output_unused, zeros_of_shape
from ..ops.list_ops import (TENSOR_LIST_LENGTH, TENSOR_LIST_RESERVE, TENSOR_LIST_SET_ITEM,
                            TensorList, as_list, tensor_list_get_item)
from ..core.registry import register_op
from ..base.errors import InvalidArgumentError
from ..devices.resource_handles import handle_data
from ..tensor import IndexedSlices
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from . import ops as _cf

__all__ = ["recompute_issue", "NotRecomputableError", "TENSOR_LIST_ZEROS_LIKE",
           "TENSOR_LIST_GRADIENT_ITEM"]


# -- small helpers -----------------------------------------------------------------------------
def _differentiable(dtype) -> bool:
    return dtype._inexact or dtype is resource or dtype is variant


@contextlib.contextmanager
def _tapes(tapes):
    """This thread's tapes are `tapes` inside (the gradient graphs' inner ops are recorded only
    on the private tape that differentiates them; outer tapes see the control-flow op)."""
    st = _context.thread_state()
    saved, st.tapes = st.tapes, tapes
    try:
        yield
    finally:
        st.tapes = saved


def _dense(g):
    return convert_to_tensor(g) if isinstance(g, IndexedSlices) else g


def _zeros_list_kernel(xp, handle):
    if handle.__class__ is not TensorList:  # copied between CPU devices: a 0-d object array
        handle = handle[()]
    n = len(handle)
    return TensorList([None] * n, n, handle.element_dtype, handle.element_shape)


#: A list of as many unset slots (zeros) as its input, of its element dtype and shape:
#: TensorFlow's ZerosLike on a variant. The zero gradient of a TensorList input. CPU only: it
#: reads no element, and a list value cannot live in an accelerator's memory.
TENSOR_LIST_ZEROS_LIKE = register_op(
    "TensorListZerosLike", _zeros_list_kernel, lambda handle: TensorSpec((), variant),
    differentiable=False, device_types=frozenset({"CPU"}))


def _read(lst, index, spec):
    """Element `index` of accumulator `lst`, read where the list lives: only the element moves
    to the device of the ops using it, and on a GPU, where the While kernel leaves the lists of
    the GPU's values (`ops._accumulated`), nothing moves. The device is the list's own when it
    is eager; when it is symbolic, the forward op's device request (placement then puts the
    read where it put the loop's body), else placement's choice."""
    where = lst.device
    with _context.device(where) if where else contextlib.nullcontext():
        return tensor_list_get_item(lst, index, spec.dtype, spec.shape)


def _gradient_item_kernel(xp, grads, index, like):
    grads = as_list(grads)
    i = int(index)
    if not 0 <= i < len(grads):
        raise InvalidArgumentError(None, "TensorListGradientItem", f"Trying to access element "
                                   f"{i} in a list with {len(grads)} elements.")
    item = grads.elements()[i]
    if item is None:
        like = as_list(like)
        n = len(like)
        return TensorList([None] * n, n, like.element_dtype, like.element_shape)
    return as_list(item)


#: Slot `index` of a list of list gradients, or, where that slot is unset (zero), a list of as
#: many unset slots as `like`, the list it is the gradient of: reading a zero list gradient
#: needs its length, which the unset slot does not know. CPU only, like TensorListZerosLike.
TENSOR_LIST_GRADIENT_ITEM = register_op(
    "TensorListGradientItem", _gradient_item_kernel,
    lambda grads, index, like: TensorSpec((), variant), device_types=frozenset({"CPU"}))


@TENSOR_LIST_GRADIENT_ITEM.def_gradient(keep_inputs=(0, 1))
def _gradient_item_grad(forward, ditem):
    # As TensorListGetItem's: a list of lists unset but for slot `index`.
    grads, index = forward.inputs[:2]
    length = dispatch.execute(TENSOR_LIST_LENGTH, (grads,))
    reserved = dispatch.execute(TENSOR_LIST_RESERVE, (length,),
                                {"element_dtype": variant, "element_shape": ()})
    return dispatch.execute(TENSOR_LIST_SET_ITEM, (reserved, index, ditem)), None, None


def _read_gradient(lst, index, spec, like):
    """Element `index` of `lst`, a gradient of accumulator lists: for a TensorList loop
    variable a list gradient as long as `like` (the value it is the gradient of) where unset."""
    if spec.dtype is not variant:
        return _read(lst, index, spec)
    with _context.device(_cf.ACCUMULATOR_DEVICE):
        return dispatch.execute(TENSOR_LIST_GRADIENT_ITEM, (lst, index, like))


def _zero_gradient(t, like=None):
    """Zeros standing for the gradient of input `t`: zeros like it, for a variable handle zeros
    of the variable's dtype and shape (from the handle, else from `like`, a gradient of it
    computed elsewhere), for a TensorList a list of unset slots."""
    dtype = t.dtype
    if dtype is variant:
        return dispatch.execute(TENSOR_LIST_ZEROS_LIKE, (t,))
    if dtype is resource:
        spec = _value_spec(t, like)
        return zeros(spec.shape.as_list(), spec.dtype)
    return zeros_like(t)


def _value_spec(handle, like=None) -> TensorSpec:
    """The dtype and shape of the variable a resource input refers to."""
    try:
        dtype, shape = handle_data(handle)
        return TensorSpec(shape, dtype)
    except TypeError:
        pass
    if like is not None and like.shape.is_fully_defined():
        return TensorSpec(like.shape, like.dtype)
    raise NotRecomputableError(None, "gradient", f"The gradient of a control-flow op with "
                               f"respect to resource input {handle!r:.80} needs the variable's "
                               "dtype and shape, which are not known here.")


def _read_spec(graph, placeholder):
    """The spec of a value `graph` reads through resource input `placeholder` (None if it reads
    none with a known shape): what a variable handle's gradient looks like."""
    for op in graph.get_operations():
        if op.type == "ReadVariableOp" and op.inputs[0] is placeholder:
            return TensorSpec(op.outputs[0].shape, op.outputs[0].dtype)
    return None


# -- can a graph be recomputed? ---------------------------------------------------------------
_ISSUES = weakref.WeakKeyDictionary()  # graph -> "" (recomputable) or the offending op's text


def _skipped(op) -> bool:
    """Ops left out when recomputing: effects with no outputs and no resource writes (prints)."""
    d = op.op_def
    return d.stateful and not op.outputs and not d.resource_writes and d.replay is None


def _subgraphs(attrs):
    body = attrs.get("body")
    if isinstance(body, _cf.CaseBody):
        return body.branches
    if isinstance(body, _cf.WhileBody):
        return (body.cond, body.body)
    return ()


def recompute_issue(graph) -> str:
    """'' when `graph` (a branch, loop cond or body) can be run again for its gradient, else a
    description of the first op that cannot (a stateful op, also inside nested control flow)."""
    issue = _ISSUES.get(graph)
    if issue is not None:
        return issue
    issue = ""
    for op in graph.get_operations():
        d = op.op_def
        if d is PLACEHOLDER or _skipped(op):
            continue
        if d.replay is not None:
            issue = next((i for i in map(recompute_issue, _subgraphs(op.attrs)) if i), "")
        elif d.stateful:
            issue = f"{op.type} op {op.name!r}"
        if issue:
            break
    _ISSUES[graph] = issue
    return issue


def _check_recomputable(op_name, graphs):
    for g in graphs:
        issue = recompute_issue(g)
        if issue:
            raise NotRecomputableError(
                None, op_name,
                f"Cannot differentiate {op_name} op ({g.name}) here: its gradient recomputes "
                f"the {'branch' if op_name != 'While' else 'loop'} and that contains the "
                f"stateful {issue}, which must not run twice. Record the gradient tape outside "
                "the traced function (eager tapes replay the ops actually run), or use "
                "stateless ops inside the control flow.")


# -- recomputing a graph and differentiating it ---------------------------------------------------
def _recompute(graph, feeds) -> list:
    """Runs `graph`'s operations again on `feeds` (for `graph.inputs`; None for inputs nothing
    reads) through dispatch: into the graph being built, or eagerly. Prints are skipped. A
    `While` is emitted anew (`ops.emit_while`) so that it accumulates when the tape recording
    the recomputation follows it."""
    env = {id(p): f for p, f in zip(graph.inputs, feeds)}
    for op in graph.get_operations():
        d = op.op_def
        if d is PLACEHOLDER or _skipped(op):
            continue
        inputs = tuple([env[id(t)] for t in op.inputs])
        scope = _context.device(op.device) if op.device else contextlib.nullcontext()
        with scope:
            body = op.attrs.get("body")
            if isinstance(body, _cf.WhileBody):
                out = _cf.emit_while(body, inputs)
            else:
                out = dispatch.execute(d, inputs, op.attrs)
        if out.__class__ is not tuple:
            out = (out,)
        for t, v in zip(op.outputs, out):
            env[id(t)] = v
    return [env[id(t)] for t in graph.outputs]


def _graph_gradient(graph, feeds, output_grads, wanted) -> list:
    """Gradients of `graph`'s outputs, weighted by `output_grads` (None: not a target), with
    respect to `feeds[p]` for each p in `wanted` (None where unconnected), computed by
    recomputing the graph on `feeds` under a private tape and running its backward pass; every
    op goes to the graph being built (or runs eagerly)."""
    private = Tape()
    with _tapes([private]):
        ids = {p: private.watch(feeds[p]) for p in wanted if feeds[p] is not None}
        outputs = _recompute(graph, feeds)
    targets, grads = [], []
    for o, g in zip(outputs, output_grads):
        if g is not None and o is not None and _differentiable(o.dtype):
            targets.append(o)
            grads.append(g)
    with _tapes([]):
        return backward(private, targets, grads, [ids.get(p, -1) for p in wanted])


def _trace(fn, name, specs=()):
    """`trace_branch` of `fn` in the graph being built (or a standalone one, eagerly), with no
    tape recording its ops (see `_tapes`)."""
    def hidden(*args):
        with _tapes([]):
            return fn(*args)

    return _cf.trace_branch(hidden, get_default_graph(), name, (lambda ps: ps) if specs else (),
                            specs)


# -- If / Case -----------------------------------------------------------------------------------
def _case_grad(forward, *output_grads):
    """If/Case: an If/Case on the same selector whose branch k is the gradient graph of forward
    branch k (recomputed, see the module doc) giving every wanted input's gradient (zeros where
    branch k does not use the input)."""
    case = forward.attrs["body"]
    op_name = "If" if case.is_if else "Case"
    selector, captures = forward.inputs[0], forward.inputs[1:]
    none = (None,) * len(forward.inputs)
    wanted = [j for j in range(len(captures))
              if needs_gradient(forward, 1 + j) and _differentiable(forward.input_dtypes[1 + j])]
    grads = [None if g is None or output_unused(forward, k) or not _differentiable(g.dtype)
             else _dense(g) for k, g in enumerate(output_grads)]
    if not wanted or all(g is None for g in grads):
        return none
    _check_recomputable(op_name, case.branches)
    wanted_set = set(wanted)
    graphs, found = [], []
    for k, branch in enumerate(case.branches):
        positions = case.positions[k]

        def branch_gradient(branch=branch, positions=positions):
            feeds = [captures[j] for j in positions]
            local = [p for p, j in enumerate(positions) if j in wanted_set]
            gs = _graph_gradient(branch, feeds, grads, local)
            return {positions[p]: _dense(g) for p, g in zip(local, gs) if g is not None}

        graph, by_input = _trace(branch_gradient, f"{op_name.lower()}_grad_branch_{k}")
        graphs.append(graph)
        found.append(by_input)
    connected = [j for j in wanted if any(j in f for f in found)]
    if not connected:
        return none
    for graph, by_input in zip(graphs, found):
        missing = [j for j in connected if j not in by_input]
        if missing:
            with building(graph), _tapes([]):
                for j in missing:
                    like = next(f[j] for f in found if j in f)
                    by_input[j] = _zero_gradient(captures[j], like)
    outputs = _cf.add_case_op(op_name, selector, graphs,
                              [[f[j] for j in connected] for f in found])
    result = list(none)
    for j, g in zip(connected, outputs):
        result[1 + j] = g
    return tuple(result)


# -- While ---------------------------------------------------------------------------------------
def _while_grad(forward, *output_grads):
    """While: a While over the iteration count, backwards (module doc)."""
    loop = forward.attrs["body"]
    n = loop.num_vars
    base = n + (1 if loop.has_max else 0)
    inputs = forward.inputs
    captures = inputs[base:]
    specs = loop.specs
    none = [None] * len(inputs)
    # Floating loop variables and TensorLists (a TensorArray's flow) get gradients.
    floats = [i for i in range(n) if specs[i].dtype._inexact or specs[i].dtype is variant]
    want_vars = [i for i in floats if needs_gradient(forward, i)]
    body_positions = loop.positions[1]
    want_caps = [j for j in dict.fromkeys(body_positions)
                 if needs_gradient(forward, base + j)
                 and _differentiable(forward.input_dtypes[base + j])]
    if not want_vars and not want_caps:
        return tuple(none)
    _check_recomputable("While", (loop.body,) if loop.accumulate is not None
                        else (loop.cond, loop.body))
    acc = loop.accumulating()
    if acc.unaccumulated:
        j = acc.unaccumulated[0]
        raise NotRecomputableError(
            None, "While", f"Cannot differentiate While op ({loop.body.name}): its body reads "
            f"loop variable {j} of dtype {specs[j].dtype.name}, which the gradient would need "
            "per iteration and a TensorList cannot hold. Record the gradient tape outside the "
            "traced function (eager tapes replay the loop).")
    if loop.accumulate is None:  # emitted without accumulators: run it again with them
        outs = _cf.emit_while(loop, inputs, accumulate=True)
        count, lists = outs[n], outs[n + 1:]
        list_grads = (None,) * len(lists)
    else:
        outs = forward.outputs
        count, lists = outs[n], outs[n + 1:]
        list_grads = tuple(None if g is None or output_unused(forward, n + 1 + k) else g
                           for k, g in enumerate(output_grads[n + 1:]))
    dvs = []
    for i in floats:
        g = output_grads[i]
        if g is None or (specs[i].dtype is variant and output_unused(forward, i)):
            g = _zero_gradient(outs[i]) if specs[i].dtype is variant else \
                zeros_of_shape(forward.output_shapes[i], specs[i].dtype)
        dvs.append(_dense(g))
    cap_placeholder = {j: p for (_, p), j in zip(loop.body.captures, body_positions)}
    cap_zeros = [_zero_gradient(captures[j], _read_spec(loop.body, cap_placeholder[j]))
                 for j in want_caps]
    loop_specs = [TensorSpec((), int32)] + [specs[i] for i in floats] + \
        [TensorSpec(z.shape, z.dtype) for z in cap_zeros]
    slot = {j: k for k, j in enumerate(acc.accumulate)}
    body_captures = [captures[j] for j in body_positions]
    cap_position = {j: p for p, j in enumerate(body_positions)}
    nf = len(floats)

    # The counter lives where the accumulators do (the CPU): the loop condition and the reads
    # of the accumulators then take it without a copy, where on a GPU each of them would wait
    # for the device (TensorFlow keeps int32 counters in host memory for the same reason).
    def grad_cond(r, *rest):
        with _context.device(_cf.ACCUMULATOR_DEVICE):
            return r > 0

    def grad_body(r, *rest):
        with _context.device(_cf.ACCUMULATOR_DEVICE):
            r = r - 1
        dv, sums = rest[:nf], rest[nf:]
        values = [None] * n
        for j, k in slot.items():
            values[j] = _read(lists[k], r, specs[j])
        feeds = values + body_captures
        wanted = [i for i in floats if values[i] is not None] + \
            [n + cap_position[j] for j in want_caps]
        out_grads = [None] * n
        for i, g in zip(floats, dv):
            out_grads[i] = g
        gs = dict(zip(wanted, _graph_gradient(loop.body, feeds, out_grads, wanted)))
        new_dv = []
        for i, g in zip(floats, dv):
            d = gs.get(i)
            d = _zero_gradient(values[i] if values[i] is not None else g) if d is None \
                else _dense(d)
            k = slot.get(i)
            if k is not None and list_grads[k] is not None:  # gradients reaching the lists
                d = aggregate([d, _read_gradient(list_grads[k], r, specs[i], values[i])])
            new_dv.append(d)
        new_sums = []
        for j, s in zip(want_caps, sums):
            d = gs.get(n + cap_position[j])
            new_sums.append(s if d is None else aggregate([s, _dense(d)]))
        return (r, *new_dv, *new_sums)

    cond_graph, keep = _trace(grad_cond, "while_grad_cond", loop_specs)
    body_graph, result = _trace(grad_body, "while_grad_body", loop_specs)
    finals = _cf.add_while_op(cond_graph, body_graph, [count, *dvs, *cap_zeros], None, keep,
                              list(result))
    for k, i in enumerate(floats):
        if i in want_vars:
            none[i] = finals[1 + k]
    for k, j in enumerate(want_caps):
        none[base + j] = finals[1 + nf + k]
    return tuple(none)


# Installed when the package imports this module (`ops` never imports it).
_cf.set_gradient_function("If", _case_grad)
_cf.set_gradient_function("Case", _case_grad)
_cf.set_gradient_function("While", _while_grad)
