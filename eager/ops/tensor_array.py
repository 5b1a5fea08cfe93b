"""`eager.TensorArray`: TensorFlow 2's TensorArray, a list of tensors carried by a TensorList.

A TensorArray's state is one tensor, its `flow`: a TensorList (`eager.ops.list_ops`), and every
method is list ops on it (write: TensorListSetItem, read: GetItem, stack, gather, scatter,
split, concat, unstack: FromTensor, size: Length), as in TensorFlow's control-flow-v2
TensorArray. Tracing, `while_loop` and `cond` (which carry a TensorArray by its flow, see
`eager.control_flow.api`) and gradients (the list ops' rules, `eager.ops.list_grad`) therefore
need nothing of their own.

Two behaviours, as in TensorFlow 2.21, chosen when the TensorArray is made:

* **Eager** (made while executing eagerly, without a variant `flow`): TensorFlow's eager
  TensorArray, a mutable Python list. `write`, `unstack`, `scatter`, `split` change the array
  itself and return it; indices are checked in Python against the current size
  (`OutOfRangeError`), a `dynamic_size` array grows on a write past its end; `clear_after_read`
  (default True) empties a slot when it is read, so a second read of it is an
  `InvalidArgumentError` and `stack`/`gather`/`concat` see zeros there; an unwritten slot reads
  as zeros of the element shape (a `ValueError` when that is not fully known); `close()` empties
  the array. The Python bookkeeping (size, which slots hold a value) lives here, so no method
  waits for a device.
* **Functional** (made while tracing, or from a variant `flow`): TensorFlow's graph
  TensorArray. Every write returns a new TensorArray whose flow is the new list (use it),
  `clear_after_read` is ignored, indices are checked by the ops when they run
  (`InvalidArgumentError`), `stack` checks the static size, and `close()` does nothing. The
  element shape is one cell shared by every TensorArray derived from one another (through
  writes, loops and branches), as in TensorFlow, so a write anywhere in a loop body informs and
  constrains the reads after the loop. An eager TensorArray used inside a trace (a function's
  argument, or captured) behaves functionally there: its writes return new TensorArrays and
  leave it unchanged (TensorFlow's eager array would change at trace time, once).

Element shapes: `element_shape` (None: unknown) is merged with every written value's shape when
`infer_shape` (the default); a value whose shape does not fit is a `ValueError` before any op
runs.

Deviations from TensorFlow (2.21), each where TensorFlow's eager TensorArray skips a check its
graph TensorArray makes, or gives a wrong result: eagerly, `unstack`, `scatter` and `split`
check dtypes and element shapes as `write` does (TensorFlow's eager array accepts any, and
fails later or converts silently); `scatter` with more indices than rows is an error (TensorFlow
eager ignores the extra indices); `flow` is the TensorList in both behaviours (TensorFlow's
eager array has a dummy int32 flow); gradients of an index gathered or scattered twice are
right in traced code too (TensorFlow's graph rules drop some). Returned from an
`eager.function`, a TensorArray becomes its flow tensor, as in TensorFlow.
"""

from __future__ import annotations

import operator

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError, OutOfRangeError
from ..base.tensor_shape import TensorShape, as_shape
from ..core.context import executing_eagerly
from ..core.shapes import trace_time_value
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import Tensor
from . import list_bulk_ops as _bulk
from . import list_ops as _lists
from .array_ops import identity as _identity
from .creation_ops import zeros as _zeros
from .math_ops import cast as _cast

__all__ = ["TensorArray", "TensorArraySpec", "build_ta_with_new_flow"]

_int32, _int64, _variant = _dt.int32, _dt.int64, _dt.variant


