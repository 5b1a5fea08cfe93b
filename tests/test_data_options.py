"""`Dataset.with_options` / `options()`: TensorFlow 2.21's merging (a later `with_options`, or a
later input, wins field by field, with its warning), its types, and the options eager acts on:
`deterministic`, `threading.private_threadpool_size`, `autotune.enabled`, `cpu_budget` and
`ram_budget`, applied to the whole pipeline wherever `with_options` stands in it."""

import logging
import threading

import pytest

import eager as tf
from eager.data.threads import autotune

D = tf.data.Dataset


def options(**fields):
    o = tf.data.Options()
    for path, value in fields.items():
        target = o
        *groups, name = path.split("__")
        for g in groups:
            target = getattr(target, g)
        setattr(target, name, value)
    return o


# -- merging (goldens: TF 2.21) -------------------------------------------------------------------
def test_later_options_win_field_by_field_and_the_change_is_warned(caplog):
    o1 = options(deterministic=False, threading__private_threadpool_size=2)
    o2 = options(deterministic=True, autotune__cpu_budget=3)
    with caplog.at_level(logging.WARNING, logger="eager.data"):
        ds = D.range(5).with_options(o1).map(lambda x: x).with_options(o2)
    merged = ds.options()
    assert (merged.deterministic, merged.threading.private_threadpool_size,
            merged.autotune.cpu_budget) == (True, 2, 3)
    assert "Changing the value of option deterministic from False to True." in caplog.text
    assert D.range(5).with_options(o2).with_options(o1).options().deterministic is False
    # Across inputs, the later input's options win (TF: zip((a, b)) True, zip((b, a)) False).
    a, b = D.range(3).with_options(o1), D.range(3).with_options(o2)
    assert D.zip((a, b)).options().deterministic is True
    assert D.zip((b, a)).options().deterministic is False
    assert a.concatenate(b).options().deterministic is True
    assert D.range(3).options() == tf.data.Options()


@pytest.mark.parametrize("path, value, message", [
    ("deterministic", 3, "Property \"deterministic\" must be of type <class 'bool'>, got: 3 "
                         "(type: <class 'int'>)"),
    ("experimental_deterministic", 1, "Property \"deterministic\" must be of type <class "
                                      "'bool'>, got: 1 (type: <class 'int'>)"),
    ("threading__private_threadpool_size", 1.5, "Property \"private_threadpool_size\" must be "
                                                "of type <class 'int'>, got: 1.5 (type: <class "
                                                "'float'>)"),
    ("autotune__enabled", 1, "Property \"enabled\" must be of type <class 'bool'>, got: 1 "
                             "(type: <class 'int'>)"),
    ("experimental_optimization__map_parallelization", 1,
     "Property \"map_parallelization\" must be of type <class 'bool'>, got: 1 (type: <class "
     "'int'>)"),
])
def test_options_are_typed_as_tensorflows(path, value, message):
    with pytest.raises(TypeError) as info:
        options(**{path: value})
    assert str(info.value) == message


def test_experimental_deterministic_is_an_alias_and_other_options_are_accepted():
    o = options(experimental_deterministic=False,
                experimental_optimization__map_parallelization=True,
                experimental_optimization__parallel_batch=True,
                threading__max_intra_op_parallelism=1)
    assert o.deterministic is False and o.experimental_deterministic is False
    assert [int(x) for x in D.range(4).map(lambda x: x + 1).batch(2).with_options(o).unbatch()] \
        == [1, 2, 3, 4]
    with pytest.raises(TypeError, match="Expected `tf.data.Options` but got <class 'int'>"):
        D.range(3).with_options(3)


# -- deterministic --------------------------------------------------------------------------------
def gated_map(arrived):
    """A map whose element 0 waits (bounded) until element 3's call has started, so that when
    order is not kept, elements after 0 come out first."""
    def body(v):
        v = int(v)
        if v == 3:
            arrived.set()
        if v == 0:
            arrived.wait(timeout=30)
        return v
    return lambda x: tf.py_function(body, [x], tf.int64)


