"""Placement and partitioning of programs (eager.runtime.placement, .partition, .send_recv):
device requests, colocation with resources, soft placement, pinned stateful nodes, placement
logging; per-device partitions joined by send/recv pairs, run together with the same results
as the reference runner on the whole program and as numpy, on logical CPUs and simulated GPUs,
with control edges kept across devices and failures that never hang."""

import contextlib
import threading
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager as tf
from eager import TensorSpec
from eager.core.context import _reset_for_tests
from eager.devices import registry
from eager.core import dispatch
from eager.core.registry import OpDef, get_op
from eager.runtime import Node, Program, run_program
from eager.runtime.partition import PartitionedProgram, partition, run_partitioned
from eager.runtime.placement import place
from eager.runtime.send_recv import RECV, SEND, Rendezvous

FULL = "/job:localhost/replica:0/task:0/device:"


# -- helpers ---------------------------------------------------------------------------------------
@pytest.fixture
def gpus():
    """`configure(n)`: n simulated GPUs (GPU:0 the default device) and one CPU, for one test."""

    def configure(n):
        _reset_for_tests()
        tf.config.experimental.set_simulated_gpus(n)
        return tf.config.list_logical_devices()

    yield configure
    tf.experimental.sync_devices()
    _reset_for_tests()
    registry.devices()


def _program(fn, *specs):
    """The program of `fn` traced for `specs`, captures as constants."""
    graph = tf.function(fn).get_concrete_function(*specs).graph
    return Program.from_graph(graph, constants={ph: val for val, ph in graph.captures})


def _devices(program):
    """node name -> short device name ("" when unplaced)."""
    return {n.name: n.device.rsplit("device:", 1)[-1] if n.device else "" for n in program.nodes}


def _spec(shape=(2,), dtype=tf.float32):
    return TensorSpec(shape, dtype)


def _op(name, kernel, infer=None, **options):
    """A test-local op (not registered): `infer` defaults to "same spec as input 0"."""
    return OpDef(name, kernel, infer or (lambda x, **attrs: TensorSpec(x.shape, x.dtype)),
                 **options)


def _partition_threads():
    return [t for t in threading.enumerate() if t.name.startswith("eager-partition")]


@contextlib.contextmanager
def _soft_placement(enabled):
    saved = tf.config.get_soft_device_placement()
    tf.config.set_soft_device_placement(enabled)
    try:
        yield
    finally:
        tf.config.set_soft_device_placement(saved)


def _run_all_ways(program, feeds):
    """(reference on the unplaced program, reference on the placed one, partitioned run)."""
    placed = place(program)
    parts = partition(placed)
    for p in parts.partitions:
        p.validate()
    return run_program(program, feeds), run_program(placed, feeds), run_partitioned(parts, feeds)


def _assert_same_values(*results):
    first = [t.numpy() for t in results[0]]
    for other in results[1:]:
        assert len(other) == len(first)
        for a, b in zip(first, other):
            np.testing.assert_array_equal(a, b.numpy())


# -- placement: requests and defaults --------------------------------------------------------------
def _three_requests(x):
    with tf.device("CPU:1"):
        a = x * 2.0
    with tf.device("/device:CPU:2"):
        b = a + 1.0
    with tf.device("CPU"):  # a partial request: any CPU, index 0 when none is said
        c = b * a
    return c - x  # no request: the default device


def test_explicit_requests_full_partial_and_the_default(logical_cpus):
    logical_cpus(3)
    program = _program(_three_requests, _spec())
    placed = place(program)
    assert all(n.device.startswith(FULL) for n in placed.nodes)
    assert _devices(placed) == {"Mul": "CPU:1", "AddV2": "CPU:2", "Mul_1": "CPU:0",
                                "Sub": "CPU:0"}
    assert _devices(place(program, default_device="CPU:2"))["Sub"] == "CPU:2"
    with tf.device("CPU:1"):  # the caller's device scope is the default, as in eager
        assert _devices(place(program))["Sub"] == "CPU:1"
    assert _devices(program)["Sub"] == ""  # placing never changes the program it was given
    x = tf.constant([1.0, -3.0])
    out = run_program(place(program, default_device="CPU:2"), [x])[0]
    assert out.device == "CPU:2"
    a = np.float32([1.0, -3.0]) * 2
    np.testing.assert_array_equal(out.numpy(), (a + 1) * a - np.float32([1.0, -3.0]))


