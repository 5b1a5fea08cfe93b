"""Elementwise fusion: a tree of elementwise ops becomes one node running their kernels in turn.

What it buys: a compiled plan pays per node (a statement, a dispatch to a device, an output
wrapped in a tensor, a value slot freed); a fused node pays that once for the whole chain while
the kernels themselves run exactly as before. `50 x (x * 1.0001 + 0.5)` is 100 nodes unfused
and one node fused. On the CPU the kernels are the ops' own, called on the same arrays in the
same order, so results are bit-identical to the unfused program.

On a GPU the fused node is one device kernel: its kernel hands the arrays to `_DeviceFused`,
which has `cupy.fuse` trace the same member kernels into one CUDA kernel. A chain of n ops then
costs one launch and one pass over memory instead of n of each (24 ops on an H100: 18-31 us
against 265-515 us for CuPy one by one; docs/performance.md). The arithmetic is still the
members' (the suite's bit-identity tests pass on the GPU), though the CUDA compiler may contract
a multiply and an add into one rounding. A cluster the tracer refuses (a kernel that looks at
values on the host, such as integer division's zero check) runs its kernels one by one from
then on.

The rule (where it pays and is always safe): a node `n` joins the cluster of the node `c`
consuming its output when

* both ops are elementwise (`OpDef.elementwise`: unary and binary math, comparisons, casts,
  selects, clips, activations and their gradients: every op whose kernel is an elementwise numpy
  expression, broadcasting allowed) and pure;
* `n`'s output is read only by `c` (once, or several times as in `h + h`) and is not fetched
  (a fetched or shared intermediate must exist as a value);
* `n` is not a target and no node has a control input on it (only the cluster's last node
  remains a node to wait for);
* both request the same device and have kernels on the same device types, so the fused node is
  placed where each of them would have been.

Each cluster is thus a tree whose root (its last node) is the only member whose output anyone
else sees. Clusters of at least `MIN_CLUSTER` (2) nodes are replaced by one node at the root's
place, with the root's name and output value; its control inputs are the union of the members'.
That is legal: every member's inputs and control inputs come before the root in the original
order, and only the root's output and name are visible outside; waiting for all members'
control inputs before the first kernel only removes interleavings, never adds one.

The fused `OpDef` (not registered: its name, e.g. `Fused[Mul,AddV2,Relu]`, may recur with
different attributes) has a kernel compiled to straight-line Python (members' kernels bound as
globals, one line per member naming its node, the source registered with `linecache` so a
traceback shows it), an `infer` composing the members' inference, no gradient (differentiate
the traced graph, not the optimised program), and is not stateful. Its kernel's `members`
lists the fused nodes (name, op type, arguments) for listings and pictures of the program.
Intermediate buffers are not reused in place: kernels are opaque functions, and writing into an
operand's buffer is exact only for kernels known to allocate their result.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np

from ...core.registry import NO_ATTRS, OpDef
from ...ops import cupy_kernels as _cupy_kernels
from ..program import Node
from ..source_names import register_source, release_filename, take_filename

__all__ = ["fuse_elementwise", "MIN_CLUSTER"]

#: The smallest cluster worth a fused node: one op gains nothing from it.
MIN_CLUSTER = 2

_NAMES_SHOWN = 8  # member names listed in a fused op's name before it is abbreviated


def fuse_elementwise(program):
    """The program with each cluster of elementwise nodes (see the module doc) replaced by one
    fused node. Returns `program` itself when nothing fuses."""
    root_of = _clusters(program)
    members = {}
    for node in program.nodes:
        root = root_of.get(node.name)
        if root is not None:
            members.setdefault(root, []).append(node)
    nodes = []
    changed = False
    for node in program.nodes:
        root = root_of.get(node.name)
        cluster = members.get(root, ())
        if len(cluster) < MIN_CLUSTER:
            nodes.append(node)
        elif node.name == root:
            nodes.append(_fused_node(cluster))
            changed = True
    return program.replace(nodes=nodes) if changed else program


def _clusters(program) -> dict:
    """node name -> the name of its cluster's root, for every fusible node."""
    uses = Counter(program.fetches)
    consumer = {}
    controlled = set(program.targets)
    for node in program.nodes:
        uses.update(node.inputs)
        for v in node.inputs:
            consumer[v] = node
        controlled.update(node.control_inputs)
    root_of = {}
    for node in reversed(program.nodes):  # consumers before producers
        if not node.op_def.elementwise or node.is_stateful or len(node.outputs) != 1:
            continue
        v = node.outputs[0]
        c = consumer.get(v)
        if (c is not None and uses[v] == c.inputs.count(v) and c.name in root_of
                and node.name not in controlled and node.device == c.device
                and node.op_def.device_types == c.op_def.device_types):
            root_of[node.name] = root_of[c.name]
        else:
            root_of[node.name] = node.name
    return root_of


