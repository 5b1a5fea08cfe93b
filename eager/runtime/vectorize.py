"""Vectorising a program over a batch axis: n runs of it as one (≈ JAX's `vmap`, TF's pfor).

A Jacobian is n backward passes that differ only in their seed (row i of the identity). Run as
one program whose seed has a leading axis of n, each op then computes all n rows at once, with
one kernel call per op instead of n.

`vectorize(program, batched_feeds, n)` returns the program in which every value that depends on
a batched feed carries a leading axis of n ("batched"), and every other value is as before
(computed once, shared by all rows, broadcast where it meets a batched one). Each op reading a
batched value is rewritten by its *batch rule*:

* elementwise ops (`OpDef.elementwise`) and `MatMul` (numpy broadcasts its batch
  axes): a batched operand of lower rank than the output gets size-1 axes after the batch axis,
  so that broadcasting aligns it as it aligned the unbatched operand (`[n, 3]` with `[2, 3]`
  becomes `[n, 1, 3]`);
* shape-preserving unary ops (`Identity`, `StopGradient`, `ZerosLike`, `OnesLike`): unchanged;
* softmax, log-softmax, arg-max/min, the cross-entropies: the axis shifted (unbatched inputs of
  the cross-entropies repeated along the batch first, as their shapes must agree); `Tile`: a
  multiple of 1 for the batch axis;
* reductions, scans, `ExpandDims`, `Squeeze`, `(Conjugate)Transpose`: axes shifted past the
  batch axis;
* `Reshape`, `BroadcastTo`, `Slice`, `StridedSlice`, `PadV2`/`MirrorPad`: the batch axis
  prepended to the shape, the slice (taken whole) or the paddings (none);
* `ConcatV2`, `Pack`: unbatched inputs broadcast to the batch first, the axis shifted;
  `Unpack`, `Split`, `SplitV`, `GatherV2` (of batched params): the axis shifted;
* `Tensordot` (one batched operand) and `Einsum` (a fresh label for the batch axis);
* `ScatterNd` (batched updates), `GatherNd` (batched params): the batch axis moved after the
  indexed axes and back;
* convolutions and pooling (`Conv2D`, `MaxPool` and their input gradients): the batch axis
  merged into the examples' axis, and split off the output again; a filter gradient
  (`Conv2DBackpropFilter`, NHWC, ungrouped): the batch joins the output channels.

Any other op reading a batched value has no rule, and `vectorize` returns None: the caller runs
the n programs one by one. So does a program with a stateful op or a resource write anywhere:
vectorised, it would run once instead of n times. Static shapes are required (backward plans of
eager tapes have them). Values are the same as n separate runs: the same kernels see the same
elements, only more of them per call.
"""

from __future__ import annotations

from ..ops import array_ops as _array
from ..ops import conv_ops as _conv
from ..ops import creation_ops as _creation
from ..ops import cumulative_ops as _cumulative
from ..ops import math_ops as _math
from ..ops import nn_grad as _nn_grad
from ..ops import nn_ops as _nn
from ..ops import padding_ops as _padding
from ..ops import product_ops as _products
from ..ops import slicing_ops as _slicing
from ..ops.product_ops import MATMUL
from ..core.specs import TensorSpec
from .program import Node, Program

__all__ = ["vectorize"]


class _UnsupportedError(Exception):
    """An op the batch rules do not cover, or a shape they need that is not static."""


def vectorize(program, batched_feeds, n):
    """(the program with the feeds in `batched_feeds` (value ids) carrying a leading axis of
    `n`, the set of its batched value ids) (module doc), or None when some op reading a batched
    value has no batch rule. A fetch is batched when it depends on a batched feed."""
    for node in program.nodes:
        if node.op_def.stateful or node.op_def.resource_writes:
            return None  # it would run once, not n times (a random draw, a print, a write)
    rewriter = _Rewriter(program, set(batched_feeds), n)
    try:
        for node in program.nodes:
            rewriter.add(node)
    except _UnsupportedError:
        return None
    specs = dict(program.specs)
    specs.update(rewriter.specs)
    result = Program(rewriter.nodes, program.feeds, program.fetches, program.targets,
                     program.constants, specs, rewriter.names, f"{program.name}_batched",
                     rewriter.next_value)
    return result, frozenset(rewriter.batched)


