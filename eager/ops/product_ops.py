"""Products of tensors (`eager.linalg`, and at top level): matmul, matvec, tensordot, einsum.

Each product is a single op whose kernel calls the array module's own (BLAS-backed) routine;
their gradients (`product_grad`, and `math_grad` for MatMul) are products again.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from ..base import dtypes as _dt
from ..base.ieee import quiet
from ..core.specs import TensorSpec
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from .array_ops import expand_dims, squeeze
from ..core.argument_conversion import same_type
from ..core.dispatch import execute, named
from ..core.registry import op_error, register_op
from ..core.shapes import broadcast_shapes, static_int, static_ints

__all__ = ["matmul", "matvec", "tensordot", "einsum"]


def _matmul_infer(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False):
    sa, sb = a.shape, b.shape
    if not sa._rank_known or not sb._rank_known:
        return TensorSpec(UNKNOWN_SHAPE, a.dtype)
    if len(sa) < 2 or len(sb) < 2:
        raise _rank_error(sa, sb)
    m, k = (sa[-1], sa[-2]) if (transpose_a or adjoint_a) else (sa[-2], sa[-1])
    k2, n = (sb[-1], sb[-2]) if (transpose_b or adjoint_b) else (sb[-2], sb[-1])
    if k is not None and k2 is not None and k != k2:
        raise op_error("MatMul", f"Matrix size-incompatible: In[0]: {list(sa)}, In[1]: {list(sb)}"
                                 f" (inner dimensions {k} and {k2} differ)")
    batch = broadcast_shapes("MatMul", TensorShape(sa[:-2]), TensorShape(sb[:-2]))
    return TensorSpec(batch.concatenate([m, n]), a.dtype)


def _rank_error(sa, sb):
    return op_error("MatMul", f"In[0] and In[1] must have rank >= 2 (they are matrices or "
                              f"batches of matrices), got shapes {TensorShape(sa)} and "
                              f"{TensorShape(sb)}")


def _matmul_kernel(xp, a, b, transpose_a=False, transpose_b=False, adjoint_a=False,
                   adjoint_b=False):
    if a.ndim < 2 or b.ndim < 2:
        raise _rank_error(a.shape, b.shape)
    # The arrays' own swapaxes: numpy's module-level one is a Python wrapper around it, and the
    # gradients of every MatMul transpose an operand.
    if transpose_a or adjoint_a:
        a = a.swapaxes(-1, -2)
        if adjoint_a:
            a = xp.conj(a)
    if transpose_b or adjoint_b:
        b = b.swapaxes(-1, -2)
        if adjoint_b:
            b = xp.conj(b)
    # The operator, not `xp.matmul`: the same product, but CuPy's `matmul` is a Python-level
    # gufunc wrapper that costs a few microseconds more per call than `ndarray.__matmul__`.
    return a @ b


# TensorFlow's CPU MatMul: no int8/int16 (InvalidArgumentError) or unsigned (NotFoundError).
MATMUL = register_op("MatMul", _matmul_kernel, _matmul_infer,
                     dtypes=_dt.FLOATING | _dt.COMPLEX | {_dt.int32, _dt.int64},
                     infer_from_types=True)
MATMUL.no_kernel_dtypes = _dt.UNSIGNED_INTEGER  # listed by TF, no CPU kernel: NotFoundError


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None):
    """≈ `tf.linalg.matmul`: the matrix product of the last two axes, broadcasting batch axes.

    Both inputs must have rank >= 2 (as in TensorFlow; use `tensordot` or `expand_dims` for
    vectors). `transpose_*` / `adjoint_*` transpose (and conjugate) an input without copying.
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    if output_type is not None:
        raise NotImplementedError("matmul: output_type is not supported (cast the result).")
    a, b = same_type(MATMUL, a, b)
    attrs = {}
    if transpose_a:
        attrs["transpose_a"] = True
    if transpose_b:
        attrs["transpose_b"] = True
    if adjoint_a:
        attrs["adjoint_a"] = True
    if adjoint_b:
        attrs["adjoint_b"] = True
    out = execute(MATMUL, (a, b), attrs)
    return out if name is None else named(out, name)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """≈ `tf.linalg.matvec`: the product of matrices `a` [..., M, N] and vectors `b` [..., N],
    shaped [..., M] (batch axes broadcast): `matmul` with `b` as a column."""
    a, b = same_type(MATMUL, a, b)
    if a.shape.rank is not None and a.shape.rank < 2:
        raise ValueError(f"matvec: `a` must have rank >= 2, got shape {a.shape}.")
    if b.shape.rank is not None and b.shape.rank < 1:
        raise ValueError(f"matvec: `b` must have rank >= 1, got shape {b.shape}.")
    out = squeeze(matmul(a, expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a),
                  axis=[-1])
    return out if name is None else named(out, name)