def test_placement_of_a_program_matches_eager_placement_of_the_same_code(logical_cpus):
    logical_cpus(3)
    x = tf.constant([1.0, 2.0])
    with tf.device("CPU:1"):
        eager_mul = x * 2.0
    placed = place(_program(_three_requests, _spec()))
    assert _devices(placed)["Mul"] == eager_mul.device


# -- placement: resources --------------------------------------------------------------------------
def test_ops_on_a_variable_run_where_the_variable_lives(logical_cpus):
    logical_cpus(3)
    with tf.device("CPU:1"):
        v = tf.Variable([1.0, 2.0])

    def f(x):
        v.assign_add(x)
        with tf.device("CPU:2"):  # a request the resource overrides, as eager dispatch does
            r = v.read_value()
        return r * 2.0

    with tf.device("CPU:2"):
        assert v.read_value().device == "CPU:1"  # eager: the resource's device wins
    program = _program(f, _spec())
    placed = place(program)
    assert _devices(placed) == {"AssignAddVariableOp": "CPU:1", "ReadVariableOp": "CPU:1",
                                "Mul": "CPU:0", "Identity": "CPU:0"}
    out = run_partitioned(partition(placed), [tf.constant([1.0, 1.0])])[0]
    assert out.device == "CPU:0"
    np.testing.assert_array_equal(out.numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])


def test_a_read_with_no_request_runs_on_the_variables_device(logical_cpus):
    logical_cpus(2)
    with tf.device("CPU:1"):
        v = tf.Variable([3.0, 4.0])
    program = _program(lambda: v.read_value(), )
    placed = place(program)
    assert _devices(placed) == {"ReadVariableOp": "CPU:1"}
    out = run_partitioned(partition(placed), [])[0]
    assert out.device == "CPU:1"
    np.testing.assert_array_equal(out.numpy(), [3.0, 4.0])


def _handle_program(handle_device="CPU:2", requests=("/device:CPU:0", "")):
    """A program creating a variable (VarHandleOp on `handle_device`), assigning the fed x to
    it and reading it back, then squaring the read on CPU:1."""
    var_handle, assign, read = get_op("VarHandleOp"), get_op("AssignVariableOp"), \
        get_op("ReadVariableOp")
    attrs = {"dtype": tf.float32, "shape": tf.TensorShape([2]), "shared_name": "w",
             "device": handle_device, "validate_shape": True}
    nodes = [Node("w", var_handle, attrs, (), (1,)),
             Node("assign", assign, {}, (1, 0), (), device=requests[0]),
             Node("read", read, {}, (1,), (2,), ("assign",), device=requests[1]),
             Node("square", get_op("Mul"), {}, (2, 2), (3,), device="CPU:1")]
    specs = {0: _spec(), 1: _spec((), tf.resource), 2: _spec(), 3: _spec()}
    return Program(nodes, (0,), (3,), ("assign",), specs=specs,
                   value_names={0: "x:0", 1: "w:0", 2: "read:0", 3: "square:0"})


def test_a_resource_created_by_the_program_fixes_its_group(logical_cpus):
    logical_cpus(3)
    placed = place(_handle_program())
    assert _devices(placed) == {"w": "CPU:2", "assign": "CPU:2", "read": "CPU:2",
                                "square": "CPU:1"}
    out = run_partitioned(partition(placed), [tf.constant([3.0, -2.0])])[0]
    assert out.device == "CPU:1"
    np.testing.assert_array_equal(out.numpy(), [9.0, 4.0])


