"""Resource variables: creation, tensor behaviour, updates, snapshots, creators, deleters,
atomicity, and tape integration (≈ tf.Variable)."""

import gc
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager as tf
from eager import tensor as tensor_module
from eager.devices import registry
from eager.ops import resource_ops
from eager.variables import prioritized_creator_scope
from eager.core.dispatch import execute

# -- creation --------------------------------------------------------------------------------------


def test_dtype_shape_name_and_trainable_follow_tensorflow():
    v = tf.Variable([1.0, 2.0], name="q")
    assert (v.dtype, v.shape, v.name, v.trainable, v.device) == (
        tf.float32, (2,), "q:0", True, registry.default_device().name)
    assert tf.Variable(3).dtype == tf.int32 and tf.Variable(3).trainable
    assert tf.Variable(1.0, name="q").name == "q:0"  # names are not unique, and not keys
    assert tf.Variable(np.zeros(3)).dtype == tf.float64
    assert tf.Variable(lambda: tf.ones([2, 2])).shape == (2, 2)
    assert tf.Variable(1.0, trainable=False).trainable is False
    assert tf.Variable(2, dtype=tf.float32).dtype == tf.float32


def test_positional_arguments_are_tensorflows():
    v = tf.Variable(1.0, False, True, None, "pos")
    assert (v.trainable, v.name) == (False, "pos:0")
    with pytest.raises(TypeError, match="multiple values"):
        tf.Variable(1.0, trainable=True, initial_value=2.0)


@pytest.mark.parametrize("kwargs", [dict(variable_def=object()), dict(import_scope="x"),
                                    dict(caching_device="CPU:0"),
                                    dict(synchronization=tf.VariableSynchronization.ON_READ),
                                    dict(aggregation=tf.VariableAggregation.SUM)])
def test_unsupported_arguments_raise_not_implemented(kwargs):
    with pytest.raises(NotImplementedError):
        tf.Variable(1.0, **kwargs)


def test_bad_creation_arguments():
    with pytest.raises(ValueError, match="initial_value must be specified"):
        tf.Variable()
    with pytest.raises(ValueError, match="not compatible"):
        tf.Variable([1.0, 2.0], shape=[3])
    with pytest.raises(ValueError, match="constraint"):
        tf.Variable(1.0, constraint=3)
    with pytest.raises(ValueError):
        tf.Variable(object())


def test_unknown_shape_with_validate_shape_false_allows_reshaping_assigns():
    v = tf.Variable([1.0, 2.0], validate_shape=False)
    assert v.shape.rank is None
    v.assign([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("shape", [None, [None], [None, 2]])
def test_a_partially_known_shape_argument_allows_assigns_that_fit_it(shape):
    """As TensorFlow: `shape=` wider than the initial value's makes `assign` skip the run-time
    shape check (its Python passes validate_shape only for fully defined shapes); the static
    shape still refuses values that do not fit it."""
    v = tf.Variable(np.zeros((2, 2) if shape and len(shape) == 2 else (2,)),
                    shape=tf.TensorShape(shape))
    assert v.shape == tf.TensorShape(shape)
    value = np.arange(6.0).reshape(3, 2) if shape and len(shape) == 2 else np.arange(5.0)
    v.assign(value)
    np.testing.assert_array_equal(v.numpy(), value)
    np.testing.assert_array_equal(v.read_value().numpy(), value)
    if shape:
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
            v.assign(np.zeros((1, 1, 1)))


def test_variables_live_on_the_scope_device(logical_cpus):
    logical_cpus(2)
    with tf.device("CPU:1"):
        v = tf.Variable([1.0, 2.0])
    assert v.device == "CPU:1"
    assert v.read_value().device == "CPU:1"
    with tf.device("CPU:0"):
        v.assign_add([1.0, 1.0])  # ops on a resource run where the resource lives
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])


# -- a variable acts as a tensor ------------------------------------------------------------------


