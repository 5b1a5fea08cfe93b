"""eager.TensorArray against TensorFlow 2.21: values, errors (TensorFlow's words), the eager and
the traced behaviour, loops and branches, and gradients against finite differences.

Every expected value and message below was read off TensorFlow 2.21 (CPU): `tf.TensorArray`
eagerly, and inside `tf.function(autograph=False)` for the traced cases. Where eager differs
on purpose the test says so (see eager.ops.tensor_array's module doc).
"""

import numpy as np
import pytest

import eager as tf
from eager.errors import InvalidArgumentError, OutOfRangeError
from eager.ops import list_bulk_ops, list_ops
from gradcheck import numeric_gradients

f32, f64 = tf.float32, tf.float64
IAE = InvalidArgumentError


def traced(fn):
    return tf.function(fn, autograph=False)


def values(t):
    return np.asarray(t.numpy())


# -- eagerly: TensorFlow's eager TensorArray ------------------------------------------------------

def test_unwritten_elements_read_as_zeros_of_the_element_shape():
    ta = tf.TensorArray(f32, size=3)
    ta = ta.write(0, [1.0, 2.0])
    np.testing.assert_array_equal(values(ta.read(1)), [0.0, 0.0])
    np.testing.assert_array_equal(values(ta.stack()), [[1, 2], [0, 0], [0, 0]])
    assert ta.element_shape == [2] and ta.dtype is f32 and ta.handle is None
    shaped = tf.TensorArray(f32, size=2, element_shape=[3])
    np.testing.assert_array_equal(values(shaped.read(0)), [0, 0, 0])
    np.testing.assert_array_equal(values(shaped.stack()), np.zeros((2, 3)))


def test_an_unwritten_element_of_unknown_shape_is_a_value_error():
    # TF: ValueError "Cannot convert a partially known TensorShape <unknown> to a Tensor."
    with pytest.raises(ValueError, match="partially known TensorShape <unknown>"):
        tf.TensorArray(f32, size=3).read(0)
    with pytest.raises(ValueError, match="never written"):
        tf.TensorArray(f32, size=2, infer_shape=False).write(0, [1.0]).stack()


def test_eager_writes_change_the_array_and_return_it():
    ta = tf.TensorArray(f32, size=2, clear_after_read=False)
    ta.write(0, 5.0)
    ta.write(1, 6.0)
    np.testing.assert_array_equal(values(ta.stack()), [5.0, 6.0])
    assert ta.write(0, 7.0) is ta and ta.identity() is ta
    np.testing.assert_array_equal(values(ta.read(0)), 7.0)  # written twice: the last value


def test_eager_index_errors():
    ta = tf.TensorArray(f32, size=3).write(0, [1.0, 2.0])
    cases = [
        (lambda: ta.write(3, [1.0, 2.0]),
         "Tried to write to index 3 but array is not resizeable and size is: 3"),
        (lambda: ta.write(-1, [1.0, 2.0]), "Writing to negative indices \\(index -1\\) is not "
                                           "allowed."),
        (lambda: ta.read(3), "Tried to read from index 3 but array size is: 3"),
        (lambda: ta.read(-1), "Reading from negative indices \\(index -1\\) is not allowed."),
    ]
    for call, message in cases:
        with pytest.raises(OutOfRangeError, match=message):
            call()
    with pytest.raises(TypeError, match="integers"):
        ta.read(1.0)
    np.testing.assert_array_equal(values(ta.read(tf.constant(1, tf.int64))), [0.0, 0.0])


def test_eager_dtype_and_shape_checks():
    ta = tf.TensorArray(f32, size=3).write(0, [1.0, 2.0])
    with pytest.raises(IAE, match="TensorArray dtype is float32 but Op is trying to write "
                                  "dtype int32"):
        ta.write(1, tf.constant([1, 2]))
    with pytest.raises(ValueError, match="Incompatible shape for value \\(\\(3,\\)\\), expected "
                                         "\\(\\(2,\\)\\)"):
        ta.write(1, [1.0, 2.0, 3.0])
    partial = tf.TensorArray(f32, size=2, element_shape=[None, 2])
    with pytest.raises(ValueError, match="Incompatible shape for value \\(\\(1, 3\\)\\), "
                                         "expected \\(\\(None, 2\\)\\)"):
        partial.write(0, [[1.0, 2.0, 3.0]])
    assert partial.write(0, [[1.0, 2.0]]).element_shape == [1, 2]
    loose = tf.TensorArray(f32, size=2, infer_shape=False).write(0, [1.0]).write(1, [1.0, 2.0])
    assert loose.element_shape.rank is None
    # Python values take the array's dtype; a value that cannot is TensorFlow's error.
    assert values(tf.TensorArray(f32, size=1).write(0, 3).read(0)) == 3.0
    assert values(tf.TensorArray(tf.int32, size=1).write(0, 2).read(0)) == 2
    with pytest.raises(IAE, match="TensorArray dtype is int32 but Op is trying to write dtype "
                                  "float32"):
        tf.TensorArray(tf.int32, size=1).write(0, 1.5)


def test_clear_after_read_empties_a_slot_when_read_eagerly():
    ta = tf.TensorArray(f32, size=2)  # clear_after_read defaults to True
    ta.write(0, 5.0)
    ta.write(1, 6.0)
    assert values(ta.read(0)) == 5.0
    with pytest.raises(IAE, match="Could not read index 0 twice because it was cleared after a "
                                  "previous read \\(perhaps try setting clear_after_read = "
                                  "false\\?\\)"):
        ta.read(0)
    np.testing.assert_array_equal(values(ta.stack()), [0.0, 6.0])  # TF: zeros where cleared
    assert values(ta.read(0)) == 0.0  # ... which stay there
    unwritten = tf.TensorArray(f32, size=2, element_shape=[2])
    np.testing.assert_array_equal(values(unwritten.read(1)), [0.0, 0.0])
    with pytest.raises(IAE, match="Could not read index 1 twice"):
        unwritten.read(1)
    rewritten = tf.TensorArray(f32, size=1).write(0, 1.0)
    rewritten.read(0)
    assert values(rewritten.write(0, 2.0).read(0)) == 2.0  # a write fills the slot again
    keep = tf.TensorArray(f32, size=1, clear_after_read=False).write(0, 5.0)
    assert values(keep.read(0)) == 5.0 and values(keep.read(0)) == 5.0


