"""Python builtins called from converted code, on tensors: TensorFlow's AutoGraph overloads.

`converted_call` looks a callee up in `OVERLOADS` (by identity) before anything else, so
`len(x)` in converted code is `len_(x)`. Each overload does what the builtin does for Python
values and TensorFlow's conversion for tensors:

* `len_`: the static first dimension when known, else `eager.shape(x)[0]`; a TensorArray-like
  object's `size()`; a scalar is TensorFlow's ValueError;
* `range_`: `eager.range` with TensorFlow's clamping (`range(n)` of a negative `n` is empty);
  a traced bound `eager.range` cannot build (its size is known only when the function runs)
  gives a `TensorRange`, which a converted `for` iterates as a loop op. The iterable of a
  converted `for` is `loop_range` instead (see `calls.Caller.iterable`): a traced bound gives
  the `TensorRange` of the bounds at once, since the loop runs over them and builds no Range
  op (nor the clamp, a loop over an empty range running zero times either way);
* `int_`, `float_`, `abs_`: `eager.cast` to int32 / float32, `eager.abs`;
* `enumerate_`, `zip_`: on traced tensors, iterables that a converted `for` runs as one loop op
  over the first dimension (TensorFlow does this for datasets; for tensors it refuses);
  anywhere else, Python's;
* `print_` (only with `Feature.BUILTIN_FUNCTIONS`, as in TensorFlow): `eager.print` to
  `sys.stdout` when an argument is a traced tensor, so it prints on every call.
"""

from __future__ import annotations

import builtins
import sys

from ...base.dtypes import float32 as _float32, int32 as _int32
from ...base.traceback_filter import filter_traceback
from ...core.shapes import UnknownDimensionError
from ...core.tensor_conversion import register_tensor_conversion_function
from ...graph.symbolic import SymbolicTensor
from ...ops.array_ops import range as _eager_range, shape as _shape
from ...ops.creation_ops import RANGE_DTYPES
from ...ops.logging_ops import print as _eager_print
from ...ops.math_ops import abs as _abs, cast as _cast, maximum as _maximum
from ...ops.math_ops import minimum as _minimum
from ...tensor import Tensor

__all__ = ["OVERLOADS", "TensorRange", "len_", "range_", "tensor_range", "loop_range", "int_",
           "float_", "abs_", "enumerate_", "zip_", "print_", "is_tensor_array_like"]

_UNSPECIFIED = object()


def is_tensor_array_like(value) -> bool:
    """Whether `value` is iterated as a TensorArray: it has `size()` and `read(index)` methods
    and is not a tensor (duck typing, so any TensorArray implementation plugs in)."""
    return (not isinstance(value, Tensor) and callable(getattr(value, "read", None))
            and callable(getattr(value, "size", None)))


# -- len ---------------------------------------------------------------------------------------
def len_(s):
    """`len(s)`; see the module doc."""
    if isinstance(s, Tensor):
        shape = s.shape
        if shape.rank == 0:
            raise ValueError(f"len requires a non-scalar tensor, got one of shape {shape}")
        if shape.rank is not None and shape[0] is not None:
            return shape[0]
        return _shape(s)[0]
    if is_tensor_array_like(s):
        return s.size()
    return len(s)


# -- range -------------------------------------------------------------------------------------
class TensorRange:
    """`range(start, limit, delta)` with a traced bound, not yet a tensor: `eager.range` needs
    its size when the function is traced. A converted `for` loops over it with a loop op (as
    TensorFlow's AutoGraph elides the Range op of `for i in tf.range(n)`); used as a tensor,
    it becomes `eager.range(start, limit, delta)`, with Python's empty range where the limit
    is below the start when `clamped` (the builtin `range`; TensorFlow clamps it too)."""

    __slots__ = ("start", "limit", "delta", "clamped")

    def __init__(self, start, limit, delta, clamped=False):
        self.start, self.limit, self.delta, self.clamped = start, limit, delta, clamped

    def __iter__(self):
        raise TypeError(f"Cannot iterate over {self!r} in Python: its length is known only when "
                        "the function runs. Iterate it in a converted `for` statement (inside "
                        "eager.function with autograph=True).")

    def __repr__(self):
        return f"<range of a traced size: {self.start!r}, {self.limit!r}, {self.delta!r}>"