class _Rewriter:
    __slots__ = ("program", "batched", "n", "nodes", "specs", "names", "next_value")

    def __init__(self, program, batched, n):
        self.program = program
        self.batched = batched
        self.n = n
        self.nodes = []
        self.specs = {v: self._batched_spec(v) for v in batched}
        self.names = dict(program.value_names)
        self.next_value = program._next_value

    def logical_shape(self, v) -> tuple:
        spec = self.program.specs.get(v)
        if spec is None or not spec.shape.is_fully_defined():
            raise _UnsupportedError
        return tuple(spec.shape)

    def _batched_spec(self, v):
        spec = self.program.specs[v]
        return TensorSpec((self.n, *self.logical_shape(v)), spec.dtype)

    def add(self, node):
        flags = [v in self.batched for v in node.inputs]
        if not any(flags):
            self.nodes.append(node)
            return
        if node.is_stateful:
            raise _UnsupportedError
        op = node.op_def
        if op.elementwise or op is MATMUL:
            rule = _aligned
        else:
            rule = _RULES.get(op)
            if rule is None:
                raise _UnsupportedError
        rewritten = rule(self, node, flags)
        if len(rewritten) == 2:
            inputs, attrs = rewritten
            self.nodes.append(node.replace(inputs=tuple(inputs), attrs=attrs))
        else:  # the rewritten op makes an intermediate; `finish` makes the node's output
            inputs, attrs, (shape, finish) = rewritten
            (out,) = node.outputs
            v = self.new_value(node, shape, self.program.specs[out].dtype, "batched")
            self.nodes.append(node.replace(name=f"{node.name}/batched", inputs=tuple(inputs),
                                           attrs=attrs, outputs=(v,)))
            finish(self, node, v)
            # The node making the output keeps the original name (control inputs name it).
            self.nodes[-1] = self.nodes[-1].replace(name=node.name)
        for v in node.outputs:
            self.batched.add(v)
            self.specs[v] = self._batched_spec(v)

    # -- helpers that emit nodes ---------------------------------------------------------------
    def new_value(self, node, shape, dtype, what):
        v = self.next_value
        self.next_value += 1
        self.specs[v] = TensorSpec(shape, dtype)
        self.names[v] = f"{node.name}/{what}:0"
        return v

    def emit(self, node, op_def, inputs, attrs, shape, dtype, what, out=None):
        """A node of `op_def` on `inputs`; its output is `out` (a value the caller already
        has a spec for), else a new value of `shape` and `dtype`."""
        v = self.new_value(node, shape, dtype, what) if out is None else out
        self.nodes.append(Node(f"{node.name}/{what}_{v}", op_def, attrs, inputs, (v,),
                               device=node.device, source=node.source))
        return v

    def move_batch_inside(self, node, v, at):
        """Batched `v` [n, *shape] with its batch axis moved to position `at`:
        [*shape[:at], n, *shape[at:]]."""
        shape = self.logical_shape(v)
        perm = (*range(1, at + 1), 0, *range(at + 1, len(shape) + 1))
        moved = (*shape[:at], self.n, *shape[at:])
        return self.emit(node, _array.TRANSPOSE, (v,), {"perm": perm}, moved,
                         self.program.specs[v].dtype, "batch_inner")

    def with_batch_at(self, node, at):
        """(the shape of `node`'s output with the batch axis at position `at`, the `finish`
        that moves it to the front as the node's output): for ops that produce it there."""
        (out,) = node.outputs
        shape = self.logical_shape(out)
        inside = (*shape[:at], self.n, *shape[at:])
        perm = (at, *range(at), *range(at + 1, len(shape) + 1))

        def finish(rw, node, v):
            rw.emit(node, _array.TRANSPOSE, (v,), {"perm": perm}, None, None, "batch_front",
                    out=out)
        return inside, finish

    def merge(self, node, v, shape, dtype):
        """Batched `v` [n, *shape] as [n * shape[0], ...], for ops whose leading axis is
        already independent examples."""
        merged = (self.n * shape[0], *shape[1:])
        return self.emit(node, _array.RESHAPE, (v,), {"shape": merged}, merged, dtype,
                         "batch_merge")

    def align(self, node, v, rank):
        """Batched `v` with size-1 axes after the batch axis up to logical `rank`."""
        shape = self.logical_shape(v)
        if len(shape) >= rank:
            return v
        target = (self.n, *([1] * (rank - len(shape))), *shape)
        return self.emit(node, _array.RESHAPE, (v,), {"shape": target}, target,
                         self.program.specs[v].dtype, "batch_align")

    def broadcast(self, node, v):
        """Unbatched `v` repeated along a new batch axis."""
        shape = (self.n, *self.logical_shape(v))
        return self.emit(node, _array.BROADCAST_TO, (v,), {"shape": shape}, shape,
                         self.program.specs[v].dtype, "batch_broadcast")


