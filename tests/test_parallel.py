"""The inter-op parallel executor (eager/runtime/parallel.py) and `eager.config.threading`.

Every graph is also run by the reference runner `run_program` on the same program: the
executor must give the same fetches (bit for bit: the same kernels on the same inputs) and leave
variables in the same state. Concurrency itself is observed through test-only ops (unregistered
OpDefs) whose kernels wait on a barrier: a barrier of n parties is only ever passed when n nodes
run at the same time, so a sequential executor fails those tests instead of passing them.
"""

import gc
import os
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager
from eager.core import context as _context
from eager.errors import FailedPreconditionError, InvalidArgumentError
from eager.graph import Graph
from eager.core.registry import OpDef
from eager.runtime import Program, run_program
from eager.runtime import parallel
from eager.runtime.parallel import ParallelExecutor
from eager.core.specs import TensorSpec

REPO = Path(__file__).resolve().parents[1]
BARRIER_TIMEOUT = 20.0  # seconds; only reached when nodes that should overlap do not


# -- helpers -----------------------------------------------------------------------------------
def probe_op(name, action):
    """A test-only identity op whose kernel calls `action()` first. Not marked stateful: graphs
    chain stateful ops in program order (automatic control deps), and these must stay
    independent; nothing here merges or prunes nodes."""

    def kernel(xp, x):
        action()
        return x

    return OpDef(name, kernel, lambda x: TensorSpec(x.shape, x.dtype))


def apply(graph, op_def, x):
    return graph.add_op(op_def, (x,), {}).outputs[0]


def program_of(graph, feeds=()):
    """The program of a hand-built graph: `feeds` fed, captured eager tensors as constants."""
    return Program.from_graph(graph, feeds=list(feeds),
                              constants={ph: value for value, ph in graph.captures})


def program_of_function(concrete):
    return Program.from_graph(concrete.graph,
                              constants={ph: value for value, ph in concrete.graph.captures})


def assert_same(expected, actual):
    assert len(expected) == len(actual)
    for e, a in zip(expected, actual):
        assert e.dtype == a.dtype and e.device == a.device
        np.testing.assert_array_equal(e.numpy(), a.numpy())


def inter_op_threads_seen(names):
    return {n for n in names if n.startswith("eager-inter-op-")}


@pytest.fixture
def restore_threading_config():
    inter = eager.config.threading.get_inter_op_parallelism_threads()
    intra = eager.config.threading.get_intra_op_parallelism_threads()
    yield
    eager.config.threading.set_inter_op_parallelism_threads(inter)
    eager.config.threading.set_intra_op_parallelism_threads(intra)


# -- eager.config.threading ----------------------------------------------------------------------
def test_threading_config_defaults_set_and_get(restore_threading_config):
    cfg = eager.config.threading
    assert eager.config.threading is cfg and "threading" in eager.config.__all__
    cfg.set_inter_op_parallelism_threads(0)
    cfg.set_intra_op_parallelism_threads(0)
    assert cfg.get_inter_op_parallelism_threads() == 0
    cfg.set_inter_op_parallelism_threads(4)
    assert cfg.get_inter_op_parallelism_threads() == 4
    cfg.set_inter_op_parallelism_threads(np.int64(2))
    assert cfg.get_inter_op_parallelism_threads() == 2
    assert type(cfg.get_inter_op_parallelism_threads()) is int
    cfg.set_intra_op_parallelism_threads(3)
    assert cfg.get_intra_op_parallelism_threads() == 3
    assert cfg.get_inter_op_parallelism_threads() == 2  # the two settings are independent


@pytest.mark.parametrize("setter", ["set_inter_op_parallelism_threads",
                                    "set_intra_op_parallelism_threads"])
def test_threading_config_validation(setter, restore_threading_config):
    cfg = eager.config.threading
    set_threads = getattr(cfg, setter)
    getter = getattr(cfg, setter.replace("set_", "get_"))
    set_threads(2)
    with pytest.raises(ValueError, match=">= 0"):
        set_threads(-1)
    for bad in (1.5, "2", None, True):
        with pytest.raises(TypeError, match="integer"):
            set_threads(bad)
    assert getter() == 2  # a rejected value changes nothing