def test_an_op_on_resources_of_two_devices_cannot_be_placed(logical_cpus):
    logical_cpus(2)
    v0 = tf.Variable([1.0])
    with tf.device("CPU:1"):
        v1 = tf.Variable([2.0])
    both = _op("ReadBoth", lambda xp, a, b: a.storage_or_uninitialized("ReadBoth").value,
               lambda a, b: _spec((1,)), resource_reads=(0, 1))
    program = Program([Node("both", both, {}, (0, 1), (2,))], (), (2,),
                      constants={0: v0.handle, 1: v1.handle},
                      specs={0: _spec((), tf.resource), 1: _spec((), tf.resource),
                             2: _spec((1,))})
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        place(program)
    message = str(info.value)
    assert "Cannot colocate" in message and "'both'" in message
    assert FULL + "CPU:0" in message and FULL + "CPU:1" in message


def _fed_handle_program(first, second):
    """Two reads of a fed resource handle (its device unknown to the placer), with requests."""
    read = get_op("ReadVariableOp")
    nodes = [Node("read_a", read, {}, (0,), (1,), device=first),
             Node("read_b", read, {}, (0,), (2,), device=second)]
    specs = {0: _spec((), tf.resource), 1: _spec(), 2: _spec()}
    return Program(nodes, (0,), (1, 2), specs=specs)


def test_conflicting_requests_in_one_group_raise_naming_both_nodes(logical_cpus):
    logical_cpus(3)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        place(_fed_handle_program("/device:CPU:1", "/device:CPU:2"))
    message = str(info.value)
    assert "'read_a'" in message and "'read_b'" in message
    assert "CPU:1" in message and "CPU:2" in message
    # compatible requests merge: "CPU" (any index) and CPU:2 agree on CPU:2
    merged = place(_fed_handle_program("CPU", "/device:CPU:2"))
    assert _devices(merged) == {"read_a": "CPU:2", "read_b": "CPU:2"}
    # a known handle device decides, requests or not
    known = place(_fed_handle_program("/device:CPU:1", "/device:CPU:2"),
                  feed_devices={0: "CPU:0"})
    assert _devices(known) == {"read_a": "CPU:0", "read_b": "CPU:0"}


# -- placement: soft placement and pinning ---------------------------------------------------------
def _print_on_gpu(x):
    with tf.device("GPU:0"):
        y = x + 1.0
        tf.print("y:", y)  # PrintV2 has a CPU kernel only
    return y * 2.0


def test_soft_placement_moves_an_op_without_a_kernel_to_the_cpu(gpus, capsys):
    gpus(1)
    program = _program(_print_on_gpu, _spec())
    placed = place(program, soft_placement=True)
    assert _devices(placed) == {"AddV2": "GPU:0", "PrintV2": "CPU:0", "Mul": "GPU:0",
                                "Identity": "GPU:0"}
    with _soft_placement(True):
        assert _devices(place(program)) == _devices(placed)
    out = run_partitioned(partition(placed), [tf.constant([1.0, 2.0])])[0]
    assert out.device == "GPU:0"
    np.testing.assert_array_equal(out.numpy(), [4.0, 6.0])
    assert "y: [2 3]" in capsys.readouterr().err


def test_without_soft_placement_a_missing_kernel_is_an_error_naming_node_op_and_device(gpus):
    gpus(1)
    program = _program(_print_on_gpu, _spec())
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        place(program, soft_placement=False)
    message = str(info.value)
    assert "Cannot assign a device for operation 'PrintV2'" in message
    assert "GPU" in message and "PrintV2" in message
    with _soft_placement(False):  # the process setting is the default
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot assign a device"):
            place(program)


def test_an_op_without_a_kernel_on_the_default_device_quietly_runs_on_the_cpu(gpus):
    gpus(1)

    def f(x):
        tf.print(x)
        return x + 1.0

    placed = place(_program(f, _spec()), soft_placement=False)  # nothing was requested
    assert _devices(placed)["PrintV2"] == "CPU:0"
    assert _devices(placed)["AddV2"] == "GPU:0"


def test_a_request_for_a_missing_device_needs_soft_placement(logical_cpus):
    logical_cpus(2)
    program = Program([Node("neg", get_op("Neg"), {}, (0,), (1,), device="/device:CPU:5")],
                      (0,), (1,), specs={0: _spec(), 1: _spec()})
    assert _devices(place(program, soft_placement=True)) == {"neg": "CPU:0"}
    with pytest.raises(tf.errors.InvalidArgumentError, match="'neg'.*CPU:5"):
        place(program, soft_placement=False)