# -- batch rules: (rewriter, node, batched flags) -> (new inputs, new attrs) ----------------------

def _aligned(rw, node, flags):
    rank = max(len(rw.logical_shape(v)) for v in node.outputs) if node.outputs else 0
    inputs = [rw.align(node, v, rank) if b else v for v, b in zip(node.inputs, flags)]
    return inputs, node.attrs


def _unchanged(rw, node, flags):
    return node.inputs, node.attrs


def _reduction(rw, node, flags):
    rank = len(rw.logical_shape(node.inputs[0]))
    axes = node.attrs.get("axes")
    axes = tuple(range(1, rank + 1)) if axes is None else tuple(a % rank + 1 for a in axes)
    return node.inputs, {**node.attrs, "axes": axes}


def _expand_dims(rw, node, flags):
    rank = len(rw.logical_shape(node.inputs[0]))
    return node.inputs, {**node.attrs, "axis": node.attrs["axis"] % (rank + 1) + 1}


def _squeeze(rw, node, flags):
    shape = rw.logical_shape(node.inputs[0])
    axis = node.attrs.get("axis")
    if axis is None:
        axes = [i + 1 for i, d in enumerate(shape) if d == 1]  # never the batch axis
    else:
        axis = (axis,) if isinstance(axis, int) else axis
        axes = [a % len(shape) + 1 for a in axis]
    return node.inputs, {**node.attrs, "axis": axes}


def _transpose(rw, node, flags):
    rank = len(rw.logical_shape(node.inputs[0]))
    perm = node.attrs["perm"]
    return node.inputs, {**node.attrs, "perm": (0, *(p % rank + 1 for p in perm))}


def _slice(rw, node, flags):
    attrs = node.attrs
    return node.inputs, {**attrs, "begin": (0, *attrs["begin"]), "size": (-1, *attrs["size"])}


def _strided_slice(rw, node, flags):
    """A full slice of the batch axis put in front of the spec; every mask moves up a bit."""
    attrs = node.attrs
    return node.inputs, {
        **attrs, "begin": (0, *attrs["begin"]), "end": (0, *attrs["end"]),
        "strides": (1, *attrs["strides"]), "begin_mask": attrs["begin_mask"] << 1 | 1,
        "end_mask": attrs["end_mask"] << 1 | 1, "ellipsis_mask": attrs["ellipsis_mask"] << 1,
        "new_axis_mask": attrs["new_axis_mask"] << 1,
        "shrink_axis_mask": attrs["shrink_axis_mask"] << 1}


def _pad(rw, node, flags):
    if any(flags[1:]):  # a batched padding value
        raise _UnsupportedError
    return node.inputs, {**node.attrs, "paddings": ((0, 0), *node.attrs["paddings"])}


def _scan(rw, node, flags):
    rank = len(rw.logical_shape(node.inputs[0]))
    return node.inputs, {**node.attrs, "axis": node.attrs["axis"] % rank + 1}


def _tensordot(rw, node, flags):
    attrs = node.attrs
    if flags[0] and flags[1]:
        raise _UnsupportedError  # a contraction of two batched operands: not one tensordot
    if flags[0]:
        return node.inputs, {**attrs, "a_axes": tuple(a + 1 for a in _axes(rw, node, 0))}
    # b batched: its free axes come after a's, so the batch axis lands in the middle
    free_a = len(rw.logical_shape(node.inputs[0])) - len(attrs["a_axes"])
    return node.inputs, {**attrs, "b_axes": tuple(b + 1 for b in _axes(rw, node, 1))}, \
        rw.with_batch_at(node, free_a)


def _axes(rw, node, k):
    rank = len(rw.logical_shape(node.inputs[k]))
    return [a % rank for a in node.attrs["a_axes" if k == 0 else "b_axes"]]


def _einsum(rw, node, flags):
    """A fresh label for the batch axis, in front of every batched operand and the output."""
    terms, output, _ = _products.parse_equation(node.attrs["equation"])
    used = {s for t in terms for s in t} | set(output)
    label = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba"
                 if c not in used)

    def text(subscripts):
        return "".join("..." if s == _products.ELLIPSIS else s for s in subscripts)

    operands = [(label if b else "") + text(t) for t, b in zip(terms, flags)]
    equation = f"{','.join(operands)}->{label}{text(output)}"
    return node.inputs, {**node.attrs, "equation": equation}


