"""From a traced graph to what a call runs: program, passes, placement, compiled code.

One place decides how a graph becomes runnable, so a function call and a Session get the same
pipeline:

1. `Program.from_graph`: the graph cut to the call's feeds, fetches and targets, with captured
   tensors as constants (a ConcreteFunction's captures never change after tracing);
2. the optimisation passes (`eager.runtime.passes`);
3. compilation to straight-line Python (`eager.runtime.compiler`); for a program spanning
   devices, placement (`placement`), partitioning with send/recv pairs (`partition`) and one
   compiled plan per partition; or the parallel inter-op executor (`eager.runtime.parallel`)
   when inter-op threads are asked for.
"""

from __future__ import annotations

from ..core import context as _context
from ..base import dtypes as _dt
from ..devices import registry as _registry
from .compiler import compile_program
from .partition import partition, run_partitioned
from .placement import place
from .parallel import ParallelExecutor
from .passes import optimize
from .program import Program

__all__ = ["function_program", "function_executable", "session_executable", "build",
           "MultiDeviceExecutable", "current_device"]



def function_program(graph, capture_values):
    """The program for calls of a traced function's `graph`: fed its arguments (the first
    `len(graph.inputs) - len(capture_values)` inputs), its captures bound as constants,
    returning `graph.outputs` and running every must-run op, optimised."""
    n_args = len(graph.inputs) - len(capture_values)
    program = Program.from_graph(graph, feeds=graph.inputs[:n_args],
                                 constants=dict(zip(graph.inputs[n_args:], capture_values)))
    return optimize(program)


def function_executable(graph, capture_values):
    """What runs `function_program` serially (see `build`). Call it as `(arguments, st)`."""
    return build(function_program(graph, capture_values))


def build(program):
    """The serial runner of an optimised `program`, called as `(feed_values, st)`:

    * a program whose nodes all run on one device (the common case) is compiled unplaced:
      each node is placed per call as eager placement would place the op, so the caller's
      device scope applies as it does to eager code;
    * a program that spans devices (device requests, or variables, on several) is placed,
      partitioned per device with send/recv pairs, and each partition compiled with its
      devices bound (`MultiDeviceExecutable`).
    """
    multi = MultiDeviceExecutable(program)
    if len(multi.partitioned_for(current_device()).devices) > 1:
        return multi
    return compile_program(program)


class MultiDeviceExecutable:
    """A program that spans devices: placed and partitioned once per caller default device (the
    device unconstrained nodes go to), keeping one stateful-placement record for all of them so
    a stateful node never moves (TensorFlow's `stateful_placements`, see `placement`),
    partitions compiled with their devices bound, run together by `run_partitioned`. Fed
    resource handles (variable arguments) are placed on the device of the handle fed, so their
    devices are part of the cache key."""

    __slots__ = ("program", "_by_key", "_pins", "_resource_feeds")

    def __init__(self, program):
        self.program = program
        self._by_key = {}
        self._pins = {}
        self._resource_feeds = tuple(i for i, v in enumerate(program.feeds)
                                     if program.specs[v].dtype is _dt.resource)

    def partitioned_for(self, default, feed_values=None):
        feed_devices = {}
        if feed_values is not None:
            for i in self._resource_feeds:
                feed_devices[self.program.feeds[i]] = feed_values[i].device
        key = (default, tuple(sorted(feed_devices.items())))
        found = self._by_key.get(key)
        if found is None:
            placed = place(self.program, default, stateful_placements=self._pins,
                           feed_devices=feed_devices)
            found = self._by_key[key] = partition(placed)
        return found

    def __call__(self, feed_values, st=None):
        partitioned = self.partitioned_for(current_device(st), feed_values)
        return run_partitioned(partitioned, feed_values, _compile_placed)

    def __repr__(self):
        return f"<MultiDeviceExecutable {self.program.name!r}>"


def _compile_placed(program):
    return compile_program(program, placed=True)


def current_device(st=None):
    """The device eager placement would give an op with no request: the thread's innermost
    device scope, else the default device."""
    st = st if st is not None else _context.thread_state()
    if st.device_stack:
        return st.device_stack[-1].device()
    return _registry.default_device()


def session_executable(graph, feeds, fetches, targets, inter_op_threads=0):
    """What runs a Session request: `feeds` and `fetches` (symbolic tensors of `graph`) and
    `targets` (operations) in this order, captured tensors that are not fed bound as constants,
    pruned to what the fetches and targets need, optimised; compiled, or on the parallel
    executor when `inter_op_threads` >= 2. Call it with the feed values."""
    fed = {id(t) for t in feeds}
    constants = {ph: value for value, ph in graph.captures if id(ph) not in fed}
    program = Program.from_graph(graph, feeds=feeds, fetches=fetches, targets=targets,
                                 constants=constants)
    program = optimize(program)
    if inter_op_threads >= 2:
        return ParallelExecutor(program, inter_op_threads).run
    return build(program)
