"""The threads behind input pipelines (`eager.data.threads`): prefetch, parallel map, device
staging, AUTOTUNE, and stopping.

What is checked: each iterator returns what iterating its source (and function) directly would,
in the same order (TensorFlow's element-wise errors included, recorded from TF 2.21); buffers
stay within their bounds; work really runs on other threads, at the same time where promised;
and every way of stopping (close, drain, an abandoned iterator, interpreter exit, fork) leaves no
thread running and never hangs. Waits are bounded and generous: a test fails, never hangs, when
a thread does not do what it should; no test asserts a duration.
"""

import gc
import subprocess
import sys
import textwrap
import threading
import time
import traceback

import numpy as np
import pytest

import eager
from eager.base.errors import FailedPreconditionError, InvalidArgumentError
from eager.data.threads import (AUTOTUNE, ParallelMap, Prefetcher, autotune, live_threads,
                                parallel_map, stage_to_device)
from eager.data.threads.channel import Channel
from eager.data.threads.parallel_map import MAP_BUFFER

PATIENCE_S = 30.0  # how long a test waits for a thread to get somewhere before failing


def wait_until(predicate, timeout=PATIENCE_S):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def pipeline_threads():
    return [t for t in threading.enumerate() if t.name.startswith("eager-data")]


@pytest.fixture(autouse=True)
def _no_pipeline_thread_outlives_a_test():
    yield
    gc.collect()
    assert wait_until(lambda: not pipeline_threads()), pipeline_threads()


class Counting:
    """An iterator over range(n) (forever with n=None) counting how many elements were taken;
    `gate`, when given, is acquired before each element is made."""

    def __init__(self, n=None, gate=None, fail_at=()):
        self.taken = 0
        self.n = n
        self.gate = gate
        self.fail_at = set(fail_at)

    def __iter__(self):
        return self

    def __next__(self):
        if self.gate is not None:
            assert self.gate.acquire(timeout=PATIENCE_S)
        i = self.taken
        if self.n is not None and i >= self.n:
            raise StopIteration
        self.taken += 1
        if i in self.fail_at:
            raise InvalidArgumentError(None, None, f"element {i} is bad")
        return i


def outcomes(iterator, count):
    """`count` calls of next(): values, error class names, 'stop' (as TF's golden lists)."""
    out = []
    for _ in range(count):
        try:
            out.append(next(iterator))
        except StopIteration:
            out.append("stop")
        except Exception as exc:  # noqa: BLE001 - recorded by name
            out.append(type(exc).__name__)
    return out


def less_than_two(x):
    if x >= 2:
        raise InvalidArgumentError(None, None, f"assertion failed: {x} < 2")
    return x


# TensorFlow 2.21: `Dataset.range(5).map(assert x < 2)`, with and without num_parallel_calls=2
# and .prefetch(2), read with 7 next() calls: an error per failing element, then the end.
TF_MAP_ERRORS = [0, 1, "InvalidArgumentError", "InvalidArgumentError", "InvalidArgumentError",
                 "stop", "stop"]


# -----------------------------------------------------------------------------------------------
# Prefetcher
# -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("buffer_size", [0, 1, 3, AUTOTUNE])
def test_prefetch_returns_the_source_in_order(buffer_size):
    with Prefetcher(lambda: iter(range(50)), buffer_size) as it:
        assert list(it) == list(range(50))
        assert outcomes(it, 2) == ["stop", "stop"]


def test_prefetch_makes_elements_on_its_own_thread_ahead_of_the_consumer():
    made_on = []

    def source():
        for i in range(3):
            made_on.append(threading.current_thread().name)
            yield i

    with Prefetcher(source, 3) as it:
        assert wait_until(lambda: len(made_on) == 3)  # before any next()
        assert list(it) == [0, 1, 2]
    assert made_on == ["eager-data prefetch"] * 3


def test_prefetch_reads_at_most_buffer_size_ahead():
    source = Counting()
    with Prefetcher(lambda: source, 4) as it:
        assert wait_until(lambda: source.taken == 4)
        time.sleep(0.05)  # room for a wrong producer to take more
        assert source.taken == 4
        assert [next(it), next(it)] == [0, 1]  # down to half: the producer refills
        assert wait_until(lambda: source.taken == 6)
        time.sleep(0.05)
        assert source.taken == 6