def _range_to_tensor(value, dtype=None, name=None, as_ref=False):
    limit = _maximum(value.start, value.limit) if value.clamped else value.limit
    return _eager_range(value.start, limit, value.delta, dtype=dtype)


register_tensor_conversion_function(TensorRange, _range_to_tensor)

def tensor_range(start, limit=None, delta=1, dtype=None, name="range", clamped=False):
    """`eager.range(...)`, or a `TensorRange` when a traced argument makes its size unknown
    until the function runs."""
    try:
        if clamped:
            lower = 0 if limit is None else start
            upper = start if limit is None else limit
            return _eager_range(lower, _maximum(lower, upper), delta, dtype=dtype, name=name)
        return _eager_range(start, limit, delta, dtype=dtype, name=name)
    except UnknownDimensionError:
        # A traced bound whose value the trace cannot determine (a traced bound it can, such
        # as a static size, makes a Range op above).
        if dtype is not None or not any(isinstance(v, SymbolicTensor)
                                        for v in (start, limit, delta)):
            raise
    if limit is None:
        start, limit = 0, start
    return TensorRange(start, limit, delta, clamped)


def range_(start_or_stop, stop=_UNSPECIFIED, step=_UNSPECIFIED):
    """`range(...)`; see the module doc."""
    if not any(isinstance(v, Tensor) for v in (start_or_stop, stop, step)):
        if step is not _UNSPECIFIED:
            return range(start_or_stop, stop, step)
        if stop is not _UNSPECIFIED:
            return range(start_or_stop, stop)
        return range(start_or_stop)
    if step is not _UNSPECIFIED:
        return tensor_range(start_or_stop, stop, step)
    if stop is not _UNSPECIFIED:
        return tensor_range(start_or_stop, stop, clamped=True)
    return tensor_range(start_or_stop, clamped=True)


def loop_range(start_or_stop, stop=_UNSPECIFIED, step=_UNSPECIFIED):
    """`range(...)` or `eager.range(...)` as the iterable of a converted `for`: the
    `TensorRange` of its bounds when a traced bound makes the loop a loop op, or None when
    `range_` / `tensor_range` must build it (no traced bound, or bounds the range would
    convert or refuse: the loop then iterates what they make, with their errors).

    The bounds are taken as they are only where the Range op's would be the same values: Python
    ints of int32 and scalar tensors of one range dtype, and a Python int step other than 0, so
    the loop's iterate has the dtype and values the range would have had."""
    if stop is _UNSPECIFIED:
        start, limit = 0, start_or_stop
    else:
        start, limit = start_or_stop, stop
    delta = 1 if step is _UNSPECIFIED else step
    if delta.__class__ is not int or not delta or not -2**31 <= delta < 2**31:
        return None
    dtype, traced = None, False
    for bound in (start, limit):
        if bound.__class__ is int:
            if not -2**31 <= bound < 2**31:
                return None
        elif isinstance(bound, Tensor):
            if bound.dtype not in RANGE_DTYPES or bound.shape.rank != 0 or \
                    (dtype is not None and bound.dtype != dtype):
                return None
            dtype = bound.dtype
            traced = traced or isinstance(bound, SymbolicTensor)
        else:
            return None
    return TensorRange(start, limit, delta) if traced else None


# -- numbers -----------------------------------------------------------------------------------
def int_(x=0, base=_UNSPECIFIED):
    """`int(x)`: a tensor is cast to int32."""
    if isinstance(x, Tensor):
        if base not in (10, _UNSPECIFIED):
            raise NotImplementedError(f"base {base} not supported for int")
        return _cast(x, _int32)
    if base is _UNSPECIFIED:
        return int(x)
    return int(x, base)


