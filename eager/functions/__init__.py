"""The machinery behind `eager.function` (see `eager/function.py`, the public entry point):

* `polymorphic`: `function` / `Function`, the decorator and the cache of traces it keeps;
* `concrete`: `ConcreteFunction`, one trace, inspectable and callable;
* `arguments`: cache keys and argument binding;
* `lifting`: variables created on the first call, and variables as arguments;
* `backward`: gradients of a call: the forward program that also returns the intermediates the
  backward needs, and the backward function derived from the forward graph (itself recorded
  on tapes the same way, for higher order);
* `runner`: `GraphPlan` / `run_graph`: runs a graph op by op, replaying through dispatch when
  tapes, an enclosing trace, the async executor or the profiler must see each op (control flow
  uses it too). Calls with nothing watching run the compiled program (`eager.runtime`).

Sits above `eager.graph`, `eager.ops` and `eager.variables`; nothing lower imports it.
"""
