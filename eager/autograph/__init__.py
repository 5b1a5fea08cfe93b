"""`eager.autograph` ≈ `tf.autograph`: Python control flow on tensors, converted.

Inside `eager.function` (`autograph=True`, the default), a Python `if`, `while` or `for` whose
condition or iterable is a traced tensor becomes `eager.cond` / `eager.while_loop`, as
TensorFlow's AutoGraph does; on Python values it stays Python. The converter rewrites the
function's source (`ast`) into calls of runtime operators that decide per statement, when the
function is traced, which of the two it is.

Layout, one job per module: `source` (a function's syntax tree, with the user's positions),
`analysis` (bound names, liveness, definedness), `nodes` (building trees), `passes/` (the
rewrites, in order), `conversion` (compiling and caching converted functions, what is not
converted), `operators/` (what converted code calls at run time), `api` (`to_graph`, `to_code`,
the entry `eager.function` uses), `experimental` (`do_not_convert`, `set_loop_options`,
`Feature`), `errors` (`ConversionError`).
"""

from . import experimental
from .api import to_code, to_graph

__all__ = ["to_code", "to_graph", "experimental"]
