"""The semantics explorer (eager/runtime/explorer.py): the examples of TensorFlow's
resource-variable semantics RFC, reproduced exactly, and the explorer's reductions checked
against a brute-force enumeration of every total order."""

import math
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eager
from eager.devices import registry
from eager.experimental import allowed_outcomes
from eager.graph import Graph
from eager.ops import logging_ops, random_ops
from eager.ops import resource_ops, training_ops
from eager.runtime import Program, run_program
from eager.runtime.explorer import DESTROYED, Outcome, outcome_of
from eager.tensor import EagerTensor, meta_for


def _unordered_graph(name, *captured):
    """A graph without automatic control deps, with `captured` captured up front (a capture made
    inside a `control_dependencies` scope would carry that scope's edges)."""
    g = Graph(name, auto_control_deps=False)
    with g.as_default():
        for t in captured:
            g.capture(t)
    return g


def _op(g, op_def, *inputs, **attrs):
    with g.as_default():
        return g.add_op(op_def, inputs, attrs)


def _run_for_real(g, variables):
    """The reference runner on the graph (captures as constants), as an Outcome."""
    program = Program.from_graph(g, constants={ph: v for v, ph in g.captures})
    return outcome_of(run_program(program, []), variables)


def _c(value):
    return eager.constant(value, dtype=eager.float32)


# -- the RFC's examples --------------------------------------------------------------------------
def test_simplest_non_trivial_example():
    # *X = 1 -> *Y = 2 (control edge);  r0 = *Y -> r1 = *X (control edge).
    x, y = eager.Variable(0.0, name="X"), eager.Variable(0.0, name="Y")
    one, two = _c(1.0), _c(2.0)
    g = _unordered_graph("simplest", x.handle, y.handle, one, two)
    write_x = _op(g, resource_ops.ASSIGN, x.handle, one)
    with g.control_dependencies([write_x]):
        write_y = _op(g, resource_ops.ASSIGN, y.handle, two)
    read_y = _op(g, resource_ops.READ, y.handle)
    with g.control_dependencies([read_y]):
        read_x = _op(g, resource_ops.READ, x.handle)
    g.outputs = [read_y.outputs[0], read_x.outputs[0]]
    g.control_outputs = [write_x, write_y]

    outcomes = allowed_outcomes(g)

    final = (("X", 1.0), ("Y", 2.0))
    assert outcomes == {Outcome((2.0, 1.0), final), Outcome((0.0, 1.0), final),
                        Outcome((0.0, 0.0), final)}
    assert all(o.fetches[1] == 1.0 for o in outcomes if o.fetches[0] == 2.0)
    assert Outcome((2.0, 0.0), final) not in outcomes
    assert _run_for_real(g, [x, y]) in outcomes
    # The real variables were written by the real run only.
    assert (float(x.numpy()), float(y.numpy())) == (1.0, 2.0)


def test_two_unordered_increments_may_lose_one():
    x = eager.Variable(0.0, name="X")
    one = _c(1.0)
    g = _unordered_graph("increments", x.handle, one)
    g.control_outputs = [_op(g, resource_ops.ASSIGN_ADD, x.handle, one),
                         _op(g, resource_ops.ASSIGN_ADD, x.handle, one)]

    outcomes = allowed_outcomes(g)

    assert {o.variable("X") for o in outcomes} == {1.0, 2.0}
    assert outcomes == {Outcome((), (("X", 1.0),)), Outcome((), (("X", 2.0),))}
    assert float(x.numpy()) == 0.0  # exploring never touches the real variable
    # The executor holds the variable's lock for the whole update: always 2, and allowed.
    for expected in (2.0, 4.0, 6.0):
        real = _run_for_real(g, [x])
        assert real.variable("X") == expected
    assert Outcome((), (("X", 2.0),)) in outcomes


