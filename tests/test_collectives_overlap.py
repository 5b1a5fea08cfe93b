"""Overlapping all-reduces with the backward pass: the engine's ordered communication thread
(`collectives/ordered.py`), the `overlap_collectives` pass on traced steps (called directly and
on the async executor), and the reverse bucket plan.

The engine here is a loopback group of two: its peer holds the same values as this process,
so a sum is twice the input. It runs its started calls on a real `OrderedCalls` thread, as the
MPI engine does, and records the order and the thread of every exchange.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import eager as tf
from eager.distribute import buckets
from eager.distribute.collectives.base import Collectives
from eager.distribute.collectives.ordered import OrderedCalls
from eager.ops import collective_ops
from eager.runtime.executable import function_program

pytestmark = pytest.mark.cpu_only(
    reason="the host engine's path: the threads that run each exchange, and errors raised by "
           "the call (on a GPU the collective kernels run on its streams)")


class LoopbackEngine(Collectives):
    """Two participants with equal values (see the module doc)."""

    asynchronous = True

    def __init__(self, delay_s=0.0):
        self.size = 2
        self.exchanges = []  # (thread name, shapes), in the order they ran
        self.fail = None
        self.delay_s = delay_s
        self._calls = OrderedCalls("loopback-collectives")

    def start(self, fn):
        return self._calls.submit(fn)

    def all_reduce(self, arrays, op="sum"):
        return self._calls.call(lambda: self._reduce(arrays, op))

    def _reduce(self, arrays, op):
        if self.delay_s:
            time.sleep(self.delay_s)
        self.exchanges.append((threading.current_thread().name,
                               [tuple(np.shape(a)) for a in arrays]))
        if self.fail is not None:
            raise tf.errors.InvalidArgumentError(None, "CollectiveReduce", self.fail)
        return [np.asarray(a) * a.dtype.type(2) if op in ("sum", "mean") else np.array(a)
                for a in arrays]

    def broadcast(self, array, root=0):
        return np.array(array)

    def close(self):
        self._calls.close()


@pytest.fixture
def engine():
    engine = LoopbackEngine()
    key = collective_ops.register_group(engine)
    engine.key = key
    yield engine
    collective_ops.unregister_group(key)
    engine.close()


# -- OrderedCalls --------------------------------------------------------------------------------

def test_started_calls_run_in_submission_order_on_one_thread():
    calls = OrderedCalls("t")
    ran = []
    futures = [calls.submit(lambda i=i: ran.append((i, threading.current_thread().name)) or i)
               for i in range(20)]
    assert [f.result(timeout=10) for f in futures] == list(range(20))
    assert [i for i, _ in ran] == list(range(20))
    assert {name for _, name in ran} == {"t"}
    calls.close()


def test_a_synchronous_call_runs_inline_when_idle_and_queues_behind_started_ones():
    calls = OrderedCalls("t")
    assert calls.call(threading.current_thread) is threading.current_thread()
    gate = threading.Event()
    ran = []
    calls.submit(lambda: (gate.wait(10), ran.append("started")))
    threading.Timer(0.05, gate.set).start()
    calls.call(lambda: ran.append(("sync", threading.current_thread().name)))
    assert ran == ["started", ("sync", "t")]  # after the started call, on its thread
    assert calls.pending() == 0
    calls.close()


def test_a_started_call_may_call_the_engine_again_without_waiting_for_itself():
    calls = OrderedCalls("t")
    assert calls.submit(lambda: calls.call(lambda: 7) + 1).result(timeout=10) == 8
    calls.close()


def test_errors_come_back_where_the_result_is_asked_for():
    calls = OrderedCalls("t")
    future = calls.submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        future.result(timeout=10)
    with pytest.raises(KeyError):
        calls.call(lambda: {}["missing"])
    assert calls.submit(lambda: "still serving").result(timeout=10) == "still serving"
    calls.close()


def test_close_runs_what_is_queued_then_refuses_more():
    calls = OrderedCalls("t")
    ran = []
    for i in range(5):
        calls.submit(lambda i=i: (time.sleep(0.001), ran.append(i)))
    calls.close()
    assert ran == list(range(5))
    with pytest.raises(RuntimeError, match="closed"):
        calls.submit(lambda: None)
    calls.close()  # idempotent


# -- bucket plan ---------------------------------------------------------------------------------

def test_buckets_run_from_the_last_tensor_with_a_small_first_bucket():
    f32 = np.float32
    shapes = [((784, 256), f32), ((256,), f32), ((256, 256), f32), ((256,), f32),
              ((256, 10), f32), ((10,), f32)]
    # The 784-256-256-10 MLP: the last two layers and the first bias (0.27 MB) make the first
    # bucket; the first
    # layer's 0.8 MB kernel would pass 1 MB, so it makes the second alone.
    assert buckets.plan_buckets(shapes) == [[5, 4, 3, 2, 1], [0]]
    assert buckets.plan_buckets(shapes, first_bucket_bytes=1 << 30) == [[5, 4, 3, 2, 1, 0]]
    assert buckets.plan_buckets(shapes, bucket_bytes=1) == [[5], [4], [3], [2], [1], [0]]
    mixed = [((4,), f32), ((4,), np.float64), ((4,), np.float64), ((4,), f32)]
    assert buckets.plan_buckets(mixed) == [[3], [2, 1], [0]]
    assert buckets.plan_buckets([]) == []


# -- the pass on traced steps ---------------------------------------------------------------------

def _mlp_weights_and_batch(sizes):
    """An MLP's kernels and biases (variables, in the current scope) and a batch of 8."""
    rng = np.random.RandomState(0)
    weights = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        weights += [tf.Variable(rng.randn(n_in, n_out).astype(np.float32) * 0.3),
                    tf.Variable(rng.randn(n_out).astype(np.float32) * 0.1)]
    return weights, tf.constant(rng.randn(8, sizes[0]).astype(np.float32))


