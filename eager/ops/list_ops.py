"""TensorList: TensorFlow's list of tensors, a value of dtype `variant`, and the ops on it.

TensorFlow keeps these ops internal (`tensorflow.python.ops.list_ops`); so does eager: the public
functions here have list_ops' names and signatures and are not re-exported at the top level.

A list tensor is an `EagerTensor` of dtype `variant` and shape () whose value is a `TensorList`
(dispatch wraps any kernel output that names its `eager_dtype`). The list's elements are the
element tensors' arrays, shared, never copied (tensors are immutable), or None for a slot that
`tensor_list_reserve` left unset: unset slots read as zeros once their shape is known (from the
list's element_shape, the reading op's `element_shape`, or the set elements), as in TensorFlow.

Storage and in-place reuse. A list value must never change for anyone holding it, yet
`l = push_back(l, x)` in a loop should not copy the list every time (TensorFlow eager does: O(n^2)
for n pushes). A `TensorList` is therefore a *view*: the first `_n` entries of a Python list
(`_items`) that several views may share. Entries below a view's length are never written, so
every view is immutable. A push onto a view whose length is the storage's length appends to the
shared storage (no one else can see the new entry: every other view is at most that long), so a
push loop is O(1) per push, and `l1 = push(l0, a); l2 = push(l0, b)` leaves l1 alone (the second
push finds the storage longer than l0 and copies). When the storage is longer than the view (after
a pop, or a push onto an older view), the entries beyond the view are garbage if no other view
shares the storage; that is decided by reference count, calibrated at import by
`eager.core.buffer_reuse` (site "list storage"): where a storage held by one view cannot be told
apart from a shared one, pushes copy instead. Pops are O(1) views. `set_item` copies the first n
pointers (the kernel cannot know whether anyone still holds the input list: the caller's own
variable does, while it is being rebound), as TensorFlow eager does.

Deviations from TensorFlow (2.21): an index or num_elements must be a scalar (TF accepts any
one-element tensor); `get_item`/`pop_back` with an `element_shape` that the stored item does not
match are an InvalidArgumentError (TF returns the item regardless, which would make shape
inference lie). `set_item` with `resize_if_index_out_of_bounds=True` is two ops, a
`TensorListResize` to the larger of the length and index + 1 and the set, so that only the
(rare) resize keeps its input list alive for a gradient.

Devices. A list's elements are arrays of the list's device (cupy arrays on a GPU). An op that
runs on another device gets a copy of the list there, as any input is copied: dispatch moves
a value that is not an array through its own `copied_to` (`devices.base.transfer`), and a
TensorList copies each element with the target device's `copy_from` (a GPU array cannot hold
Python objects), and the elements of a list of lists in turn: an inner list's elements live on
the device of the list holding it.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from ..base import dtypes as _dt
from ..tensor import Tensor
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..base.tensor_shape import TensorShape, as_shape
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute
from ..core.buffer_reuse import calibrate
from ..core.registry import op_error, register_op
from ..core.shapes import static_array
from .math_ops import add, maximum

__all__ = ["TensorList", "as_list", "empty_tensor_list", "tensor_list_reserve",
           "tensor_list_from_tensor",
           "tensor_list_push_back", "tensor_list_pop_back", "tensor_list_get_item",
           "tensor_list_set_item", "tensor_list_stack", "tensor_list_length",
           "tensor_list_resize", "storage_reuse"]

_variant = _dt.variant
_int32 = _dt.int32


class _ListSpec:
    """What every view of one list shares: element dtype, (partial) element shape, capacity."""

    __slots__ = ("dtype", "shape", "limit", "full")

    def __init__(self, dtype, shape, limit):
        self.dtype = dtype
        self.shape = shape
        self.limit = limit
        # The element shape as a plain tuple when fully known: pushes compare with one `==`.
        self.full = tuple(shape) if shape.is_fully_defined() else None


class TensorList:
    """The value of a list tensor: an immutable view of the first `_n` entries of `_items`
    (element arrays, or None for unset slots), with the list's element dtype, (partial) element
    shape and capacity (max_num_elements, -1: unbounded). See the module doc for why it is a
    view. Kept small (three slots set) because every push and pop makes one; `_copies` is set
    only on a list copied to another device (`copied_to`)."""

    __slots__ = ("_items", "_n", "_spec", "_copies")

    # What dispatch and EagerTensor read from a value: the tensor's dtype and (scalar) shape.
    eager_dtype = dtype = _variant
    shape = ()
    ndim = 0

    def __init__(self, items, n, element_dtype, element_shape, max_num_elements=-1):
        self._items = items
        self._n = n
        self._spec = _ListSpec(element_dtype, as_shape(element_shape), max_num_elements)

    def _view(self, items, n):
        """A list like this one over `items[:n]`. Hot: every push and pop."""
        view = _new_list(TensorList)
        view._items = items
        view._n = n
        view._spec = self._spec
        return view

    @property
    def element_dtype(self):
        return self._spec.dtype

    @property
    def element_shape(self) -> TensorShape:
        return self._spec.shape

    @property
    def max_num_elements(self) -> int:
        return self._spec.limit

    def __len__(self):
        return self._n

    def copied_to(self, target, source):
        """This list on device `target`: the same view over copies of its elements (which live
        on `source`) in `target`'s memory; unset slots stay unset. (`devices.base.transfer`.)
        An element that is itself a list (a list of lists) is copied the same way, element by
        element: its elements live on `source` too, and `copy_from` would pass the list object
        through as a host value, leaving them behind. To a CPU, the elements are read with one
        `to_host_many` (on a GPU each read waits for the device: one read per shape, not one
        per element).

        The copy is kept with this list, per target: the list never changes (a view), and a
        loop whose body reads an element of a list living on another device (a TensorArray
        captured by a `While` on the CPU, read by the GPU ops of its body) would otherwise copy
        the whole list at every iteration."""
        copies = getattr(self, "_copies", None)
        if copies is None:
            copies = self._copies = {}
        copied = copies.get(target)
        if copied is None:
            copied = copies[target] = self._copy_to(target, source)
        return copied

    def _copy_to(self, target, source):
        if target.inline and not source.inline:
            arrays = [item for item in self._items[:self._n]
                      if item is not None and item.__class__ is not TensorList]
            copies = dict(zip(map(id, arrays), source.to_host_many(arrays)))
            copy = lambda item: copies[id(item)]  # noqa: E731
        else:
            copy = lambda item: target.copy_from(item, source)  # noqa: E731
        return self.mapped(lambda item: item.copied_to(target, source)
                           if item.__class__ is TensorList else copy(item))

    def mapped(self, fn):
        """The same view over `fn` of each set element (a device backend moves or unwraps the
        elements with it)."""
        n = self._n
        return self._view([None if item is None else fn(item) for item in self._items[:n]], n)

    def elements(self) -> tuple:
        """The element arrays (None for unset slots), as a tuple: the storage is not exposed."""
        return tuple(self._items[:self._n])

    def __repr__(self):
        return (f"<TensorList of {self._n} {self._spec.dtype.name} elements, element_shape="
                f"{_fmt(self._spec.shape)}>")


_new_list = object.__new__


# -- helpers ------------------------------------------------------------------------------------

def _fmt(shape) -> str:
    shape = as_shape(shape)
    if shape.rank is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _compatible(element_shape, shape) -> bool:
    """Whether an array shape (a tuple) fits a partial element shape. Hot: every push."""
    if not element_shape._rank_known or tuple.__eq__(element_shape, shape):
        return True
    if len(element_shape) != len(shape):
        return False
    for want, got in zip(element_shape, shape):
        if want is not None and want != got:
            return False
    return True


def _merge(op_name, a, b) -> TensorShape:
    try:
        return as_shape(a).merge_with(as_shape(b))
    except ValueError:
        raise op_error(op_name, f"PartialTensorShape: Incompatible shapes during merge: "
                                f"{_fmt(a)} vs. {_fmt(b)}") from None


def as_list(value) -> TensorList:
    """A kernel's list input or a list tensor's value as the TensorList (one wrapped in a 0-d
    object array, as numpy wraps a Python object it is asked to copy, is unwrapped: the
    elements are immutable)."""
    if value.__class__ is TensorList:
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype == object:
        inner = value[()]
        if inner.__class__ is TensorList:
            return inner
    raise TypeError(f"expected a TensorList, got {type(value).__name__}")


_as_list = as_list


def _check_dtype(op_name, want, have):
    if want is not have:
        raise op_error(op_name, f"Invalid data types; op elements {want.name} but list elements "
                                f"{have.name}")


def _zeros(xp, shape, dtype):
    return xp.zeros(tuple(shape), dtype=dtype.dtype)


def _index(op_name, index, n, verb) -> int:
    if index.ndim != 0 or index.dtype != np.int32:
        raise TypeError("the index must be an int32 scalar")  # explained by inference
    i = int(index)
    if i < 0 or i >= n:
        raise op_error(op_name, f"Trying to {verb} element {i} in a list with {n} elements.")
    return i


def _check_item_shape(op_name, element_shape, item):
    if element_shape is not None and not _compatible(as_shape(element_shape), item.shape):
        raise op_error(op_name, f"The list element has shape {_fmt(item.shape)}, incompatible "
                                f"with the requested element_shape {_fmt(element_shape)}")


# -- in-place reuse: the storage a push appends to ----------------------------------------------

_getrefcount = sys.getrefcount
_LOCK = threading.Lock()  # serializes truncating a storage (see _push_storage)


def _push_storage(view, item):
    """The storage of `view` plus `item` at index `view._n`: the shared storage itself when the
    view ends where it ends (O(1)), or when no other view shares it (its entries past the view are
    garbage: dropped, then O(1)); else a copy of the view's entries plus `item`.

    Thread safety without a lock on the common path: an append lands at index n only if the
    storage still ends at n, and `items[n] is item` afterwards says whether this thread's append
    is the one at n; a thread that lost the race copies. Truncation takes the lock, and is only
    done when the storage's reference count says no other view (and no other push in flight,
    which holds the storage in a local) can see entries past n.
    """
    items = view._items
    n = view._n
    if len(items) == n:
        items.append(item)
        if items[n] is item:
            return items
    elif _getrefcount(items) == _SOLE_VIEW:
        with _LOCK:
            if _getrefcount(items) == _SOLE_VIEW:
                del items[n:]
                items.append(item)
                if items[n] is item:
                    return items
    copy = items[:n]
    copy.append(item)
    return copy


def _count_like_push_storage(view, item):
    """Same parameters and locals as `_push_storage` at its reference-count check."""
    items = view._items
    n = view._n
    if len(items) == n:
        pass
    return _getrefcount(items)


def _storage_counts(views):
    """What `_push_storage` counts for a storage that `views` views hold (1: only its own)."""
    view = TensorList([None, None], 1, _dt.float32, None)
    others = [view._view(view._items, 2) for _ in range(views - 1)]  # noqa: F841
    return _count_like_push_storage(view, None)


# Storage held by one view is told from shared storage by its reference count (see
# `eager.core.buffer_reuse`); where calibration fails, pushes after pops copy (pushes at the
# end stay O(1)).
_SOLE_VIEW = calibrate("list storage", lambda: _storage_counts(1), lambda: _storage_counts(2))


def storage_reuse() -> bool:
    """Whether a push may reuse a storage that only its input list holds, past that list's end
    (the calibration succeeded). Appending where the storage ends is always O(1)."""
    return _SOLE_VIEW is not None


# -- kernels ------------------------------------------------------------------------------------

def _empty_kernel(xp, element_dtype, element_shape, max_num_elements):
    return TensorList([], 0, element_dtype, as_shape(element_shape), max_num_elements)


def _reserve_kernel(xp, num_elements, element_dtype, element_shape):
    if num_elements.ndim != 0 or num_elements.dtype != np.int32:
        raise TypeError("num_elements must be an int32 scalar")  # explained by inference
    n = int(num_elements)
    if n < 0:
        raise op_error("TensorListReserve", f"The num_elements to reserve must be a non negative "
                                            f"number, but got {n}")
    return TensorList([None] * n, n, element_dtype, as_shape(element_shape))


def _from_tensor_kernel(xp, tensor, element_shape):
    dtype = _dt.BY_NUMPY.get(tensor.dtype)
    if tensor.ndim == 0 or dtype is None:
        raise TypeError("the tensor must be at least a vector")  # explained by inference
    shape = as_shape(element_shape)
    if not _compatible(shape, tensor.shape[1:]):
        raise op_error("TensorListFromTensor", f"Specified a list with shape {_fmt(shape)} from a "
                                               f"tensor with shape {_fmt(tensor.shape[1:])}")
    items = list(tensor)  # rows: views of the (immutable) input; rank 1 gives scalars
    return TensorList(items, len(items), dtype, shape)


def _push_back_kernel(xp, handle, tensor):
    view = _as_list(handle)
    spec = view._spec
    if spec.dtype is _variant:  # a list of lists (a While's accumulator of a list)
        tensor = _as_list(tensor)
    elif tensor.dtype != spec.dtype.dtype:
        _check_dtype("TensorListPushBack", _dt.as_dtype(tensor.dtype), spec.dtype)
    full = spec.full
    if not (tensor.shape == full if full is not None else
            _compatible(spec.shape, tensor.shape)):
        raise op_error("TensorListPushBack", f"Tried to append a tensor with incompatible shape "
                                             f"to a list. Op element shape: {_fmt(tensor.shape)} "
                                             f"list shape: {_fmt(spec.shape)}")
    n = view._n
    if spec.limit != -1 and n >= spec.limit:
        raise op_error("TensorListPushBack", f"Tried to push item into a full list list size: {n} "
                                             f"max_num_elements: {spec.limit}")
    return view._view(_push_storage(view, tensor), n + 1)


def _read_unset(op_name, view, xp, element_shape, from_set_elements):
    """Zeros for an unset slot: its shape is the list's element_shape merged with the op's, and
    for GetItem and Stack with the set elements' shapes (TensorFlow's rule); it must be fully
    known."""
    shape = _merge(op_name, view.element_shape, as_shape(element_shape))
    if from_set_elements and not shape.is_fully_defined():
        for item in view._items[:view._n]:
            if item is not None:
                shape = _merge(op_name, shape, item.shape)
    if not shape.is_fully_defined():
        raise op_error(op_name, f"Trying to read an uninitialized tensor but element_shape is "
                                f"not fully defined: {_fmt(shape)} and no list element is set.")
    return _zeros(xp, shape, view.element_dtype)


def _pop_back_kernel(xp, handle, element_dtype, element_shape):
    view = _as_list(handle)
    _check_dtype("TensorListPopBack", element_dtype, view.element_dtype)
    n = view._n
    if n == 0:
        raise op_error("TensorListPopBack", "Trying to pop from an empty list.")
    item = view._items[n - 1]
    if item is None:
        item = _read_unset("TensorListPopBack", view, xp, element_shape, False)
    else:
        _check_item_shape("TensorListPopBack", element_shape, item)
    return view._view(view._items, n - 1), item


def _get_item_kernel(xp, handle, index, element_dtype, element_shape):
    view = _as_list(handle)
    _check_dtype("TensorListGetItem", element_dtype, view.element_dtype)
    item = view._items[_index("TensorListGetItem", index, view._n, "access")]
    if item is None:
        return _read_unset("TensorListGetItem", view, xp, element_shape, True)
    _check_item_shape("TensorListGetItem", element_shape, item)
    return item


def _set_item_kernel(xp, handle, index, item):
    view = _as_list(handle)
    n = view._n
    i = _index("TensorListSetItem", index, n, "modify")
    dtype = view.element_dtype
    if dtype is _variant:  # a list of lists (the gradient of a While's accumulator)
        item = _as_list(item)
    elif item.dtype != dtype.dtype:
        _check_dtype("TensorListSetItem", _dt.as_dtype(item.dtype), dtype)
    full = view._spec.full
    if not (item.shape == full if full is not None else
            _compatible(view.element_shape, item.shape)):
        raise op_error("TensorListSetItem", f"Tried to set a tensor with incompatible shape at a "
                                            f"list index. Item element shape: {_fmt(item.shape)} "
                                            f"list shape: {_fmt(view.element_shape)}")
    items = view._items[:n]  # entries below a view's length are never written: copy
    items[i] = item
    return view._view(items, n)


def _stack_kernel(xp, handle, element_dtype, num_elements, element_shape):
    view = _as_list(handle)
    _check_dtype("TensorListStack", element_dtype, view.element_dtype)
    n = view._n
    if num_elements != -1 and num_elements != n:
        raise op_error("TensorListStack", f"Operation expected a list with {num_elements} "
                                          f"elements but got a list with {n} elements.")
    items = view._items[:n]
    shape = _merge("TensorListStack", view.element_shape, as_shape(element_shape))
    unset = False
    for item in items:
        if item is None:
            unset = True
        elif not (shape._rank_known and tuple.__eq__(shape, item.shape)):
            shape = _merge("TensorListStack", shape, item.shape)
    if n == 0 or unset:
        if not shape.is_fully_defined():
            what = ("elements of an empty list" if n == 0 else
                    "list which only contains uninitialized tensors and has")
            raise op_error("TensorListStack", f"Tried to stack {what} with non-fully-defined "
                                              f"element_shape: {_fmt(shape)}")
        if n == 0:
            return _zeros(xp, (0,) + tuple(shape), element_dtype)
        zeros = _zeros(xp, shape, element_dtype)
        items = [zeros if item is None else item for item in items]
    return xp.stack(items)


def _resize_kernel(xp, handle, size):
    view = _as_list(handle)
    if size.ndim != 0 or size.dtype != np.int32:
        raise TypeError("size must be an int32 scalar")  # explained by inference
    m = int(size)
    if m < 0:
        raise op_error("TensorListResize", f"TensorListSlice expects size to be non-negative. "
                                           f"Got: {m}")
    n = view._n
    if m == n:
        return view  # views are immutable: the same one serves
    if m < n:
        return view._view(view._items, m)
    return view._view(view._items[:n] + [None] * (m - n), m)


def _length_kernel(xp, handle):
    return xp.asarray(_as_list(handle)._n, dtype=np.int32)


# -- shape inference: shapes and dtypes only ----------------------------------------------------

_LIST_SPEC = TensorSpec((), _variant)


def _check_handle(op_name, handle, position=0):
    if handle.dtype is not _variant:
        raise op_error(op_name, f"cannot compute {op_name} as input #{position}(zero-based) was "
                                f"expected to be a variant tensor but is a {handle.dtype.name} "
                                f"tensor")
    if handle.shape.rank not in (None, 0):
        raise op_error(op_name, f"the list handle must be a scalar, got shape "
                                f"{_fmt(handle.shape)}")


def _check_scalar_int32(op_name, t, what, position):
    if t.dtype is not _int32:
        raise op_error(op_name, f"cannot compute {op_name} as input #{position}(zero-based) was "
                                f"expected to be a int32 tensor but is a {t.dtype.name} tensor")
    if t.shape.rank not in (None, 0):
        raise op_error(op_name, f"{what} must be a scalar, got shape {_fmt(t.shape)}")


def _check_element(op_name, t, position):
    if not t.dtype.is_numpy_compatible and t.dtype is not _variant:
        raise op_error(op_name, f"input #{position}(zero-based) must be a numeric or bool tensor "
                                f"or a list, "
                                f"got {t.dtype.name}")


def _empty_infer(element_dtype, element_shape, max_num_elements):
    return _LIST_SPEC


def _reserve_infer(num_elements, element_dtype, element_shape):
    _check_scalar_int32("TensorListReserve", num_elements, "num_elements", 0)
    return _LIST_SPEC


def _from_tensor_infer(tensor, element_shape):
    _check_element("TensorListFromTensor", tensor, 0)
    shape = tensor.shape
    if shape.rank == 0:
        raise op_error("TensorListFromTensor", "Tensor must be at least a vector, but saw shape: "
                                               "[]")
    if shape.rank is not None and not as_shape(element_shape).is_compatible_with(shape[1:]):
        raise op_error("TensorListFromTensor", f"Specified a list with shape "
                                               f"{_fmt(element_shape)} from a tensor with shape "
                                               f"{_fmt(shape[1:])}")
    return _LIST_SPEC


def _push_back_infer(handle, tensor):
    _check_handle("TensorListPushBack", handle)
    _check_element("TensorListPushBack", tensor, 1)
    return _LIST_SPEC


def _pop_back_infer(handle, element_dtype, element_shape):
    _check_handle("TensorListPopBack", handle)
    return _LIST_SPEC, TensorSpec(element_shape, element_dtype)


def _get_item_infer(handle, index, element_dtype, element_shape):
    _check_handle("TensorListGetItem", handle)
    _check_scalar_int32("TensorListGetItem", index, "index", 1)
    return TensorSpec(element_shape, element_dtype)


def _set_item_infer(handle, index, item):
    _check_handle("TensorListSetItem", handle)
    _check_scalar_int32("TensorListSetItem", index, "index", 1)
    _check_element("TensorListSetItem", item, 2)
    return _LIST_SPEC


def _stack_infer(handle, element_dtype, num_elements, element_shape):
    _check_handle("TensorListStack", handle)
    lead = TensorShape([num_elements if num_elements >= 0 else None])
    return TensorSpec(lead.concatenate(as_shape(element_shape)), element_dtype)


def _resize_infer(handle, size):
    _check_handle("TensorListResize", handle)
    _check_scalar_int32("TensorListResize", size, "size", 1)
    return _LIST_SPEC


def _length_infer(handle):
    _check_handle("TensorListLength", handle)
    return TensorSpec((), _int32)


EMPTY_TENSOR_LIST = register_op("EmptyTensorList", _empty_kernel, _empty_infer,
                                differentiable=False)
TENSOR_LIST_RESERVE = register_op("TensorListReserve", _reserve_kernel, _reserve_infer,
                                  differentiable=False, host_inputs=(0,))
TENSOR_LIST_FROM_TENSOR = register_op("TensorListFromTensor", _from_tensor_kernel,
                                      _from_tensor_infer)
TENSOR_LIST_PUSH_BACK = register_op("TensorListPushBack", _push_back_kernel, _push_back_infer)
TENSOR_LIST_POP_BACK = register_op("TensorListPopBack", _pop_back_kernel, _pop_back_infer,
                                   num_outputs=2)
# (Sizes and indices are read on the host: a counter kept on the CPU, or in host memory on a
# GPU, is taken as it is, TensorFlow's HostMemory("index").)
TENSOR_LIST_GET_ITEM = register_op("TensorListGetItem", _get_item_kernel, _get_item_infer,
                                   host_inputs=(1,))
TENSOR_LIST_SET_ITEM = register_op("TensorListSetItem", _set_item_kernel, _set_item_infer,
                                   host_inputs=(1,))
TENSOR_LIST_STACK = register_op("TensorListStack", _stack_kernel, _stack_infer)
TENSOR_LIST_LENGTH = register_op("TensorListLength", _length_kernel, _length_infer,
                                 differentiable=False)
TENSOR_LIST_RESIZE = register_op("TensorListResize", _resize_kernel, _resize_infer,
                                 host_inputs=(1,))


# -- public functions (tensorflow.python.ops.list_ops' names and signatures) --------------------

def _element_shape_attr(op_name, shape):
    """TensorFlow's element_shape argument (None or -1: unknown rank; a TensorShape; a list with
    None or -1 for unknown dimensions; an int tensor) as a hashable attr: None or a tuple."""
    if shape is None:
        return None
    if isinstance(shape, TensorShape):
        return None if shape.rank is None else tuple(shape)
    if isinstance(shape, Tensor):
        shape = static_array(op_name, shape, "element_shape")
    if isinstance(shape, (np.ndarray, np.generic)):
        if shape.dtype.kind not in "iu":
            raise TypeError(f"{op_name}: element_shape must hold integers, got {shape!r}.")
        shape = shape.tolist()
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        if shape == -1:
            return None
        raise op_error(op_name, f"element_shape must be -1 (unknown rank) or a list, got {shape}")
    dims = []
    for d in shape:
        if d is None or (isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d == -1):
            dims.append(None)
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0:
            dims.append(int(d))
        else:
            raise TypeError(f"{op_name}: element_shape dimensions must be non-negative integers, "
                            f"None or -1; got {d!r}.")
    return tuple(dims)


def _element_dtype(op_name, dtype):
    dtype = _dt.as_dtype(dtype)
    if not dtype.is_numpy_compatible and dtype is not _variant:
        raise TypeError(f"{op_name}: a TensorList cannot hold {dtype.name} elements.")
    return dtype


def _int32_input(value):
    return value if isinstance(value, Tensor) else convert_to_tensor(value, _int32)


def empty_tensor_list(element_shape, element_dtype, max_num_elements=None, name=None):
    """An empty list of `element_dtype` tensors of (partial) `element_shape`; pushes beyond
    `max_num_elements` (None: unbounded) fail."""
    limit = -1 if max_num_elements is None else int(max_num_elements)
    attrs = {"element_dtype": _element_dtype("EmptyTensorList", element_dtype),
             "element_shape": _element_shape_attr("EmptyTensorList", element_shape),
             "max_num_elements": limit}
    return execute(EMPTY_TENSOR_LIST, (), attrs)


def tensor_list_reserve(element_shape, num_elements, element_dtype, name=None):
    """A list of `num_elements` unset slots (they read as zeros once their shape is known)."""
    attrs = {"element_dtype": _element_dtype("TensorListReserve", element_dtype),
             "element_shape": _element_shape_attr("TensorListReserve", element_shape)}
    return execute(TENSOR_LIST_RESERVE, (_int32_input(num_elements),), attrs)


def tensor_list_from_tensor(tensor, element_shape, name=None):
    """The list of `tensor`'s rows (slices along axis 0); `element_shape` must fit them."""
    attrs = {"element_shape": _element_shape_attr("TensorListFromTensor", element_shape)}
    return execute(TENSOR_LIST_FROM_TENSOR, (as_tensor(tensor),), attrs)


