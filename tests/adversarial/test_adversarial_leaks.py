"""Adversarial leaks: loops over gradient tapes (persistent, nested), Jacobians,
`vectorized_map`, checkpoints written and restored, a `CheckpointManager`, `async_scope`s on
threads that come and go, functions that create their variables and are dropped, optimizers
made and dropped. Memory (Python's allocations, traced with `tracemalloc` over windows of the
loop; a leak grows in every window, so the smallest window's growth is compared, which a
cache filling up once does not inflate), live resources and threads must stay flat."""

import gc
import threading

import numpy as np
import pytest

import eager as tf
from tests.memory_growth import window_growth_kib_per_1000

#: Growth per 1,000 iterations that counts as flat (a leak of one small object per iteration
#: is about 50 KiB per 1,000).
FLAT_KIB = 12.0


def growth_kib_per_1000(step, warmup=150, windows=4, per_window=50):
    growth = window_growth_kib_per_1000(step, warmup, windows, per_window)
    return min(growth), growth

x = None


@pytest.fixture(autouse=True)
def _inputs():
    global x
    x = tf.constant([1.0, 2.0, 3.0])
    yield
    x = None


def _tape():
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * x * v)
    tape.gradient(y, [x, v])


def _persistent_tape():
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * x)
        z = y * 2.0
    tape.gradient(y, x)
    tape.gradient(z, x)


def _persistent_tape_never_asked():
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        tf.reduce_sum(tf.exp(x))


def _nested_tapes():
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(x ** 3)
        g = inner.gradient(y, x)
    outer.gradient(g, x)


def _jacobians():
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * 2.0
        rows = tf.reshape(y, [3, 1])
    tape.jacobian(y, x)
    tape.jacobian(rows, x)


def _vectorized_map():
    tf.vectorized_map(lambda a: tf.reduce_sum(a * 2.0), tf.ones([4, 2]))


def _optimizer_made_and_dropped():
    w = tf.Variable([1.0, 2.0])
    tf.optimizers.Adam(0.1).apply_gradients([(tf.ones([2]), w)])


def _function_creating_its_variable_and_dropped():
    holder = []

    @tf.function
    def f(a):
        if not holder:
            holder.append(tf.Variable(lambda: tf.ones([3])))
        return holder[0] * a

    f(x)
    f(x)


LOOPS = {"tape": _tape, "persistent tape": _persistent_tape,
         "persistent tape never asked": _persistent_tape_never_asked,
         "nested tapes": _nested_tapes, "jacobian": _jacobians,
         "function creating a variable": _function_creating_its_variable_and_dropped}
# (`vectorized_map` and optimizers made per step keep filling numpy's and the name registries'
# small caches for a few thousand steps: tests/test_bounded_caches.py measures vectorized_map
# over a long warm-up; here they are checked for resources only.)
RESOURCES_ONLY = {"vectorized_map": _vectorized_map, "optimizer": _optimizer_made_and_dropped}


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_loops_keep_memory_and_resources_flat(name):
    step = LOOPS[name]
    step()
    gc.collect()
    resources = tf.experimental.live_resource_count()
    least, windows = growth_kib_per_1000(step)
    gc.collect()
    assert least < FLAT_KIB, windows
    assert tf.experimental.live_resource_count() == resources


@pytest.mark.parametrize("name", sorted(RESOURCES_ONLY))
def test_loops_keep_resources_flat(name):
    step = RESOURCES_ONLY[name]
    step()
    gc.collect()
    resources = tf.experimental.live_resource_count()
    for _ in range(200):
        step()
    gc.collect()
    assert tf.experimental.live_resource_count() == resources


def test_checkpoint_write_restore_and_manager_loops_keep_resources_and_files_flat(tmp_path):
    v = tf.Variable(np.arange(8, dtype=np.float32))
    checkpoint = tf.train.Checkpoint(v=v, nested={"w": tf.Variable([1.0])})
    manager = tf.train.CheckpointManager(checkpoint, str(tmp_path / "managed"), max_to_keep=2)
    path = str(tmp_path / "plain")

    def step():
        checkpoint.restore(checkpoint.write(path))
        manager.save()
        fresh = tf.train.Checkpoint(v=tf.Variable(np.zeros(8, np.float32)))
        fresh.restore(manager.latest_checkpoint).expect_partial()

    step()
    gc.collect()
    resources = tf.experimental.live_resource_count()
    for _ in range(150):
        step()
    gc.collect()
    assert tf.experimental.live_resource_count() == resources
    assert len(list((tmp_path / "managed").iterdir())) == 2 + 1  # two kept, the state file


def test_async_scopes_on_threads_that_come_and_go_leave_no_threads_or_executors():
    from eager import async_exec  # noqa: PLC0415 - the registry of live executors

    base = tf.constant([1.0])

    def in_scope():
        with tf.experimental.async_scope():
            (base * 2.0).numpy()
            base + 1.0  # left pending: the scope's exit waits for it

    def switched():
        tf.config.experimental.set_synchronous_execution(False)
        base * 3.0  # the thread ends in async mode, its work queued

    gc.collect()
    threads_before = threading.active_count()
    executors_before = len(async_exec._registry)
    for _ in range(4):
        workers = [threading.Thread(target=t) for t in [in_scope, switched] * 8]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
        assert not any(w.is_alive() for w in workers)
    gc.collect()
    tf.experimental.sync_devices()
    deadline = threading.Event()
    for _ in range(100):  # worker threads end shortly after their executors are dropped
        if threading.active_count() <= threads_before:
            break
        deadline.wait(0.05)
    assert threading.active_count() <= threads_before
    assert len(async_exec._registry) <= executors_before
