"""Functions and Sessions whose graphs span devices run partitioned (one compiled plan per
device, send/recv between them) and agree with eager execution, op for op and device for
device; single-device graphs keep the unplaced compiled plan."""

import numpy as np
import pytest

import eager
from eager.core.context import _reset_for_tests
from eager.devices import registry
from eager.graph import Graph
from eager.runtime.compiler import CompiledProgram
from eager.runtime.executable import MultiDeviceExecutable
from eager.ops import list_ops


@pytest.fixture
def gpus():
    """`configure(n)`: n simulated GPUs (GPU:0 the default device) for one test."""

    def configure(n):
        _reset_for_tests()
        eager.config.experimental.set_simulated_gpus(n)

    yield configure
    eager.experimental.sync_devices()
    _reset_for_tests()
    registry.devices()


def _call_twice(f, *args):
    """The first call (interpreted) and the second (compiled) results, as numpy."""
    first = [t.numpy() for t in eager.nest.flatten(f(*args))]
    second = f(*args)
    return first, second


def test_function_spanning_two_cpus_runs_partitioned(logical_cpus):
    logical_cpus(2)

    def body(x):
        with eager.device("CPU:1"):
            y = eager.exp(x) * 2.0
        z = y + x  # back on CPU:0
        with eager.device("CPU:1"):
            w = z * z
        return z, w

    f = eager.function(body)
    x = eager.constant([0.5, -1.0, 2.0])
    first, (z, w) = _call_twice(f, x)
    cf = f.get_concrete_function(x)
    assert isinstance(cf._executable, MultiDeviceExecutable)
    parts = cf._executable.partitioned_for(registry.default_device())
    assert sorted(d.rsplit(":", 2)[-2:] for d in parts.devices) == [["CPU", "0"], ["CPU", "1"]]
    assert any(n.type == "_Send" for p in parts.partitions for n in p.nodes)
    z_eager, w_eager = body(x)
    np.testing.assert_array_equal(z.numpy(), z_eager.numpy())
    np.testing.assert_array_equal(w.numpy(), w_eager.numpy())
    np.testing.assert_array_equal(z.numpy(), first[0])
    assert z.device.endswith("CPU:0") and w.device.endswith("CPU:1")
    assert z.device == z_eager.device and w.device == w_eager.device


def test_variable_on_another_device_is_updated_then_read_in_order(logical_cpus):
    logical_cpus(2)
    with eager.device("CPU:1"):
        v = eager.Variable([1.0, 2.0])

    @eager.function
    def step(x):
        v.assign_add(x * 2.0)  # the multiply on CPU:0, the update with v on CPU:1
        return v.read_value() + 1.0

    x = eager.constant([1.0, 1.0])
    out1 = step(x).numpy()
    out2 = step(x)
    assert isinstance(step.get_concrete_function(x)._executable, MultiDeviceExecutable)
    np.testing.assert_array_equal(out1, [4.0, 5.0])
    np.testing.assert_array_equal(out2.numpy(), [6.0, 7.0])
    np.testing.assert_array_equal(v.numpy(), [5.0, 6.0])
    assert v.device.endswith("CPU:1")


def test_single_device_function_keeps_the_unplaced_plan_and_follows_the_callers_scope(
        logical_cpus):
    logical_cpus(2)
    f = eager.function(lambda x: x * 3.0)
    x = eager.constant([1.0])
    f(x)
    f(x)
    assert isinstance(f.get_concrete_function(x)._executable, CompiledProgram)
    with eager.device("CPU:1"):
        y = f(x)
    assert y.device.endswith("CPU:1")


def test_simulated_gpus_and_the_cpu(gpus):
    gpus(2)

    def body(x):
        a = eager.tanh(x)  # GPU:0, the default device
        with eager.device("GPU:1"):
            b = a * 3.0
        with eager.device("CPU:0"):
            c = b - x
        return a, b, c

    f = eager.function(body)
    x = eager.constant(np.linspace(-1, 1, 5, dtype=np.float32))
    first, (a, b, c) = _call_twice(f, x)
    assert isinstance(f.get_concrete_function(x)._executable, MultiDeviceExecutable)
    want = body(x)
    for got, ref, before in zip((a, b, c), want, first):
        np.testing.assert_array_equal(got.numpy(), ref.numpy())
        np.testing.assert_array_equal(got.numpy(), before)
        assert got.device == ref.device
    assert [t.device.rsplit(":", 2)[-2:] for t in (a, b, c)] == [["GPU", "0"], ["GPU", "1"],
                                                                  ["CPU", "0"]]


def test_session_on_a_multi_device_graph(logical_cpus):
    logical_cpus(3)
    g = Graph("g")
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        with eager.device("CPU:2"):
            y = x * 10.0
        with eager.device("CPU:1"):
            z = y + 1.0
        out = z - x
    sess = eager.Session(g)
    np.testing.assert_array_equal(sess.run(out, {x: [1.0, 2.0]}), [10.0, 19.0])
    np.testing.assert_array_equal(sess.run([z, y], {x: [0.0, 1.0]})[0], [1.0, 11.0])


def test_an_error_in_one_partition_surfaces_without_a_hang(logical_cpus):
    logical_cpus(2)

    @eager.function
    def f(i):
        with eager.device("CPU:1"):
            table = eager.constant([1.0, 2.0, 3.0]) * 2.0
        return eager.gather(table, i) + 1.0

    i = eager.constant(1)
    assert f(i).numpy() == 5.0
    assert f(i).numpy() == 5.0
    with pytest.raises(eager.errors.InvalidArgumentError, match="GatherV2"):
        f(eager.constant(9))
    assert f(eager.constant(2)).numpy() == 7.0


def test_log_device_placement_names_each_node_once_per_placement(logical_cpus, capfd):
    logical_cpus(2)

    @eager.function
    def f(x):
        with eager.device("CPU:1"):
            return x * 2.0

    x = eager.constant(1.0)
    f(x)
    eager.debugging.set_log_device_placement(True)
    try:
        capfd.readouterr()
        f(x)  # compiled now: placement logs
    finally:
        eager.debugging.set_log_device_placement(False)
    err = capfd.readouterr().err
    assert "Mul: (Mul): /job:localhost/replica:0/task:0/device:CPU:1" in err


def test_a_tensorlist_crossing_into_a_gpu_partition_stays_host_data(gpus, capfd):
    # the While (CPU kernels) passes its list to the GPU partition; lists are host data
    gpus(1)

    @eager.function
    def f(x):
        empty = list_ops.empty_tensor_list(element_shape=[2], element_dtype=eager.float32)

        def body(i, items):
            eager.print("step", i)
            return i + 1, list_ops.tensor_list_push_back(items, x * eager.cast(i, eager.float32))

        _, items = eager.while_loop(lambda i, items: i < 3, body, (0, empty))
        return list_ops.tensor_list_stack(items, element_dtype=eager.float32)

    x = eager.constant([1.0, 2.0])
    for _ in range(3):  # interpreted, then compiled (partitioned: the While runs on the CPU)
        np.testing.assert_array_equal(f(x).numpy(), [[0.0, 0.0], [1.0, 2.0], [2.0, 4.0]])
    assert capfd.readouterr().err.count("step 2") == 3  # eager.print: stderr, as tf.print
