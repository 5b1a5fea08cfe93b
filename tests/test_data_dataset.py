"""eager.data: sources and transformations against TensorFlow 2.21's outputs, element specs,
cardinalities, reprs and errors (goldens recorded from TensorFlow 2.21 on CPU; TensorFlow's
"tf.int64" prints as "eager.int64" here)."""

import collections

import numpy as np
import pytest

import eager as tf
from eager import errors

D = tf.data.Dataset


def values(ds):
    """The elements as plain Python values (lists for arrays)."""
    def plain(x):
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, tuple):
            return tuple(plain(v) for v in x)
        return np.asarray(x).tolist()
    return [plain(e) for e in ds.as_numpy_iterator()]


def spec(shape, dtype):
    return tf.TensorSpec(shape, dtype)


def card(ds):
    c = ds.cardinality()
    assert c.dtype == tf.int64 and c.shape == ()
    return int(c)


# -- sources -------------------------------------------------------------------------------------
def test_from_tensor_slices_tuple():
    ds = D.from_tensor_slices(([1, 2, 3], [4., 5., 6.]))
    assert repr(ds) == ("<_TensorSliceDataset element_spec=(TensorSpec(shape=(), "
                        "dtype=eager.int32, name=None), TensorSpec(shape=(), dtype=eager.float32, "
                        "name=None))>")
    assert ds.element_spec == (spec([], tf.int32), spec([], tf.float32))
    assert card(ds) == 3 and len(ds) == 3
    assert values(ds) == [(1, 4.0), (2, 5.0), (3, 6.0)]


def test_from_tensor_slices_dicts_keep_their_key_order_and_lists_are_tensors():
    ds = D.from_tensor_slices({"b": [1, 2], "a": [3., 4.]})
    assert list(ds.element_spec) == ["b", "a"]
    first = next(iter(ds))
    assert list(first) == ["b", "a"] and first["a"].dtype == tf.float32
    assert D.from_tensor_slices([[1, 2], [3, 4]]).element_spec == spec([2], tf.int32)
    assert D.from_tensor_slices([(1, 2), (3, 4)]).element_spec == spec([2], tf.int32)
    assert values(D.from_tensor_slices({"a": [1, 2], "b": ([3, 4], [5., 6.])})) == [
        {"a": 1, "b": (3, 5.0)}, {"a": 2, "b": (4, 6.0)}]


def test_from_tensor_slices_namedtuple_and_numpy():
    P = collections.namedtuple("P", "a b")
    ds = D.from_tensor_slices(P([1, 2], [3, 4]))
    assert ds.element_spec == P(spec([], tf.int32), spec([], tf.int32))
    assert values(ds.map(lambda p: p.a + p.b)) == [4, 6]
    assert D.from_tensor_slices(np.zeros((3, 2), np.float64)).element_spec == \
        spec([2], tf.float64)
    assert card(D.from_tensor_slices(np.zeros((0, 2)))) == 0


def test_from_tensor_slices_errors():
    with pytest.raises(ValueError, match="^Dimensions 3 and 2 are not compatible$"):
        D.from_tensor_slices(([1, 2, 3], [1, 2]))
    with pytest.raises(ValueError, match=r"^Unbatching a tensor is only supported for rank >= 1$"):
        D.from_tensor_slices(3)
    with pytest.raises(ValueError, match="^Invalid `element`. `element` should not be empty.$"):
        D.from_tensor_slices(())


def test_slices_are_copied_from_the_callers_array():
    x = np.arange(4)
    ds = D.from_tensor_slices(x)
    x[0] = 100
    assert values(ds) == [0, 1, 2, 3]


def test_from_tensors():
    ds = D.from_tensors([1, 2, 3])
    assert repr(ds) == ("<_TensorDataset element_spec=TensorSpec(shape=(3,), dtype=eager.int32, "
                        "name=None)>")
    assert D.from_tensors({"a": [1, 2], "b": 3.0}).element_spec == {
        "a": spec([2], tf.int32), "b": spec([], tf.float32)}
    assert card(ds) == 1 and values(ds) == [[1, 2, 3]]
    assert D.from_tensors(tf.Variable([1., 2.])).element_spec == spec([2], tf.float32)


