"""Automatic control dependencies in traced graphs (eager/graph/control_deps.py): per-resource
ordering, the chain of resource-less stateful ops, must-run ops and `Graph.finalize`."""

import numpy as np

import eager
from eager.function import run_graph
from eager.graph import Graph, building
from eager.core.registry import OpDef


def _ops_of_type(graph, type_):
    return [op for op in graph.get_operations() if op.type == type_]


def _run(graph):
    """Runs a graph without arguments (its inputs are all captures)."""
    return run_graph(graph, [value for value, _ in graph.captures])


def test_assign_then_read_returns_new_value():
    v = eager.Variable(1.0)

    @eager.function
    def f():
        v.assign(2.0)
        return v.read_value()

    assert float(f()) == 2.0
    assert float(v.numpy()) == 2.0
    g = f.get_concrete_function().graph
    (assign,) = _ops_of_type(g, "AssignVariableOp")
    (read,) = _ops_of_type(g, "ReadVariableOp")
    assert assign in read.control_inputs
    assert assign.inputs[0] is read.inputs[0]  # one variable, one captured handle placeholder


def test_unused_assign_still_happens_and_must_run():
    v = eager.Variable(1.0)

    @eager.function
    def f(x):
        v.assign(5.0)  # result unused
        return x + 1.0

    assert float(f(eager.constant(1.0))) == 2.0
    assert float(v.numpy()) == 5.0
    g = f.get_concrete_function(eager.constant(1.0)).graph
    (assign,) = _ops_of_type(g, "AssignVariableOp")
    assert assign in g.control_outputs
    (add,) = _ops_of_type(g, "AddV2")
    assert add.control_inputs == []  # pure ops get no edges
    assert add not in g.control_outputs


def test_reads_without_write_are_unordered_and_write_waits_for_them():
    v = eager.Variable(1.0)
    g = Graph()
    with building(g):
        r1 = v.read_value()
        r2 = v.read_value()
        v.assign(3.0)
    read1, read2 = r1.op, r2.op
    assert read1.control_inputs == [] and read2.control_inputs == []
    (assign,) = _ops_of_type(g, "AssignVariableOp")
    assert read1 in assign.control_inputs and read2 in assign.control_inputs
    assert read1 not in g.control_outputs  # a read is not stateful: only needed if used


def test_write_after_write_and_reads_after_each_write():
    v = eager.Variable(1.0)
    g = Graph()
    with building(g):
        v.assign(2.0)
        r1 = v.read_value()
        v.assign_add(1.0)
        r2 = v.read_value()
    assign, = _ops_of_type(g, "AssignVariableOp")
    add, = _ops_of_type(g, "AssignAddVariableOp")
    assert assign in add.control_inputs  # write after write
    assert r1.op in add.control_inputs  # write after read
    assert r1.op.control_inputs == [assign]
    assert r2.op.control_inputs == [add]  # only the last write, not the one before
    assert g.control_outputs == [assign, add]


def test_different_resources_are_not_ordered():
    v, w = eager.Variable(1.0), eager.Variable(2.0)
    g = Graph()
    with building(g):
        v.assign(3.0)
        r = w.read_value()
        w.assign(4.0)
    assign_v, assign_w = _ops_of_type(g, "AssignVariableOp")
    assert r.op.control_inputs == []
    assert assign_v not in assign_w.control_inputs
    assert assign_w.control_inputs == [r.op]


def test_prints_chained_in_program_order(capsys):
    @eager.function
    def f():
        eager.print("first")
        eager.print("second")
        eager.print("third")
        return eager.constant(0)

    f()
    f()
    captured = capsys.readouterr()
    lines = [ln for ln in (captured.out + captured.err).splitlines() if ln]
    assert lines == ["first", "second", "third"] * 2
    p1, p2, p3 = _ops_of_type(f.get_concrete_function().graph, "PrintV2")
    assert p2.control_inputs == [p1] and p3.control_inputs == [p2]


def test_prints_and_resource_ops_not_chained_to_each_other():
    # As in TensorFlow: resource-less stateful ops form one chain; ops with resource inputs are
    # ordered per resource only.
    v = eager.Variable(1.0)
    g = Graph()
    with building(g):
        eager.print("a")
        v.assign(2.0)
        eager.print("b")
    p1, p2 = _ops_of_type(g, "PrintV2")
    (assign,) = _ops_of_type(g, "AssignVariableOp")
    assert assign.control_inputs == []
    assert p2.control_inputs == [p1]
    assert g.control_outputs == [p1, assign, p2]


