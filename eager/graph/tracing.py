"""Building a graph from Python code, on top of `building(graph)` (in `eager.graph.graph`, also
`graph.as_default()`), which makes `graph` this thread's interpreter while open.

`building_apart(graph)` builds with the thread's tapes, name scope and device scope set aside:
for graphs the runtime derives (a gradient's graph), not for user code.

`trace(fn, *args)` runs `fn` once with symbolic arguments and returns the graph.
"""

from __future__ import annotations

import contextlib

from ..core import context as _context
from ..base import nest
from ..tensor import Tensor
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from .graph import Graph, building
from .symbolic import SymbolicTensor

__all__ = ["building", "building_apart", "trace", "get_default_graph"]


@contextlib.contextmanager
def building_apart(graph):
    """`building(graph)` with this thread's tapes, name scope and device scope set aside: the
    graph records what the code inside does, not what the caller's tapes follow, and its ops are
    left unplaced (they are placed when the graph runs, as eager ops would be)."""
    st = _context.thread_state()
    saved_tapes, saved_scope = st.tapes, st.name_scope
    st.tapes = []
    st.name_scope = ""
    try:
        with _context.device(None), building(graph):
            yield graph
    finally:
        st.tapes = saved_tapes
        st.name_scope = saved_scope


def get_default_graph():
    """The graph this thread is building, or None when it runs eagerly (TensorFlow 2 returns a
    global graph nobody builds; here there is nothing to return)."""
    interpreter = _context.thread_state().interpreter
    return interpreter if getattr(interpreter, "is_graph", False) else None


def trace(fn, *args, name=None):
    """Runs `fn` once with symbolic stand-ins for its tensor arguments and returns the Graph.

    Each `TensorSpec` or tensor among `args` (nested structures allowed) becomes a placeholder of
    its shape and dtype (a spec's None dims stay None); other Python values are passed as they
    are. The returned tensors become `graph.outputs` (eager ones, and Python numbers, are
    captured); `graph.structured_outputs` keeps the return value as `fn` returned it.
    """
    graph = Graph(name or getattr(fn, "__name__", "graph"))
    with building(graph):
        flat = nest.flatten(args)
        symbolic = []
        for i, a in enumerate(flat):
            if isinstance(a, TensorSpec):
                symbolic.append(graph.placeholder(a.dtype, a.shape, name=a.name or f"args_{i}"))
            elif isinstance(a, Tensor) and not isinstance(a, SymbolicTensor):
                symbolic.append(graph.placeholder(a.dtype, a.shape, name=f"args_{i}"))
            else:
                symbolic.append(a)
        result = fn(*nest.pack_sequence_as(args, symbolic))
        outputs = []
        for r in nest.flatten(result):
            if r is None:
                continue
            if not isinstance(r, Tensor):
                r = convert_to_tensor(r)
            r = graph._checked_input(r, _OUTPUT)
            outputs.append(r if isinstance(r, SymbolicTensor) else graph.capture(r))
    graph.outputs = outputs
    graph.structured_outputs = result
    return graph


class _Output:
    """Stands in for an op definition in error messages about returned values."""

    name = "return value"


_OUTPUT = _Output()