def _fused_node(cluster) -> Node:
    """One node computing `cluster` (members in topological order, the root last)."""
    external = {}  # value id -> index among the fused node's inputs
    step_of = {}  # value id -> index of the member step producing it
    steps = []  # (op_def, args, attrs, node name); an arg is ("a", input index) or ("t", step)
    for member in cluster:
        args = []
        for v in member.inputs:
            if v in step_of:
                args.append(("t", step_of[v]))
            else:
                args.append(("a", external.setdefault(v, len(external))))
        steps.append((member.op_def, tuple(args), member.attrs, member.name))
        step_of[member.outputs[0]] = len(steps) - 1
    root = cluster[-1]
    controls = tuple(dict.fromkeys(c for m in cluster for c in m.control_inputs))
    return Node(root.name, _fused_op_def(steps, len(external)), NO_ATTRS, tuple(external),
                root.outputs, controls, root.device, root.source)


def _fused_op_def(steps, num_inputs) -> OpDef:
    """The OpDef running `steps` (see `_fused_node`) on `num_inputs` inputs."""
    op_names = [op_def.name for op_def, _, _, _ in steps]
    if len(op_names) <= _NAMES_SHOWN:
        name = f"Fused[{','.join(op_names)}]"
    else:
        name = (f"Fused[{','.join(op_names[:4])},...,{','.join(op_names[-2:])}]"
                f"({len(op_names)} ops)")

    def infer(*inputs):
        results = []
        for op_def, args, attrs, _ in steps:
            results.append(op_def.infer(*(inputs[i] if kind == "a" else results[i]
                                          for kind, i in args), **attrs))
        return results[-1]

    first = steps[0][0]
    kernel = _compile_kernel(name, steps, num_inputs)
    # What the node stands for, for pictures and listings of the program (`program_view`):
    # per member, its node name, op type and arguments (as in `_fused_node`'s steps).
    kernel.members = tuple((node_name, op_def.name, args) for op_def, args, _, node_name in steps)
    return OpDef(name, kernel, infer, stateful=False,
                 num_outputs=1, device_types=first.device_types,
                 infer_from_types=all(op_def.infer_from_types for op_def, _, _, _ in steps),
                 doc=f"{len(steps)} fused elementwise ops: {', '.join(op_names)}.")


def _compile_kernel(name, steps, num_inputs):
    """`kernel(xp, a0, a1, ...)` as straight-line source: one kernel call per step (or the
    Python operator that is the kernel, `OpDef.infix`: `a0 * a1`), each intermediate
    bound to a name that is reused once its reader has run (so a long chain holds one
    intermediate at a time, as the unfused plan would). Given a GPU's `xp` (not numpy), the
    kernel hands its arrays to a `_DeviceFused`, which runs the same steps as one device kernel
    (the source's `steps` function: the body without that first test)."""
    reads = Counter(i for _, args, _, _ in steps for kind, i in args if kind == "t")
    params = "".join(f", a{i}" for i in range(num_inputs))
    body = []
    namespace = {"__name__": __name__, "_np": np}  # its warnings are eager's (compiler.py)
    holder = {}  # step index -> local name holding its result
    free = []
    made = 0
    for j, (op_def, args, attrs, node_name) in enumerate(steps):
        namespace[f"k{j}"] = op_def.kernel
        operands = []
        for kind, i in args:
            if kind == "a":
                operands.append(f"a{i}")
            else:
                local = holder[i]
                operands.append(local)
                reads[i] -= 1
                if not reads[i]:
                    free.append(holder.pop(i))
        if op_def.infix is not None and not attrs and len(operands) == 2:
            expression = f"{operands[0]} {op_def.infix} {operands[1]}"  # the kernel itself
        else:
            if attrs:
                namespace[f"p{j}"] = attrs
                operands.append(f"**p{j}")
            expression = f"k{j}(xp, {', '.join(operands)})"
        if free:
            local = free.pop()
        else:
            local = f"t{made}"
            made += 1
        holder[j] = local
        body.append(f"    {local} = {expression}  # {op_def.name} (node {node_name!r})")
    body.append(f"    return {holder[len(steps) - 1]}")
    lines = [f"def fused_kernel(xp{params}):",
             "    if xp is not _np:  # a GPU: one device kernel for the cluster",
             f"        return _on_device(xp{params})",
             *body,
             "",
             f"def steps(xp{params}):",
             *body]
    source = "\n".join(lines) + "\n"
    filename = take_filename(f"eager fused kernel {name}")  # reused once `kernel` is gone
    try:
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our generated source
    except BaseException:
        release_filename(filename)
        raise
    kernel = namespace["fused_kernel"]
    namespace["_on_device"] = kernel.on_device = _DeviceFused(
        namespace["steps"], _device_kernel_name(steps, num_inputs),
        tuple((op_def.name, args, attrs) for op_def, args, attrs, _ in steps), num_inputs)
    register_source(filename, source, kernel)
    return kernel