def test_operators_conversion_and_numpy_interop():
    v = tf.Variable([1.0, 2.0])
    np.testing.assert_array_equal((v + 1.0).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal((2.0 * v).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(tf.matmul(tf.reshape(v, [1, 2]), tf.ones([2, 1])).numpy(),
                                  [[3.0]])
    np.testing.assert_array_equal((v == tf.constant([1.0, 5.0])).numpy(), [True, False])
    np.testing.assert_array_equal(np.asarray(v), [1.0, 2.0])
    np.testing.assert_array_equal(tf.reduce_sum(v).numpy(), 3.0)
    assert float(v[1]) == 2.0 and len(v) == 2
    assert [float(x) for x in v] == [1.0, 2.0]
    assert tf.convert_to_tensor(v).dtype == tf.float32
    with pytest.raises(ValueError, match="Incompatible type conversion"):
        tf.convert_to_tensor(v, dtype=tf.int32)


_TENSOR_VARIABLE_OPERATORS = {"+": (lambda a, b: a + b, tf.add),
                               "-": (lambda a, b: a - b, tf.subtract),
                               "*": (lambda a, b: a * b, tf.multiply),
                               "/": (lambda a, b: a / b, tf.divide)}


@pytest.mark.parametrize("symbol", sorted(_TENSOR_VARIABLE_OPERATORS))
@pytest.mark.parametrize("device", ["default", "simulated GPU"])
def test_a_tensor_with_a_variable_takes_the_operators_path_and_matches_the_op_library(
        symbol, device, request, no_inference_check, monkeypatch):
    """`x @ w + b` with a variable `b`: the tensor's operator leaves it to the variable's
    reflected operator, which reads and comes back to the tensor's operator (its fast path on
    the CPU, its launch on a GPU) instead of converting the variable in the op library. Values,
    gradients and errors are the op library's."""
    if device == "simulated GPU":
        request.getfixturevalue("simulated_gpu")
    operator, library = _TENSOR_VARIABLE_OPERATORS[symbol]
    xn, vn = np.array([1.5, -2.0, 3.0, 4.0], np.float32), np.array([0.5, 4.0, -1.0, 8.0],
                                                                    np.float32)
    x, v = tf.constant(xn), tf.Variable(vn)
    name = {"+": "add", "-": "sub", "*": "mul", "/": "truediv"}[symbol]
    calls = []
    original = getattr(tensor_module._LIBRARY, name)
    monkeypatch.setattr(tensor_module._LIBRARY, name,
                        lambda a, b: calls.append((type(a), type(b))) or original(a, b))
    got = operator(x, v)
    assert calls == [], "the operators' fast path was not taken"
    want = library(x, v)
    assert (got.dtype, got.device, got.shape) == (want.dtype, want.device, want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(got.numpy(), operator(xn, vn))
    # Under a tape: the same gradients for the tensor and the variable.
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        fast = tf.reduce_sum(operator(x, v) * operator(x, v))
        slow = tf.reduce_sum(library(x, v) * library(x, v))
    for g_fast, g_slow in zip(tape.gradient(fast, [x, v]), tape.gradient(slow, [x, v])):
        np.testing.assert_allclose(g_fast.numpy(), g_slow.numpy(), rtol=1e-6)
    # The variable's dtype differs: the op library's error, operands in the written order.
    w = tf.Variable(vn.astype(np.float64))
    with pytest.raises(Exception) as fast_error:
        operator(x, w)
    with pytest.raises(Exception) as slow_error:
        library(x, w)
    assert type(fast_error.value) is type(slow_error.value)
    assert str(fast_error.value) == str(slow_error.value)
    assert "float32" in str(fast_error.value) and "float64" in str(fast_error.value)
    # A Python number on the left still goes through the variable's read.
    np.testing.assert_array_equal(operator(2.0, v).numpy(), operator(np.float32(2.0), vn))


def test_in_place_python_operators_raise_like_tensorflow():
    v = tf.Variable(1.0)
    with pytest.raises(RuntimeError, match="assign_add"):
        v += 1.0
    with pytest.raises(RuntimeError, match="assign_sub"):
        v -= 1.0
    assert float(v) == 1.0


def test_variables_are_unhashable_but_have_refs():
    v = tf.Variable(1.0)
    with pytest.raises(TypeError, match="unhashable"):
        hash(v)
    assert {v.ref(): 1}[v.ref()] == 1


def test_repr_names_the_variable():
    device = registry.default_device().name  # where unscoped variables live: GPU:0 if any
    where = "" if device == "CPU:0" else f", device={device}"
    assert repr(tf.Variable([1.0, 2.0], name="q")) == (  # TensorFlow's, with eager's name
        f"<eager.Variable 'q:0' shape=(2,) dtype=float32{where}, "
        "numpy=array([1., 2.], dtype=float32)>")


# -- updates and chained unread variables --------------------------------------------------------


def test_assign_family_and_chaining():
    v = tf.Variable([1.0, 2.0])
    v.assign([5.0, 6.0])
    v.assign_add([1.0, 1.0])
    v.assign_sub(tf.constant([2.0, 2.0]))
    np.testing.assert_array_equal(v.numpy(), [4.0, 5.0])
    chained = tf.Variable(0.0).assign(1.0).assign_add(2.0)
    assert float(chained) == 3.0
    assert v.assign(1.0 * np.ones(2), read_value=False) is None


def test_an_unread_variable_sees_the_value_right_after_its_update():
    v = tf.Variable(0.0)
    first = v.assign(1.0)
    v.assign(5.0)
    assert float(first) == 1.0  # not 5.0
    assert float(v) == 5.0
    second = v.assign_add(1.0)
    assert float(second) == 6.0


@pytest.fixture(params=["async dispatch", "simulated GPU"])
def queued_updates(request):
    """Where an update returns before it has run: asynchronous dispatch (the executor's
    thread runs it), and a device whose kernels run on its stream's worker."""
    if request.param == "async dispatch":
        with tf.experimental.async_scope():
            yield
    else:
        request.getfixturevalue("simulated_gpu")
        yield


def test_an_unread_variable_sees_the_value_right_after_a_queued_update(queued_updates):
    v = tf.Variable(0.0)
    m = tf.Variable(np.zeros((3, 2), np.float32))
    first = v.assign(1.0)
    v.assign(5.0)
    second = v.assign_add(1.0)
    third = v.assign_sub(2.0)
    chained = v.assign(10.0).assign_add(2.0)
    v.assign(-1.0)
    rows = m.scatter_update(tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1])))
    m.assign(np.full((3, 2), 7.0, np.float32))
    assert [float(first), float(second), float(third), float(chained)] == [1.0, 6.0, 4.0, 12.0]
    assert float(v) == -1.0
    np.testing.assert_array_equal(rows.numpy(), [[0, 0], [1, 2], [0, 0]])
    np.testing.assert_array_equal(m.numpy(), np.full((3, 2), 7.0))