def test_executor_rejects_bad_thread_counts():
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        g.outputs = [x + x]
    program = program_of(g, [x])
    with pytest.raises(ValueError, match=">= 1"):
        ParallelExecutor(program, 0)
    with pytest.raises(TypeError):
        ParallelExecutor(program, True)
    with pytest.raises(TypeError):
        ParallelExecutor(program, 2.0)


# -- differential: random DAGs -------------------------------------------------------------------
_UNARY = {"tanh": eager.tanh, "neg": eager.negative, "add_const": lambda a: a + 0.5}
_BINARY = {"add": eager.add, "sub": eager.subtract, "mul": eager.multiply,
           "max": eager.maximum, "matmul": eager.matmul}


@st.composite
def random_dags(draw):
    """(size, feeds, [(kind, argument indices, control-edge node indices)], fetch indices,
    seed): values 0..feeds-1 are fed, value feeds+i is node i's output; all are size x size."""
    size = draw(st.integers(1, 6))
    n_feeds = draw(st.integers(1, 3))
    n_nodes = draw(st.integers(1, 16))
    nodes = []
    for i in range(n_nodes):
        kind = draw(st.sampled_from(sorted(_UNARY) + sorted(_BINARY)))
        arity = 1 if kind in _UNARY else 2
        args = [draw(st.integers(0, n_feeds + i - 1)) for _ in range(arity)]
        control = draw(st.lists(st.integers(0, i - 1), max_size=2)) if i else []
        nodes.append((kind, args, control))
    fetches = draw(st.lists(st.integers(0, n_feeds + n_nodes - 1), min_size=1, max_size=4))
    return size, n_feeds, nodes, fetches, draw(st.integers(0, 2**16))


def build_dag(size, n_feeds, nodes, fetches):
    g = Graph()
    with g.as_default():
        values = [g.placeholder(eager.float32, [size, size], name=f"x{i}")
                  for i in range(n_feeds)]
        feeds = list(values)
        for kind, args, control in nodes:
            fn = _UNARY.get(kind) or _BINARY[kind]
            with g.control_dependencies([values[n_feeds + j].op for j in control]):
                values.append(fn(*(values[a] for a in args)))
        g.outputs = [values[f] for f in fetches]
    return program_of(g, feeds)


@settings(max_examples=40)
@given(random_dags())
def test_random_dags_match_the_reference_runner(dag):
    size, n_feeds, nodes, fetches, seed = dag
    program = build_dag(size, n_feeds, nodes, fetches)
    rng = np.random.default_rng(seed)
    feeds = [eager.constant(rng.uniform(-1, 1, (size, size)).astype(np.float32))
             for _ in range(n_feeds)]
    expected = run_program(program, feeds)
    for threads in (1, 2, 4):
        executor = ParallelExecutor(program, threads)
        assert_same(expected, executor.run(feeds))
        assert_same(expected, executor.run(feeds))  # a second run starts from scratch


def test_diamond_matches_numpy_and_reference():
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [4, 4], name="x")
        left = eager.matmul(x, x)
        right = eager.tanh(x) * 3.0
        top = left - right
        g.outputs = [top, left]
    program = program_of(g, [x])
    xv = np.random.default_rng(1).normal(size=(4, 4)).astype(np.float32)
    feeds = [eager.constant(xv)]
    for threads in (2, 4):
        top_v, left_v = ParallelExecutor(program, threads).run(feeds)
        np.testing.assert_allclose(left_v.numpy(), xv @ xv, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(top_v.numpy(), xv @ xv - np.tanh(xv) * 3.0, rtol=1e-5,
                                   atol=1e-6)
        assert_same(run_program(program, feeds), [top_v, left_v])


def test_wide_fan_out_and_fan_in():
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [8], name="x")
        branches = [x * float(k) + float(k) for k in range(40)]
        total = branches[0]
        for b in branches[1:]:
            total = total + b
        g.outputs = [total, branches[7]]
    program = program_of(g, [x])
    xv = np.arange(8, dtype=np.float32)
    feeds = [eager.constant(xv)]
    expected = run_program(program, feeds)
    for threads in (2, 4):
        got = ParallelExecutor(program, threads).run(feeds)
        assert_same(expected, got)
        np.testing.assert_allclose(got[0].numpy(), xv * sum(range(40)) + sum(range(40)))


