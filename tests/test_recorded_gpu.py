"""Eager's CUDA backend run on the recorded CuPy (`tests/recording_cupy.py`): the real backend
code, kernel layer and compiled programs' device form, on any machine. What a GPU would
compute is compared with the CPU's; what it would launch is counted.

The scenarios run in a subprocess (`recorded_gpu_worker.py`), since the recorded module must be
`cupy` before eager first asks for it; the same scenarios run on the CPU in this process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import eager
from recorded_gpu_worker import bad_checks, gated_sparse_writes, scenario_values

HERE = Path(__file__).resolve().parent


def _worker(*args):
    env = {k: v for k, v in os.environ.items() if k != "EAGER_SIMULATED_GPUS"}  # CUDA's path
    done = subprocess.run([sys.executable, str(HERE / "recorded_gpu_worker.py"), *args],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def report():
    return _worker()


@pytest.fixture(scope="module")
def on_cpu():
    return scenario_values(eager)


def test_the_recorded_gpu_is_the_cuda_backend_and_the_default_device(report):
    assert report["default device"] == "GPU:0"
    assert report["backend"] == "CUDADevice"


def test_training_steps_on_the_gpu_backend_give_the_cpus_values(report, on_cpu):
    got = report["values"]
    for key in ("traced losses", "eager losses"):
        np.testing.assert_allclose(got[key], on_cpu[key], rtol=1e-6)
    for key in ("traced weights", "eager weights"):
        for g, e in zip(got[key], on_cpu[key]):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)
    for key in ("many variables", "many variables, traced", "many variables with Adam",
                "many variables with Adam, traced", "many variables with Nesterov momentum",
                "many variables with Nesterov momentum, traced"):
        for g, e in zip(got[key], on_cpu[key]):  # grouped updates: the same bits
            np.testing.assert_array_equal(g, e, err_msg=key)
    for key in ("recurrence", "recurrence with a TensorArray"):
        np.testing.assert_allclose(got[key][0], on_cpu[key][0], rtol=1e-5, err_msg=key)
        np.testing.assert_allclose(got[key][1], on_cpu[key][1], rtol=1e-5, atol=1e-6,
                                   err_msg=key)
    np.testing.assert_allclose(got["gradient penalty"][0], on_cpu["gradient penalty"][0],
                               rtol=1e-5)
    np.testing.assert_allclose(got["gradient penalty"][1], on_cpu["gradient penalty"][1],
                               rtol=1e-5, atol=1e-6)
    for g, e in zip(got["condition loops"], on_cpu["condition loops"]):
        np.testing.assert_allclose(g, e, rtol=1e-6)
    np.testing.assert_allclose(got["counted TensorArray loop"],
                               on_cpu["counted TensorArray loop"], rtol=1e-6)
    assert got["counted TensorArray loop"][2] == 12.0  # two calls of six iterations
    for g, e in zip(got["LSTM weights"], on_cpu["LSTM weights"]):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["moving average"], on_cpu["moving average"], rtol=1e-6)
    np.testing.assert_allclose(got["moving average variable"], on_cpu["moving average variable"],
                               rtol=1e-6)


def test_a_function_returning_a_folded_constant_returns_it_from_the_device_form(report,
                                                                                on_cpu):
    assert report["values"]["fetched constant"] == on_cpu["fetched constant"] == [
        [6.0, 8.0], [2.0, 2.0], [2.0]]


def test_a_function_with_a_host_only_op_runs_and_fails_as_on_the_cpu(report, on_cpu):
    """`Assert` has no GPU kernel: the device form does not run such a program (placement
    puts that node on the CPU), and its result and error are the CPU's."""
    got = report["values"]
    assert got["host op"] == on_cpu["host op"] == [6.0, 9.0]
    assert got["host op error"] == on_cpu["host op error"] == "InvalidArgumentError"


def test_an_error_in_the_device_form_is_the_ops_error(report, on_cpu):
    assert report["values"]["reshape error"] == on_cpu["reshape error"]
    notes = report["values"]["reshape error notes"]
    assert notes == on_cpu["reshape error notes"] and notes[0].startswith(
        "Detected at node 'Reshape' (Reshape)")  # the failing node, found in the device form
    assert "Reshape" in on_cpu["reshape error"] and "6 values" in on_cpu["reshape error"]


