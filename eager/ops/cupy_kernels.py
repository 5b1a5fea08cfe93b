"""The CuPy kernel layer: the ops whose GPU launch runs through a precompiled CuPy kernel object.

Why: at small sizes a GPU op's time is the host's, and most of it is CuPy's Python-facing layer
(argument parsing, type resolution and broadcasting for every call of every ufunc), paid once
per CuPy call. An op whose kernel makes several CuPy calls pays it several times: `sigmoid` is
nine launches (abs, negate, exp, a compare, two adds, two divides and a select), `ReluGrad` two,
`Mean` two, Adam's update about a dozen. Here each op is one `cupy.ElementwiseKernel` or
`cupy.ReductionKernel`, built once per (op, dtype) and called directly: one launch and one pass
of CuPy's call machinery. `bench/gpu.py` measures each against the CuPy calls it replaces.

What is covered (`TABLE`, keyed by op name): elementwise `AddV2`, `Sub`, `Mul`, `RealDiv`,
`Maximum`, `Minimum`, `Neg`, `Square`, `Relu`, `ReluGrad` (float16/32/64, and int32/int64
where the op takes integers), `Exp`, `Tanh`, `Sigmoid` (float32/64: their float16 kernels
round after every step, which one C expression would not), and the reduction `Mean` over any
axes (float32/64). `Sum` and `Max` keep CuPy's own reductions: each is one launch there too, and
on an H200 a `ReductionKernel` called directly was no faster (1.2-1.9x CuPy's at float32 (4,)).
`UPDATES` holds the fused optimizer updates (gradient descent, momentum, Nesterov, Adam,
AMSGrad, and the sparse forms of the last four, gated on their indices' check) that
`training_ops` launches as one kernel per variable.
Anything else runs the op's own kernel, the *fallback*: a dtype the table does not cover,
operands of two dtypes, an empty reduction (TensorFlow's identity values), a reduction over no
axis. Broadcasting, strided inputs and 0-d operands are handled by CuPy's kernel objects as by
its ufuncs, and every result is a fresh C-contiguous array, as the ufuncs return.

Semantics, written into the sources (and tested on any machine by evaluating them with numpy,
`tests/cupy_stand_in.py`): each elementwise kernel gives the op's CPU result bit for bit where
that result is one IEEE operation (add, subtract, multiply, divide, negate, square, select), and
the same operations in the same order otherwise (sigmoid: `exp(-|x|)`, then `1 / (1 + e)` or
`e / (1 + e)`; float16 arithmetic rounds at each assignment, as numpy's does), except that
CUDA's `expf` flushes a subnormal result to zero (as CuPy's own `exp` does): float32 `Exp` and
`Sigmoid` give 0 where numpy gives a subnormal (`exp(-90)`, 8.19e-40). Kernels are
compiled without multiply-add contraction (`--fmad=false`) so that no two operations round as
one. NaN propagates through `Maximum`, `Minimum` and `Relu` from either operand; a tie
between zeros of opposite sign keeps what numpy's loops keep (the first operand for float16,
the second for float32 and float64, so `relu(-0.)` is -0. in float16 and +0. otherwise);
TensorFlow's own kernels differ by dtype there too. `ReluGrad` is `dy * (y > 0 ? 1 : 0)`, so a
NaN `dy` stays NaN and a NaN `y` gives zero, as on the CPU. Reductions accumulate in their
dtype in CuPy's tree order: equal to the CPU's within rounding, not bit for bit.
"""

from __future__ import annotations

import re

import numpy as np

from ..core.registry import get_op
from .math_ops import FLOAT_TO_INT_PLANS
from .nn_ops import check_sparse_labels

__all__ = ["ElementwiseSource", "ReductionSource", "TABLE", "UPDATES", "XENT", "SPARSE_XENT",
           "INDEX_ROWS", "index_rows",
           "FLOAT_TO_INT", "DirectLaunch", "SoftmaxXent", "SparseXent", "CastLaunch", "build",
           "update_kernel", "fused_source", "install", "COMPILE_OPTIONS"]