def test_load_store_reordering():
    # Reconstructed from the RFC's text (its figure is not in the seed): *X = 1 -> r0 = *Y by a
    # control edge; concurrently *Y = 5 -> *X = 2. If X ends 1, *X = 1 ran after *X = 2, hence
    # after *Y = 5, and r0 = *Y after it: r0 must be 5.
    x, y = eager.Variable(0.0, name="X"), eager.Variable(0.0, name="Y")
    one, two, five = _c(1.0), _c(2.0), _c(5.0)
    g = _unordered_graph("load_store", x.handle, y.handle, one, two, five)
    store_x1 = _op(g, resource_ops.ASSIGN, x.handle, one)
    with g.control_dependencies([store_x1]):
        load_y = _op(g, resource_ops.READ, y.handle)
    store_y5 = _op(g, resource_ops.ASSIGN, y.handle, five)
    with g.control_dependencies([store_y5]):
        store_x2 = _op(g, resource_ops.ASSIGN, x.handle, two)
    g.outputs = [load_y.outputs[0]]
    g.control_outputs = [store_x1, store_y5, store_x2]

    outcomes = allowed_outcomes(g)

    assert outcomes == {Outcome((0.0,), (("X", 2.0), ("Y", 5.0))),
                        Outcome((5.0,), (("X", 2.0), ("Y", 5.0))),
                        Outcome((5.0,), (("X", 1.0), ("Y", 5.0)))}
    assert all(o.fetches == (5.0,) for o in outcomes if o.variable("X") == 1.0)
    assert _run_for_real(g, [x, y]) in outcomes


def test_traced_function_in_program_order_has_one_outcome():
    v = eager.Variable(0.0, name="v")

    @eager.function
    def f():
        v.assign(1.0)
        r = v.read_value()
        v.assign_add(2.0)
        return r, v.read_value()

    cf = f.get_concrete_function()
    outcomes = allowed_outcomes(cf)
    assert float(v.numpy()) == 0.0  # not run yet
    assert len(outcomes) == 1
    result = cf()
    assert outcomes == {outcome_of(result, [v])}
    assert outcomes == {Outcome((1.0, 3.0), (("v", 3.0),))}
    # A Function is explored through its concrete function for the arguments.
    assert allowed_outcomes(f) == {Outcome((1.0, 3.0), (("v", 3.0),))}


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # (cpu_only: set once)
@given(a=st.lists(st.floats(-4, 4, width=32), min_size=1, max_size=5),
       s=st.floats(-2, 2, width=32))
def test_pure_graph_has_one_outcome_equal_to_running_it(cpu_only, a, s):
    # The search runs kernels on the CPU; running `f` on a GPU would round differently.
    @eager.function
    def f(x, scale):
        return eager.math.reduce_sum(x * scale + eager.math.sin(x)), eager.math.exp(x) - x

    xs = np.asarray(a, np.float32)
    x, scale = eager.constant(xs), eager.constant(np.float32(s))
    outcomes = allowed_outcomes(f, x, scale)
    assert outcomes == {outcome_of(f(x, scale))}
    (only,) = outcomes
    np.testing.assert_allclose(only.fetches[1], np.exp(xs) - xs, rtol=1e-6)
    np.testing.assert_allclose(only.fetches[0], np.sum(xs * np.float32(s) + np.sin(xs)),
                               rtol=1e-5, atol=1e-5)


def test_too_big_graph_is_refused():
    x = eager.Variable(0.0, name="X")
    one = _c(1.0)
    g = _unordered_graph("big", x.handle, one)
    for _ in range(8):
        _op(g, resource_ops.ASSIGN_ADD, x.handle, one)
    with pytest.raises(ValueError, match=r"more than 50 distinct partial executions \(16 of its "
                                         r"16 steps"):
        allowed_outcomes(g, max_states=50)
    with pytest.raises(ValueError, match="max_states must be positive"):
        allowed_outcomes(g, max_states=0)


# -- what the reductions must preserve: a brute-force model of the semantics ---------------------
def _brute_force(ops, edges, start):
    """Every outcome over every total order of the steps, straight from the RFC: `ops` are
    ("read", var) | ("assign", var, c) | ("add", var, c) | ("copy", var, j) (var = read j + 1,
    a data edge); "add" is a read step then a write step, others one atomic step."""
    steps, preds = [], []
    last = {}
    for i, op in enumerate(ops):
        node_preds = {last[j] for j in edges.get(i, ())}
        if op[0] == "copy":
            node_preds.add(last[op[2]])
        if op[0] == "add":
            steps.append((i, "r"))
            preds.append(node_preds)
            steps.append((i, "w"))
            preds.append({len(steps) - 2})
        else:
            steps.append((i, "x"))
            preds.append(node_preds)
        last[i] = len(steps) - 1
    found = set()
    n = len(steps)

    def go(done, order):
        if len(order) == n:
            found.add(_simulate(ops, steps, order, start))
            return
        for s in range(n):
            if s not in done and preds[s] <= done:
                go(done | {s}, order + [s])

    go(frozenset(), [])
    return found