def test_dynamic_size_grows_on_writes_past_the_end():
    ta = tf.TensorArray(f32, size=0, dynamic_size=True)
    assert ta.dynamic_size is True and tf.TensorArray(f32, size=1).dynamic_size is False
    ta = ta.write(4, 1.0)
    assert values(ta.size()) == 5 and ta.size().dtype == tf.int32
    np.testing.assert_array_equal(values(ta.stack()), [0, 0, 0, 0, 1])
    appended = tf.TensorArray(f32, size=2, dynamic_size=True, clear_after_read=False)
    for i in range(5):
        appended = appended.write(i, float(i))
    np.testing.assert_array_equal(values(appended.stack()), [0, 1, 2, 3, 4])


def test_eager_unstack():
    ta = tf.TensorArray(f32, size=3).unstack([[1.0, 2.0], [3.0, 4.0]])
    assert values(ta.size()) == 2  # TF eager: unstack replaces the elements
    np.testing.assert_array_equal(values(ta.stack()), [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="Cannot unstack 2 tensors into a TensorArray of static "
                                         "size 0"):
        tf.TensorArray(f32, size=0).unstack([[1.0, 2.0], [3.0, 4.0]])
    grown = tf.TensorArray(f32, size=1, dynamic_size=True).unstack([[1.0, 2.0], [3.0, 4.0]])
    assert values(grown.size()) == 2
    with pytest.raises(ValueError, match="Argument `axis` = 0 not in range \\[0, 0\\)"):
        tf.TensorArray(f32, size=3).unstack(5.0)
    # Python ints take the array's dtype.
    np.testing.assert_array_equal(values(tf.TensorArray(f32, size=3).unstack([1, 2, 3]).stack()),
                                  [1.0, 2.0, 3.0])
    # Beyond TF's eager array (which accepts it and fails later): the element shape is checked.
    with pytest.raises(ValueError, match="Incompatible shape"):
        tf.TensorArray(f32, size=3, element_shape=[2]).unstack([1.0, 2.0, 3.0])


def test_eager_split_and_concat():
    def split():
        return tf.TensorArray(f32, size=3).split([1.0, 2.0, 3.0, 4.0, 5.0], [2, 0, 3])

    np.testing.assert_array_equal(values(split().read(2)), [3, 4, 5])
    np.testing.assert_array_equal(values(split().concat()), [1, 2, 3, 4, 5])
    cases = [
        (lambda: tf.TensorArray(f32, size=2).split([1.0, 2.0, 3.0], [[1, 2]]),
         "Expected lengths to be a vector, received shape: \\[1, 2\\]"),
        (lambda: tf.TensorArray(f32, size=1).split(1.0, [1]),
         "Expected value to be at least a vector, but received shape: \\[\\]"),
        (lambda: tf.TensorArray(f32, size=3).split([1.0, 2.0, 3.0, 4.0, 5.0], [2, 0, 2]),
         "Expected sum of lengths to be equal to values.shape\\[0\\], but sum of lengths is 4 "
         "and value's shape is: \\[5\\]"),
        (lambda: tf.TensorArray(f32, size=2).split([1.0, 2.0, 3.0, 4.0, 5.0], [2, 0, 3]),
         "TensorArray's size is not equal to the size of lengths \\(2 vs. 3\\), and the "
         "TensorArray is not marked as dynamically resizeable."),
    ]
    for call, message in cases:
        with pytest.raises(IAE, match=message):
            call()
    grown = tf.TensorArray(f32, size=1, dynamic_size=True).split([1.0, 2.0, 3.0], [1, 2])
    assert values(grown.size()) == 2
    loose = tf.TensorArray(f32, size=2, infer_shape=False).write(0, [1.0, 2.0]).write(1, [3.0])
    np.testing.assert_array_equal(values(loose.concat()), [1, 2, 3])
    rows = tf.TensorArray(f32, size=2, infer_shape=False).write(0, [[1.0, 2.0]])
    rows = rows.write(1, [[3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(values(rows.concat()), [[1, 2], [3, 4], [5, 6]])
    half = tf.TensorArray(f32, size=2).write(0, [1.0, 2.0])
    np.testing.assert_array_equal(values(half.concat()), [1, 2, 0, 0])
    with pytest.raises(IAE, match="Concat saw a scalar shape at index 0 but requires at least "
                                  "vectors."):
        tf.TensorArray(f32, size=2).write(0, 1.0).write(1, 2.0).concat()
    with pytest.raises(IAE, match="empty TensorArray"):
        tf.TensorArray(f32, size=0, element_shape=[2]).concat()


def test_eager_scatter_and_gather():
    scattered = tf.TensorArray(f32, size=4).scatter([3, 1], [[1.0], [2.0]])
    np.testing.assert_array_equal(values(scattered.stack()), [[0], [2], [0], [1]])
    with pytest.raises(OutOfRangeError, match="Tried to write to index 3 but array is not "
                                              "resizeable and size is: 2"):
        tf.TensorArray(f32, size=2).scatter([3, 1], [[1.0], [2.0]])
    with pytest.raises(OutOfRangeError, match="Writing to negative indices \\(index -1\\)"):
        tf.TensorArray(f32, size=2).scatter([-1], [1.0])
    grown = tf.TensorArray(f32, size=2, dynamic_size=True).scatter([3, 1], [[1.0], [2.0]])
    np.testing.assert_array_equal(values(grown.stack()), [[0], [2], [0], [1]])
    twice = tf.TensorArray(f32, size=3).scatter([1, 1], [5.0, 6.0])
    np.testing.assert_array_equal(values(twice.stack()), [0, 6, 0])  # the last row wins
    ta = tf.TensorArray(f32, size=0, dynamic_size=True).unstack([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(values(ta.gather([2, 0, 2])), [3, 1, 3])
    np.testing.assert_array_equal(values(ta.gather([-1])), [3])  # a Python list's indexing
    assert values(ta.gather([])).shape == (0,)
    with pytest.raises(IndexError, match="list index out of range"):
        ta.gather([5])


def test_eager_stack_of_an_empty_array():
    assert values(tf.TensorArray(f32, size=0).stack()).shape == (0,)
    assert values(tf.TensorArray(f32, size=0, element_shape=[2]).stack()).shape == (0, 2)
    with pytest.raises(IAE):
        tf.TensorArray(f32, size=2, infer_shape=False).write(0, [1.0, 2.0]).write(1, [3.0]).stack()


def test_eager_constructor_size_close_and_grad():
    with pytest.raises(ValueError, match="Size must be declared for TensorArrays when eager "
                                         "execution is enabled."):
        tf.TensorArray(f32)
    with pytest.raises(ValueError, match="TensorArray handles are not supported when eager "
                                         "execution is enabled."):
        tf.TensorArray(f32, size=2, handle=tf.constant(1.0))
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        tf.TensorArray(f32, size=2.0)
    assert values(tf.TensorArray(f32, size=-1).size()) == 0
    assert values(tf.TensorArray(f32, size=tf.constant(2)).size()) == 2
    assert values(tf.TensorArray(f32, size=2, flow=tf.constant(0.0)).size()) == 2  # ignored
    assert tf.TensorArray("float32", size=1).dtype is f32
    ta = tf.TensorArray(f32, size=2).write(0, 1.0)
    assert ta.close() is None and values(ta.size()) == 0
    with pytest.raises(NotImplementedError, match="not supported when executing eagerly"):
        ta.grad("x")
    ta.mark_used()
    np.testing.assert_array_equal(values(tf.TensorArray(tf.bool, size=2).write(0, True).stack()),
                                  [True, False])
    np.testing.assert_array_equal(values(tf.TensorArray(tf.int32, size=2).write(0, 7)
                                         .write(1, 8).stack()), [7, 8])
    with pytest.raises(TypeError):
        iter(tf.TensorArray(f32, size=2))
    with pytest.raises(TypeError):
        len(tf.TensorArray(f32, size=2))


def test_eager_arrays_under_asynchronous_dispatch():
    tf.config.experimental.set_synchronous_execution(False)
    try:
        ta = tf.TensorArray(f32, size=0, dynamic_size=True, clear_after_read=False)
        for i in range(5):
            ta = ta.write(i, tf.constant([float(i), 1.0]) * 2.0)
        assert values(ta.size()) == 5
        np.testing.assert_array_equal(values(ta.stack())[:, 0], [0, 2, 4, 6, 8])
        np.testing.assert_array_equal(values(ta.gather([4, 0])), [[8, 2], [0, 2]])
    finally:
        tf.config.experimental.set_synchronous_execution(True)


# -- traced: TensorFlow's graph TensorArray -----------------------------------------------------

def test_traced_reads_writes_and_the_shared_element_shape():
    @traced
    def f():
        ta = tf.TensorArray(f32, size=3)
        written = ta.write(0, [1.0, 2.0])
        # The element shape is one cell for both arrays (TF: both say (2,) now).
        assert written.element_shape == [2] and ta.element_shape == [2]
        assert written.flow.dtype == tf.variant and written.handle is None
        assert written.dynamic_size is None  # traced: as given
        return written.read(1), written.stack(), written.size()

    read, stacked, size = f()
    np.testing.assert_array_equal(values(read), [0, 0])
    np.testing.assert_array_equal(values(stacked), [[1, 2], [0, 0], [0, 0]])
    assert values(size) == 3


def test_traced_errors_have_tensorflows_words():
    cases = [
        (lambda: tf.TensorArray(f32, size=3).read(0), IAE,
         "Trying to read an uninitialized tensor but element_shape is not fully defined: "
         "<unknown> and no list element is set."),
        (lambda: tf.TensorArray(f32, size=3).write(0, [1.0, 2.0]).write(1, [1.0, 2.0, 3.0]),
         ValueError, "Inconsistent shapes: saw \\(3,\\) but expected \\(2,\\)"),
        (lambda: tf.TensorArray(f32, size=3).write(3, [1.0, 2.0]).stack(), IAE,
         "Trying to modify element 3 in a list with 3 elements."),
        (lambda: tf.TensorArray(f32, size=3).write(-1, [1.0, 2.0]).stack(), IAE,
         "Trying to modify element -1 in a list with 3 elements."),
        (lambda: tf.TensorArray(f32, size=3).write(0, [1.0, 2.0]).read(3), IAE,
         "Trying to access element 3 in a list with 3 elements."),
        (lambda: tf.TensorArray(f32, size=3).unstack([1.0, 2.0, 3.0])
         .read(tf.constant(1, tf.int64)), TypeError,
         "Input 'index' of 'TensorListGetItem' Op has type int64 that does not match expected "
         "type of int32."),
        (lambda: tf.TensorArray(f32, size=3).unstack([1.0, 2.0, 3.0]).read(1.0), TypeError,
         "Expected int32 passed to parameter 'index'"),
        (lambda: tf.TensorArray(f32, size=3).unstack([[1.0, 2.0], [3.0, 4.0]]).stack(), IAE,
         "Operation expected a list with 3 elements but got a list with 2 elements."),
        (lambda: tf.TensorArray(f32, size=3).unstack([[1.0], [2.0]]).write(2, [5.0]).stack(),
         IAE, "Trying to modify element 2 in a list with 2 elements."),
        (lambda: tf.TensorArray(f32, size=3).split([1.0, 2.0, 3.0, 4.0, 5.0], [2, 0, 2]).concat(),
         IAE, "Unused values in tensor. Length of tensor: 5 Values used: 4"),
        (lambda: tf.TensorArray(f32, size=3).split([1.0, 2.0, 3.0], [2, 2]).concat(), IAE,
         "Attempting to slice \\[2, 4\\] from tensor with length 3"),
        (lambda: tf.TensorArray(f32, size=2).scatter([3, 1], [[1.0], [2.0]]).stack(), IAE,
         "Operation expected a list with 2 elements but got a list with 4 elements."),
        (lambda: tf.TensorArray(f32, size=3).scatter([0, 1], [1.0]).stack(), IAE,
         "Expected len\\(indices\\) == tensor.shape\\[0\\], but saw: 2 vs. 1"),
        (lambda: tf.TensorArray(f32, size=3, element_shape=[2]).scatter([0], [1.0]).stack(),
         ValueError, "Inconsistent shapes: saw \\(\\) but expected \\(2,\\)"),
        (lambda: tf.TensorArray(f32, size=3).unstack([1.0, 2.0, 3.0]).gather([5]), IAE,
         "Index 5 out o range; list only has 3 elements."),  # (TF's spelling)
        (lambda: tf.TensorArray(f32, size=3).gather([1, 0]), IAE,
         "Tried to gather uninitialized tensors from a list with non-fully-defined "
         "element_shape: <unknown>"),
        (lambda: tf.TensorArray(f32, size=0).stack(), IAE,
         "Tried to stack elements of an empty list with non-fully-defined element_shape: "
         "<unknown>"),
        (lambda: tf.TensorArray(f32, size=0).concat(), IAE,
         "All except the first dimension must be fully defined when concating an empty tensor "
         "list. element_shape: <unknown>"),
        (lambda: tf.TensorArray(f32, size=2).write(0, 1.0).write(1, 2.0).concat(), IAE,
         "Concat saw a scalar shape at index 0 but requires at least vectors."),
        (lambda: tf.TensorArray(f32, size=2, infer_shape=False).write(0, [1.0, 2.0])
         .write(1, [3.0]).stack(), IAE, "Incompatible shapes during merge: \\[2\\] vs. \\[1\\]"),
        (lambda: tf.TensorArray(f32, size=1).write(0, tf.constant([1, 2])).stack(), IAE,
         "TensorArray dtype is float32 but Op is trying to write dtype int32"),
        (lambda: tf.TensorArray(f32).size(), ValueError,
         "Argument `size` must be provided if argument `flow` is not provided."),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            # (synchronized: on a simulated GPU a kernel's failure surfaces when its result
            # is read, as on a real one)
            for out in tf.nest.flatten(traced(call)()):
                out.numpy()


def test_traced_values_match_tensorflow():
    cases = [
        (lambda: tf.TensorArray(f32, size=2).write(0, 5.0).read(0), 5.0),
        (lambda: tf.TensorArray(f32, size=0, dynamic_size=True).write(4, 1.0).stack(),
         [0, 0, 0, 0, 1]),
        (lambda: tf.TensorArray(f32, size=1, dynamic_size=True).write(3, 1.0).size(), 4),
        (lambda: tf.TensorArray(f32, size=2, element_shape=[3]).read(0), [0, 0, 0]),
        (lambda: tf.TensorArray(f32, size=0, dynamic_size=True).unstack([[1.0, 2.0], [3.0, 4.0]])
         .stack(), [[1, 2], [3, 4]]),
        (lambda: tf.TensorArray(f32, size=3).split([1.0, 2.0, 3.0, 4.0, 5.0], [2, 0, 3]).read(2),
         [3, 4, 5]),
        # The size is not checked against the lengths when traced (TF).
        (lambda: tf.TensorArray(f32, size=2).split([1.0, 2.0, 3.0, 4.0, 5.0], [2, 0, 3])
         .concat(), [1, 2, 3, 4, 5]),
        (lambda: tf.TensorArray(f32, size=4).scatter([3, 1], [[1.0], [2.0]]).stack(),
         [[0], [2], [0], [1]]),
        (lambda: tf.TensorArray(f32, size=3).scatter([1, 1], [5.0, 6.0]).stack(), [0, 6, 0]),
        (lambda: tf.TensorArray(f32, size=3).unstack([1.0, 2.0, 3.0]).gather([2, 0, 2]),
         [3, 1, 3]),
        (lambda: tf.TensorArray(f32, size=3).write(0, [1.0, 2.0]).gather([1, 0]),
         [[0, 0], [1, 2]]),
        (lambda: tf.TensorArray(f32, size=2, infer_shape=False).write(0, [[1.0, 2.0]])
         .write(1, [[3.0, 4.0], [5.0, 6.0]]).concat(), [[1, 2], [3, 4], [5, 6]]),
        (lambda: tf.TensorArray(f32, size=2, infer_shape=False).write(0, [1.0, 2.0]).concat(),
         [1, 2, 0, 0]),
        (lambda: tf.TensorArray(f32, size=0, element_shape=[2]).concat(), np.zeros(0)),
        (lambda: tf.TensorArray(f32, size=0, element_shape=[2]).stack(), np.zeros((0, 2))),
        (lambda: tf.TensorArray(f32, size=2).write(0, 1.0).identity().stack(), [1, 0]),
        (lambda: tf.TensorArray(tf.int32, size=2).write(0, 7).write(1, 8).stack(), [7, 8]),
        # A scatter past the end of a dynamic array grows it (TF's kernel misplaces the rows
        # there and its stack then fails: a TensorFlow bug).
        (lambda: tf.TensorArray(f32, size=2, dynamic_size=True).scatter([3, 1], [[1.0], [2.0]])
         .stack(), [[0], [2], [0], [1]]),
    ]
    for call, expected in cases:
        result = values(traced(call)())
        np.testing.assert_array_equal(result, expected)
        assert result.shape == np.shape(expected)


def test_traced_clear_after_read_is_ignored_and_close_does_nothing():
    @traced
    def f():
        ta = tf.TensorArray(f32, size=2, clear_after_read=True).write(0, 5.0)
        assert ta.close() is None
        return ta.read(0), ta.read(0), ta.size()

    assert [float(v) for v in f()] == [5.0, 5.0, 2.0]


def test_traced_static_shapes():
    @traced
    def f():
        shapes = [tf.TensorArray(f32, size=3, element_shape=[2]).stack().shape,
                  tf.TensorArray(f32, size=3, dynamic_size=True, element_shape=[2]).stack().shape,
                  tf.TensorArray(f32, size=3).write(0, [[1.0]]).concat().shape,
                  tf.TensorArray(f32, size=3, element_shape=[2]).gather([1, 2]).shape]
        assert [s.as_list() for s in shapes] == [[3, 2], [None, 2], [None, 1], [2, 2]]
        return tf.constant(0)

    f()


# -- loops, branches and functions ---------------------------------------------------------------

def _fibonacci(n):
    # TensorFlow's TensorArray docstring example, with an explicit while_loop.
    ta = tf.TensorArray(f32, size=0, dynamic_size=True, clear_after_read=False)
    ta = ta.unstack([0.0, 1.0])

    def body(i, ta):
        return i + 1, ta.write(i, ta.read(i - 1) + ta.read(i - 2))

    _, ta = tf.while_loop(lambda i, ta: i < n, body, (2, ta))
    return ta.stack()


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_a_tensor_array_is_a_loop_variable(mode):
    fib = traced(_fibonacci) if mode == "traced" else _fibonacci
    np.testing.assert_array_equal(values(fib(tf.constant(7))), [0, 1, 1, 2, 3, 5, 8])

    def rows():
        ta = tf.TensorArray(f32, size=0, dynamic_size=True)
        _, ta = tf.while_loop(lambda i, ta: i < 3, lambda i, ta: (i + 1, ta.write(i, [1.0, 2.0])),
                              (0, ta))
        assert ta.element_shape == [2]  # the body's writes refined it (TF: (2,) after the loop)
        return ta.stack()

    run = traced(rows) if mode == "traced" else rows
    np.testing.assert_array_equal(values(run()), [[1, 2]] * 3)


def test_element_shapes_that_vary_in_a_loop():
    def ragged():
        ta = tf.TensorArray(f32, size=0, dynamic_size=True)
        ones = tf.ones([3])
        _, ta = tf.while_loop(lambda i, ta: i < 3,
                              lambda i, ta: (i + 1, ta.write(i, ones[:i + 1])), (0, ta))
        return ta.concat()

    # Traced, the body is traced once with a symbolic length; eagerly the second write's shape
    # differs from the first's (TF: the same two outcomes).
    np.testing.assert_array_equal(values(traced(ragged)()), np.ones(6))
    with pytest.raises(ValueError, match="Incompatible shape for value \\(\\(2,\\)\\), expected "
                                         "\\(\\(1,\\)\\)"):
        ragged()


def test_a_loop_body_must_return_its_tensor_arrays():
    def new_array():
        ta = tf.TensorArray(f32, size=0, dynamic_size=True)
        return tf.while_loop(lambda i, ta: i < 3,
                             lambda i, ta: (i + 1, tf.TensorArray(f32, size=0,
                                                                  dynamic_size=True)),
                             (0, ta))[1].size()

    assert values(traced(new_array)()) == 0

    def returns_a_tensor():
        ta = tf.TensorArray(f32, size=0, dynamic_size=True)
        return tf.while_loop(lambda i, ta: i < 3, lambda i, ta: (i + 1, i), (0, ta))[1]

    with pytest.raises(TypeError, match="Loop var 1 is a TensorArray in loop_vars but "
                                        "SymbolicTensor"):
        traced(returns_a_tensor)()

    def other_dtype():
        ta = tf.TensorArray(f32, size=0, dynamic_size=True)
        return tf.while_loop(lambda i, ta: i < 3,
                             lambda i, ta: (i + 1, tf.TensorArray(tf.int32, size=0)),
                             (0, ta))[1].size()

    with pytest.raises(TypeError, match="TensorArray of float32 in loop_vars but of int32"):
        traced(other_dtype)()


def test_a_loop_reads_an_array_through_its_size():
    # How AutoGraph iterates `for x in ta`: size() and read(i) with a symbolic i.
    def total(x):
        ta = tf.TensorArray(f32, size=3).unstack(x)
        return tf.while_loop(lambda i, acc: i < ta.size(),
                             lambda i, acc: (i + 1, acc + ta.read(i) * ta.read(i)),
                             (0, 0.0))[1]

    assert values(traced(total)(tf.constant([1.0, 2.0, 3.0]))) == 14.0


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_a_tensor_array_is_a_cond_result(mode):
    def f(p):
        ta = tf.TensorArray(f32, size=2)
        ta = tf.cond(p, lambda: ta.write(0, 1.0), lambda: ta.write(1, 2.0))
        assert isinstance(ta, tf.TensorArray)
        return ta.stack()

    run = traced(f) if mode == "traced" else f
    np.testing.assert_array_equal(values(run(tf.constant(True))), [1, 0])
    np.testing.assert_array_equal(values(run(tf.constant(False))), [0, 2])


def test_cond_branches_must_agree_on_tensor_arrays():
    def shapes(p):
        ta = tf.TensorArray(f32, size=2)
        return tf.cond(p, lambda: ta.write(0, 1.0), lambda: ta.write(1, [2.0])).stack()

    # Both branches write into one element-shape cell: TF's words (true_fn is traced first).
    with pytest.raises(ValueError, match="Inconsistent shapes: saw \\(1,\\) but expected \\(\\)"):
        traced(shapes)(tf.constant(True))

    def array_or_tensor(p):
        ta = tf.TensorArray(f32, size=2)
        return tf.cond(p, lambda: ta.write(0, 1.0), lambda: tf.constant(1.0))

    with pytest.raises(TypeError, match="is a TensorArray in true_fn but EagerTensor"):
        traced(array_or_tensor)(tf.constant(True))


def test_functions_return_a_tensor_arrays_flow_and_take_eager_arrays():
    @traced
    def made():
        return tf.TensorArray(f32, size=2, element_shape=[2]).write(0, [1.0, 2.0])

    flow = made()
    assert flow.dtype == tf.variant  # TF: an EagerTensor of dtype variant
    np.testing.assert_array_equal(values(list_ops.tensor_list_stack(flow, f32)), [[1, 2], [0, 0]])
    rebuilt = tf.TensorArray(f32, flow=flow)  # a variant flow: the functional behaviour
    again = rebuilt.write(1, [3.0, 4.0])
    assert again is not rebuilt and rebuilt.dynamic_size is None
    np.testing.assert_array_equal(values(again.stack()), [[1, 2], [3, 4]])

    @traced
    def uses(ta):
        return ta.read(0), ta.write(1, 4.0).stack()

    eager_array = tf.TensorArray(f32, size=2, clear_after_read=False).write(0, 3.0)
    read, stacked = uses(eager_array)
    assert values(read) == 3.0
    np.testing.assert_array_equal(values(stacked), [3, 4])  # TF: [3, 4]


def test_functional_constructor_errors():
    flow = tf.TensorArray(f32, size=2).flow

    @traced
    def both():
        return tf.TensorArray(f32, size=2, flow=flow).size()

    with pytest.raises(ValueError, match="Cannot provide both `flow` and `size` arguments at "
                                         "the same time."):
        both()
    with pytest.raises(ValueError, match="Cannot provide both `flow` and `element_shape`"):
        tf.TensorArray(f32, flow=flow, element_shape=[2])
    with pytest.raises(TypeError, match="Expected `flow` to be a variant tensor"):
        traced(lambda: tf.TensorArray(f32, flow=tf.constant(0.0)).size())()
    with pytest.raises(NotImplementedError):
        tf.TensorArray(f32, flow=flow).grad("x")


# -- gradients ---------------------------------------------------------------------------------

def _gradients(fn, x):
    """d fn(x) / dx three ways: an eager tape, a tape inside a traced function, and an eager
    tape around a traced function."""
    def inside(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        return tape.gradient(y, x)

    def around(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = traced(fn)(x)
        return tape.gradient(y, x)

    x = tf.constant(x)
    return {"eager": values(inside(x)), "traced": values(traced(inside)(x)),
            "around a function": values(around(x))}


def _write_read_stack(x):
    ta = tf.TensorArray(f64, size=3, clear_after_read=False)
    ta = ta.write(0, x).write(1, x * x).write(2, tf.sin(x))
    ta = ta.write(1, ta.read(1) * 3.0)  # overwritten: the first x * x no longer counts
    return tf.reduce_sum(ta.stack() * ta.read(2))


def _unstack_gather(x):
    ta = tf.TensorArray(f64, size=4).unstack(x)
    return tf.reduce_sum(ta.gather([3, 0, 3]) ** 2)


# (A concat's static length is unknown, and while tracing a tape cannot yet differentiate a sum
# over an unknown dimension: the reshape states the length.)
def _scatter_concat(x):
    ta = tf.TensorArray(f64, size=3)
    ta = ta.scatter([2, 0, 2], tf.reshape(x[:6], [3, 2]))  # row 0 of the scatter is overwritten
    ta = ta.write(1, x[6:] * 2.0)
    return tf.reduce_sum(tf.reshape(ta.concat(), [6]) ** 2)


def _split_read(x):
    # (Elements of unknown rank, which a tape cannot yet differentiate while tracing, need
    # the element_shape.)
    ta = tf.TensorArray(f64, size=3, clear_after_read=False, element_shape=[None])
    ta = ta.split(x, [3, 1, 4])
    first, last = tf.reshape(ta.read(0), [3]), tf.reshape(ta.read(2), [4])
    return tf.reduce_sum(first * last[:3]) + \
        tf.reduce_sum(tf.reshape(ta.concat(), [8]) ** 3)


def _loop(x):
    ta = tf.TensorArray(f64, size=4, clear_after_read=False)

    def body(i, ta, acc):
        y = tf.sin(x) * tf.cast(i + 1, f64)
        ta = ta.write(i, y)
        return i + 1, ta, acc + tf.reduce_sum(ta.read(i) * x)

    _, ta, acc = tf.while_loop(lambda i, ta, acc: i < 4, body,
                               (0, ta, tf.constant(0.0, f64)))
    return tf.reduce_sum(ta.stack() ** 2) + acc


def _recurrence(x):
    ta = tf.TensorArray(f64, size=6, clear_after_read=False).write(0, x).write(1, x * 2.0)
    _, ta = tf.while_loop(lambda i, ta: i < 6,
                          lambda i, ta: (i + 1, ta.write(i, ta.read(i - 1) * ta.read(i - 2))),
                          (2, ta))
    return tf.reduce_sum(ta.stack())


def _captured_in_loop(x):
    ta = tf.TensorArray(f64, size=3, clear_after_read=False).unstack(x)
    return tf.while_loop(lambda i, acc: i < 3,
                         lambda i, acc: (i + 1, acc + ta.read(i) * ta.read(i)),
                         (0, tf.constant(0.0, f64)))[1]


@pytest.mark.parametrize("fn, x", [
    (_write_read_stack, [0.3, -1.2]),
    (_unstack_gather, [0.5, -1.0, 2.0, 0.7]),
    (_scatter_concat, np.linspace(-1.0, 1.5, 8)),
    (_split_read, np.linspace(-1.0, 1.0, 8)),
    (_loop, [0.4, -0.9]),
    (_recurrence, 1.1),
    (_captured_in_loop, [1.0, 2.0, 3.0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_gradients_match_finite_differences(fn, x):
    x = np.asarray(x, np.float64)
    expected = numeric_gradients(fn, [x], [np.ones(())])[0]
    for how, got in _gradients(fn, x).items():
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8, err_msg=how)


def test_gradients_of_an_index_gathered_or_scattered_twice():
    # TF 2.21 eager: [10, 0, 101] and [0, 10, 1] (its graph rules give [10, 0, 100] and
    # [10, 10, 1], dropping a gradient and giving an overwritten row one).
    def gathered(x):
        y = tf.TensorArray(f32, size=3).unstack(x).gather([2, 0, 2])
        return tf.reduce_sum(y * tf.constant([1.0, 10.0, 100.0]))

    def scattered(x):
        y = tf.TensorArray(f32, size=3).scatter([1, 1, 0], x).stack()
        return tf.reduce_sum(y * tf.constant([1.0, 10.0, 100.0]))

    for fn, expected in [(gathered, [10, 0, 101]), (scattered, [0, 10, 1])]:
        for how, got in _gradients(fn, np.array([1.0, 2.0, 3.0], np.float32)).items():
            np.testing.assert_array_equal(got, expected, err_msg=how)


def test_clear_after_read_changes_the_gradient_as_in_tensorflow():
    # Eagerly the read in the body clears the slot it just wrote, so the stack after the loop
    # sees zeros; traced, clear_after_read is ignored. TF 2.21: [12, 24] and [40, 80].
    def f(x):
        ta = tf.TensorArray(f32, size=3)

        def body(i, ta, acc):
            ta = ta.write(i, x * tf.cast(i + 1, f32))
            return i + 1, ta, acc + tf.reduce_sum(ta.read(i) * x)

        _, ta, acc = tf.while_loop(lambda i, ta, acc: i < 3, body, (0, ta, tf.constant(0.0)))
        return tf.reduce_sum(ta.stack() ** 2) + acc

    grads = _gradients(f, np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(grads["eager"], [12, 24])
    np.testing.assert_array_equal(grads["traced"], [40, 80])


def test_a_recurrence_gradient_matches_tensorflow():
    # TF 2.21 (eager and traced, with clear_after_read=False): 92.52293, 579.35565.
    def f(x):
        return _recurrence(tf.cast(x, f64))

    x = tf.constant(1.1)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert values(y) == pytest.approx(92.52293395996094, rel=1e-6)
    assert values(tape.gradient(y, x)) == pytest.approx(579.3556518554688, rel=1e-6)


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_second_order_through_a_tensor_array_loop(mode):
    def f(x):
        ta = tf.TensorArray(f64, size=3, clear_after_read=False)
        _, ta = tf.while_loop(lambda i, ta: i < 3,
                              lambda i, ta: (i + 1, ta.write(i, x ** tf.cast(i + 2, f64))),
                              (0, ta))
        return tf.reduce_sum(ta.stack())  # x**2 + x**3 + x**4

    def second(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            dy = inner.gradient(y, x)
        return dy, outer.gradient(dy, x)

    run = traced(second) if mode == "traced" else second
    dy, ddy = run(tf.constant(1.5, f64))
    assert values(dy) == pytest.approx(2 * 1.5 + 3 * 1.5 ** 2 + 4 * 1.5 ** 3)
    assert values(ddy) == pytest.approx(2 + 6 * 1.5 + 12 * 1.5 ** 2)


# -- TensorArraySpec ----------------------------------------------------------------------------

def test_tensor_array_spec():
    spec = tf.TensorArraySpec.from_value(tf.TensorArray(f32, size=2, element_shape=[3]))
    assert spec == tf.TensorArraySpec([3], f32) and hash(spec) == hash(tf.TensorArraySpec([3]))
    assert spec.value_type is tf.TensorArray and spec.dtype is f32 and spec.element_shape == [3]
    assert repr(tf.TensorArraySpec()).startswith("TensorArraySpec(TensorShape(None)")
    assert tf.TensorArraySpec([None], f32).is_compatible_with(tf.TensorArraySpec([3], f32))
    assert not tf.TensorArraySpec([None], f32).is_compatible_with(
        tf.TensorArraySpec([3], f32, dynamic_size=True))
    common = tf.TensorArraySpec([2], f32).most_specific_common_supertype(
        [tf.TensorArraySpec([3], f32)])
    assert common == tf.TensorArraySpec([None], f32)
    assert tf.TensorArraySpec([2], f32).most_specific_common_supertype(
        [tf.TensorArraySpec([2], tf.int32)]) is None
    with pytest.raises(TypeError, match="Expected value to be a TensorArray"):
        tf.TensorArraySpec.from_value(tf.constant(1.0))


# -- the list ops underneath ----------------------------------------------------------------------

def test_list_ops_for_many_elements():
    lst = list_ops.tensor_list_from_tensor(tf.constant([[1.0, 2.0], [3.0, 4.0]]), [2])
    grown = list_ops.tensor_list_resize(lst, 3)
    assert values(list_ops.tensor_list_length(grown)) == 3
    np.testing.assert_array_equal(values(list_ops.tensor_list_stack(grown, f32)),
                                  [[1, 2], [3, 4], [0, 0]])
    np.testing.assert_array_equal(
        values(list_ops.tensor_list_stack(list_ops.tensor_list_resize(lst, 1), f32)), [[1, 2]])
    np.testing.assert_array_equal(values(list_ops.tensor_list_stack(list_ops.tensor_list_set_item(
        lst, 3, tf.constant([5.0, 5.0]), resize_if_index_out_of_bounds=True), f32)),
        [[1, 2], [3, 4], [0, 0], [5, 5]])
    tensor, lengths = list_bulk_ops.tensor_list_concat(grown, f32, [None],
                                                       leading_dims=np.array([1, 1, 3], np.int64))
    np.testing.assert_array_equal(values(tensor), [1, 2, 3, 4, 0, 0, 0])
    np.testing.assert_array_equal(values(lengths), [2, 2, 3])
    added = list_bulk_ops.tensor_list_scatter_add(lst, tf.constant([[1.0, 1.0], [2.0, 2.0]]),
                                                  [1, 1])
    np.testing.assert_array_equal(values(list_ops.tensor_list_stack(added, f32)),
                                  [[1, 2], [6, 7]])


@pytest.mark.parametrize("call, message", [
    (lambda lst: list_ops.tensor_list_resize(lst, -1),
     "TensorListSlice expects size to be non-negative. Got: -1"),
    (lambda lst: list_bulk_ops.tensor_list_split(tf.constant([[1.0, 2.0], [3.0, 4.0]]), [None, 3],
                                                 np.array([1, 1], np.int64)),
     "tensor shape \\[2,2\\] is not compatible with element_shape \\[\\?,3\\]"),
    (lambda lst: list_bulk_ops.tensor_list_split(tf.constant([1.0, 2.0, 3.0]), None,
                                                 np.array([-1, 4], np.int64)),
     "Invalid value in lengths: -1"),
    (lambda lst: list_bulk_ops.tensor_list_split(tf.constant([1.0, 2.0, 3.0]), None,
                                                 tf.constant([1, 2])),
     "TensorListSplit as input #1\\(zero-based\\) was expected to be a int64 tensor but is a "
     "int32 tensor"),
    (lambda lst: list_bulk_ops.tensor_list_concat(list_ops.tensor_list_reserve(None, 2, f32), f32),
     "Trying to concat list with only uninitialized tensors but element_shape_except_first_dim "
     "is not fully defined: <unknown>"),
    (lambda lst: list_bulk_ops.tensor_list_concat(list_ops.tensor_list_reserve(None, 2, f32), f32,
                                                  [None, 2]),
     "List contains uninitialized tensor at index 0 but leading_dims has only 0 elements."),
    (lambda lst: list_bulk_ops.tensor_list_concat(lst, tf.int32),
     "Invalid data types; op elements int32 but list elements float32"),
    (lambda lst: list_bulk_ops.tensor_list_gather(lst, [0], tf.int32),
     "Invalid data types; op elements int32 but list elements float32"),
    (lambda lst: list_bulk_ops.tensor_list_scatter(tf.constant([[9, 9]]), [0], input_handle=lst),
     "Invalid data types; input tensor type: int32 list element_type: float32"),
    (lambda lst: list_bulk_ops.tensor_list_scatter(tf.constant([[9.0, 9.0]]), [[0]],
                                                   input_handle=lst),
     "Expected indices to be a vector, but received shape: \\[1,1\\]"),
    (lambda lst: list_bulk_ops.tensor_list_scatter(tf.constant(9.0), [0], input_handle=lst),
     "Tensor must be at least a vector, but saw shape: \\[\\]"),
    # TF crashes the process on a negative index here.
    (lambda lst: list_bulk_ops.tensor_list_scatter(tf.constant([[9.0, 9.0]]), [-1],
                                                   input_handle=lst),
     "Trying to modify element -1 in a list with 2 elements."),
    # TF accepts rows of another shape here.
    (lambda lst: list_bulk_ops.tensor_list_scatter(tf.constant([[9.0, 9.0, 9.0]]), [0],
                                                   input_handle=lst),
     "incompatible shape into a list. Item element shape: \\[3\\] list shape: \\[2\\]"),
])
def test_list_ops_for_many_elements_reject_bad_inputs(call, message):
    lst = list_ops.tensor_list_from_tensor(tf.constant([[1.0, 2.0], [3.0, 4.0]]), [2])
    with pytest.raises(IAE, match=message):
        call(lst)
    with pytest.raises(IAE, match=message):  # the same words from inference or kernel, traced
        traced(lambda: call(lst))()


def test_tensor_arrays_on_a_simulated_gpu(simulated_gpu):
    # The elements live in the GPU's memory; loops and gradients work as on the CPU.
    np.testing.assert_array_equal(values(traced(_fibonacci)(tf.constant(7))),
                                  [0, 1, 1, 2, 3, 5, 8])
    for fn, x in [(_loop, [0.4, -0.9]), (_scatter_concat, np.linspace(-1.0, 1.5, 8))]:
        x = np.asarray(x, np.float64)
        expected = numeric_gradients(fn, [x], [np.ones(())])[0]
        for how, got in _gradients(fn, x).items():
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8, err_msg=how)
    ta = tf.TensorArray(f32, size=2).write(0, [1.0, 2.0])
    assert "GPU" in ta.stack().device
