"""`eager.vectorized_map` ≈ `tf.vectorized_map`: `fn` mapped over the leading axis of `elems`,
run as one vectorised program instead of a loop.

`fn` is traced once on one element's shapes (`eager.graph.trace`), the graph becomes a
`Program` whose feeds are the elements, and `eager.runtime.vectorize` rewrites it so that every
op computes all n rows at once; the result is compiled and run on the stacked `elems`. Values
the computation never takes from the elements (constants, variables read) are computed once and
repeated along the batch. A gradient tape inside `fn` is traced with it, so per-example
gradients vectorise too (JAX's `vmap(grad(f))`).

Inside a function being traced, under a gradient tape or the profiler, the vectorised program's
ops run through dispatch one by one, so the enclosing graph, tape or trace records them (the
gradient of a `vectorized_map` is the vectorised ops' gradients); otherwise the program is
optimised and compiled first.

When some op has no batch rule, or `fn` has side effects (random ops, prints, variable writes,
which a vectorised program would run once instead of n times), `fn` runs once per element in a
Python loop and the results are stacked (`fallback_to_while_loop=True`, the default, with a
warning unless `warn=False`), or a ValueError is raised (`fallback_to_while_loop=False`).
"""

from __future__ import annotations

import logging

from ..core import context as _context
from ..base import nest
from ..base import profile_events as _profile_events
from ..graph import trace
from ..ops.array_ops import broadcast_to, stack, unstack
from ..core.dispatch import execute
from ..runtime.compiler import compile_program
from ..runtime.passes import optimize
from ..runtime.program import Program
from ..runtime.vectorize import vectorize
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor

__all__ = ["vectorized_map"]

_log = logging.getLogger("eager")


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """`stack([fn(e) for e in unstack(elems)])`, vectorised (module doc). `elems` may be a
    nested structure of tensors sharing their leading dimension; `fn` takes one element of the
    same structure and returns a (nested) tensor result."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("vectorized_map needs at least one tensor in elems.")
    n = _batch_size(flat)
    specs = [TensorSpec(t.shape[1:], t.dtype) for t in flat]
    graph = trace(lambda *leaves: fn(nest.pack_sequence_as(elems, list(leaves))), *specs,
                  name=getattr(fn, "__name__", "vectorized_map"))
    structure = graph.structured_outputs
    program = None
    if n:
        program, batched = _vectorized(graph, len(flat), n)
    if program is None:
        if not fallback_to_while_loop:
            raise ValueError(f"vectorized_map: {getattr(fn, '__name__', fn)!r} cannot be "
                             "vectorised (an op without a batch rule, or a side effect); pass "
                             "fallback_to_while_loop=True to run it element by element.")
        if warn:
            _log.warning("vectorized_map: %r is run element by element (an op without a batch "
                         "rule, or a side effect).", getattr(fn, "__name__", fn))
        return _loop(fn, elems, flat, n)
    st = _context.thread_state()
    if st.interpreter is None and not st.tapes and not _profile_events.RECORDER.active:
        values = compile_program(optimize(program))(flat)  # nothing needs to see each op
    else:  # traced into an enclosing graph, recorded on tapes, timed: op by op
        values = _dispatched(program, flat)
    outputs = [v if fetch in batched else broadcast_to(v, [n, *v.shape])
               for v, fetch in zip(values, program.fetches)]
    return _pack(structure, outputs)


def _batch_size(flat) -> int:
    sizes = set()
    for t in flat:
        if t.shape.rank is None or t.shape.rank == 0:
            raise ValueError(f"vectorized_map: every element tensor needs a leading dimension; "
                             f"got shape {t.shape}.")
        sizes.add(t.shape[0])
    if len(sizes) != 1 or None in sizes:
        raise ValueError(f"vectorized_map: elems must share one known leading dimension; got "
                         f"{sorted(map(str, sizes))}.")
    return sizes.pop()


def _vectorized(graph, n_args, n):
    """(program, batched value ids) for `graph` vectorised over its first `n_args` inputs, or
    (None, None)."""
    constants = {ph: value for value, ph in graph.captures}
    program = Program.from_graph(graph, feeds=graph.inputs[:n_args], constants=constants)
    result = vectorize(program, program.feeds, n)
    return (None, None) if result is None else result


def _dispatched(program, feed_values) -> list:
    """Runs `program`'s nodes as ops through dispatch, so that an enclosing trace, tape or
    profiler sees each of them (the program is not optimised: every op is a registered op with
    its gradient)."""
    values = dict(program.constants)
    values.update(zip(program.feeds, feed_values))
    for node in program.nodes:
        inputs = tuple(values[v] for v in node.inputs)
        if node.device:
            with _context.device(node.device):
                out = execute(node.op_def, inputs, node.attrs)
        else:
            out = execute(node.op_def, inputs, node.attrs)
        if len(node.outputs) == 1 and node.op_def.num_outputs == 1:
            values[node.outputs[0]] = out
        else:
            values.update(zip(node.outputs, out))
    return [values[v] for v in program.fetches]


def _loop(fn, elems, flat, n):
    rows = [fn(nest.pack_sequence_as(elems, list(row)))
            for row in zip(*[unstack(t, num=n) for t in flat])]
    if not rows:
        raise ValueError("vectorized_map over zero elements cannot infer the output structure "
                         "without vectorising.")
    leaves = [nest.flatten(r) for r in rows]
    stacked = [stack([convert_to_tensor(leaf[k]) for leaf in leaves])
               for k in range(len(leaves[0]))]
    return nest.pack_sequence_as(rows[0], stacked)


def _pack(structure, outputs):
    """`graph.structured_outputs` with its tensors replaced by `outputs` (None leaves stay)."""
    leaves = nest.flatten(structure)
    it = iter(outputs)
    return nest.pack_sequence_as(structure, [None if leaf is None else next(it)
                                             for leaf in leaves])