def test_stateful_nodes_keep_their_first_device_across_placements(logical_cpus, capsys):
    logical_cpus(3)

    def f(x):
        tf.print(x)
        return x * 3.0

    program = _program(f, _spec())
    pins = {}
    first = place(program, default_device="CPU:1", stateful_placements=pins)
    second = place(program, default_device="CPU:2", stateful_placements=pins)
    assert _devices(first)["PrintV2"] == _devices(second)["PrintV2"] == "CPU:1"
    assert _devices(first)["Mul"] == "CPU:1" and _devices(second)["Mul"] == "CPU:2"
    assert pins == {"PrintV2": FULL + "CPU:1"}  # only stateful nodes are pinned
    out = run_partitioned(partition(second), [tf.constant([1.0, 2.0])])[0]
    np.testing.assert_array_equal(out.numpy(), [3.0, 6.0])
    assert "[1 2]" in capsys.readouterr().err


def test_log_device_placement_prints_one_line_per_node(logical_cpus, capsys):
    logical_cpus(3)
    program = _program(_three_requests, _spec())
    capsys.readouterr()
    tf.debugging.set_log_device_placement(True)
    try:
        placed = place(program)
    finally:
        tf.debugging.set_log_device_placement(False)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"{n.name}: ({n.type}): {n.device}" for n in placed.nodes]
    assert "Mul: (Mul): /job:localhost/replica:0/task:0/device:CPU:1" in lines
    place(program)
    assert capsys.readouterr().err == ""


# -- partitioning: structure -----------------------------------------------------------------------
def _fan_out(x):
    with tf.device("CPU:0"):
        a = x * 2.0
    with tf.device("CPU:1"):
        b = a * a  # two reads of `a` on CPU:1: one transfer
        c = b + a
    with tf.device("CPU:2"):
        d = a - 1.0
    return c, d


def _nodes_of(program, op):
    return [n for n in program.nodes if n.op_def is op]


def test_partitions_get_one_send_recv_pair_per_value_and_destination(logical_cpus):
    logical_cpus(3)
    program = _program(_fan_out, _spec())
    parts = partition(place(program))
    assert isinstance(parts, PartitionedProgram)
    assert [d.rsplit(":", 2)[-2:] for d in parts.devices] == [["CPU", "0"], ["CPU", "1"],
                                                             ["CPU", "2"]]
    cpu0, cpu1, cpu2 = parts.partitions
    for p in parts.partitions:
        p.validate()
        assert all(n.device == parts.devices[parts.partitions.index(p)] for n in p.nodes)
        assert {n.name for n in _nodes_of(p, SEND)} <= set(p.targets)  # never pruned away
    sends = _nodes_of(cpu0, SEND)
    assert len(sends) == 2  # `a` once to CPU:1, once to CPU:2
    recvs = _nodes_of(cpu1, RECV) + _nodes_of(cpu2, RECV)
    assert len(recvs) == 2 and not _nodes_of(cpu1, SEND) and not _nodes_of(cpu2, SEND)
    assert sorted(s.attrs["key"] for s in sends) == sorted(r.attrs["key"] for r in recvs)
    for r in recvs:
        match = next(s for s in sends if s.attrs["key"] == r.attrs["key"])
        assert (match.attrs["send_device"], match.attrs["recv_device"]) == (
            r.attrs["send_device"], r.attrs["recv_device"])
        assert r.attrs["dtype"] is tf.float32 and r.attrs["shape"] == tf.TensorShape([2])
    # both reads of `a` on CPU:1 read the one received value
    (recv1,) = _nodes_of(cpu1, RECV)
    assert [n.inputs.count(recv1.outputs[0]) for n in cpu1.nodes if n.type == "Mul"] == [2]
    # the feed goes only where it is read; the rendezvous comes first where anything transfers
    assert parts.feed_positions == ((0,), (), ())
    assert parts.uses_rendezvous == (True, True, True)
    assert len(cpu0.feeds) == 2 and len(cpu1.feeds) == 1
    # fetches come from the partitions that compute them
    assert [s[:2] for s in parts.fetch_sources] == [("partition", 1), ("partition", 2)]
    assert parts.run_order[0] == 0 and sorted(parts.run_order) == [0, 1, 2]  # one way