def test_a_traced_step_enters_the_stream_once_and_launches_less_than_cupy_by_hand(report):
    traced, by_hand = report["traced step"], report["hand-written CuPy step"]
    assert report["device form"] == ["GPU:0"]
    assert traced["stream entries"] == 1  # the whole program in one launch scope
    assert by_hand["launches"] == 39
    # Fusion, the scaled-update and grouped-update passes, the four-launch softmax
    # cross-entropy and the kernel layer: 23 launches where the hand-written step issues 39.
    assert traced["launches"] <= 23, traced["kinds"]
    assert traced["kinds"]["RawKernel eager_grouped_gradient_descent_float"] == 1  # six updates
    assert "ElementwiseKernel eager_gradient_descent" not in traced["kinds"]
    assert "ufunc subtract" not in traced["kinds"]  # no AssignSub left


def test_an_eager_step_launches_no_more_than_cupy_by_hand(report):
    eager_step = report["eager step"]
    assert eager_step["launches"] <= 26, eager_step["kinds"]
    assert eager_step["kinds"]["ReductionKernel eager_xent_loss"] == 1
    # SGD's six updates: one grouped launch.
    assert eager_step["kinds"]["RawKernel eager_grouped_gradient_descent_float"] == 1
    assert "ElementwiseKernel eager_gradient_descent" not in eager_step["kinds"]


def test_sgd_groups_each_dtypes_contiguous_updates_eight_variables_a_launch(report):
    kinds = report["many variables step"]["kinds"]
    assert kinds["RawKernel eager_grouped_gradient_descent_float"] == 2  # 10 of the 11 float32
    assert kinds["RawKernel eager_grouped_gradient_descent_double"] == 1
    # The transposed gradient and the float16 variable: the per-variable kernel.
    assert kinds["ElementwiseKernel eager_gradient_descent"] == 2


@pytest.mark.parametrize(("step", "kind"), [("many variables Adam step", "adam"),
                                            ("many variables Adam step, traced", "adam"),
                                            ("many variables momentum step", "momentum")])
def test_adam_and_momentum_group_too(report, step, kind):
    kinds = report[step]["kinds"]
    assert kinds[f"RawKernel eager_grouped_{kind}_float"] == 2
    assert kinds[f"RawKernel eager_grouped_{kind}_double"] == 1
    assert kinds[f"ElementwiseKernel eager_{kind}"] == 1  # the transposed gradient's variable


def test_an_op_enters_only_the_stream_where_the_process_has_one_gpu(report):
    assert report["x + y"]["launches"] == 1
    assert report["x + y"]["stream entries"] == 1 and report["x + y"]["device entries"] == 0
    assert report["traced step"]["device entries"] == 0


def test_with_two_gpus_an_op_makes_its_device_current_too():
    two = _worker("--two-gpus")
    for key in ("x + y", "x + y on GPU:1"):
        assert two[key]["launches"] == 1, key
        assert two[key]["stream entries"] == two[key]["device entries"] == 1, key


def test_gathers_and_sparse_losses_leave_their_checks_on_the_gpu(report):
    # A step with `tf.gather`, an embedding lookup, `gather_nd` and a sparse cross-entropy reads
    # nothing back from the device, eagerly or traced: its index and label checks wait there,
    # and the next read (here the loss's) settles them.
    for name in ("lookup step", "lookup step, traced"):
        step = report[name]
        assert step["host reads"] == 0, name
        assert step["pending checks"] >= 4, name
        assert step["pending after a read"] == 0, name


def test_a_sparse_update_of_a_variable_leaves_its_check_on_the_gpu(report):
    # An embedding's Adam update gates its write on its rows' check, on the device: the step
    # reads nothing (it read the check's flag once per step, a wait for the GPU, before), and
    # two checks wait (the lookup's and the update's).
    assert report["sparse Adam step"] == {"host reads": 0, "pending checks": 2}