def _mlp_loss(weights, x):
    h = x
    for i in range(0, len(weights), 2):
        h = tf.matmul(h, weights[i]) + weights[i + 1]
        if i + 2 < len(weights):
            h = tf.nn.relu(h)
    return tf.reduce_mean(h * h)


def _mlp(engine, sizes=(32, 64, 48, 4)):
    weights, x = _mlp_weights_and_batch(sizes)

    def step(x):
        with tf.GradientTape() as tape:
            loss = _mlp_loss(weights, x)
        grads = tape.gradient(loss, weights)
        reduced = [None] * len(grads)
        plan = buckets.plan_buckets([(g.shape, np.float32) for g in grads], bucket_bytes=1 << 20,
                                    first_bucket_bytes=64 * 48 * 4 + 48 * 4 + 48 * 4 * 4 + 16)
        for k, bucket in enumerate(plan):
            parts = collective_ops.collective_reduce_n([grads[i] for i in bucket], 2,
                                                       engine.key, 100 + k)
            for i, part in zip(bucket, parts):
                reduced[i] = part
        return reduced

    return step, x, weights


def test_a_traced_step_starts_each_bucket_right_after_its_gradients(engine):
    step, x, _ = _mlp(engine)
    traced = tf.function(step)
    concrete = traced.get_concrete_function(x)
    graph = concrete.graph
    program = function_program(graph, [value for value, _ in graph.captures])
    program.validate()
    kinds = [node.type for node in program.nodes]
    assert "CollectiveReduceN" not in kinds
    starts = [i for i, k in enumerate(kinds) if k == "CollectiveReduceNStart"]
    dones = [i for i, k in enumerate(kinds) if k == "CollectiveReduceNDone"]
    assert len(starts) == len(dones) == 2
    # The first bucket (the last two layers) starts before the first layer's gradients are
    # computed: some MatMul of the backward pass runs between its start and its wait.
    matmuls = [i for i, k in enumerate(kinds) if k == "MatMul"]
    assert any(starts[0] < i < dones[0] for i in matmuls), kinds
    assert starts[0] < starts[1] < dones[0] < dones[1]
    first_start = program.nodes[starts[0]]
    second_start = program.nodes[starts[1]]
    assert first_start.name in second_start.control_inputs  # the collective chain, on starts
    # The wait keeps the collective's name; its start reads the bucket's gradients.
    assert program.nodes[dones[0]].name + "/start" == first_start.name