# -----------------------------------------------------------------------------------------------
# tensordot
# -----------------------------------------------------------------------------------------------

_TD = "Tensordot"


def _tensordot_infer(a, b, a_axes=(), b_axes=()):
    sa, sb = a.shape, b.shape
    if len(a_axes) != len(b_axes):
        raise op_error(_TD, f"different number of contraction axes for a and b: {list(a_axes)} "
                            f"vs {list(b_axes)}", [a, b])
    if not sa._rank_known or not sb._rank_known:
        return TensorSpec(UNKNOWN_SHAPE, a.dtype)
    for shape, axes, which in ((sa, a_axes, "a"), (sb, b_axes, "b")):
        rank = len(shape)
        if any(not -rank <= i < rank for i in axes):
            raise op_error(_TD, f"contraction axes {list(axes)} are out of range for {which} of "
                                f"rank {rank} (shapes {list(sa)} and {list(sb)})", [a, b])
        if len({i % rank for i in axes}) != len(axes):
            raise op_error(_TD, f"contraction axes {list(axes)} of {which} repeat an axis",
                           [a, b])
    a_axes = [i % len(sa) for i in a_axes]
    b_axes = [i % len(sb) for i in b_axes]
    for i, j in zip(a_axes, b_axes):
        if sa[i] is not None and sb[j] is not None and sa[i] != sb[j]:
            raise op_error(_TD, f"contracted dimensions differ: a.shape[{i}] = {sa[i]} but "
                                f"b.shape[{j}] = {sb[j]} (shapes {list(sa)} and {list(sb)})",
                           [a, b])
    free = [d for i, d in enumerate(sa) if i not in a_axes]
    free += [d for j, d in enumerate(sb) if j not in b_axes]
    return TensorSpec(free, a.dtype)


def _tensordot_kernel(xp, a, b, a_axes=(), b_axes=()):
    if a.ndim == 0 or b.ndim == 0:
        # A scalar has no axis to contract (inference checked that the axes are empty), so the
        # result is the plain product. Said directly because cupy.tensordot rejects a rank-0
        # input with axes given as lists ("An input is zero-dim while axes has dimensions"),
        # where numpy accepts ([], []).
        out = xp.multiply(a, b)
    else:
        with quiet():  # np.tensordot's Python code signals out of eager's reach (base.ieee)
            out = xp.tensordot(a, b, axes=(list(a_axes), list(b_axes)))
    return xp.asarray(out).astype(a.dtype, copy=False)


TENSORDOT = register_op(_TD, _tensordot_kernel, _tensordot_infer, dtypes=MATMUL.dtypes)
TENSORDOT.no_kernel_dtypes = MATMUL.no_kernel_dtypes  # TF's tensordot runs MatMul


def _contraction_axes(axes, a, b):
    """TF's `_tensordot_axes` rules: an int N (last N of a with first N of b) or a pair."""
    if hasattr(axes, "numpy") or isinstance(axes, np.ndarray):
        axes = np.asarray(axes).tolist()
    if isinstance(axes, (list, tuple)):
        if len(axes) != 2:
            raise ValueError(f"{_TD}: `axes` must be an integer or have length 2. Received "
                             f"{axes}.")
        a_axes, b_axes = (static_ints(_TD, v, "axes") for v in axes)
        if len(a_axes) != len(b_axes):
            raise ValueError(f"{_TD}: Different number of contraction axes `a` and `b`, "
                             f"{len(a_axes)} != {len(b_axes)}.")
        return a_axes, b_axes
    n = static_int(_TD, axes, "axes")
    if n < 0:
        raise ValueError(f"{_TD}: `axes` must be at least 0. Received: {n}.")
    ra, rb = a.shape.rank, b.shape.rank
    if ra is None or rb is None:
        raise ValueError(f"{_TD}: an integer `axes` needs inputs of known rank.")
    for rank, which in ((ra, "a"), (rb, "b")):
        if n > rank:
            raise ValueError(f"{_TD}: `axes` must not be larger than the number of dimensions "
                             f"of tensor {which}. Received {n}, vs tensor dimensions {rank}.")
    return tuple(range(ra - n, ra)), tuple(range(n))