def test_multi_output_ops_feeds_constants_and_repeated_fetches():
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [3, 2], name="x")
        a, b, c = eager.unstack(x)
        y = a * b + c
        g.outputs = [y, x, b, y]
    program = program_of(g, [x])
    feeds = [eager.constant(np.arange(6, dtype=np.float32).reshape(3, 2))]
    expected = run_program(program, feeds)
    got = ParallelExecutor(program, 2).run(feeds)
    assert_same(expected, got)
    assert got[1] is feeds[0]  # a fetched feed is the fed tensor itself, as run_program's
    assert got[0] is got[3]


def test_empty_program_returns_feeds_and_constants():
    g = Graph()
    x = g.placeholder(eager.float32, [2], name="x")
    g.outputs = [x, x]
    program = program_of(g, [x])
    assert program.nodes == ()
    xv = eager.constant([1.0, 2.0])
    assert ParallelExecutor(program, 2).run([xv]) == [xv, xv]


# -- variables -----------------------------------------------------------------------------------
def test_traced_function_with_variables_matches_reference():
    v = eager.Variable(1.0)
    w = eager.Variable([1.0, 2.0])

    @eager.function
    def step(x):
        v.assign(x)
        a = v.read_value()
        v.assign_add(a * 2.0)  # ordered after the read by automatic control deps
        w.assign_sub(w * 0.5)
        b = w.read_value()
        w.assign(b + v.read_value())
        return v.read_value() + a, w.read_value()

    program = program_of_function(step.get_concrete_function(eager.TensorSpec([],
                                                                              eager.float32)))
    for threads in (2, 4):
        executor = ParallelExecutor(program, threads)
        for k in range(20):
            x = eager.constant(float(k))
            v.assign(1.0)
            w.assign([1.0, 2.0])
            expected = run_program(program, [x])
            expected_state = (v.numpy().copy(), w.numpy().copy())
            v.assign(1.0)
            w.assign([1.0, 2.0])
            got = executor.run([x])
            assert_same(expected, got)
            np.testing.assert_array_equal(v.numpy(), expected_state[0])
            np.testing.assert_array_equal(w.numpy(), expected_state[1])
            assert float(got[0]) == 4.0 * k  # v = 3k, plus a = k


def test_unordered_assign_adds_never_lose_an_update():
    """Two `assign_add(1)` on one variable with no edge between them (a TF1-style graph): they
    may run at the same time, and the variable's lock makes each read-compute-write atomic."""
    v = eager.Variable(np.zeros(64, np.float32))
    g = Graph(auto_control_deps=False)
    with g.as_default():
        v.assign_add(np.ones(64, np.float32))
        v.assign_add(np.ones(64, np.float32))
    program = program_of(g)
    assert [n.type for n in program.nodes] == ["AssignAddVariableOp"] * 2
    assert all(not n.control_inputs for n in program.nodes)
    for threads in (2, 4):
        executor = ParallelExecutor(program, threads)
        for _ in range(200):
            before = v.numpy().copy()
            executor.run([])
            np.testing.assert_array_equal(v.numpy(), before + 2.0)


def test_read_after_write_ordered_by_a_control_edge_sees_the_write():
    v = eager.Variable(0.0)
    g = Graph(auto_control_deps=False)
    with g.as_default():
        x = g.placeholder(eager.float32, [], name="x")
        v.assign(x)
        (write,) = [op for op in g.get_operations() if op.type == "AssignVariableOp"]
        with g.control_dependencies([write]):
            read = v.read_value()
        g.outputs = [read]
    program = program_of(g, [x])
    executor = ParallelExecutor(program, 4)
    for k in range(50):
        (got,) = executor.run([eager.constant(float(k))])
        assert float(got) == float(k)


