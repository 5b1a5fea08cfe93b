"""The graph runtime: what runs a traced graph, fast (≈ TensorFlow's DirectSession + executor).

* `program.Program`: a graph cut to one call's feeds, fetches and targets (value ids, nodes).
* `interpret.run_program`: the reference runner every faster form must agree with.
* `passes`: pruning, constant folding, common-subexpression elimination, elementwise fusion
  (`optimize`, `PassOptions`).
* `compiler.compile_program`: a program as straight-line Python (the fast path).
* `placement.place`: union-find colocation, device requests, soft placement, pinned stateful
  nodes; `partition.partition` / `run_partitioned`: one program per device with `_Send` /
  `_Recv` pairs (`send_recv`) between them.
* `parallel.ParallelExecutor`: independent nodes at once on an inter-op thread pool.
* `executable`: the pipeline a function call and a Session share (program → passes → compile).
* `program_view.ProgramView`: that optimised program as readable code, its generated source and
  its picture (`fn.experimental_get_program`).
* `tape_backward_plans`: an eager tape's backward walk compiled once per tape structure (installed
  into `eager.autodiff.tape_backward` as its planner on import), and vectorised for Jacobians.
* `vectorize`: a program rewritten to run n times as one, over a leading batch axis (Jacobians,
  `eager.vectorized_map`).

* `graph_runner`: a traced graph run op by op (replayed through dispatch where tapes, a trace,
  the async executor or the profiler must see each op); `session`: `eager.Session`; `threads`:
  the inter-op thread settings.

Layering: above `eager.graph`, `eager.ops` and `eager.autodiff`; the state and function layers
use it; nothing below imports it.
"""

from . import tape_backward_plans  # noqa: F401 - installs itself as the tapes' backward planner
from .compiler import CompiledProgram, compile_program
from .interpret import run_program
from .parallel import ParallelExecutor
from .partition import PartitionedProgram, partition, run_partitioned
from .placement import place
from .passes import PassOptions, optimize
from .program import Node, Program
from .program_view import ProgramView

__all__ = ["Node", "Program", "run_program", "optimize", "PassOptions", "compile_program",
           "CompiledProgram", "ParallelExecutor", "place", "partition", "run_partitioned",
           "PartitionedProgram", "ProgramView"]