def tensordot(a, b, axes, name=None):
    """≈ `tf.tensordot`: sums products over `axes`: an int N (the last N axes of `a` with the
    first N of `b`), a pair of ints, or a pair of lists of axes. The result's axes are a's free
    axes followed by b's. Negative axes count from the end."""
    a, b = same_type(TENSORDOT, a, b)
    a_axes, b_axes = _contraction_axes(axes, a, b)
    ra, rb = a.shape.rank, b.shape.rank
    if ra is not None and rb is not None:
        _tensordot_infer(a, b, a_axes, b_axes)  # static errors before any work
        a_axes = tuple(i % ra for i in a_axes)
        b_axes = tuple(j % rb for j in b_axes)
    return execute(TENSORDOT, (a, b), {"a_axes": a_axes, "b_axes": b_axes})


# -----------------------------------------------------------------------------------------------
# einsum
# -----------------------------------------------------------------------------------------------

_EIN = "Einsum"
ELLIPSIS = "..."
_EQUATION = re.compile(r"^([a-zA-Z,.]*)(->[a-zA-Z.]*)?$")  # '' and '->' take one scalar


def _subscripts(term, equation):
    """'ab...c' -> ('a', 'b', '...', 'c'); at most one well-formed ellipsis."""
    out, i = [], 0
    while i < len(term):
        if term[i] == ".":
            if term[i:i + 3] != ELLIPSIS or ELLIPSIS in out:
                raise ValueError(f"{_EIN}: invalid ellipsis in subscripts {term!r} of equation "
                                 f"{equation!r}: use at most one '...' per operand.")
            out.append(ELLIPSIS)
            i += 3
        else:
            out.append(term[i])
            i += 1
    return tuple(out)


@functools.lru_cache(maxsize=512)
def parse_equation(equation):
    """(input subscripts, output subscripts, explicit equation for xp.einsum).

    Implicit mode (no '->') outputs the labels used exactly once, sorted, after the broadcast
    (ellipsis) axes: numpy's rule, and TF's for equations without an ellipsis.
    """
    compact = equation.replace(" ", "")
    match = _EQUATION.match(compact)
    if not match:
        raise ValueError(f"{_EIN}: indices have incorrect format. Received: {equation!r} (use "
                         "letters, ',' between operands, '...' and one '->').")
    terms = tuple(_subscripts(t, equation) for t in match.group(1).split(","))
    labels = [s for t in terms for s in t if s != ELLIPSIS]
    if match.group(2) is None:
        once = sorted(s for s in set(labels) if labels.count(s) == 1)
        output = ((ELLIPSIS,) if any(ELLIPSIS in t for t in terms) else ()) + tuple(once)
    else:
        output = _subscripts(match.group(2)[2:], equation)
        for s in output:
            if s != ELLIPSIS and s not in labels:
                raise ValueError(f"{_EIN}: output subscript {s!r} of {equation!r} appears in "
                                 "no input.")
            if output.count(s) > 1:
                raise NotImplementedError(f"{_EIN}: repeated output subscript {s!r} in "
                                          f"{equation!r} (diagonal inflation) is not supported.")
    explicit = ",".join("".join(t) for t in terms) + "->" + "".join(output)
    return terms, output, explicit