def test_prefetch_errors_are_raised_at_their_element_and_the_source_goes_on():
    with Prefetcher(lambda: map(less_than_two, range(5)), 2) as it:
        assert outcomes(it, 7) == TF_MAP_ERRORS


def test_a_producer_error_is_the_same_exception_naming_the_users_line():
    def gen():
        yield 1
        raise ValueError("broken source")  # the user's line

    with Prefetcher(gen, 2) as it:
        assert next(it) == 1
        with pytest.raises(ValueError, match="broken source") as info:
            next(it)
        frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
        assert "gen" in frames
        assert outcomes(it, 2) == ["stop", "stop"]  # a generator that raised is over


def test_a_source_that_cannot_be_made_fails_the_first_next():
    def make():
        raise OSError("no such file")

    with Prefetcher(make, 2) as it:
        assert outcomes(it, 3) == ["OSError", "stop", "stop"]


def test_prefetch_wrong_arguments():
    with pytest.raises(TypeError, match="zero-argument callable"):
        Prefetcher(iter(range(3)), 2)
    # TensorFlow 2.21's words for `prefetch(-2)`.
    with pytest.raises(InvalidArgumentError, match="buffer_size must be >= 0 or set buffer_size "
                                                   "to be -1 for auto-tuning"):
        Prefetcher(lambda: iter(()), -2)
    with pytest.raises(TypeError, match="buffer_size must be an integer"):
        Prefetcher(lambda: iter(()), 1.5)


# -----------------------------------------------------------------------------------------------
# Stopping
# -----------------------------------------------------------------------------------------------

def test_close_stops_a_producer_blocked_on_a_full_buffer():
    it = Prefetcher(lambda: Counting(), 2)
    assert next(it) == 0
    it.close()
    assert not pipeline_threads()
    assert outcomes(it, 2) == ["stop", "stop"]
    it.close()  # idempotent


def test_close_does_not_hang_on_a_producer_inside_user_code():
    entered, release = threading.Event(), threading.Event()
    made = []

    def source():
        for i in range(100):
            if i == 1:
                entered.set()
                assert release.wait(PATIENCE_S)
            made.append(i)
            yield i

    it = Prefetcher(source, 4)
    assert next(it) == 0
    assert entered.wait(PATIENCE_S)
    it.close(timeout=0.05)  # returns though the producer is stuck
    assert outcomes(it, 1) == ["stop"]
    release.set()
    # The producer finishes the element it was making, and exits without making another.
    assert wait_until(lambda: not pipeline_threads())
    assert made == [0, 1]


def test_an_abandoned_iterator_stops_its_thread():
    source = Counting()
    for x in Prefetcher(lambda: source, 2):
        if x == 3:
            break
    assert wait_until(lambda: not pipeline_threads())
    taken = source.taken
    time.sleep(0.05)
    assert source.taken == taken


def test_close_reaches_the_pipelines_upstream():
    def chain():  # only the outer iterator stays referenced here
        inner = ParallelMap(lambda: Counting(), lambda x: x + 1, 2)
        middle = Prefetcher(lambda: inner, 2)
        return parallel_map(lambda: middle, lambda x: -x, 2, deterministic=True)

    outer = chain()
    assert [next(outer) for _ in range(5)] == [-1, -2, -3, -4, -5]
    assert len(pipeline_threads()) == 5
    outer.close()
    assert not pipeline_threads()


def test_close_waits_for_nothing_after_the_source_ended():
    it = ParallelMap(lambda: iter(range(3)), lambda x: x, 2)
    assert list(it) == [0, 1, 2]
    assert wait_until(lambda: not pipeline_threads())
    it.close()
    assert live_threads() == []


def test_drain_returns_what_was_made_and_leaves_the_source_where_it_is():
    source = Counting(fail_at={2})
    it = Prefetcher(lambda: source, 4)
    assert next(it) == 0
    assert wait_until(lambda: source.taken == 4)
    left = it.close(drain=True)
    assert [type(x).__name__ if isinstance(x, Exception) else x for x in left] == [
        1, "InvalidArgumentError", 3]
    assert next(source) == 4  # nothing taken and dropped
    assert not pipeline_threads()
    assert it.close(drain=True) == []