def test_random_ops_stay_separate_and_chained():
    @eager.function
    def f():
        return eager.random.uniform([4], seed=7), eager.random.uniform([4], seed=7)

    a, b = f()
    assert not np.array_equal(a.numpy(), b.numpy())
    g = f.get_concrete_function().graph
    u1, u2 = _ops_of_type(g, "RandomUniform")
    assert u1.attrs == u2.attrs  # identical ops, still two draws
    assert u2.control_inputs == [u1]
    assert u1 in g.control_outputs and u2 in g.control_outputs


def test_explicit_control_dependencies_still_apply():
    v = eager.Variable(1.0)
    g = Graph()
    with building(g):
        x = eager.constant(1.0) + 1.0
        with g.control_dependencies([x]):
            r = v.read_value()
    assert r.op.control_inputs == [x.op]


def _fake_op(name, **effects):
    """An unregistered OpDef with the given effects (the tracker reads only those)."""
    out = eager.resource if name == "MakeHandle" else eager.float32
    return OpDef(name, None, lambda *inputs, **attrs: eager.TensorSpec([], out), **effects)


def test_handle_made_in_graph_is_one_resource_and_data_edge_not_duplicated():
    # A handle made inside the trace is identified by its symbolic output; an op that both
    # reads and writes a resource counts as a write.
    make = _fake_op("MakeHandle", stateful=True)
    write = _fake_op("Write", resource_writes=(0,))
    read = _fake_op("Read", resource_reads=(0,))
    read_write = _fake_op("ReadWrite", resource_reads=(0,), resource_writes=(0,))
    g = Graph()
    h = g.add_op(make, (), {}).outputs[0]
    w = g.add_op(write, (h,), {})
    r1 = g.add_op(read, (h,), {})
    rw = g.add_op(read_write, (h,), {})
    r2 = g.add_op(read, (h,), {})
    assert w.control_inputs == []  # the handle's producer is already a data input
    assert r1.control_inputs == [w]
    assert set(rw.control_inputs) == {w, r1}
    assert r2.control_inputs == [rw]
    assert g.control_outputs == [h.op, w, rw]


def test_finalize_makes_outputs_wait_for_must_run_ops():
    v = eager.Variable(1.0)
    g = Graph()
    with building(g):
        x = eager.constant(3.0)
        y = x * 2.0
        eager.print("side effect")
        v.assign(7.0)
    outs = g.finalize([y, y, x])
    assert outs[0] is outs[1]  # one Identity per distinct output
    assert len(_ops_of_type(g, "Identity")) == 2
    for t in outs:
        assert t.op.type == "Identity"
        assert set(t.op.control_inputs) == set(g.control_outputs)
        assert len(t.op.control_inputs) == 2
    g.outputs = outs
    results = _run(g)
    assert [float(r) for r in results] == [6.0, 6.0, 3.0]
    assert float(v.numpy()) == 7.0


def test_finalize_without_must_run_ops_is_identity():
    g = Graph()
    with building(g):
        x = eager.constant(3.0)
        y = x * 2.0
    assert g.finalize([y]) == [y]
    assert _ops_of_type(g, "Identity") == []


def test_collectives_chain_per_device_and_one_collective_across_devices_is_never_ordered():
    # One chain per requested device (TF: one ordering token per device). The members of one
    # all-reduce across local devices (one op per replica, traced back to back) each finish only
    # once all have started: an edge between two members would be a deadlock.
    collective = _fake_op("Collective", stateful=True, collective=True)
    g = Graph()
    with building(g):
        x = eager.constant(1.0)
        with eager.device("/gpu:0"):
            a0 = g.add_op(collective, (x,), {})
        with eager.device("/gpu:1"):
            a1 = g.add_op(collective, (x,), {})
        with eager.device("/gpu:0"):
            b0 = g.add_op(collective, (x,), {})
        with eager.device("/gpu:1"):
            b1 = g.add_op(collective, (x,), {})
        anywhere = g.add_op(collective, (x,), {})  # no request: may run on either device
        with eager.device("/gpu:1"):
            c1 = g.add_op(collective, (x,), {})
        with eager.device("/gpu:0"):
            c0 = g.add_op(collective, (x,), {})
    assert a0.control_inputs == [] and a1.control_inputs == []
    assert b0.control_inputs == [a0] and b1.control_inputs == [a1]
    assert set(anywhere.control_inputs) == {b0, b1}
    assert c1.control_inputs == [anywhere] and c0.control_inputs == [anywhere]
    assert g.control_outputs == [a0, a1, b0, b1, anywhere, c1, c0]


def test_collectives_without_device_requests_form_one_chain():
    # A worker's cross-process collectives, traced without a device scope: program order.
    collective = _fake_op("Collective", stateful=True, collective=True)
    g = Graph()
    with building(g):
        x = eager.constant(1.0)
        ops = [g.add_op(collective, (x,), {}) for _ in range(3)]
    assert [op.control_inputs for op in ops] == [[], [ops[0]], [ops[1]]]