class TensorArray:
    """≈ `tf.TensorArray(dtype, size=None, dynamic_size=None, clear_after_read=None,
    tensor_array_name=None, handle=None, flow=None, infer_shape=True, element_shape=None,
    colocate_with_first_write_call=True, name=None)`: a list of tensors of one dtype that
    `while_loop`s write and read by index (see the module doc for its two behaviours).

    `size` (an int or int32 scalar tensor) is required unless a `flow` (a TensorList variant
    tensor) is given; `dynamic_size` lets writes grow the array past it. `tensor_array_name`,
    `colocate_with_first_write_call` and `name` are accepted and have no effect; `handle` is not
    supported (TensorFlow 2 has none either)."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        del tensor_array_name, colocate_with_first_write_call, name
        self._dtype = _dt.as_dtype(dtype)
        self._infer_shape = infer_shape
        self._dynamic_size = dynamic_size
        self._element_shape = [as_shape(element_shape)]
        flow_is_list = isinstance(flow, Tensor) and flow.dtype is _variant
        self._eager = executing_eagerly() and not flow_is_list
        if self._eager:
            if handle is not None:
                raise ValueError("TensorArray handles are not supported when eager execution "
                                 "is enabled.")
            if size is None:
                raise ValueError("Size must be declared for TensorArrays when eager execution "
                                 "is enabled.")
            n = max(operator.index(size.numpy() if isinstance(size, Tensor) else size), 0)
            self._size = None
            self._length = n  # the array's size, kept here: no method waits for a device
            self._written = set()  # slots holding a value (TensorFlow: not None)
            self._read_before = set()  # slots read once (TensorFlow's previously read indices)
            self._stale = set()  # written, read and cleared: the list still holds the value
            self._clear_after_read = True if clear_after_read is None else clear_after_read
            self._flow = _lists.tensor_list_reserve(element_shape, n, self._dtype)
            return
        if handle is not None:
            raise ValueError("TensorArray handles are not supported: an eager.TensorArray is "
                             "carried by its flow (a TensorList), pass `flow` instead.")
        if flow is not None and not flow_is_list:
            raise TypeError(f"Expected `flow` to be a variant tensor, but received "
                            f"`{getattr(flow, 'dtype', type(flow).__name__)}` instead.")
        if flow is None and size is None:
            raise ValueError("Argument `size` must be provided if argument `flow` is not "
                             "provided.")
        if flow is not None and size is not None:
            raise ValueError("Cannot provide both `flow` and `size` arguments at the same time.")
        if flow is not None and element_shape is not None:
            raise ValueError("Cannot provide both `flow` and `element_shape` arguments at the "
                             "same time.")
        self._size = size
        self._flow = flow if flow is not None else \
            _lists.tensor_list_reserve(element_shape, size, self._dtype)

    # -- properties -----------------------------------------------------------------------------
    @property
    def flow(self):
        """The TensorList (a variant scalar tensor) holding the elements: what loops carry."""
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def handle(self):
        """None: a TensorList-backed TensorArray has no handle (TensorFlow 2's neither)."""
        return None

    @property
    def element_shape(self) -> TensorShape:
        """The elements' (partial) shape, as given and refined by the writes so far."""
        return self._element_shape[0]

    @property
    def dynamic_size(self):
        """Whether writes may grow the array (eagerly a bool; traced the value given)."""
        return bool(self._dynamic_size) if self._eager else self._dynamic_size

    def _mutable(self) -> bool:
        """Whether this call has the eager behaviour (module doc)."""
        return self._eager and executing_eagerly()

    # -- checks shared by the writes --------------------------------------------------------------
    def _value(self, method, value):
        """`value` as a tensor of this array's dtype (Python values are converted to it)."""
        value = convert_to_tensor(value, dtype_hint=self._dtype)
        if value.dtype is not self._dtype:
            raise InvalidArgumentError(
                None, "TensorArray", f"TensorArray.{method}: TensorArray dtype is "
                f"{self._dtype.name} but Op is trying to write dtype {value.dtype.name}")
        return value

    def _merge_shape(self, method, shape):
        """Checks an element's `shape` against the element shape and, with `infer_shape`,
        refines the element shape with it (TensorFlow's words for each behaviour)."""
        shape = as_shape(shape)
        known = self.element_shape
        if not known.is_compatible_with(shape):
            if self._mutable():
                raise ValueError(f"TensorArray.{method}: Incompatible shape for value ({shape}), "
                                 f"expected ({known})")
            raise ValueError(f"TensorArray.{method}: Inconsistent shapes: saw {shape} but "
                             f"expected {known}")
        if self._infer_shape:
            self._element_shape[0] = known.merge_with(shape)

    def _derived(self, flow) -> "TensorArray":
        """The functional result of a method: a TensorArray on `flow` sharing this one's
        element-shape cell."""
        return build_ta_with_new_flow(self, flow)

    # -- the eager behaviour's bookkeeping --------------------------------------------------------
    def _eager_index(self, method, index, verb) -> int:
        if isinstance(index, Tensor):
            if not index.dtype.is_integer or index.shape.rank != 0:
                raise TypeError(f"TensorArray.{method}: the index must be an integer scalar, "
                                f"got a {index.dtype.name} tensor of shape {index.shape}.")
            index = index.numpy()
        try:
            i = operator.index(index)
        except TypeError:
            raise TypeError(f"TensorArray.{method}: TensorArray indices must be integers, not "
                            f"{type(index).__name__}.") from None
        if i < 0:
            raise OutOfRangeError(None, "TensorArray", f"TensorArray.{method}: {verb} negative "
                                  f"indices (index {i}) is not allowed.")
        return i

    def _zeros_allowed(self, method, indices):
        """Raises TensorFlow's ValueError when one of `indices` holds no value and the element
        shape is too vague for its zeros."""
        shape = self.element_shape
        if not shape.is_fully_defined() and any(i not in self._written for i in indices):
            missing = next(i for i in indices if i not in self._written)
            raise ValueError(f"TensorArray.{method}: index {missing} was never written (or was "
                             f"cleared by a read), and its zeros need a fully defined element "
                             f"shape, not {shape}: write it first, or give the TensorArray an "
                             f"element_shape. (TensorFlow: Cannot convert a partially known "
                             f"TensorShape {shape} to a Tensor.)")

    def _fill_read(self, method, indices):
        """Before `indices` are read together (stack, gather, concat): slots emptied by reads
        become zeros in the list too (TensorFlow fills them with zeros, and they stay filled)."""
        self._zeros_allowed(method, indices)
        stale = self._stale.intersection(indices)
        if stale:
            zeros = _zeros(self.element_shape.as_list(), self._dtype)
            for i in sorted(stale):
                self._flow = _lists.tensor_list_set_item(self._flow, i, zeros)
            self._stale -= stale
        self._written.update(indices)

    def _rewritten(self, length):
        """After unstack/split replaced every element."""
        self._length = length
        self._written = set(range(length))
        self._stale = set()

    # -- reading ----------------------------------------------------------------------------------
    def read(self, index, name=None):
        """The element at `index` (an int32 scalar). Eagerly, with `clear_after_read`, reading
        empties the slot."""
        if not self._mutable():
            return _lists.tensor_list_get_item(self._flow, _traced_index(index, "read"),
                                               self._dtype, self.element_shape)
        i = self._eager_index("read", index, "Reading from")
        if i >= self._length:
            raise OutOfRangeError(None, "TensorArray", f"TensorArray.read: Tried to read from "
                                  f"index {i} but array size is: {self._length}")
        if i not in self._written:
            if i in self._read_before:
                raise InvalidArgumentError(
                    None, "TensorArray", f"TensorArray.read: Could not read index {i} twice "
                    f"because it was cleared after a previous read (perhaps try setting "
                    f"clear_after_read = false?)")
            self._zeros_allowed("read", (i,))
        value = _lists.tensor_list_get_item(self._flow, i, self._dtype, self.element_shape)
        if self._clear_after_read:
            if i in self._written:
                self._written.discard(i)
                self._stale.add(i)
            self._read_before.add(i)
        else:
            self._written.add(i)
        return value

    def stack(self, name=None):
        """All elements stacked along a new axis 0 (unwritten ones as zeros)."""
        if not self._mutable():
            size = -1 if self._dynamic_size else _static_int(self._size)
            return _lists.tensor_list_stack(self._flow, self._dtype,
                                            -1 if size is None else size, self.element_shape)
        n = self._length
        if n == 0 and not self.element_shape.is_fully_defined():
            return _zeros([0], self._dtype)  # TensorFlow stacks an empty Python list
        self._fill_read("stack", range(n))
        return _lists.tensor_list_stack(self._flow, self._dtype, -1, self.element_shape)

    def gather(self, indices, name=None):
        """The elements at `indices` (a vector) stacked along a new axis 0."""
        if not self._mutable():
            return _bulk.tensor_list_gather(self._flow, _traced_indices(indices), self._dtype,
                                            self.element_shape)
        wanted = _eager_vector("gather", indices)
        n = self._length
        picked = []
        for i in wanted:
            if not -n <= i < n:
                raise IndexError(f"TensorArray.gather: index {i} is out of range for a "
                                 f"TensorArray of size {n} (list index out of range).")
            picked.append(i % n)  # a Python list's negative indices, as TensorFlow's
        if not picked:
            shape = self.element_shape
            return _zeros([0] + (shape.as_list() if shape.is_fully_defined() else []),
                          self._dtype)
        self._fill_read("gather", picked)
        return _bulk.tensor_list_gather(self._flow, np.asarray(picked, np.int32), self._dtype,
                                        self.element_shape)

    def concat(self, name=None):
        """All elements concatenated along axis 0 (their other dimensions must agree)."""
        shape = self.element_shape
        element_shape = None if shape.rank is None else [None] + shape.as_list()[1:]
        if self._mutable():
            if self._length == 0:
                raise InvalidArgumentError(
                    None, "TensorArray", "TensorArray.concat: an empty TensorArray has no "
                    "elements to concatenate (TensorFlow's eager TensorArray concatenates a "
                    "list of 0 tensors, which ConcatV2 refuses).")
            self._fill_read("concat", range(self._length))
        value, _ = _bulk.tensor_list_concat(self._flow, self._dtype, element_shape)
        return value

    def size(self, name=None):
        """The number of elements, an int32 scalar."""
        if self._mutable():
            return convert_to_tensor(self._length, _int32)
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, _int32)
        return _lists.tensor_list_length(self._flow)

    # -- writing ----------------------------------------------------------------------------------
    def write(self, index, value, name=None):
        """Writes `value` at `index`; returns the TensorArray to use from now on (eagerly this
        one, changed; traced a new one)."""
        value = self._value("write", value)
        self._merge_shape("write", value.shape)
        if not self._mutable():
            flow = _lists.tensor_list_set_item(self._flow, _traced_index(index, "write"), value,
                                               resize_if_index_out_of_bounds=bool(
                                                   self._dynamic_size))
            return self._derived(flow)
        i = self._eager_index("write", index, "Writing to")
        self._check_room("write", i)
        n = self._length
        if i >= n:  # grow: unset slots up to i, then append (O(1) on the list's storage)
            flow = self._flow if i == n else _lists.tensor_list_resize(self._flow, i)
            self._flow = _lists.tensor_list_push_back(flow, value)
            self._length = i + 1
        else:
            self._flow = _lists.tensor_list_set_item(self._flow, i, value)
        self._written.add(i)
        self._stale.discard(i)
        return self

    def _check_room(self, method, i):
        if i >= self._length and not self._dynamic_size:
            raise OutOfRangeError(None, "TensorArray", f"TensorArray.{method}: Tried to write to "
                                  f"index {i} but array is not resizeable and size is: "
                                  f"{self._length}")

    def unstack(self, value, name=None):
        """Writes the rows of `value` (its slices along axis 0) as the elements."""
        value = self._value("unstack", value)
        if value.shape.rank == 0:
            raise ValueError("TensorArray.unstack: Argument `axis` = 0 not in range [0, 0): the "
                             "value must be at least a vector.")
        rows = value.shape[1:] if value.shape.rank is not None else TensorShape(None)
        self._merge_shape("unstack", rows)
        if not self._mutable():
            return self._derived(_lists.tensor_list_from_tensor(value, rows))
        n = value.shape[0]
        if n > self._length and not self._dynamic_size:
            raise ValueError(f"TensorArray.unstack: Cannot unstack {n} tensors into a "
                             f"TensorArray of static size {self._length}")
        self._flow = _lists.tensor_list_from_tensor(value, self.element_shape)
        self._rewritten(n)
        return self

    def scatter(self, indices, value, name=None):
        """Writes row k of `value` at `indices[k]` (the last row wins for an index given
        twice)."""
        value = self._value("scatter", value)
        if value.shape.rank == 0:
            raise InvalidArgumentError(None, "TensorArray", "TensorArray.scatter: Tensor must be "
                                       "at least a vector, but saw shape: []")
        if value.shape.rank is not None:
            self._merge_shape("scatter", value.shape[1:])
        if not self._mutable():
            return self._derived(_bulk.tensor_list_scatter(value, _traced_indices(indices),
                                                           input_handle=self._flow))
        wanted = _eager_vector("scatter", indices)
        for i in wanted:
            self._eager_index("scatter", i, "Writing to")
            self._check_room("scatter", i)
        self._flow = _bulk.tensor_list_scatter(value, np.asarray(wanted, np.int32),
                                               input_handle=self._flow)
        self._length = max([self._length] + [i + 1 for i in wanted])
        self._written.update(wanted)
        self._stale.difference_update(wanted)
        return self

    def split(self, value, lengths, name=None):
        """Writes consecutive slices of `value` along axis 0, `lengths[i]` rows as element i."""
        value = self._value("split", value)
        lengths = _cast(convert_to_tensor(lengths), _int64)
        known = _known_values(lengths)
        if value.shape.rank is not None and known is not None and known.ndim == 1 and \
                known.size and (known == known[0]).all():
            self._merge_shape("split", TensorShape([int(known[0])]).concatenate(value.shape[1:]))
        if not self._mutable():
            return self._derived(_bulk.tensor_list_split(value, self.element_shape, lengths))
        if known.ndim != 1:
            raise InvalidArgumentError(None, "TensorArray", f"TensorArray.split: Expected "
                                       f"lengths to be a vector, received shape: "
                                       f"{list(known.shape)}")
        if value.shape.rank == 0:
            raise InvalidArgumentError(None, "TensorArray", "TensorArray.split: Expected value to "
                                       "be at least a vector, but received shape: []")
        if int(known.sum()) != value.shape[0]:
            raise InvalidArgumentError(None, "TensorArray", f"TensorArray.split: Expected sum of "
                                       f"lengths to be equal to values.shape[0], but sum of "
                                       f"lengths is {int(known.sum())} and value's shape is: "
                                       f"{value.shape.as_list()}")
        if not self._dynamic_size and known.size != self._length:
            raise InvalidArgumentError(None, "TensorArray", f"TensorArray.split: TensorArray's "
                                       f"size is not equal to the size of lengths "
                                       f"({self._length} vs. {known.size}), and the TensorArray "
                                       f"is not marked as dynamically resizeable.")
        self._flow = _bulk.tensor_list_split(value, self.element_shape, lengths)
        self._rewritten(int(known.size))
        return self

    # -- the rest ----------------------------------------------------------------------------------
    def identity(self):
        """A TensorArray with the same content: eagerly this one, traced one on an Identity of
        the flow."""
        if self._mutable():
            return self
        return self._derived(_identity(self._flow))

    def grad(self, source, flow=None, name=None):
        if self._eager:
            raise NotImplementedError(
                "TensorArray.grad is not supported when executing eagerly; eager's gradient "
                "implementation does not use/need this function to compute gradients of "
                "operations that use TensorArrays.")
        raise NotImplementedError("TensorArray.grad is not supported: gradients flow through "
                                  "the TensorArray's ops (take them with a GradientTape).")

    def close(self, name=None):
        """Eagerly empties the array; traced does nothing (TensorFlow: a NoOp)."""
        if self._mutable():
            self._flow = _lists.tensor_list_reserve(self.element_shape, 0, self._dtype)
            self._rewritten(0)
        return None

    def mark_used(self):
        """Accepted for TensorFlow code that marks a write's result as used; does nothing."""

    def __repr__(self):
        kind = "eager" if self._eager else "functional"
        return (f"<eager.TensorArray {kind} dtype={self._dtype.name} "
                f"element_shape={self.element_shape}>")


