"""The runtime against the semantics: graphs run many times on the parallel executor only ever
produce outcomes the semantics explorer allows, and automatic control dependencies make a
program written in sequence have exactly one allowed outcome. Also: opting functions into the
parallel executor (per function and globally) changes nothing but who runs the nodes."""

import numpy as np
import pytest

import eager
from eager.experimental import allowed_outcomes
from eager.graph import Graph
from eager.ops import resource_ops
from eager.runtime import ParallelExecutor, Program
from eager.runtime.explorer import outcome_of

RUNS = 150


def _c(value):
    return eager.constant(value, dtype=eager.float32)


def _graph(name, *captured):
    g = Graph(name, auto_control_deps=False)  # only the edges written here
    with g.as_default():
        for t in captured:
            g.capture(t)
    return g


def _op(g, op_def, *inputs):
    with g.as_default():
        return g.add_op(op_def, inputs, {})


def _observe(g, variables, start, threads, runs=RUNS):
    """The set of outcomes `runs` parallel runs of `g` produce, each from `start` values."""
    program = Program.from_graph(g, constants={ph: v for v, ph in g.captures})
    executor = ParallelExecutor(program, threads)
    seen = set()
    for _ in range(runs):
        for v, value in zip(variables, start):
            v.assign(value)
        seen.add(outcome_of(executor.run([]), variables))
    return seen


@pytest.mark.parametrize("threads", [2, 4])
def test_racing_writes_and_reads_stay_within_the_allowed_outcomes(threads):
    # *X = 1 -> *Y = 2 (control), reads of Y then X (control), and an unordered X += 3.
    x, y = eager.Variable(0.0, name="X"), eager.Variable(0.0, name="Y")
    one, two, three = _c(1.0), _c(2.0), _c(3.0)
    g = _graph("race", x.handle, y.handle, one, two, three)
    write_x = _op(g, resource_ops.ASSIGN, x.handle, one)
    with g.control_dependencies([write_x]):
        write_y = _op(g, resource_ops.ASSIGN, y.handle, two)
    bump = _op(g, resource_ops.ASSIGN_ADD, x.handle, three)
    read_y = _op(g, resource_ops.READ, y.handle)
    with g.control_dependencies([read_y]):
        read_x = _op(g, resource_ops.READ, x.handle)
    g.outputs = [read_y.outputs[0], read_x.outputs[0]]
    g.control_outputs = [write_x, write_y, bump]

    allowed = allowed_outcomes(g)
    assert len(allowed) > 3  # a real race: several outcomes are legal
    seen = _observe(g, [x, y], [0.0, 0.0], threads)
    assert seen <= allowed, seen - allowed
    # r0 == 2 (Y written) implies X = 1 happened before: r1 is never the initial 0 (it may be
    # 3: the increment read 0 before X = 1 and wrote 3 after it, a lost update)
    after_y = {o.fetches[1] for o in allowed if o.fetches[0] == 2.0}
    assert after_y == {1.0, 3.0, 4.0}


@pytest.mark.parametrize("threads", [2, 4])
def test_unordered_increments_are_atomic_when_run(threads):
    x = eager.Variable(0.0, name="X")
    one = _c(1.0)
    g = _graph("increments", x.handle, one)
    g.control_outputs = [_op(g, resource_ops.ASSIGN_ADD, x.handle, one) for _ in range(3)]
    allowed = allowed_outcomes(g)
    # the semantics allow lost updates (read-compute-write may interleave) ...
    assert {o.variable("X") for o in allowed} == {1.0, 2.0, 3.0}
    # ... the runtime never loses one: update ops hold the variable's lock
    seen = _observe(g, [x], [0.0], threads)
    assert {o.variable("X") for o in seen} == {3.0}