@pytest.mark.cpu_only(reason="observes the executor's scheduling through kernel bodies run on "
                              "its threads; a simulated GPU runs every kernel body later, on its "
                              "stream's worker thread")
def test_control_edges_order_otherwise_independent_nodes():
    """B has no data edge from A, only a control edge: it must not start before A finished,
    although a pool thread is free to take it at once."""
    order = []

    def slow_a():
        threading.Event().wait(0.1)
        order.append("A finished")

    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        a = apply(g, probe_op("SlowA", slow_a), x)
        with g.control_dependencies([a]):
            b = apply(g, probe_op("B", lambda: order.append("B started")), x)
        g.outputs = [a, b]
    program = program_of(g, [x])
    assert program.nodes[1].control_inputs == ("SlowA",)
    for threads in (2, 4):
        executor = ParallelExecutor(program, threads)
        for _ in range(3):
            order.clear()
            executor.run([eager.constant([1.0, 2.0])])
            assert order == ["A finished", "B started"]


# -- errors --------------------------------------------------------------------------------------
def test_kernel_error_surfaces_with_its_class_and_the_executor_stays_usable():
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [None], name="x")
        y = g.placeholder(eager.float32, [None], name="y")
        ok = eager.tanh(x) * 2.0
        bad = x + y
        g.outputs = [ok, bad]
    program = program_of(g, [x, y])
    good = [eager.constant([1.0, 2.0]), eager.constant([3.0, 4.0])]
    mismatched = [eager.constant([1.0, 2.0, 3.0]), eager.constant([1.0, 2.0])]
    with pytest.raises(InvalidArgumentError) as reference:
        run_program(program, mismatched)
    for threads in (2, 4):
        executor = ParallelExecutor(program, threads)
        for _ in range(5):
            with pytest.raises(InvalidArgumentError) as raised:
                executor.run(mismatched)
            assert str(raised.value) == str(reference.value)
            assert_same(run_program(program, good), executor.run(good))


@pytest.mark.cpu_only(reason="observes the executor's scheduling through kernel bodies run on "
                              "its threads; a simulated GPU runs every kernel body later, on its "
                              "stream's worker thread")
def test_error_in_one_branch_waits_for_the_other_and_schedules_nothing_new():
    """Branches A and B start together (a two-party barrier). A then fails once B's second op
    is running; B, already running, finishes before `run` raises; B's successor is never
    started."""
    events = []
    barrier = threading.Barrier(2, timeout=BARRIER_TIMEOUT)
    a_failing = threading.Event()
    b_running = threading.Event()

    def fail():
        assert b_running.wait(BARRIER_TIMEOUT)  # else nothing of B might be running yet
        a_failing.set()
        raise FailedPreconditionError(None, "Fail", "branch A failed")

    def slow_b():
        b_running.set()
        assert a_failing.wait(BARRIER_TIMEOUT)
        threading.Event().wait(0.2)  # A's error is recorded meanwhile
        events.append("B finished")

    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        a = apply(g, probe_op("StartA", barrier.wait), x)
        a = apply(g, probe_op("Fail", fail), a)
        b = apply(g, probe_op("StartB", barrier.wait), x)
        b = apply(g, probe_op("SlowB", slow_b), b)
        b = apply(g, probe_op("AfterB", lambda: events.append("after B ran")), b)
        g.outputs = [a, b]
    program = program_of(g, [x])
    executor = ParallelExecutor(program, 2)
    for _ in range(3):
        events.clear()
        a_failing.clear()
        b_running.clear()
        barrier.reset()
        with pytest.raises(FailedPreconditionError, match="branch A failed"):
            executor.run([eager.constant([1.0, 2.0])])
        assert events == ["B finished"]