def test_a_mismatched_update_fails_at_the_call_even_when_queued(queued_updates):
    """The shapes are known before the kernel runs, so the error does not wait for it (nor
    poison the queue for later, unrelated work)."""
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="AssignAddVariableOp.*shape"):
        v.assign_add([1.0, 2.0, 3.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="AssignSubVariableOp.*shape"):
        v.assign_sub(tf.ones([2, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \[\], shapes must be"):
        v.assign_add(1.0)  # not even a scalar broadcasts (TensorFlow's kernel rule)
    v.assign_add([1.0, 1.0])
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])



def test_a_mismatched_update_on_the_fast_path_is_the_op_error(cpu_only, no_inference_check):
    """The variable's own update path (no dispatch) applies the same rule as the kernel."""
    v = tf.Variable([1.0, 2.0])
    assert tf.core.context.FAST_PATH.kernel_only
    with pytest.raises(tf.errors.InvalidArgumentError, match="AssignAddVariableOp: Cannot "
                                                             "update variable with shape"):
        v.assign_add([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])

def test_a_mismatched_update_fails_when_traced():
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def bad():
        v.assign_add(tf.ones([3]))

    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot update variable"):
        bad()
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


#: TensorFlow 2.21's kernel message for an update whose value is not exactly the variable's
#: shape (AssignAddVariableOp / AssignSubVariableOp, `TensorShape::DebugString` shapes).
_UPDATE_MISMATCH = ("{op}: Cannot update variable with shape {var} using a Tensor with shape "
                    "{value}, shapes must be equal. [Op:{op}]")


@pytest.mark.parametrize("method,op", [("assign_add", "AssignAddVariableOp"),
                                       ("assign_sub", "AssignSubVariableOp")])
@pytest.mark.parametrize("value_shape,text", [((), "[]"), ((3,), "[3]"), ((1, 3), "[1,3]"),
                                              ((2, 1), "[2,1]")])
def test_an_update_that_only_broadcasts_is_tensorflows_error(method, op, value_shape, text):
    """TensorFlow's update kernels require the value's shape to equal the variable's: a value
    that numpy would broadcast (a scalar, a row) is an InvalidArgumentError, eagerly, and the
    variable is left as it was."""
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
        getattr(v, method)(np.ones(value_shape, np.float32))
    assert str(raised.value) == _UPDATE_MISMATCH.format(op=op, var="[2,3]", value=text)
    np.testing.assert_array_equal(v.numpy(), np.arange(6).reshape(2, 3))


def test_an_update_that_only_broadcasts_fails_on_the_fast_path(cpu_only, no_inference_check):
    """The variable's own update path (no dispatch, no inference) applies the kernel's rule."""
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    assert tf.core.context.FAST_PATH.kernel_only
    for value, text in ((tf.constant(1.0), "[]"), (tf.constant([1.0, 1.0]), "[2]"),
                        (tf.constant([[1.0], [1.0]]), "[2,1]")):
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            v.assign_add(value)
        assert str(raised.value) == _UPDATE_MISMATCH.format(op="AssignAddVariableOp",
                                                            var="[2,2]", value=text)
    np.testing.assert_array_equal(v.numpy(), [[1.0, 2.0], [3.0, 4.0]])


def test_an_update_that_only_broadcasts_fails_when_traced():
    """At trace time, as TensorFlow's shape function (which merges the two shapes); a `None`
    dimension defers the check to the kernel, which then raises the same error."""
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])

    @tf.function
    def add_row(row):
        v.assign_add(row)

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Cannot update variable with "
                                                             r"shape \[2,2\] using a Tensor with "
                                                             r"shape \[1,2\], shapes must be"):
        add_row(tf.constant([[1.0, 1.0]]))

    @tf.function(input_signature=[tf.TensorSpec([None, 2])])
    def add_rows(rows):
        v.assign_sub(rows)

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"AssignSubVariableOp: Cannot "
                                                             r"update variable with shape "
                                                             r"\[2,2\] using a Tensor with shape "
                                                             r"\[1,2\], shapes must be equal"):
        add_rows(tf.constant([[1.0, 1.0]]))
    add_rows(tf.ones([2, 2]))
    np.testing.assert_array_equal(v.numpy(), [[0.0, 1.0], [2.0, 3.0]])