def test_drain_waits_for_the_element_being_made():
    entered, release = threading.Event(), threading.Event()
    source = iter(range(10))

    def slow(x):
        if x == 1:
            entered.set()
            assert release.wait(PATIENCE_S)
        return x * 10

    it = ParallelMap(lambda: source, slow, 1, buffer_size=0)
    assert next(it) == 0
    assert entered.wait(PATIENCE_S)
    threading.Timer(0.05, release.set).start()
    assert it.close(drain=True) == [10]
    assert next(source) == 2


def test_drain_of_an_unbuffered_prefetch_is_empty_and_keeps_the_source():
    source = iter(range(5))
    it = Prefetcher(lambda: source, 0)
    assert next(it) == 0
    assert it.close(drain=True) == []
    assert next(source) == 1


def test_interpreter_exit_stops_pipelines_without_waiting_on_user_code():
    script = textwrap.dedent("""
        import itertools, threading, time
        from eager.data.threads import Prefetcher, ParallelMap
        blocked = Prefetcher(lambda: itertools.count(), 2)           # blocked on a full buffer
        mapped = ParallelMap(lambda: itertools.count(), lambda x: x * 2, 2)
        stuck = ParallelMap(lambda: itertools.count(), lambda x: time.sleep(3600), 1)
        next(blocked), next(mapped)
        print("ok", flush=True)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork on this system")
def test_an_iterator_made_before_a_fork_fails_in_the_child():
    script = textwrap.dedent("""
        import os, sys
        from eager.base.errors import FailedPreconditionError
        from eager.data.threads import Prefetcher
        it = Prefetcher(lambda: iter(range(100)), 2)
        assert next(it) == 0
        pid = os.fork()
        if pid == 0:
            try:
                next(it)
            except FailedPreconditionError as exc:
                os._exit(0 if "made before the process forked" in str(exc) else 2)
            os._exit(1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        assert next(it) == 1  # the parent's iterator goes on
        it.close()
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", script], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert FailedPreconditionError.__name__  # (the class the child checks for)


# -----------------------------------------------------------------------------------------------
# AUTOTUNE
# -----------------------------------------------------------------------------------------------

def test_autotune_runs_one_map_worker_per_available_cpu():
    assert AUTOTUNE == -1
    it = ParallelMap(lambda: iter(range(3)), lambda x: x, AUTOTUNE)
    assert it.num_parallel_calls == autotune.available_cpus()
    assert list(it) == [0, 1, 2]


def test_map_parallelism_is_checked_with_tensorflows_words():
    for bad in (0, -2):
        with pytest.raises(InvalidArgumentError,
                           match=r"num_parallel_calls must be greater than zero\."):
            ParallelMap(lambda: iter(()), lambda x: x, bad)
    with pytest.raises(TypeError, match="num_parallel_calls must be an integer"):
        ParallelMap(lambda: iter(()), lambda x: x, 1.5)
    with pytest.raises(TypeError, match="callable map function"):
        ParallelMap(lambda: iter(()), None, 1)


def test_an_autotuned_buffer_deepens_when_drained_after_being_full_up_to_its_limit():
    gate = threading.Semaphore(0)
    source = Counting(gate=gate)
    it = Prefetcher(lambda: source, AUTOTUNE)
    channel = it._channel
    assert channel.capacity == autotune.PREFETCH_START
    expected = autotune.PREFETCH_START
    consumed = 0
    while expected < autotune.PREFETCH_LIMIT:
        for _ in range(expected):
            gate.release()
        assert wait_until(lambda: channel._putters == 1)  # noqa: B023 - full, waiting for room
        for _ in range(expected):  # a burst drains it
            assert next(it) == consumed
            consumed += 1
        # The next read finds it empty after it was full: the buffer deepens (up to the limit).
        gate.release()
        assert next(it) == consumed
        consumed += 1
        expected = min(expected * 2, autotune.PREFETCH_LIMIT)
        assert channel.capacity == expected
    for _ in range(2 * expected):
        gate.release()
    assert wait_until(lambda: channel._putters == 1)
    assert len(channel) == autotune.PREFETCH_LIMIT  # never deeper than the limit
    it.close()


def test_a_slow_producer_keeps_an_autotuned_buffer_small():
    channel = Channel(2, 16)
    channel.put(1)
    assert channel.get() == 1
    channel.put(2)
    assert channel.get() == 2
    assert channel.capacity == 2  # never full, so never deepened


# -----------------------------------------------------------------------------------------------
# ParallelMap
# -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("num_parallel_calls", [1, 2, 4, AUTOTUNE])
def test_deterministic_map_keeps_the_source_order(num_parallel_calls):
    rng = np.random.default_rng(0)
    delays = rng.uniform(0, 0.002, size=60)

    def fn(x):
        time.sleep(delays[x])  # finishing out of order
        return x * x

    with ParallelMap(lambda: iter(range(60)), fn, num_parallel_calls) as it:
        assert list(it) == [x * x for x in range(60)]


def test_map_runs_its_calls_at_the_same_time():
    meeting = threading.Barrier(3, timeout=PATIENCE_S)

    def fn(x):
        meeting.wait()  # only three calls running at once get past this
        return x

    with ParallelMap(lambda: iter(range(6)), fn, 3) as it:
        assert list(it) == list(range(6))


def test_an_unordered_map_returns_elements_as_they_finish():
    release = threading.Event()

    def fn(x):
        if x == 0:
            assert release.wait(PATIENCE_S)
        return x

    it = ParallelMap(lambda: iter(range(5)), fn, 2, deterministic=False, buffer_size=3)
    firsts = [next(it) for _ in range(4)]  # element 0 is still being computed
    assert firsts == [1, 2, 3, 4]
    release.set()
    assert outcomes(it, 2) == [0, "stop"]


def test_map_takes_at_most_its_workers_plus_buffer_from_the_source():
    release = threading.Event()
    source = Counting()
    it = ParallelMap(lambda: source, lambda x: release.wait(PATIENCE_S) and x, 2)
    assert wait_until(lambda: source.taken == 2)  # both workers busy
    release.set()
    assert wait_until(lambda: source.taken == 2 + MAP_BUFFER)
    time.sleep(0.05)
    assert source.taken == 2 + MAP_BUFFER
    assert next(it) == 0
    assert wait_until(lambda: source.taken == 3 + MAP_BUFFER)
    it.close()


@pytest.mark.parametrize("num_parallel_calls", [1, 2])
def test_map_errors_are_per_element_as_tensorflows(num_parallel_calls):
    with ParallelMap(lambda: iter(range(5)), less_than_two, num_parallel_calls) as it:
        assert outcomes(it, 7) == TF_MAP_ERRORS


def test_a_map_function_error_is_the_same_exception_naming_the_users_line():
    def fn(x):
        return 1 // x  # the user's line

    with ParallelMap(lambda: iter([1, 0, 2]), fn, 2) as it:
        assert next(it) == 1
        with pytest.raises(ZeroDivisionError) as info:
            next(it)
        assert "fn" in [f.name for f in traceback.extract_tb(info.value.__traceback__)]
        assert outcomes(it, 2) == [0, "stop"]


def test_source_errors_pass_through_a_map_in_order():
    with ParallelMap(lambda: Counting(5, fail_at={1, 3}), lambda x: x * 10, 3) as it:
        assert outcomes(it, 6) == [0, "InvalidArgumentError", 20, "InvalidArgumentError", 40,
                                   "stop"]


def test_a_map_function_raising_stop_iteration_is_an_error_not_the_end():
    def fn(x):
        if x == 1:
            raise StopIteration
        return x

    with ParallelMap(lambda: iter(range(3)), fn, 1) as it:
        assert outcomes(it, 4) == [0, "RuntimeError", 2, "stop"]


def test_map_functions_run_eager_ops_and_eager_functions_on_the_workers():
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((64, 64)).astype(np.float32) for _ in range(16)]

    @eager.function
    def traced(x):
        return eager.tanh(eager.matmul(x, x) + 1.0)

    concrete = traced.get_concrete_function(eager.TensorSpec([64, 64], eager.float32))
    for fn in (traced, concrete, lambda x: eager.reduce_sum(eager.square(x), axis=0)):
        with ParallelMap(lambda: (eager.constant(x) for x in xs), fn, 4) as it:  # noqa: B023
            got = [y.numpy() for y in it]
        want = [fn(eager.constant(x)).numpy() for x in xs]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)


