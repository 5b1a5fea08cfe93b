"""Gradient cases for the TensorList ops (see test_gradients.py).

List ops take and give variant tensors, which finite differences cannot perturb, so each case
is a function of float tensors that builds lists and reads them back (stack, get_item, pop),
composing each op with its mirror. Every list here is consumed once: a list consumed twice needs
the backward pass to sum list gradients (see eager.ops.list_grad), tested in test_list_ops.py.
"""

import numpy as np

import eager as tf
from eager.control_flow import control_flow_grad
from eager.core import dispatch
from eager.ops import list_bulk_ops as bulk
from eager.ops import list_grad  # (importing it registers the list gradients)
from eager.ops import list_ops
from gradcase import GradCase, crand, rand

C = GradCase
f64 = tf.float64


def _pushed(*xs, element_shape=None, dtype=f64):
    lst = list_ops.empty_tensor_list(element_shape, dtype)
    for x in xs:
        lst = list_ops.tensor_list_push_back(lst, x)
    return lst


def _gradient_item(grads, index, like):
    return dispatch.execute(control_flow_grad.TENSOR_LIST_GRADIENT_ITEM,
                            (grads, tf.constant(index), like))


def _lists_of(*lists):
    return _pushed(*lists, element_shape=[], dtype=tf.variant)


def _pop_both(x):
    rest, last = list_ops.tensor_list_pop_back(list_ops.tensor_list_from_tensor(x, [2]), f64)
    return list_ops.tensor_list_stack(rest, f64, element_shape=[2]), last * last


def _pop_reserved(x, y):
    # The popped slot was never set: it reads as zeros; its gradient goes nowhere.
    lst = list_ops.tensor_list_set_item(list_ops.tensor_list_reserve([3], 3, f64), 0, x)
    rest, last = list_ops.tensor_list_pop_back(lst, f64)
    return list_ops.tensor_list_stack(rest, f64) * y, last


