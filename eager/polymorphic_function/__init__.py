"""The machinery behind `eager.function` (see `eager/function.py`, the public entry point):

* `polymorphic`: `function` / `Function`, the decorator and the cache of traces it keeps;
* `concrete`: `ConcreteFunction`, one trace, inspectable and callable;
* `arguments`: cache keys and argument binding;
* `lifting`: variables created on the first call, and variables as arguments;
* `runner`: `run_graph`, the first graph runtime (control flow uses it too).

Sits above `eager.graph`, `eager.ops` and `eager.variables`; nothing lower imports it.
"""
