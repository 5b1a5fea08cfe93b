"""Shape inference helpers shared by the op library (partial shapes: None is unknown)."""

from __future__ import annotations

import operator

import numpy as np

from .specs import TensorSpec
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from .context import executing_eagerly
from .registry import op_error

__all__ = ["broadcast_shapes", "normalize_axis", "normalize_axes", "reduced_shape", "spec",
           "static_array", "static_int", "static_ints", "static_dims", "check_bools_in_dims",
           "trace_time_value", "UnknownDimensionError", "NONE_TO_TENSOR", "RunTimeShape",
           "known_elements"]


class UnknownDimensionError(TypeError):
    """An op needs, while a function is traced, a size the trace does not know, for an argument
    that has no run-time form (an axis, a tile count, a one-hot depth): a symbolic tensor where
    a constant is required. A TypeError, as TensorFlow raises for static arguments. Sizes that
    do have one (shapes of zeros, fill, reshape, broadcast_to; range's bounds) become inputs
    of the op instead, read when it runs."""


class RunTimeShape(TensorShape):
    """The static shape of a symbolic tensor that leaves dimensions unknown, remembering the
    tensor: gradient rules read it as any shape (the known dims are there), and where they need
    the unknown ones they take `shape(tensor)` when the graph runs (`grad_utils`). Tapes record
    one in place of such a tensor's shape. (A tuple subclass cannot add slots: the tensor is in
    the instance's dict.)"""

    def __new__(cls, tensor):
        self = tuple.__new__(cls, tensor.shape)
        self.tensor = tensor
        return self

    def __reduce__(self):
        return (TensorShape, (tuple(self),))


def known_elements(t):
    """What is known, when an op is created, of the elements of the integer tensor `t` given as
    a size or shape: a tuple with a Python int per known element and None per element known only
    at run time (a scalar is a 1-tuple); None when not even their number is known. An eager
    tensor on the host is its value; a pending one, or one on an accelerator, only its number of
    elements (its value is not read: that would wait, or copy); a symbolic one what the trace
    determines (`graph.partial_value`)."""
    value = getattr(t, "_value", None)
    if isinstance(value, np.ndarray):
        return tuple(value.reshape(-1).tolist())
    partial = getattr(t, "_partial_value", None)
    known = None if partial is None else partial()
    if known is not None:
        return tuple(known.reshape(-1).tolist())
    shape = t.shape
    if not shape.is_fully_defined():
        return None
    return (None,) * shape.num_elements()


def spec(shape, dtype) -> TensorSpec:
    return TensorSpec(shape, dtype)


def _fmt(shape) -> str:
    if not shape._rank_known:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def broadcast_shapes(op_name, *shapes) -> TensorShape:
    """NumPy/TensorFlow broadcasting of partial shapes; InvalidArgumentError when incompatible."""
    first = shapes[0]
    if all(s == first for s in shapes[1:]) and first._rank_known:
        return first
    if any(not s._rank_known for s in shapes):
        return UNKNOWN_SHAPE
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for s in shapes:
        offset = rank - len(s)
        for i, d in enumerate(s):
            j = offset + i
            o = out[j]
            if d == 1:
                continue
            if o == 1:
                out[j] = d
            elif d is None:
                continue  # known o (>1) wins; unknown stays unknown
            elif o is None:
                out[j] = d
            elif o != d:
                raise op_error(op_name, "Incompatible shapes: " +
                               " vs. ".join(_fmt(x) for x in shapes))
    return TensorShape(out)


def trace_time_value(value):
    """The value of a symbolic tensor when the trace determines it (a size computed from static
    shapes and constants: `graph.constant_value`), else None."""
    evaluate = getattr(value, "_constant_value", None)
    return None if evaluate is None else evaluate()


def _unknown_error(op_name, what, value):
    return UnknownDimensionError(
        f"{op_name}: {what} must be known when the function is traced, but {value!r} depends on "
        "a value known only when it runs (an argument's value, a dimension the input signature "
        "leaves as None, a variable or a random draw). Pass it as a Python int, or compute it "
        "from static shapes (`x.shape`) and constants.")


