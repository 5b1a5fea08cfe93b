"""Gradient cases for the TensorList ops (see test_gradients.py).

List ops take and give variant tensors, which finite differences cannot perturb, so each case
is a function of float tensors that builds lists and reads them back (stack, get_item, pop),
composing each op with its mirror. Every list here is consumed once: a list consumed twice needs
the backward pass to sum list gradients (see eager.ops.list_grad), tested in test_list_ops.py.
"""

import numpy as np

import eager as tf
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
