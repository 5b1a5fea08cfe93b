"""Functions: trace a Python function into a graph once, run the graph on later calls
(≈ `tf.function`).

* `function` / `Function`: the decorator and the polymorphic function it returns (a cache of
  traces keyed by the arguments' tracing types; methods per instance) — `polymorphic`;
* `ConcreteFunction`: one trace, inspectable and callable — `concrete`;
* cache keys and argument binding — `arguments`;
* variables created on the first call (creators, `init_scope`, lifted initializers) and
  variables as arguments — `lifting`;
* `run_graph`: the first graph runtime, each operation with its own kernel — `runner`.

Sits above `eager.graph`, `eager.ops` and `eager.variables`; nothing lower imports it.
"""

from .concrete import ConcreteFunction
from .polymorphic import Function, function
from .runner import GraphPlan, run_graph

__all__ = ["function", "Function", "ConcreteFunction", "run_graph", "GraphPlan"]
