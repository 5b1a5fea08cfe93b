"""Asynchronous dispatch under pressure: a bounded queue with prompt reads, exceptions of any
kind on the worker, a worker that dies, errors nobody synced at exit. Scenarios that hung on
failure run on a helper thread with a deadline, so a regression fails instead of hanging."""

import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import eager as tf
from eager.async_exec import AsyncExecutor, _current_executor

async_scope = tf.experimental.async_scope
MAX_PENDING_OPS = tf.experimental.MAX_PENDING_OPS


def within(seconds, fn):
    """fn()'s result, run on a helper thread; fails if it is still running after `seconds` (it
    hung: the thread is left behind, a daemon). Exceptions, pytest's included, are re-raised."""
    box = {}

    def run():
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised on the test's thread
            box["error"] = exc
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: hung"
    if "error" in box:
        raise box["error"]
    return box.get("result")


class BlockingStream:
    """An `eager.print` stream whose `write` waits until released: it holds the executor's
    worker on one node for as long as a test needs."""

    def __init__(self):
        self.writing = threading.Event()
        self.release = threading.Event()

    def write(self, text):
        self.writing.set()
        assert self.release.wait(60)


# -- a bounded queue, and reads that wait only for what was issued before them ------------------

def test_the_issuing_thread_blocks_at_the_pending_bound_until_its_worker_catches_up():
    x = tf.constant([1.0, 2.0])
    stream = BlockingStream()
    issued = []
    box = {}

    def issue():
        with async_scope():
            box["executor"] = _current_executor()
            tf.print(x, output_stream=stream)
            assert stream.writing.wait(30)  # the worker holds it: the queue is empty
            y = x
            for i in range(MAX_PENDING_OPS + 100):
                y = y + 1.0
                issued.append(i)
            box["y"] = y.numpy()

    thread = threading.Thread(target=issue, daemon=True)
    thread.start()
    try:
        assert stream.writing.wait(30)
        deadline = time.monotonic() + 30
        while len(issued) < MAX_PENDING_OPS - 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # (room to overshoot the bound, were it not enforced)
        # Blocked at the bound: the print running and MAX_PENDING_OPS - 1 additions queued.
        assert box["executor"].pending == MAX_PENDING_OPS
        assert len(issued) == MAX_PENDING_OPS - 1 and thread.is_alive()
    finally:
        stream.release.set()
    thread.join(60)
    assert not thread.is_alive()
    assert box["y"].tolist() == [1.0 + MAX_PENDING_OPS + 100, 2.0 + MAX_PENDING_OPS + 100]


def test_a_loop_issuing_faster_than_its_worker_stays_bounded_and_reads_stay_prompt():
    """One thread loops on variable updates under async dispatch, each far cheaper to issue
    than to run; another reads, waiting first for everything issued (`sync_devices`). The queue
    stays at the bound, every read waits only for the updates issued before it (a few hundred
    milliseconds at most; unbounded, the first read waited for the whole loop), and no update
    is lost."""
    n = 200_000
    v = tf.Variable(np.zeros(n, np.float32))
    ones = tf.constant(np.ones(n, np.float32))
    stop = threading.Event()
    started = threading.Event()
    executors, issued, reads, pending = [], [0], [], []

    def updater():
        with async_scope():
            executors.append(_current_executor())
            started.set()
            while not stop.is_set():
                v.assign_add(ones)
                issued[0] += 1

    def reader():
        started.wait()
        while not stop.is_set():
            began = time.monotonic()
            tf.experimental.sync_devices()
            v.numpy()
            reads.append(time.monotonic() - began)

    threads = [threading.Thread(target=updater, daemon=True),
               threading.Thread(target=reader, daemon=True)]
    for t in threads:
        t.start()
    assert started.wait(30)
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        pending.append(executors[0].pending)
        time.sleep(0.002)
    stop.set()
    for t in threads:
        t.join(60)
        assert not t.is_alive()
    assert max(pending) <= MAX_PENDING_OPS
    assert issued[0] > MAX_PENDING_OPS  # the bound was reached: not vacuous
    # A few tens of ms is usual; a loaded machine has stretched one read past a second. An
    # unbounded queue makes the first read wait for every update the loop issued, far longer
    # (1.5 s of issuing queues tens of seconds of updates), so the bound stays meaningful.
    assert reads and max(reads) < 5.0, reads
    assert v.numpy()[[0, -1]].tolist() == [issued[0], issued[0]]


# -- every exception raised on the worker surfaces at a sync point; the worker never dies ------

