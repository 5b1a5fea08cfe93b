"""Compiling a `Program` into straight-line Python: one statement per node.

Interpreting a node list costs, per node and per call, a loop iteration, slot lookups, a tuple
for the inputs and tests of what kind of node it is. For small graphs that bookkeeping is most
of the call. Generating the function the graph *is* removes it: locals instead of a slot list,
each op's `OpDef`, attributes and (when known) device bound as globals of the generated module,
values deleted right after their last use (so peak memory is that of the live values, as in
eager execution), and nothing decided per call that could be decided once.

A node compiles to

    i = (v3, v7); v9 = run(k4, i, a4, place(k4, i, st))   # Mul  <- model.py:12: y = x * w

where `run` is `dispatch.run_kernel` (the eager kernel path: the same kernels, dtype handling and
errors as eager execution) and `place` is eager placement (`dispatch.place`: a resource input's
device, else the node's device request, else the caller's device scope, else the default). When
the program was placed ahead of time (`placed=True`, see `eager.runtime.placement`), the device
is bound at compile time (`d4`) and `place` is skipped, except for ops on a resource that is fed
(its device is only known per call).

Tracebacks: the source is registered with `linecache` under a name like `<eager plan f#3>`, so a
traceback through a compiled graph shows the generated line, whose comment holds the user's
original line and its file:line. A failing run also gets a note (`add_note`, Python 3.11+)
naming the node and where user code created it, as TensorFlow's "Detected at node" does. The
registration is dropped when the compiled program is garbage, and its name is then reused
(`eager.runtime.source_names`: Python keeps every file name it compiled under).

Buffer donation: an op with a ufunc (`OpDef.ufunc`: `AddV2`, `Sub`, `Mul`, and `ReluGrad` for
its `dy`) on float or complex values of at least `MIN_DONATED_ELEMENTS` elements, one of whose
donatable inputs (`OpDef.donatable_inputs`) is an intermediate read for the last time by that
node with exactly the output's static shape and dtype, compiles to `donate(...)`: on a CPU
device, when that input's array is provably exclusive (it owns its memory and nothing but its
dead tensor refers to it: a reference count, calibrated at import as in
`eager.core.buffer_reuse`), the result is written into it (`ufunc(a, b, out=a)`), saving an
allocation; otherwise it runs as usual. `p.assign_sub(lr * g)` in a traced training step
thus scales the gradient in place, which hand-written numpy (`p -= lr * g`) does not.

Unfed placeholders are found at compile time; calling then raises TensorFlow's "You must feed a
value for placeholder" error before any node runs (no half-applied side effects).

The array form. An unplaced program with no device requests also compiles to a second function,
`<name>_arrays(feeds, xp, d)`, in which a node is

    v9 = f4(xp, v3, v7)   # MatMul  <- model.py:12: y = x @ w

with `f4` the op's kernel (for an op whose kernel is a Python operator, `OpDef.infix`, the
expression itself: `v9 = v3 * v7`) and the values numpy (or CuPy) arrays: feeds are unwrapped
once and only fetched values are wrapped into tensors, at the end. It is what dispatch would do
anyway when it can only choose one device: a call uses it when the process has a single inline
device (`context.FAST_PATH.device`), the thread has no device scope, placement logging and the
inference cross-check are off, and every feed and constant is an eager tensor on that device;
otherwise the tensor form runs. A kernel exception is turned into the same op error `run_kernel`
raises (`dispatch.kernel_error`, on the failing node's inputs read back from the failed frame),
with the same note. A floating-point signal (inf or nan, made an exception by the user's warning
filters or `np.seterr`) is answered as `run_kernel` answers it (`eager.base.ieee`): a program
without effects runs again whole, quietly (it writes nothing but its own intermediates, so the
feeds and constants are as they were); in a program with effects, which must not run twice, each
pure node's statement is a `try` whose `except FP_SIGNALS:` runs that node's kernel again
quietly and the rest of the program runs on (about 5 ns a node; stateful nodes never signal).
Donation in the array form (`donate_arrays`) checks the array's reference count as held by a
local of the generated code, calibrated the same way; in both forms, a donated buffer written
before a signal holds the IEEE result and is kept.

The device form. The same program also compiles to `<name>_arrays_on(feeds, xp, d)` for a
device whose kernels run on the caller's thread and queue their work on a stream (a GPU through
CuPy: `Device.inline` false, `Device.defers_kernels` false). A node is `v9 = g4(xp, v3, v7)`,
with `g4` the kernel that device launches for the op (`Device.kernel_for`: the CUDA backend's
precompiled CuPy kernel where the op has one). It is generated, as a module of its own, when the
program first runs on such a device, with that device's kernels bound (a process without one
never makes it). A call
uses it when the device is the default one and every feed and constant lives there, with the
same conditions as the array form otherwise, and when every op has a kernel for that device
type (so placement would choose that device for every node); the whole call is then one
`compute_stream.launch`: the device and its stream are entered once, not once per node, and no
node pays placement, dispatch or wrapping. No node donates (CuPy's pool already recycles a
freed block at once) and no node is guarded for floating-point signals (a GPU raises none).
"""

