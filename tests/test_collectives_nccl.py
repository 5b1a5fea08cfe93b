"""The NCCL collective engine's logic, without CUDA: against a fake of `cupy.cuda.nccl` that
really reduces host buffers through the addresses the engine passes (tests/fake_nccl.py).

Covered: the dtype and reduction mapping, the grouped call of one process driving several
GPUs, the stream each call goes on, the unique id's exchange through the MPI engine (threads
standing in for processes here; real MPI processes in the last test), the selection and
fallback rules, and a MirroredStrategy step through the engine on simulated GPUs ending at the
in-process engine's weights. Real NCCL on real GPUs: tests/test_cuda_nccl.py.
"""

import json
import os
import pathlib
import subprocess
import sys
import textwrap
import threading
from types import SimpleNamespace

import numpy as np
import pytest

import fake_nccl
from distribute_scripts import run_scenario
from mpi_jobs import mpi_skip_reason, rank_results, run_job
from eager import errors
from eager.distribute import cross_device_ops
from eager.distribute.collective_util import CommunicationImplementation as Impl
from eager.distribute.collectives import nccl as engine_module
from eager.distribute.collectives.nccl import NCCLCollectives, nccl_layout
from eager.ops import collective_ops

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def fake(monkeypatch):
    """The fake NCCL installed as CuPy's (devices with a `device_id` count as CUDA GPUs)."""
    nccl = fake_nccl.FakeNccl()
    cupy = fake_nccl.fake_cupy(nccl)
    monkeypatch.setattr(engine_module, "load_cupy", lambda: cupy)
    return nccl


def _gpu(i, stream_ptr=None):
    """A stand-in for an eager CUDA device: its id, array module and compute stream."""
    stream = fake_nccl.FakeStream(1000 + i if stream_ptr is None else stream_ptr)
    return SimpleNamespace(name=f"GPU:{i}", device_id=i, xp=np, defers_kernels=False,
                           compute_stream=SimpleNamespace(cupy_stream=stream))


def test_dtype_and_reduction_mapping():
    x = np.zeros((2, 3), np.float32)
    assert nccl_layout(x, "sum") == (6, "NCCL_FLOAT32")
    assert nccl_layout(x.astype(np.float16), "max") == (6, "NCCL_FLOAT16")
    assert nccl_layout(x.astype(np.int64), "min") == (6, "NCCL_INT64")
    assert nccl_layout(x.astype(np.uint8), "sum") == (6, "NCCL_UINT8")
    assert nccl_layout(x.astype(bool), "max") == (6, "NCCL_UINT8")  # or, as a byte max
    assert nccl_layout(x.astype(np.complex64), "sum") == (12, "NCCL_FLOAT32")
    assert nccl_layout(x.astype(np.complex128), "mean") == (12, "NCCL_FLOAT64")
    with pytest.raises(errors.InvalidArgumentError, match=r"'sum' is not defined for bool "
                                                          r"tensors \(bool\[2, 3\]\)"):
        nccl_layout(x.astype(bool), "sum")
    with pytest.raises(errors.InvalidArgumentError, match=r"NCCL has no type for int16\[2, 3\]"):
        nccl_layout(x.astype(np.int16), "sum")
    with pytest.raises(errors.InvalidArgumentError, match="'max' is not defined for complex"):
        nccl_layout(x.astype(np.complex64), "max")
    assert engine_module._NCCL_OPS == {"sum": "NCCL_SUM", "mean": "NCCL_SUM",
                                       "max": "NCCL_MAX", "min": "NCCL_MIN"}