def static_array(op_name, value, what):
    """The numpy value of tensor `value`, an argument the op needs when it is created: an eager
    tensor's value, or a symbolic tensor's when the trace determines it (else an
    UnknownDimensionError saying why not)."""
    if getattr(value, "is_symbolic", False):
        known = trace_time_value(value)
        if known is None:
            raise _unknown_error(op_name, what, value)
        return known
    return np.asarray(value.numpy())


def static_int(op_name, value, what):
    """A Python int from an int, numpy integer or integer scalar tensor (a symbolic one if the
    trace determines its value)."""
    try:
        return operator.index(value)
    except TypeError:
        if getattr(value, "is_symbolic", False):
            known = trace_time_value(value)
            if known is None or known.ndim != 0 or known.dtype.kind not in "iu":
                raise _unknown_error(op_name, what, value) from None
            return int(known)
        cls = UnknownDimensionError if value is None else TypeError
        raise cls(f"{op_name}: {what} must be an integer known when the op is created, "
                  f"got {value!r}.") from None


def static_ints(op_name, value, what) -> tuple:
    """A tuple of Python ints from an int, a sequence, a numpy array or a tensor (a symbolic
    one, or symbolic elements, if the trace determines their values)."""
    if value is None:
        return None
    if hasattr(value, "numpy") and not isinstance(value, (list, tuple)):
        value = static_array(op_name, value, what)
        if value.dtype.kind not in "iu":  # TensorFlow: the op's integer attr rejects it
            raise op_error(op_name, f"{what} must be an integer tensor, got dtype {value.dtype}")
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        if any(isinstance(v, float) for v in value):
            # TensorFlow converts the list to a float tensor, which the op's integer attr
            # rejects: InvalidArgumentError (a lone Python float is a TypeError, as here).
            raise op_error(op_name, f"{what} must hold integers, got {value!r}")
        return tuple(static_int(op_name, v, what) for v in value)
    return (static_int(op_name, value, what),)


_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1

#: TensorFlow's words for converting None to a tensor (a shape argument that is None).
NONE_TO_TENSOR = ("Attempt to convert a value (None) with an unsupported type (<class "
                  "'NoneType'>) to a Tensor.")


#: TensorFlow's words for a list whose elements do not share its first element's kind.
MIXED_TYPES = "Can't convert Python sequence with mixed types to Tensor."

# How an op's shape list reaches TensorFlow's conversion (see `check_bools_in_dims`).
HINTED, STRICT, TENSOR_SHAPE = "hinted", "strict", "tensor_shape"