def test_a_single_device_program_is_one_partition_without_transfers(logical_cpus):
    logical_cpus(2)
    program = _program(lambda x: x * 2.0 + 1.0, _spec())
    placed = place(program)
    parts = partition(placed)
    (only,) = parts.partitions
    assert [n.name for n in only.nodes] == [n.name for n in placed.nodes]
    assert only.feeds == placed.feeds and parts.uses_rendezvous == (False,)
    out = run_partitioned(parts, [tf.constant([1.0, 2.0])])
    np.testing.assert_array_equal(out[0].numpy(), [3.0, 5.0])


def test_partition_needs_a_placed_program(logical_cpus):
    logical_cpus(2)
    with pytest.raises(ValueError, match="place"):
        partition(_program(lambda x: x + 1.0, _spec()))


def test_fetched_feeds_and_constants_come_back_as_they_are(logical_cpus):
    logical_cpus(2)
    c = tf.constant([5.0, 6.0])

    def f(x):
        with tf.device("CPU:1"):
            y = x + c
        return x, c, y

    parts = partition(place(_program(f, _spec())))
    x = tf.constant([1.0, 2.0])
    got = run_partitioned(parts, [x])
    assert got[0] is x and got[1] is c
    assert got[2].device == "CPU:1"
    np.testing.assert_array_equal(got[2].numpy(), [6.0, 8.0])


# -- partitioning: running -------------------------------------------------------------------------
def _hops(x):
    with tf.device("CPU:0"):
        a = x * 2.0
    with tf.device("CPU:1"):
        b = a + 1.0
    with tf.device("CPU:0"):
        c = b * a
    return c, b


@given(st.lists(st.floats(-100, 100, width=32), min_size=1, max_size=5))
def test_a_chain_hopping_cpu0_cpu1_cpu0_matches_numpy_and_the_reference(values):
    _reset_for_tests()
    try:
        tf.config.set_visible_devices([], "GPU")
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(2)])
        x = np.float32(values)
        program = _program(_hops, _spec([len(values)]))
        parts = partition(place(program))
        assert parts.run_order is None  # CPU:0 and CPU:1 wait on each other: threads
        results = _run_all_ways(program, [tf.constant(x)])
        _assert_same_values(*results)
        c, b = results[2]
        a = x * np.float32(2)
        np.testing.assert_array_equal(c.numpy(), (a + np.float32(1)) * a)
        assert (c.device, b.device) == ("CPU:0", "CPU:1")
    finally:
        _reset_for_tests()
        registry.devices()


def _diamond(x):
    with tf.device("CPU:0"):
        a = x * 3.0
    with tf.device("CPU:1"):
        b = a + 1.0
    with tf.device("CPU:2"):
        c = a - 2.0
    with tf.device("CPU:0"):
        d = b * c
    return d


def _one_way_diamond(x):
    with tf.device("CPU:0"):
        a = x * 3.0
    with tf.device("CPU:1"):
        b = a + 1.0
    with tf.device("CPU:2"):
        c = a - 2.0
        d = b * c
    return d


@pytest.mark.parametrize("fn, in_order", [(_diamond, False), (_one_way_diamond, True)])
def test_a_diamond_across_three_devices(logical_cpus, fn, in_order):
    logical_cpus(3)
    program = _program(fn, _spec([3]))
    parts = partition(place(program))
    assert (parts.run_order is not None) == in_order
    x = np.float32([1.0, -2.0, 0.5])
    results = _run_all_ways(program, [tf.constant(x)])
    _assert_same_values(*results)
    a = x * np.float32(3)
    np.testing.assert_array_equal(results[2][0].numpy(), (a + 1) * (a - 2))
    assert results[2][0].device == ("CPU:0" if fn is _diamond else "CPU:2")


_BINARY = {"add": (tf.add, np.add), "sub": (tf.subtract, np.subtract),
           "mul": (tf.multiply, np.multiply), "max": (tf.maximum, np.maximum)}