def _simulate(ops, steps, order, start):
    mem = dict(start)
    reads, snap = {}, {}
    for s in order:
        i, part = steps[s]
        op = ops[i]
        if op[0] == "read":
            reads[i] = mem[op[1]]
        elif op[0] == "assign":
            mem[op[1]] = op[2]
        elif op[0] == "copy":
            mem[op[1]] = reads[op[2]] + 1.0
        elif part == "r":
            snap[i] = mem[op[1]]
        else:
            mem[op[1]] = snap[i] + op[2]
    fetches = tuple(reads[i] for i, op in enumerate(ops) if op[0] == "read")
    return Outcome(fetches, tuple(sorted(mem.items())))


@st.composite
def _programs(draw):
    n = draw(st.integers(1, 5))
    ops = []
    for i in range(n):
        earlier_reads = [j for j in range(i) if ops[j][0] == "read"]
        kinds = ["read", "assign", "add"] + (["copy"] if earlier_reads else [])
        kind = draw(st.sampled_from(kinds))
        var = draw(st.sampled_from(["a", "b"]))
        if kind == "read":
            ops.append(("read", var))
        elif kind == "copy":
            ops.append(("copy", var, draw(st.sampled_from(earlier_reads))))
        else:
            ops.append((kind, var, float(draw(st.integers(1, 3)))))
    edges = {i: draw(st.sets(st.integers(0, i - 1), max_size=2)) if i else set()
             for i in range(n)}
    return ops, edges


def _build(ops, edges, variables):
    g = _unordered_graph("random", *(v.handle for v in variables.values()))
    made, outputs = [], []
    for i, op in enumerate(ops):
        handle = variables[op[1]].handle
        with g.as_default(), g.control_dependencies([made[j] for j in sorted(edges[i])]):
            if op[0] == "read":
                node = g.add_op(resource_ops.READ, (handle,), {})
                outputs.append(node.outputs[0])
            elif op[0] == "copy":
                plus_one = made[op[2]].outputs[0] + 1.0
                node = g.add_op(resource_ops.ASSIGN, (handle, plus_one), {})
            else:
                write = resource_ops.ASSIGN if op[0] == "assign" else resource_ops.ASSIGN_ADD
                node = g.add_op(write, (handle, _c(op[2])), {})
        made.append(node)
    g.outputs = outputs
    return g


@given(program=_programs(), start=st.tuples(st.integers(0, 2), st.integers(0, 2)))
def test_explorer_agrees_with_every_total_order(program, start):
    ops, edges = program
    variables = {"a": eager.Variable(float(start[0]), name="a"),
                 "b": eager.Variable(float(start[1]), name="b")}
    g = _build(ops, edges, variables)
    touched = sorted({op[1] for op in ops})
    expected = {Outcome(o.fetches, tuple((k, v) for k, v in o.variables if k in touched))
                for o in _brute_force(ops, edges, {"a": float(start[0]), "b": float(start[1])})}
    assert allowed_outcomes(g) == expected
    assert [float(v.numpy()) for v in variables.values()] == [float(s) for s in start]
    assert _run_for_real(g, [variables[k] for k in touched]) in expected


# -- other resource ops, effects and errors --------------------------------------------------------
def test_update_ops_race_even_on_disjoint_rows():
    # Two unordered scatter_adds to different rows: each reads the whole variable, so one may
    # overwrite the other's row with the value it read.
    table = eager.Variable(np.zeros(2, np.float32), name="table")
    rows = [eager.constant(np.array([i], np.int32)) for i in range(2)]
    ones = eager.constant(np.ones(1, np.float32))
    g = _unordered_graph("scatter", table.handle, *rows, ones)
    for r in rows:
        _op(g, resource_ops.SCATTER_ADD, table.handle, r, ones)
    outcomes = allowed_outcomes(g)
    assert {o.variable("table") for o in outcomes} == {(1.0, 1.0), (1.0, 0.0), (0.0, 1.0)}
    assert _run_for_real(g, [table]).variable("table") == (1.0, 1.0)
    np.testing.assert_array_equal(table.numpy(), [1.0, 1.0])