def float_(x=0):
    """`float(x)`: a tensor is cast to float32."""
    if isinstance(x, Tensor):
        return _cast(x, _float32)
    return float(x)


def abs_(x):
    """`abs(x)`: `eager.abs` for a tensor."""
    if isinstance(x, Tensor):
        return _abs(x)
    return abs(x)


# -- iteration ---------------------------------------------------------------------------------
class _StagedIterable:
    """Base of the iterables a converted `for` runs as one loop op over a traced first
    dimension; iterated by Python, they behave as the builtin they stand for."""

    __slots__ = ()

    def __eager_for_loop__(self, loop):
        loop.run_indexed(self._length(), self._element)


class EnumeratedTensor(_StagedIterable):
    """`enumerate(tensor, start)` of a traced tensor."""

    __slots__ = ("tensor", "start")

    def __init__(self, tensor, start):
        self.tensor, self.start = tensor, start

    def _length(self):
        return len_(self.tensor)

    def _element(self, i):
        return (i + self.start, _element_of(self.tensor, i))

    def __iter__(self):
        return iter(enumerate(self.tensor, self.start))


class ZippedTensors(_StagedIterable):
    """`zip(*tensors)` of traced tensors: as long as the shortest."""

    __slots__ = ("tensors",)

    def __init__(self, tensors):
        self.tensors = tensors

    def _length(self):
        lengths = [len_(t) for t in self.tensors]
        shortest = lengths[0]
        for n in lengths[1:]:
            if isinstance(shortest, int) and isinstance(n, int):
                shortest = min(shortest, n)
            else:
                shortest = _minimum(shortest, n)
        return shortest

    def _element(self, i):
        return tuple(_element_of(t, i) for t in self.tensors)

    def __iter__(self):
        return iter(zip(*self.tensors))


def _element_of(iterable, i):
    """Element `i` of a tensor (its first dimension) or a TensorArray-like object."""
    if isinstance(iterable, Tensor):
        return iterable[i]
    return iterable.read(i)


def enumerate_(s, start=0):
    """`enumerate(s, start)`; see the module doc."""
    if isinstance(s, SymbolicTensor):
        return EnumeratedTensor(s, start)
    return enumerate(s, start)


def zip_(*iterables, strict=False):
    """`zip(*iterables)`; see the module doc."""
    if iterables and all(isinstance(t, SymbolicTensor) for t in iterables):
        return ZippedTensors(iterables)
    if strict:
        return zip(*iterables, strict=True)
    return zip(*iterables)


# -- print -------------------------------------------------------------------------------------
def _has_traced_tensor(values) -> bool:
    for v in values:
        if isinstance(v, SymbolicTensor):
            return True
        if isinstance(v, (list, tuple)) and _has_traced_tensor(v):
            return True
        if isinstance(v, dict) and _has_traced_tensor(list(v.values())):
            return True
    return False


def print_(*objects, sep=" ", end="\n", file=None, flush=False):
    """`print(...)`; see the module doc."""
    if not _has_traced_tensor(objects):
        return builtins.print(*objects, sep=sep, end=end, file=file, flush=flush)
    return _eager_print(*objects, sep=" " if sep is None else sep,
                        end="\n" if end is None else end,
                        output_stream=sys.stdout if file is None else file)


#: id(builtin) -> (builtin, overload): what `converted_call` calls instead of the builtin.
#: (`print` is converted only with Feature.BUILTIN_FUNCTIONS; see `eager.autograph.passes.calls`.)
OVERLOADS = {id(f): (f, g) for f, g in (
    (len, len_), (range, range_), (int, int_), (float, float_), (abs, abs_),
    (enumerate, enumerate_), (zip, zip_), (print, print_), (_eager_range, tensor_range),
    # `eager.range` as users reach it: the public wrapper that filters tracebacks
    (filter_traceback(_eager_range), tensor_range))}
