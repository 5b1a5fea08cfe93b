"""TensorList: semantics against TensorFlow 2.21 (expected values below were read off TF's
list_ops), a differential test against a Python-list model, immutability under in-place reuse,
shape inference on partial shapes, and gradients."""

import sys
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager as tf
from eager.devices import registry
from eager.errors import InternalError, InvalidArgumentError
from eager.core import dispatch
from eager.ops import list_grad  # (importing it registers the list gradients)
from eager.ops import list_ops
from eager.core.specs import TensorSpec
from gradcheck import check_gradient, check_second_order

f32, f64 = tf.float32, tf.float64
LIST = TensorSpec((), tf.variant)


def pushed(*values, element_shape=None, dtype=f32):
    lst = list_ops.empty_tensor_list(element_shape, dtype)
    for v in values:
        lst = list_ops.tensor_list_push_back(lst, tf.constant(v, dtype))
    return lst


def stacked(lst, dtype=f32, **kwargs):
    return list_ops.tensor_list_stack(lst, dtype, **kwargs).numpy()


def storage(lst):
    return lst.numpy()._items


def host(lst, array):
    """An element array of list tensor `lst` as numpy: elements live on the list's device
    (cupy arrays on a GPU)."""
    return lst._device.to_host(array)


# -- values: what TensorFlow gives ---------------------------------------------------------------

def test_a_list_tensor_is_a_variant_scalar_whose_numpy_is_the_list():
    lst = pushed([1.0, 2.0], [3.0, 4.0], element_shape=[2])
    assert lst.dtype == tf.variant and lst.shape == () and lst.ndim == 0
    value = lst.numpy()
    assert isinstance(value, list_ops.TensorList)
    assert len(value) == 2 and value.element_dtype is f32 and value.element_shape == [2]
    assert value.max_num_elements == -1
    np.testing.assert_array_equal(host(lst, value.elements()[1]), [3.0, 4.0])
    # The elements are arrays of the list's device (cupy arrays on a GPU).
    device_array = type(lst._device.from_host(np.zeros(1, np.float32)))
    assert all(isinstance(e, device_array) for e in value.elements())
    assert "TensorList" in repr(lst) and "variant" in str(lst)


def test_stack_length_and_items():
    lst = pushed([1.0, 2.0], [3.0, 4.0], [5.0, 6.0], element_shape=[2])
    np.testing.assert_array_equal(stacked(lst), [[1, 2], [3, 4], [5, 6]])
    assert int(list_ops.tensor_list_length(lst)) == 3
    assert list_ops.tensor_list_length(lst).dtype == tf.int32
    np.testing.assert_array_equal(list_ops.tensor_list_get_item(lst, 1, f32).numpy(), [3.0, 4.0])
    rest, last = list_ops.tensor_list_pop_back(lst, f32)
    np.testing.assert_array_equal(last.numpy(), [5.0, 6.0])
    np.testing.assert_array_equal(stacked(rest), [[1, 2], [3, 4]])
    changed = list_ops.tensor_list_set_item(lst, 0, tf.constant([9.0, 9.0]))
    np.testing.assert_array_equal(stacked(changed), [[9, 9], [3, 4], [5, 6]])
    assert stacked(lst, num_elements=3).shape == (3, 2)


def test_stack_of_an_empty_list_needs_a_fully_known_element_shape():
    assert stacked(list_ops.empty_tensor_list([2], f32)).shape == (0, 2)
    assert stacked(list_ops.empty_tensor_list([], f32)).shape == (0,)
    assert stacked(list_ops.empty_tensor_list(None, f32), element_shape=[3]).shape == (0, 3)
    assert stacked(list_ops.empty_tensor_list([-1, 2], f32),
                   element_shape=[4, 2]).shape == (0, 4, 2)


def test_reserved_slots_read_as_zeros_of_the_known_shape():
    lst = list_ops.tensor_list_reserve([2], 3, f32)
    assert int(list_ops.tensor_list_length(lst)) == 3
    np.testing.assert_array_equal(stacked(lst), np.zeros((3, 2)))
    np.testing.assert_array_equal(list_ops.tensor_list_get_item(lst, 1, f32).numpy(), [0.0, 0.0])
    rest, last = list_ops.tensor_list_pop_back(lst, f32)
    np.testing.assert_array_equal(last.numpy(), [0.0, 0.0])
    # Unknown element shape: the reading op's element_shape, or the set elements, give it.
    unknown = list_ops.tensor_list_reserve(None, 3, f32)
    np.testing.assert_array_equal(
        list_ops.tensor_list_get_item(unknown, 1, f32, element_shape=[4]).numpy(), np.zeros(4))
    one_set = list_ops.tensor_list_set_item(unknown, 0, tf.ones([3, 2]))
    np.testing.assert_array_equal(stacked(one_set)[1:], np.zeros((2, 3, 2)))
    np.testing.assert_array_equal(list_ops.tensor_list_get_item(one_set, 2, f32).numpy(),
                                  np.zeros((3, 2)))
    assert stacked(list_ops.tensor_list_reserve(None, 2, f32), element_shape=[1]).shape == (2, 1)