def _gather(rw, node, flags):
    if flags[1] or node.attrs.get("batch_dims", 0):
        raise _UnsupportedError  # batched indices, or a batched gather already
    rank = len(rw.logical_shape(node.inputs[0]))
    return node.inputs, {**node.attrs, "axis": node.attrs["axis"] % rank + 1}


def _scatter_nd(rw, node, flags):
    """Batched updates: the batch axis goes right after the indexed axes (in the updates and in
    the output's shape), and back to the front of the result."""
    if flags[0]:
        raise _UnsupportedError  # batched indices
    indices, updates = node.inputs
    index_shape = rw.logical_shape(indices)
    depth, m = index_shape[-1], len(index_shape) - 1
    updates = rw.move_batch_inside(node, updates, m)
    inside, finish = rw.with_batch_at(node, depth)
    return (indices, updates), {**node.attrs, "shape": inside}, (inside, finish)


def _gather_nd(rw, node, flags):
    """Batched params: the batch axis goes after the indexed axes, and back to the front."""
    if flags[1] or node.attrs.get("batch_dims", 0):
        raise _UnsupportedError
    params, indices = node.inputs
    index_shape = rw.logical_shape(indices)
    params = rw.move_batch_inside(node, params, index_shape[-1])
    return (params, indices), node.attrs, rw.with_batch_at(node, len(index_shape) - 1)


def _conv_filter_grad(rw, node, flags):
    """Batched dy [n, b, h, w, c]: the batch joins the output channels ([b, h, w, n * c]), one
    filter gradient [kh, kw, cin, n * c] is computed, and the batch is split off again. NHWC
    and ungrouped only."""
    x, dy = node.inputs
    attrs = node.attrs
    kh, kw, cin, cout = attrs["filter_shape"]
    if flags[0] or attrs.get("data_format", "NHWC") != "NHWC" or \
            rw.logical_shape(x)[-1] != cin:
        raise _UnsupportedError
    b, h, w, c = rw.logical_shape(dy)
    n = rw.n
    dtype = rw.program.specs[dy].dtype
    moved = rw.emit(node, _array.TRANSPOSE, (dy,), {"perm": (1, 2, 3, 0, 4)}, (b, h, w, n, c),
                    dtype, "batch_inner")
    joined = rw.emit(node, _array.RESHAPE, (moved,), {"shape": (b, h, w, n * c)},
                     (b, h, w, n * c), dtype, "batch_channels")
    (out,) = node.outputs

    def finish(rw, node, v):
        split = rw.emit(node, _array.RESHAPE, (v,), {"shape": (kh, kw, cin, n, cout)},
                        (kh, kw, cin, n, cout), dtype, "batch_split")
        rw.emit(node, _array.TRANSPOSE, (split,), {"perm": (3, 0, 1, 2, 4)}, None, None,
                "batch_front", out=out)
    return (x, joined), {**attrs, "filter_shape": (kh, kw, cin, n * cout)}, \
        ((kh, kw, cin, n * cout), finish)


def _axis(extra=0):
    """Ops with an `axis` attribute over the input's rank (plus `extra` for an axis that the
    op inserts): the axis shifted past the batch axis (a missing one keeps its default, -1)."""
    def rule(rw, node, flags):
        if "axis" not in node.attrs:
            return node.inputs, node.attrs
        rank = len(rw.logical_shape(node.inputs[0])) + extra
        return node.inputs, {**node.attrs, "axis": node.attrs["axis"] % rank + 1}
    return rule


def _all_batched(then):
    """Repeats every unbatched input along the batch first (for kernels that need their inputs'
    shapes to agree), then applies `then`."""
    def rule(rw, node, flags):
        inputs = tuple(v if b else rw.broadcast(node, v) for v, b in zip(node.inputs, flags))
        _, attrs = then(rw, node, flags)
        return inputs, attrs
    return rule


def _tile(rw, node, flags):
    return node.inputs, {**node.attrs, "multiples": (1, *node.attrs["multiples"])}


