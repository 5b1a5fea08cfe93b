"""`eager.custom_gradient` ≈ `tf.custom_gradient`: a function with a hand-written gradient.

The decorated function `f(*args, **kwargs)` returns `(result, grad_fn)`. `grad_fn(*dys)` takes
one gradient per tensor in the flattened result and returns one gradient per tensor in the
flattened arguments (a list, or a single tensor for a single argument). If `f` reads trainable
variables that are not among its arguments, `grad_fn` must accept a keyword argument
`variables` (the list of them, in order of first read) and return `(argument gradients,
variable gradients)`, one per variable, as in TensorFlow. Keyword arguments reach `f` but are
not differentiated. `grad_fn` is written with ops, so an outer tape differentiates it in turn
(higher order).

Eagerly, `f` runs with recording paused (its inner ops are on no tape) and the whole call is
recorded as one step whose backward is `grad_fn`; the tapes watch the variables `f` read (a
variable argument counts as read), as they would have seen the reads.

While a function is traced, the call also becomes one graph node, `CustomGradient`: an identity
of the results, with the arguments and the variables' handles as further inputs, whose gradient
is `grad_fn`'s. That is how the custom gradient survives into the function's gradient when the
tape is *outside* the function (the derived gradient differentiates the graph, not the Python).
`grad_fn` closes over tensors of the graph `f` was traced in. In that graph (a tape inside the
function) and in its derivation graph (a tape outside: the derivation graph substitutes its
copies for the originals, `Graph.holds_copies_of`), the trace's `grad_fn` runs as it is, and the
forward values it reads are kept by the call, as TensorFlow keeps them. Elsewhere (an enclosing
function that inlined this one, an eager replay under the profiler or async dispatch) the
node's gradient calls `f` again on the node's inputs and uses that call's `grad_fn`, as control
flow recomputes a branch; there a stateful op in `f` (a random draw, an assignment; variable
reads are fine) makes the gradient an error, which names the op (one inside a `cond` or
`while_loop` body in `f` is not seen).
"""

from __future__ import annotations

import functools
import inspect

from ..core import context as _context
from ..base import nest
from ..ops.array_ops import identity
from ..core.dispatch import execute
from ..core.registry import OpDef
from ..tensor import Tensor
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from . import tape as _tape
from .tape_backward import NotRecomputableError

__all__ = ["custom_gradient"]


class _VariableWatcher:
    """Collects the trainable variables read while it is installed on this thread
    (`ThreadState.variable_watchers`; `tape.variable_accessed` tells it), once each, in order
    of first read (TensorFlow's VariableWatcher)."""

    __slots__ = ("variables", "_seen")

    def __init__(self):
        self.variables = []
        self._seen = set()

    def saw(self, variable):
        if id(variable) not in self._seen:
            self._seen.add(id(variable))
            self.variables.append(variable)


def _run_apart(f, args, kwargs):
    """`f(*args, **kwargs)` with this thread's tapes set aside and a variable watcher
    installed: (result, grad_fn, variables read)."""
    st = _context.thread_state()
    watcher = _VariableWatcher()
    saved = st.tapes
    st.tapes = []
    st.variable_watchers.append(watcher)
    _context.enter_slow_path()  # tape-free, but not fast: variable reads must be seen
    try:
        result, grad_fn = f(*args, **kwargs)
    finally:
        st.tapes = saved
        st.variable_watchers.pop()
        _context.leave_slow_path()
    return result, grad_fn, watcher.variables


def _accepts_variables(grad_fn) -> bool:
    try:
        parameters = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: let the call decide
        return True
    return any(p.name == "variables" or p.kind is p.VAR_KEYWORD for p in parameters)


def _call_grad_fn(name, grad_fn, variables, n_args, output_grads):
    """grad_fn's gradients, checked: one per flattened argument, then one per variable."""
    if variables:
        grads = grad_fn(*output_grads, variables=variables)
        if not isinstance(grads, (list, tuple)) or len(grads) != 2:
            raise ValueError(f"custom_gradient: the gradient function of {name} uses variables, "
                             "so it must return (argument gradients, variable gradients).")
        input_grads, variable_grads = grads
        variable_grads = list(variable_grads or ())
        if len(variable_grads) != len(variables):
            raise ValueError(f"custom_gradient: the gradient function of {name} must return a "
                             f"gradient for each variable ({len(variables)}: "
                             f"{[v.name for v in variables]}); it returned "
                             f"{len(variable_grads)}.")
    else:
        input_grads, variable_grads = grad_fn(*output_grads), []
    flat = (nest.flatten(input_grads) if isinstance(input_grads, (list, tuple))
            else [input_grads])
    if len(flat) != n_args:
        raise ValueError(f"custom_gradient: the gradient function of {name} returned "
                         f"{len(flat)} gradients for {n_args} inputs (one per tensor in the "
                         "flattened arguments).")
    return flat + variable_grads


class _Traced:
    """What a `CustomGradient` node's gradient needs (its `call` attribute): `f` and how to
    call it again, the `grad_fn` of the trace and the graph it belongs to, and why `f` may not
    run again (a stateful op's description, or "")."""

    __slots__ = ("f", "structure", "kwargs", "n_results", "n_args", "variable_args",
                 "variables", "grad_fn", "graph", "stateful")

    def __init__(self, f, structure, kwargs, n_results, flat_args, variables, grad_fn, graph,
                 stateful):
        self.f = f
        self.structure = structure  # the positional arguments, for pack_sequence_as
        self.kwargs = kwargs
        self.n_results = n_results
        self.n_args = len(flat_args)
        # Per flattened argument: the variable passed there, or None for a tensor.
        self.variable_args = [None if isinstance(a, Tensor) else a for a in flat_args]
        self.variables = variables
        self.grad_fn = grad_fn
        self.graph = graph
        self.stateful = stateful

    def __repr__(self):
        return f"<custom gradient of {self.f.__name__}>"