#: Every kernel here compiles without multiply-add contraction: each operation rounds on its
#: own, as numpy's (and Keras') arithmetic does, so GPU results equal the CPU's.
COMPILE_OPTIONS = ("--fmad=false",)

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_I32, _I64 = np.dtype(np.int32), np.dtype(np.int64)
_FLOATS = frozenset({_F16, _F32, _F64})
_WIDE_FLOATS = frozenset({_F32, _F64})
_ARITHMETIC = _FLOATS | {_I32, _I64}


class ElementwiseSource:
    """One `cupy.ElementwiseKernel`'s source. `operation` is the C body, or a function of the
    dtype returning it (where semantics differ by dtype); `dtypes` are the dtypes it is built
    for (None: any, the type placeholder `T` resolving per call); `reference(*arrays)` is the
    numpy computation it must equal (what the op's kernel computes on the CPU)."""

    __slots__ = ("name", "in_params", "out_params", "operation", "dtypes", "reference")

    def __init__(self, name, in_params, out_params, operation, dtypes, reference=None):
        self.name = name
        self.in_params = in_params
        self.out_params = out_params
        self.operation = operation
        self.dtypes = dtypes
        self.reference = reference

    def covers(self, dtype) -> bool:
        return self.dtypes is None or dtype in self.dtypes

    def operation_for(self, dtype) -> str:
        return self.operation(dtype) if callable(self.operation) else self.operation

    def make(self, xp, dtype):
        return xp.ElementwiseKernel(self.in_params, self.out_params, self.operation_for(dtype),
                                    self.name, options=COMPILE_OPTIONS)


class ReductionSource:
    """One `cupy.ReductionKernel`'s source (CuPy's names: `a` and `b` are partial results;
    `_in_ind.size() / _out_ind.size()` is the number of elements reduced into each output).
    Its inputs (`in_params`, one by default) are broadcast together and mapped by `map_expr`
    before they are reduced."""

    __slots__ = ("name", "map_expr", "reduce_expr", "post_map_expr", "identity", "dtypes",
                 "reference", "in_params", "out_params")

    def __init__(self, name, map_expr, reduce_expr, post_map_expr, identity, dtypes, reference,
                 in_params="T x", out_params="T y"):
        self.in_params = in_params
        self.out_params = out_params
        self.name = name
        self.map_expr = map_expr
        self.reduce_expr = reduce_expr
        self.post_map_expr = post_map_expr
        self.identity = identity
        self.dtypes = dtypes
        self.reference = reference

    def covers(self, dtype) -> bool:
        return dtype in self.dtypes

    def make(self, xp, dtype):
        return xp.ReductionKernel(self.in_params, self.out_params, self.map_expr,
                                  self.reduce_expr, self.post_map_expr, self.identity,
                                  self.name, options=COMPILE_OPTIONS)


# -----------------------------------------------------------------------------------------------
# The table: op name -> source
# -----------------------------------------------------------------------------------------------

def _tie_keeps_first(dtype) -> bool:
    """Whether numpy's maximum/minimum loop keeps its first operand when the two compare equal
    (zeros of opposite sign): yes for float16 (a scalar loop), no for float32/64 (SIMD)."""
    return dtype == _F16


def _select(op):
    """`Maximum` (op ">") or `Minimum` ("<"): NaN from either side, ties as numpy."""
    def operation(dtype):
        if dtype.kind != "f":
            return f"z = x {op} y ? x : y"
        compare = f"x {op}= y" if _tie_keeps_first(dtype) else f"x {op} y"
        return f"z = (isnan(x) || {compare}) ? x : y"
    return operation


def _relu(dtype):
    """max(x, 0) as `Maximum` computes it (zero the second operand)."""
    if dtype.kind != "f":
        return "y = x > T(0) ? x : T(0)"
    compare = "x >= T(0)" if _tie_keeps_first(dtype) else "x > T(0)"
    return f"y = (isnan(x) || {compare}) ? x : T(0)"