CASES = {
    "TensorListPushBack": [
        C(lambda x, y: list_ops.tensor_list_stack(_pushed(x, y, element_shape=[3]), f64),
          lambda: [rand(3), rand(3, seed=1)]),
        C(lambda x, y: list_ops.tensor_list_stack(_pushed(x * y, y, x), f64) * x,
          lambda: [rand(2, 2), rand(2, 2, seed=1)]),
    ],
    "TensorListPopBack": [
        C(_pop_both, lambda: [rand(3, 2)]),
        C(_pop_reserved, lambda: [rand(3), rand(3, seed=2)]),
    ],
    "TensorListGetItem": [
        C(lambda x: list_ops.tensor_list_get_item(
            list_ops.tensor_list_from_tensor(x, None), 1, f64) ** 2,
          lambda: [rand(4, 2)]),
        C(lambda x: tf.exp(list_ops.tensor_list_get_item(
            list_ops.tensor_list_from_tensor(x, [None]), 2, f64, element_shape=[3])),
          lambda: [rand(3, 3)]),
    ],
    "TensorListSetItem": [
        C(lambda x, y: list_ops.tensor_list_stack(
            list_ops.tensor_list_set_item(list_ops.tensor_list_from_tensor(x, [2]), 1, y), f64),
          lambda: [rand(3, 2), rand(2, seed=4)]),
        C(lambda x, y: list_ops.tensor_list_stack(
            list_ops.tensor_list_set_item(_pushed(x, x * x), 0, y * 3.0), f64),
          lambda: [rand(2), rand(2, seed=5)]),
    ],
    "TensorListFromTensor": [
        C(lambda x: list_ops.tensor_list_stack(list_ops.tensor_list_from_tensor(x, [3]), f64) * x,
          lambda: [rand(2, 3)]),
        C(lambda x: list_ops.tensor_list_stack(list_ops.tensor_list_from_tensor(x, []), f64,
                                               num_elements=4),
          lambda: [rand(4)]),
        C(lambda x: list_ops.tensor_list_stack(list_ops.tensor_list_from_tensor(x, [2]),
                                               tf.complex128),
          lambda: [crand(3, 2)]),
    ],
    "TensorListStack": [
        C(lambda x, y: tf.sin(list_ops.tensor_list_stack(_pushed(x, y), f64)),
          lambda: [rand(2, 3), rand(2, 3, seed=1)]),
        C(lambda x: list_ops.tensor_list_stack(
            list_ops.tensor_list_set_item(list_ops.tensor_list_reserve([2], 4, f64), 2, x),
            f64) * 2.0,
          lambda: [rand(2)]),
    ],
    "TensorListResize": [
        C(lambda x: list_ops.tensor_list_stack(
            list_ops.tensor_list_resize(list_ops.tensor_list_from_tensor(x, [2]), 4), f64) * 3.0,
          lambda: [rand(3, 2)]),
        C(lambda x: list_ops.tensor_list_stack(
            list_ops.tensor_list_resize(list_ops.tensor_list_from_tensor(x, [2]), 1), f64),
          lambda: [rand(3, 2)]),
    ],
    "TensorListGather": [
        # An index gathered twice gets both gradients; unset slots read as zeros.
        C(lambda x: bulk.tensor_list_gather(list_ops.tensor_list_from_tensor(x, [2]), [2, 0, 2],
                                            f64) ** 2,
          lambda: [rand(3, 2)]),
        C(lambda x: bulk.tensor_list_gather(list_ops.tensor_list_set_item(
            list_ops.tensor_list_reserve([3], 4, f64), 1, x), [3, 1], f64),
          lambda: [rand(3)]),
    ],
    "TensorListScatterIntoExistingList": [
        # Row 0 is overwritten by row 1 (same index): only the last row written counts; the
        # scatter grows the list to index 3, and overwrites slot 1 of the input list.
        C(lambda x, y: list_ops.tensor_list_stack(bulk.tensor_list_scatter(
            y * y, [1, 1, 3], input_handle=list_ops.tensor_list_from_tensor(x, [2])), f64),
          lambda: [rand(2, 2), rand(3, 2, seed=1)]),
        C(lambda y: list_ops.tensor_list_stack(bulk.tensor_list_scatter(
            y, [2, 0], input_handle=list_ops.tensor_list_reserve([], 3, f64)), f64),
          lambda: [rand(2)]),
    ],
    "TensorListScatterAdd": [
        C(lambda x, y: list_ops.tensor_list_stack(bulk.tensor_list_scatter_add(
            list_ops.tensor_list_from_tensor(x, [2]), y, [1, 1, 0]), f64) ** 2,
          lambda: [rand(2, 2), rand(3, 2, seed=1)]),
    ],
    "TensorListSplit": [
        C(lambda x: list_ops.tensor_list_stack(bulk.tensor_list_split(x, None, [2, 2, 2]), f64),
          lambda: [rand(6, 2)]),
        C(lambda x: list_ops.tensor_list_get_item(bulk.tensor_list_split(x, None, [1, 0, 3]), 2,
                                                  f64) * 2.0,
          lambda: [rand(4)]),
    ],
    "TensorListConcatV2": [
        C(lambda x: bulk.tensor_list_concat(bulk.tensor_list_split(x, None, [1, 0, 3]), f64)[0]
          ** 2, lambda: [rand(4, 2)]),
        # An unset slot concatenates as zeros of its leading_dims rows.
        C(lambda x: bulk.tensor_list_concat(list_ops.tensor_list_set_item(
            list_ops.tensor_list_reserve(None, 2, f64), 1, x), f64, [None, 3],
            leading_dims=np.array([2, 1], np.int64))[0],
          lambda: [rand(1, 3)]),
    ],
    "TensorListGradientItem": [
        # A set slot of a list of lists is read as it is; an unset one as unset slots (zeros)
        # as many as the list it stands for.
        C(lambda x, y: list_ops.tensor_list_stack(_gradient_item(
            _lists_of(list_ops.tensor_list_from_tensor(x, [2])), 0,
            list_ops.tensor_list_from_tensor(y, [2])), f64),
          lambda: [rand(3, 2), rand(3, 2, seed=1)]),
        C(lambda y: list_ops.tensor_list_stack(_gradient_item(
            list_ops.tensor_list_reserve([], 2, tf.variant), 1,
            list_ops.tensor_list_from_tensor(y, [2])), f64, element_shape=[2]) + y,
          lambda: [rand(3, 2)]),
    ],
    "TensorListAddN": [
        C(lambda x, y: list_ops.tensor_list_stack(list_grad.add_list_gradients(
            [list_ops.tensor_list_from_tensor(x, [2]),
             list_ops.tensor_list_from_tensor(y * y, [2])]), f64),
          lambda: [rand(3, 2), rand(3, 2, seed=3)]),
        C(lambda x: list_ops.tensor_list_stack(list_grad.add_list_gradients(
            [list_ops.tensor_list_set_item(list_ops.tensor_list_reserve(None, 2, f64), 1, x),
             list_ops.tensor_list_set_item(list_ops.tensor_list_reserve(None, 2, f64), 1,
                                           x * 2.0)]), f64,
            element_shape=[3]),
          lambda: [np.linspace(-1.0, 1.0, 3)]),
    ],
}
