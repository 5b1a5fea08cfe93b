"""Graphs: what tracing a Python function produces (≈ the graph of a `tf.function`).

* `Graph`: ordered `Operation`s with unique names, `inputs` (placeholders), `outputs`,
  `control_outputs`, `captures`; it is also the tracing interpreter dispatch hands ops to.
* `Operation`: one `OpDef` applied to symbolic inputs, with control inputs.
* `SymbolicTensor`: an operation's output, typed by the op's shape inference, with no value.
* `control_deps.AutoControlDeps`: the automatic control dependencies every graph adds as ops
  arrive (per-resource ordering, the chain of stateful ops, must-run ops); `Graph.finalize`.
* `building(graph)` / `graph.as_default()`: trace in this thread; `trace(fn, *args)`;
  `get_default_graph()`.

This package sits above `eager.ops` and below the function layer; nothing lower imports it.
"""

from .graph import Graph, building
from .operation import Operation
from .placeholder import PLACEHOLDER
from .symbolic import SymbolicTensor
from .tracing import building_apart, get_default_graph, trace

__all__ = ["Graph", "Operation", "SymbolicTensor", "PLACEHOLDER", "building", "building_apart",
           "trace", "get_default_graph"]
