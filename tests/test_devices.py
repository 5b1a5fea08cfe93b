"""Devices: discovery, logical CPUs, device scopes with TensorFlow's placement rules, copies."""

import subprocess
import sys
import threading

import numpy as np
import pytest

import eager as tf
from eager.core import context
from eager.devices import COMPLETED, registry
from eager.devices.spec import DeviceSpec, parse
from eager.devices.cuda import cuda_device_count
from eager.core.context import _reset_for_tests


def test_cpu_is_always_there_and_is_the_default_without_gpu():
    cpus = tf.config.list_physical_devices("CPU")
    assert [d.device_type for d in cpus] == ["CPU"]
    assert cpus[0].name == "/physical_device:CPU:0"
    if not tf.config.list_physical_devices("GPU"):
        assert registry.default_device().name == "CPU:0"
        assert tf.constant(1.0).device == "CPU:0"


def test_list_physical_devices_filters_by_type_case_insensitively():
    assert tf.config.list_physical_devices("cpu") == tf.config.list_physical_devices("CPU")
    with pytest.raises(TypeError):
        tf.config.list_physical_devices(3)


def test_logical_cpus_split_the_physical_cpu(logical_cpus):
    logical = logical_cpus(3)
    assert [d.name for d in logical] == [
        f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(3)]
    assert {d.device_type for d in logical} == {"CPU"}


def test_logical_configuration_is_frozen_after_initialization(logical_cpus):
    logical_cpus(2)
    cpu = tf.config.list_physical_devices("CPU")[0]
    with pytest.raises(RuntimeError, match="cannot be modified after being initialized"):
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 3)
    # Re-stating the same configuration is accepted, as in TensorFlow.
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    assert len(tf.config.get_logical_device_configuration(cpu)) == 2


def test_set_logical_device_configuration_rejects_bad_arguments():
    cpu = tf.config.list_physical_devices("CPU")[0]
    with pytest.raises(ValueError, match="Unrecognized physical device"):
        tf.config.set_logical_device_configuration("/physical_device:TPU:0", [])
    with pytest.raises(TypeError):
        tf.config.set_logical_device_configuration(cpu, ["not a configuration"])
    with pytest.raises(TypeError):
        tf.config.set_logical_device_configuration(42, [])


@pytest.mark.parametrize("name", [
    "CPU:1", "cpu:1", "/cpu:1", "/device:CPU:1", "/job:localhost/replica:0/task:0/device:CPU:1",
    "/job:localhost/device:CPU:1"])
def test_device_scope_accepts_short_and_long_names(logical_cpus, name):
    logical_cpus(2)
    with tf.device(name):
        t = tf.constant([1.0, 2.0])
    assert t.device == "CPU:1"
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])


def test_ops_run_on_the_scope_device_and_inputs_are_copied(logical_cpus):
    logical_cpus(3)
    with tf.device("CPU:0"):
        a = tf.constant([1.0, 2.0, 3.0])
    with tf.device("CPU:1"):
        b = tf.constant([10.0, 20.0, 30.0])
    with tf.device("CPU:2"):
        c = a + b
        d = tf.multiply(a, 2.0)
    assert (a.device, b.device, c.device, d.device) == ("CPU:0", "CPU:1", "CPU:2", "CPU:2")
    np.testing.assert_array_equal(c.numpy(), [11.0, 22.0, 33.0])
    np.testing.assert_array_equal(d.numpy(), [2.0, 4.0, 6.0])
    # Without a scope, ops go to the default device (TensorFlow's rule), copying inputs there.
    e = b + b
    assert e.device == "CPU:0"
    np.testing.assert_array_equal(e.numpy(), [20.0, 40.0, 60.0])


def test_copying_between_logical_devices_makes_a_new_buffer(logical_cpus):
    logical_cpus(2)
    source = tf.constant(np.arange(6.0).reshape(2, 3))
    with tf.device("CPU:1"):
        moved = source + 0.0  # any op copies its inputs to the op's device first
    assert moved.device == "CPU:1"
    assert not np.shares_memory(moved._value, source._value)
    device1 = registry.lookup("CPU:1")
    copied = device1.copy_from(source._value, registry.lookup("CPU:0"))
    assert not np.shares_memory(copied, source._value)
    np.testing.assert_array_equal(copied, source.numpy())


def test_nested_scopes_inner_wins_and_none_clears(logical_cpus):
    logical_cpus(3)
    with tf.device("CPU:1"):
        with tf.device("CPU:2"):
            inner = tf.constant(1.0)
        middle = tf.constant(1.0)
        with tf.device(None):
            cleared = tf.constant(1.0)
        with tf.device("/job:localhost"):  # a partial spec keeps the outer device
            partial = tf.constant(1.0)
    outer = tf.constant(1.0)
    assert (inner.device, middle.device, cleared.device, partial.device, outer.device) == (
        "CPU:2", "CPU:1", "CPU:0", "CPU:1", "CPU:0")


def test_soft_placement_falls_back_and_hard_placement_fails():
    with tf.device("GPU:0" if not tf.config.list_physical_devices("GPU") else "GPU:99"):
        t = tf.constant([1.0]) * 2.0
    assert t.device.startswith("CPU") or t.device == "GPU:0"
    tf.config.set_soft_device_placement(False)
    try:
        with tf.device("CPU:7"):
            with pytest.raises(tf.errors.InvalidArgumentError, match="CPU:7"):
                tf.constant([1.0]) + tf.constant([2.0])
    finally:
        tf.config.set_soft_device_placement(True)
    assert tf.config.get_soft_device_placement() is True