# -----------------------------------------------------------------------------------------------
# Device staging
# -----------------------------------------------------------------------------------------------

def test_staging_copies_elements_to_the_gpu_on_its_copy_stream_before_they_are_asked_for(
        simulated_gpu):
    gpu = simulated_gpu
    with eager.device("CPU:0"):
        elements = [{"x": eager.constant(np.full((4, 3), i, np.float32)),
                     "y": (eager.constant(i), eager.constant([True, False]))}
                    for i in range(6)]
    with stage_to_device(iter(elements), "GPU:0", 2) as it:
        for i, element in enumerate(it):
            leaves = [element["x"], *element["y"]]
            for leaf in leaves:
                assert leaf.device == "GPU:0"
                if leaf.dtype in (eager.int32, eager.bool):  # small: stays in host memory
                    assert type(leaf._value) is np.ndarray
                    continue
                event = leaf._value._ready
                assert event._stream is gpu.copy_stream  # copied on the copy stream
                assert event.query()  # and already there when handed over
            np.testing.assert_array_equal(element["x"].numpy(), np.full((4, 3), i))
            assert element["y"][0].numpy() == i
            np.testing.assert_array_equal(element["y"][1].numpy(), [True, False])
            assert (element["x"] * 2.0).device == "GPU:0"


def test_staged_batches_keep_their_values_while_the_step_computes_and_frees_buffers(
        simulated_gpu):
    """The step's kernels read staged batches and drop them while later batches are copied:
    every batch keeps its values until the kernels that read it have run, and the step's own
    buffers go round the GPU's memory pool meanwhile."""
    with eager.device("CPU:0"):
        batches = [eager.constant(np.full((64, 32), i, np.float32)) for i in range(40)]
    w = eager.ones((32, 8))
    sums = []
    reused = simulated_gpu.pool.reused
    with stage_to_device(iter(batches), "GPU:0", 3) as it:
        for batch in it:
            sums.append(eager.reduce_sum(eager.matmul(batch, w)))
            del batch
    assert [s.numpy() for s in sums] == [i * 64 * 32 * 8 for i in range(40)]
    assert simulated_gpu.pool.reused > reused  # blocks did go round
    assert "eager-data staging to GPU:0" not in [t.name for t in threading.enumerate()]


