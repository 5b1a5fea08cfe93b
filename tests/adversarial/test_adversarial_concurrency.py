"""Adversarial concurrency: variables updated and read from several threads, some inside
`async_scope`s, on the CPU and on a simulated GPU; checkpoints saved and restored while another
thread trains; a function traced from several threads at once with the same and different
signatures, and one whose first call creates its variable. Every scenario runs with a generous
deadline so that a hang fails instead of stalling the suite."""

import os
import threading

import numpy as np
import pytest

import eager as tf


def run_threads(targets, seconds=120):
    """Runs each target on its own thread; re-raises the first error; fails on a hang."""
    errors = []

    def guarded(target):
        def run():
            try:
                target()
            except BaseException as exc:  # noqa: BLE001 - re-raised on the test's thread
                errors.append(exc)
        return run

    threads = [threading.Thread(target=guarded(t), daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds)
    assert not any(t.is_alive() for t in threads), f"still running after {seconds} s: hung"
    if errors:
        raise errors[0]


@pytest.fixture(params=["cpu", "simulated gpu"])
def device_kind(request):
    if request.param == "simulated gpu":
        request.getfixturevalue("simulated_gpu")
    return request.param


def test_updates_from_sync_and_async_threads_lose_nothing_and_reads_are_whole(device_kind):
    """Six threads add ones to a vector, three of them inside `async_scope`; a reader checks
    that every read is one whole write (all elements equal, never decreasing)."""
    n_threads, steps = 6, 150
    v = tf.Variable(np.zeros(4, np.float32))
    total = tf.Variable(0, dtype=tf.int64)
    ones = tf.ones([4])
    stop = threading.Event()
    reads = []

    def update(asynchronous):
        def run():
            if asynchronous:
                with tf.experimental.async_scope():
                    for _ in range(steps):
                        v.assign_add(ones)
                        total.assign_add(1)
            else:
                for _ in range(steps):
                    v.assign_add(ones)
                    total.assign_add(1)
        return run

    def read():
        while not stop.is_set():
            value = v.numpy()
            assert (value == value[0]).all(), value
            assert not reads or value[0] >= reads[-1], (value, reads[-1])
            reads.append(value[0])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        run_threads([update(i % 2 == 0) for i in range(n_threads)])
    finally:
        stop.set()
        reader.join(60)
    assert not reader.is_alive()
    tf.experimental.sync_devices()
    assert v.numpy().tolist() == [n_threads * steps] * 4
    assert total.numpy() == n_threads * steps
    assert reads  # the reader ran


def test_checkpoints_saved_and_restored_while_another_thread_trains(tmp_path):
    """Each checkpoint holds one consistent state of the variable (every element the same
    count), its number is its own, and restoring while training runs raises nothing."""
    v = tf.Variable(np.zeros(64, np.float32))
    opt = tf.optimizers.SGD(1.0)
    checkpoint = tf.train.Checkpoint(v=v, opt=opt)
    manager = tf.train.CheckpointManager(checkpoint, str(tmp_path), max_to_keep=4)
    stop = threading.Event()
    steps = [0]

    def train():
        minus_ones = -tf.ones([64])
        while not stop.is_set():
            opt.apply_gradients([(minus_ones, v)])
            steps[0] += 1

    paths = []

    def save():
        for _ in range(12):
            paths.append(manager.save())

    def restore():
        for _ in range(12):
            latest = manager.latest_checkpoint
            if latest:
                other = tf.Variable(np.zeros(64, np.float32))
                tf.train.Checkpoint(v=other).restore(latest).expect_partial()
                value = other.numpy()
                assert (value == value[0]).all(), value

    trainer = threading.Thread(target=train, daemon=True)
    trainer.start()
    try:
        run_threads([save, save, restore])
    finally:
        stop.set()
        trainer.join(60)
    assert not trainer.is_alive()
    assert len(set(paths)) == len(paths) == 24
    numbers = sorted(int(p.rsplit("-", 1)[1]) for p in paths)
    assert numbers == list(range(1, 25))
    assert len(manager.checkpoints) == 4
    for path in manager.checkpoints:
        assert os.path.exists(path)
        other = tf.Variable(np.zeros(64, np.float32))
        tf.train.Checkpoint(v=other).restore(path).expect_partial()
        value = other.numpy()
        assert (value == value[0]).all() and 0 <= value[0] <= steps[0]


@pytest.mark.filterwarnings("ignore:.*triggered eager.function retracing")
def test_a_function_traced_from_many_threads_at_once_traces_each_signature_once():
    f = tf.function(lambda x, scale: x * scale + 1.0)
    barrier = threading.Barrier(8)

    def call(i):
        def run():
            barrier.wait(60)
            for j in range(25):
                k = i + j
                n = k % 4 + 1
                dtype = (tf.float32, tf.float64)[k // 4 % 2]
                x = tf.cast(tf.range(n), dtype)
                got = f(x, 2.0).numpy()
                np.testing.assert_array_equal(got, np.arange(n) * 2.0 + 1.0)
                assert got.dtype == dtype.as_numpy_dtype
        return run

    run_threads([call(i) for i in range(8)])
    # Four lengths times two dtypes: each signature traced exactly once, however many threads
    # asked for it at the same moment.
    assert f.experimental_get_tracing_count() == 8


def test_a_first_call_creating_its_variable_from_many_threads_creates_one():
    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = None

        @tf.function
        def __call__(self, x):
            if self.w is None:
                self.w = tf.Variable(lambda: tf.fill([2], 3.0))
            self.w.assign_add(tf.ones([2]))
            return self.w * x

    model = Model()
    resources = tf.experimental.live_resource_count()
    barrier = threading.Barrier(6)
    outputs = []

    def call():
        barrier.wait(60)
        outputs.append(model(tf.constant([1.0, 2.0])).numpy())

    run_threads([call] * 6)
    assert tf.experimental.live_resource_count() == resources + 1  # one variable
    assert model.w.numpy().tolist() == [9.0, 9.0]  # 3, plus one per call
    seen = sorted(tuple(o.tolist()) for o in outputs)
    assert seen == [(k, 2.0 * k) for k in (4.0, 5.0, 6.0, 7.0, 8.0, 9.0)]