def _custom_kernel(xp, *arrays, call):
    return tuple(arrays[:call.n_results])


def _custom_infer(*inputs, call):
    return tuple(TensorSpec(t.shape, t.dtype) for t in inputs[:call.n_results])


#: Inputs: f's flattened results, then its flattened arguments, then the handles of the
#: variables it read; outputs: the results (identities). Not registered: it exists only in
#: graphs that `custom_gradient` builds, like the control-flow ops.
CUSTOM_GRADIENT = OpDef("CustomGradient", _custom_kernel, _custom_infer, num_outputs=None)


@CUSTOM_GRADIENT.def_gradient(keep_inputs=True)
def _custom_gradient_rule(forward, *output_grads):
    traced = forward.attrs["call"]
    n_results, n_args = traced.n_results, traced.n_args
    grad_fn = traced.grad_fn
    here = _context.thread_state().interpreter
    if here is not traced.graph and getattr(here, "copy_source", None) is not traced.graph:
        # Formed elsewhere than in the graph f was traced in or a copy of it: its grad_fn's
        # closures belong to that graph, so f runs again here, on this node's inputs.
        if traced.stateful:
            raise NotRecomputableError(
                None, "CustomGradient",
                f"Cannot differentiate the custom gradient of {traced.f.__name__} here: its "
                f"gradient runs {traced.f.__name__} again, which contains the stateful "
                f"{traced.stateful}, which must not run twice. Record the gradient tape inside "
                "the traced function, or keep stateful ops out of the custom-gradient function.")
        args = [a if fixed is None else fixed  # a variable argument is passed as itself
                for a, fixed in zip(forward.inputs[n_results:n_results + n_args],
                                    traced.variable_args)]
        _, grad_fn, _ = _run_apart(traced.f, nest.pack_sequence_as(traced.structure, args),
                                   traced.kwargs)
    grads = _call_grad_fn(traced.f.__name__, grad_fn, traced.variables, n_args, output_grads)
    return (None,) * n_results + tuple(grads)


def _stateful_issue(ops) -> str:
    """A description of the first op among `ops` that must not run twice ('' if none): stateful
    ops, except effects with no outputs and no writes (prints)."""
    for op in ops:
        d = op.op_def
        if d.stateful and (op.outputs or d.resource_writes):
            return f"{op.type} op {op.name!r}"
    return ""


def _as_input(arg):
    """A flattened argument as the call takes it: a tensor or a variable as it is (the call
    records a variable by its handle, whose gradient is the variable's), anything else
    converted to a tensor."""
    if isinstance(arg, Tensor):
        return arg
    if getattr(arg, "_tape_source", None) is not None:
        return arg
    return convert_to_tensor(arg)


def custom_gradient(f=None):
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        st = _context.thread_state()
        graph = st.interpreter if getattr(st.interpreter, "is_graph", False) else None
        if not st.tapes and graph is None:
            result, _ = f(*args, **kwargs)
            return result
        flat_args = [_as_input(a) for a in nest.flatten(args)]
        structured_args = nest.pack_sequence_as(args, flat_args)
        n_ops = len(graph.get_operations()) if graph is not None else 0
        result, grad_fn, read = _run_apart(f, structured_args, kwargs)
        passed = {id(a) for a in flat_args}
        variables = [v for v in read if id(v) not in passed]
        if variables and not _accepts_variables(grad_fn):
            raise TypeError(f"@custom_gradient grad_fn must accept keyword argument "
                            f"'variables', since function {f.__name__} uses variables: "
                            f"{[v.name for v in variables]}")
        for a in flat_args:  # a variable argument is read by the call, as TensorFlow's
            if not isinstance(a, Tensor) and getattr(a, "trainable", False):
                _tape.variable_accessed(a)
        for v in variables:
            _tape.variable_accessed(v)
        arg_inputs = [a if isinstance(a, Tensor) else a._tape_source() for a in flat_args]
        handles = [v._tape_source() for v in variables]
        flat_result = [convert_to_tensor(r) for r in nest.flatten(result)]
        if graph is not None:
            traced = _Traced(f, args, kwargs, len(flat_result), flat_args, variables,
                             grad_fn, graph, _stateful_issue(graph.get_operations()[n_ops:]))
            outputs = execute(CUSTOM_GRADIENT, (*flat_result, *arg_inputs, *handles),
                              {"call": traced})
            return nest.pack_sequence_as(result, list(outputs))
        inputs = arg_inputs + handles
        input_objects = {id(a) for a in inputs}
        outputs = [identity(r) if id(r) in input_objects else r  # an output that is an input
                   for r in flat_result]                          # needs its own identity
        n_args = len(flat_args)

        def backward(entry, *output_grads):
            return tuple(_call_grad_fn(f.__name__, grad_fn, variables, n_args, output_grads))

        _tape.record_custom(inputs, outputs, backward)
        return nest.pack_sequence_as(result, outputs)

    return decorated