def test_staging_without_a_buffer_copies_on_the_consumers_thread(simulated_gpu):
    with eager.device("CPU:0"):
        elements = [eager.constant([1.0, 2.0]) for _ in range(3)]
    it = stage_to_device(lambda: iter(elements), "GPU:0", 0)
    assert not pipeline_threads()
    staged = list(it)
    assert [t.device for t in staged] == ["GPU:0"] * 3
    np.testing.assert_array_equal(staged[2].numpy(), [1.0, 2.0])


def test_staging_passes_tensors_already_on_the_device_through():
    tensors = [eager.constant([1, 2]), eager.constant([3])]
    device = tensors[0].device
    with stage_to_device(iter(tensors), device, 1) as it:
        assert [t is s for t, s in zip(it, tensors)] == [True, True]


@pytest.mark.cpu_only(reason="with no GPU, soft placement stages to the CPU")
def test_staging_to_a_missing_gpu_stages_to_the_cpu_as_tensorflow():
    with stage_to_device(iter([eager.constant(1.0)]), "/gpu:0", 1) as it:
        assert [t.device for t in it] == ["CPU:0"]


def test_staging_wrong_elements_and_devices():
    with stage_to_device(iter([eager.constant(1.0), np.ones(2)]), "CPU:0", 1) as it:
        assert next(it).numpy() == 1.0
        with pytest.raises(TypeError, match="prefetch_to_device: dataset elements must be "
                                            "tensors.*ndarray"):
            next(it)
    with pytest.raises(ValueError, match="Invalid device specification 'XYZ:0'"):
        stage_to_device(iter(()), "XYZ:0", 1)
    with pytest.raises(TypeError, match="an iterator, or a zero-argument callable"):
        stage_to_device([1, 2], "CPU:0", 1)