def test_range():
    assert repr(D.range(5)) == ("<_RangeDataset element_spec=TensorSpec(shape=(), "
                                "dtype=eager.int64, name=None)>")
    assert values(D.range(2, 10, 3)) == [2, 5, 8]
    assert values(D.range(10, 2, -3)) == [10, 7, 4]
    assert card(D.range(10, 2, -3)) == 3 and card(D.range(5, 2)) == 0
    assert D.range(3, output_type=tf.int32).element_spec == spec([], tf.int32)
    with pytest.raises(errors.InvalidArgumentError, match="step must be a non-zero integer"):
        D.range(1, 5, 0)
    with pytest.raises(TypeError, match="Cannot convert 1.5 to EagerTensor of dtype int64"):
        D.range(1.5)


def test_from_generator():
    def gen():
        yield 1, [2.]
        yield 3, [4., 5.]
    sig = (tf.TensorSpec((), tf.int32), tf.TensorSpec((None,), tf.float32))
    ds = D.from_generator(gen, output_signature=sig)
    assert repr(ds).startswith("<_FlatMapDataset element_spec=(")
    assert ds.element_spec == sig and card(ds) == -2
    assert values(ds) == [(1, [2.0]), (3, [4.0, 5.0])]
    assert values(D.from_generator(lambda n: iter(range(n)), args=(3,),
                                   output_signature=tf.TensorSpec([], tf.int64))) == [0, 1, 2]
    assert D.from_generator(lambda: iter([1]), output_types=tf.int64).element_spec == \
        tf.TensorSpec(None, tf.int64)


def test_from_generator_errors():
    with pytest.raises(TypeError, match="^To specify the output signature you need to provide "
                                        "either the `output_signature` argument or the "
                                        "`output_types` argument.$"):
        D.from_generator(lambda: iter([1]))
    with pytest.raises(TypeError, match="can not be used together with the `output_signature`"):
        D.from_generator(lambda: iter([1]), output_types=tf.int32,
                         output_signature=tf.TensorSpec([], tf.int32))
    bad_shape = D.from_generator(lambda: iter([[1, 2]]), output_signature=tf.TensorSpec((3,),
                                                                                        tf.int32))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"TypeError: `generator` yielded an element of shape \(2,\) where an "
                             r"element of shape \(3,\) was expected."):
        list(bad_shape)
    bad_structure = D.from_generator(lambda: iter([(1, 2)]),
                                     output_signature=(tf.TensorSpec([], tf.int32),))
    with pytest.raises(errors.InvalidArgumentError, match="did not match the expected structure"):
        list(bad_structure)
    failing = D.from_generator(lambda: (1 / 0 for _ in range(2)),
                               output_signature=tf.TensorSpec([], tf.float32))
    with pytest.raises(errors.UnknownError, match="ZeroDivisionError: division by zero"):
        list(failing)


def test_zip_and_concatenate():
    z = D.zip((D.range(3), D.range(5)))
    assert repr(z).startswith("<_ZipDataset element_spec=(TensorSpec(shape=(), dtype=eager.int64")
    assert card(z) == 3 and values(z) == [(0, 0), (1, 1), (2, 2)]
    assert D.zip(D.range(3), D.range(5)).element_spec == z.element_spec
    assert list(D.zip({"a": D.range(3), "b": D.range(2)}).element_spec) == ["a", "b"]
    nested = D.zip((D.range(3), (D.range(2), D.range(4))))
    assert values(nested) == [(0, (0, 0)), (1, (1, 1))]
    with pytest.raises(TypeError, match="^Invalid input to `zip`. Inputs are expected to be "
                                        r"\(nested\) structures of `tf.data.Dataset` objects but "
                                        "encountered object of type <class 'int'>.$"):
        D.zip((D.range(3), 1))
    c = D.range(3).concatenate(D.range(2))
    assert repr(c).startswith("<_ConcatenateDataset") and card(c) == 5
    assert values(c) == [0, 1, 2, 0, 1]
    assert D.from_tensors([1, 2]).concatenate(D.from_tensors([1, 2, 3])).element_spec == \
        spec([None], tf.int32)
    with pytest.raises(TypeError, match=r"^Incompatible dataset elements:\n  TensorSpec\(shape=\(\)"
                                        r", dtype=eager.int64, name=None\) vs.   TensorSpec\("):
        D.range(3).concatenate(D.from_tensors(1.0))