from __future__ import annotations

import keyword
import re
import sys

import numpy as np

from ..core import context as _context
from ..base import dtypes as _dt
from ..base import user_code as _user_code
from ..core.context import FAST_PATH as _FAST_PATH
from ..devices import registry as _registry
from ..base.errors import OpError
from ..base.ieee import FP_SIGNALS, quietly
from ..graph.placeholder import PLACEHOLDER
from ..core import dispatch as _dispatch
from ..core.buffer_reuse import calibrate
from ..core.registry import NO_ATTRS
from ..tensor import EagerTensor
from .interpret import device_scope_for, missing_feed_error
from .source_names import register_source, release_filename, take_filename

__all__ = ["CompiledProgram", "compile_program", "MIN_DONATED_ELEMENTS"]

_config = _context.placement_config  # placement logging (one object, updated in place)

#: Below this size an allocation is cheaper than checking whether a buffer can be reused.
MIN_DONATED_ELEMENTS = 1 << 14


class CompiledProgram:
    """A program compiled to a Python function. Call it with the feed values (a sequence, in
    `program.feeds` order); it returns the list of fetched values.

    `source` is the generated code (also readable through `linecache` under `filename`)."""

    __slots__ = ("program", "source", "filename", "_fn", "_array_fn", "_array_device",
                 "_n_feeds", "_line_nodes", "_missing", "_pure", "_device_form", "_device_fns",
                 "__weakref__")

    def __init__(self, program, source, filename, fn, line_nodes, missing, array_fn=None,
                 device_form=False):
        self.program = program
        self.source = source
        self.filename = filename
        self._fn = fn
        self._array_fn = array_fn  # the array form, or None where the program has none
        # Whether the program has a device form (the array form's conditions); `_device_fn`
        # generates it per device.
        self._device_form = device_form
        self._device_fns = {}  # device -> its device form, or False where it cannot run there
        # The device every constant is on (None: no constants); the array forms run only there.
        devices = {t._meta.device for t in program.constants.values()}
        if len(devices) > 1:
            self._array_fn = None
            self._device_form = False
        self._array_device = devices.pop() if devices else None
        self._n_feeds = len(program.feeds)
        # generated file name -> {line number -> Node}: this module (both forms), and each
        # device form's module once made
        self._line_nodes = {filename: line_nodes}
        self._missing = missing  # an unfed placeholder node the program needs, or None
        self._pure = _is_pure(program)  # the array form may run again (module doc)

    def __call__(self, feed_values, st=None):
        if self._missing is not None:
            raise missing_feed_error(self.program, self._missing)
        if len(feed_values) != self._n_feeds:
            raise ValueError(f"Program {self.program.name!r} has {self._n_feeds} "
                             f"feeds; {len(feed_values)} values were given.")
        if st is None:
            st = _context.thread_state()
        array_fn = self._array_fn
        device = _FAST_PATH.device
        if array_fn is not None and device is not None:
            constants_on = self._array_device
            if (not st.device_stack and not _config.log_placement
                    and not _dispatch.hooks.check_inference
                    and (constants_on is None or constants_on is device)):
                for t in feed_values:
                    if t.__class__ is not EagerTensor or t._meta.device is not device:
                        break
                else:
                    try:
                        return array_fn(feed_values, device.xp, device)
                    except Exception as exc:
                        if self._pure and isinstance(exc, FP_SIGNALS):
                            # Nothing was written but intermediates: all again, quietly.
                            try:
                                return quietly(array_fn, feed_values, device.xp, device)
                            except Exception as again:  # noqa: BLE001 - explained below
                                exc = again
                        error = self._array_error(exc, device)
                        if error is exc:
                            raise
                        raise error from exc
        elif device is None and self._device_form:
            device = _FAST_PATH.default
            if (device is not None and not device.inline and not st.device_stack
                    and not _config.log_placement and not _dispatch.hooks.check_inference
                    and (self._array_device is None or self._array_device is device)):
                for t in feed_values:
                    if t.__class__ is not EagerTensor or t._meta.device is not device:
                        break
                else:
                    device_fn = self._device_fns.get(device)
                    if device_fn is None:
                        device_fn = self._device_fn(device)
                    if device_fn:
                        try:
                            return device.compute_stream.launch(device_fn, feed_values,
                                                                device.xp, device)
                        except Exception as exc:
                            error = self._array_error(exc, device)
                            if error is exc:
                                raise
                            raise error from exc
        try:
            return self._fn(feed_values, st)
        except Exception as exc:
            self._annotate(exc)
            raise

    def _device_fn(self, device):
        """The device form bound to `device`'s kernels (module doc), or False where it may not
        run there: kernels deferred to stream workers (the simulated GPU), or an op without a
        kernel for the device type (placement would move that node elsewhere)."""
        fn = False
        nodes = self.program.nodes
        if not device.defers_kernels and all(
                node.op_def is PLACEHOLDER or device.device_type in node.op_def.device_types
                for node in nodes):
            name = _identifier(self.program.name) + "_arrays_on"
            namespace = {"__name__": __name__}
            for v, value in self.program.constants.items():
                namespace[f"c{v}"] = value  # a fetched constant is returned as its tensor
            for index, node in enumerate(nodes):
                namespace[f"g{index}"] = device.kernel_for(node.op_def)
                namespace[f"k{index}"] = node.op_def
                namespace[f"a{index}"] = node.attrs if node.attrs else NO_ATTRS
            lines, line_nodes = [], {}
            last_use, kept = _liveness(self.program)
            _array_lines(self.program, name, namespace, last_use, kept, lines, line_nodes,
                         device_kernels=True, routed=_routed_nodes(self.program, device))
            source = "\n".join(lines) + "\n"
            filename = take_filename(f"eager plan {self.program.name} on {device.name}")
            try:
                exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - generated
            except BaseException:
                release_filename(filename)
                raise
            register_source(filename, source, self)
            self._line_nodes[filename] = line_nodes
            fn = namespace[name]
        self._device_fns[device] = fn
        return fn

    def _array_error(self, exc, device):
        """What a failure of the array form raises (module doc): an op error as it is; another
        exception as the op error `dispatch` would raise for the failing node's kernel, or as
        it is where no node's line raised it; annotated either way (the node found from the
        frames `exc` passed through, which the new op error has not)."""
        raised = exc
        if not isinstance(exc, OpError):
            error = self._kernel_error(exc, device)
            if error is not None:
                exc = error
        self._annotate(exc, raised)
        return exc

    def _kernel_error(self, exc, device):
        """`dispatch.kernel_error` for the node whose kernel raised `exc` in the array form,
        with its inputs read from the failed frame; None if no node's line raised."""
        tb, frame, node = exc.__traceback__, None, None
        while tb is not None:
            line_nodes = self._line_nodes.get(tb.tb_frame.f_code.co_filename)
            if line_nodes is not None:
                found = line_nodes.get(tb.tb_lineno)
                if found is not None:
                    frame, node = tb.tb_frame, found
            tb = tb.tb_next
        if node is None:
            return None
        local_values, global_values = frame.f_locals, frame.f_globals
        inputs = []
        for v in node.inputs:
            value = local_values.get(f"v{v}")
            if value is None:
                value = global_values.get(f"c{v}")  # a constant: its tensor
            if value is not None and value.__class__ is not EagerTensor:
                value = _dispatch.wrap_output(value, device, node.op_def)
            inputs.append(value)
        if any(t is None for t in inputs):
            return None
        return _dispatch.kernel_error(node.op_def, tuple(inputs), node.attrs or NO_ATTRS, exc,
                                      device)

    def _annotate(self, exc, raised=None) -> None:
        """Adds where the failing node came from (once per program, for the innermost of this
        program's generated frames in `raised`'s traceback: by default `exc`'s own). A program
        run inside a node of another (a loop's body in its `While`) notes its node, and the
        outer program then notes the `While`."""
        tb = (exc if raised is None else raised).__traceback__
        node = None
        while tb is not None:
            line_nodes = self._line_nodes.get(tb.tb_frame.f_code.co_filename)
            if line_nodes is not None:
                node = line_nodes.get(tb.tb_lineno, node)
            tb = tb.tb_next
        noted = getattr(exc, "_eager_noted_by", ())
        if node is None or self in noted:
            return
        file, line = _user_code.line_of(node.source)
        where = f" defined at {_user_code.describe_line(file, line)}" if line else ""
        text = _user_code.source_line(node.source)
        exc.add_note(f"Detected at node {node.name!r} ({node.type}){where}"
                     + (f": {text}" if text else ""))
        try:
            exc._eager_noted_by = (*noted, self)
        except AttributeError:  # exceptions with __slots__: the note is still there
            pass

    def __repr__(self):
        return f"<CompiledProgram {self.filename} ({len(self.program.nodes)} nodes)>"


