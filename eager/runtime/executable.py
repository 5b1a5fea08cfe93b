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
from .passes import optimize
from .program import Program

__all__ = ["function_program", "function_executable", "session_executable"]



def function_program(graph, capture_values):
    """The program for calls of a traced function's `graph`: fed its arguments (the first
    `len(graph.inputs) - len(capture_values)` inputs), its captures bound as constants,
    returning `graph.outputs` and running every must-run op, optimised."""
    n_args = len(graph.inputs) - len(capture_values)
    program = Program.from_graph(graph, feeds=graph.inputs[:n_args],
                                 constants=dict(zip(graph.inputs[n_args:], capture_values)))
    return optimize(program)


def function_executable(graph, capture_values):
    """The compiled `function_program`. Call it as `(arguments, st)`."""
    return compile_program(function_program(graph, capture_values))


def session_executable(graph, feeds, fetches, targets):
    """The compiled program for a Session run: `feeds` and `fetches` (symbolic tensors of
    `graph`) and `targets` (operations) in this order, captured tensors that are not fed bound
    as constants, pruned to what the fetches and targets need. Call it with the feed values."""
    fed = {id(t) for t in feeds}
    constants = {ph: value for value, ph in graph.captures if id(ph) not in fed}
    program = Program.from_graph(graph, feeds=feeds, fetches=fetches, targets=targets,
                                 constants=constants)
    return compile_program(optimize(program))