def _einsum_shape(equation, shapes, inputs=None):
    """The output shape from the input shapes alone (None dims allowed); raises TF's errors."""
    terms, output, _ = parse_equation(equation)
    if len(shapes) != len(terms):
        raise op_error(_EIN, f"Expected {len(terms)} inputs but got: {len(shapes)}", inputs)
    sizes, ellipses = {}, []
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        named = len(term) - (ELLIPSIS in term)
        if not shape._rank_known:
            if ELLIPSIS in term:
                ellipses.append(None)
            for s in term:
                if s != ELLIPSIS:
                    sizes.setdefault(s, None)
            continue
        rank = len(shape)
        if ELLIPSIS not in term and rank != named:
            raise op_error(_EIN, f"Expected input {i} to have rank {named} but got: {rank} "
                                 f"(equation {equation!r})", inputs)
        if rank < named:
            raise op_error(_EIN, f"Expected input {i} to have rank at least {named} but got: "
                                 f"{rank} (equation {equation!r})", inputs)
        extra = rank - named
        axis = 0
        for s in term:
            if s == ELLIPSIS:
                ellipses.append(TensorShape(shape[axis:axis + extra]))
                axis += extra
                continue
            d, known = shape[axis], sizes.get(s)
            if d is not None and known is not None and d != known:
                raise op_error(_EIN, f"Expected dimension {known} at axis {axis} of the input "
                                     f"shaped {list(shape)} but got dimension {d}", inputs)
            if known is None:
                sizes[s] = d
            axis += 1
    if any(e is None for e in ellipses):
        broadcast = None
    else:
        broadcast = broadcast_shapes(_EIN, *ellipses) if ellipses else TensorShape([])
        if len(broadcast) and ELLIPSIS not in output:
            raise op_error(_EIN, f"Output contains {len(broadcast)} broadcasting dimension(s) "
                                 "but no ellipsis (...) was found in the output subscripts.",
                           inputs)
    if broadcast is None and ELLIPSIS in output:
        return UNKNOWN_SHAPE
    dims = []
    for s in output:
        dims.extend(broadcast if s == ELLIPSIS else [sizes[s]])
    return TensorShape(dims)


def _einsum_infer(*inputs, equation):
    return TensorSpec(_einsum_shape(equation, [x.shape for x in inputs], inputs),
                      inputs[0].dtype)


def _einsum_kernel(xp, *arrays, equation):
    # numpy would broadcast a size-1 labelled axis; TensorFlow refuses, so check first.
    _einsum_shape(equation, [TensorShape(a.shape) for a in arrays])
    with quiet():  # np.einsum's Python code signals out of eager's reach (base.ieee)
        out = xp.einsum(parse_equation(equation)[2], *arrays, optimize=len(arrays) > 1)
    return xp.asarray(out).astype(arrays[0].dtype, copy=False)


EINSUM = register_op(_EIN, _einsum_kernel, _einsum_infer,
                     dtypes=frozenset({_dt.float16, _dt.float32, _dt.float64, _dt.int32,
                                       _dt.int64, _dt.complex64, _dt.complex128}))
EINSUM.no_kernel_dtypes = _dt.ALL - EINSUM.dtypes  # TF's Einsum takes any T: NotFoundError


def einsum(equation, *inputs, **kwargs):
    """≈ `tf.einsum`: Einstein summation, e.g. `einsum('bij,bjk->bik', x, y)`.

    Labels are letters; '...' stands for broadcast axes (numpy/TF broadcasting between operands);
    without '->' the output is the labels used once, sorted, after the broadcast axes. A label's
    sizes must agree exactly (TF's rule: no size-1 broadcasting of labelled axes). Malformed
    equations and a wrong operand count are ValueErrors, as in TF's Python layer; shape
    mismatches are InvalidArgumentErrors naming the shapes.
    """
    kwargs.pop("name", None)
    optimize = kwargs.pop("optimize", "greedy")
    if kwargs:
        raise TypeError(f"{_EIN}: invalid keyword arguments: {sorted(kwargs)}.")
    if optimize not in ("greedy", "optimal", "auto", True, False):
        raise ValueError(f"{_EIN}: unknown optimize value {optimize!r}.")
    if not isinstance(equation, str):
        raise TypeError(f"{_EIN}: equation must be a string, got {type(equation).__name__}.")
    terms, _, _ = parse_equation(equation)
    if len(inputs) != len(terms):
        raise ValueError(f'{_EIN}: got {len(inputs)} inputs for equation "{equation}", '
                         f"expecting {len(terms)}.")
    tensors = same_type(EINSUM, *inputs)
    _einsum_infer(*tensors, equation=equation)  # shape errors before any work
    return execute(EINSUM, tuple(tensors), {"equation": equation.replace(" ", "")})