def check_bools_in_dims(op_name, value, what, conversion=HINTED, _numpy_bool=np.bool_):
    """Raises what TensorFlow's eager conversion raises for the bools in shape list `value`
    (e.g. `[True, 2]`, `[2, np.bool_(True)]`); returns quietly when the list reads as ints, a
    Python bool being 0 or 1 (`[2, False]` is `[2, 0]`).

    TensorFlow takes a list's kind from its first element: after a bool only bools may follow,
    and after an int no numpy bool (a Python bool is an int there). Either mix is its ValueError
    "Can't convert Python sequence with mixed types to Tensor.". A list of bools alone depends
    on how the op converts it (`conversion`):

    - HINTED (reshape, tile, fill, broadcast_to: the shape input has a default int32 type):
      Python bools read as ints; a numpy bool makes a bool tensor, which the op refuses.
    - STRICT (the random ops: no default type): any bools make a bool tensor, refused.
    - TENSOR_SHAPE (zeros, ones: read as a TensorShape first): Python bools are ints anywhere,
      even first (`zeros([True, 2])` is [1, 2]); a numpy bool sends the list to a conversion
      with dtype int32, which mixes as above and refuses bools alone with a TypeError.

    The refused bool tensor is InvalidArgumentError eagerly and TypeError while tracing, as in
    TensorFlow. Raised before any op is made, so the same in every mode."""
    if value.__class__ is not list and value.__class__ is not tuple:
        if not isinstance(value, (list, tuple)):
            return
    for v in value:  # (every reshape passes here: two class tests per element when no bool)
        c = v.__class__
        if c is bool or c is _numpy_bool:
            break
    else:
        return
    kinds = ["p" if v.__class__ is bool else "n" if isinstance(v, np.bool_) else "o"
             for v in value]
    if "n" not in kinds and ("p" not in kinds or conversion == TENSOR_SHAPE):
        return
    if kinds[0] == "o":
        if "n" in kinds:
            raise ValueError(f"{op_name}: {MIXED_TYPES} ({what} {list(value)!r} holds a numpy "
                             "bool after a number; pass ints)")
        return  # Python bools after a number read as ints
    if "o" in kinds:
        raise ValueError(f"{op_name}: {MIXED_TYPES} ({what} {list(value)!r} starts with a "
                         "bool, so every element must be one; pass ints)")
    if conversion == HINTED and "n" not in kinds:
        return
    if conversion == TENSOR_SHAPE:
        raise TypeError(f"{op_name}: Cannot convert {list(value)!r} to EagerTensor of dtype "
                        "int32.")
    message = (f"{what} dtype bool is not in the list of allowed values: int32, int64 ({what} "
               f"{list(value)!r} holds only bools); pass ints")
    if not executing_eagerly():
        raise TypeError(f"{op_name}: {message}.")
    raise op_error(op_name, message)


def static_dims(op_name, value, what, conversion=HINTED) -> tuple:
    """`static_ints` for a shape argument TensorFlow converts to a shape tensor (zeros, ones,
    fill, reshape), with the errors that conversion gives, raised before any op is made, so that
    they are the same eagerly, asynchronously and while tracing: None is a ValueError ("Attempt
    to convert a value (None) ..."), and so is an int beyond int64; bools are read as
    `check_bools_in_dims` says (`conversion`)."""
    if value is None:
        raise ValueError(NONE_TO_TENSOR)
    check_bools_in_dims(op_name, value, what, conversion)
    dims = static_ints(op_name, value, what)
    for d in dims:
        if not _INT64_MIN <= d <= _INT64_MAX:
            raise ValueError("Can't convert Python sequence with out-of-range integer to "
                             "Tensor.")
    return dims


def normalize_axis(op_name, axis, rank) -> int:
    axis = static_int(op_name, axis, "axis")
    if rank is None:
        return axis
    if not -rank <= axis < max(rank, 1) or (rank == 0 and axis not in (0, -1)):
        raise op_error(op_name, f"Invalid axis {axis}: expected a value in [{-rank}, {rank})"
                                f" for an input of rank {rank}")
    return axis % rank if rank else 0


_ALL_AXES = tuple(tuple(range(rank)) for rank in range(9))  # every axis, for small ranks


def normalize_axes(op_name, axis, rank):
    """Sorted non-negative axes for a reduction; None means all. Validates range and duplicates."""
    if axis is None:
        if rank is None:
            return None
        return _ALL_AXES[rank] if rank < len(_ALL_AXES) else tuple(range(rank))
    axes = static_ints(op_name, axis, "axis")
    if rank is None:
        return axes
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise op_error(op_name, f"Invalid reduction dimension ({a} for input with {rank} "
                                    "dimension(s))")
        a %= rank
        if a in out:
            raise op_error(op_name, f"Axes contains duplicate dimension: {a}")
        out.append(a)
    return tuple(sorted(out))


def reduced_shape(shape, axes, keepdims) -> TensorShape:
    if not shape._rank_known:
        return UNKNOWN_SHAPE
    if axes is None:
        axes = tuple(range(len(shape)))
    if keepdims:
        return TensorShape([1 if i in axes else d for i, d in enumerate(shape)])
    return TensorShape([d for i, d in enumerate(shape) if i not in axes])