def _device_kernel_name(steps, num_inputs) -> str:
    """The CUDA kernel's name for a cluster: from what it computes (each member's op, operands
    and attributes), so that the same cluster in another function (a function made again, a
    retrace) gives `cupy.fuse` the same CUDA source, which CuPy compiles once and keeps, instead
    of one more compiled module per function."""
    what = repr((num_inputs, [(op_def.name, tuple(args), sorted(attrs.items(), key=str))
                              for op_def, args, attrs, _ in steps]))
    return "eager_fused_" + hashlib.sha1(what.encode()).hexdigest()[:16]


class _DeviceFused:
    """A fused kernel on a GPU: one CUDA kernel for the whole cluster, compiled once per dtype
    (or dtypes and ranks), so a chain of n elementwise ops costs one launch and one pass over
    memory instead of n of each.

    Where every member has a C source in the CuPy kernel layer (`cupy_kernels.TABLE`: the
    arithmetic, `Relu`, `ReluGrad`, `Exp`, `Tanh`, `Sigmoid`, ...) and the operands share one
    dtype they cover, the kernel is one `ElementwiseKernel` of the members' statements in turn
    (`cupy_kernels.fused_source`), called directly: the cheapest launch CuPy offers, about half
    the host time of a `cupy.fuse`d function's call. Otherwise `cupy.fuse` traces the members'
    own kernels. Either way the arithmetic is the unfused ops' (the kernel layer's sources are
    compiled without multiply-add contraction; `cupy.fuse` may still contract). A cluster the
    tracer cannot take (a kernel that inspects values or shapes on the host) runs its kernels
    one by one, as on the CPU, from then on."""

    __slots__ = ("_steps", "_name", "_members", "_num_inputs", "_fused", "_refused", "_module",
                 "_kernels")

    def __init__(self, steps, name, members, num_inputs):
        self._steps = steps
        self._name = name
        self._members = members  # (op name, args, attrs) per member, for `fused_source`
        self._num_inputs = num_inputs
        self._fused = None
        self._refused = False
        self._module = None
        self._kernels = {}  # dtype -> ElementwiseKernel of `_module`, or False: not covered

    def __call__(self, xp, *arrays):
        dtype = arrays[0].dtype
        if xp is self._module:
            kernel = self._kernels.get(dtype)
        else:
            self._module, self._kernels = xp, {}
            kernel = None
        if kernel is None:
            kernel = self._kernels[dtype] = self._kernel_object(xp, dtype)
        if kernel is not False and all(a.dtype == dtype for a in arrays):
            return kernel(*arrays)
        if not self._refused:
            fused = self._fused
            if fused is None:
                fuse = getattr(xp, "fuse", None)
                if fuse is None:
                    self._refused = True
                    return self._steps(xp, *arrays)
                steps = self._steps

                def traced(*a):
                    return steps(xp, *a)

                fused = self._fused = fuse(kernel_name=self._name)(traced)
            try:
                return fused(*arrays)
            except Exception:  # noqa: BLE001 - not traceable: run the kernels one by one
                self._refused = True
        return self._steps(xp, *arrays)

    def _kernel_object(self, xp, dtype):
        """The cluster's `ElementwiseKernel` for `dtype` operands, or False (see the class doc)."""
        if getattr(xp, "ElementwiseKernel", None) is None:
            return False
        source = _cupy_kernels.fused_source(f"{self._name}_{dtype.name}", self._members,
                                            self._num_inputs, dtype)
        return False if source is None else source.make(xp, dtype)

    @property
    def fused(self) -> bool:
        """Whether calls run as one device kernel: through a kernel object made from the
        members' sources, or through `cupy.fuse` (False until the first call, and after the
        tracer refused the cluster)."""
        return any(self._kernels.values()) or (self._fused is not None and not self._refused)
