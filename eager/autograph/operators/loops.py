"""Converted `while` and `for` statements: a loop op when a traced tensor decides the loop,
Python's loop otherwise.

The converter turns a loop into a body function that assigns the user's variables through
`nonlocal`, and a call naming the loop variables (those the body assigns that are used later or
in the next iteration; a staged loop reads and writes them through the body's closure cells,
`state.State`):

    while_stmt(loop_test, loop_body, ("x",), opts)
    for_stmt(iterable, extra_test, loop_body, ("s",), opts)

`extra_test` (or None) is the converter's condition for leaving a `for` early (`break`,
`return`); `opts` holds `set_loop_options`' options and, for a `for`, `iterate_names` (the
target's name).

`while_stmt` evaluates the condition once apart (in a throwaway branch graph, so that no op of
it lands in the function): a symbolic tensor stages the loop (`staging.staged_while`), anything
else runs Python's loop. `for_stmt` decides by the iterable, first match wins:

1. an object whose type defines `__eager_for_loop__(self, loop)`: it is called with a `ForLoop`
   and runs the loop itself (with `loop.run_indexed`, `run_range` or `run_python`). This is the
   extension point for iterables that are not tensors (`eager.data.Dataset` and its iterators); the
   converter's own `enumerate`/`zip` of traced tensors use it;
2. a `range` whose size is known only when the function runs (`builtins.TensorRange`: what
   `range` or `eager.range` of a traced bound is as the iterable, see
   `calls.Caller.iterable`), or a traced `Range` op's output: a loop over an iterate (the
   Range op is not used);
3. any other symbolic tensor: a loop over its first dimension;
4. a TensorArray-like object (`size()` and `read(i)`) while tracing: a loop over its elements;
5. anything else: Python's `for`, unrolled into the trace as in TensorFlow.
"""

from __future__ import annotations

from ...graph import get_default_graph
from ...ops.array_ops import range as _eager_range
from ...control_flow.ops import trace_branch
from ...graph.symbolic import SymbolicTensor
from .builtins import TensorRange, is_tensor_array_like, len_
from .conditionals import is_staged
from .located import caller, error
from .staging import indexed_loop, range_loop, staged_while
from .state import State

__all__ = ["while_stmt", "for_stmt", "ForLoop"]

_PYTHON_LOOP_BREAK = (
    "break and return statements which depend on a tensor condition are not supported in "
    "Python for loops. Did you intend to make it a tensor loop (over eager.range or a tensor)?")
_PYTHON_WHILE_CHANGED = (
    "The condition of while loop started as non-Tensor, then changed to Tensor. This may "
    "happen either because variables changed type, or when a break or return statement inside "
    "the loop depends on a Tensor condition. In both cases, changing to a tensor loop should "
    "remove the error.")


class ForLoop:
    """A converted `for` statement, as an iterable's `__eager_for_loop__` receives it.

    `body(element)` runs one iteration; `extra_test()` (or None) says whether to go on;
    `get_state()` / `set_state(values)` read and write the loop variables, named
    `symbol_names`; `opts` are the loop's options. Run it with one of the `run_*` methods."""

    __slots__ = ("body", "extra_test", "symbol_names", "opts", "where", "_state")

    def __init__(self, extra_test, body, symbol_names, opts, where):
        self.extra_test = extra_test
        self.body = body
        self.symbol_names = tuple(symbol_names)
        self.opts = opts or {}
        self.where = where
        self._state = None

    def _cells(self):
        if self._state is None:
            self._state = State(self.body, self.symbol_names)
        return self._state

    def get_state(self) -> tuple:
        return self._cells().get()

    def set_state(self, values) -> None:
        self._cells().set(values)

    def run_python(self, iterable):
        """Python's loop over `iterable` (unrolled into a trace)."""
        if self.extra_test is None:
            for element in iterable:
                self.body(element)
            return
        if not self._going_on():
            return
        for element in iterable:
            self.body(element)
            if not self._going_on():
                break

    def run_indexed(self, length, element_at):
        """A loop over `element_at(0) .. element_at(length - 1)`: staged while tracing (even
        for an int `length`, as TensorFlow stages loops over tensors), Python's otherwise."""
        if get_default_graph() is None:
            self.run_python(element_at(i) for i in range(int(length)))
        else:
            indexed_loop(self, length, element_at)

    def run_range(self, start, limit, delta, dtype=None):
        """A loop over `range(start, limit, delta)` (scalars: tensors or numbers): staged while
        tracing, Python's otherwise."""
        if get_default_graph() is None:  # as `for i in eager.range(...)` runs eagerly
            self.run_python(_eager_range(start, limit, delta, dtype=dtype))
        else:
            range_loop(self, start, limit, delta, dtype)

    def _going_on(self) -> bool:
        value = self.extra_test()
        if isinstance(value, SymbolicTensor):
            raise error(NotImplementedError, _PYTHON_LOOP_BREAK, self.where)
        return bool(value)


def for_stmt(iter_, extra_test, body, symbol_names, opts):
    """A converted `for` statement (see the module doc)."""
    loop = ForLoop(extra_test, body, symbol_names, opts, caller())
    hook = getattr(type(iter_), "__eager_for_loop__", None)
    if hook is not None:
        hook(iter_, loop)
    elif isinstance(iter_, TensorRange):
        loop.run_range(iter_.start, iter_.limit, iter_.delta)
    elif isinstance(iter_, SymbolicTensor):
        bounds = _range_bounds(iter_)
        if bounds is not None:
            loop.run_range(*bounds)
        else:
            loop.run_indexed(len_(iter_), iter_.__getitem__)
    elif is_tensor_array_like(iter_):
        loop.run_indexed(iter_.size(), iter_.read)
    else:
        loop.run_python(iter_)


def _range_bounds(tensor):
    """(start, limit, delta, dtype) of a traced `eager.range` output, else None."""
    op = tensor.op
    if op.type != "Range":
        return None
    if len(op.inputs) == 3:
        start, limit, delta = op.inputs
        return start, limit, delta, tensor.dtype
    attrs = op.attrs
    if all(k in attrs for k in ("start", "limit", "delta")):
        return attrs["start"], attrs["limit"], attrs["delta"], tensor.dtype
    return None


def while_stmt(test, body, symbol_names, opts):
    """A converted `while` statement (see the module doc)."""
    where = caller()
    graph = get_default_graph()
    if graph is None:
        while test():
            body()
        return
    _, first = trace_branch(test, graph, "while_probe")
    if is_staged(first):
        state = State(body, symbol_names)
        staged_while(test, body, state.get, state.set, tuple(symbol_names), opts or {}, where)
        return
    if not first:
        return
    body()
    while True:
        going = test()
        if is_staged(going):
            raise error(NotImplementedError, _PYTHON_WHILE_CHANGED, where)
        if not going:
            return
        body()