_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@settings(max_examples=40, deadline=None)
@given(var_shape=_shapes, value_shape=_shapes, traced=st.booleans(),
       method=st.sampled_from(["assign_add", "assign_sub", "assign"]))
def test_updates_follow_tensorflows_shape_rule(var_shape, value_shape, traced, method):
    """Random shape pairs against TensorFlow's rule: `assign_add` / `assign_sub` take exactly the
    variable's shape (else InvalidArgumentError); `assign` a compatible one (else ValueError,
    raised in Python). Either way a refused update changes nothing."""
    v = tf.Variable(np.zeros(var_shape, np.float32))
    value = tf.ones(value_shape)
    update = getattr(v, method)
    run = tf.function(lambda x: update(x, read_value=False)) if traced else update
    if value_shape == var_shape:
        run(value)
        expected = {"assign_add": 1.0, "assign_sub": -1.0, "assign": 1.0}[method]
        np.testing.assert_array_equal(v.numpy(), np.full(var_shape, expected))
        return
    error = ValueError if method == "assign" else tf.errors.InvalidArgumentError
    with pytest.raises(error, match="Shape mismatch" if method == "assign" else "shapes must be "
                                                                                  "equal"):
        run(value)
    np.testing.assert_array_equal(v.numpy(), np.zeros(var_shape))