# -- cardinality -----------------------------------------------------------------------------------
CARDINALITIES = [  # recorded from TensorFlow 2.21
    (lambda: D.range(3).repeat(), -1),
    (lambda: D.range(3).repeat(0), 0),
    (lambda: D.range(3).repeat(2), 6),
    (lambda: D.range(0).repeat(), 0),
    (lambda: D.range(3).filter(lambda x: x > 1), -2),
    (lambda: D.range(3).repeat().take(5), 5),
    (lambda: D.range(3).repeat().skip(5), -1),
    (lambda: D.range(3).repeat().batch(5), -1),
    (lambda: D.range(3).filter(lambda x: x > 0).batch(5), -2),
    (lambda: D.range(3).repeat().concatenate(D.range(2)), -1),
    (lambda: D.zip((D.range(3).repeat(), D.range(2).filter(lambda x: True))), -2),
    (lambda: D.zip((D.range(3).repeat(), D.range(2))), 2),
    (lambda: D.zip((D.range(3), D.range(2).filter(lambda x: True))), -2),
    (lambda: D.range(5).map(lambda x: x), 5),
    (lambda: D.range(5).flat_map(lambda x: D.range(x)), -2),
    (lambda: D.range(5).interleave(lambda x: D.range(x)), -2),
    (lambda: D.range(5).scan(np.int64(0), lambda s, x: (s, x)), 5),
    (lambda: D.range(5).unique(), -2),
    (lambda: D.range(5).prefetch(1), 5),
    (lambda: D.range(5).enumerate(), 5),
    (lambda: D.range(5).padded_batch(2), 3),
    (lambda: D.from_tensors([[1, 2], [3, 4]]).unbatch(), 2),
    (lambda: D.from_tensors(tf.zeros([2, 3])).batch(2).unbatch(), -2),
    (lambda: D.range(7).window(3), 3),
    (lambda: D.range(7).window(3, drop_remainder=True), 2),
    (lambda: D.range(7).window(3, shift=2), 4),
    (lambda: D.range(5).window(2, shift=1, stride=2), 5),
    (lambda: D.range(5).take_while(lambda x: True), -2),
    (lambda: D.range(5).repeat().shuffle(3), -1),
    (lambda: D.range(4).shuffle(4), 4),
    (lambda: D.range(5).repeat().cache(), -1),
    (lambda: D.range(3).cache(), 3),
]


@pytest.mark.parametrize("make, expected", CARDINALITIES)
def test_cardinality(make, expected):
    assert card(make()) == expected


def test_take_and_skip_cardinality_and_values():
    assert [card(D.range(10).take(k)) for k in (3, 20, -1, 0)] == [3, 10, 10, 0]
    assert [card(D.range(10).skip(k)) for k in (3, 20, -1, 0)] == [7, 0, 0, 10]
    assert values(D.range(10).take(3)) == [0, 1, 2]
    assert values(D.range(10).skip(7)) == [7, 8, 9]
    assert values(D.range(10).skip(-1)) == [] and values(D.range(3).take(-1)) == [0, 1, 2]


def test_len_where_tensorflow_allows_it():
    assert len(D.range(5).batch(2)) == 3
    with pytest.raises(TypeError, match="^The dataset is infinite.$"):
        len(D.range(3).repeat())
    with pytest.raises(TypeError, match="^The dataset length is unknown.$"):
        len(D.range(3).filter(lambda x: x > 1))
    assert bool(D.range(0))
    assert (tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY, tf.data.AUTOTUNE) == \
        (-1, -2, -1)


# -- transformations -------------------------------------------------------------------------------
def test_batch():
    ds = D.from_tensor_slices(([1, 2, 3], [4., 5., 6.]))
    b = ds.batch(2)
    assert repr(b).startswith("<_BatchDataset element_spec=(TensorSpec(shape=(None,)")
    assert b.element_spec == (spec([None], tf.int32), spec([None], tf.float32))
    assert ds.batch(2, drop_remainder=True).element_spec == (spec([2], tf.int32),
                                                             spec([2], tf.float32))
    assert (card(b), card(ds.batch(2, True))) == (2, 1)
    assert values(b) == [([1, 2], [4.0, 5.0]), ([3], [6.0])]
    assert values(D.range(5).batch(2)) == [[0, 1], [2, 3], [4]]
    assert values(D.range(5).batch(1)) == [[0], [1], [2], [3], [4]]
    assert values(D.from_tensor_slices([1, 2, 3]).batch(1)) == [[1], [2], [3]]
    assert values(D.range(5).batch(2, drop_remainder=True)) == [[0, 1], [2, 3]]
    assert values(D.range(5).map(lambda x: {"v": x}).batch(3)) == [{"v": [0, 1, 2]},
                                                                   {"v": [3, 4]}]
    with pytest.raises(errors.InvalidArgumentError, match="Batch size must be greater than zero"):
        D.range(3).batch(0)


