"""Control flow: `cond`, `switch_case`, `while_loop` (≈ `tf.cond`, `tf.switch_case`,
`tf.while_loop`), one API for both modes.

* Eagerly (no graph being built) they are plain Python control flow over ordinary ops: the
  predicate is read, one branch runs, the loop is a Python loop. Every op still goes through
  dispatch, so gradient tapes differentiate them with no extra machinery.
* While tracing (inside `eager.function`) the value deciding the branch does not exist yet, so
  every branch (or the loop's cond and body) is traced into its own `BranchGraph`, and one
  `If` / `Case` / `While` operation is added to the graph being built. At run time its kernel runs
  the selected sub-graph with the runtime's `run_graph` (`eager.runtime.graph_runner`). See
  `eager.control_flow.ops`.

This package sits above `eager.graph` and `eager.runtime.graph_runner`; nothing lower imports it.
"""

from .api import cond, switch_case, while_loop
from . import control_flow_grad  # noqa: F401  (sets the gradient functions of the ops in `ops`)

__all__ = ["cond", "switch_case", "while_loop"]