def test_unfed_placeholder_raises_the_reference_error_before_running_anything():
    v = eager.Variable(0.0)
    g = Graph(auto_control_deps=False)
    with g.as_default():
        v.assign_add(1.0)
        x = g.placeholder(eager.float32, [3], name="x")
        y = g.placeholder(eager.float32, [3], name="y")
        g.outputs = [x * y]
    program = program_of(g, [x])  # y stays a Placeholder node
    feeds = [eager.constant([1.0, 2.0, 3.0])]
    with pytest.raises(InvalidArgumentError) as reference:
        run_program(program, feeds)
    assert float(v.numpy()) == 1.0  # the reference ran the node before the placeholder
    with pytest.raises(InvalidArgumentError) as raised:
        ParallelExecutor(program, 2).run(feeds)
    assert str(raised.value) == str(reference.value)
    assert "You must feed a value for placeholder tensor 'y'" in str(raised.value)
    assert float(v.numpy()) == 1.0  # nothing ran
    with pytest.raises(ValueError, match="has 1 feeds; 2 values"):
        ParallelExecutor(program, 2).run(feeds * 2)


def test_malformed_programs_are_rejected_when_the_executor_is_built():
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        g.outputs = [x + 1.0]
    program = program_of(g, [x])
    (node,) = program.nodes
    dangling = program.replace(nodes=[node.replace(control_inputs=("nowhere",))])
    with pytest.raises(ValueError, match="control input 'nowhere'"):
        ParallelExecutor(dangling, 2)
    unknown = program.replace(nodes=[node.replace(inputs=(999,) + node.inputs[1:])])
    with pytest.raises(ValueError, match="neither fed, constant nor produced"):
        ParallelExecutor(unknown, 2)
    second = node.replace(name="second", outputs=(program.new_value(program.specs[
        node.outputs[0]], "second:0"),))
    cycle = program.replace(nodes=[node.replace(control_inputs=("second",)),
                                   second.replace(control_inputs=(node.name,))])
    with pytest.raises(ValueError, match="not in a topological order"):
        ParallelExecutor(cycle, 2)  # would never finish: refused up front


# -- concurrency, threads and pools --------------------------------------------------------------
@pytest.mark.parametrize("threads", [2, 4])
@pytest.mark.cpu_only(reason="observes the executor's scheduling through kernel bodies run on "
                              "its threads; a simulated GPU runs every kernel body later, on its "
                              "stream's worker thread")
def test_independent_nodes_run_at_the_same_time_on_distinct_threads(threads):
    idents = []
    names = []
    barrier = threading.Barrier(threads, timeout=BARRIER_TIMEOUT)

    def meet():
        barrier.wait()  # passes only when `threads` nodes are running at once
        idents.append(threading.get_ident())
        names.append(threading.current_thread().name)

    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        g.outputs = [apply(g, probe_op(f"Meet{k}", meet), x) for k in range(threads)]
    executor = ParallelExecutor(program_of(g, [x]), threads)
    for _ in range(3):
        idents.clear()
        names.clear()
        executor.run([eager.constant([1.0, 2.0])])
        assert len(set(idents)) == threads
        assert threading.get_ident() in idents  # the caller works too
        assert len(inter_op_threads_seen(names)) == threads - 1


@pytest.mark.cpu_only(reason="observes the executor's scheduling through kernel bodies run on "
                              "its threads; a simulated GPU runs every kernel body later, on its "
                              "stream's worker thread")
def test_one_thread_and_chains_stay_on_the_calling_thread():
    idents = []

    def record():
        idents.append(threading.get_ident())

    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        y = x
        for k in range(5):
            y = apply(g, probe_op(f"Link{k}", record), y)
        g.outputs = [y]
    program = program_of(g, [x])
    for threads in (1, 2, 4):
        idents.clear()
        ParallelExecutor(program, threads).run([eager.constant([1.0, 2.0])])
        assert idents == [threading.get_ident()] * 5  # no hand-off along a chain


def test_pools_are_shared_per_size_and_made_of_daemon_threads():
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        g.outputs = [x + x, x * x]
    program = program_of(g, [x])
    for _ in range(3):
        ParallelExecutor(program, 3).run([eager.constant([1.0, 2.0])])
    pool = parallel._pool_for(3)
    assert pool is parallel._pool_for(3)
    assert len(pool.threads) == 2 and all(t.daemon and t.is_alive() for t in pool.threads)
    running = [t for t in threading.enumerate() if t.name.startswith("eager-inter-op-3-")]
    assert sorted(t.name for t in running) == ["eager-inter-op-3-0", "eager-inter-op-3-1"]
    assert parallel._pool_for(1) is None