def test_from_tensor_splits_rows():
    lst = list_ops.tensor_list_from_tensor(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), [2])
    assert int(list_ops.tensor_list_length(lst)) == 3
    np.testing.assert_array_equal(list_ops.tensor_list_get_item(lst, 2, f32).numpy(), [5.0, 6.0])
    scalars = list_ops.tensor_list_from_tensor(tf.constant([1, 2, 3]), [])
    assert list_ops.tensor_list_get_item(scalars, 1, tf.int32).numpy() == 2
    # element_shape stays as given (TensorFlow does not refine it from the tensor).
    rows = list_ops.tensor_list_from_tensor(tf.zeros([0, 3]), None)
    with pytest.raises(InvalidArgumentError, match="non-fully-defined element_shape"):
        list_ops.tensor_list_stack(rows, f32)


@pytest.mark.parametrize("dtype, value", [(tf.int32, [1, 2]), (tf.bool, [True, False]),
                                          (tf.complex64, [1 + 2j, 3j]), (tf.int8, [-1, 5]),
                                          (tf.float16, [0.5, 1.5])])
def test_lists_of_every_dtype(dtype, value):
    lst = list_ops.tensor_list_push_back(list_ops.empty_tensor_list([2], dtype),
                                         tf.constant(value, dtype))
    out = list_ops.tensor_list_stack(lst, dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), [value])


def test_a_list_of_unknown_element_shape_takes_any_shape_until_stacked():
    lst = pushed(np.ones(2), np.ones(3))
    np.testing.assert_array_equal(list_ops.tensor_list_get_item(lst, 1, f32).numpy(), np.ones(3))
    with pytest.raises(InvalidArgumentError, match="TensorListStack.*Incompatible shapes during "
                                                   "merge: \\[2\\] vs. \\[3\\]"):
        list_ops.tensor_list_stack(lst, f32)


# -- bad inputs ---------------------------------------------------------------------------------

def _one():
    return pushed([1.0, 2.0], element_shape=[2])