def test_training_op_is_read_compute_write():
    w = eager.Variable(np.array([1.0, 2.0], np.float32), name="w")
    lr, grad = _c(1.0), eager.constant(np.array([0.5, 0.25], np.float32))
    g = _unordered_graph("sgd", w.handle, lr, grad)
    _op(g, training_ops.APPLY_GRADIENT_DESCENT, w.handle, lr, grad)
    _op(g, training_ops.APPLY_GRADIENT_DESCENT, w.handle, lr, grad)
    outcomes = allowed_outcomes(g)
    assert {o.variable("w") for o in outcomes} == {(0.5, 1.75), (0.0, 1.5)}
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])  # the in-place kernel ran on a copy


def test_independent_steps_are_not_interleaved():
    # 30 variables, each with its own unordered increments from 30 nodes: every step is
    # independent of every concurrent one, so the search visits one state.
    variables = [eager.Variable(float(i), name=f"v{i}") for i in range(30)]
    one = _c(1.0)
    g = _unordered_graph("independent", one, *(v.handle for v in variables))
    reads = []
    for v in variables:
        add = _op(g, resource_ops.ASSIGN_ADD, v.handle, one)
        with g.as_default(), g.control_dependencies([add]):
            reads.append(g.add_op(resource_ops.READ, (v.handle,), {}).outputs[0] * 2.0)
    g.outputs = reads
    outcomes = allowed_outcomes(g, max_states=1)
    assert outcomes == {Outcome(tuple(2.0 * (i + 1) for i in range(30)),
                                tuple((f"v{i}", i + 1.0) for i in range(30)))}


def test_variables_on_a_simulated_gpu(simulated_gpu):
    # The variable's initial assign is still queued on the GPU's stream when the explorer meets
    # it; kernels run on the host, the real storage stays as it was.
    x = eager.Variable(np.arange(3, dtype=np.float32), name="X")
    assert x.device == "GPU:0"
    step = eager.constant(np.ones(3, np.float32))
    g = _unordered_graph("gpu", x.handle, step)
    _op(g, resource_ops.ASSIGN_ADD, x.handle, step)
    _op(g, resource_ops.ASSIGN_ADD, x.handle, step)
    with g.as_default():
        g.outputs = [g.add_op(resource_ops.READ, (x.handle,), {}).outputs[0] * 2.0]
    outcomes = allowed_outcomes(g)
    assert {o.variable("X") for o in outcomes} == {(1.0, 2.0, 3.0), (2.0, 3.0, 4.0)}
    assert {o.fetches[0] for o in outcomes} == {(0.0, 2.0, 4.0), (2.0, 4.0, 6.0),
                                                (4.0, 6.0, 8.0)}
    np.testing.assert_array_equal(x.numpy(), [0.0, 1.0, 2.0])
    assert _run_for_real(g, [x]) in outcomes


def test_read_racing_with_first_assign_of_uninitialized_variable():
    device = registry.lookup("CPU:0")
    handle = resource_ops.create_variable_handle(device, eager.float32, [], "u")
    t = EagerTensor()  # the handle as a tensor, as Variable makes one
    t._value, t._tape_id, t._meta = handle, 0, meta_for(eager.resource, device)
    one = _c(1.0)
    g = _unordered_graph("uninit", t, one)
    _op(g, resource_ops.ASSIGN, t, one)
    g.outputs = [_op(g, resource_ops.READ, t).outputs[0]]
    outcomes = allowed_outcomes(g)
    assert outcomes == {Outcome(error="FailedPreconditionError"),
                        Outcome((1.0,), (("u", 1.0),))}
    assert handle.device.resources.lookup(handle.uid).value is None  # still uninitialized


def test_destroyed_variable():
    x = eager.Variable(3.0, name="X")
    g = _unordered_graph("destroy", x.handle)
    destroy = _op(g, resource_ops.DESTROY, x.handle)
    with g.as_default(), g.control_dependencies([destroy]):
        g.outputs = [g.add_op(resource_ops.IS_INITIALIZED, (x.handle,), {}).outputs[0]]
    assert allowed_outcomes(g) == {Outcome((False,), (("X", DESTROYED),))}
    assert float(x.numpy()) == 3.0