def tensor_list_push_back(input_handle, tensor, name=None):
    """The list with `tensor` appended (O(1): see the module doc)."""
    return execute(TENSOR_LIST_PUSH_BACK, (as_tensor(input_handle), as_tensor(tensor)))


def tensor_list_pop_back(input_handle, element_dtype, name=None):
    """(the list without its last element, that element)."""
    attrs = {"element_dtype": _element_dtype("TensorListPopBack", element_dtype),
             "element_shape": None}
    return execute(TENSOR_LIST_POP_BACK, (as_tensor(input_handle),), attrs)


def tensor_list_get_item(input_handle, index, element_dtype, element_shape=None, name=None):
    """Element `index` (0 <= index < length); an unset slot reads as zeros."""
    attrs = {"element_dtype": _element_dtype("TensorListGetItem", element_dtype),
             "element_shape": _element_shape_attr("TensorListGetItem", element_shape)}
    return execute(TENSOR_LIST_GET_ITEM, (as_tensor(input_handle), _int32_input(index)),
                        attrs)


def tensor_list_set_item(input_handle, index, item, resize_if_index_out_of_bounds=False,
                         name=None):
    """The list with element `index` (0 <= index < length) replaced by `item`; with
    `resize_if_index_out_of_bounds`, a list shorter than index + 1 grows to that length first
    (unset slots in between)."""
    handle, index = as_tensor(input_handle), _int32_input(index)
    if resize_if_index_out_of_bounds:
        length = execute(TENSOR_LIST_LENGTH, (handle,))
        size = maximum(length, add(index, convert_to_tensor(1, _int32)))
        handle = execute(TENSOR_LIST_RESIZE, (handle, size))
    return execute(TENSOR_LIST_SET_ITEM, (handle, index, as_tensor(item)))


def tensor_list_resize(input_handle, size, name=None):
    """The list cut to `size` elements, or extended with unset slots."""
    return execute(TENSOR_LIST_RESIZE, (as_tensor(input_handle), _int32_input(size)))


def tensor_list_stack(input_handle, element_dtype, num_elements=-1, element_shape=None,
                      name=None):
    """The elements stacked along a new axis 0 (unset slots as zeros); an empty list needs a
    fully known element shape."""
    attrs = {"element_dtype": _element_dtype("TensorListStack", element_dtype),
             "num_elements": -1 if num_elements is None else int(num_elements),
             "element_shape": _element_shape_attr("TensorListStack", element_shape)}
    return execute(TENSOR_LIST_STACK, (as_tensor(input_handle),), attrs)


def tensor_list_length(input_handle, name=None):
    """The number of elements, an int32 scalar."""
    return execute(TENSOR_LIST_LENGTH, (as_tensor(input_handle),))