def _np_sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _np_mean(x, axis, keepdims):
    total = np.add.reduce(x, axis=axis, dtype=x.dtype, keepdims=keepdims)
    return (total / (x.size // total.size)).astype(x.dtype)


def _binary(name, operation, dtypes, reference):
    return ElementwiseSource(f"eager_{name}", "T x, T y", "T z", operation, dtypes, reference)


def _unary(name, operation, dtypes, reference):
    return ElementwiseSource(f"eager_{name}", "T x", "T y", operation, dtypes, reference)


TABLE = {
    "AddV2": _binary("add", "z = x + y", _ARITHMETIC, np.add),
    "Sub": _binary("subtract", "z = x - y", _ARITHMETIC, np.subtract),
    "Mul": _binary("multiply", "z = x * y", _ARITHMETIC, np.multiply),
    "RealDiv": _binary("divide", "z = x / y", _FLOATS, np.divide),
    "Maximum": _binary("maximum", _select(">"), _ARITHMETIC, np.maximum),
    "Minimum": _binary("minimum", _select("<"), _ARITHMETIC, np.minimum),
    "ReluGrad": ElementwiseSource("eager_relu_grad", "T dy, T y", "T dx",
                                  "dx = dy * (y > T(0) ? T(1) : T(0))", _FLOATS,
                                  lambda dy, y: dy * (y > 0)),
    "Neg": _unary("negative", "y = -x", _ARITHMETIC, np.negative),
    "Square": _unary("square", "y = x * x", _ARITHMETIC, lambda x: x * x),
    "Relu": _unary("relu", _relu, _ARITHMETIC, lambda x: np.maximum(x, x.dtype.type(0))),
    "Exp": _unary("exp", "y = exp(x)", _WIDE_FLOATS, np.exp),
    "Tanh": _unary("tanh", "y = tanh(x)", _WIDE_FLOATS, np.tanh),
    "Sigmoid": _unary("sigmoid",
                      "T e = exp(-fabs(x)); y = x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e)",
                      _WIDE_FLOATS, _np_sigmoid),
    "Mean": ReductionSource("eager_mean", "x", "a + b",
                            "y = a / T(_in_ind.size() / _out_ind.size())", "0", _WIDE_FLOATS,
                            _np_mean),
}

# SoftmaxCrossEntropyWithLogits in four launches instead of ten (`SoftmaxXent`): the row
# maximum (CuPy's own reduction), then these three, each reading the logits, the maximum (and
# the exponentials' sum, and the labels) broadcast along the class axis. The arithmetic is the
# CPU kernel's, operation for operation: shifted = x - m, sum(exp(shifted)),
# labels * (log(sum) - shifted), exp(shifted) / sum - labels.
XENT = {
    "exp_sum": ReductionSource("eager_xent_exp_sum", "exp(x - m)", "a + b", "s = a", "0",
                               _WIDE_FLOATS, None, in_params="T x, T m", out_params="T s"),
    "loss": ReductionSource("eager_xent_loss", "z * (log(s) - (x - m))", "a + b", "loss = a",
                            "0", _WIDE_FLOATS, None, in_params="T x, T m, T s, T z",
                            out_params="T loss"),
    "backprop": ElementwiseSource("eager_xent_backprop", "T x, T m, T s, T z", "T bp",
                                  "bp = exp(x - m) / s - z", _WIDE_FLOATS),
}

# SparseSoftmaxCrossEntropyWithLogits after its label check (`SparseXent`): the row maximum and
# `XENT["exp_sum"]`, the labels' logits gathered, then these two; the CPU kernel's operations in
# its order (log_p = (x - m) - log(s), loss = -log_p[label], backprop = exp(log_p) - one-hot).
SPARSE_XENT = {
    "loss": ElementwiseSource("eager_sparse_xent_loss", "T xl, T m, T s", "T loss",
                              "loss = -((xl - m) - log(s))", _WIDE_FLOATS),
    "backprop": ElementwiseSource("eager_sparse_xent_backprop", "T x, T m, T s, I label, I col",
                                  "T bp", "bp = exp((x - m) - log(s)) - (col == label ? T(1) : "
                                  "T(0))", _WIDE_FLOATS),
}

# A sparse write's rows on a GPU (`resource_ops.checked_rows`): each index clamped into [0, n)
# (a row it may write; the write itself is gated on the check) and whether it was out of
# range, in one launch where CuPy took four (two comparisons, an or, the wrap).
INDEX_ROWS = ElementwiseSource("eager_index_rows", "I index, I n", "I row, bool bad",
                               "bad = index < I(0) || index >= n;"
                               " row = index < I(0) ? I(0) : (index >= n ? n - I(1) : index)",
                               frozenset({_I32, _I64}))


def index_rows(xp, indices, n):
    """`(rows, bad)` of `INDEX_ROWS` for int32/int64 `indices` of a device, or None for
    another dtype."""
    kernel = build(xp, INDEX_ROWS, indices.dtype)
    if kernel is None:
        return None
    return kernel(indices, indices.dtype.type(n))


# A float -> integer Cast with TensorFlow's CPU values (`math_ops._float_to_int`) in one launch
# instead of about six: a float that truncates into the wide type's range is converted (C
# defines that), anything else (NaN, infinities, beyond the width) becomes the width's minimum,
# and the wide integer wraps to the target. `T` is the float, `W` the width (int32 or int64,
# from `wide_min`), `O` the target (from the output array given).
FLOAT_TO_INT = ElementwiseSource(
    "eager_float_to_int", "T x, float64 low, float64 high, W wide_min", "O y",
    "double v = double(x); y = O((v > low && v < high) ? W(v) : wide_min)", None)

# The fused optimizer updates: `var`, the slots, and `training_ops`' arithmetic (Keras 3's,
# operation for operation) in one kernel per variable. Their scalars are 0-d device arrays of
# the variable's dtype; `T` resolves per call.
_ADAM_PARAMS = ("T grad, T beta1_power, T beta2_power, T lr, T one_minus_beta1, "
                "T one_minus_beta2, T epsilon")
_ADAM_MOMENTS = ("T alpha = lr * sqrt(T(1) - beta2_power) / (T(1) - beta1_power);"
                 " m = m + (grad - m) * one_minus_beta1;"
                 " v = v + (grad * grad - v) * one_minus_beta2;")


def _momentum(nesterov):
    step = "accum * momentum - scaled" if nesterov else "accum"
    return ElementwiseSource(
        "eager_nesterov" if nesterov else "eager_momentum", "T grad, T lr, T momentum",
        "T var, T accum",
        f"T scaled = grad * lr; accum = accum * momentum - scaled; var = var + ({step});", None)


# The sparse updates' forms (an IndexedSlices gradient densified first, `training_ops`): each
# writes nothing where `skip` (the 0-d flag of its indices' check, true when one was out of
# range) is set, so a bad index never half-applies an update and the host need not read the
# flag first. Sparse momentum takes the densified `grad * lr` (Keras scales the slices), sparse
# Adam the densified squares of the slices.
_SPARSE_ADAM_PARAMS = ("T grad, T grad_sq, T beta1_power, T beta2_power, T lr, "
                       "T one_minus_beta1, T one_minus_beta2, T epsilon, bool skip")
_SPARSE_ADAM_MOMENTS = ("T alpha = lr * sqrt(T(1) - beta2_power) / (T(1) - beta1_power);"
                        " T new_m = m + (grad - m) * one_minus_beta1;"
                        " T new_v = v + (grad_sq - v) * one_minus_beta2;")
_SPARSE_ADAM_WRITES = " var = skip ? var : new_var; m = skip ? m : new_m; v = skip ? v : new_v;"


def _sparse_momentum(nesterov):
    step = "new_accum * momentum - scaled" if nesterov else "new_accum"
    return ElementwiseSource(
        "eager_sparse_nesterov" if nesterov else "eager_sparse_momentum",
        "T scaled, T momentum, bool skip", "T var, T accum",
        f"T new_accum = accum * momentum - scaled; T new_var = var + ({step});"
        " accum = skip ? accum : new_accum; var = skip ? var : new_var;", None)


UPDATES = {
    # The product is rounded to `T` before the subtraction, as numpy rounds it: for float16 a
    # single expression would compute both in float32 and round once.
    "gradient_descent": ElementwiseSource("eager_gradient_descent", "T alpha, T delta", "T var",
                                          "var = var - T(alpha * delta)", None),
    "momentum": _momentum(False),
    "nesterov": _momentum(True),
    "adam": ElementwiseSource("eager_adam", _ADAM_PARAMS, "T var, T m, T v",
                              _ADAM_MOMENTS + " var = var - (m * alpha) / (sqrt(v) + epsilon);",
                              None),
    # AMSGrad's running maximum propagates NaN, as `numpy.maximum`.
    "amsgrad": ElementwiseSource("eager_amsgrad", _ADAM_PARAMS, "T var, T m, T v, T vhat",
                                 _ADAM_MOMENTS + " vhat = (vhat > v || isnan(vhat)) ? vhat : v;"
                                 " var = var - (m * alpha) / (sqrt(vhat) + epsilon);", None),
    "sparse_momentum": _sparse_momentum(False),
    "sparse_nesterov": _sparse_momentum(True),
    "sparse_adam": ElementwiseSource(
        "eager_sparse_adam", _SPARSE_ADAM_PARAMS, "T var, T m, T v",
        _SPARSE_ADAM_MOMENTS + " T new_var = var - (new_m * alpha) / (sqrt(new_v) + epsilon);"
        + _SPARSE_ADAM_WRITES, None),
    "sparse_amsgrad": ElementwiseSource(
        "eager_sparse_amsgrad", _SPARSE_ADAM_PARAMS, "T var, T m, T v, T vhat",
        _SPARSE_ADAM_MOMENTS + " T new_vhat = (vhat > new_v || isnan(vhat)) ? vhat : new_v;"
        " T new_var = var - (new_m * alpha) / (sqrt(new_vhat) + epsilon);"
        + _SPARSE_ADAM_WRITES + " vhat = skip ? vhat : new_vhat;", None),
}


# -----------------------------------------------------------------------------------------------
# Building (the per-(op, dtype) cache) and launching
# -----------------------------------------------------------------------------------------------

_BUILT: dict = {}  # (array module, source name, dtype) -> kernel object


def build(xp, source, dtype):
    """`source`'s kernel object for `dtype` on array module `xp` (cupy, or a stand-in in
    tests), built once; None when the source does not cover `dtype`. CuPy compiles the CUDA
    code on the first call and caches the binary on disk."""
    key = (xp, source.name, dtype)
    kernel = _BUILT.get(key)
    if kernel is None:
        if not source.covers(dtype):
            return None
        kernel = _BUILT[key] = source.make(xp, dtype)
    return kernel


def update_kernel(xp, name, dtype):
    """The fused optimizer update `name` (an `UPDATES` key) for variables of `dtype`."""
    return build(xp, UPDATES[name], dtype)


def fused_source(name, steps, num_inputs, dtype):
    """One `ElementwiseSource` computing a fused elementwise cluster on `dtype` operands, or None
    where some member has no elementwise source in `TABLE` covering `dtype` (or takes
    attributes). `steps` lists the members in order as (op name, args, attrs), an arg being
    ("a", input index) or ("t", earlier step); the kernel takes `a0, a1, ...` and writes the
    last step's value to `out`. Each member's statements are its own source's, its parameters
    renamed to what they read and its output declared as `T t<step>` (so it rounds to the
    dtype where the unfused op's output would), its locals suffixed with the step: the same
    operations in the same order as the members launched one by one."""
    body = []
    for j, (op_name, args, attrs) in enumerate(steps):
        source = TABLE.get(op_name)
        if attrs or not isinstance(source, ElementwiseSource) or not source.covers(dtype):
            return None
        params = [p.split()[1] for p in source.in_params.split(",")]
        (out,) = [p.split()[1] for p in source.out_params.split(",")]
        names = {p: (f"a{i}" if kind == "a" else f"t{i}") for p, (kind, i) in zip(params, args)}
        names[out] = f"t{j}"
        for statement in filter(str.strip, source.operation_for(dtype).split(";")):
            words = statement.split()
            if len(words) > 2 and words[0] == "T" and words[2] == "=":
                names[words[1]] = f"{words[1]}_{j}"  # a local of the member's source
            renamed = _IDENTIFIER.sub(lambda m, names=names: names.get(m.group(0), m.group(0)),
                                      statement)
            if renamed.split()[0] == f"t{j}":
                renamed = "T " + renamed.strip()  # the member's output: declared, rounded
            body.append(renamed.strip())
    body.append(f"out = t{len(steps) - 1}")
    in_params = ", ".join(f"T a{i}" for i in range(num_inputs))
    return ElementwiseSource(name, in_params, "T out", "; ".join(body), frozenset({dtype}))


_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")


class DirectLaunch:
    """An op's kernel on CuPy through its table entry: `(xp, *arrays, **attrs)` as the op's own
    kernel, which it calls for whatever the entry does not cover (see the module doc). Hot: every
    covered op on a GPU; the per-dtype lookup is one dict get on this object."""

    __slots__ = ("op_name", "source", "fallback", "_module", "_kernels", "_reduction")

    def __init__(self, op_name, source, fallback):
        self.op_name = op_name
        self.source = source
        self.fallback = fallback
        # The per-dtype kernels of one array module, `_module`: a kernel object built by a
        # stand-in module (tests) must never be launched on CuPy arrays, nor CuPy's on others.
        self._module = None
        self._kernels = {}  # dtype -> kernel object of `_module`, or False where not covered
        self._reduction = isinstance(source, ReductionSource)

    def kernel_for(self, xp, dtype):
        if xp is not self._module:
            self._module, self._kernels = xp, {}
        kernel = self._kernels.get(dtype)
        if kernel is None:
            kernel = self._kernels[dtype] = build(xp, self.source, dtype) or False
        return kernel

    def __call__(self, xp, *arrays, **attrs):
        x = arrays[0]
        kernel = self._kernels.get(x.dtype) if xp is self._module else None
        if kernel is None:
            kernel = self.kernel_for(xp, x.dtype)
        if kernel is not False:
            if self._reduction:
                axes = attrs.get("axes")
                if x.size and axes != ():
                    return kernel(x, axis=axes, keepdims=attrs.get("keepdims", False))
            elif len(arrays) == 1 or arrays[1].dtype == x.dtype:
                return kernel(*arrays)
        return self.fallback(xp, *arrays, **attrs)

    def __repr__(self):
        return f"<DirectLaunch {self.op_name} via {self.source.name}>"


class CastLaunch:
    """`Cast` on CuPy: a float -> integer cast (to int8/16/32/64 or uint8/16/32) in one launch
    (`FLOAT_TO_INT`) where the op's own kernel makes about six; any other cast (uint64's high
    half, bool, float, complex, from an integer, empty) runs the op's own kernel."""

    __slots__ = ("fallback", "_module", "_kernel")

    op_name = "Cast"

    def __init__(self, fallback):
        self.fallback = fallback
        self._module = self._kernel = None

    def __call__(self, xp, x, dtype):
        target = dtype.dtype
        plan = FLOAT_TO_INT_PLANS.get(target) if x.dtype.kind == "f" else None
        if plan is None or target == _U64 or not x.size:
            return self.fallback(xp, x, dtype=dtype)
        if xp is not self._module:
            self._module, self._kernel = xp, FLOAT_TO_INT.make(xp, None)
        _, _, _, limit, wide_min = plan
        out = xp.empty(x.shape, target)
        self._kernel(x, -limit - 1, limit, wide_min, out)
        return out

    def __repr__(self):
        return f"<CastLaunch via {FLOAT_TO_INT.name}>"


_U64 = np.dtype(np.uint64)


class SparseXent:
    """`SparseSoftmaxCrossEntropyWithLogits` on CuPy: the op's label check (TensorFlow's CPU
    error for a label outside [0, classes)), then seven launches where its kernel makes about a
    dozen: float32/64 logits of at least one class with integer labels; anything else (float16,
    which the CPU kernel computes in float32; no classes) runs the op's own kernel. Returns
    (loss, backprop) as that kernel does; the exponentials' sum is CuPy's tree order, equal to
    the CPU's within rounding."""

    __slots__ = ("fallback", "check_labels", "_module", "_kernels")

    op_name = "SparseSoftmaxCrossEntropyWithLogits"

    def __init__(self, fallback, check_labels):
        self.fallback = fallback
        self.check_labels = check_labels  # (xp, labels, classes, logits shape): raises
        self._module = None
        self._kernels = {}  # dtype -> (exp_sum, loss, backprop) kernel objects of `_module`

    def __call__(self, xp, logits, labels):
        dtype = logits.dtype
        if dtype not in _WIDE_FLOATS or not logits.ndim or not logits.shape[-1]:
            return self.fallback(xp, logits, labels)
        classes = logits.shape[-1]
        self.check_labels(xp, labels, classes, logits.shape)
        if xp is not self._module:
            self._module, self._kernels = xp, {}
        kernels = self._kernels.get(dtype)
        if kernels is None:
            kernels = self._kernels[dtype] = (
                build(xp, XENT["exp_sum"], dtype), build(xp, SPARSE_XENT["loss"], dtype),
                build(xp, SPARSE_XENT["backprop"], dtype))
        exp_sum, loss, backprop = kernels
        index = labels.astype(np.int64, copy=False)[..., None]
        m = logits.max(axis=-1, keepdims=True)
        s = exp_sum(logits, m, axis=-1, keepdims=True)
        picked = xp.take_along_axis(logits, index, axis=-1)
        columns = xp.arange(classes, dtype=np.int64)
        return loss(picked, m, s)[..., 0], backprop(logits, m, s, index, columns)

    def __repr__(self):
        return "<SparseXent via eager_xent_exp_sum, eager_sparse_xent_loss/backprop>"


class SoftmaxXent:
    """`SoftmaxCrossEntropyWithLogits` on CuPy in four launches (`XENT`) where its own kernel
    makes ten: float32/64 logits with labels of the same dtype and shape and at least one
    class; anything else (float16, which the CPU kernel computes in float32; labels to
    broadcast or convert; no classes) runs the op's own kernel. Returns (loss, backprop) as
    that kernel does. Reductions sum in CuPy's tree order: equal to the CPU's within rounding."""

    __slots__ = ("fallback", "_module", "_kernels")

    op_name = "SoftmaxCrossEntropyWithLogits"

    def __init__(self, fallback):
        self.fallback = fallback
        self._module = None
        self._kernels = {}  # dtype -> (exp_sum, loss, backprop) kernel objects of `_module`

    def __call__(self, xp, logits, labels, axis=-1):
        dtype = logits.dtype
        if (dtype not in _WIDE_FLOATS or labels.dtype != dtype or labels.shape != logits.shape
                or not logits.ndim or not logits.shape[axis]):
            return self.fallback(xp, logits, labels, axis=axis)
        if xp is not self._module:
            self._module, self._kernels = xp, {}
        kernels = self._kernels.get(dtype)
        if kernels is None:
            kernels = self._kernels[dtype] = tuple(
                build(xp, XENT[part], dtype) for part in ("exp_sum", "loss", "backprop"))
        exp_sum, loss, backprop = kernels
        m = logits.max(axis=axis, keepdims=True)
        s = exp_sum(logits, m, axis=axis, keepdims=True)
        return loss(logits, m, s, labels, axis=axis), backprop(logits, m, s, labels)

    def __repr__(self):
        return f"<SoftmaxXent via {', '.join(src.name for src in XENT.values())}>"


def install():
    """Gives every op in `TABLE` its CuPy kernel (`OpDef.cupy_kernel`, which the CUDA backend
    launches instead of `OpDef.kernel`), and `SoftmaxCrossEntropyWithLogits` its four-launch
    one. Run once when the op library is imported; it imports no CuPy (kernels are built on
    their first launch)."""
    for op_name, source in TABLE.items():
        op = get_op(op_name)
        op.cupy_kernel = DirectLaunch(op_name, source, op.kernel)
    for launch in (SoftmaxXent, CastLaunch):
        op = get_op(launch.op_name)
        op.cupy_kernel = launch(op.kernel)
    op = get_op(SparseXent.op_name)
    op.cupy_kernel = SparseXent(op.kernel, check_sparse_labels)
