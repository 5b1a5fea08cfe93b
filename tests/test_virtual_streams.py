"""Simulated-GPU streams under pressure: the bound on queued launches, launches that must never
wait for room (stream workers, finalizers, paused streams), reads behind a busy writer,
interleavings of launches, events, failures and synchronizations, and arrays collected at
awkward moments (an interrupt, interpreter exit).

A real CUDA stream blocks the host when its launch queue is full, so a thread issuing work
faster than the GPU runs it is slowed to the GPU's pace. The simulated streams do the same
(`virtual.MAX_PENDING_LAUNCHES`); without it a busy writer queued work without bound and a read
behind it waited for all of it.
"""

import _thread
import gc
import itertools
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager as tf
from eager.core.context import _reset_for_tests
from eager.devices import registry, virtual
from eager.devices.virtual import VirtualArray, VirtualStream

DEADLINE_S = 60  # generous: these tests assert that nothing hangs, never how fast it runs


@pytest.fixture
def two_gpus():
    """Two simulated GPUs for one test (GPU:0 is the default device); yields them. The
    machine's devices come back afterwards."""
    _reset_for_tests()
    tf.config.experimental.set_simulated_gpus(2)
    yield registry.lookup("GPU:0"), registry.lookup("GPU:1")
    tf.experimental.sync_devices()
    _reset_for_tests()
    registry.devices()


def _run_with_deadline(fn, what):
    """Runs `fn` on a daemon thread; fails the test if it has not returned by the deadline (a
    hang becomes a failure naming `what` instead of a stuck suite). Re-raises its error."""
    outcome = []

    def target():
        try:
            fn()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), f"{what} did not finish in {DEADLINE_S} s"
    if outcome[0] is not None:
        raise outcome[0]


# -- the bound -------------------------------------------------------------------------------