def build_ta_with_new_flow(old_ta, flow) -> TensorArray:
    """A functional TensorArray like `old_ta` (dtype, static size, dynamic_size, infer_shape,
    and the element-shape cell, shared) on the TensorList `flow`: how loops and branches give
    a TensorArray back after carrying its flow."""
    ta = TensorArray.__new__(TensorArray)
    ta._dtype = old_ta._dtype
    ta._infer_shape = old_ta._infer_shape
    ta._dynamic_size = old_ta._dynamic_size
    ta._element_shape = old_ta._element_shape
    ta._eager = False
    ta._size = old_ta._length if old_ta._eager and not old_ta._dynamic_size else old_ta._size
    ta._flow = flow
    return ta


class TensorArraySpec:
    """≈ `tf.TensorArraySpec(element_shape=None, dtype=float32, dynamic_size=False,
    infer_shape=True)`: the type of a TensorArray (what two TensorArrays must share to stand
    for one another), as `TensorSpec` is a tensor's."""

    __slots__ = ("_element_shape", "_dtype", "_dynamic_size", "_infer_shape")

    def __init__(self, element_shape=None, dtype=_dt.float32, dynamic_size=False,
                 infer_shape=True):
        self._element_shape = as_shape(element_shape)
        self._dtype = _dt.as_dtype(dtype)
        self._dynamic_size = dynamic_size
        self._infer_shape = infer_shape

    value_type = property(lambda self: TensorArray)
    element_shape = property(lambda self: self._element_shape)
    dtype = property(lambda self: self._dtype)
    dynamic_size = property(lambda self: self._dynamic_size)
    infer_shape = property(lambda self: self._infer_shape)

    @staticmethod
    def from_value(value) -> "TensorArraySpec":
        if not isinstance(value, TensorArray):
            raise TypeError(f"Expected value to be a TensorArray, but got: `{type(value)}`")
        return TensorArraySpec(value.element_shape, value.dtype, value.dynamic_size,
                               value._infer_shape)

    def _key(self):
        shape = self._element_shape
        return (None if shape.rank is None else tuple(shape.as_list()), self._dtype,
                self._dynamic_size, self._infer_shape)

    def __eq__(self, other):
        return isinstance(other, TensorArraySpec) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def is_compatible_with(self, other) -> bool:
        """Whether `other` (a spec or a TensorArray) could be this (infer_shape not compared)."""
        if isinstance(other, TensorArray):
            other = TensorArraySpec.from_value(other)
        return (isinstance(other, TensorArraySpec) and self._dtype == other._dtype and
                self._element_shape.is_compatible_with(other._element_shape) and
                self._dynamic_size == other._dynamic_size)

    def is_subtype_of(self, other) -> bool:
        return (isinstance(other, TensorArraySpec) and self._dtype == other._dtype and
                self._dynamic_size == other._dynamic_size)

    def most_specific_common_supertype(self, others):
        """The spec of the most specific element shape all share, or None if none exists."""
        if not all(isinstance(o, TensorArraySpec) for o in others):
            return None
        if any(o._dtype != self._dtype or o._dynamic_size != self._dynamic_size
               for o in others):
            return None
        shape = self._element_shape
        for o in others:
            shape = _common_shape(shape, o._element_shape)
        return TensorArraySpec(shape, self._dtype, self._dynamic_size,
                               self._infer_shape and all(o._infer_shape for o in others))

    def __repr__(self):
        return (f"TensorArraySpec({self._element_shape!r}, {self._dtype!r}, "
                f"{self._dynamic_size}, {self._infer_shape})")


