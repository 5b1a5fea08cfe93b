"""Gradients of the TensorList ops, mirrored as in TensorFlow: each op's gradient is its inverse.

PushBack <-> PopBack, SetItem <-> GetItem, FromTensor <-> Stack, Gather <-> ScatterAdd,
Split <-> ConcatV2, Resize <-> Resize (back to the input's length). The list input of each op gets
a list-valued gradient (a variant tensor: list i of the gradient is the gradient of element i),
so gradients flow through lists like through any tensor, and rules written with list ops run
eagerly, traced and under an outer tape (higher order).

Zeros. A gradient list has the same length as the list it differentiates; slots nobody
differentiated are *unset* and read as zeros of the shape the reading op names (every rule
below passes the element shape it knows from the forward op's inputs), so no zeros are
materialised for untouched elements. An unused list output of PopBack arrives as None (flagged
in `forward.output_filled`): its zero gradient is a list of unset slots as long as that output.

Overwrites. A slot that SetItem or ScatterIntoExistingList overwrites gets no gradient from the
input list (its gradient slot is set to zeros), and of the rows a scatter writes to one index
twice only the last, which the list keeps, gets that slot's gradient (TensorFlow gives every
such row the gradient; its Gather gradient likewise keeps one of the gradients of an index
gathered twice, where ScatterAdd sums them).

Summing. A list consumed twice (two get_items, or a pop whose both outputs are used) gets two
list gradients; they are added element by element (`add_list_gradients`, TensorFlow's AddN on
variants). The backward pass must call it for variant gradients: see `add_list_gradients`.
"""

from __future__ import annotations

from ..base.dtypes import int32, variant
from ..base.tensor_shape import as_shape
from .array_ops import reshape
from .creation_ops import ones_like, zeros, zeros_like
from .cumulative_ops import cumsum
from .grad_utils import needs_gradient, output_unused
from .list_bulk_ops import (TENSOR_LIST_CONCAT, TENSOR_LIST_GATHER, TENSOR_LIST_SCATTER,
                            TENSOR_LIST_SCATTER_ADD, TENSOR_LIST_SPLIT)
from .list_ops import (_LIST_SPEC, TENSOR_LIST_FROM_TENSOR, TENSOR_LIST_GET_ITEM,
                       TENSOR_LIST_LENGTH, TENSOR_LIST_POP_BACK, TENSOR_LIST_PUSH_BACK,
                       TENSOR_LIST_RESERVE, TENSOR_LIST_RESIZE, TENSOR_LIST_SET_ITEM,
                       TENSOR_LIST_STACK, TensorList, _as_list, _check_handle, _fmt)
from .math_ops import cast, equal, subtract
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import IndexedSlices

__all__ = ["add_list_gradients", "TENSOR_LIST_ADD_N"]


# -- summing list gradients: TensorFlow's AddN on variants ---------------------------------------

def _add_n_kernel(xp, *handles):
    """Element-wise sum of lists of one length (TensorFlow's AddN on variants): unset slots are
    zeros, so a slot unset in every list stays unset."""
    first = _as_list(handles[0])
    n, dtype, shape = first._n, first.element_dtype, first.element_shape
    sums = first._items[:n]  # a copy: the inputs are never written
    for other in handles[1:]:
        other = _as_list(other)
        if other._n != n:
            raise op_error("TensorListAddN", f"Trying to add two lists of tensors with different "
                                             f"lengths. One is {n} and the other is {other._n}")
        if other.element_dtype is not dtype:
            raise op_error("TensorListAddN", f"Trying to add two lists of tensors of different "
                                             f"dtypes. One is {dtype.name} and the other is "
                                             f"{other.element_dtype.name}")
        if not shape.is_compatible_with(other.element_shape):
            raise op_error("TensorListAddN", f"Trying to add two lists of tensors with "
                                             f"incompatible element shapes. One is {_fmt(shape)} "
                                             f"and the other is {_fmt(other.element_shape)}")
        shape = shape.merge_with(other.element_shape)
        for i, item in enumerate(other._items[:n]):
            if item is None:
                continue
            mine = sums[i]
            if mine is None:
                sums[i] = item
            elif dtype is not variant and mine.shape != item.shape:
                raise op_error("TensorListAddN", f"Trying to add two tensors with incompatible "
                                                 f"shapes {_fmt(mine.shape)} and "
                                                 f"{_fmt(item.shape)} at list index {i}")
            elif dtype is variant:  # lists of lists: their lists add up likewise
                sums[i] = _add_n_kernel(xp, mine, item)
            else:
                sums[i] = mine + item
    return TensorList(sums, n, dtype, shape)


def _add_n_infer(*handles):
    for i, h in enumerate(handles):
        _check_handle("TensorListAddN", h, i)
    return _LIST_SPEC