def test_batch_of_mismatched_shapes_is_tensorflows_error():
    ds = D.range(1, 5).map(lambda x: tf.fill([x], x)).batch(2)
    assert ds.element_spec == spec([None, None], tf.int64)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Cannot add tensor to the batch: number of elements does not match. "
                             r"Shapes are: \[tensor\]: \[2\], \[batch\]: \[1\]"):
        list(ds)


def test_padded_batch():
    ds = D.range(1, 5).map(lambda x: tf.fill([x], x))
    assert values(ds.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    assert ds.padded_batch(2).element_spec == spec([None, None], tf.int64)
    padded = D.range(1, 3).map(lambda x: tf.fill([x], x)).padded_batch(
        2, padded_shapes=[4], padding_values=tf.constant(-1, tf.int64))
    assert values(padded) == [[[1, -1, -1, -1], [2, 2, -1, -1]]]
    assert padded.element_spec == spec([None, 4], tf.int64)
    with pytest.raises(errors.DataLossError,
                       match="Attempted to pad to a smaller size than the input element."):
        list(ds.padded_batch(2, padded_shapes=[2]))


def test_unbatch():
    ds = D.from_tensors([[1, 2], [3, 4]]).unbatch()
    assert ds.element_spec == spec([2], tf.int32) and values(ds) == [[1, 2], [3, 4]]
    assert values(D.range(5).batch(2).unbatch()) == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="^Cannot unbatch an input with scalar components.$"):
        D.range(3).unbatch()


def test_map_structures():
    assert D.range(2).map(lambda x: [x, x]).element_spec == (spec([], tf.int64),
                                                             spec([], tf.int64))
    assert D.range(2).map(lambda x: 1).element_spec == spec([], tf.int32)
    assert values(D.from_tensor_slices(([1, 2], [3, 4])).map(lambda a, b: a * b)) == [3, 8]
    assert repr(D.range(3).map(lambda x: x * 2)).startswith("<_MapDataset ")
    assert repr(D.range(3).map(lambda x: x, num_parallel_calls=tf.data.AUTOTUNE,
                               deterministic=True)).startswith("<_ParallelMapDataset ")
    with pytest.raises(TypeError):
        D.from_tensor_slices(([1, 2], [3, 4])).map(lambda a: a)
    with pytest.raises(errors.InvalidArgumentError,
                       match="num_parallel_calls must be greater than zero"):
        D.range(3).map(lambda x: x, num_parallel_calls=0)


def test_map_function_is_traced_once():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1
    ds = D.range(5).map(f)
    assert values(ds) == [1, 2, 3, 4, 5] and values(ds) == [1, 2, 3, 4, 5]
    assert len(calls) == 1


def test_map_errors_are_per_element_and_the_iterator_goes_on():
    def f(x):
        return tf.reshape(tf.fill([x], x), [2])
    it = iter(D.range(4).map(f))
    for _ in range(2):
        with pytest.raises(errors.InvalidArgumentError):
            next(it)
    assert next(it).numpy().tolist() == [2, 2]
    with pytest.raises(errors.InvalidArgumentError):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


def test_filter():
    assert values(D.range(10).filter(lambda x: x % 2 == 0)) == [0, 2, 4, 6, 8]
    with pytest.raises(ValueError, match=r"^Invalid `predicate`. `predicate` must return a "
                                         r"`tf.bool` scalar tensor, but its return type is "
                                         r"TensorSpec\(shape=\(\), dtype=eager.int64, name=None\)"
                                         r".$"):
        D.range(3).filter(lambda x: x)
    with pytest.raises(ValueError, match=r"TensorSpec\(shape=\(2,\), dtype=eager.bool"):
        D.range(3).filter(lambda x: tf.stack([x > 0, x > 1]))