def test_local_gpus_reduce_in_one_grouped_call_each_on_its_devices_stream(fake):
    devices = [_gpu(0), _gpu(1), _gpu(2)]
    engine = NCCLCollectives.for_local_devices(devices)
    assert (engine.rank, engine.size) == (0, 1)
    parts = [np.arange(6, dtype=np.float32).reshape(2, 3) * (r + 1) for r in range(3)]
    outs = [engine.all_reduce_replicas(7, r, parts[r], "sum") for r in range(3)]
    for out in outs:
        np.testing.assert_array_equal(out, parts[0] * 6)
    assert fake.group_calls == ["start", "end"]
    assert [(c[0], c[1], c[2], c[3], c[4], c[5], c[6]) for c in fake.calls] == [
        ("allReduce", r, 6, fake.NCCL_FLOAT32, fake.NCCL_SUM, 1000 + r, True)
        for r in range(3)]
    for part, out in zip(parts, outs):
        assert out is not part  # the input is left as it was
    # The same key again (a traced step replays its keys): a new round.
    means = [engine.all_reduce_replicas(7, r, np.full(4, r, np.int64), "mean")
             for r in range(3)]
    for m in means:
        np.testing.assert_array_equal(m, [1, 1, 1, 1])
    maxes = [engine.all_reduce_replicas(8, r, np.array([r, -r], np.float64), "max")
             for r in range(3)]
    np.testing.assert_array_equal(maxes[1], [2.0, 0.0])
    with pytest.raises(errors.InvalidArgumentError, match="NCCL has no type for int16"):
        engine.all_reduce_replicas(9, 0, np.zeros(2, np.int16))
    engine.close()
    with pytest.raises(errors.FailedPreconditionError, match="was closed"):
        engine.all_reduce_replicas(10, 0, np.zeros(2, np.float32))


def test_local_engine_refuses_what_nccl_cannot_use(fake):
    cpu = SimpleNamespace(name="CPU:0")
    with pytest.raises(errors.UnavailableError, match="CPU:0 is not a CUDA GPU"):
        NCCLCollectives.for_local_devices([cpu, _gpu(0)])
    shared = [_gpu(0), SimpleNamespace(**{**vars(_gpu(0)), "name": "GPU:1"})]
    with pytest.raises(errors.UnavailableError, match=r"share a CUDA device \(CUDA devices "
                                                      r"\[0, 0\]\)"):
        NCCLCollectives.for_local_devices(shared)


def test_without_cupy_nccl_is_unavailable_with_the_reason(monkeypatch):
    def missing():
        raise ImportError("No module named 'cupy'")
    monkeypatch.setattr(engine_module, "load_cupy", missing)
    reason = engine_module.unavailable_reason([_gpu(0), _gpu(1)])
    assert reason == ("CuPy's NCCL bindings (cupy.cuda.nccl) cannot be imported (No module "
                      "named 'cupy')")
    assert engine_module.unavailable_reason([SimpleNamespace(name="CPU:0")]).startswith(
        "CPU:0 is not a CUDA GPU")