def test_a_bad_row_leaves_a_variable_and_its_slots_as_they_were_on_the_gpu(report):
    # Scatters and sparse optimizer updates (a fused kernel for float32 Adam and momentum,
    # restored copies for float16 and the adaptive optimizers) write nothing when a row is out
    # of range: on the CPU they raise at once, on the GPU at the next read, with the CPU's
    # words, and in both cases leave the variable and its slots bit for bit as they were.
    # On the GPU the optimizer ran on past the op that failed, as a program runs on past a
    # CUDA kernel's failure until it synchronizes: its step counter counted the step. With the
    # counter set back, the writes before and after give the CPU's values.
    from eager.base import device_checks  # noqa: PLC0415

    with eager.device("CPU:0"):
        expected = gated_sparse_writes(eager, device_checks)
    got = report["gated sparse writes"]
    assert set(got) == set(expected) and len(got) == 11
    for name, entry in got.items():
        assert "pending" not in expected[name], name  # the CPU raised at the op
        assert expected[name]["raised"].startswith(("ResourceScatter", "ResourceSparseApply")) \
            or "is not in [0, 4)" in expected[name]["raised"], name
        assert entry["pending"] == 1, name
        assert entry["raised"] == expected[name]["raised"], name
        assert entry["unchanged"] and expected[name]["unchanged"], name
        if "steps" in entry:
            assert (entry["steps"], expected[name]["steps"]) == (2, 1), name
        for g, e in zip(entry["after"], expected[name]["after"]):
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7, err_msg=name)


def test_a_failed_check_on_the_gpu_is_the_cpus_error_at_the_next_read(report):
    expected = {}
    for name, make in bad_checks(eager):
        with eager.device("CPU:0"), pytest.raises(eager.errors.InvalidArgumentError) as raised:
            make()  # on the CPU: at once
        expected[name] = str(raised.value)
    got = report["failed checks"]
    assert set(got) == set(expected)
    for name, message in expected.items():
        assert got[name] == {"pending": 1, "at the next read": message, "pending after": 0,
                             "then": [2.0]}, name


@pytest.mark.parametrize("key", ["recurrence copies", "recurrence copies with a TensorArray"])
def test_a_traced_loop_and_its_gradient_copy_nothing_between_host_and_gpu(report, key):
    # A traced recurrence of 5, 10 and 20 iterations and its gradient: [host reads, copies to
    # the device] per call. The counter is a small int32 value of the GPU, kept in host memory
    # (as in TensorFlow), so the loop's condition and a TensorArray's write index read nothing;
    # the loop's results and accumulated values stay on the GPU (`While` outputs tensors of
    # the devices that made them, and a partition's `_Recv` hands them on there), and the
    # gradient loop reads each accumulated value where it lives. Before that, each call read
    # 5 values (4 with the TensorArray) back after the loops and copied 7, 12 and 22 (17, 32
    # and 62) to the device again: one per accumulator per gradient iteration.
    assert report[key] == [[0, 0]] * 3, report[key]


def test_a_loop_replayed_for_an_outer_tape_accumulates_on_the_gpu(report):
    # An eager tape over a traced gradient penalty (a recurrence differentiated inside the
    # function) replays the function's ops, the accumulating loop among them: its values are
    # pushed onto lists on their own device (a counter held in host memory onto the host's).
    # Before, they went onto the CPU's lists: 5 and 10 reads and copies for 5 and 10
    # iterations.
    assert report["gradient penalty copies"] == [[0, 0], [0, 0]], \
        report["gradient penalty copies"]


def test_a_loop_with_a_stateful_op_keeps_its_tensor_array_on_the_gpu(report):
    # 5 and 10 iterations of a body that writes a TensorArray and assigns a variable: the
    # body's results wait for the assignment through Identities, which run where their
    # inputs live. (While those of lists and handles were placed on the CPU, the list went to
    # the host at every iteration and back whole to the GPU for the next write: 5 and 10
    # reads, 15 and 55 copies to the device.)
    assert report["counted TensorArray loop copies"] == [[0, 0], [0, 0]], \
        report["counted TensorArray loop copies"]


def test_a_loops_constant_condition_and_a_dataset_loops_condition_read_nothing(report):
    # [a while_loop with a constant condition and maximum_iterations, a loop over a dataset's
    # batches] for 4 and 8 iterations. A small bool made on the host (a constant condition)
    # stays in host memory as a small int32 value does, and so does the host ops' logic on
    # it: the loops' conditions are read without waiting for the GPU. (While such a bool was
    # copied to device memory, each iteration read it back: 4 and 8 reads each.)
    assert report["condition loop reads"] == [0, 0, 0, 0], report["condition loop reads"]


