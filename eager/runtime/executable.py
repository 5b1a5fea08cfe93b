"""From a traced graph to what a call runs: program, passes, placement, compiled code.

One place decides how a graph becomes runnable, so a function call and a Session get the same
pipeline:

1. `Program.from_graph`: the graph cut to the call's feeds, fetches and targets, with captured
   tensors as constants (a ConcreteFunction's captures never change after tracing);
2. the optimisation passes (`eager.runtime.passes`);
3. compilation to straight-line Python (`eager.runtime.compiler`).
"""

from __future__ import annotations

from .compiler import compile_program
from .program import Program

__all__ = ["function_executable"]


def function_executable(graph, capture_values):
    """The compiled program for calls of a traced function's `graph`: fed its arguments (the
    first `len(graph.inputs) - len(capture_values)` inputs), its captures bound as constants,
    returning `graph.outputs` and running every must-run op. Call it as `(arguments, st)`."""
    n_args = len(graph.inputs) - len(capture_values)
    program = Program.from_graph(graph, feeds=graph.inputs[:n_args],
                                 constants=dict(zip(graph.inputs[n_args:], capture_values)))
    return compile_program(program)