def test_take_while_scan_reduce_unique():
    assert values(D.range(10).take_while(lambda x: x < 3)) == [0, 1, 2]
    assert values(D.range(5).scan(np.int64(0), lambda s, x: (s + x, s * 10))) == [
        0, 0, 10, 30, 60]
    assert int(D.range(5).reduce(np.int64(0), lambda s, x: s + x)) == 10
    total = D.range(5).reduce(0.0, lambda s, x: s + tf.cast(x, tf.float32))
    assert total.dtype == tf.float32 and float(total) == 10.0
    assert values(D.from_tensor_slices([1, 1, 2, 3, 2]).unique()) == [1, 2, 3]
    with pytest.raises(TypeError, match=r"^`tf.data.Dataset.unique` does not support type <dtype: "
                                        r"'float32'> -- only `tf.int32`, `tf.int64`, and "
                                        r"`tf.string` are supported.$"):
        D.from_tensor_slices([1., 1.]).unique()


def test_get_single_element():
    assert int(D.range(1).get_single_element()) == 0
    with pytest.raises(errors.InvalidArgumentError, match="Dataset had more than one element."):
        D.range(2).get_single_element()
    with pytest.raises(errors.InvalidArgumentError, match="Dataset was empty."):
        D.range(0).get_single_element()


def test_enumerate_repeat_apply():
    ds = D.from_tensor_slices([5, 6]).enumerate(3)
    assert ds.element_spec == (spec([], tf.int64), spec([], tf.int32))
    assert values(ds) == [(3, 5), (4, 6)]
    assert values(D.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert values(D.range(3).repeat(0)) == []
    assert values(D.range(5).apply(lambda d: d.skip(2))) == [2, 3, 4]


def test_flat_map_interleave_window():
    assert values(D.range(3).flat_map(lambda x: D.range(x))) == [0, 0, 1]
    assert values(D.range(1, 4).interleave(lambda x: D.from_tensors(x).repeat(3), cycle_length=2,
                                           block_length=2)) == [1, 1, 2, 2, 1, 2, 3, 3, 3]
    assert values(D.range(1, 4).interleave(lambda x: D.from_tensors(x).repeat(2),
                                           cycle_length=2)) == [1, 2, 1, 2, 3, 3]
    windows = D.range(7).window(3, shift=2)
    assert windows.element_spec == tf.data.DatasetSpec(spec([], tf.int64), tf.TensorShape([]))
    assert repr(windows.element_spec) == ("DatasetSpec(TensorSpec(shape=(), dtype=eager.int64, "
                                          "name=None), TensorShape([]))")
    assert [values(w) for w in windows] == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]
    assert values(windows.flat_map(lambda w: w.batch(3))) == [[0, 1, 2], [2, 3, 4], [4, 5, 6],
                                                               [6]]
    pairs = D.from_tensor_slices(([1, 2, 3], [4, 5, 6])).window(2)
    assert pairs.element_spec == (tf.data.DatasetSpec(spec([], tf.int32)),
                                  tf.data.DatasetSpec(spec([], tf.int32)))
    def windows_of(ds):
        return [values(w) for w in ds]
    assert windows_of(D.range(6).window(2, stride=2, drop_remainder=True)) == [[0, 2], [2, 4]]
    assert windows_of(D.range(6).window(2, shift=1, stride=2, drop_remainder=True)) == [
        [0, 2], [1, 3], [2, 4], [3, 5]]
    assert windows_of(D.range(10).window(2, shift=4)) == [[0, 1], [4, 5], [8, 9]]
    assert windows_of(D.range(7).window(3, shift=1, stride=3)) == [
        [0, 3, 6], [1, 4], [2, 5], [3, 6], [4], [5], [6]]


def test_bucket_by_sequence_length():
    def gen():
        for n in [1, 2, 3, 1, 2, 5, 3, 1]:
            yield [n] * n
    ds = D.from_generator(gen, output_signature=tf.TensorSpec([None], tf.int32))
    buckets = ds.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [2, 4], [2, 2, 2])
    assert buckets.element_spec == spec([None, None], tf.int32)
    assert values(buckets) == [[[2, 2, 0], [3, 3, 3]], [[1], [1]], [[2, 2, 0], [3, 3, 3]], [[1]],
                               [[5, 5, 5, 5, 5]]]


def test_shuffle_is_a_reproducible_permutation_that_changes_per_epoch():
    ds = D.range(10).shuffle(4, seed=1)
    assert repr(ds).startswith("<_ShuffleDataset ")
    first, second = values(ds), values(ds)
    assert sorted(first) == list(range(10)) and sorted(second) == list(range(10))
    assert first != second
    assert values(D.range(10).shuffle(4, seed=1)) == first  # a new dataset starts over
    fixed = D.range(10).shuffle(4, seed=1, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)
    epochs = values(D.range(4).shuffle(4, seed=1).repeat(2))
    assert sorted(epochs[:4]) == sorted(epochs[4:]) == [0, 1, 2, 3] and epochs[:4] != epochs[4:]
    with pytest.raises(errors.InvalidArgumentError, match="buffer_size must be greater than zero"):
        D.range(4).shuffle(0)