def test_pool_shutdown_stops_its_threads():
    pool = parallel._InterOpPool(3)
    threads = pool.threads
    assert all(t.is_alive() for t in threads)
    pool.shutdown(timeout=BARRIER_TIMEOUT)
    assert not any(t.is_alive() for t in threads)


_EXIT_SCRIPT = """
import os, sys, threading
import numpy as np
import eager
from eager.graph import Graph
from eager.runtime import Program
from eager.runtime.parallel import ParallelExecutor

# CPU only: a forked child cannot use the CUDA context its parent made (nor a simulated GPU's
# stream threads, which fork does not copy); the pools under test are the CPU's.
eager.config.set_visible_devices([], "GPU")
g = Graph()
with g.as_default():
    x = g.placeholder(eager.float32, [64, 64], name="x")
    g.outputs = [eager.matmul(x, x), eager.tanh(x), x * 2.0]
constants = {ph: value for value, ph in g.captures}
executor = ParallelExecutor(Program.from_graph(g, feeds=[x], constants=constants), 3)
feeds = [eager.constant(np.ones((64, 64), np.float32))]
executor.run(feeds)
if hasattr(os, "fork"):
    pid = os.fork()
    if pid == 0:  # the child has no pool threads: it must make its own
        out = executor.run(feeds)
        names = [t.name for t in threading.enumerate()]
        ok = float(out[0].numpy()[0, 0]) == 64.0 and "eager-inter-op-3-1" in names
        os._exit(0 if ok else 3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status
print("done")
"""


def test_interpreter_exits_cleanly_with_pools_and_forked_children_get_new_ones():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    finished = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c",
                               _EXIT_SCRIPT], env=env, capture_output=True, text=True,
                              timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "done"


def test_concurrent_callers_share_one_executor():
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [16, 16], name="x")
        g.outputs = [eager.matmul(x, x) + eager.tanh(x), x * 2.0]
    program = program_of(g, [x])
    executor = ParallelExecutor(program, 2)
    failures = []

    def call(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(30):
                feeds = [eager.constant(rng.normal(size=(16, 16)).astype(np.float32))]
                assert_same(run_program(program, feeds), executor.run(feeds))
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    callers = [threading.Thread(target=call, args=(seed,)) for seed in range(3)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    assert failures == []


def test_nested_runs_from_inside_kernels_do_not_deadlock(cpu_only):
    """A kernel that runs a program and reads its results. CPU-only by design: on a
    simulated GPU kernels run on the stream's worker, and reading a value made on that stream
    would wait for the kernel itself (as synchronizing a CUDA stream from its own callback
    would)."""
    inner_g = Graph()
    with inner_g.as_default():
        y = inner_g.placeholder(eager.float32, [2], name="y")
        inner_g.outputs = [y + 1.0, y * 2.0, y - 3.0]
    inner = ParallelExecutor(program_of(inner_g, [y]), 2)
    results = []

    def run_inner():
        results.append([t.numpy().tolist() for t in inner.run([eager.constant([1.0, 2.0])])])

    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        g.outputs = [apply(g, probe_op(f"Outer{k}", run_inner), x) for k in range(6)]
    ParallelExecutor(program_of(g, [x]), 2).run([eager.constant([0.0, 0.0])])
    assert results == [[[2.0, 3.0], [2.0, 4.0], [-2.0, -1.0]]] * 6


@pytest.mark.cpu_only(reason="holds a weak reference to the array a kernel returns; a "
                              "simulated GPU copies every kernel's result into a pool block")
def test_values_are_dropped_after_their_last_consumer():
    """A value read by one node is gone by the time a node ordered after that reader runs
    (the reference runner keeps every value to the end; the executor must not)."""
    made = []
    alive_later = []

    def make_kernel(xp, x):
        out = x * 2.0
        made.append(weakref.ref(out))
        return out

    make = OpDef("Make", make_kernel, lambda x: TensorSpec(x.shape, x.dtype))

    def check():
        gc.collect()
        alive_later.append(made[-1]() is not None)

    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [1000], name="x")
        big = g.add_op(make, (x,), {}).outputs[0]
        reader = eager.reduce_sum(big)
        with g.control_dependencies([reader]):
            after = apply(g, probe_op("Check", check), x)
        g.outputs = [reader, after]
    program = program_of(g, [x])
    feeds = [eager.constant(np.ones(1000, np.float32))]
    run_program(program, feeds)
    assert alive_later == [True]  # the reference keeps it: the check can tell the difference
    for threads in (1, 2):
        alive_later.clear()
        (total, _) = ParallelExecutor(program, threads).run(feeds)
        assert float(total) == 2000.0
        assert alive_later == [False]


# -- placement -----------------------------------------------------------------------------------
def test_placement_follows_the_callers_device_scope_and_traced_devices(logical_cpus):
    logical_cpus(2)
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2, 2], name="x")
        free = [eager.matmul(x, x) + float(k) for k in range(4)]  # no device requested
        with eager.device("CPU:0"):
            pinned = x * 3.0
        g.outputs = free + [pinned]
    program = program_of(g, [x])
    feeds = [eager.constant(np.eye(2, dtype=np.float32))]
    for threads in (2, 4):
        executor = ParallelExecutor(program, threads)
        with eager.device("CPU:1"):
            expected = run_program(program, feeds)
            got = executor.run(feeds)
        assert_same(expected, got)
        assert [t.device for t in got] == ["CPU:1"] * 4 + ["CPU:0"]
        got = executor.run(feeds)  # outside the scope: the default device
        assert [t.device for t in got] == ["CPU:0"] * 5