def test_a_traced_step_with_overlap_gives_the_eager_values(engine):
    step, x, _ = _mlp(engine)
    eager_values = [g.numpy() for g in step(x)]
    assert all(name == "MainThread" for name, _ in engine.exchanges)  # eager: synchronous
    traced = tf.function(step)
    for _ in range(2):  # the first call traces (and runs the ops as it traces them)
        engine.exchanges.clear()
        traced_values = [g.numpy() for g in traced(x)]
        for got, want in zip(traced_values, eager_values):
            np.testing.assert_array_equal(got, want)
    # Both buckets went through the communication thread, the first bucket first.
    assert [name for name, _ in engine.exchanges] == ["loopback-collectives"] * 2
    assert engine.exchanges[0][1] == [(4,), (48, 4), (48,), (64, 48)]
    assert engine.exchanges[1][1] == [(64,), (32, 64)]


def test_the_pass_leaves_programs_without_an_asynchronous_group_alone(engine):
    engine.asynchronous = False
    step, x, _ = _mlp(engine)
    graph = tf.function(step).get_concrete_function(x).graph
    program = function_program(graph, [value for value, _ in graph.captures])
    kinds = [node.type for node in program.nodes]
    assert kinds.count("CollectiveReduceN") == 2
    assert "CollectiveReduceNStart" not in kinds


def test_an_error_in_a_started_exchange_is_raised_by_the_call(engine):
    step, x, _ = _mlp(engine)
    traced = tf.function(step)
    traced(x)
    engine.fail = "peers disagree"
    with pytest.raises(tf.errors.InvalidArgumentError, match="peers disagree"):
        traced(x)
    engine.fail = None
    assert len(traced(x)) == 6  # the function and the engine are still usable


# -- asynchronous eager mode ---------------------------------------------------------------------

def test_a_traced_step_called_in_async_mode_overlaps_on_the_executor(engine):
    """In async mode the traced step runs on the executor, whose thread starts the buckets."""
    step, x, _ = _mlp(engine)
    want = [g.numpy() for g in step(x)]
    traced = tf.function(step)
    traced(x)
    engine.exchanges.clear()
    with tf.experimental.async_scope():
        got = traced(x)
        values = [g.numpy() for g in got]
    assert {type(g).__name__ for g in got} == {"PendingTensor"}
    for a, b in zip(values, want):
        np.testing.assert_array_equal(a, b)
    assert [name for name, _ in engine.exchanges] == ["loopback-collectives"] * 2


# -- eager steps: buckets started by the backward walk ---------------------------------------------

def _eager_strategy_step(engine, clip=False, loss_all_reduce=False):
    """A one-replica strategy over the loopback engine, and an eager SGD step in `strategy.run`
    (the 32-64-48-4 MLP, 2000-byte buckets: the last layer and the middle bias first, then one
    tensor each). Returns (strategy, variables, step)."""
    from eager.distribute.strategy import Strategy  # noqa: PLC0415 - the base, for a test engine

    strategy = Strategy(["/device:CPU:0"], engine)
    strategy.extended.bucket_bytes = 2000
    with strategy.scope():
        weights, x = _mlp_weights_and_batch((32, 64, 48, 4))
        opt = tf.keras.optimizers.SGD(0.1)

    def replica_step():
        with tf.GradientTape() as tape:
            loss = _mlp_loss(weights, x)
        grads = tape.gradient(loss, weights)
        if clip:
            grads, _ = tf.clip_by_global_norm(grads, 1.0)
        if loss_all_reduce:
            tf.distribute.get_replica_context().all_reduce("sum", loss)
        opt.apply_gradients(zip(grads, weights))

    return strategy, weights, lambda: strategy.run(replica_step)


