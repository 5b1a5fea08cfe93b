"""The machinery behind `eager.function` (see `eager/function.py`, the public entry point):

* `polymorphic`: `function` / `Function`, the decorator and the cache of traces it keeps;
* `concrete`: `ConcreteFunction`, one trace, inspectable and callable;
* `signatures`: a trace's argument template, its flat signature and TensorFlow's printed form;
* `arguments`: cache keys and argument binding;
* `lifting`: variables created on the first call, and variables as arguments;
* `function_gradient`: gradients of a call: the forward program that also returns the
  intermediates the backward needs, and the backward function derived from the forward graph
  (itself recorded on tapes the same way, for higher order);
* `vectorized_map`: `eager.vectorized_map`, a function traced once and run vectorised;
* `py_function`: `eager.py_function` and `eager.numpy_function`, Python run as an op.

A call runs its graph through the runtime: the compiled program when nothing watches, else
`eager.runtime.graph_runner`, which replays it op by op through dispatch for tapes, an
enclosing trace, the async executor or the profiler.

Sits above `eager.graph`, `eager.ops`, `eager.runtime` and `eager.variables`; nothing lower
imports it.
"""