def test_bad_updates_are_clear_errors():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError) as raised:  # TensorFlow checks in Python
        v.assign([1.0, 2.0, 3.0])
    assert str(raised.value) == ("Cannot assign value to variable ' Variable:0': Shape mismatch."
                                 "The variable shape (2,), and the assigned value shape (3,) are "
                                 "incompatible.")  # TensorFlow 2.21's message, word for word
    with pytest.raises(tf.errors.InvalidArgumentError, match="AssignAddVariableOp"):
        v.assign_add([1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        v.assign(["a", "b"])
    with pytest.raises(TypeError):
        tf.Variable([1, 2]).assign([1.5, 2.5])  # float into int32, as TF
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])  # nothing half-applied


# -- snapshots, copy-on-write, copy-on-read --------------------------------------------------------


def _storage(v):
    """The variable's storage, once the updates queued on its device have run (on a device
    whose kernels run later, the storage changes when the stream gets to them)."""
    tf.experimental.sync_devices()
    return v._handle.device.resources.lookup(v._handle.uid)


def _address(array):
    """Where `array`'s buffer starts, in host (numpy) or device (cupy) memory: in-place updates
    and copy-on-write are the same kernels on every device."""
    interface = getattr(array, "__cuda_array_interface__", None) or array.__array_interface__
    return interface["data"][0]


def test_reads_are_snapshots():
    v = tf.Variable([1.0, 2.0])
    before = v.read_value()
    v.assign_add([10.0, 10.0])
    v.assign([7.0, 7.0])
    np.testing.assert_array_equal(before.numpy(), [1.0, 2.0])


def test_unshared_updates_are_in_place():
    v = tf.Variable(np.ones(1000, np.float32))
    address = _address(_storage(v).value)
    for _ in range(3):
        v.assign_sub(tf.constant(np.full(1000, 0.1, np.float32)), read_value=False)
    assert _address(_storage(v).value) == address, "an unshared variable was reallocated"
    np.testing.assert_allclose(v.numpy(), 0.7, rtol=1e-6)


@pytest.mark.cpu_only(reason="asserts that a read shares the variable's buffer, so the next "
                              "update copies; a simulated GPU's read copies into a new pool "
                              "block, so nothing shares it")
def test_shared_updates_copy():
    v = tf.Variable(np.ones(1000, np.float32))
    for _ in range(3):
        v.assign_sub(tf.constant(np.full(1000, 0.1, np.float32)), read_value=False)
    address = _address(_storage(v).value)
    held = v.read_value()  # now someone shares the buffer
    v.assign_add(tf.constant(np.ones(1000, np.float32)), read_value=False)
    assert _address(_storage(v).value) != address  # copy-on-write
    np.testing.assert_allclose(held.numpy(), 0.7, rtol=1e-6)