def compile_program(program, *, placed=False) -> CompiledProgram:
    """Generates, compiles and registers the straight-line function for `program` (module
    doc). With `placed=True` every node's `device` must name an existing device (the placer's
    output) and is bound at compile time."""
    # `__name__`: warnings raised by generated lines (a Python operator on arrays) come from this
    # package, whose floating-point RuntimeWarnings eager silences as TensorFlow does.
    namespace = {"__name__": __name__, "run": _dispatch.run_kernel, "place": _dispatch.place,
                 "donate": _run_donating}
    names = {}  # value id -> local or global name

    for v in program.feeds:
        names[v] = f"v{v}"
    for v, value in program.constants.items():
        names[v] = f"c{v}"
        namespace[f"c{v}"] = value

    last_use, kept = _liveness(program)

    feed_fn_name = _identifier(program.name)
    lines = [f"def {feed_fn_name}(feeds, st):"]
    if program.feeds:
        targets = ", ".join(names[v] for v in program.feeds)
        lines.append(f"    {targets}{',' if len(program.feeds) == 1 else ''} = feeds")
    line_nodes = {}
    missing = None
    fed = set(program.feeds)
    for index, node in enumerate(program.nodes):
        if node.op_def is PLACEHOLDER:
            if missing is None and _is_needed(program, node):
                missing = node
            for v in node.outputs:
                names[v] = "None"
            continue
        k, a = f"k{index}", f"a{index}"
        namespace[k] = node.op_def
        namespace[a] = node.attrs if node.attrs else NO_ATTRS
        args = ", ".join(names[v] for v in node.inputs)
        inputs = f"({args},)" if len(node.inputs) == 1 else f"({args})"
        device = _device_expression(node, index, namespace, placed, fed)
        if device is None:
            device = f"place({k}, i, st)"
        outs = []
        for v in node.outputs:
            names[v] = f"v{v}"
            outs.append(f"v{v}" if (v in last_use or v in kept) else "_")
        donor = _donor(program, node, index, last_use, kept)
        if donor is None:
            call = f"run({k}, i, {a}, {device})"
        else:
            namespace[f"u{index}"] = node.op_def.ufunc
            call = f"donate({k}, i, {a}, {device}, {donor}, u{index})"
        lines.append(f"    i = {inputs}; {_assignment(node, outs, call)}  {_comment(node)}")
        line_nodes[len(lines)] = node
        lines.extend(_deletions(node, index, names, last_use, kept))
    fetched = ", ".join(names[v] for v in program.fetches)
    lines.append(f"    return [{fetched}]")
    array_fn_name = None
    if not placed and missing is None and _has_array_form(program):
        array_fn_name = feed_fn_name + "_arrays"
        _array_lines(program, array_fn_name, namespace, last_use, kept, lines, line_nodes)
    source = "\n".join(lines) + "\n"

    filename = take_filename(f"eager plan {program.name}")  # reused once `compiled` is gone
    try:
        code = compile(source, filename, "exec")
        exec(code, namespace)  # noqa: S102 - our own generated code, from our own graph
        compiled = CompiledProgram(program, source, filename, namespace[feed_fn_name],
                                   line_nodes, missing, namespace.get(array_fn_name),
                                   array_fn_name is not None)
    except BaseException:
        release_filename(filename)
        raise
    register_source(filename, source, compiled)
    return compiled


