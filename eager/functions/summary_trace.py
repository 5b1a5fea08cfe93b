"""`eager.summary.trace_on` / `trace_off` / `trace_export`: the graphs of the functions traced
while tracing is on, written for TensorBoard's graph dashboard.

While on, every new trace of an `eager.function` is collected (a listener on
`polymorphic.TRACE_LISTENERS`); `trace_export(name, step)` writes them to the default writer as
one `GraphDef` event (each function's nodes under its name: `op`, `input` as TensorFlow spells
inputs, `device`) and stops tracing. TensorFlow exports the functions *run* while tracing is on,
as run metadata; here a function already traced before `trace_on` is not exported. Profiling
(`profiler=True`) is `eager.profiler.trace`'s, which writes Perfetto traces: asking for it here is
a NotImplementedError.
"""

from __future__ import annotations

import threading
import time

from ..base import event_proto
from ..base.tensor_proto import field, varint
from ..ops.summaries import FileSummaryWriter, summary_state
from .polymorphic import TRACE_LISTENERS

__all__ = ["trace_on", "trace_off", "trace_export", "graph_def_bytes"]

_LOCK = threading.Lock()
_collected = []
_GRAPH_PRODUCER = 1882  # the GraphDef version TensorFlow 2.21 writes


def _collect(concrete):
    with _LOCK:
        _collected.append(concrete)


def trace_on(graph=True, profiler=False, profiler_outdir=None):
    """≈ `tf.summary.trace_on`: collect the graphs of functions traced from now on."""
    if profiler:
        raise NotImplementedError("trace_on: profiler=True is not supported; use "
                                  "eager.profiler.trace (Perfetto traces).")
    with _LOCK:
        if graph and _collect not in TRACE_LISTENERS:
            TRACE_LISTENERS.append(_collect)


def trace_off():
    """≈ `tf.summary.trace_off`: stop collecting and forget what was collected."""
    with _LOCK:
        if _collect in TRACE_LISTENERS:
            TRACE_LISTENERS.remove(_collect)
        _collected.clear()


def _input_name(tensor, prefix):
    op = prefix + tensor.op.name
    return op if tensor.value_index == 0 else f"{op}:{tensor.value_index}"


def graph_def_bytes(functions) -> bytes:
    """A serialized `GraphDef` of the traced functions' graphs (nodes named
    `<function>/<op>`)."""
    nodes = []
    for concrete in functions:
        prefix = concrete.graph.name + "/"
        for op in concrete.graph.get_operations():
            node = field(1, (prefix + op.name).encode()) + field(2, op.type.encode())
            for t in op.inputs:
                node += field(3, _input_name(t, prefix).encode())
            for c in op.control_inputs:
                node += field(3, ("^" + prefix + c.name).encode())
            if op.device:
                node += field(4, op.device.encode())
            nodes.append(field(1, node))
    return b"".join(nodes) + field(4, b"\x08" + varint(_GRAPH_PRODUCER))


def trace_export(name, step=None, profiler_outdir=None):
    """≈ `tf.summary.trace_export`: writes the collected graphs to the default writer (as an
    event at `step`, default the default step) and stops tracing."""
    if step is None:
        step = summary_state.step
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument "
                         "or through tf.summary.experimental.set_step()")
    if hasattr(step, "numpy"):
        step = step.numpy()
    with _LOCK:
        functions = list(_collected)
    trace_off()
    writer = summary_state.writer
    if isinstance(writer, FileSummaryWriter):
        writer.event_file.write(event_proto.graph_event(time.time(), int(step),
                                                        graph_def_bytes(functions)))