# -- helpers --------------------------------------------------------------------------------------

def _common_shape(a, b) -> TensorShape:
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


def _static_int(value):
    """`value` (an int or an int tensor) as a Python int when known now, else None."""
    if value is None or isinstance(value, (int, np.integer)):
        return value
    known = _known_values(value)
    return None if known is None or known.ndim != 0 else int(known)


def _known_values(t):
    """The numpy value of tensor `t` when known while tracing (or eagerly), else None."""
    if getattr(t, "is_symbolic", False):
        return trace_time_value(t)
    return np.asarray(t.numpy())


def _traced_index(index, method):
    """An index for the list ops: an int32 scalar tensor (TensorFlow's TypeErrors for others)."""
    if isinstance(index, Tensor):
        if index.dtype is not _int32:
            raise TypeError(f"TensorArray.{method}: Input 'index' of 'TensorListGetItem' Op has "
                            f"type {index.dtype.name} that does not match expected type of "
                            f"int32.")
        return index
    try:
        return convert_to_tensor(operator.index(index), _int32)
    except TypeError:
        raise TypeError(f"TensorArray.{method}: Expected int32 passed to parameter 'index', "
                        f"got {index!r} of type '{type(index).__name__}' instead.") from None


def _traced_indices(indices):
    return indices if isinstance(indices, Tensor) else convert_to_tensor(indices, _int32)


def _eager_vector(method, indices) -> list:
    """Eager indices as Python ints (a vector: TensorFlow's eager array indexes a Python list
    with each)."""
    array = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
    if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
        raise TypeError(f"TensorArray.{method}: indices must be a vector of integers, got "
                        f"{array.tolist()!r}.")
    return [int(i) for i in array]