def _liveness(program):
    """(value -> index of the last node reading it, the values never deleted: fetches and
    constants)."""
    last_use = {}
    for index, node in enumerate(program.nodes):
        for v in node.inputs:
            last_use[v] = index
    return last_use, set(program.fetches) | set(program.constants)


def _assignment(node, outs, call) -> str:
    """`call` as a statement binding the node's outputs (`outs`: local names, "_" for an
    output nobody reads)."""
    if node.op_def.num_outputs == 1 and len(node.outputs) == 1:
        return f"{outs[0]} = {call}" if outs[0] != "_" else call
    if node.outputs and any(o != "_" for o in outs):
        return f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}"
    return call


def _deletions(node, index, names, last_use, kept) -> list:
    """The `del` line (or none) for the locals ("v…": feeds and node outputs, never constants)
    whose last reader is the node at `index`. Outputs nobody reads were never bound."""
    dead = [names[v] for v in node.inputs
            if last_use[v] == index and v not in kept and names[v].startswith("v")]
    return [f"    del {', '.join(dict.fromkeys(dead))}"] if dead else []


def _has_array_form(program) -> bool:
    """Whether the array form may run `program`: no node asks for a device (requests are
    resolved per call by placement), every constant is an eager tensor, and no value is a
    string (kernels give a rank-0 string as bare `bytes`, which only `wrap_output` types)."""
    return (all(not node.device for node in program.nodes)
            and all(t.__class__ is EagerTensor for t in program.constants.values())
            and not any(spec.dtype.is_string for spec in program.specs.values()))