def test_sparse_access_switches_to_copy_on_read():
    v = tf.Variable(np.arange(12.0).reshape(4, 3))
    rows = v.sparse_read([3, 1])
    np.testing.assert_array_equal(rows.numpy(), [[9, 10, 11], [3, 4, 5]])
    assert _storage(v).copy_on_read
    read = v.read_value()
    v.scatter_update(tf.IndexedSlices(tf.constant(np.zeros((1, 3))), tf.constant([0])))
    np.testing.assert_array_equal(read.numpy()[0], [0.0, 1.0, 2.0])  # the read was a copy
    v.scatter_add(tf.IndexedSlices(tf.constant(np.ones((3, 3))), tf.constant([1, 1, 2])))
    np.testing.assert_array_equal(v.numpy()[:3], [[0, 0, 0], [5, 6, 7], [7, 8, 9]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[0\] = 9 is not in \[0, 4\)"):
        v.sparse_read([9]).numpy()  # (a device whose kernels run later reports it there)
    with pytest.raises(TypeError, match="IndexedSlices"):
        v.scatter_update([1.0])


def test_gather_of_a_variable_along_axis_0_is_its_sparse_read():
    # TensorFlow's tf.gather (and so tf.nn.embedding_lookup) gives a variable's rows through
    # ResourceGather: only those rows are read, the variable turns copy-on-read, and a bad
    # index names ResourceGather. Along another axis it gathers the variable's value.
    table = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    v = tf.Variable(table)
    for rows in (tf.gather(v, [3, 1]), tf.nn.embedding_lookup(v, [3, 1]),
                 tf.gather(v, [3, 1], axis=0), tf.gather(v, [3, 1], axis=tf.constant(0))):
        np.testing.assert_array_equal(rows.numpy(), table[[3, 1]])
    assert _storage(v).copy_on_read
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[1,0\] = 4 is not in \[0, 4\) \[Op:ResourceGather\]"):
        tf.gather(v, [[0], [4]]).numpy()
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"ResourceGather: indices dtype "
                                                             r"float32 is not in the list"):
        tf.gather(v, [1.0])
    w = tf.Variable(table)
    np.testing.assert_array_equal(tf.gather(w, [2, 0], axis=1).numpy(), table[:, [2, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:GatherV2\]"):
        tf.gather(w, [5], axis=-1).numpy()
    assert not _storage(w).copy_on_read
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.gather(v, [2, 2, 0]) * tf.constant([[1.0], [2.0], [3.0]]))
    grad = tape.gradient(loss, v)
    assert isinstance(grad, tf.IndexedSlices)
    np.testing.assert_array_equal(tf.convert_to_tensor(grad).numpy(),
                                  [[3, 3, 3], [0, 0, 0], [3, 3, 3], [0, 0, 0]])


def test_keras_embedding_gathers_the_tables_value_as_keras_3_does():
    # Keras 3's Embedding takes rows of the table's value (GatherV2): the table is not switched
    # to copy-on-read by the lookup.
    layer = tf.keras.layers.Embedding(5, 2)
    out = layer(tf.constant([[4, 0]]))
    np.testing.assert_array_equal(out.numpy()[0], layer.embeddings.numpy()[[4, 0]])
    assert not _storage(layer.embeddings).copy_on_read
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:GatherV2\]"):
        layer(tf.constant([7])).numpy()


# -- creators -------------------------------------------------------------------------------------


def test_creators_run_innermost_first_and_may_change_arguments():
    calls = []

    def outer(next_creator, **kwargs):
        calls.append("outer")
        kwargs["name"] = "renamed"
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        calls.append("inner")
        kwargs["trainable"] = False
        return next_creator(**kwargs)

    with tf.variable_creator_scope(outer):
        with tf.variable_creator_scope(inner):
            v = tf.Variable(1.0)
    assert calls == ["inner", "outer"]
    assert (v.name, v.trainable) == ("renamed:0", False)
    assert tf.Variable(1.0).name == "Variable:0"  # scopes are gone


def test_creator_priorities_and_arbitrary_results():
    order = []

    def high(next_creator, **kwargs):
        order.append("high")
        return next_creator(**kwargs)

    def low(next_creator, **kwargs):
        order.append("low")
        return "not a variable at all"

    with prioritized_creator_scope(high, priority=200):
        with tf.variable_creator_scope(low):
            result = tf.Variable(1.0)
    assert order == ["high", "low"] and result == "not a variable at all"


def test_creator_scopes_must_nest_and_be_callable():
    with pytest.raises(TypeError):
        with tf.variable_creator_scope(3):
            pass
    scope_a = tf.variable_creator_scope(lambda n, **k: n(**k))
    scope_b = tf.variable_creator_scope(lambda n, **k: n(**k))
    scope_a.__enter__()
    scope_b.__enter__()
    with pytest.raises(RuntimeError, match="proper nesting"):
        scope_a.__exit__(None, None, None)
    scope_b.__exit__(None, None, None)


# -- deleters and resource lifetime --------------------------------------------------------------


def test_dropping_a_variable_destroys_its_resource_even_in_a_cycle():
    gc.collect()
    base = tf.experimental.live_resource_count()
    v = tf.Variable(np.ones(10))
    assert tf.experimental.live_resource_count() == base + 1
    holder = {"v": v}
    holder["self"] = holder  # a reference cycle through the variable's owner
    del v, holder
    gc.collect()
    assert tf.experimental.live_resource_count() == base
    assert not hasattr(resource_ops.VariableStorage, "__del__")
    assert not hasattr(tf.Variable, "__del__") and not hasattr(type(tf.Variable(1.0)), "__del__")


@pytest.mark.cpu_only(reason="measures host allocations with tracemalloc (a GPU's buffers are "
                              "not traced) over 100k cycles")
def test_many_create_drop_cycles_leave_no_trace(no_inference_check):
    """100k create/drop cycles, one in ten inside a reference cycle: the live resource count,
    traced memory (over two traced windows) and the number of Python objects stay flat."""
    gc.collect()
    base = tf.experimental.live_resource_count()

    def churn(n):
        for i in range(n):
            v = tf.Variable(np.float32(i))
            if i % 10 == 0:
                cycle = [v]
                cycle.append(cycle)
        v = cycle = None  # noqa: F841 - drop the last ones before collecting
        gc.collect()

    churn(2000)  # warm caches before measuring
    tracemalloc.start()
    churn(10_000)
    first, _ = tracemalloc.get_traced_memory()
    churn(10_000)
    second, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert second - first < 100_000, f"traced memory grew by {second - first} bytes"
    objects = len(gc.get_objects())
    churn(80_000)
    assert len(gc.get_objects()) - objects < 100
    assert tf.experimental.live_resource_count() == base


def test_destruction_at_interpreter_exit_raises_nothing():
    code = ("import eager as tf\n"
            "a = tf.Variable([1.0, 2.0])\n"
            "b = [tf.Variable(3.0)]\n"
            "b.append(b)\n"
            "import sys; sys.modules['keep'] = a\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stderr == "", result.stderr


def test_reading_a_destroyed_variable_is_a_clear_error():
    v = tf.Variable(1.0)
    execute(resource_ops.DESTROY, (v.handle,))
    with pytest.raises(tf.errors.NotFoundError, match="does not exist"):
        v.read_value().numpy()  # (a device whose kernels run later reports it there)


# -- atomicity ----------------------------------------------------------------------------------


def test_concurrent_assign_adds_lose_no_update():
    v = tf.Variable(0, dtype=tf.int64)
    one = tf.constant(1, tf.int64)

    def worker():
        for _ in range(10_000):
            v.assign_add(one, read_value=False)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert int(v) == 80_000


def test_readers_racing_writers_never_see_a_mix_of_two_writes():
    n = 50_000
    v = tf.Variable(np.zeros(n))
    stop = threading.Event()
    torn = []

    def writer():
        k = 0
        while not stop.is_set():
            k += 1
            v.assign(np.full(n, float(k)), read_value=False)

    def reader():
        for _ in range(300):
            values = v.read_value().numpy()
            if values.min() != values.max():
                torn.append((values.min(), values.max()))

    w = threading.Thread(target=writer)
    readers = [threading.Thread(target=reader) for _ in range(2)]
    w.start()
    for r in readers:
        r.start()
    for r in readers:
        r.join()
    stop.set()
    w.join()
    assert not torn


# -- tapes ----------------------------------------------------------------------------------------


def test_reading_a_trainable_variable_inside_a_tape_watches_it():
    v = tf.Variable([1.0, 2.0])
    frozen = tf.Variable([3.0, 4.0], trainable=False)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v * v + frozen)
    assert [w is v for w in tape.watched_variables()] == [True]
    gv, gf = tape.gradient(y, [v, frozen])
    np.testing.assert_array_equal(gv.numpy(), [2.0, 4.0])
    assert gf is None


def test_watch_accessed_variables_false_needs_an_explicit_watch():
    v = tf.Variable(2.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = v * v
    assert tape.gradient(y, v) is None
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(v)
        y = v * v
    assert float(tape.gradient(y, v)) == 4.0


def test_sparse_read_gradients_are_indexed_slices():
    v = tf.Variable(np.arange(12.0).reshape(4, 3))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v.sparse_read([1, 1, 3]) * 2.0)
    g = tape.gradient(y, v)
    assert isinstance(g, tf.IndexedSlices)
    dense = tf.convert_to_tensor(g).numpy()
    np.testing.assert_array_equal(dense, [[0, 0, 0], [4, 4, 4], [0, 0, 0], [2, 2, 2]])
    zero = tf.GradientTape()
    with zero:
        unused = tf.constant(1.0) * 2.0
    np.testing.assert_array_equal(
        zero.gradient(unused, v, unconnected_gradients="zero").numpy(), np.zeros((4, 3)))


def test_name_scopes_prefix_variable_names_as_tensorflow():
    with tf.name_scope("outer") as scope:
        assert scope == "outer/"
        with tf.name_scope("inner"):
            v = tf.Variable(1.0, name="w")
        u = tf.Variable(1.0)
        with tf.name_scope("absolute/"):
            a = tf.Variable(1.0, name="a")
    assert (v.name, u.name, a.name) == ("outer/inner/w:0", "outer/Variable:0", "absolute/a:0")
    assert tf.Variable(1.0, name="w").name == "w:0"

    class Dense(tf.Module):
        def __init__(self):
            super().__init__()
            with self.name_scope:
                self.w = tf.Variable(1.0, name="w")

    assert Dense().w.name == "dense/w:0"
    with pytest.raises(ValueError):
        tf.name_scope("")


def test_watched_variables_once_each_in_read_order_for_many_variables():
    variables = [tf.Variable(float(i)) for i in range(300)]
    with tf.GradientTape() as tape:
        total = variables[0] * 1.0
        for v in reversed(variables):
            total = total + v * v
        for v in variables[:10]:  # read again: still listed once
            total = total + v
    watched = tape.watched_variables()
    assert len(watched) == 300
    assert watched[0] is variables[0]
    assert all(w is v for w, v in zip(watched[1:], reversed(variables[1:])))
    grads = tape.gradient(total, variables)
    expected = [2.0 * i + (2.0 if i == 0 else 1.0 if i < 10 else 0.0) for i in range(300)]
    np.testing.assert_allclose([g.numpy() for g in grads], expected)
    tape2 = tf.GradientTape(persistent=True)
    with tape2:
        variables[5].read_value()
    tape2.reset()
    assert tape2.watched_variables() == ()
    with tape2:
        variables[5].read_value()
    assert [w is variables[5] for w in tape2.watched_variables()] == [True]


def test_variable_operands_are_read_once_per_op_and_keep_typing_rules():
    v = tf.Variable([1.0, 2.0])
    reads = []
    original = type(v).value  # what tensor conversion calls

    def counting(self):
        reads.append(1)
        return original(self)

    type(v).value = counting
    try:
        np.testing.assert_array_equal(tf.add(v, tf.constant([1.0, 1.0])).numpy(), [2.0, 3.0])
        np.testing.assert_array_equal(tf.matmul(tf.reshape(v, [1, 2]), tf.ones([2, 1])).numpy(),
                                      [[3.0]])
        np.testing.assert_array_equal(tf.multiply(v, v).numpy(), [1.0, 4.0])
    finally:
        type(v).value = original
    assert len(reads) == 4  # one per operand position (v * v reads twice, as TensorFlow does)
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a int32 tensor"):
        tf.add(tf.Variable([1, 2]), tf.constant([1.0, 2.0]))
    np.testing.assert_array_equal(tf.add(v, [3.0, 4.0]).numpy(), [4.0, 6.0])  # a list: converted
