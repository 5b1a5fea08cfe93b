"""Gradients of the TensorList ops, mirrored as in TensorFlow: each op's gradient is its inverse.

PushBack <-> PopBack, SetItem <-> GetItem, FromTensor <-> Stack. The list input of each op gets
a list-valued gradient (a variant tensor: list i of the gradient is the gradient of element i),
so gradients flow through lists like through any tensor, and rules written with list ops run
eagerly, traced and under an outer tape (higher order).

Zeros. A gradient list has the same length as the list it differentiates; slots nobody
differentiated are *unset* and read as zeros of the shape the reading op names (every rule
below passes the element shape it knows from the forward op's inputs), so no zeros are
materialised for untouched elements. An unused list output of PopBack arrives as None (flagged
in `forward.output_filled`): its zero gradient is a list of unset slots as long as that output.

Summing. A list consumed twice (two get_items, or a pop whose both outputs are used) gets two
list gradients; they are added element by element (`add_list_gradients`, TensorFlow's AddN on
variants). The backward pass must call it for variant gradients: see `add_list_gradients`.
"""

from __future__ import annotations

from .creation_ops import zeros
from .grad_utils import needs_gradient, output_unused
from .list_ops import (_LIST_SPEC, TENSOR_LIST_FROM_TENSOR, TENSOR_LIST_GET_ITEM,
                       TENSOR_LIST_LENGTH, TENSOR_LIST_POP_BACK, TENSOR_LIST_PUSH_BACK,
                       TENSOR_LIST_RESERVE, TENSOR_LIST_SET_ITEM, TENSOR_LIST_STACK, TensorList,
                       _as_list, _check_handle, _fmt)
from ..core.dispatch import execute
from ..core.registry import op_error, register_op

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
            elif mine.shape != item.shape:
                raise op_error("TensorListAddN", f"Trying to add two tensors with incompatible "
                                                 f"shapes {_fmt(mine.shape)} and "
                                                 f"{_fmt(item.shape)} at list index {i}")
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