@pytest.mark.parametrize("bad", ["XPU:0", "CPU:x", "CPU:-1", "/job:worker/device:CPU:0",
                                 "/replica:1/device:CPU:0", "CPU:0:0", "/foo:bar"])
def test_malformed_or_remote_device_names_raise_value_error(bad):
    with pytest.raises(ValueError, match="device"):
        tf.device(bad)


def test_device_name_must_be_a_string():
    with pytest.raises(TypeError):
        tf.device(3)
    with pytest.raises(RuntimeError, match="device functions"):
        tf.device(lambda op: "CPU:0")


def test_device_spec_parsing_and_merging():
    spec = parse("/job:localhost/replica:0/task:0/device:GPU:1")
    assert (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index) == (
        "localhost", 0, 0, "GPU", 1)
    assert spec.to_string() == "/job:localhost/replica:0/task:0/device:GPU:1"
    assert parse("gpu").device_index is None and parse("gpu").device_type == "GPU"
    merged = parse("/job:localhost").make_merged_spec(parse("CPU:2"))
    assert merged.to_string() == "/job:localhost/device:CPU:2"
    assert DeviceSpec.from_string("CPU:0") == parse("/device:CPU:0")


def test_device_scopes_are_per_thread(logical_cpus):
    logical_cpus(2)
    seen = {}
    entered = threading.Event()
    release = threading.Event()

    def worker():
        with tf.device("CPU:1"):
            entered.set()
            release.wait(5)
            seen["worker"] = tf.constant(1.0).device

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait(5)
    seen["main"] = tf.constant(1.0).device  # main thread has no scope
    release.set()
    thread.join()
    assert seen == {"worker": "CPU:1", "main": "CPU:0"}


def test_fast_path_is_off_inside_a_scope_and_back_on_after(cpu_only, no_inference_check):
    tf.constant(0.0)  # devices initialized
    assert context.FAST_PATH.kernel_only
    with tf.device("CPU:0"):
        assert not context.FAST_PATH.kernel_only
        x = tf.constant([1.0, 2.0]) + tf.constant([3.0, 4.0])
    assert context.FAST_PATH.kernel_only
    np.testing.assert_array_equal(x.numpy(), [4.0, 6.0])


def test_fast_path_is_off_with_several_devices(logical_cpus, no_inference_check):
    logical_cpus(2)
    tf.constant(0.0)
    assert not context.FAST_PATH.kernel_only


def test_log_device_placement_prints_each_op(cpu_only, capsys):
    tf.debugging.set_log_device_placement(True)
    try:
        tf.constant([1.0]) + tf.constant([2.0])
    finally:
        tf.debugging.set_log_device_placement(False)
    err = capsys.readouterr().err
    assert "Executing op AddV2 in device /job:localhost/replica:0/task:0/device:CPU:0" in err


def test_cpu_streams_run_inline_with_completed_events():
    cpu = registry.lookup("CPU:0")
    assert cpu.inline and cpu.compute_stream.inline and cpu.copy_stream.inline
    assert cpu.compute_stream.launch(lambda a, b: a + b, 2, 3) == 5
    event = cpu.compute_stream.record_event()
    assert event is COMPLETED and event.query()
    cpu.copy_stream.wait_event(event)
    cpu.synchronize()
    assert cpu.xp is np


def test_importing_eager_does_not_import_cupy():
    # Importing and listing CPUs never probes CUDA (probing happens on the first op or when
    # GPUs are listed, and only then may cupy be imported).
    code = ("import sys, eager; eager.config.list_physical_devices('CPU'); "
            "print('cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_gpu_probe_never_raises_and_agrees_with_listing():
    _reset_for_tests()
    try:
        tf.config.experimental.set_simulated_gpus(0)  # the real GPUs, in a simulated run too
        count = cuda_device_count()
        assert count == len(tf.config.list_physical_devices("GPU"))
    finally:
        _reset_for_tests()


def test_visible_devices_hide_gpus_before_initialization_only():
    _reset_for_tests()
    try:
        tf.config.experimental.set_simulated_gpus(2)
        gpus = tf.config.list_physical_devices("GPU")
        tf.config.set_visible_devices(gpus[1:], "GPU")
        assert tf.config.get_visible_devices("GPU") == gpus[1:]
        assert [d.name for d in tf.config.list_logical_devices("GPU")] == [
            "/job:localhost/replica:0/task:0/device:GPU:0"]  # the one visible GPU
        with pytest.raises(RuntimeError, match="initialized"):
            tf.config.set_visible_devices([], "GPU")
        _reset_for_tests()
        tf.config.experimental.set_simulated_gpus(1)
        tf.config.set_visible_devices([], "GPU")
        assert tf.constant(1.0).device == "CPU:0"  # no GPU: the CPU is the default
        assert tf.config.list_physical_devices("GPU") == gpus[:1]  # still listed, as TF
        _reset_for_tests()
        with pytest.raises(ValueError, match="CPU"):
            tf.config.set_visible_devices([], "CPU")
        with pytest.raises(ValueError, match="Unrecognized"):
            tf.config.set_visible_devices(["/physical_device:TPU:0"])
    finally:
        _reset_for_tests()
        tf.constant(0.0)