def _routed_nodes(program, device) -> frozenset:
    """Indices of the nodes the device form calls through `device.run` instead of their
    kernel: on a device that keeps some values in host memory (`Device.host_result_ops`: the
    CUDA backend's small int32 values), the nodes that may take such a value (a host constant
    of the program, an int32 or bool feed, a host node's result) and the nodes that run on
    the host. `run` runs those on the host, copies a host value to the device for a kernel that
    reads it there, and passes one the kernel reads on the host (`OpDef.host_inputs`) as it
    is, so a shape computed in a traced program is never read back from the device."""
    always, when_all = device.host_result_ops, device.host_ops
    if not always:
        return frozenset()
    host = {v for v, value in program.constants.items() if value._value.__class__ is np.ndarray}
    for v in program.feeds:
        spec = program.specs.get(v)
        if spec is not None and spec.dtype in (_dt.int32, _dt.bool):
            host.add(v)
    routed = set()
    for index, node in enumerate(program.nodes):
        name = node.op_def.name
        taken = [v in host for v in node.inputs]
        if name in always or any(taken):
            routed.add(index)
            if name in always or (name in when_all and all(taken)):
                host.update(node.outputs)
    return frozenset(routed)


def _array_lines(program, fn_name, namespace, last_use, kept, lines, line_nodes,
                 device_kernels=False, routed=frozenset()):
    """Appends the array form of `program` to `lines` (module doc): feeds unwrapped once, one
    kernel call per node on arrays, each fetched value wrapped once at the end. With
    `device_kernels`, the device form instead: each node calls `g<index>`, the device's kernel
    for its op (bound per device), never an operator, a donation or a signal guard."""
    namespace["wrap"] = _dispatch.wrap_output
    namespace["donate_arrays"] = _donate_arrays
    namespace["quietly"] = quietly
    namespace["FP_SIGNALS"] = FP_SIGNALS
    pure = _is_pure(program) or device_kernels
    names = {}
    lines.append(f"def {fn_name}(feeds, xp, d):")
    if program.feeds:
        tensors = ", ".join(f"t{v}" for v in program.feeds)
        lines.append(f"    {tensors}{',' if len(program.feeds) == 1 else ''} = feeds")
        unwrap = "; ".join(f"v{v} = t{v}._value" for v in dict.fromkeys(program.feeds))
        lines.append(f"    {unwrap}")
    for v in program.feeds:
        names[v] = f"v{v}"
    for v, value in program.constants.items():
        names[v] = f"ca{v}"
        namespace[f"ca{v}"] = value._value
    producer = {}
    for index, node in enumerate(program.nodes):
        if node.op_def is PLACEHOLDER:  # unneeded (a needed one has no array form)
            for v in node.outputs:
                names[v] = "None"
            continue
        if device_kernels:
            f = f"g{index}"  # bound per device (`CompiledProgram._device_fn`)
        else:
            f = f"f{index}"
            namespace[f] = node.op_def.kernel
        args = "".join(f", {names[v]}" for v in node.inputs)
        donor = None if device_kernels else _donor(program, node, index, last_use, kept)
        if index in routed:
            inputs = "".join(f"{names[v]}, " for v in node.inputs)
            call = f"d.run(k{index}, ({inputs}), a{index}, None)"
        elif donor is not None:
            call = f"donate_arrays(u{index}, {f}, xp{args}, {donor})"
        elif (not device_kernels and node.op_def.infix is not None and not node.attrs
              and len(node.inputs) == 2):
            call = f" {node.op_def.infix} ".join(names[v] for v in node.inputs)  # the kernel
        elif node.attrs:
            call = f"{f}(xp{args}, **a{index})"
        else:
            call = f"{f}(xp{args})"
        outs = []
        for v in node.outputs:
            names[v] = f"v{v}"
            producer[v] = index
            outs.append(f"v{v}" if (v in last_use or v in kept) else "_")
        if pure or node.op_def.stateful:
            # A pure program runs again whole after a signal; a stateful node never signals.
            lines.append(f"    {_assignment(node, outs, call)}  {_comment(node)}")
            line_nodes[len(lines)] = node
        else:
            # A floating-point signal: the kernel again, quietly, for its IEEE result. (A `try`
            # costs nothing until something raises.)
            quiet = f"quietly({f}, xp{args}{f', **a{index}' if node.attrs else ''})"
            lines.append(f"    try: {_assignment(node, outs, call)}  {_comment(node)}")
            line_nodes[len(lines)] = node
            lines.append(f"    except FP_SIGNALS: {_assignment(node, outs, quiet)}")
            line_nodes[len(lines)] = node
        lines.extend(_deletions(node, index, names, last_use, kept))
    results = {}
    for v in dict.fromkeys(program.fetches):
        if v in producer:
            results[v] = f"r{v}"
            lines.append(f"    r{v} = wrap(v{v}, d, k{producer[v]})")
        elif v in program.constants:
            results[v] = f"c{v}"
        else:
            results[v] = f"t{v}"  # a feed, returned as the tensor it was
    lines.append(f"    return [{', '.join(results[v] for v in program.fetches)}]")