@pytest.mark.parametrize("variant", ["plain", "clipped", "loss all-reduced", "async"])
def test_an_eager_step_starts_each_bucket_during_the_backward_pass(engine, monkeypatch,
                                                                   variant):
    """DDP's hooks: each bucket's all-reduce is started (on the communication thread) as soon
    as its last gradient is final, before the walk reaches the first layer, and the step ends
    at the weights of the same step whose exchanges all wait for the end of the backward pass.
    Gradients changed before `apply_gradients` (clipped) are exchanged again, as given."""
    from eager.distribute import eager_overlap  # noqa: PLC0415 - the module under test

    kwargs = {"clip": variant == "clipped", "loss_all_reduce": variant == "loss all-reduced"}
    engine.asynchronous = False
    _, want_weights, want_step = _eager_strategy_step(engine, **kwargs)
    for _ in range(3):
        want_step()
    without_overlap = list(engine.exchanges)
    assert {name for name, _ in without_overlap} == {"MainThread"}
    engine.asynchronous = True
    engine.exchanges.clear()
    final_when_started = []  # per started bucket: how many of the 6 gradients were final
    start = eager_overlap.StartedGradients._start

    def recording_start(record, k):
        final_when_started.append(sum(t is not None for t in record.tensors))
        start(record, k)

    monkeypatch.setattr(eager_overlap.StartedGradients, "_start", recording_start)
    strategy, weights, step = _eager_strategy_step(engine, **kwargs)
    for _ in range(3):
        if variant == "async":
            with tf.experimental.async_scope():
                step()
        else:
            step()
    for got, want in zip(weights, want_weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    # Four buckets a step, the first started when only the last layer and the middle bias
    # had their gradients.
    assert final_when_started == [3, 4, 5, 6] * 3
    buckets = [[(4,), (48, 4), (48,)], [(64, 48)], [(64,)], [(32, 64)]]
    started = [("loopback-collectives", shapes) for shapes in buckets]
    if variant == "clipped":  # started, dropped, then the clipped gradients exchanged
        # (on whichever thread is free: a synchronous call queues behind started ones)
        assert [shapes for _, shapes in engine.exchanges] == (buckets + buckets) * 3
        assert [name for name, _ in engine.exchanges[:4]] == ["loopback-collectives"] * 4
    elif variant == "loss all-reduced":  # the loss's all-reduce comes after the buckets
        # (on the collectives' thread when buckets are still queued there, else on the caller's:
        # which depends on how fast the backward pass ran, so either is right)
        assert [shapes for _, shapes in engine.exchanges] == (buckets + [[()]]) * 3
        assert [name for name, shapes in engine.exchanges if shapes != [()]] == [
            "loopback-collectives"] * 12
        assert {name for name, shapes in engine.exchanges if shapes == [()]} <= {
            "loopback-collectives", "MainThread"}
    else:
        assert engine.exchanges == started * 3
    assert strategy.extended._started_gradients is None


def test_an_eager_step_with_a_variable_left_without_gradient_ends_at_the_same_weights(engine):
    """A variable the loss does not use has no gradient: its bucket never starts, the
    optimizer reduces the others as usual, and the buckets started for them are waited for and
    dropped at the next backward pass, the same on every worker."""
    from eager.distribute.strategy import Strategy  # noqa: PLC0415 - the base, for a test engine

    def run(asynchronous):
        engine.asynchronous = asynchronous
        strategy = Strategy(["/device:CPU:0"], engine)
        strategy.extended.bucket_bytes = 64
        with strategy.scope():
            w = tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
            b = tf.Variable(np.zeros(4, np.float32))
            unused = tf.Variable(np.ones(3, np.float32))
            opt = tf.keras.optimizers.SGD(0.1)
        x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))

        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, w) + b))
            grads = tape.gradient(loss, [w, b, unused])
            assert grads[2] is None
            opt.apply_gradients(zip(grads, [w, b, unused]))

        for _ in range(3):
            strategy.run(step)
        return [v.numpy() for v in (w, b, unused)], strategy

    want, _ = run(False)
    engine.exchanges.clear()
    got, strategy = run(True)
    for a, c in zip(got, want):
        np.testing.assert_array_equal(a, c)
    assert any(name == "loopback-collectives" for name, _ in engine.exchanges)
    pending = strategy.extended._started_gradients  # the last step's, drained at the next
    assert pending is not None and pending.started.count(None) < len(pending.started)
    pending.drain()
    assert pending.started.count(None) == len(pending.started)
