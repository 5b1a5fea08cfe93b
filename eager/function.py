"""`eager.function` ≈ `tf.function`: trace a Python function into a graph once per tracing
type of its arguments, and run the graph on later calls.

This module is the public entry point; the implementation lives in `eager.functions`
(`polymorphic`: the decorator and its cache of traces; `concrete`: `ConcreteFunction`;
`arguments`: cache keys; `lifting`: variables made on the first call; `function_gradient`:
gradients of a call), and graphs run in `eager.runtime` (`graph_runner`: op by op). Note that
`import eager` binds the attribute `eager.function` to the decorator, as TensorFlow does;
`from eager.function import ConcreteFunction` still reaches this module.
"""

from .functions.concrete import ConcreteFunction
from .functions.polymorphic import Function, function
from .runtime.graph_runner import GraphPlan, run_graph

__all__ = ["function", "Function", "ConcreteFunction", "run_graph", "GraphPlan"]