@pytest.mark.parametrize("kind", [SystemExit, KeyboardInterrupt, GeneratorExit])
def test_a_base_exception_raised_by_a_kernel_surfaces_at_the_next_sync_point(kind):
    """A `BaseException` that is not an `Exception`, raised by work on the worker (here a print
    stream's `write`), is that work's error like any other: raised at the next sync point,
    naming the op; later ops fail fast with it (the first error wins) and
    `async_clear_error()` recovers. It used to end the worker, and every later sync hung."""
    class Stream:
        def write(self, text):
            raise kind("raised by write")

    def scenario():
        x = tf.constant([1.0, 2.0])
        with async_scope():
            tf.print(x, output_stream=Stream())
            after = x + 1.0
            message = f"PrintV2: {kind.__name__}: raised by write"
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                tf.experimental.async_wait()
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                after.numpy()  # issued after the failure: never ran
            tf.experimental.async_clear_error()
            again = x * 2.0
            assert again.numpy().tolist() == [2.0, 4.0]
        return True

    assert within(30, scenario)


def test_a_worker_that_dies_fails_its_queue_says_so_and_a_clear_restarts_it():
    """Should the worker's own loop fail (simulated: its node runner raises), every sync point
    raises an error saying the worker died instead of waiting for it, and
    `async_clear_error()` starts a new one."""
    def scenario():
        x = tf.constant([1.0, 2.0])
        # On the CPU: a GPU's ops on computed operands would be launched without the worker.
        with async_scope(), tf.device("CPU:0"):
            executor = _current_executor()

            def broken(node):
                raise SystemExit("the worker's loop failed")
            executor._run_node = broken
            try:
                y = x + 1.0

                with pytest.raises(tf.errors.InternalError, match="worker thread died"):
                    y.numpy()
                with pytest.raises(tf.errors.InternalError, match="worker thread died"):
                    tf.experimental.async_wait()
                with pytest.raises(tf.errors.InternalError, match="worker thread died"):
                    (x * 3.0).numpy()  # issued to the dead executor: fails at once
            finally:
                del executor._run_node
            tf.experimental.async_clear_error()
            assert (x * 2.0).numpy().tolist() == [2.0, 4.0]
        return True

    assert within(30, scenario)


# -- an error never synced is dropped quietly at exit ------------------------------------------

def test_an_async_error_never_synced_is_dropped_quietly_at_exit():
    """As TensorFlow's executor drops it: no "Exception ignored in ... __del__" when the
    process ends (here on its own uncaught error, which keeps frames alive into the teardown,
    with another thread still in async mode)."""
    code = (
        "import threading\n"
        "import eager as tf\n"
        "issued = threading.Event()\n"
        "def background():\n"
        "    tf.config.experimental.set_synchronous_execution(False)\n"
        "    tf.gather(tf.constant([1.0]), [5])\n"
        "    issued.set()\n"
        "    threading.Event().wait()\n"
        "threading.Thread(target=background, daemon=True).start()\n"
        "issued.wait()\n"
        "tf.config.experimental.set_synchronous_execution(False)\n"
        "tf.gather(tf.constant([1.0]), [7])\n"
        "raise RuntimeError('the program ends with its own error')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1
    assert result.stderr.rstrip().endswith(
        "RuntimeError: the program ends with its own error"), result.stderr
    assert "Exception ignored" not in result.stderr and "GatherV2" not in result.stderr, (
        result.stderr)


class _InterruptedOnce(threading.Event):
    """A thread's `_started` event whose first wait raises KeyboardInterrupt, as Ctrl-C does
    when it lands inside `Thread.start` after the OS thread was launched."""

    def __init__(self):
        super().__init__()
        self.interrupted = False

    def wait(self, timeout=None):
        if not self.interrupted:
            self.interrupted = True
            raise KeyboardInterrupt
        return super().wait(timeout)


def test_an_interrupt_inside_thread_start_does_not_launch_a_second_worker():
    executor = AsyncExecutor()
    executor._worker = threading.Thread(target=executor._run, daemon=True)
    executor._worker._started = _InterruptedOnce()
    errors = []
    previous_hook = threading.excepthook
    threading.excepthook = lambda args: errors.append(args.exc_value)
    try:
        with pytest.raises(KeyboardInterrupt):
            executor._start_worker()
        executor._start_worker()  # the retry the issuing code makes after an interrupt
        assert executor._worker.is_alive()
        executor.close()
        executor._worker.join(10)
        assert not executor._worker.is_alive()
    finally:
        threading.excepthook = previous_hook
    assert errors == []  # CPython's `del _limbo[self]` KeyError of a doubly started thread