def _is_pure(program) -> bool:
    """Whether no node of `program` has effects (its array form may then simply run again)."""
    return not any(node.op_def.stateful for node in program.nodes)


def _donor(program, node, index, last_use, kept):
    """The position of the input `node` may write its result into (module doc), or None."""
    donatable = node.op_def.donatable_inputs
    if _EXCLUSIVE_REFS is None or not donatable or len(node.inputs) != 2:
        return None
    out = program.specs.get(node.outputs[0])
    if (out is None or not out.shape.is_fully_defined() or not out.dtype._inexact
            or out.shape.num_elements() < MIN_DONATED_ELEMENTS):
        return None
    for position, v in enumerate(node.inputs):
        spec = program.specs.get(v)
        if (position in donatable and last_use.get(v) == index
                and v not in kept and v not in program.feeds
                and node.inputs.count(v) == 1 and spec is not None
                and spec.dtype is out.dtype and spec.shape.is_fully_defined()
                and tuple(spec.shape) == tuple(out.shape)):
            return position
    return None


_getrefcount = sys.getrefcount
_ndarray = np.ndarray


def _array_refs(t):
    """References to `t`'s array, counted the way `_run_donating` sees them."""
    a = t._value
    return _getrefcount(a)


def _run_donating(op, inputs, attrs, device, position, ufunc):
    """`dispatch.run_kernel`, writing into the array of `inputs[position]` when it is provably
    exclusive (module doc)."""
    t = inputs[position]
    if device.inline and t._meta.device is device and _array_refs(t) == _EXCLUSIVE_REFS:
        a = t._value
        other = inputs[1 - position]
        b = other._value
        if (a.__class__ is _ndarray and a.base is None and a.flags.writeable
                and other._meta.device is device and b.dtype == a.dtype):
            try:
                if position == 0:
                    ufunc(a, b, out=a)
                else:
                    ufunc(b, a, out=a)
            except FP_SIGNALS:  # signalled after writing all of `a`: it holds the IEEE result
                pass
            out = _dispatch.wrap_output(a, device, op)
            if _dispatch.hooks.check_inference:
                _dispatch.verify_inference(op, inputs, attrs, out)
            return out
    return _dispatch.run_kernel(op, inputs, attrs, device)