def test_keras_predict_reads_its_outputs_once(report):
    # 4 and 8 batches: the batches' outputs are joined on the device and read once, as Keras 3
    # does (a read per batch made the host wait for each).
    assert report["predict reads"] == [1, 1], report["predict reads"]


def test_a_keras_fit_step_copies_only_its_batch_to_the_gpu(report):
    # Epochs of 4 and 8 steps of a Conv2D + BatchNormalization model: each step copies its
    # images and labels, and nothing else (a traced step's folded constants, such as the
    # loss's "divisor is not zero" flag, are copied to the device once, not at every step:
    # `host_memory.DeviceCopies`).
    four, eight = report["fit writes"]
    assert eight - four == 2 * 4, report["fit writes"]


def test_a_keras_lstm_fit_copies_as_often_whatever_the_sequence_length(report):
    # An epoch of two batches of 4- and 8-step sequences: [host reads, copies to the device].
    # What is left is per epoch, not per time step: the epoch's logs read at its end (a loss
    # and the check of the labels), the batches and the metrics' resets copied in. (Before the
    # loops' results stayed on the GPU: 17 reads and 46 / 78 copies; before the time counter
    # lived in host memory, about 20 reads per time step.)
    four, eight = report["LSTM fit copies"]
    assert four == eight, report["LSTM fit copies"]
    assert four[0] <= 2, report["LSTM fit copies"]


def test_small_int32_values_of_the_gpu_live_in_host_memory(report, on_cpu):
    # As TensorFlow keeps a GPU's int32 tensors in host memory: a counter, a shape and a
    # comparison of them are host arrays (reading them never waits for the GPU), yet the
    # tensors are the GPU's; larger int32 arrays, other dtypes and a variable's storage are in
    # device memory. Kernels that read them on the device get a copy: the same numbers as the
    # CPU's.
    host = report["host int32"]
    assert host["counter loop reads"] == 0 and host["counter device"].endswith("GPU:0")
    assert host["kinds"] == {"int32 scalar": "ndarray", "int32 shape": "ndarray",
                             "comparison": "ndarray", "nine int32": "RecordedArray",
                             "float scalar": "RecordedArray", "int64 scalar": "RecordedArray",
                             "float comparison": "RecordedArray", "bool flag": "ndarray"}
    assert host["int32 variable storage"] == "RecordedArray"
    assert report["values"]["host int32"] == on_cpu["host int32"]
    assert on_cpu["host int32"]["while loop"] == [7, [1.5 ** 7, -2 * 1.5 ** 7]]


def test_python_numbers_an_op_reads_on_the_host_never_go_through_the_gpu(report, on_cpu):
    # `tf.range(0.0, 1.0, 0.25)`, an int64 range, `tf.linspace` and an int64 draw's bounds:
    # Python numbers their ops need on the host. Made into GPU tensors, each was read back from
    # the device (a wait for the GPU: 3, 3, 3 and 2 reads per call); now they are converted on
    # the host (range) or made on the CPU (the draw's bounds, which its kernel reads on the
    # host, as TensorFlow's GPU kernel takes them in host memory).
    assert report["number argument reads"] == {name: 0 for name in on_cpu["number arguments"]}
    assert report["values"]["number arguments"] == on_cpu["number arguments"]
    assert on_cpu["number arguments"]["integer draw"] == [0, 1, 2, 3]


def test_a_traced_function_computes_its_run_time_shapes_without_reading_the_gpu(report, on_cpu):
    # `tf.shape` of a GPU tensor is in host memory, and so are the sizes computed from it;
    # a kernel that reads a shape (Reshape, Fill, Range, BroadcastTo, Tile) takes it there.
    # The compiled device form routes those nodes through the device's `run`. (Before: one
    # read of the device per such op, each a wait for the GPU.)
    assert report["dynamic shape reads"] == {name: 0 for name in on_cpu["dynamic shapes"]}
    assert report["values"]["dynamic shapes"] == on_cpu["dynamic shapes"]
