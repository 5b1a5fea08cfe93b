"""The graph runtime: what runs a traced graph, fast (≈ TensorFlow's DirectSession + executor).

* `program.Program`: a graph cut to one call's feeds, fetches and targets (value ids, nodes).
* `interpret.run_program`: the reference runner every faster form must agree with.

Layering: above `eager.graph` and `eager.ops`; the function layer and `Session` use it; nothing
below imports it.
"""

from .interpret import run_program
from .program import Node, Program

__all__ = ["Node", "Program", "run_program"]