def _exclusive(a):
    return _getrefcount(a)


def _donate_arrays(ufunc, kernel, xp, x0, x1, position):
    """The array form's `_run_donating`: `kernel(xp, x0, x1)`, written into the input at
    `position` when that array is provably exclusive (held only by the generated code's dying
    local: `_EXCLUSIVE_LOCAL` references, calibrated at import)."""
    if position:
        a, b = x1, x0
    else:
        a, b = x0, x1
    if (_exclusive(a) == _EXCLUSIVE_LOCAL and a.__class__ is _ndarray and a.base is None
            and a.flags.writeable and b.dtype == a.dtype):
        try:
            return ufunc(a, b, out=a) if position == 0 else ufunc(b, a, out=a)
        except FP_SIGNALS:  # signalled after writing all of `a`: it holds the IEEE result
            return a
    return kernel(xp, x0, x1)


def _local_refs_probe(ufunc, kernel, xp, x0, x1, position):
    """`_donate_arrays`' frame, counting instead of computing (calibration): the same
    parameters and locals, so the same references."""
    if position:
        a, b = x1, x0  # noqa: F841 - `b` mirrors _donate_arrays' locals
    else:
        a, b = x0, x1  # noqa: F841
    return _exclusive(a)


def _local_counts(holders):
    """What `_donate_arrays` counts for an array one local of generated code holds, plus
    `holders` more holders."""
    v0 = np.zeros(2)
    v1 = np.zeros(2)
    held = [v0] * holders  # noqa: F841 - the other holders
    return _local_refs_probe(None, None, None, v0, v1, 0)