@pytest.mark.parametrize("where", ["after", "before"])
def test_deterministic_false_lets_a_parallel_map_yield_as_finished(where):
    arrived = threading.Event()
    o = options(deterministic=False)
    ds = D.range(6)
    if where == "before":
        ds = ds.with_options(o)
    ds = ds.map(gated_map(arrived), num_parallel_calls=3)
    if where == "after":
        ds = ds.with_options(o)
    out = [int(x) for x in ds]
    assert sorted(out) == list(range(6)) and out[0] != 0


def test_the_maps_own_deterministic_argument_wins_over_the_options():
    arrived = threading.Event()
    ds = D.range(6).map(gated_map(arrived), num_parallel_calls=3, deterministic=True)
    assert [int(x) for x in ds.with_options(options(deterministic=False))] == list(range(6))


def test_options_reach_every_epoch_of_a_repeat():
    events = [threading.Event(), threading.Event()]
    epochs = []

    def body(v):
        v = int(v)
        if v == 0:
            epochs.append(None)
            events[len(epochs) - 1].wait(timeout=30)
        if v == 3:
            events[len(epochs) - 1].set()
        return v
    ds = D.range(6).map(lambda x: tf.py_function(body, [x], tf.int64), num_parallel_calls=3)
    out = [int(x) for x in ds.repeat(2).with_options(options(deterministic=False))]
    assert out[0] != 0 and out[6] != 0 and sorted(out) == sorted(list(range(6)) * 2)


# -- threads and AUTOTUNE -------------------------------------------------------------------------
def map_workers():
    return [t for t in threading.enumerate() if t.name.startswith("eager-data map")]


def test_private_threadpool_size_bounds_the_pipelines_function_calls():
    lock, running, most, workers = threading.Lock(), [0], [0], []

    def body(v):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        workers.append(len(map_workers()))
        with lock:
            running[0] -= 1
        return v
    fn = lambda x: tf.py_function(body, [x], tf.int64)  # noqa: E731
    ds = D.range(20).map(fn, num_parallel_calls=4).map(fn, num_parallel_calls=4)
    out = [int(x) for x in ds.with_options(options(threading__private_threadpool_size=1))]
    assert out == list(range(20))
    assert most[0] == 1  # one call at a time, over both maps
    assert max(workers) <= 2  # one worker per parallel map


def test_cpu_budget_caps_the_workers_autotune_starts():
    seen = []
    fn = lambda x: tf.py_function(lambda v: seen.append(len(map_workers())) or v,  # noqa: E731
                                  [x], tf.int64)
    ds = D.range(8).map(fn, num_parallel_calls=tf.data.AUTOTUNE)
    assert [int(x) for x in ds.with_options(options(autotune__cpu_budget=1))] == list(range(8))
    assert max(seen) == 1


def prefetch_channel(ds):
    it = iter(ds)
    next(it)
    return it, it._iterator._producer._channel


def test_autotune_disabled_keeps_an_autotuned_prefetch_buffer_at_its_first_size():
    ds = D.range(100).prefetch(tf.data.AUTOTUNE)
    it, channel = prefetch_channel(ds)
    assert channel.limit == autotune.PREFETCH_LIMIT
    it.close()
    it, channel = prefetch_channel(ds.with_options(options(autotune__enabled=False)))
    assert channel.limit == channel.capacity == autotune.PREFETCH_START
    assert [int(x) for x in it] == list(range(1, 100))


def test_ram_budget_caps_how_deep_an_autotuned_prefetch_buffer_grows():
    element_bytes = 1000 * 8  # float64 [1000]
    ds = D.range(20).map(lambda x: tf.fill([1000], tf.cast(x, tf.float64))).prefetch(-1)
    it, channel = prefetch_channel(ds.with_options(options(autotune__ram_budget=4 * element_bytes)))
    assert channel.limit == 4
    assert [float(x[0]) for x in it] == [float(i) for i in range(1, 20)]
