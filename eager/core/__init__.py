"""The core: how an op runs, in one small folder (docs/architecture.md, "How an op runs").

* `registry`: `OpDef`, the one record of an op (kernel, shape inference, effects, gradient).
* `dispatch`: `execute`, the entry point every op goes through, and the interface the other
  interpreters and runners use (`place`, `run_kernel`, `wrap_output`, ...).
* `context`: per-thread state (device scopes, tapes, the interpreter, creators) and
  `FAST_PATH`, the process-wide switch that says when dispatch would do nothing but run a kernel.
* `argument_conversion`: an op's Python arguments to tensors, with TensorFlow's typing rules;
  `tensor_conversion`: `convert_to_tensor`, `constant`, conversion functions.
* `specs`: `TensorSpec`; `shapes`: the shape-inference helpers ops share.
* `buffer_reuse`: whether a buffer is exclusively ours, for every site that writes in place.

The value types themselves are `eager.tensor`, which the project layout keeps at the top of the
package; it belongs to this layer.
"""
