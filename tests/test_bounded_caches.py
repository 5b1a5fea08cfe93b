"""Caches that live as long as what they serve: making and dropping functions, vectorizing in a
loop, and calling a `reduce_retracing` function with ever-new shapes keep memory flat.

Each test traces Python's allocations (`tracemalloc`, started before the warm-up so that what the
warm-up made and the loop frees counts as freed) over windows of the loop, collecting garbage
after each, and looks at the median window: a leak grows every window, while a one-time growth
(an interpreter table resizing) shows in one."""

import linecache
import statistics

import eager as tf
from tests.memory_growth import window_growth_kib_per_1000

#: Growth per 1,000 iterations that counts as flat.
FLAT_KIB = 10.0


def _median_growth_kib_per_1000(step, warmup, windows=5, per_window=400):
    growth = window_growth_kib_per_1000(step, warmup, windows, per_window)
    return statistics.median(growth), growth


def test_making_and_dropping_functions_keeps_memory_flat():
    """Each compiled plan and fused kernel had a file name of its own for `linecache`, and
    Python keeps every file name it compiled under: about 160 bytes per function, forever."""
    x = tf.constant([1.0, 2.0])

    def step():
        f = tf.function(lambda a: a * 2.0 + 1.0)
        f(x)
        f(x)  # the second call compiles the program (and its fused kernel)

    entries = len(linecache.cache)
    median, windows = _median_growth_kib_per_1000(step, warmup=300)
    assert median < FLAT_KIB, windows
    assert len(linecache.cache) <= entries + 10  # registrations go with their programs


def test_vectorized_map_in_a_loop_keeps_memory_flat():
    xs = tf.ones([3, 2])

    def step():
        tf.vectorized_map(lambda a: a * 2.0 + 1.0, xs)

    median, windows = _median_growth_kib_per_1000(step, warmup=300)
    assert median < FLAT_KIB, windows


def test_reduce_retracing_with_ever_new_lengths_keeps_memory_flat(cpu_only):
    """Every new length was a new exact key for the one generalised trace, kept forever. (On
    the CPU: a GPU's memory pool, the simulated one's as CuPy's, keeps a freed block of every
    size it served for reuse, which is not this cache.)"""
    f = tf.function(lambda a: a * 2.0, reduce_retracing=True)
    length = iter(range(1, 10**6))

    def step():
        f(tf.ones([next(length)]))

    median, windows = _median_growth_kib_per_1000(step, warmup=1500)
    assert median < FLAT_KIB, windows
    assert f.experimental_get_tracing_count() == 2  # one exact trace, then the general one
    # The forgotten keys' calls still find that trace, without tracing again.
    f(tf.ones([1]))
    f(tf.ones([5]))
    assert f.experimental_get_tracing_count() == 2
