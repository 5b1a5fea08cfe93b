"""Checkpointable dataset iterators: `Checkpoint(iterator=it)` saves the position (and shuffle
state, buffered and prefetched elements) and restoring puts an iterator back there, as
TensorFlow 2.21 does; a restore into another pipeline is TensorFlow's NotFoundError and changes
nothing; an iterator over a Python generator cannot be saved (FailedPreconditionError "PyFunc is
stateful.")."""

import os

import numpy as np
import pytest

import eager as tf
from eager import errors

D = tf.data.Dataset


def plain(element):
    if isinstance(element, dict):
        return {k: plain(v) for k, v in element.items()}
    if isinstance(element, tuple):
        return tuple(plain(v) for v in element)
    return element.numpy().tolist()


def rest(it):
    return [plain(e) for e in it]


PIPELINES = {
    "range": lambda: D.range(10),
    "slices batch": lambda: D.from_tensor_slices((np.arange(10), np.arange(10.) * 2)).batch(3),
    "shuffle batch": lambda: D.range(10).shuffle(5, seed=3).batch(2),
    "shuffle repeat": lambda: D.range(4).shuffle(4, seed=1).repeat(3),
    "map prefetch": lambda: D.range(10).map(lambda x: x * 2).prefetch(3),
    "parallel map": lambda: D.range(10).map(lambda x: x + 1, num_parallel_calls=2),
    "filter": lambda: D.range(20).filter(lambda x: x % 3 == 0),
    "take skip": lambda: D.range(20).skip(3).take(9),
    "zip concatenate": lambda: D.zip((D.range(6), D.range(6).map(lambda x: -x))).concatenate(
        D.zip((D.range(3), D.range(3)))),
    "enumerate scan": lambda: D.range(8).scan(np.int64(0), lambda s, x: (s + x, s)).enumerate(),
    "padded batch": lambda: D.range(1, 7).map(lambda x: tf.fill([x], x)).padded_batch(2),
    "unbatch": lambda: D.range(9).batch(4).unbatch(),
    "interleave": lambda: D.range(1, 4).interleave(lambda x: D.from_tensors(x).repeat(3),
                                                   cycle_length=2, block_length=2),
    "unique": lambda: D.from_tensor_slices([1, 1, 2, 3, 2, 4, 1, 5]).unique(),
    "sample from datasets": lambda: D.sample_from_datasets(
        [D.range(5), D.range(10, 15).shuffle(5, seed=2)], seed=3),
    "counter take": lambda: D.counter(3, 2).take(6),
    "shard": lambda: D.range(20).shard(3, 1),
    "batch of dicts": lambda: D.range(7).map(lambda x: {"a": x, "b": (x, x * 2)}).batch(3),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
@pytest.mark.parametrize("taken", [0, 1, 3])
def test_restore_returns_to_the_saved_position(tmp_path, name, taken):
    make = PIPELINES[name]
    it = iter(make())
    for _ in range(taken):
        next(it)
    checkpoint = tf.train.Checkpoint(iterator=it)
    path = checkpoint.save(os.fspath(tmp_path / "ckpt"))
    expected = rest(it)
    checkpoint.restore(path)
    assert rest(it) == expected
    fresh = iter(make())  # a new iterator of a new but equal pipeline
    tf.train.Checkpoint(iterator=fresh).restore(path)
    assert rest(fresh) == expected


def test_an_unseeded_shuffle_comes_back_in_the_same_order(tmp_path):
    it = iter(D.range(10).shuffle(10))
    next(it)
    checkpoint = tf.train.Checkpoint(iterator=it)
    path = checkpoint.save(os.fspath(tmp_path / "u"))
    expected = rest(it)
    checkpoint.restore(path)
    assert rest(it) == expected


def test_epochs_after_a_restore_shuffle_as_they_would_have(tmp_path):
    make = lambda: D.range(5).shuffle(5, seed=9).repeat(4)  # noqa: E731
    it = iter(make())
    for _ in range(7):
        next(it)
    path = tf.train.Checkpoint(iterator=it).save(os.fspath(tmp_path / "e"))
    expected = rest(it)
    assert len(expected) == 13 and sorted(expected[3:8]) == list(range(5))
    fresh = iter(make())
    tf.train.Checkpoint(iterator=fresh).restore(path)
    assert rest(fresh) == expected


def test_an_exhausted_iterator_restores_exhausted(tmp_path):
    it = iter(D.range(2))
    list(it)
    path = tf.train.Checkpoint(iterator=it).save(os.fspath(tmp_path / "x"))
    fresh = iter(D.range(2))
    tf.train.Checkpoint(iterator=fresh).restore(path)
    assert rest(fresh) == []


def test_restoring_into_another_pipeline_is_not_found_and_changes_nothing(tmp_path):
    it = iter(D.range(10).shuffle(5, seed=3).batch(2))
    next(it)
    path = tf.train.Checkpoint(iterator=it).save(os.fspath(tmp_path / "c"))
    other = iter(D.range(10).batch(3))
    next(other)
    with pytest.raises(errors.NotFoundError,
                       match="Failed to restore dataset iterator from checkpoint: .*Make sure the "
                             "dataset definition has not changed"):
        tf.train.Checkpoint(iterator=other).restore(path)
    assert rest(other) == [[3, 4, 5], [6, 7, 8], [9]]


def test_a_generator_iterator_cannot_be_saved(tmp_path):
    it = iter(D.from_generator(lambda: iter([1, 2]),
                               output_signature=tf.TensorSpec([], tf.int32)))
    next(it)
    with pytest.raises(errors.FailedPreconditionError, match="PyFunc is stateful."):
        tf.train.Checkpoint(iterator=it).save(os.fspath(tmp_path / "g"))
    assert rest(it) == [2]


def test_iterator_and_model_state_in_one_checkpoint(tmp_path):
    v = tf.Variable(1.0)
    it = iter(D.range(5))
    next(it)
    checkpoint = tf.train.Checkpoint(iterator=it, v=v)
    path = checkpoint.save(os.fspath(tmp_path / "m"))
    next(it)
    v.assign(5.0)
    status = checkpoint.restore(path)
    status.assert_consumed()
    assert float(v) == 1.0 and rest(it) == [1, 2, 3, 4]


def test_a_memory_cache_being_read_is_saved_by_position(tmp_path):
    ds = D.range(5).map(lambda x: x * 3).cache()
    list(ds)  # fills the cache
    it = iter(ds)
    next(it)
    path = tf.train.Checkpoint(iterator=it).save(os.fspath(tmp_path / "k"))
    expected = rest(it)
    tf.train.Checkpoint(iterator=it).restore(path)
    assert rest(it) == expected == [3, 6, 9, 12]


def test_interleave_over_a_shuffled_input_restores_its_open_datasets(tmp_path):
    make = lambda: D.range(6).shuffle(6, seed=4).interleave(  # noqa: E731
        lambda x: D.range(x * 10, x * 10 + 3), cycle_length=2)
    it = iter(make())
    for _ in range(4):
        next(it)
    path = tf.train.Checkpoint(iterator=it).save(os.fspath(tmp_path / "i"))
    expected = rest(it)
    fresh = iter(make())
    tf.train.Checkpoint(iterator=fresh).restore(path)
    assert rest(fresh) == expected and len(expected) == 14


# `tf.train.list_variables` on TF 2.21's checkpoint of `tf.train.Checkpoint(iterator=it, v=v)`:
# the iterator's state is one value of the iterator object itself (TF stores it as a variant).
TF_ITERATOR_CHECKPOINT_KEYS = ["_CHECKPOINTABLE_OBJECT_GRAPH",
                               "iterator/.ATTRIBUTES/ITERATOR_STATE",
                               "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
                               "v/.ATTRIBUTES/VARIABLE_VALUE"]


def test_iterator_state_is_saved_under_tensorflows_key(tmp_path):
    it = iter(D.range(10).shuffle(5, seed=1))
    next(it)
    path = tf.train.Checkpoint(iterator=it, v=tf.Variable(1.0)).save(str(tmp_path / "ck"))
    assert [name for name, _ in tf.train.list_variables(path)] == TF_ITERATOR_CHECKPOINT_KEYS
    # Nested under another object, the key follows the object's path.
    it2 = iter(D.range(4))
    nested = tf.train.Checkpoint(model=tf.train.Checkpoint(it=it2))
    path = nested.save(str(tmp_path / "nested"))
    assert "model/it/.ATTRIBUTES/ITERATOR_STATE" in [n for n, _ in tf.train.list_variables(path)]
    # ... and the value under that key restores the position.
    expected = rest(it)
    fresh = iter(D.range(10).shuffle(5, seed=1))
    tf.train.Checkpoint(iterator=fresh, v=tf.Variable(0.0)).restore(
        str(tmp_path / "ck-1")).assert_consumed()
    assert rest(fresh) == expected
