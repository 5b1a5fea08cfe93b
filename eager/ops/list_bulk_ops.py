"""TensorList ops that move many elements at once: gather, scatter, split, concat.

They are the ops TensorFlow's TensorArray (control-flow v2) is built on besides the
one-element ops of `eager.ops.list_ops` (whose conventions they follow: lists are immutable
views, unset slots read as zeros once their shape is known, errors carry TensorFlow's words).
Like those, they keep list_ops' names and signatures and are not re-exported at the top level.

`TensorListScatterAdd` is not a TensorFlow op: it adds rows onto slots instead of overwriting
them, and is the gradient of `TensorListGather` (TensorFlow scatters there, which drops all
but one of the gradients of an index gathered twice).

Deviations from TensorFlow (2.21), each where TensorFlow's kernel gives a wrong result or
crashes: a scatter checks its rows' shape against the list's element shape and refuses a
negative index (TensorFlow crashes the process); a scatter past the end grows the list and
writes each row at its index (TensorFlow's kernel misplaces it).
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base.tensor_shape import TensorShape, as_shape
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import Tensor
from .list_ops import (_LIST_SPEC, TensorList, _as_list, _check_dtype, _check_element,
                       _check_handle, _compatible, _element_dtype, _element_shape_attr, _fmt,
                       _merge, _zeros, empty_tensor_list)

__all__ = ["tensor_list_gather", "tensor_list_scatter", "tensor_list_scatter_add",
           "tensor_list_split", "tensor_list_concat", "TENSOR_LIST_GATHER",
           "TENSOR_LIST_SCATTER", "TENSOR_LIST_SCATTER_ADD", "TENSOR_LIST_SPLIT",
           "TENSOR_LIST_CONCAT"]

_int32, _int64 = _dt.int32, _dt.int64


# -- helpers ------------------------------------------------------------------------------------

def _known_shape(op_name, view, element_shape, what):
    """The shape unset slots read as: the list's element shape merged with the op's and, when
    that is not fully known, with the set elements' shapes (TensorFlow's rule); it must end up
    fully known."""
    shape = _merge(op_name, view.element_shape, as_shape(element_shape))
    if not shape.is_fully_defined():
        for item in view._items[:view._n]:
            if item is not None:
                shape = _merge(op_name, shape, item.shape)
    if not shape.is_fully_defined():
        raise op_error(op_name, f"Tried to {what} with non-fully-defined element_shape: "
                                f"{_fmt(shape)}")
    return shape


def _typed(array, dtype, what):
    if array.dtype != dtype:
        raise TypeError(f"{what} must be {dtype}")  # explained by inference
    return array


def _vector(op_name, array, what):
    if array.ndim != 1:
        raise op_error(op_name, f"Expected {what} to be a vector, but received shape: "
                                f"{_fmt(array.shape)}")
    return array.tolist()


# -- kernels ------------------------------------------------------------------------------------

def _gather_kernel(xp, handle, indices, element_dtype, element_shape):
    view = _as_list(handle)
    _check_dtype("TensorListGather", element_dtype, view.element_dtype)
    n = view._n
    items = []
    unset = False
    for i in _typed(indices, np.int32, "indices").reshape(-1).tolist():  # TF flattens them
        if i < 0 or i >= n:
            # TensorFlow's message, spelling included.
            raise op_error("TensorListGather", f"Index {i} out o range; list only has {n} "
                                               f"elements.")
        item = view._items[i]
        unset = unset or item is None
        items.append(item)
    shape = as_shape(element_shape)
    if unset or not items:
        shape = _known_shape("TensorListGather", view, element_shape,
                             "gather uninitialized tensors from a list" if items else
                             "gather elements of an empty list")
        zeros = _zeros(xp, shape, element_dtype)
        items = [zeros if item is None else item for item in items]
    if not items:
        return _zeros(xp, (0,) + tuple(shape), element_dtype)
    for item in items:
        shape = _merge("TensorListGather", shape, item.shape)
    return xp.stack(items)


def _scatter_rows(op_name, view, tensor, indices, add):
    """The storage of `view` with row k of `tensor` written (or, with `add`, added) at slot
    `indices[k]`, grown to hold the largest index. Rows are views of the (immutable) input."""
    spec = view._spec
    if tensor.ndim == 0:
        raise op_error(op_name, "Tensor must be at least a vector, but saw shape: []")
    if tensor.dtype != spec.dtype.dtype:
        raise op_error(op_name, f"Invalid data types; input tensor type: "
                                f"{_dt.as_dtype(tensor.dtype).name} list element_type: "
                                f"{spec.dtype.name}")
    positions = _vector(op_name, _typed(indices, np.int32, "indices"), "indices")
    if len(positions) != tensor.shape[0]:
        raise op_error(op_name, f"Expected len(indices) == tensor.shape[0], but saw: "
                                f"{len(positions)} vs. {tensor.shape[0]}")
    if not _compatible(spec.shape, tensor.shape[1:]):
        raise op_error(op_name, f"Tried to scatter a tensor with incompatible shape into a "
                                f"list. Item element shape: {_fmt(tensor.shape[1:])} list "
                                f"shape: {_fmt(spec.shape)}")
    n = view._n
    items = view._items[:n]  # entries below a view's length are never written: copy
    grow = max(positions, default=-1) + 1
    if grow > n:
        items.extend([None] * (grow - n))
    for k, i in enumerate(positions):
        if i < 0:
            raise op_error(op_name, f"Trying to modify element {i} in a list with {n} "
                                    f"elements.")
        row = tensor[k]
        mine = items[i]
        if add and mine is not None:
            if mine.shape != row.shape:
                raise op_error(op_name, f"Trying to add two tensors with incompatible shapes "
                                        f"{_fmt(mine.shape)} and {_fmt(row.shape)} at list "
                                        f"index {i}")
            row = mine + row
        items[i] = row
    return view._view(items, max(n, grow))


def _scatter_kernel(xp, handle, tensor, indices):
    return _scatter_rows("TensorListScatterIntoExistingList", _as_list(handle), tensor, indices,
                         False)


def _scatter_add_kernel(xp, handle, tensor, indices):
    return _scatter_rows("TensorListScatterAdd", _as_list(handle), tensor, indices, True)


def _split_kernel(xp, tensor, lengths, element_shape):
    dtype = _dt.BY_NUMPY.get(tensor.dtype)
    if tensor.ndim == 0 or dtype is None:
        raise TypeError("the tensor must be at least a vector")  # explained by inference
    shape = as_shape(element_shape)
    if shape.rank is not None and (shape.rank != tensor.ndim or
                                   not _compatible(as_shape(shape[1:]), tensor.shape[1:])):
        raise op_error("TensorListSplit", f"tensor shape {_fmt(tensor.shape)} is not "
                                          f"compatible with element_shape {_fmt(shape)}")
    total = tensor.shape[0]
    items, start = [], 0
    for length in _vector("TensorListSplit", _typed(lengths, np.int64, "lengths"), "lengths"):
        if length < 0:
            raise op_error("TensorListSplit", f"Invalid value in lengths: {length}")
        end = start + length
        if end > total:
            raise op_error("TensorListSplit", f"Attempting to slice [{start}, {end}] from "
                                              f"tensor with length {total}")
        items.append(tensor[start:end])
        start = end
    if start != total:
        raise op_error("TensorListSplit", f"Unused values in tensor. Length of tensor: {total} "
                                          f"Values used: {start}")
    return TensorList(items, len(items), dtype, shape)


def _concat_kernel(xp, handle, leading_dims, element_dtype, element_shape):
    view = _as_list(handle)
    _check_dtype("TensorListConcatV2", element_dtype, view.element_dtype)
    n = view._n
    items = view._items[:n]
    full = _merge("TensorListConcatV2", view.element_shape, as_shape(element_shape))
    if full.rank == 0:
        raise op_error("TensorListConcatV2", "Concat requires elements to be at least vectors, "
                                             "found scalars instead.")
    rest = TensorShape(None) if full.rank is None else as_shape(full[1:])
    for i, item in enumerate(items):
        if item is not None:
            if item.ndim == 0:
                raise op_error("TensorListConcatV2", f"Concat saw a scalar shape at index {i} "
                                                     f"but requires at least vectors.")
            rest = _merge("TensorListConcatV2", rest, item.shape[1:])
            full = _merge("TensorListConcatV2", full, (None,) + item.shape[1:])
    if not rest.is_fully_defined():
        if n == 0:
            raise op_error("TensorListConcatV2", f"All except the first dimension must be fully "
                                                 f"defined when concating an empty tensor list. "
                                                 f"element_shape: {_fmt(full)}")
        raise op_error("TensorListConcatV2", f"Trying to concat list with only uninitialized "
                                             f"tensors but element_shape_except_first_dim is not "
                                             f"fully defined: {_fmt(rest)}")
    leading = _typed(leading_dims, np.int64, "leading_dims").reshape(-1).tolist()
    whole = None  # the shape of an element, from the set ones, for unset slots beyond leading
    parts = []
    for i, item in enumerate(items):
        if item is None:
            if i >= len(leading) and whole is None:
                whole = _whole_shape(full, items)
            if i < len(leading):
                shape = (int(leading[i]),) + tuple(rest)
            elif whole.is_fully_defined():
                shape = tuple(whole)
            else:
                raise op_error("TensorListConcatV2", f"List contains uninitialized tensor at "
                                                     f"index {i} but leading_dims has only "
                                                     f"{len(leading)} elements.")
            item = _zeros(xp, shape, element_dtype)
        parts.append(item)
    lengths = xp.asarray([p.shape[0] for p in parts], dtype=np.int64)
    if not parts:
        return _zeros(xp, (0,) + tuple(rest), element_dtype), lengths
    return xp.concatenate(parts), lengths


def _whole_shape(shape, items) -> TensorShape:
    """`shape` merged with the set elements' whole shapes, first dimension included (what an
    unset slot of a concat without leading_dims reads as, as in TensorFlow); unknown when the
    set elements disagree."""
    for item in items:
        if item is not None:
            try:
                shape = shape.merge_with(as_shape(item.shape))
            except ValueError:
                return TensorShape(None)
    return shape


# -- shape inference ------------------------------------------------------------------------------

def _check_int_vector(op_name, t, what, position, dtype):
    if t.dtype is not dtype:
        raise op_error(op_name, f"cannot compute {op_name} as input #{position}(zero-based) was "
                                f"expected to be a {dtype.name} tensor but is a {t.dtype.name} "
                                f"tensor")
    if t.shape.rank == 0:
        raise op_error(op_name, f"Expected {what} to be a vector, but received shape: []")


def _gather_infer(handle, indices, element_dtype, element_shape):
    _check_handle("TensorListGather", handle)
    _check_int_vector("TensorListGather", indices, "indices", 1, _int32)
    count = indices.shape.num_elements() if indices.shape.rank is not None else None
    return TensorSpec(TensorShape([count]).concatenate(as_shape(element_shape)), element_dtype)


def _scatter_infer_as(op_name):
    def infer(handle, tensor, indices):
        _check_handle(op_name, handle)
        _check_element(op_name, tensor, 1)
        if tensor.shape.rank == 0:
            raise op_error(op_name, "Tensor must be at least a vector, but saw shape: []")
        _check_int_vector(op_name, indices, "indices", 2, _int32)
        if indices.shape.rank not in (None, 1):
            raise op_error(op_name, f"Expected indices to be a vector, but received shape: "
                                    f"{_fmt(indices.shape)}")
        return _LIST_SPEC
    return infer


def _split_infer(tensor, lengths, element_shape):
    _check_element("TensorListSplit", tensor, 0)
    if tensor.shape.rank == 0:
        raise op_error("TensorListSplit", "Tensor must be at least a vector, but saw shape: []")
    _check_int_vector("TensorListSplit", lengths, "lengths", 1, _int64)
    return _LIST_SPEC


def _concat_infer(handle, leading_dims, element_dtype, element_shape):
    _check_handle("TensorListConcatV2", handle)
    _check_int_vector("TensorListConcatV2", leading_dims, "leading_dims", 1, _int64)
    shape = as_shape(element_shape)
    if shape.rank == 0:
        raise op_error("TensorListConcatV2", "Concat requires elements to be at least vectors, "
                                             "found scalars instead.")
    out = TensorShape(None) if shape.rank is None else \
        TensorShape([None]).concatenate(shape[1:])
    return TensorSpec(out, element_dtype), TensorSpec([None], _int64)


# (Indices and lengths are read on the host, TensorFlow's HostMemory: a GPU's small int32
# values are taken as they are.)
TENSOR_LIST_GATHER = register_op("TensorListGather", _gather_kernel, _gather_infer,
                                 host_inputs=(1,))
TENSOR_LIST_SCATTER = register_op("TensorListScatterIntoExistingList", _scatter_kernel,
                                  _scatter_infer_as("TensorListScatterIntoExistingList"),
                                  host_inputs=(2,))
TENSOR_LIST_SCATTER_ADD = register_op("TensorListScatterAdd", _scatter_add_kernel,
                                      _scatter_infer_as("TensorListScatterAdd"),
                                      host_inputs=(2,))
TENSOR_LIST_SPLIT = register_op("TensorListSplit", _split_kernel, _split_infer,
                                host_inputs=(1,))
TENSOR_LIST_CONCAT = register_op("TensorListConcatV2", _concat_kernel, _concat_infer,
                                 num_outputs=2, host_inputs=(1,))


# -- public functions (tensorflow.python.ops.list_ops' names and signatures) --------------------

def _int_vector_input(value, dtype):
    """An indices or lengths argument as a tensor (Python values as `dtype`; a tensor as it is,
    its dtype checked by inference)."""
    return value if isinstance(value, Tensor) else convert_to_tensor(value, dtype)


def tensor_list_gather(input_handle, indices, element_dtype, element_shape=None, name=None):
    """Elements `indices` (int32, each 0 <= i < length) stacked along a new axis 0; unset slots
    read as zeros of the element shape (which must then be known)."""
    attrs = {"element_dtype": _element_dtype("TensorListGather", element_dtype),
             "element_shape": _element_shape_attr("TensorListGather", element_shape)}
    return execute(TENSOR_LIST_GATHER, (as_tensor(input_handle),
                                        _int_vector_input(indices, _int32)), attrs)


def tensor_list_scatter(tensor, indices, element_shape=None, input_handle=None, name=None):
    """The list `input_handle` with row k of `tensor` at slot `indices[k]` (the last row wins
    for an index given twice), grown to hold the largest index. Without `input_handle`, a new
    list of `element_shape` (TensorFlow's TensorListScatterV2)."""
    tensor = as_tensor(tensor)
    if input_handle is None:
        input_handle = empty_tensor_list(element_shape, tensor.dtype)
    return execute(TENSOR_LIST_SCATTER, (as_tensor(input_handle), tensor,
                                         _int_vector_input(indices, _int32)))


def tensor_list_scatter_add(input_handle, tensor, indices, name=None):
    """The list `input_handle` with row k of `tensor` added to slot `indices[k]` (unset slots
    are zeros; rows of an index given twice add up). Not a TensorFlow op: the gradient of
    `tensor_list_gather`."""
    return execute(TENSOR_LIST_SCATTER_ADD, (as_tensor(input_handle), as_tensor(tensor),
                                             _int_vector_input(indices, _int32)))


def tensor_list_split(tensor, element_shape, lengths, name=None):
    """A list of the consecutive slices of `tensor` along axis 0 of `lengths` (int64) rows;
    the lengths must add up to `tensor`'s first dimension."""
    attrs = {"element_shape": _element_shape_attr("TensorListSplit", element_shape)}
    return execute(TENSOR_LIST_SPLIT, (as_tensor(tensor), _int_vector_input(lengths, _int64)),
                   attrs)


def tensor_list_concat(input_handle, element_dtype, element_shape=None, leading_dims=None,
                       name=None):
    """(the elements concatenated along axis 0, each element's first dimension as an int64
    vector). An unset slot i is zeros of `leading_dims[i]` rows when given, else of the
    (fully known) element shape."""
    attrs = {"element_dtype": _element_dtype("TensorListConcatV2", element_dtype),
             "element_shape": _element_shape_attr("TensorListConcatV2", element_shape)}
    leading = _int_vector_input([] if leading_dims is None else leading_dims, _int64)
    return execute(TENSOR_LIST_CONCAT, (as_tensor(input_handle), leading), attrs)