def _examples(*batched_positions):
    """Ops whose inputs at `batched_positions` have independent examples along their leading
    axis (convolutions, pooling) and whose other inputs are shared: the batch axis is merged
    into the examples', and split from the output again. Shared inputs at those positions
    (a forward value beside a batched gradient) are repeated first."""
    def rule(rw, node, flags):
        if any(b for k, b in enumerate(flags) if k not in batched_positions):
            raise _UnsupportedError  # a batched filter: not one convolution
        inputs = list(node.inputs)
        for k in batched_positions:
            original = inputs[k]
            v = original if flags[k] else rw.broadcast(node, original)
            inputs[k] = rw.merge(node, v, rw.logical_shape(original),
                                 rw.program.specs[original].dtype)
        attrs = dict(node.attrs)
        if "input_shape" in attrs:  # Conv2DBackpropInput: the examples' count is an attribute
            if attrs["input_shape"] is None or None in attrs["input_shape"]:
                raise _UnsupportedError  # sizes read at run time
            shape = tuple(attrs["input_shape"])
            attrs["input_shape"] = (rw.n * shape[0], *shape[1:])
        (out,) = node.outputs
        shape = rw.logical_shape(out)

        def finish(rw, node, v):
            rw.emit(node, _array.RESHAPE, (v,), {"shape": (rw.n, *shape)}, None, None,
                    "batch_split", out=out)
        return inputs, attrs, ((rw.n * shape[0], *shape[1:]), finish)
    return rule


def _reshape(rw, node, flags):
    if node.attrs["shape"] is None:  # a shape read at run time: no static batched shape
        raise _UnsupportedError
    return node.inputs, {**node.attrs, "shape": (rw.n, *node.attrs["shape"])}


def _broadcast_to(rw, node, flags):
    if node.attrs["shape"] is None:
        raise _UnsupportedError
    shape = tuple(node.attrs["shape"])
    (v,) = node.inputs
    return [rw.align(node, v, len(shape))], {**node.attrs, "shape": (rw.n, *shape)}


def _split_rule():
    def rule(rw, node, flags):
        rank = len(rw.logical_shape(node.inputs[0]))
        return node.inputs, {**node.attrs, "axis": node.attrs["axis"] % rank + 1}
    return rule


def _joined(stacking):
    def rule(rw, node, flags):
        inputs = [v if b else rw.broadcast(node, v) for v, b in zip(node.inputs, flags)]
        rank = len(rw.logical_shape(node.inputs[0])) + (1 if stacking else 0)
        return inputs, {**node.attrs, "axis": node.attrs["axis"] % rank + 1}
    return rule


_RULES = {
    _array.IDENTITY: _unchanged, _creation.ZEROS_LIKE: _unchanged,
    _creation.ONES_LIKE: _unchanged,
    _math.SUM: _reduction, _math.MEAN: _reduction, _math.MAX: _reduction,
    _math.MIN: _reduction, _math.PROD: _reduction,
    _array.EXPAND_DIMS: _expand_dims, _array.SQUEEZE: _squeeze, _array.TRANSPOSE: _transpose,
    _array.RESHAPE: _reshape, _array.BROADCAST_TO: _broadcast_to,
    _array.CONCAT: _joined(False), _array.PACK: _joined(True),
    _array.CONJUGATE_TRANSPOSE: _transpose,
    _slicing.SLICE: _slice, _slicing.STRIDED_SLICE: _strided_slice,
    _padding.PAD: _pad, _padding.MIRROR_PAD: _pad,
    _cumulative.CUMSUM: _scan, _cumulative.CUMPROD: _scan,
    _products.TENSORDOT: _tensordot, _products.EINSUM: _einsum, _slicing.GATHER: _gather,
    _slicing.SCATTER_ND: _scatter_nd, _slicing.GATHER_ND: _gather_nd,
    _conv.CONV2D: _examples(0), _conv.MAX_POOL: _examples(0),
    _nn_grad.CONV2D_INPUT_GRAD: _examples(1), _nn_grad.CONV2D_FILTER_GRAD: _conv_filter_grad,
    _nn_grad.MAX_POOL_GRAD: _examples(0, 1, 2), _nn_grad.MAX_POOL_GRAD_GRAD: _examples(0, 1, 2),
    _array.STOP_GRADIENT: _unchanged, _array.TILE: _tile,
    _nn.SIGMOID_XENT: _all_batched(_unchanged), _nn.SOFTMAX: _axis(), _nn.LOG_SOFTMAX: _axis(),
    _nn.SOFTMAX_XENT: _all_batched(_axis()), _nn.SPARSE_XENT: _all_batched(_unchanged),
    _math.LOGSUMEXP: _reduction, _math.ARGMAX: _axis(), _math.ARGMIN: _axis(),
    _array.UNPACK: _split_rule(), _array.SPLIT: _split_rule(), _array.SPLIT_V: _split_rule(),
}