IAE = InvalidArgumentError
BAD_INPUTS = {
    "push dtype": (lambda: list_ops.tensor_list_push_back(_one(), tf.constant([1, 2])), IAE,
                   "TensorListPushBack.*Invalid data types; op elements int32 but list elements "
                   "float32"),
    "push shape": (lambda: list_ops.tensor_list_push_back(_one(), tf.constant([1.0, 2.0, 3.0])),
                   IAE, "TensorListPushBack.*incompatible shape.*\\[3\\] list shape: \\[2\\]"),
    "push rank": (lambda: list_ops.tensor_list_push_back(_one(), tf.constant(1.0)), IAE,
                  "TensorListPushBack.*incompatible shape"),
    "push partial": (lambda: list_ops.tensor_list_push_back(
        list_ops.tensor_list_from_tensor(tf.ones([2, 3]), [None]), tf.ones([4, 1])), IAE,
        "list shape: \\[\\?\\]"),
    "push full": (lambda: list_ops.tensor_list_push_back(list_ops.tensor_list_push_back(
        list_ops.empty_tensor_list([], f32, max_num_elements=1), 1.0), 2.0), IAE,
        "push item into a full list list size: 1 max_num_elements: 1"),
    "set dtype": (lambda: list_ops.tensor_list_set_item(_one(), 0, tf.constant([1, 2])), IAE,
                  "TensorListSetItem.*Invalid data types"),
    "set shape": (lambda: list_ops.tensor_list_set_item(_one(), 0, tf.constant([1.0, 2.0, 3.0])),
                  IAE, "TensorListSetItem.*incompatible shape"),
    "get dtype": (lambda: list_ops.tensor_list_get_item(_one(), 0, tf.int32), IAE,
                  "TensorListGetItem.*op elements int32 but list elements float32"),
    "pop dtype": (lambda: list_ops.tensor_list_pop_back(_one(), tf.int32), IAE,
                  "TensorListPopBack.*op elements int32 but list elements float32"),
    "stack dtype": (lambda: list_ops.tensor_list_stack(_one(), tf.int32), IAE,
                    "TensorListStack.*op elements int32 but list elements float32"),
    "pop empty": (lambda: list_ops.tensor_list_pop_back(list_ops.empty_tensor_list([2], f32), f32),
                  IAE, "TensorListPopBack.*pop from an empty list"),
    "get empty": (lambda: list_ops.tensor_list_get_item(list_ops.empty_tensor_list([2], f32), 0,
                                                        f32),
                  IAE, "TensorListGetItem.*access element 0 in a list with 0 elements"),
    **{f"get {i}": (lambda i=i: list_ops.tensor_list_get_item(_one(), i, f32), IAE,
                    f"TensorListGetItem.*access element {i} in a list with 1 elements")
       for i in (1, -1, 5)},
    **{f"set {i}": (lambda i=i: list_ops.tensor_list_set_item(_one(), i, tf.constant([0.0, 0.0])),
                    IAE, f"TensorListSetItem.*modify element {i} in a list with 1 elements")
       for i in (1, -1)},
    "stack count": (lambda: list_ops.tensor_list_stack(_one(), f32, num_elements=2), IAE,
                    "expected a list with 2 elements but got a list with 1"),
    **{f"stack empty {shape}": (
        lambda shape=shape: list_ops.tensor_list_stack(list_ops.empty_tensor_list(shape, f32), f32),
        IAE, "TensorListStack.*empty list with non-fully-defined element_shape")
       for shape in (None, [None, 2], -1)},
    "stack unset": (lambda: list_ops.tensor_list_stack(
        list_ops.tensor_list_reserve([None, 2], 2, f32), f32),
        IAE, "TensorListStack.*only contains uninitialized tensors"),
    "get unset": (lambda: list_ops.tensor_list_get_item(
        list_ops.tensor_list_reserve(None, 3, f32), 1, f32),
        IAE, "TensorListGetItem.*uninitialized"),
    "pop unset": (lambda: list_ops.tensor_list_pop_back(
        list_ops.tensor_list_reserve(None, 3, f32), f32),
        IAE, "TensorListPopBack.*uninitialized"),
    # As in TensorFlow, PopBack does not take the shape from the other (set) elements.
    "pop unset partial": (lambda: list_ops.tensor_list_pop_back(list_ops.tensor_list_set_item(
        list_ops.tensor_list_reserve([None, 2], 3, f32), 0, tf.ones([3, 2])), f32), IAE,
        "TensorListPopBack.*uninitialized"),
    "reserve -1": (lambda: list_ops.tensor_list_reserve([2], -1, f32), IAE,
                   "TensorListReserve.*non negative number, but got -1"),
    "reserve vector": (lambda: list_ops.tensor_list_reserve([2], [2], f32), IAE,
                       "TensorListReserve.*scalar"),
    "reserve float": (lambda: list_ops.tensor_list_reserve([2], 2.0, f32), TypeError, "int32"),
    "from scalar": (lambda: list_ops.tensor_list_from_tensor(tf.constant(1.0), []), IAE,
                    "TensorListFromTensor.*at least a vector"),
    "from shape": (lambda: list_ops.tensor_list_from_tensor(tf.ones([2, 2]), [3]), IAE,
                   "Specified a list with shape \\[3\\] from a tensor with shape \\[2\\]"),
    "resource elements": (lambda: list_ops.empty_tensor_list([], tf.resource), TypeError,
                          "cannot hold resource"),
    "float shape": (lambda: list_ops.empty_tensor_list([1.5], f32), TypeError, "element_shape"),
    "resize negative": (lambda: list_ops.tensor_list_set_item(
        pushed(1.0), -1, 2.0, resize_if_index_out_of_bounds=True), IAE,
        "Trying to modify element -1 in a list with 1 elements"),
    "float handle": (lambda: list_ops.tensor_list_push_back(tf.constant(1.0), tf.constant(1.0)),
                     IAE, "TensorListPushBack as input #0\\(zero-based\\) was expected to be a "
                          "variant tensor but is a float32 tensor"),
    "int handle": (lambda: list_ops.tensor_list_length(tf.constant([1, 2])), IAE,
                   "TensorListLength.*variant tensor"),
    "int64 index": (lambda: list_ops.tensor_list_get_item(_one(), tf.constant(0, tf.int64), f32),
                    IAE,
                    "input #1\\(zero-based\\) was expected to be a int32 tensor but is a int64"),
    "vector index": (lambda: list_ops.tensor_list_get_item(_one(), tf.constant([0]), f32), IAE,
                     "index must be a scalar"),
    "float index": (lambda: list_ops.tensor_list_get_item(_one(), 0.0, f32), TypeError, "int32"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_inputs_raise_the_op_error(case):
    call, error, message = BAD_INPUTS[case]
    with pytest.raises(error, match=message):
        call()


def test_reading_with_an_element_shape_the_item_does_not_have_is_an_error():
    # A deviation: TensorFlow returns the item anyway, which would make shape inference lie.
    lst = pushed([1.0, 2.0])
    with pytest.raises(InvalidArgumentError, match="TensorListGetItem.*incompatible with the "
                                                   "requested element_shape \\[3\\]"):
        # (`.numpy()`: a device whose kernels run later reports the failure there)
        list_ops.tensor_list_get_item(lst, 0, f32, element_shape=[3]).numpy()
    np.testing.assert_array_equal(
        list_ops.tensor_list_get_item(lst, 0, f32, element_shape=[None]).numpy(), [1.0, 2.0])


def test_adding_lists_checks_lengths_dtypes_and_shapes():
    a = list_ops.tensor_list_from_tensor(tf.constant([[1.0, 2.0], [3.0, 4.0]]), [2])
    b = list_ops.tensor_list_set_item(list_ops.tensor_list_reserve([2], 2, f32), 1,
                                      tf.constant([10.0, 20.0]))
    np.testing.assert_array_equal(stacked(list_grad.add_list_gradients([a, b])),
                                  [[1, 2], [13, 24]])
    for other, what in [(list_ops.tensor_list_from_tensor(tf.ones([1, 2]), [2]),
                         "different lengths"),
                        (list_ops.tensor_list_from_tensor(tf.ones([2, 2], tf.int32), [2]),
                         "different dtypes"),
                        (list_ops.tensor_list_from_tensor(tf.ones([2, 3]), [3]),
                         "incompatible element")]:
        with pytest.raises(InvalidArgumentError, match=f"TensorListAddN.*{what}"):
            list_grad.add_list_gradients([a, other])


def test_dispatch_still_rejects_kernel_outputs_that_are_not_arrays():
    cpu, op = registry.lookup("CPU:0"), list_ops.TENSOR_LIST_LENGTH
    with pytest.raises(InternalError, match="not a supported array"):
        dispatch.wrap_output(object(), cpu, op)
    assert dispatch.wrap_output(list_ops.TensorList([], 0, f32, None), cpu, op).dtype == tf.variant


# -- a differential test against a Python-list model ----------------------------------------------

def _model_stack(model):
    return np.array([np.zeros(2) if v is None else v for v in model]).reshape(-1, 2)


@given(data=st.data())
def test_list_ops_match_a_python_list_model_and_old_versions_never_change(data):
    counter = iter(range(1, 10_000))

    def fresh():
        k = float(next(counter))
        return np.array([k, -k], np.float32)

    start = data.draw(st.sampled_from(["empty", "reserve", "from_tensor"]))
    if start == "empty":
        versions = [(list_ops.empty_tensor_list([2], f32), [])]
    elif start == "reserve":
        n = data.draw(st.integers(0, 3))
        versions = [(list_ops.tensor_list_reserve([2], n, f32), [None] * n)]
    else:
        rows = np.stack([fresh() for _ in range(data.draw(st.integers(1, 3)))])
        versions = [(list_ops.tensor_list_from_tensor(tf.constant(rows), [2]), list(rows))]
    for _ in range(data.draw(st.integers(1, 30))):
        # Mostly the newest version (the in-place path), sometimes any older one.
        pick = data.draw(st.one_of(st.just(len(versions) - 1),
                                   st.integers(0, len(versions) - 1)))
        lst, model = versions[pick]
        op = data.draw(st.sampled_from(["push", "push", "pop", "set", "get", "stack", "length"]))
        if op == "push":
            value = fresh()
            versions.append((list_ops.tensor_list_push_back(lst, tf.constant(value)),
                             model + [value]))
        elif op in ("get", "set"):
            index = data.draw(st.integers(-1, len(model)))
            if not 0 <= index < len(model):
                with pytest.raises(InvalidArgumentError, match="in a list with"):
                    if op == "get":
                        list_ops.tensor_list_get_item(lst, index, f32)
                    else:
                        list_ops.tensor_list_set_item(lst, index, tf.constant(fresh()))
            elif op == "get":
                expected = model[index] if model[index] is not None else np.zeros(2)
                np.testing.assert_array_equal(
                    list_ops.tensor_list_get_item(lst, index, f32).numpy(), expected)
            else:
                value = fresh()
                changed = list(model)
                changed[index] = value
                versions.append((list_ops.tensor_list_set_item(lst, index, tf.constant(value)),
                                 changed))
        elif op == "pop":
            if not model:
                with pytest.raises(InvalidArgumentError, match="pop from an empty list"):
                    list_ops.tensor_list_pop_back(lst, f32)
            else:
                rest, last = list_ops.tensor_list_pop_back(lst, f32)
                expected = model[-1] if model[-1] is not None else np.zeros(2)
                np.testing.assert_array_equal(last.numpy(), expected)
                versions.append((rest, model[:-1]))
        elif op == "stack":
            np.testing.assert_array_equal(stacked(lst), _model_stack(model))
        else:
            assert int(list_ops.tensor_list_length(lst)) == len(model)
    for lst, model in versions:  # every version anyone still holds reads as it did
        np.testing.assert_array_equal(stacked(lst), _model_stack(model))


# -- in-place reuse never changes a list someone holds ---------------------------------------------

def test_pushing_twice_onto_one_list_leaves_both_results_intact():
    a, b = tf.constant([1.0, 1.0]), tf.constant([2.0, 2.0])
    l0 = list_ops.empty_tensor_list([2], f32)
    l1 = list_ops.tensor_list_push_back(l0, a)
    l2 = list_ops.tensor_list_push_back(l0, b)
    np.testing.assert_array_equal(stacked(l1), [[1, 1]])
    np.testing.assert_array_equal(stacked(l2), [[2, 2]])
    assert int(list_ops.tensor_list_length(l0)) == 0
    # Pushing onto a list that is held: the holder still sees its own elements.
    l3 = list_ops.tensor_list_push_back(l1, b)
    l4 = list_ops.tensor_list_push_back(l1, a)
    np.testing.assert_array_equal(stacked(l1), [[1, 1]])
    np.testing.assert_array_equal(stacked(l3), [[1, 1], [2, 2]])
    np.testing.assert_array_equal(stacked(l4), [[1, 1], [1, 1]])


def test_pop_then_push_never_overwrites_the_popped_list():
    full = pushed([1.0], [2.0], [3.0])
    rest, _ = list_ops.tensor_list_pop_back(full, f32)
    again = list_ops.tensor_list_push_back(rest, tf.constant([9.0]))
    np.testing.assert_array_equal(stacked(full), [[1], [2], [3]])
    np.testing.assert_array_equal(stacked(again), [[1], [2], [9]])
    held = full.numpy()  # holding the value object itself counts too
    device = full._device
    del full
    rest2, _ = list_ops.tensor_list_pop_back(again, f32)
    list_ops.tensor_list_push_back(rest2, tf.constant([7.0]))
    np.testing.assert_array_equal([device.to_host(e) for e in held.elements()], [[1], [2], [3]])


def test_set_item_copies_and_leaves_the_input_list_alone():
    lst = pushed([1.0], [2.0])
    changed = list_ops.tensor_list_set_item(lst, 0, tf.constant([5.0]))
    np.testing.assert_array_equal(stacked(lst), [[1], [2]])
    np.testing.assert_array_equal(stacked(changed), [[5], [2]])
    assert storage(changed) is not storage(lst)


@pytest.mark.cpu_only(reason="asserts that pushes reuse one storage object; a simulated GPU's "
                              "kernels get copies of a list's elements, never its storage")
def test_a_push_loop_appends_to_one_storage():
    lst = list_ops.empty_tensor_list([2], f32)
    first = storage(lst)
    x = tf.constant([1.0, 2.0])
    for _ in range(1000):
        lst = list_ops.tensor_list_push_back(lst, x)
    assert storage(lst) is first and len(first) == 1000


@pytest.mark.cpu_only(reason="asserts storage object identity; a simulated GPU's kernels get "
                              "copies of a list's elements, never its storage")
def test_calibration_tells_a_storage_one_list_holds_from_a_shared_one():
    if sys.implementation.name == "cpython" and sys.version_info < (3, 14):
        assert list_ops.storage_reuse()
    lst = pushed([1.0], [2.0], [3.0])
    rest, _ = list_ops.tensor_list_pop_back(lst, f32)
    before = id(storage(rest))  # (an id: holding the storage would make it shared)
    del lst  # rest is now the only list on that storage: a push may drop the popped slot
    again = list_ops.tensor_list_push_back(rest, tf.constant([4.0]))
    if list_ops.storage_reuse():
        assert id(storage(again)) == before and storage(rest) is storage(again)
    np.testing.assert_array_equal(stacked(again), [[1], [2], [4]])
    np.testing.assert_array_equal(stacked(rest), [[1], [2]])


def test_without_calibration_pushes_copy_and_stay_correct(monkeypatch):
    monkeypatch.setattr(list_ops, "_SOLE_VIEW", None)
    lst = pushed([1.0], [2.0])
    rest, _ = list_ops.tensor_list_pop_back(lst, f32)
    before = id(storage(rest))
    del lst
    again = list_ops.tensor_list_push_back(rest, tf.constant([4.0]))
    assert storage(again) is not storage(rest) and id(storage(rest)) == before
    np.testing.assert_array_equal(stacked(again), [[1], [4]])
    np.testing.assert_array_equal(stacked(rest), [[1]])


def test_concurrent_pushes_onto_one_list_each_keep_their_own_elements():
    """Threads push onto the same list at once, many times: every push may find the storage
    ending where the list ends, and only one of them may append there."""
    threads, rounds = 4, 300
    values = [tf.constant([float(k + 1)]) for k in range(threads)]
    bases = [list_ops.tensor_list_from_tensor(tf.zeros([2, 1]), [1]) for _ in range(rounds)]
    results = [[None] * threads for _ in range(rounds)]
    barrier = threading.Barrier(threads)

    def work(k):
        for r, base in enumerate(bases):
            barrier.wait()
            results[r][k] = list_ops.tensor_list_push_back(base, values[k])

    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races must happen
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        sys.setswitchinterval(interval)
    for base, pushed_lists in zip(bases, results):
        assert int(list_ops.tensor_list_length(base)) == 2
        for k, lst in enumerate(pushed_lists):
            np.testing.assert_array_equal(stacked(lst), [[0], [0], [k + 1]])


def test_a_push_that_loses_the_race_for_the_end_of_the_storage_copies():
    # Without the GIL another thread's append can land between the length check and this
    # push's append: simulated by a storage whose append lets "another thread" go first.
    class Contended(list):
        def append(self, item):
            super().append(np.full(1, -1.0, np.float32))
            super().append(item)

    first, item = np.zeros(1, np.float32), np.ones(1, np.float32)
    lost = list_ops._push_back_kernel(np, list_ops.TensorList(Contended([first]), 1, f32, [1]),
                                      item)
    assert len(lost) == 2 and lost.elements()[0] is first and lost.elements()[1] is item


def test_a_list_moves_between_devices(logical_cpus):
    logical_cpus(2)
    with tf.device("CPU:0"):
        lst = pushed([1.0, 2.0])
    with tf.device("CPU:1"):
        more = list_ops.tensor_list_push_back(lst, tf.constant([3.0, 4.0]))
        out = list_ops.tensor_list_stack(more, f32)
    assert (lst.device, more.device, out.device) == ("CPU:0", "CPU:1", "CPU:1")
    np.testing.assert_array_equal(out.numpy(), [[1, 2], [3, 4]])
    # The list was copied to CPU:1 element by element, as any input is copied to the op's device.
    assert not np.shares_memory(more.numpy().elements()[0], lst.numpy().elements()[0])
    # Unscoped, a list op runs on the default device (GPU:0 where there is one): the list's
    # elements are copied there.
    unscoped = list_ops.tensor_list_stack(lst, f32)
    assert unscoped.device == registry.default_device().name
    np.testing.assert_array_equal(unscoped.numpy(), [[1, 2]])
    np.testing.assert_array_equal(stacked(lst), [[1, 2]])


def test_gradients_flow_through_a_list_moved_between_devices(logical_cpus):
    logical_cpus(2)
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.device("CPU:0"):
            lst = list_ops.tensor_list_push_back(list_ops.empty_tensor_list([2], f32), x * 3.0)
        with tf.device("CPU:1"):
            item = list_ops.tensor_list_get_item(lst, 0, f32)
        y = tf.reduce_sum(item * item)  # 9 x^2
    grad = tape.gradient(y, x)
    np.testing.assert_allclose(grad.numpy(), [18.0, 36.0])


# -- shape inference on partial shapes -----------------------------------------------------------

def test_inference_from_shapes_and_dtypes_alone():
    stack = list_ops.TENSOR_LIST_STACK.infer
    assert stack(LIST, element_dtype=f32, num_elements=-1, element_shape=(None, 2)).shape \
        == [None, None, 2]
    assert stack(LIST, element_dtype=f32, num_elements=3, element_shape=(2,)).shape == [3, 2]
    assert stack(LIST, element_dtype=f32, num_elements=3, element_shape=None).shape.rank is None
    item = list_ops.TENSOR_LIST_GET_ITEM.infer(LIST, TensorSpec(None, tf.int32), element_dtype=f64,
                                               element_shape=(None,))
    assert item.dtype == f64 and item.shape == [None]
    rest, last = list_ops.TENSOR_LIST_POP_BACK.infer(LIST, element_dtype=tf.int32,
                                                     element_shape=None)
    assert rest.dtype == tf.variant and rest.shape == () and last.shape.rank is None
    assert (list_ops.TENSOR_LIST_LENGTH.infer(TensorSpec(None, tf.variant))
            == TensorSpec((), tf.int32))
    from_tensor = list_ops.TENSOR_LIST_FROM_TENSOR.infer
    assert from_tensor(TensorSpec([None, None], f32), element_shape=(3,)).dtype == tf.variant
    assert from_tensor(TensorSpec(None, f32), element_shape=(3,)).dtype == tf.variant
    assert list_ops.TENSOR_LIST_PUSH_BACK.infer(LIST, TensorSpec([None, 2], f32)) == LIST
    assert list_ops.TENSOR_LIST_SET_ITEM.infer(LIST, TensorSpec((), tf.int32),
                                               TensorSpec(None, f32)) == LIST
    assert list_ops.TENSOR_LIST_RESERVE.infer(TensorSpec(None, tf.int32), element_dtype=f32,
                                              element_shape=None) == LIST
    assert list_grad.TENSOR_LIST_ADD_N.infer(LIST, LIST, LIST) == LIST


@pytest.mark.parametrize("call, message", [
    (lambda: list_ops.TENSOR_LIST_FROM_TENSOR.infer(TensorSpec([None, 3], f32),
                                                    element_shape=(4,)),
     "Specified a list with shape \\[4\\] from a tensor with shape \\[3\\]"),
    (lambda: list_ops.TENSOR_LIST_FROM_TENSOR.infer(TensorSpec((), f32), element_shape=None),
     "at least a vector"),
    (lambda: list_ops.TENSOR_LIST_GET_ITEM.infer(LIST, TensorSpec([None], tf.int32),
                                                 element_dtype=f32, element_shape=None),
     "index must be a scalar"),
    (lambda: list_ops.TENSOR_LIST_SET_ITEM.infer(LIST, TensorSpec((), tf.int64),
                                                 TensorSpec((), f32)),
     "int32 tensor but is a int64"),
    (lambda: list_ops.TENSOR_LIST_PUSH_BACK.infer(TensorSpec((), f32), TensorSpec((), f32)),
     "variant tensor but is a float32"),
    (lambda: list_ops.TENSOR_LIST_PUSH_BACK.infer(TensorSpec([None], tf.variant),
                                                  TensorSpec((), f32)),
     "handle must be a scalar"),
    (lambda: list_ops.TENSOR_LIST_PUSH_BACK.infer(LIST, TensorSpec((), tf.resource)),
     "numeric or bool"),
    (lambda: list_ops.TENSOR_LIST_RESERVE.infer(TensorSpec([2], tf.int32), element_dtype=f32,
                                                element_shape=None),
     "num_elements must be a scalar"),
    (lambda: list_ops.TENSOR_LIST_STACK.infer(TensorSpec((), tf.int32), element_dtype=f32,
                                              num_elements=-1, element_shape=None),
     "variant tensor"),
])
def test_inference_rejects_what_the_kernels_reject(call, message):
    with pytest.raises(InvalidArgumentError, match=message):
        call()


# -- gradients -------------------------------------------------------------------------------------


A, B = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)


def _grads(build, persistent=False):
    a, b = tf.constant(A), tf.constant(B)
    with tf.GradientTape(persistent=persistent) as tape:
        tape.watch([a, b])
        loss = build(a, b)
    return [g.numpy() if g is not None else None for g in tape.gradient(
        loss, [a, b], unconnected_gradients=tf.UnconnectedGradients.ZERO)]


def _two(a, b):
    return list_ops.tensor_list_push_back(
        list_ops.tensor_list_push_back(list_ops.empty_tensor_list([2], f32), a), b)


def test_list_outputs_are_followed_by_the_tape():
    a = tf.constant(A)
    with tf.GradientTape() as tape:
        tape.watch(a)
        lst = list_ops.tensor_list_push_back(list_ops.empty_tensor_list([2], f32), a)
        loss = tf.reduce_sum(list_ops.tensor_list_stack(lst, f32) * 3.0)
    assert lst._tape_id != 0
    np.testing.assert_array_equal(tape.gradient(loss, a).numpy(), [3.0, 3.0])


# Expected values: TensorFlow 2.21's GradientTape on the same computations.
def test_gradient_of_a_popped_list_whose_element_is_unused():
    def build(a, b):
        rest, _ = list_ops.tensor_list_pop_back(
            list_ops.tensor_list_from_tensor(tf.stack([a, b]), [2]), f32)
        return tf.reduce_sum(list_ops.tensor_list_stack(rest, f32, element_shape=[2]))
    ga, gb = _grads(build)
    np.testing.assert_array_equal(ga, [1, 1])
    np.testing.assert_array_equal(gb, [0, 0])


def test_gradient_of_overwritten_and_read_back_items():
    weights = tf.constant([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])

    def overwritten(a, b):
        lst = list_ops.tensor_list_set_item(list_ops.tensor_list_reserve([2], 3, f32), 1, a)
        return tf.reduce_sum(
            list_ops.tensor_list_stack(list_ops.tensor_list_set_item(lst, 1, b), f32) * weights)

    def read_back(a, b):
        lst = list_ops.tensor_list_set_item(list_ops.tensor_list_reserve([2], 3, f32), 1, a)
        return tf.reduce_sum(list_ops.tensor_list_get_item(lst, 1, f32) * 3.0)

    ga, gb = _grads(overwritten)
    np.testing.assert_array_equal(ga, [0, 0])
    np.testing.assert_array_equal(gb, [2, 2])
    ga, gb = _grads(read_back)
    np.testing.assert_array_equal(ga, [3, 3])
    np.testing.assert_array_equal(gb, [0, 0])


def test_gradient_with_respect_to_a_list_is_a_list():
    a, b = tf.constant(A), tf.constant(B)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        lst = _two(a, b)
        x = list_ops.tensor_list_get_item(lst, 0, f32)
    grad = tape.gradient(x, lst)
    assert grad.dtype == tf.variant
    np.testing.assert_array_equal(stacked(grad, element_shape=[2]), [[1, 1], [0, 0]])


def test_gradient_of_a_pop_whose_list_is_unused():
    def build(a, b):
        _, x = list_ops.tensor_list_pop_back(_two(a, b), f32)
        return tf.reduce_sum(x * x)
    ga, gb = _grads(build)
    np.testing.assert_array_equal(ga, [0, 0])
    np.testing.assert_array_equal(gb, [6, 8])

    def pop_twice(a, b):
        rest, x = list_ops.tensor_list_pop_back(_two(a, b), f32)
        _, y = list_ops.tensor_list_pop_back(rest, f32)
        return tf.reduce_sum(x * y)
    ga, gb = _grads(pop_twice)
    np.testing.assert_array_equal(ga, [3, 4])
    np.testing.assert_array_equal(gb, [1, 2])


def test_gradients_of_a_list_read_twice_are_summed():
    def two_gets(a, b):
        lst = _two(a, b)
        x = list_ops.tensor_list_get_item(lst, 0, f32)
        y = list_ops.tensor_list_get_item(lst, 1, f32)
        return tf.reduce_sum(x * 3.0 + y * 5.0)

    def both_versions(a, b):
        l0 = list_ops.tensor_list_push_back(list_ops.empty_tensor_list([2], f32), a)
        l1 = list_ops.tensor_list_push_back(l0, b)
        return (tf.reduce_sum(list_ops.tensor_list_stack(l1, f32))
                + tf.reduce_sum(list_ops.tensor_list_stack(l0, f32) * 2.0))

    ga, gb = _grads(two_gets)
    np.testing.assert_array_equal(ga, [3, 3])
    np.testing.assert_array_equal(gb, [5, 5])
    ga, gb = _grads(both_versions)
    np.testing.assert_array_equal(ga, [3, 3])
    np.testing.assert_array_equal(gb, [1, 1])


def _loop(x, w):
    """A small recurrence through a list: push in a loop, read back every element, pop."""
    lst = list_ops.empty_tensor_list([2], f64)
    h = x
    for _ in range(3):
        h = tf.tanh(h * w)
        lst = list_ops.tensor_list_push_back(lst, h)
    total = list_ops.tensor_list_get_item(lst, 0, f64) * list_ops.tensor_list_get_item(lst, 2, f64)
    rest, last = list_ops.tensor_list_pop_back(lst, f64)
    return total + last, list_ops.tensor_list_stack(rest, f64)


def test_a_recurrence_through_a_list_matches_finite_differences():
    check_gradient(_loop, [np.array([0.3, -0.7]), np.array([1.1, 0.4])])


def test_second_order_through_lists():
    def fn(x, y):
        lst = list_ops.tensor_list_from_tensor(tf.stack([x * y, y * y]), [2])
        rest, last = list_ops.tensor_list_pop_back(
            list_ops.tensor_list_push_back(lst, x * x * x), f64)
        return list_ops.tensor_list_stack(rest, f64) * last
    check_second_order(fn, [np.array([0.5, -1.2]), np.array([0.8, 0.3])])