def test_an_updater_racing_a_reader_keeps_the_queue_bounded_and_reads_prompt(two_gpus):
    """One thread updates a variable on GPU:0 as fast as it can launch (each kernel takes far
    longer than its launch); another reads it onto GPU:1 and the host. The queues stay within
    the bound (plus one launch in flight per launching thread), every read completes, and each
    read sees every update issued before it, whole."""
    g0, g1 = two_gpus
    n = 200_000
    v = tf.Variable(np.zeros(n))
    one = tf.constant(np.ones(n))
    updates, reads = 2000, 20
    issued = [0]
    deepest = [0]
    seen = []
    streams = (g0.compute_stream, g0.copy_stream, g1.compute_stream, g1.copy_stream)

    def note_depth():
        deepest[0] = max(deepest[0], *(s.pending for s in streams))

    def updater():
        for _ in range(updates):
            v.assign_add(one, read_value=False)
            issued[0] += 1
            note_depth()

    def reader():
        for _ in range(reads):
            before = issued[0]
            with tf.device("GPU:1"):
                value = (v.read_value() * 1.0).numpy()
            note_depth()
            seen.append((before, value.min(), value.max()))

    threads = [threading.Thread(target=updater, daemon=True),
               threading.Thread(target=reader, daemon=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE_S)
    assert not any(t.is_alive() for t in threads), "a read or an update did not finish"
    assert deepest[0] <= virtual.MAX_PENDING_LAUNCHES + 2, (
        f"{deepest[0]} launches were queued on one stream; the bound is "
        f"{virtual.MAX_PENDING_LAUNCHES}")
    assert len(seen) == reads
    for before, low, high in seen:
        assert low == high  # never a mix of two updates
        assert before <= low <= updates  # the updates issued before the read are in it
    np.testing.assert_array_equal(v.numpy(), np.full(n, float(updates)))


def test_a_full_stream_blocks_the_launching_host_thread_until_there_is_room():
    stream = VirtualStream("bounded", max_pending=3)
    try:
        gate = threading.Event()
        stream.launch(gate.wait)  # the worker is held here: nothing finishes
        stream.launch(lambda: None)
        stream.launch(lambda: None)
        assert stream.pending == 3
        fourth = threading.Thread(target=stream.launch, args=(lambda: None,), daemon=True)
        fourth.start()
        fourth.join(0.2)
        assert fourth.is_alive()  # waits for room: the queue is full
        assert stream.pending == 3
        gate.set()
        fourth.join(DEADLINE_S)
        assert not fourth.is_alive()
        stream.synchronize()
        assert stream.pending == 0
    finally:
        stream.close()


def _lose_a_number(stream):
    """What a Ctrl-C between numbering a launch and queueing it leaves: a number, no item."""
    with stream._cv:
        stream._issued += 1
        return stream._issued


def _returns(fn, *args):
    done = threading.Thread(target=fn, args=args, daemon=True)
    done.start()
    done.join(DEADLINE_S)
    return not done.is_alive()


@pytest.mark.parametrize("where", ["last, worker asleep", "last, worker busy", "between items"])
def test_a_launch_number_an_interrupt_kept_from_its_item_never_hangs_a_wait(where):
    stream = VirtualStream("interrupted")
    try:
        gate = threading.Event()
        ran = []
        if where == "last, worker asleep":
            stream.synchronize()
            lost = _lose_a_number(stream)
        else:
            stream.launch(gate.wait)  # the worker is busy while the number is lost
            lost = _lose_a_number(stream)
            if where == "between items":
                stream.launch(ran.append, 1)
            gate.set()
        event = virtual.VirtualEvent(stream, lost)
        assert _returns(event.synchronize)
        assert _returns(stream.synchronize)
        assert stream.pending == 0 and event.query()
        assert ran == ([1] if where == "between items" else [])
        stream.launch(ran.append, 2)  # numbering goes on in order
        stream.synchronize()
        assert ran[-1] == 2
    finally:
        stream.close()


def test_a_worker_launching_onto_a_full_stream_never_waits_for_room():
    """A stream worker that launches (a kernel, or a wait's work) must not wait: the work it
    would wait for may itself be waiting for the worker's current item. Here B's head waits for
    A's item, and A's item launches onto B (full); on B's own worker, a kernel launches onto
    B itself."""
    a = VirtualStream("A", max_pending=2)
    b = VirtualStream("B", max_pending=2)
    ran = []
    try:
        def launch_onto_b():
            for i in range(6):
                b.launch(ran.append, ("from A", i))

        def launch_onto_itself():
            for i in range(6):
                b.launch(ran.append, ("from B", i))

        def scenario():
            gate = threading.Event()
            a.launch(gate.wait)
            a.launch(launch_onto_b)
            b.wait_event(a.record_event())  # B's head: after A's launching item
            b.launch(launch_onto_itself)
            gate.set()
            a.synchronize()
            b.synchronize()
            b.synchronize()  # what the kernels launched last

        _run_with_deadline(scenario, "a worker launching onto a full stream")
        assert [r for r in ran if r[0] == "from A"] == [("from A", i) for i in range(6)]
        assert [r for r in ran if r[0] == "from B"] == [("from B", i) for i in range(6)]
    finally:
        a.close()
        b.close()


def test_a_thread_holding_a_paused_stream_never_waits_for_room(two_gpus):
    """A paused stream finishes nothing until the pausing thread lets it go, so that thread
    must be able to launch past the bound (tests queue work behind a pause)."""
    g0, _ = two_gpus

    def scenario():
        x = tf.constant(np.ones(4))
        with g0.compute_stream.paused():
            for _ in range(g0.compute_stream.max_pending + 10):
                x = x + 1.0
            assert g0.compute_stream.pending > g0.compute_stream.max_pending
        np.testing.assert_array_equal(x.numpy(), np.full(4, g0.compute_stream.max_pending
                                                         + 11.0))

    _run_with_deadline(scenario, "launching behind a pause")


def test_a_variable_collected_while_its_stream_is_full_and_a_lock_is_held_is_destroyed(
        two_gpus):
    """A deleter runs wherever the collector does, maybe in a thread that holds a lock that
    queued work needs. Its destroy must not wait for room then, or neither could ever go on."""
    g0, _ = two_gpus
    compute = g0.compute_stream
    compute.max_pending = 4
    live = tf.experimental.live_resource_count()
    v = tf.Variable(np.ones(3))
    compute.synchronize()
    lock = threading.Lock()

    def needs_the_lock():
        with lock:
            pass

    def scenario():
        nonlocal v
        with lock:
            for _ in range(compute.max_pending):
                compute.launch(needs_the_lock)
            assert compute.pending >= compute.max_pending
            del v  # the deleter launches the destroy: the queue is full, the lock held
            gc.collect()
        compute.synchronize()

    _run_with_deadline(scenario, "a deleter's launch onto a full stream")
    assert tf.experimental.live_resource_count() == live


def test_a_finalizer_launching_inside_a_launch_onto_a_full_stream_does_not_deadlock():
    """As `test_virtual_gpu`'s finalizer test, with a queue that is full at every launch: a
    finalizer run by an allocation inside a launch holds the stream's lock, so it must not wait
    for room (the worker needs that lock to finish anything)."""
    stream = VirtualStream("full-finalizer", max_pending=1)
    ran = []
    nested = []

    def finalizer(phase, info):
        if phase == "start" and len(nested) < 20:
            nested.append(len(nested))
            stream.launch(ran.append, ("finalizer", len(nested)))

    def launches():
        for i in range(20):
            stream.launch(ran.append, ("launch", i))
        stream.synchronize()

    threshold = gc.get_threshold()
    gc.callbacks.append(finalizer)
    gc.set_threshold(1)
    try:
        _run_with_deadline(launches, "launches with finalizers launching inside them")
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(finalizer)
    stream.synchronize()
    try:
        assert [r for r in ran if r[0] == "launch"] == [("launch", i) for i in range(20)]
        assert sorted(r[1] for r in ran if r[0] == "finalizer") == list(range(1, 21))
    finally:
        stream.close()


def test_a_launch_from_inside_a_launch_before_the_worker_is_woken_does_not_wait():
    """The exact moment a finalizer may run inside a launch: the item is queued, the worker
    sleeps and has not been woken yet, and the queue is full. Waiting for room there would
    wait for a worker that nothing wakes. (Made deterministic by launching from the wake-up
    call itself, as a finalizer run by an allocation in it would.)"""
    stream = VirtualStream("reentrant", max_pending=1)
    ran = []
    try:
        stream.synchronize()
        deadline = time.monotonic() + DEADLINE_S
        while not stream._sleeping and time.monotonic() < deadline:
            time.sleep(0.001)  # the worker waits for work
        wake = stream._cv.notify_all

        def finalizer_then_wake():
            stream._cv.notify_all = wake  # once
            stream.launch(ran.append, "from the finalizer")
            wake()

        stream._cv.notify_all = finalizer_then_wake
        _run_with_deadline(lambda: stream.launch(ran.append, "outer"),
                           "a launch from inside a launch")
        stream.synchronize()
        assert ran == ["outer", "from the finalizer"]
    finally:
        stream.close()


# -- interleavings ---------------------------------------------------------------------------

_STEP = st.one_of(
    st.tuples(st.just("launch"), st.integers(0, 2), st.booleans()),  # stream, fails
    st.tuples(st.just("record"), st.integers(0, 2)),
    st.tuples(st.just("wait"), st.integers(0, 2), st.integers(0, 30)),  # stream, which event
    st.tuples(st.just("sync"), st.integers(0, 2)),
    st.tuples(st.just("query"), st.integers(0, 30)),
    st.tuples(st.just("pause"), st.integers(0, 2)),
    st.tuples(st.just("resume"), st.integers(0, 2)),
)


@settings(max_examples=200)
@given(steps=st.lists(_STEP, max_size=40), max_pending=st.integers(1, 4))
def test_interleaved_launches_events_pauses_and_failures_keep_cuda_order(steps, max_pending):
    """Three streams, each with a tiny bound, and a random program of launches (some failing),
    recorded events, cross-stream waits, pauses, queries and synchronizations. Checked against
    CUDA's rules: each stream runs its work once, in launch order; work launched after
    `wait_event(e)` starts after everything before `e` finished; an event's `query` is True only
    once that work finished; `synchronize` raises the first failure since the last one, naming
    it, and only then. Nothing may hang."""
    streams = [VirtualStream(f"S{i}", max_pending=max_pending) for i in range(3)]
    clock = itertools.count()
    started, finished = {}, {}  # (stream, index) -> tick
    launched = [[] for _ in streams]  # per stream: (index, fails)
    events = []  # (stream, how many of its items it follows)
    waits = []  # (stream, items launched on it before the wait, event)
    unreported = [[] for _ in streams]  # per stream: failing items since its last sync
    gates = {}

    def item(key, fails):
        started[key] = next(clock)
        finished[key] = next(clock)
        if fails:
            raise ValueError(f"item {key} fails")

    def program():
        for step in steps:
            kind = step[0]
            if kind == "launch":
                s, fails = step[1], step[2]
                key = (s, len(launched[s]))
                launched[s].append(key)
                streams[s].launch_op(f"item{key}", item, key, fails)
                if fails:
                    unreported[s].append(key)
            elif kind == "record":
                s = step[1]
                events.append((s, len(launched[s]), streams[s].record_event()))
            elif kind == "wait" and events:
                s, (t, count, event) = step[1], events[step[2] % len(events)]
                waits.append((s, len(launched[s]), t, count))
                streams[s].wait_event(event)
            elif kind == "query" and events:
                t, count, event = events[step[1] % len(events)]
                if event.query():
                    assert all((t, i) in finished for i in range(count))
            elif kind == "pause" and step[1] not in gates:
                gates[step[1]] = streams[step[1]].paused()
                gates[step[1]].__enter__()
            elif kind == "resume" and step[1] in gates:
                gates.pop(step[1]).__exit__(None, None, None)
            elif kind == "sync" and not gates:  # (a paused stream would hold it forever)
                s = step[1]
                if unreported[s]:
                    with pytest.raises(tf.errors.InvalidArgumentError,
                                       match=rf"item\({unreported[s][0][0]}, "
                                             rf"{unreported[s][0][1]}\)"):
                        streams[s].synchronize()
                    unreported[s].clear()
                else:
                    streams[s].synchronize()
                assert all(key in finished for key in launched[s])
        for gate in gates.values():
            gate.__exit__(None, None, None)
        gates.clear()
        for s, stream in enumerate(streams):
            try:
                stream.synchronize()
            except tf.errors.InvalidArgumentError:
                assert unreported[s]

    try:
        _run_with_deadline(program, "a program of launches, events and waits")
        for s in range(len(streams)):
            order = [started[key] for key in launched[s]]
            assert order == sorted(order), f"stream {s} ran its work out of order"
        for s, launched_before, t, count in waits:
            if count == 0:
                continue
            ready = finished[(t, count - 1)]
            for key in launched[s][launched_before:]:
                assert started[key] > ready, f"{key} started before the event it waited for"
    finally:
        for gate in gates.values():
            gate.__exit__(None, None, None)
        for stream in streams:
            stream.close()


_DEVICE_OPS = ["scale", "add", "to_gpu1", "to_gpu0", "assign_add", "read", "drop", "host_read"]


def test_interleaved_device_work_on_two_gpus_with_tiny_queues_matches_numpy(two_gpus):
    """Ops, copies between the two GPUs, variable updates and reads and dropped values, issued
    from two host threads onto streams that hold at most two launches: every value read is
    numpy's, and nothing hangs. (Blocking launches, borrowed buffers and pool reuse, all at
    once.)"""
    g0, g1 = two_gpus
    for device in (g0, g1):
        device.compute_stream.max_pending = device.copy_stream.max_pending = 2

    @settings(max_examples=30)
    @given(programs=st.lists(st.lists(st.tuples(st.sampled_from(_DEVICE_OPS),
                                                st.integers(0, 5)), max_size=15),
                             min_size=2, max_size=2))
    def check(programs):
        v = tf.Variable(np.zeros(16))
        failures = []
        totals = [0.0, 0.0]

        def run(program, me):
            try:
                values = [(tf.constant(np.arange(16.0)), np.arange(16.0))]
                for name, i in program:
                    t, expected = values[i % len(values)]
                    if name == "scale":
                        values.append((t * 2.0, expected * 2.0))
                    elif name == "add":
                        values.append((t + t, expected + expected))
                    elif name in ("to_gpu1", "to_gpu0"):
                        with tf.device("GPU:1" if name == "to_gpu1" else "GPU:0"):
                            values.append((tf.identity(t), expected))
                    elif name == "assign_add":
                        v.assign_add(tf.ones(16, tf.float64), read_value=False)
                        totals[me] += 1.0
                    elif name == "read":
                        low = totals[me]  # this thread's own updates are all in it
                        read = v.read_value().numpy()
                        assert read.min() == read.max() >= low
                    elif name == "drop" and len(values) > 1:
                        values.pop(i % len(values))
                    elif name == "host_read":
                        np.testing.assert_array_equal(t.numpy(), expected)
                for t, expected in values:
                    np.testing.assert_array_equal(t.numpy(), expected)
            except BaseException as exc:  # noqa: BLE001 - reported by the test's thread
                failures.append(exc)

        def both():
            threads = [threading.Thread(target=run, args=(p, k), daemon=True)
                       for k, p in enumerate(programs)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(DEADLINE_S)
            assert not any(t.is_alive() for t in threads), "a program did not finish"

        _run_with_deadline(both, "two threads' programs on two GPUs")
        if failures:
            raise failures[0]
        np.testing.assert_array_equal(v.numpy(), np.full(16, sum(totals)))

    check()


# -- arrays collected at awkward moments -----------------------------------------------------


def test_deleting_an_array_whose_construction_was_interrupted_is_silent(simulated_gpu,
                                                                        monkeypatch):
    """An interrupt between making a VirtualArray and giving it its block leaves an object
    without a pool; collecting it must neither raise nor print (pytest turns an exception
    ignored in `__del__` into a failure here)."""
    half_built = VirtualArray()  # as after an interrupt inside `_allocate`
    del half_built
    gc.collect()
    shaped = VirtualArray()
    shaped.shape, shaped.dtype = (2,), np.dtype(np.float32)
    del shaped
    gc.collect()


def test_collecting_an_array_runs_no_python_code_and_its_block_is_reused(simulated_gpu):
    """Ctrl-C may land whenever Python code runs, and one landing in code the collector runs
    (a `__del__`, a Python weakref callback) is only printed ("Exception ignored in") and lost.
    So collecting a simulated-GPU array runs no Python function at all; its block still goes
    back to the pool, for the next allocation of its shape."""
    device = simulated_gpu
    x = tf.constant(np.ones(8)) * 2.0
    tf.experimental.sync_devices()
    array = x._value
    del x
    calls = []
    sys.setprofile(lambda frame, event, arg: calls.append((event, frame.f_code.co_name)))
    try:
        del array
    finally:
        sys.setprofile(None)
    assert [c for c in calls if c[0] == "call"] == []
    reused = device.pool.reused
    y = tf.constant(np.ones(8)) * 3.0
    assert device.pool.reused > reused
    assert y.numpy().tolist() == [3.0] * 8


def test_arrays_and_streams_alive_at_interpreter_exit_leave_stderr_clean():
    """Arrays on simulated GPUs (some in reference cycles, some with work still queued) when
    the interpreter exits: the exit is clean, with nothing printed."""
    script = textwrap.dedent("""
        import numpy as np
        import eager as tf
        tf.config.experimental.set_simulated_gpus(2)
        keep = [tf.constant(np.ones(1000)) * float(i) for i in range(50)]
        class Cycle:
            pass
        c = Cycle()
        c.self, c.values = c, [tf.constant(np.ones(100)) + 1.0 for _ in range(20)]
        with tf.device("GPU:1"):
            moved = [tf.identity(k) for k in keep[:10]]
        v = tf.Variable(np.zeros(100))
        for _ in range(100):
            v.assign_add(np.ones(100), read_value=False)
        print("done")
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(tf.__file__)))
    env.pop("EAGER_SIMULATED_GPUS", None)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, timeout=DEADLINE_S)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    assert result.stderr == ""


def test_interrupts_landing_while_arrays_are_made_and_collected_all_reach_the_program(
        simulated_gpu):
    """Interrupts (SIGINT as `_thread.interrupt_main` sends it) at varying moments while arrays
    are made and collected, so that some land inside `VirtualArray.__del__`: every one reaches
    the program as a KeyboardInterrupt (none is swallowed as "Exception ignored in"), and the
    device still computes right afterwards."""
    delivered = 0
    for k in range(60):
        timer = threading.Timer(0.0003 * (k % 7), _thread.interrupt_main)
        try:
            timer.start()
            deadline = time.monotonic() + DEADLINE_S
            while time.monotonic() < deadline:
                values = [tf.constant(np.ones(64)) * 2.0 for _ in range(4)]
                del values
        except KeyboardInterrupt:
            delivered += 1
        timer.join()
    assert delivered == 60
    np.testing.assert_array_equal((tf.constant(np.ones(4)) * 3.0).numpy(), np.full(4, 3.0))


def test_live_resource_count_counts_a_dropped_variable_once_its_queued_destroy_has_run(
        simulated_gpu):
    """A dropped variable's destroy is queued on its stream behind the kernels that may still
    use it; the count must not depend on how far the stream has got."""
    base = tf.experimental.live_resource_count()
    v = tf.Variable(np.ones(4))
    gate = simulated_gpu.compute_stream.paused()
    gate.__enter__()
    try:
        del v
        gc.collect()
        assert simulated_gpu.resources.live_count() == base + 1  # the destroy is queued
    finally:
        threading.Timer(0.2, gate.__exit__, args=(None, None, None)).start()
    assert tf.experimental.live_resource_count() == base