@st.composite
def _random_programs(draw):
    """(ops, fetches): ops are (kind, input index, input index, device or None) over the
    values [x, op 0, op 1, ...]; fetches index the same list."""
    n = draw(st.integers(1, 8))
    ops = [(draw(st.sampled_from(sorted(_BINARY))), draw(st.integers(0, i)),
            draw(st.integers(0, i)), draw(st.sampled_from([None, "CPU:0", "CPU:1", "CPU:2"])))
           for i in range(n)]
    fetches = draw(st.lists(st.integers(0, n), min_size=1, max_size=3))
    return ops, fetches


def test_random_programs_across_devices_agree_with_numpy_and_the_reference(logical_cpus):
    logical_cpus(3)

    @given(_random_programs(), st.lists(st.floats(-2, 2, width=32), min_size=2, max_size=2))
    def check(case, values):
        ops, fetches = case

        def fn(x):
            seen = [x]
            for kind, i, j, device in ops:
                with tf.device(device) if device else contextlib.nullcontext():
                    seen.append(_BINARY[kind][0](seen[i], seen[j]))
            return [seen[k] for k in fetches]

        x = np.float32(values)
        expected = [x]
        for kind, i, j, _ in ops:
            expected.append(_BINARY[kind][1](expected[i], expected[j]))
        program = _program(fn, _spec())
        placed = place(program)
        results = _run_all_ways(program, [tf.constant(x)])
        _assert_same_values(*results)
        producer = {v: n for n in placed.nodes for v in n.outputs}
        for k, v, got in zip(fetches, placed.fetches, results[2]):
            np.testing.assert_array_equal(got.numpy(), expected[k])
            if v in producer:  # each value lives where its node was placed
                assert FULL + got.device == producer[v].device

    check()