def test_print_runs_silently(capsys):
    x = eager.Variable(0.0, name="X")
    one = _c(1.0)

    @eager.function
    def f():
        eager.print("x is", x.read_value(), output_stream=sys.stdout)
        x.assign_add(one)
        return x.read_value()

    assert any(op.op_def is logging_ops.PRINT for op in f.get_concrete_function().graph
               .get_operations())
    assert allowed_outcomes(f) == {Outcome((1.0,), (("X", 1.0),))}
    assert capsys.readouterr().out == ""


def test_random_ops_are_refused_or_sampled_once():
    @eager.function
    def f():
        return random_ops.uniform([3], seed=7) * 2.0

    with pytest.raises(ValueError, match=r"RandomUniform.*random_ops='fixed_sample'"):
        allowed_outcomes(f)
    (outcome,) = allowed_outcomes(f, random_ops="fixed_sample")
    assert len(outcome.fetches[0]) == 3
    assert all(0.0 <= value < 2.0 for value in outcome.fetches[0])


def test_variable_creation_in_graph_is_refused():
    g = Graph("creates", auto_control_deps=False)
    _op(g, resource_ops.VAR_HANDLE, dtype=eager.float32, shape=(), shared_name="w", device="CPU:0")
    with pytest.raises(ValueError, match="VarHandleOp.*creates a variable inside the graph"):
        allowed_outcomes(g)


def test_feeds_and_errors_in_arguments():
    g = Graph("fed", auto_control_deps=False)
    with g.as_default():
        p = g.placeholder(eager.float32, [2])
        g.outputs = [p * 3.0]
    assert allowed_outcomes(g, np.array([1.0, 2.0], np.float32)) == {Outcome(((3.0, 6.0),))}
    with pytest.raises(ValueError, match=r"1 feeds .*0 values were given"):
        allowed_outcomes(g)
    with pytest.raises(TypeError, match="expected a ConcreteFunction"):
        allowed_outcomes(object())
    with pytest.raises(ValueError, match="random_ops must be"):
        allowed_outcomes(g, np.zeros(2, np.float32), random_ops="sometimes")


def test_outcome_values_are_plain_and_comparable():
    nan = float("nan")
    a = outcome_of([eager.constant([nan, 1.0])])
    b = outcome_of((np.array([np.nan, 1.0], np.float32),))
    assert a == b and hash(a) == hash(b)
    assert math.isnan(a.fetches[0][0])
    assert outcome_of(eager.constant([[1, 2], [3, 4]])).fetches == (((1, 2), (3, 4)),)
    x, y = eager.Variable(1.0, name="same"), eager.Variable(2.0, name="same")
    assert outcome_of((), [y, x]).variables == (("same", 1.0), ("same", 2.0))  # uid order
    with pytest.raises(ValueError, match="Several variables"):
        outcome_of((), [x, y]).variable("same")
    assert outcome_of((), error=eager.errors.NotFoundError(None, None, "m")) == \
        Outcome(error="NotFoundError")


def test_concrete_function_with_arguments_and_unordered_reads():
    # Reads between two writes get no edges: any order among them, one outcome.
    v = eager.Variable(1.0, name="v")

    @eager.function
    def f(x):
        a = v.read_value() * x
        b = v.read_value() + x
        v.assign(a + b)
        return a, b

    cf = f.get_concrete_function(eager.TensorSpec([], eager.float32))
    outcomes = allowed_outcomes(cf, 3.0)
    assert outcomes == {Outcome((3.0, 4.0), (("v", 7.0),))}
    assert outcomes == {outcome_of(cf(eager.constant(3.0)), [v])}


def test_brute_force_model_reproduces_rfc_example():
    # The test's own model, checked on the RFC's first example, so it cannot drift silently.
    ops = [("assign", "X", 1.0), ("assign", "Y", 2.0), ("read", "Y"), ("read", "X")]
    found = _brute_force(ops, {0: set(), 1: {0}, 2: set(), 3: {2}}, {"X": 0.0, "Y": 0.0})
    assert {o.fetches for o in found} == {(2.0, 1.0), (0.0, 1.0), (0.0, 0.0)}