def test_shuffle_buffer_limits_how_far_an_element_moves():
    # TensorFlow's buffer algorithm: output k is among the first k + buffer_size inputs.
    for seed in range(5):
        out = values(D.range(50).shuffle(3, seed=seed))
        assert sorted(out) == list(range(50))
        assert all(x < k + 3 for k, x in enumerate(out))


def test_global_seed_makes_unseeded_shuffles_reproducible():
    tf.random.set_seed(7)
    a = values(D.range(20).shuffle(20))
    tf.random.set_seed(7)
    b = values(D.range(20).shuffle(20))
    tf.random.set_seed(None)
    assert a == b


def test_cache_in_memory_and_in_a_file(tmp_path):
    calls = []

    def source():
        calls.append(1)
        yield from range(3)
    gen = D.from_generator(source, output_signature=tf.TensorSpec([], tf.int64))
    cached = gen.cache()
    assert repr(cached).startswith("<CacheDataset ")
    assert values(cached) == [0, 1, 2] and values(cached) == [0, 1, 2] and len(calls) == 1
    prefix = str(tmp_path / "c")
    on_disk = gen.cache(prefix)
    assert values(on_disk) == [0, 1, 2]
    assert values(gen.cache(prefix)) == [0, 1, 2] and len(calls) == 2  # read back, not rerun


def test_cache_a_partial_iteration_is_discarded():
    calls = []

    def source():
        calls.append(1)
        yield from range(3)
    cached = D.from_generator(source, output_signature=tf.TensorSpec([], tf.int64)).cache()
    it = iter(cached)
    next(it)
    with pytest.warns(UserWarning, match="partially cached contents"):
        it.close()
    assert values(cached) == [0, 1, 2] and len(calls) == 2


def test_options():
    ds = D.range(3)
    assert ds.options().deterministic is None
    o = tf.data.Options()
    o.deterministic = False
    assert repr(ds.with_options(o)).startswith("<_OptionsDataset ")
    assert ds.with_options(o).map(lambda x: x).options().deterministic is False
    with pytest.raises(AttributeError, match="^Cannot set the property foo on Options.$"):
        o.foo = 1


def test_prefetch_passes_elements_through():
    assert repr(D.range(3).prefetch(3)).startswith("<_PrefetchDataset ")
    assert values(D.range(5).map(lambda x: x * 2).prefetch(2)) == [0, 2, 4, 6, 8]
    assert values(D.range(5).prefetch(tf.data.AUTOTUNE)) == [0, 1, 2, 3, 4]
    with pytest.raises(errors.InvalidArgumentError, match="buffer_size must be >= 0"):
        D.range(3).prefetch(-5)


def test_iterators():
    it = iter(D.range(1))
    assert it.element_spec == spec([], tf.int64)
    assert int(next(it)) == 0
    with pytest.raises(StopIteration):
        next(it)
    with pytest.raises(errors.OutOfRangeError, match="End of sequence"):
        it.get_next()
    opt = iter(D.range(1)).get_next_as_optional()
    assert bool(opt.has_value()) and int(opt.get_value()) == 0
    elements = list(D.from_tensor_slices([[1, 2], [3, 4]]))
    assert [e.numpy().tolist() for e in elements] == [[1, 2], [3, 4]]
    assert all(e.device.endswith("CPU:0") for e in elements)
    with pytest.raises(TypeError, match="as_numpy_iterator"):
        D.range(3).window(2).as_numpy_iterator()


def test_counter():
    c = tf.data.experimental.Counter()
    assert repr(c) == ("<_ScanDataset element_spec=TensorSpec(shape=(), dtype=eager.int64, "
                       "name=None)>")
    assert card(c) == -1 and values(c.take(3)) == [0, 1, 2]
    c = tf.data.experimental.Counter(start=5, step=-2, dtype=tf.int32)
    assert c.element_spec == spec([], tf.int32) and values(c.take(3)) == [5, 3, 1]
    assert values(D.counter(2).take(2)) == [2, 3]