def test_concurrent_calls_of_one_partitioned_program_do_not_mix(logical_cpus):
    logical_cpus(2)
    parts = partition(place(_program(_hops, _spec())))
    failures = []

    def caller(seed):
        for k in range(15):
            x = np.float32([seed, k])
            c, b = run_partitioned(parts, [tf.constant(x)])
            a = x * 2
            if not (np.array_equal(c.numpy(), (a + 1) * a) and np.array_equal(b.numpy(), a + 1)):
                failures.append((seed, k))

    threads = [threading.Thread(target=caller, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert _partition_threads() == []


def test_a_compiler_is_applied_once_per_partition(logical_cpus):
    logical_cpus(2)
    parts = partition(place(_program(_hops, _spec())))
    compiled, calls = [], []

    def compiler(program):
        compiled.append(program.name)

        def run(feeds):
            calls.append(program.name)
            return run_program(program, feeds)

        return run

    for k in range(3):
        c, _ = run_partitioned(parts, [tf.constant([1.0, float(k)])], compiler=compiler)
        np.testing.assert_array_equal(c.numpy(), [6.0, (2 * k + 1) * 2 * k])
    assert sorted(compiled) == sorted(p.name for p in parts.partitions)
    assert len(calls) == 3 * len(parts.partitions)


def test_simulated_gpus_and_the_cpu_exchange_values(gpus):
    gpus(2)
    with tf.device("GPU:1"):
        v = tf.Variable([1.0, 2.0])

    def f(x):
        with tf.device("CPU:0"):
            a = x * 2.0
        with tf.device("GPU:0"):
            b = a + 1.0
        with tf.device("CPU:0"):
            c = b * a
        v.assign_add(c)
        return v.read_value() + c, b

    program = _program(f, _spec())
    placed = place(program)
    assert _devices(placed)["ReadVariableOp"] == "GPU:1"
    parts = partition(placed)
    for device, part in zip(parts.devices, parts.partitions):
        part.validate()
        for n in part.nodes:  # receives wait on the host, never on a GPU stream
            if n.op_def is RECV:
                assert n.device == FULL + "CPU:0"
            else:
                assert n.device == device
    gpu0 = parts.partition_for("GPU:0")
    copies = [n for n in gpu0.nodes if n.name.endswith("/to_device")]
    assert copies and all(n.type == "Identity" for n in copies)
    x = tf.constant([1.0, 3.0])
    got = run_partitioned(parts, [x])
    np.testing.assert_array_equal(v.numpy(), [7.0, 44.0])
    np.testing.assert_array_equal(got[0].numpy(), [13.0, 86.0])
    np.testing.assert_array_equal(got[1].numpy(), [3.0, 7.0])
    assert [t.device for t in got] == ["GPU:0", "GPU:0"]
    reference = run_program(placed, [x])  # a second step: v grows again, the same way
    np.testing.assert_array_equal(reference[0].numpy(), [19.0, 128.0])


# -- control edges across devices ------------------------------------------------------------------
def _ordering_program(v):
    """CPU:0 scales x and hands it to CPU:1, which waits a little, then assigns it to `v`
    (on CPU:1); CPU:0's probe reads `v`'s storage directly, after the assign by a control
    edge only. The probe is an op of CPU:0 that no data edge orders after the assign."""
    storage = v.handle._value.resource("probe")
    delay = _op("Delay", lambda xp, x: (time.sleep(0.05), x)[1], stateful=True)
    probe = _op("Probe", lambda xp: np.array(storage.value, copy=True),
                lambda: _spec(), stateful=True)
    nodes = [Node("scale", get_op("Mul"), {}, (0, 0), (1,), device="CPU:0"),
             Node("delay", delay, {}, (1,), (2,), device="CPU:1"),
             Node("assign", get_op("AssignVariableOp"), {}, (3, 2), (), device="CPU:1"),
             Node("probe", probe, {}, (), (4,), ("assign",), device="CPU:0")]
    specs = {0: _spec(), 1: _spec(), 2: _spec(), 3: _spec((), tf.resource), 4: _spec()}
    return Program(nodes, (0,), (4,), ("assign",), constants={3: v.handle}, specs=specs)


def test_a_control_edge_across_devices_orders_an_assign_before_a_read(logical_cpus):
    logical_cpus(2)
    with tf.device("CPU:1"):
        v = tf.Variable([0.0, 0.0])
    parts = partition(place(_ordering_program(v)))
    cpu0, cpu1 = parts.partitions
    assert [n.name for n in cpu1.nodes if n.op_def is SEND] == ["assign/_send_control_to_CPU_0"]
    (probe,) = [n for n in cpu0.nodes if n.name == "probe"]
    assert probe.control_inputs == ("assign/_recv_control_on_CPU_0",)
    assert parts.run_order is None  # both directions: the partitions run side by side
    for k in range(3):
        x = np.float32([k + 1.0, -2.0])
        (seen,) = run_partitioned(parts, [tf.constant(x)])
        np.testing.assert_array_equal(seen.numpy(), x * x)  # the probe saw the new value
        assert seen.device == "CPU:0"


# -- failures --------------------------------------------------------------------------------------
def _failing_program(fail_device, wait_device):
    """x -> (fail_device) Fail -> (wait_device) +1: the waiting partition needs the value of
    the op that fails; Fail raises OutOfRangeError for negative inputs."""

    def fail(xp, x):
        if x[0] < 0:
            raise tf.errors.OutOfRangeError(None, "Fail", "Fail: the input is negative")
        return x

    nodes = [Node("start", get_op("Neg"), {}, (0,), (1,), device=wait_device),
             Node("fail", _op("Fail", fail, stateful=True), {}, (1,), (2,), device=fail_device),
             Node("after", get_op("AddV2"), {}, (2, 2), (3,), device=wait_device)]
    specs = {v: _spec() for v in range(4)}
    return Program(nodes, (0,), (3,), specs=specs)


def _run_guarded(fn):
    """Runs `fn()` on a helper thread; returns its (result, error), failing the test instead of
    hanging the suite if it never returns."""
    box = {}

    def target():
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "the partitioned run hung"
    return box.get("result"), box.get("error")


def test_an_error_in_one_partition_surfaces_without_a_hang(logical_cpus):
    logical_cpus(2)
    parts = partition(place(_failing_program("/device:CPU:1", "/device:CPU:0")))
    assert parts.run_order is None  # CPU:0 waits for CPU:1's failing value: threads
    _, error = _run_guarded(lambda: run_partitioned(parts, [tf.constant([1.0, 2.0])]))
    assert isinstance(error, tf.errors.OutOfRangeError)  # the class is preserved
    assert "negative" in str(error)
    assert _partition_threads() == []
    # the program stays usable
    (ok,) = run_partitioned(parts, [tf.constant([-1.0, 2.0])])
    np.testing.assert_array_equal(ok.numpy(), [2.0, -4.0])


def test_an_error_with_partitions_run_in_order_aborts_the_rendezvous(logical_cpus):
    logical_cpus(2)
    program = _failing_program("/device:CPU:0", "/device:CPU:0")
    program = program.replace(nodes=[n.replace(device="/device:CPU:1") if n.name == "after"
                                     else n for n in program.nodes])
    parts = partition(place(program))
    assert parts.run_order is not None
    _, error = _run_guarded(lambda: run_partitioned(parts, [tf.constant([1.0, 2.0])]))
    assert isinstance(error, tf.errors.OutOfRangeError)


def test_an_error_leaves_no_stale_failure_on_a_simulated_gpu(gpus):
    gpus(1)
    # CPU:0 fails; GPU:0's receive of its value waits on the GPU's stream worker
    parts = partition(place(_failing_program("/device:CPU:0", "/device:GPU:0")))
    _, error = _run_guarded(lambda: run_partitioned(parts, [tf.constant([1.0, 2.0])]))
    assert isinstance(error, tf.errors.OutOfRangeError)
    tf.experimental.sync_devices()  # the cancelled receive does not fail a later sync
    with tf.device("GPU:0"):
        np.testing.assert_array_equal((tf.constant([1.0]) + 1.0).numpy(), [2.0])
    (ok,) = run_partitioned(parts, [tf.constant([-3.0, 1.0])])
    assert ok.device == "GPU:0"
    np.testing.assert_array_equal(ok.numpy(), [6.0, -2.0])


# -- the rendezvous --------------------------------------------------------------------------------
def test_rendezvous_delivers_each_key_once_across_threads():
    rendezvous = Rendezvous()
    got = []
    t = threading.Thread(target=lambda: got.append(rendezvous.recv("k")))
    t.start()
    rendezvous.send("k", 42)
    t.join(timeout=60)
    assert got == [42] and rendezvous.pending() == 0
    with pytest.raises(tf.errors.InternalError, match="twice"):
        rendezvous.send("j", 1)
        rendezvous.send("j", 2)


def test_rendezvous_abort_wakes_waiting_receives_with_the_cause():
    rendezvous = Rendezvous()
    errors = []

    def waiter():
        try:
            rendezvous.recv("never")
        except tf.errors.CancelledError as exc:
            errors.append(exc)

    t = threading.Thread(target=waiter)
    t.start()
    cause = tf.errors.OutOfRangeError(None, "X", "the cause")
    assert rendezvous.abort(cause) is True
    assert rendezvous.abort(ValueError("later")) is False  # the first error is kept
    t.join(timeout=60)
    assert not t.is_alive()
    assert len(errors) == 1 and "the cause" in str(errors[0])
    assert rendezvous.error is cause
    rendezvous.send("k", 1)  # dropped: nobody will receive it
    assert rendezvous.pending() == 0
    with pytest.raises(tf.errors.CancelledError):
        rendezvous.recv("k")


def test_send_and_recv_ops_are_stateful_and_typed():
    assert SEND.stateful and RECV.stateful and SEND.num_outputs == 0
    spec = RECV.infer(None, key="k", send_device="CPU:0", recv_device="CPU:1",
                      dtype=tf.float32, shape=tf.TensorShape([2, None]))
    assert spec == (TensorSpec([2, None], tf.float32),)
    assert RECV.infer(None, key="k", send_device="CPU:0", recv_device="CPU:1", dtype=None,
                      shape=None) == ()


@pytest.fixture(autouse=True)
def _inference_checked():
    """Every kernel run by these tests has its inference cross-checked (conftest turns it on
    for the suite; this file relies on it for the send/recv ops)."""
    assert dispatch.hooks.check_inference
    yield