class _TensorStandIn:
    """What `_array_refs` reads of a tensor (calibration needs no device, so none is made at
    import: devices may still be configured then)."""

    __slots__ = ("_value",)

    def __init__(self, value):
        self._value = value


def _tensor_counts(holders):
    """What `_array_refs` counts for an array only its (dead) tensor holds, plus `holders`."""
    probe = _TensorStandIn(np.zeros(2))
    held = [probe._value] * holders  # noqa: F841 - the other holders
    return _array_refs(probe)


# Counts at which an input is exclusive (`eager.core.buffer_reuse`); None turns donation off.
_EXCLUSIVE_LOCAL = calibrate("program arrays", lambda: _local_counts(0),
                             lambda: _local_counts(1))
_EXCLUSIVE_REFS = calibrate("program tensors", lambda: _tensor_counts(0),
                            lambda: _tensor_counts(1))


def _is_needed(program, node) -> bool:
    """Whether some node or fetch reads the placeholder's value (an unread placeholder in an
    unpruned program must not make every run fail)."""
    outputs = set(node.outputs)
    if outputs & set(program.fetches):
        return True
    return any(outputs & set(n.inputs) for n in program.nodes)


def _device_expression(node, index, namespace, placed, fed):
    """The device argument for a node's kernel call as source text, or None for "place it per
    call" (module doc)."""
    op_def = node.op_def
    resource_inputs = op_def.resource_reads or op_def.resource_writes
    if resource_inputs and node.inputs[resource_inputs[0]] in fed:
        return None  # a fed resource: its device is known only when called
    if placed:
        device = _registry.lookup(_short_name(node.device))
        if device is None:
            raise ValueError(f"Node {node.name!r} is placed on {node.device!r}, which is not a "
                             "device of this process.")
        namespace[f"d{index}"] = device
        return f"d{index}"
    if node.device:
        namespace[f"r{index}"] = device_scope_for(node.device, None)
        return f"place(k{index}, i, r{index})"
    return None


def _short_name(name: str) -> str:
    """"CPU:1" for "/job:localhost/replica:0/task:0/device:CPU:1" (and for "CPU:1")."""
    return name.rsplit("device:", 1)[-1].lstrip("/")


def _comment(node) -> str:
    file, line = _user_code.line_of(node.source)
    text = _user_code.source_line(node.source)
    where = f" <- {file.rsplit('/', 1)[-1]}:{line}" if line else ""
    return f"# {node.name} ({node.type}){where}" + (f": {text}" if text else "")


#: Globals of the generated code (helpers, and the c/ca/u/d/r/k/a/f<number> bindings): a
#: generated function may not take one of these names, or it would hide the helper it calls.
_GENERATED_GLOBALS = frozenset({"run", "place", "donate", "wrap", "donate_arrays", "quietly",
                                "FP_SIGNALS", "st", "feeds", "xp"})
_GENERATED_BINDING = re.compile(r"^(?:c|ca|u|d|r|k|a|f|g|v)\d+$")


def _identifier(name: str) -> str:
    """A Python name for the generated function of a program called `name` (the user's
    function name, so tracebacks read "in train_step"), kept apart from the names the
    generated code uses itself."""
    cleaned = "".join(c if c.isalnum() else "_" for c in name)
    if not cleaned or cleaned[0].isdigit():
        cleaned = "f_" + cleaned
    if cleaned in _GENERATED_GLOBALS or _GENERATED_BINDING.match(cleaned) or \
            keyword.iskeyword(cleaned) or cleaned.endswith(("_arrays", "_arrays_on")):
        cleaned += "_program"
    return cleaned