# Not a TensorFlow op name: TensorFlow sums list gradients with AddN's kernel for variants.
TENSOR_LIST_ADD_N = register_op("TensorListAddN", _add_n_kernel, _add_n_infer)


def add_list_gradients(grads):
    """The sum of several list gradients of one list (element-wise; unset slots are zeros).

    The backward pass sums gradients with `+`, which is numeric only. Until it routes variant
    gradients here, a list consumed by two ops cannot be differentiated; the change is, in
    `eager.autodiff.tape_backward.aggregate`, before the dense sum:

        if grads[0].dtype is variant:  # TensorList gradients (eager.ops.list_grad)
            return add_list_gradients(grads)

    and, in `_fill_unused`, `None` instead of `zeros(...)` for a variant output (PopBack's rule
    reads `forward.output_filled`).
    """
    if len(grads) == 1:
        return grads[0]
    return execute(TENSOR_LIST_ADD_N, tuple(grads))


def _shape(shape):
    """A static shape as an element_shape attr (None: unknown rank)."""
    return None if getattr(shape, "rank", 0) is None else tuple(shape)


@TENSOR_LIST_PUSH_BACK.def_gradient
def _push_back_grad(forward, dlist):
    # d(list) is the gradient list without its last slot; d(tensor) is that slot (zeros of the
    # pushed tensor's shape when nobody differentiated it).
    dlist_in, dtensor = execute(TENSOR_LIST_POP_BACK, (dlist,),
                                {"element_dtype": forward.input_dtypes[1],
                                 "element_shape": _shape(forward.input_shapes[1])})
    return dlist_in, dtensor


@TENSOR_LIST_POP_BACK.def_gradient(keep_outputs=(0,))
def _pop_back_grad(forward, dlist, dtensor):
    if dlist is None or output_unused(forward, 0):
        # Nothing used the remaining list: its gradient is as many unset slots.
        (rest,) = forward.outputs[:1]
        length = execute(TENSOR_LIST_LENGTH, (rest,))
        dlist = execute(TENSOR_LIST_RESERVE, (length,),
                        {"element_dtype": forward.output_dtypes[1], "element_shape": None})
    return execute(TENSOR_LIST_PUSH_BACK, (dlist, dtensor))


@TENSOR_LIST_GET_ITEM.def_gradient(keep_inputs=(0, 1))
def _get_item_grad(forward, ditem):
    # A list as long as the input, unset except for slot `index`.
    handle, index = forward.inputs
    length = execute(TENSOR_LIST_LENGTH, (handle,))
    grad = execute(TENSOR_LIST_RESERVE, (length,),
                   {"element_dtype": forward.attrs["element_dtype"], "element_shape": None})
    return execute(TENSOR_LIST_SET_ITEM, (grad, index, ditem)), None


@TENSOR_LIST_SET_ITEM.def_gradient(keep_inputs=(1,))
def _set_item_grad(forward, dlist):
    # The overwritten slot got nothing from the input list; the item gets that slot's gradient.
    index = forward.inputs[1]
    item_shape, item_dtype = _shape(forward.input_shapes[2]), forward.input_dtypes[2]
    dlist_in = ditem = None
    if needs_gradient(forward, 0):
        dlist_in = execute(TENSOR_LIST_SET_ITEM, (dlist, index, zeros(item_shape, item_dtype)))
    if needs_gradient(forward, 2):
        ditem = execute(TENSOR_LIST_GET_ITEM, (dlist, index),
                        {"element_dtype": item_dtype, "element_shape": item_shape})
    return dlist_in, None, ditem


@TENSOR_LIST_FROM_TENSOR.def_gradient
def _from_tensor_grad(forward, dlist):
    shape = _shape(forward.input_shapes[0])
    return execute(TENSOR_LIST_STACK, (dlist,),
                   {"element_dtype": forward.input_dtypes[0],
                    "num_elements": -1 if shape is None or shape[0] is None else shape[0],
                    "element_shape": None if shape is None else shape[1:]})


@TENSOR_LIST_STACK.def_gradient
def _stack_grad(forward, dtensor):
    return execute(TENSOR_LIST_FROM_TENSOR, (dtensor,),
                   {"element_shape": _shape(dtensor.shape[1:])})


@TENSOR_LIST_ADD_N.def_gradient
def _add_n_grad(forward, dlist):
    return (dlist,) * len(forward.input_ids)


# -- the ops that move many elements at once (eager.ops.list_bulk_ops) ---------------------------

def _dense(g):
    return convert_to_tensor(g) if isinstance(g, IndexedSlices) else g