def test_pool_threads_adopt_the_callers_scopes_only_while_they_work(logical_cpus):
    """Kernels that dispatch ops themselves (control flow running a branch graph) read their
    own thread's scopes: on a pool thread these must be the caller's, and only for that run."""
    logical_cpus(2)
    seen = []
    barrier = threading.Barrier(2, timeout=BARRIER_TIMEOUT)

    def look():
        barrier.wait()  # both nodes run at once: one of them on a pool thread
        seen.append((threading.current_thread().name, _context.placement_device().name))

    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        g.outputs = [apply(g, probe_op(f"Look{k}", look), x) for k in range(2)]
    executor = ParallelExecutor(program_of(g, [x]), 2)
    feeds = [eager.constant([1.0, 2.0])]
    with eager.device("CPU:1"):
        executor.run(feeds)
    assert len(inter_op_threads_seen(name for name, _ in seen)) == 1
    assert {device for _, device in seen} == {"CPU:1"}
    seen.clear()
    executor.run(feeds)
    assert len(inter_op_threads_seen(name for name, _ in seen)) == 1
    assert {device for _, device in seen} == {"CPU:0"}


@pytest.mark.parametrize("dispatch", ["sync", "async"])
def test_traced_cond_under_a_device_scope_matches_reference(logical_cpus, dispatch):
    # A program run on a thread that dispatches asynchronously: the If kernel's branch still
    # computes its outputs at once (its ops are not queued behind the kernel itself).
    logical_cpus(2)

    @eager.function
    def f(x):
        left = eager.cond(x[0] > 0.0, lambda: x * 2.0, lambda: x - 1.0)
        right = eager.matmul(eager.reshape(x, [1, 2]), eager.reshape(x, [2, 1]))
        return left, right

    program = program_of_function(f.get_concrete_function(eager.TensorSpec([2],
                                                                           eager.float32)))
    executor = ParallelExecutor(program, 2)
    for value in ([1.0, 2.0], [-1.0, 2.0]):
        feeds = [eager.constant(value)]
        with eager.device("CPU:1"):
            if dispatch == "async":
                with eager.experimental.async_scope():
                    expected = run_program(program, feeds)
            else:
                expected = run_program(program, feeds)
            got = executor.run(feeds)
        assert_same(expected, got)
        assert all(t.device == "CPU:1" for t in got)
