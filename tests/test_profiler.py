"""eager.profiler: the Chrome trace it writes, its lanes, what it records and when, its errors."""

import gzip
import importlib.util
import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest

import eager as tf
from eager.core import context
from eager.base import profile_events
from eager import profiler
from eager.profiler.tracing import split_lane

HOST = f"host dispatch: {threading.current_thread().name}"


def _load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def _lanes(document):
    """{(pid, tid): "process/thread" names} from the metadata events, and the slices per lane
    as {lane name: [(op name, ts, dur), ...]} in time order."""
    processes, threads = {}, {}
    for e in document["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name":
            processes[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            threads[e["pid"], e["tid"]] = e["args"]["name"]
    slices = {}
    for e in document["traceEvents"]:
        if e["ph"] == "X":
            lane = (processes[e["pid"]], threads[e["pid"], e["tid"]])
            slices.setdefault(lane, []).append((e["name"], e["ts"], e["dur"]))
    for lane in slices.values():
        lane.sort(key=lambda s: s[1])
    return processes, threads, slices


def _host_names_in_file(path):
    """The op names on this thread's host-dispatch lane of the trace file, in time order."""
    _, _, slices = _lanes(_load(path))
    return [name for name, _, _ in slices.get(("host dispatch", HOST.split(": ", 1)[1]), [])]


def _names(trace, lane):
    return [s.name for s in sorted(trace.slices, key=lambda s: s.start_ns) if s.lane == lane]


def _run_four_ops(x, y):
    """MatMul, AddV2, Exp, Sum: tensor-tensor ops only, so no conversion op sneaks in."""
    return tf.reduce_sum(tf.exp(tf.matmul(x, y) + x))


FOUR_OPS = ["MatMul", "AddV2", "Exp", "Sum"]


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    return (tf.constant(rng.standard_normal((3, 3)).astype(np.float32)),
            tf.constant(rng.standard_normal((3, 3)).astype(np.float32)))


def test_trace_file_is_chrome_json_with_named_lanes_and_every_op_as_a_slice(tmp_path, xy):
    path = tmp_path / "sub" / "trace.json"
    with profiler.trace(path) as t:
        assert t.path is None  # written on exit
        _run_four_ops(*xy)
    assert t.path == str(path) and path.is_file()
    document = _load(path)
    assert document["displayTimeUnit"] == "ms"
    assert document["traceEvents"] == t.events
    processes, threads, slices = _lanes(document)
    assert "host dispatch" in processes.values()
    assert threading.current_thread().name in threads.values()
    host = slices["host dispatch", threading.current_thread().name]
    assert [name for name, _, _ in host] == FOUR_OPS
    assert _names(t, HOST) == FOUR_OPS
    for _name, ts, dur in host:
        assert isinstance(ts, float) and isinstance(dur, float)
        assert ts >= 0.0 and dur >= 0.0
    # Consecutive synchronous ops on one thread do not overlap.
    for (_, ts0, dur0), (_, ts1, _) in zip(host, host[1:]):
        assert ts0 + dur0 <= ts1


def test_async_ops_also_run_on_an_executor_lane_after_their_dispatch(tmp_path, xy):
    with profiler.trace(tmp_path / "t.json") as t:
        with tf.experimental.async_scope():
            result = _run_four_ops(*xy)
    assert np.isfinite(result.numpy())
    executor_lanes = [lane for lane in t.slices_per_lane() if lane.startswith("executor: ")]
    device = xy[0]._meta.device
    if not device.inline:
        # On a GPU, ops on computed operands issued with nothing queued are launched from the
        # issuing thread (no executor in between): their kernels run on the stream's lane.
        assert executor_lanes == []
        ran = [s.name for s in sorted(t.slices, key=lambda s: s.start_ns)
               if s.lane == f"{device.name}/compute" and s.name in FOUR_OPS]
        assert ran == FOUR_OPS
        return
    assert len(executor_lanes) == 1
    assert executor_lanes[0].startswith("executor: eager-executor")
    host = sorted((s for s in t.slices if s.lane == HOST), key=lambda s: s.start_ns)
    ran = sorted((s for s in t.slices if s.lane == executor_lanes[0]), key=lambda s: s.start_ns)
    assert [s.name for s in host] == FOUR_OPS
    assert [s.name for s in ran] == FOUR_OPS  # in program order
    for issued, executed in zip(host, ran):
        assert executed.start_ns >= issued.start_ns
    for s in t.slices:
        assert s.start_ns >= 0 and s.end_ns >= s.start_ns
    processes, threads, slices = _lanes(_load(t.path))
    assert {"host dispatch", "executor"} <= set(processes.values())  # (+ GPU streams if any)
    assert [name for name, _, _ in slices["executor", executor_lanes[0][len("executor: "):]]] \
        == FOUR_OPS


def test_ops_of_two_threads_land_on_two_host_lanes(tmp_path, xy):
    x, y = xy
    errors = []

    def work(op):
        try:
            for _ in range(3):
                op(x, y)
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    with profiler.trace(tmp_path / "t.json") as t:
        threads = [threading.Thread(target=work, args=(tf.matmul,), name="profiled-a"),
                   threading.Thread(target=work, args=(tf.subtract,), name="profiled-b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    assert not errors
    assert _names(t, "host dispatch: profiled-a") == ["MatMul"] * 3
    assert _names(t, "host dispatch: profiled-b") == ["Sub"] * 3
    host_pid = next(e["pid"] for e in t.events
                    if e["name"] == "process_name" and e["args"]["name"] == "host dispatch")
    lane_ids = {e["name"]: (e["pid"], e["tid"]) for e in t.events
                if e["ph"] == "X" and e["pid"] == host_pid}
    assert lane_ids["MatMul"][0] == lane_ids["Sub"][0]  # one "host dispatch" process
    assert lane_ids["MatMul"] != lane_ids["Sub"]  # two threads in it


def test_nothing_is_recorded_outside_the_trace(tmp_path, xy):
    # Device streams may run an op after dispatch returns (GPUs, simulated or real): finish that
    # work first, since a stream slice is recorded when the stream runs it.
    x, _ = xy
    tf.sin(x)
    tf.experimental.sync_devices()
    with profiler.trace(tmp_path / "first.json") as first:
        tf.cos(x)
    assert not profile_events.RECORDER.active
    tf.tanh(x)
    tf.experimental.sync_devices()
    profile_events.add_slice("GPU:0/compute", "Late", 0, 1)  # a hook firing after the trace
    with profiler.trace(tmp_path / "second.json") as second:
        tf.sqrt(tf.abs(x))
    assert _names(first, HOST) == ["Cos"]
    assert _names(second, HOST) == ["Abs", "Sqrt"]
    for trace in (first, second):
        names = {e["name"] for e in _load(trace.path)["traceEvents"] if e["ph"] == "X"}
        assert names.isdisjoint({"Sin", "Tanh", "Late"})
    assert "Cos" not in {s.name for s in second.slices}


def test_profiling_forces_the_slow_path_and_gives_it_back(tmp_path, xy, no_inference_check):
    x, y = xy
    reasons = context.FAST_PATH.reasons
    fast_before = context.FAST_PATH.kernel_only
    with profiler.trace(tmp_path / "t.json") as t:
        assert context.FAST_PATH.reasons == reasons + 1
        assert not context.FAST_PATH.kernel_only
        _ = x + y  # an operator: would skip dispatch on the fast path
    assert context.FAST_PATH.reasons == reasons
    assert context.FAST_PATH.kernel_only == fast_before
    assert _names(t, HOST) == ["AddV2"]


def test_variable_reads_and_optimizer_updates_are_recorded(tmp_path, no_inference_check):
    """Their fast paths skip dispatch too; the trace turns them off."""
    v = tf.Variable([1.0, 2.0])
    optimizer = tf.optimizers.SGD(learning_rate=0.1)
    grad = tf.constant([1.0, 1.0])
    with profiler.trace(tmp_path / "t.json") as t:
        v.read_value()
        optimizer.apply_gradients([(grad, v)])
    names = _names(t, HOST)
    assert names[0] == "ReadVariableOp"
    assert "ResourceApplyGradientDescent" in names  # SGD's fused update
    np.testing.assert_allclose(v.numpy(), [0.9, 1.9])


def test_the_fast_path_comes_back_when_the_body_raises(tmp_path, xy):
    reasons = context.FAST_PATH.reasons
    wrong_shape = tf.ones([2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError):
        with profiler.trace(tmp_path / "t.json") as t:
            tf.matmul(xy[0], wrong_shape)
    assert context.FAST_PATH.reasons == reasons
    assert not profile_events.RECORDER.active
    assert os.path.isfile(t.path)
    assert _names(t, HOST) == ["MatMul"]  # the failed op is in the trace too


def test_a_pending_async_error_still_writes_the_trace_then_raises(tmp_path):
    x = tf.constant([1.0, 2.0, 3.0])
    reasons = context.FAST_PATH.reasons
    try:
        with pytest.raises(tf.errors.InvalidArgumentError, match="GatherV2"):
            with profiler.trace(tmp_path / "t.json") as t:
                tf.config.experimental.set_synchronous_execution(False)
                tf.gather(x, [7])  # out of range: only the kernel can tell; fails on the worker
    finally:
        tf.experimental.async_clear_error()
        tf.config.experimental.set_synchronous_execution(True)
    assert context.FAST_PATH.reasons == reasons
    assert not profile_events.RECORDER.active
    assert os.path.isfile(t.path)
    lanes = {s.lane for s in t.slices if s.name == "GatherV2"}
    # Run by the executor's worker; on a GPU, launched from the issuing thread onto a stream.
    assert HOST in lanes and any(lane.startswith("executor: ") or lane.endswith("/compute")
                                 for lane in lanes)


def test_start_and_stop_raise_as_tensorflow_does(tmp_path, xy):
    with pytest.raises(tf.errors.UnavailableError):
        profiler.stop()
    profiler.start(tmp_path / "a.json")
    try:
        with pytest.raises(tf.errors.AlreadyExistsError):
            profiler.start(tmp_path / "b.json")
        with pytest.raises(tf.errors.AlreadyExistsError):
            with profiler.trace(tmp_path / "c.json"):
                pass
        tf.matmul(*xy)
    finally:
        finished = profiler.stop()
    assert finished.path == str(tmp_path / "a.json")
    assert _names(finished, HOST) == ["MatMul"]
    assert not (tmp_path / "b.json").exists() and not (tmp_path / "c.json").exists()
    with pytest.raises(tf.errors.UnavailableError):
        profiler.stop()


def test_a_nested_trace_is_refused_without_ending_the_outer_one(tmp_path, xy):
    reasons = context.FAST_PATH.reasons
    with profiler.trace(tmp_path / "outer.json") as outer:
        with pytest.raises(tf.errors.AlreadyExistsError):
            with profiler.trace(tmp_path / "inner.json"):
                pass
        assert profile_events.RECORDER.active
        tf.matmul(*xy)
    assert context.FAST_PATH.reasons == reasons
    assert _names(outer, HOST) == ["MatMul"]


def test_a_directory_path_gets_a_fresh_file_per_trace(tmp_path, xy):
    directory = tmp_path / "new" / "traces"
    paths = []
    for _ in range(2):
        with profiler.trace(directory) as t:
            tf.matmul(*xy)
        paths.append(Path(t.path))
    assert paths[0] != paths[1]
    for path in paths:
        assert path.parent == directory
        assert path.name.startswith(f"eager_trace_{os.getpid()}_") and path.suffix == ".json"
        assert _host_names_in_file(path) == ["MatMul"]


def test_a_json_gz_path_is_compressed(tmp_path, xy):
    with profiler.trace(str(tmp_path / "t.json.gz")) as t:
        tf.matmul(*xy)
    assert _host_names_in_file(t.path) == ["MatMul"]


def test_device_stream_lanes_become_a_process_per_device(tmp_path):
    """Backends record stream work on lanes like "GPU:0/compute" (simulated here)."""
    assert split_lane("GPU:0/compute") == ("GPU:0", "compute")
    assert split_lane("host dispatch: worker/1") == ("host dispatch", "worker/1")
    assert split_lane("executor: eager-executor-2") == ("executor", "eager-executor-2")
    assert split_lane("alone") == ("alone", "alone")
    with profiler.trace(tmp_path / "t.json") as t:
        for lane in ("GPU:1/copy", "GPU:0/compute", "GPU:0/copy"):
            start = profile_events.now_ns()
            profile_events.add_slice(lane, "MatMul", start, profile_events.now_ns(),
                                     {"bytes": 64})
        tf.matmul(tf.ones([2, 2]), tf.ones([2, 2]))
    processes, threads, slices = _lanes(_load(t.path))
    order = {e["args"]["name"]: next(m["args"]["sort_index"] for m in t.events
                                     if m["name"] == "process_sort_index"
                                     and m["pid"] == e["pid"])
             for e in t.events if e["name"] == "process_name"}
    assert order["host dispatch"] < order["GPU:0"] < order["GPU:1"]
    assert {("GPU:0", "compute"), ("GPU:0", "copy"), ("GPU:1", "copy")} <= set(slices)
    recorded = [e for e in t.events if e["ph"] == "X" and "args" in e]
    assert len(recorded) == 3 and all(e["args"] == {"bytes": 64} for e in recorded)


def test_the_example_writes_a_trace_with_host_and_executor_lanes(tmp_path, capsys):
    file = Path(__file__).resolve().parents[1] / "examples" / "async_and_profiler.py"
    spec = importlib.util.spec_from_file_location("async_and_profiler", file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    trace = module.main(str(tmp_path), steps=2)
    out = capsys.readouterr().out
    assert f"trace written to {trace.path}" in out and "ui.perfetto.dev" in out
    lanes = trace.slices_per_lane()
    assert lanes[HOST] > 0
    # (on a GPU, async ops on computed operands are launched onto its stream without a worker)
    assert any(lane.startswith("executor: ") or lane.endswith("/compute") for lane in lanes)
    names = {e["name"] for e in _load(trace.path)["traceEvents"] if e["ph"] == "X"}
    assert {"MatMul", "Exp", "Sum", "Mean", "Square"} <= names