def _run_ranks(size, work):
    """`work(rank)` in one thread per rank; their results, or the first error raised."""
    results, failures = [None] * size, []

    def run(rank):
        try:
            results[rank] = work(rank)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            failures.append(e)
    threads = [threading.Thread(target=run, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a rank hangs"
    if failures:
        raise failures[0]
    return results


def test_one_gpu_per_process_unique_id_through_mpi_and_collectives(fake):
    group = fake_nccl.FakeMPIGroup(2)
    dev = fake_nccl.device_array

    def work(rank):
        engine = NCCLCollectives.over_mpi(group.engine(rank), _gpu(0))
        out = {"rank": (engine.rank, engine.size)}
        f = dev([1.5, -2.0, 3.0], np.float32) * (rank + 1)
        with fake_nccl.FakeStream(50 + rank):  # the current stream: where the calls go
            out["sum"] = engine.all_reduce([f.copy(), dev([rank, 1], np.int32)], "sum")
            out["mean"] = engine.all_reduce([f.copy()], "mean")[0]
        out["max"] = engine.all_reduce([dev([rank, -rank], np.float64)], "max")[0]
        out["bool_min"] = engine.all_reduce([dev([True, rank == 0])], "min")[0]
        out["gather"] = engine.all_gather(dev(np.full((2, 1), rank), np.int64), axis=1)
        out["bcast"] = engine.broadcast(dev([rank, rank], np.float32), root=1)
        out["host"] = engine.all_reduce([np.array([rank + 1.0])])[0]  # numpy: over MPI
        engine.barrier()
        # CollectiveReduceV2's kernel hands a device engine the device array itself.
        key = collective_ops.register_group(engine)
        try:
            out["op"] = collective_ops._kernel(
                fake_nccl.fake_cupy(fake), dev([2.0, 4.0], np.float32) * (rank + 1),
                group_size=2, group_key=key, instance_key=1, merge_op="Add", final_op="Div")
        finally:
            collective_ops.unregister_group(key)
        if rank == 0:
            with pytest.raises(errors.InvalidArgumentError, match="workers' tensors differ"):
                engine.all_gather(dev(np.zeros(3), np.float32))
        else:
            with pytest.raises(errors.InvalidArgumentError, match="workers' tensors differ"):
                engine.all_gather(dev(np.zeros(2), np.float32))
        engine.close()
        return out

    a, b = _run_ranks(2, work)
    assert len(fake.unique_ids) == 1  # rank 0 made the id; rank 1 got it through MPI
    assert [(r, str(dt), shape) for r, dt, shape in group.broadcasts[:2]] == [
        (0, "uint8", (128,)), (1, "uint8", (128,))]
    assert a["rank"] == (0, 2) and b["rank"] == (1, 2)
    for out in (a, b):
        np.testing.assert_allclose(out["sum"][0], [4.5, -6.0, 9.0])
        np.testing.assert_array_equal(out["sum"][1], [1, 2])
        np.testing.assert_allclose(out["mean"], [2.25, -3.0, 4.5])
        np.testing.assert_array_equal(out["max"], [1.0, 0.0])
        np.testing.assert_array_equal(out["bool_min"], [True, False])
        assert out["bool_min"].dtype == np.bool_
        np.testing.assert_array_equal(out["gather"], [[0, 1], [0, 1]])
        np.testing.assert_array_equal(out["bcast"], [1.0, 1.0])
        np.testing.assert_array_equal(out["host"], [3.0])
        assert not isinstance(out["host"], fake_nccl.DeviceArray)
        np.testing.assert_allclose(out["op"], [3.0, 6.0])
    reduces = [c for c in fake.calls if c[0] == "allReduce"]
    grouped = sorted((c[5], c[1], c[2], c[3]) for c in reduces if c[6])
    assert grouped == [(50, 0, 2, fake.NCCL_INT32), (50, 0, 3, fake.NCCL_FLOAT32),
                       (51, 1, 2, fake.NCCL_INT32), (51, 1, 3, fake.NCCL_FLOAT32)]
    assert fake.group_calls.count("start") == 2  # one group per rank for the 2-array call
    mean_calls = [c for c in reduces if not c[6] and c[2:4] == (3, fake.NCCL_FLOAT32)]
    assert sorted(c[5] for c in mean_calls) == [50, 51]  # one array: no group, same stream


def _in_fresh_process(*parts, simulated_gpus=2, timeout=300):
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'tests'}")
    env["EAGER_SIMULATED_GPUS"] = str(simulated_gpus)
    body = "".join(textwrap.dedent(p) for p in parts)
    proc = subprocess.run([sys.executable, "-c", body], env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


_TESTS_ON_PATH = f"import sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n"  # fake_nccl
_INSTALL_FAKE = """
import fake_nccl
from eager.distribute.collectives import nccl as engine_module
FAKE = fake_nccl.FakeNccl()
engine_module.load_cupy = lambda: fake_nccl.fake_cupy(FAKE)
# The simulated GPUs stand in for CUDA devices 0 and 1; a stream's handle is its identity.
engine_module.cuda_device_id = lambda d: d.index if d.device_type == "GPU" else None
engine_module.device_stream = lambda d: fake_nccl.FakeStream(id(d.compute_stream))
"""


def test_selection_and_fallback_rules(fake):
    """MirroredStrategy's default and explicit choice, MultiWorkerMirroredStrategy's by
    `implementation` (here on stand-in devices; on simulated GPUs in the next test)."""
    mpi = fake_nccl.FakeMPIGroup(1).engine(0)
    gpu = _gpu(0)
    resolve = cross_device_ops._eager_devices
    try:
        cross_device_ops._eager_devices = lambda names: [
            gpu if n == "GPU:0" else _gpu(1) if n == "GPU:1" else SimpleNamespace(name=n)
            for n in names]
        assert cross_device_ops.select_process_engine(mpi, Impl.RING, "GPU:0") is mpi
        chosen = cross_device_ops.select_process_engine(mpi, Impl.AUTO, "GPU:0")
        assert isinstance(chosen, NCCLCollectives) and chosen.devices == [gpu]
        assert isinstance(cross_device_ops.select_process_engine(mpi, Impl.NCCL, "GPU:0"),
                          NCCLCollectives)
        assert cross_device_ops.select_process_engine(mpi, Impl.AUTO, "CPU:0") is mpi
        with pytest.raises(errors.UnavailableError,
                           match=r"CommunicationImplementation.NCCL was requested but NCCL "
                                 r"cannot run here: CPU:0 is not a CUDA GPU"):
            cross_device_ops.select_process_engine(mpi, Impl.NCCL, "CPU:0")
        ops, why = cross_device_ops.select_cross_device_ops(["GPU:0", "GPU:1"])
        assert isinstance(ops, cross_device_ops.NcclAllReduce), why
        ops, why = cross_device_ops.select_cross_device_ops(["CPU:0", "CPU:1"])
        assert isinstance(ops, cross_device_ops.ReductionToOneDevice)
        assert why == "not using NCCL: CPU:0 is not a CUDA GPU (NCCL reduces between CUDA " \
                      "devices only)"
        assert cross_device_ops.replica_all_reduce(None, ["CPU:0", "CPU:1"]) is None
        assert cross_device_ops.replica_all_reduce(
            cross_device_ops.HierarchicalCopyAllReduce(), ["GPU:0", "GPU:1"]) is None
        reducer = cross_device_ops.replica_all_reduce(None, ["GPU:0", "GPU:1"])
        assert isinstance(reducer.engine, NCCLCollectives)
        with pytest.raises(errors.UnavailableError, match="CPU:0 is not a CUDA GPU"):
            cross_device_ops.replica_all_reduce(cross_device_ops.NcclAllReduce(),
                                                ["CPU:0", "CPU:1"])
    finally:
        cross_device_ops._eager_devices = resolve


def test_mirrored_strategy_picks_and_refuses_engines_on_simulated_gpus():
    out = _in_fresh_process("""
        import eager as tf
        from eager import errors
        # Without cupy: the default falls back, an explicit NcclAllReduce is a clear error.
        s = tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
        assert s.extended._replica_all_reduce is None
        try:
            tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"],
                                           cross_device_ops=tf.distribute.NcclAllReduce())
        except errors.UnavailableError as e:
            print("refused:", e.message)
        """, _INSTALL_FAKE, """
        s = tf.distribute.MirroredStrategy()
        print("default:", type(s.extended._replica_all_reduce.engine).__name__)
        s = tf.distribute.MirroredStrategy(
            cross_device_ops=tf.distribute.ReductionToOneDevice())
        print("asked in-process:", s.extended._replica_all_reduce)
        """)
    lines = out.strip().splitlines()
    assert lines[0] == ("refused: NCCL cannot reduce across these devices: GPU:0 is not a CUDA "
                        "GPU (NCCL reduces between CUDA devices only).")
    assert lines[1:] == ["default: NCCLCollectives", "asked in-process: None"]


def test_mirrored_step_through_nccl_ends_at_the_in_process_weights():
    # `distribute_scripts.SETUP`'s data and training loop, on two simulated GPUs (`NAMES`).
    out = run_scenario("""
        import json
        from eager.devices import registry

        for opt in (tf.keras.optimizers.SGD, tf.keras.optimizers.Adam):
            for traced in (False, True):
                nccl = tf.distribute.MirroredStrategy(
                    NAMES, cross_device_ops=tf.distribute.NcclAllReduce())
                before = len(FAKE.calls)
                w2, b2, l2, _ = train(nccl, opt, traced)
                assert len(FAKE.calls) > before
                w1, b1, l1, _ = train(tf.distribute.MirroredStrategy(
                    NAMES, cross_device_ops=tf.distribute.ReductionToOneDevice()), opt, traced)
                w0, b0, l0, _ = train(tf.distribute.OneDeviceStrategy(NAMES[0]), opt, traced)
                for a, c in zip(w2.values, b2.values):
                    np.testing.assert_allclose(a.numpy(), w1.values[0].numpy(), rtol=1e-6)
                    np.testing.assert_allclose(c.numpy(), b1.values[0].numpy(), rtol=1e-6)
                    np.testing.assert_allclose(a.numpy(), w0.numpy(), rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(l2.numpy(), l1.numpy(), rtol=1e-6)
                assert not np.allclose(w0.numpy(), 1.0)
        streams = {id(registry.lookup(f"GPU:{i}").compute_stream): i for i in range(2)}
        ranks_on = sorted({(c[1], streams[c[5]]) for c in FAKE.calls})
        print(json.dumps({"ranks_on_streams": ranks_on,
                          "all_grouped": all(c[6] for c in FAKE.calls),
                          "kinds": sorted({c[0] for c in FAKE.calls}),
                          "groups": FAKE.group_calls.count("start")}))
        """, devices="gpu", prelude=_TESTS_ON_PATH + _INSTALL_FAKE)
    result = json.loads(out.strip().splitlines()[-1])
    assert result["ranks_on_streams"] == [[0, 0], [1, 1]]  # replica r on GPU:r's stream
    assert result["all_grouped"] and result["kinds"] == ["allReduce"]
    assert result["groups"] > 0


def test_traced_step_never_orders_one_replicas_nccl_op_after_anothers():
    """A traced step takes each replica's batch as an input, so its program spans both GPUs and
    runs as two partitions. Each replica's NcclAllReduce holds its GPU's stream until the other
    replica's starts: an ordering edge from one to the other would leave the second partition
    waiting for a send queued behind the first (a hang; here, the script's faulthandler exit)."""
    out = _in_fresh_process(_INSTALL_FAKE, """
        import faulthandler, json
        faulthandler.dump_traceback_later(60, exit=True)
        import numpy as np
        import eager as tf

        strategy = tf.distribute.MirroredStrategy(
            ["/gpu:0", "/gpu:1"], cross_device_ops=tf.distribute.NcclAllReduce())
        with strategy.scope():
            w = tf.Variable(np.ones((2, 1), np.float32))
            opt = tf.keras.optimizers.SGD(0.5)
        x = np.arange(8, dtype=np.float32).reshape(4, 2)
        ds = strategy.experimental_distribute_dataset(
            tf.data.Dataset.from_tensor_slices(x).batch(4))

        def step(xb):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.matmul(xb, w))
            opt.apply_gradients([(tape.gradient(loss, w), w)])
            return loss

        @tf.function
        def run(xb):
            return strategy.reduce("SUM", strategy.run(step, (xb,)), axis=None)

        losses = []
        for _ in range(2):
            for xb in ds:
                losses.append(float(run(xb)))
        graph = run.get_concrete_function(xb).graph
        ops = [op for op in graph.get_operations() if op.type == "NcclAllReduce"]
        print(json.dumps({
            "losses": losses, "w": w.values[1].numpy().ravel().tolist(),
            "ops": [[op.attrs["replica"], op.attrs["instance_key"],
                     sorted([c.attrs["replica"], c.attrs["instance_key"]]
                            for c in op.control_inputs if c.type == "NcclAllReduce")]
                    for op in ops]}))
        """, timeout=120)
    result = json.loads(out.strip().splitlines()[-1])
    # Replica 0 has rows 0-1, replica 1 rows 2-3; the gradient of sum(x @ w) is x's column sums
    # over both replicas, [12, 16]: w = 1 - 0.5 * [12, 16] = [-5, -7] after the first step.
    assert result["losses"] == [28.0, -172.0]
    np.testing.assert_array_equal(result["w"], [-11.0, -15.0])
    for replica, instance, waits_for in result["ops"]:
        assert all(r == replica for r, _ in waits_for), result["ops"]  # its own device's chain
        assert all(i < instance for _, i in waits_for), result["ops"]


@pytest.mark.skipif(mpi_skip_reason() is not None, reason=str(mpi_skip_reason()))
def test_unique_id_exchange_over_real_mpi_processes(tmp_path):
    proc = run_job(tmp_path, """
        import json, sys
        from eager.distribute.collectives.mpi import MPICollectives
        from eager.distribute.collectives.nccl import exchange_unique_id

        mpi = MPICollectives()

        class Nccl:  # each rank would make a different id; only rank 0's may be used
            @staticmethod
            def get_unique_id():
                return tuple((i * 7 + 100 * mpi.rank) % 256 - 128 for i in range(128))

        got = exchange_unique_id(mpi, Nccl)
        with open(f"result_{mpi.rank}.json", "w") as f:
            json.dump({"id": list(got), "own": list(Nccl.get_unique_id())}, f)
        """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = rank_results(tmp_path, proc, 2)
    assert results[0]["id"] == results[0]["own"]
    assert results[1]["id"] == results[0]["own"] != results[1]["own"]
    assert all(-128 <= v <= 127 for v in results[1]["id"])