def test_programs_written_in_sequence_have_one_outcome_and_the_runtime_gives_it():
    v, w = eager.Variable(1.0, name="v"), eager.Variable(10.0, name="w")

    @eager.function(experimental_inter_op_threads=4)
    def step(x):
        v.assign_add(x)
        a = v.read_value() * 2.0
        w.assign(a + w)
        v.assign_sub(w / 10.0)
        return a, v.read_value(), w.read_value()

    x = _c(3.0)
    cf = step.get_concrete_function(x)
    allowed = allowed_outcomes(cf, x)
    assert len(allowed) == 1
    (only,) = allowed
    for _ in range(RUNS):
        v.assign(1.0)
        w.assign(10.0)
        assert outcome_of(step(x), [v, w]) == only
    assert cf._parallel is not None  # it did run on the parallel executor
    # and eagerly, op by op, the same
    v.assign(1.0)
    w.assign(10.0)
    assert outcome_of(step.python_function(x), [v, w]) == only


def test_per_function_and_global_opt_in_agree_with_the_serial_plan():
    rng = np.random.default_rng(0)
    mats = [eager.constant(rng.standard_normal((32, 32), dtype=np.float32)) for _ in range(4)]

    def body(a, b, c, d):
        return eager.matmul(a, b) + eager.matmul(c, d), eager.tanh(a) * eager.exp(d * 0.1)

    serial = eager.function(body)
    parallel = eager.function(body, experimental_inter_op_threads=3)
    want = [t.numpy() for t in serial(*mats)]
    for _ in range(3):
        got = [t.numpy() for t in parallel(*mats)]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert parallel.get_concrete_function(*mats)._parallel[0] == 3
    assert serial.get_concrete_function(*mats)._parallel is None

    eager.config.threading.set_inter_op_parallelism_threads(2)
    try:
        got = [t.numpy() for t in serial(*mats)]
        assert serial.get_concrete_function(*mats)._parallel[0] == 2
    finally:
        eager.config.threading.set_inter_op_parallelism_threads(0)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    # explicit 0 wins over the global setting
    off = eager.function(body, experimental_inter_op_threads=0)
    eager.config.threading.set_inter_op_parallelism_threads(2)
    try:
        off(*mats)
        off(*mats)
        assert off.get_concrete_function(*mats)._parallel is None
    finally:
        eager.config.threading.set_inter_op_parallelism_threads(0)


def test_methods_keep_the_option_and_bad_values_are_refused():
    class Model(eager.Module):
        @eager.function(experimental_inter_op_threads=2)
        def __call__(self, x):
            return x * 2.0 + 1.0

    m = Model()
    assert m(_c(1.0)).numpy() == 3.0
    assert m.__call__.get_concrete_function(_c(1.0))._parallel[0] == 2
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="experimental_inter_op_threads"):
            eager.function(lambda x: x, experimental_inter_op_threads=bad)


def test_session_runs_on_the_parallel_executor_when_asked():
    g = Graph("g")
    with g.as_default():
        x = g.placeholder(eager.float32, [4], name="x")
        a, b = eager.exp(x), eager.tanh(x)
        out = a * b
    sess = eager.Session(g)
    xv = np.linspace(-1, 1, 4).astype(np.float32)
    want = sess.run(out, {x: xv})
    eager.config.threading.set_inter_op_parallelism_threads(2)
    try:
        got = sess.run(out, {x: xv})
        assert sess.cache_stats["compiled"] == 2  # a separate executable for 2 threads
    finally:
        eager.config.threading.set_inter_op_parallelism_threads(0)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(want, np.exp(xv) * np.tanh(xv), rtol=1e-6)


def test_jit_compile_compiles_on_the_first_call():
    body = lambda x: eager.tanh(x) * 2.0 + 1.0  # noqa: E731
    x = _c(0.5)
    jitted = eager.function(body, jit_compile=True)
    plain = eager.function(body)
    assert jitted(x).numpy() == plain(x).numpy() == body(x).numpy()
    assert jitted.get_concrete_function(x)._executable is not None
    assert plain.get_concrete_function(x)._executable is None  # compiled on the second call