def _rest(shape):
    """A tensor's static shape without its first dimension, as an element_shape attr: the shape
    of its rows (None: unknown rank)."""
    shape = as_shape(shape)
    return None if shape.rank is None else tuple(shape)[1:]


def _reserved_like(handle, dtype):
    """A list of unset slots as long as `handle`: a gradient nobody has written yet."""
    length = execute(TENSOR_LIST_LENGTH, (handle,))
    return execute(TENSOR_LIST_RESERVE, (length,), {"element_dtype": dtype,
                                                    "element_shape": None})


def _resized_like(dlist, handle):
    """`dlist` cut (or extended) to the length of list `handle`, the input of an op that may
    have grown it."""
    return execute(TENSOR_LIST_RESIZE, (dlist, execute(TENSOR_LIST_LENGTH, (handle,))))


def _last_writes(indices, length):
    """A bool vector: whether row k of a scatter to `indices` is the one its slot keeps (no
    later row names the same index). Found by asking the scatter itself: scattering the row
    numbers leaves each slot holding its last writer's."""
    rows = subtract(cumsum(ones_like(indices)), convert_to_tensor(1, int32))
    board = execute(TENSOR_LIST_RESERVE, (length,), {"element_dtype": int32,
                                                     "element_shape": ()})
    board = execute(TENSOR_LIST_SCATTER, (board, rows, indices))
    kept = execute(TENSOR_LIST_GATHER, (board, indices), {"element_dtype": int32,
                                                          "element_shape": ()})
    return equal(kept, rows)


@TENSOR_LIST_RESIZE.def_gradient(keep_inputs=(0,))
def _resize_grad(forward, dlist):
    return _resized_like(dlist, forward.inputs[0]), None


@TENSOR_LIST_GATHER.def_gradient(keep_inputs=(0, 1))
def _gather_grad(forward, dtensor):
    # Each gathered row's gradient added onto its slot (an index gathered twice gets both).
    handle, indices = forward.inputs
    dlist = _reserved_like(handle, forward.attrs["element_dtype"])
    return execute(TENSOR_LIST_SCATTER_ADD, (dlist, _dense(dtensor), indices)), None


@TENSOR_LIST_SCATTER_ADD.def_gradient(keep_inputs=(0, 2))
def _scatter_add_grad(forward, dlist):
    handle, _, indices = forward.inputs
    dtensor = None
    if needs_gradient(forward, 1):
        dtensor = execute(TENSOR_LIST_GATHER, (dlist, indices),
                          {"element_dtype": forward.input_dtypes[1],
                           "element_shape": _rest(forward.input_shapes[1])})
    return _resized_like(dlist, handle), dtensor, None


@TENSOR_LIST_SCATTER.def_gradient(keep_inputs=True)
def _scatter_grad(forward, dlist):
    # The overwritten slots got nothing from the input list; each row gets its slot's gradient
    # if the list kept it (module doc).
    handle, tensor, indices = forward.inputs
    dlist_in = dtensor = None
    if needs_gradient(forward, 0):
        cleared = execute(TENSOR_LIST_SCATTER, (dlist, zeros_like(tensor), indices))
        dlist_in = _resized_like(cleared, handle)
    if needs_gradient(forward, 1):
        shape = as_shape(forward.input_shapes[1])
        rows = execute(TENSOR_LIST_GATHER, (dlist, indices),
                       {"element_dtype": tensor.dtype, "element_shape": _rest(shape)})
        if shape.rank is None:
            raise NotImplementedError(
                "The gradient of TensorListScatterIntoExistingList needs the rank of the "
                "scattered tensor; give it a known rank (e.g. with ensure_shape).")
        kept = _last_writes(indices, execute(TENSOR_LIST_LENGTH, (dlist,)))
        mask = reshape(cast(kept, tensor.dtype), [-1] + [1] * (shape.rank - 1))
        dtensor = rows * mask
    return dlist_in, dtensor, None


@TENSOR_LIST_SPLIT.def_gradient(keep_inputs=(1,))
def _split_grad(forward, dlist):
    # Slot i of the gradient list is the gradient of rows [start_i, start_i + lengths[i]);
    # unset slots are zeros of that many rows.
    rest = _rest(forward.input_shapes[0])
    element_shape = None if rest is None else (None,) + rest
    dtensor, _ = execute(TENSOR_LIST_CONCAT, (dlist, forward.inputs[1]),
                         {"element_dtype": forward.input_dtypes[0],
                          "element_shape": element_shape})
    return dtensor, None


@TENSOR_LIST_CONCAT.def_gradient(keep_outputs=(1,))
def _concat_grad(forward, dtensor, dlengths):
    lengths = forward.outputs[1]
    dlist = execute(TENSOR_LIST_SPLIT, (_dense(dtensor), lengths), {"element_shape": None})
    return dlist, None