def test_choose_and_sample_from_datasets():
    choice = D.from_tensor_slices(tf.constant([0, 1, 1, 0], tf.int64))
    chosen = D.choose_from_datasets([D.range(3), D.range(10, 13)], choice)
    assert repr(chosen).startswith("<_DirectedInterleaveDataset ") and card(chosen) == -2
    assert values(chosen) == [0, 10, 11, 1]
    mixed = D.sample_from_datasets([D.range(3), D.range(10, 13)], seed=1)
    out = values(mixed)
    assert sorted(out) == [0, 1, 2, 10, 11, 12] and out == values(mixed)
    assert [x for x in out if x < 10] == [0, 1, 2] and [x for x in out if x >= 10] == [10, 11, 12]
    only_second = D.sample_from_datasets([D.range(3), D.range(10, 13)], weights=[0.0, 1.0])
    assert values(only_second) == [10, 11, 12]
    stopping = values(D.sample_from_datasets([D.range(3), D.range(10, 20)], seed=1,
                                             stop_on_empty_dataset=True))
    assert [x for x in stopping if x < 10] == [0, 1, 2] and len(stopping) < 13
    with pytest.raises(TypeError, match=r"^Invalid `datasets`. `datasets` must have compatible "
                                        r"element specs.\n Dataset 0 element_spec=TensorSpec"):
        D.sample_from_datasets([D.range(3), D.from_tensors(1.0)])


REPRS = [  # TensorFlow 2.21's class names in the datasets' reprs
    (lambda r: r.enumerate(), "_ZipDataset"), (lambda r: r.skip(1), "_SkipDataset"),
    (lambda r: r.repeat(), "_RepeatDataset"), (lambda r: r.filter(lambda x: x > 1),
                                               "_FilterDataset"),
    (lambda r: r.batch(2).unbatch(), "_UnbatchDataset"),
    (lambda r: r.padded_batch(2), "_PaddedBatchDataset"), (lambda r: r.window(2),
                                                           "_WindowDataset"),
    (lambda r: r.flat_map(lambda x: D.range(x)), "_FlatMapDataset"),
    (lambda r: r.interleave(lambda x: D.range(x)), "_InterleaveDataset"),
    (lambda r: r.scan(tf.constant(0, tf.int64), lambda s, x: (s, x)), "_ScanDataset"),
    (lambda r: r.unique(), "_UniqueDataset"), (lambda r: r.take_while(lambda x: x < 3),
                                               "_TakeWhileDataset"),
    (lambda r: r.group_by_window(lambda x: x % 2, lambda k, d: d.batch(2), 2),
     "_GroupByWindowDataset"),
    (lambda r: r.batch(2, num_parallel_calls=2), "_ParallelBatchDataset"),
    (lambda r: r.cache(), "CacheDataset"),
]


@pytest.mark.parametrize("make, name", REPRS)
def test_reprs_name_tensorflows_classes(make, name):
    assert repr(make(D.range(6))).split(" ")[0] == "<" + name


def test_group_by_window():
    ds = D.range(10).group_by_window(lambda x: x % 2, lambda k, d: d.batch(3), window_size=3)
    assert values(ds) == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]


def test_shard():
    ds = D.range(10).shard(3, 1)
    assert repr(ds).startswith("<_ShardDataset ") and card(ds) == 3
    assert values(ds) == [1, 4, 7]
    assert (card(D.range(10).shard(3, 0)), card(D.range(10).shard(3, 2)),
            card(D.range(10).repeat().shard(3, 1))) == (4, 3, -1)
    with pytest.raises(errors.InvalidArgumentError, match=r"Number of shards must be greater "
                                                          r"than zero \(currently num_shards = "
                                                          r"0\)."):
        D.range(10).shard(0, 0)
    with pytest.raises(errors.InvalidArgumentError, match=r"Index must be between 0 and 2 "
                                                          r"\(currently index = 3\)."):
        D.range(10).shard(3, 3)


@pytest.mark.parametrize("build", [
    lambda: D.range(3).batch("2"), lambda: D.range(3).batch(2.5), lambda: D.range(3).shuffle(None),
    lambda: D.range(3).prefetch([1]), lambda: D.range(3).window("a"),
    lambda: D.range(3).take(1.5), lambda: D.range(3).shard(2, "0")])
def test_bad_sizes_are_type_errors_naming_the_argument(build):
    with pytest.raises(TypeError, match="must be a scalar integer"):
        build()
