"""The MPI collectives and failure handling on 2 real processes on loopback.

Each test writes a small worker script and starts it with `python -m eager.distribute.run -n 2`
(the launcher wraps the venv's `mpiexec`), always under a generous timeout: the property of the
failure tests is that the job ends instead of hanging. Skipped when mpi4py (the `distributed`
extra) is not installed.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mpi_jobs import ROOT, run_job, skip_module_without_mpi

skip_module_without_mpi()

from eager.distribute.run import find_mpiexec  # noqa: E402 - needs the extra (skipped above)

#: The longest a 2-process job here may take; a hang becomes a failure after it.
JOB_TIMEOUT_S = 180


def results_by_rank(tmp_path, proc, processes=2) -> dict:
    """Each worker writes its results to its own file (their stdouts interleave)."""
    found = {rank: json.loads((tmp_path / f"result_{rank}.json").read_text())
             for rank in range(processes) if (tmp_path / f"result_{rank}.json").exists()}
    assert sorted(found) == list(range(processes)), proc.stdout + proc.stderr
    return found


COLLECTIVES_WORKER = """
    import json
    import numpy as np
    from eager import errors
    from eager.distribute.collectives.mpi import MPICollectives

    c = MPICollectives()
    r = c.rank
    out = {"rank": r, "size": c.size}
    f = np.array([1.5, -2.0, 3.0], np.float32) * (r + 1)
    ints = np.array([3, -7, 10], np.int32) + r
    contiguous = f.copy()
    res = c.all_reduce([contiguous, ints.copy(), f.copy(), f.copy()], "sum")
    out["input_kept"] = res[0] is not contiguous and contiguous.tolist() == f.tolist()
    out["sum"] = res[0].tolist()
    out["int_sum"] = res[1].tolist()
    out["mean"] = c.all_reduce([f.copy()], "mean")[0].tolist()
    out["int_mean"] = c.all_reduce([ints.copy()], "mean")[0].tolist()
    out["max"] = c.all_reduce([f.copy()], "max")[0].tolist()
    out["min"] = c.all_reduce([f.copy()], "min")[0].tolist()
    out["dtype"] = str(c.all_reduce([f.astype(np.float16)], "sum")[0].dtype)
    strided = (np.arange(12, dtype=np.float64).reshape(3, 4) * (r + 1))[:, ::2]
    before = strided.copy()
    reduced = c.all_reduce([strided])[0]
    out["strided"] = reduced.tolist()
    out["strided_input_kept"] = bool((strided == before).all())
    flags = np.array([r == 0, True, False])
    out["bool_max"] = c.all_reduce([flags.copy()], "max")[0].tolist()
    out["bool_min"] = c.all_reduce([flags.copy()], "min")[0].tolist()
    out["gather0"] = c.all_gather(np.full((1, 2), r, np.int64)).tolist()
    out["gather1"] = c.all_gather(np.full((2, r + 1), r, np.int64), axis=1).tolist()
    out["gather_scalar"] = c.all_gather(np.float32(r + 0.5)).tolist()
    out["bcast"] = c.broadcast(np.array([r, r * 10], np.int32), root=1).tolist()
    c.barrier()
    for name, call in [
            ("gather_mismatch", lambda: c.all_gather(np.zeros((2, 3 + r), np.float32))),
            ("bool_sum", lambda: c.all_reduce([flags.copy()], "sum")),
            ("bad_op", lambda: c.all_reduce([f.copy()], "prod")),
            ("bad_root", lambda: c.broadcast(f.copy(), root=2)),
            ("bad_timeout", lambda: MPICollectives(timeout_seconds=0))]:
        try:
            call()
            out[name] = "no error"
        except (errors.OpError, ValueError) as e:
            out[name] = f"{type(e).__name__}: {e}"
    c.barrier()
    c.close()
    try:
        c.barrier()
    except errors.FailedPreconditionError as e:
        out["closed"] = str(e)
    with open(f"result_{r}.json", "w") as file:
        json.dump(out, file)
"""


def test_collectives_on_two_processes_match_numpy(tmp_path):
    proc = run_job(tmp_path, COLLECTIVES_WORKER)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = results_by_rank(tmp_path, proc)
    f = np.array([1.5, -2.0, 3.0], np.float32)
    ints = np.array([3, -7, 10], np.int32)
    strided = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]
    for rank, out in results.items():
        assert (out["rank"], out["size"]) == (rank, 2)
        assert out["input_kept"] is True  # the result is a new array; the input is unchanged
        np.testing.assert_array_equal(out["sum"], f * 1 + f * 2)
        np.testing.assert_array_equal(out["int_sum"], ints * 2 + 1)
        np.testing.assert_array_equal(out["mean"], (f * 1 + f * 2) / 2)
        np.testing.assert_array_equal(out["int_mean"], (ints * 2 + 1) // 2)  # floor, like TF
        np.testing.assert_array_equal(out["max"], np.maximum(f, f * 2))
        np.testing.assert_array_equal(out["min"], np.minimum(f, f * 2))
        assert out["dtype"] == "float16"
        np.testing.assert_array_equal(out["strided"], strided * 3)
        assert out["strided_input_kept"] is True
        assert out["bool_max"] == [True, True, False]
        assert out["bool_min"] == [False, True, False]
        assert out["gather0"] == [[0, 0], [1, 1]]
        assert out["gather1"] == [[0, 1, 1], [0, 1, 1]]
        assert out["gather_scalar"] == [0.5, 1.5]
        assert out["bcast"] == [1, 10]
        assert out["gather_mismatch"] == (
            "InvalidArgumentError: all_gather: the workers' tensors differ in dtype or in shape "
            "outside the gathered axis (worker 0: float32[2, 3]; worker 1: float32[2, 4]); "
            "every worker must pass the same dtype and shape.")
        assert out["bool_sum"].startswith(
            "InvalidArgumentError: all_reduce: reduction 'sum' is not defined for bool tensors "
            "(bool[3])")
        assert out["bad_op"].startswith("ValueError: Unsupported reduction 'prod'")
        assert out["bad_root"] == ("ValueError: broadcast: root 2 is not a rank of this group "
                                   "of 2 workers.")
        assert out["bad_timeout"] == ("ValueError: timeout_seconds must be a positive number "
                                      "of seconds or None, got 0.")
        assert "was closed" in out["closed"]


SHARED_MEMORY_WORKER = """
    import json
    import numpy as np
    from eager import errors
    from eager.distribute.collectives import shared_memory
    from eager.distribute.collectives.mpi import MPICollectives

    c = MPICollectives()
    r = c.rank
    out = {"uses_window": c._node is not None, "cases": 0}
    # sizes below, at and above the window threshold, and over one piece (4 MB)
    sizes = [10, shared_memory.MIN_BYTES // 4, 20_000, 1_500_001]
    for dtype in (np.float32, np.float64, np.float16, np.int32, np.int64, np.complex64):
        for n in sizes:
            parts = [(np.random.default_rng(n + k).standard_normal(n) * 10).astype(dtype)
                     for k in range(c.size)]
            for op in ("sum", "mean", "max", "min"):
                if np.dtype(dtype).kind == "c" and op in ("max", "min"):
                    continue
                mine = parts[r].copy()
                got = c.all_reduce([mine], op)[0]
                if op in ("sum", "mean"):
                    want = parts[0].copy()
                    for p in parts[1:]:
                        want = want + p  # in rank order, as every worker computes it
                    if op == "mean":
                        want = (want // c.size if np.dtype(dtype).kind in "iu"
                                else want / dtype(c.size))
                else:
                    want = (np.maximum if op == "max" else np.minimum).reduce(parts)
                assert np.array_equal(got, want.astype(dtype)), (dtype, n, op)
                assert np.array_equal(mine, parts[r]), "the input was written"
                out["cases"] += 1
    # every worker reads the same bits
    x = np.random.default_rng(r).standard_normal(300_000).astype(np.float32)
    digests = c.all_gather(np.frombuffer(c.all_reduce([x])[0].tobytes(), np.uint8)[None])
    out["same_bits"] = bool((digests == digests[0]).all())
    try:
        c.all_reduce([np.ones(100_000 + r, np.float32)])
        out["mismatch"] = "no error"
    except errors.InvalidArgumentError as e:
        out["mismatch"] = str(e)
    out["after_mismatch"] = c.all_reduce([np.ones(100_000, np.float32)])[0][:2].tolist()
    with open(f"result_{r}.json", "w") as file:
        json.dump(out, file)
"""


@pytest.mark.parametrize("processes", [2, 3])
def test_the_shared_memory_all_reduce_matches_numpy_on_one_host(tmp_path, processes):
    """Large buffers among the processes of one host go through the shared-memory window:
    results equal to numpy's reduction in rank order, bit-identical on every worker, the
    caller's buffer untouched, and mismatched buffers a clear error on every worker."""
    proc = run_job(tmp_path, SHARED_MEMORY_WORKER, processes=processes)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for out in results_by_rank(tmp_path, proc, processes).values():
        assert out["uses_window"] is True
        assert out["cases"] == 6 * 4 * 4 - 4 * 2
        assert out["same_bits"] is True
        assert out["mismatch"].startswith(
            "all_reduce: the workers passed different buffers (every worker must reduce the "
            "same element count, dtype and reduction in the same order): worker 0: 100000 x "
            "float32 (sum); worker 1: 100001 x float32 (sum)"), out["mismatch"]
        assert out["after_mismatch"] == [float(processes)] * 2


BUCKET_OP_WORKER = """
    import json
    import numpy as np
    import eager as tf
    from eager.ops import collective_ops

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    r = strategy.cluster_resolver.task_id
    ext = strategy.extended
    out = {}
    parts = [tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) * (r + 1)),
             tf.constant([1.0, 2.0, 3.0, 4.0]) * (r + 1), tf.constant(5.0 * (r + 1))]
    reduced = collective_ops.collective_reduce_n(parts, 2, ext._group_key, 10_001)
    out["shapes"] = [list(t.shape) for t in reduced]
    out["values"] = [t.numpy().tolist() for t in reduced]
    mean = collective_ops.collective_reduce_n(parts, 2, ext._group_key, 10_002, final_op="Div")
    out["mean"] = [t.numpy().tolist() for t in mean]
    with tf.GradientTape() as tape:
        tape.watch(parts)
        ys = collective_ops.collective_reduce_n(parts, 2, ext._group_key, 10_003)
        loss = tf.reduce_sum(ys[0]) * float(r + 1) + tf.reduce_sum(ys[1])  # ys[2] unused
    out["grads"] = [g.numpy().tolist() for g in tape.gradient(loss, parts)]
    # a traced one-replica step reduces its gradients without a fused buffer
    with strategy.scope():
        w = tf.Variable(tf.ones((3, 2)))
        b = tf.Variable(tf.zeros((2,)))
        opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def step(x):
        def replica(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.matmul(x, w) + b)
            opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        strategy.run(replica, (x,))
    x = tf.constant(np.full((4, 3), r + 1.0, np.float32))
    step(x)
    graph = step.get_concrete_function(x).graph
    out["op_types"] = sorted({op.type for op in graph.get_operations()
                              if op.type in ("CollectiveReduceN", "CollectiveReduceV2",
                                             "ConcatV2", "SplitV")})
    out["w"] = w.numpy().tolist()
    out["b"] = b.numpy().tolist()
    with open(f"result_{r}.json", "w") as file:
        json.dump(out, file)
"""


def test_a_bucket_reduces_in_one_collective_op_without_a_fused_buffer(tmp_path):
    """`CollectiveReduceN`: a bucket's tensors all-reduced as they are (shapes kept, a 0-d one
    too), its gradient the group's sum of output gradients, and a one-replica worker's traced
    step reduces its gradients with it, without ConcatV2/SplitV."""
    proc = run_job(tmp_path, BUCKET_OP_WORKER)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    for out in results_by_rank(tmp_path, proc).values():
        assert out["shapes"] == [[2, 3], [4], []]
        np.testing.assert_array_equal(out["values"][0], m * 3)
        np.testing.assert_array_equal(out["values"][1], [3.0, 6.0, 9.0, 12.0])
        assert out["values"][2] == 15.0
        np.testing.assert_array_equal(out["mean"][1], [1.5, 3.0, 4.5, 6.0])
        # d(loss_r)/d(ys[0]) is (r + 1) on worker r: the input gradient sums them: 1 + 2
        np.testing.assert_array_equal(out["grads"][0], np.full((2, 3), 3.0))
        np.testing.assert_array_equal(out["grads"][1], np.full(4, 2.0))
        assert out["grads"][2] == 0.0
        assert out["op_types"] == ["CollectiveReduceN"]
        # global batch of 8 rows (4 of 1s, 4 of 2s) through MEAN-free SGD on the summed loss:
        # dL/dw = sum over both workers' rows of x = 4 * 1 + 4 * 2 = 12 per entry
        np.testing.assert_allclose(out["w"], np.full((3, 2), 1.0 - 0.1 * 12), rtol=1e-6)
        np.testing.assert_allclose(out["b"], np.full(2, -0.1 * 8), rtol=1e-6)


def test_a_worker_that_raises_ends_the_job_naming_it(tmp_path):
    proc = run_job(tmp_path, """
        import numpy as np
        from eager.distribute.collectives.mpi import MPICollectives

        c = MPICollectives()
        buffer = np.ones(1000, np.float32)
        c.all_reduce([buffer])
        if c.rank == 1:
            raise ValueError("bad batch on this worker")
        while True:  # rank 0 would wait here forever for rank 1
            c.all_reduce([buffer])
    """)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "ValueError: bad batch on this worker" in output
    assert "eager.distribute: worker 1 of 2" in output
    assert "aborting all 2 workers" in output
    assert "eager.distribute.run: the job failed" in output


def test_a_worker_that_dies_ends_the_job(tmp_path):
    proc = run_job(tmp_path, """
        import os, signal
        import numpy as np
        from eager.distribute.collectives.mpi import MPICollectives

        c = MPICollectives()
        buffer = np.ones(1000, np.float32)
        c.all_reduce([buffer])
        if c.rank == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        while True:
            c.all_reduce([buffer])
    """)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "eager.distribute.run: the job failed" in output


def test_a_timeout_turns_a_missing_worker_into_deadline_exceeded(tmp_path):
    """Rank 1 leaves without its share of collectives; rank 0's bounded wait raises, and the
    uncaught error then aborts the job."""
    proc = run_job(tmp_path, """
        import numpy as np
        from eager.distribute.collectives.mpi import MPICollectives

        c = MPICollectives(timeout_seconds=2)
        if c.rank == 0:
            c.all_reduce([np.ones((4, 5), np.float32)])
    """)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert ("DeadlineExceededError: Collective all_reduce of float32[4, 5] on worker 0 of 2 "
            "did not complete within 2 s") in output
    assert "eager.distribute: worker 0 of 2" in output



# -- MultiWorkerMirroredStrategy on 2 workers ----------------------------------------------------

#: One script, run twice: as one process without a strategy ("reference": one device, the
#: global batch) and as 2 MPI workers under MultiWorkerMirroredStrategy (each worker gets half
#: of every global batch; with 2 local logical CPUs, a quarter per replica). Rank 1 creates its
#: variables from other values: the strategy must start them as rank 0's.
MLP_WORKER = """
    import contextlib
    import json
    import os
    import sys

    import numpy as np

    import eager as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    MODE, OUT = sys.argv[1], sys.argv[2]  # "mpi" or "reference"; the results' directory
    B, STEPS = 16, 3
    rng = np.random.RandomState(0)
    X = rng.randn(STEPS * B, 6).astype(np.float32)
    Y = rng.randint(0, 3, STEPS * B).astype(np.int32)
    W0 = [(rng.randn(6, 8) * 0.5).astype(np.float32), np.full(8, 0.1, np.float32),
          (rng.randn(8, 3) * 0.5).astype(np.float32), np.zeros(3, np.float32)]


    def make_strategy(local_devices, overlap=False):
        # With `overlap`, the engine's communication thread is on (this machine may have too
        # few cores to choose it) and every gradient is a bucket of its own: a traced step
        # then starts four all-reduces during its backward pass.
        if MODE == "reference":
            return None
        os.environ["EAGER_COLLECTIVE_OVERLAP"] = "1" if overlap else "0"
        if local_devices == 1:
            strategy = tf.distribute.MultiWorkerMirroredStrategy()
        else:
            strategy = tf.distribute.MultiWorkerMirroredStrategy._from_local_devices(
                ["/cpu:0", "/cpu:1"])
        if overlap:
            strategy.extended.bucket_bytes = 100
        return strategy


    TRACES = {}
    STARTED = {}  # config -> all-reduces the engine's communication thread ran


    def local_devices(strategy):
        return 1 if strategy is None else len(strategy.extended.worker_devices)


    def train(strategy, opt_name, traced):
        rank = 0 if strategy is None else strategy.cluster_resolver.task_id
        with strategy.scope() if strategy else contextlib.nullcontext():
            # Rank 1 starts from other values: creation must broadcast rank 0's.
            vs = [tf.Variable(w + rank) for w in W0]
            opt = tf.keras.optimizers.SGD(0.5) if opt_name == "sgd" \\
                else tf.keras.optimizers.Adam(0.05)

        def step(x, y):
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.matmul(x, vs[0]) + vs[1])
                per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(
                    y, tf.matmul(h, vs[2]) + vs[3])
                loss = tf.nn.compute_average_loss(per_example, global_batch_size=B)
            opt.apply_gradients(zip(tape.gradient(loss, vs), vs))
            return loss

        run = step if strategy is None else (
            lambda x, y: strategy.reduce("SUM", strategy.run(step, (x, y)), axis=None))
        if traced:
            run = tf.function(run)
        data = tf.data.Dataset.from_tensor_slices((X, Y)).batch(B)
        if strategy is not None:
            data = strategy.experimental_distribute_dataset(data)
        for x, y in data:
            run(x, y)
        if traced:
            TRACES[f"{opt_name}-{local_devices(strategy)}"] = run.experimental_get_tracing_count()
        if strategy is not None:
            STARTED[f"{opt_name}-{'traced' if traced else 'eager'}-{local_devices(strategy)}"] = \
                strategy.extended._collectives.started_count
        if strategy is not None:  # every component of every variable equal on this worker
            for v in vs:
                for c in v.values[1:]:
                    np.testing.assert_array_equal(c.numpy(), v.values[0].numpy())
        return [v.numpy().tolist() for v in vs], vs


    def keras_fit(strategy):
        with strategy.scope() if strategy else contextlib.nullcontext():
            model = tf.keras.Sequential([tf.keras.Input((6,)),
                                         tf.keras.layers.Dense(8, activation="relu"),
                                         tf.keras.layers.Dense(3)])
            model.set_weights(W0)
            model.compile(optimizer=tf.keras.optimizers.SGD(0.5),
                          loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(X, Y, batch_size=B, epochs=2, shuffle=False, verbose=0)
        os.makedirs(os.path.join(OUT, f"ckpt_{MODE}"), exist_ok=True)
        model.save_weights(os.path.join(OUT, f"ckpt_{MODE}", "model.weights.h5"))
        return [w.tolist() for w in model.get_weights()]


    out = {}
    rank = 0
    for opt_name in ("sgd", "adam"):
        for traced in (False, True):
            for local in (1, 2):
                strategy = make_strategy(local, overlap=opt_name == "sgd")
                if strategy is not None:
                    rank = strategy.cluster_resolver.task_id
                    out.setdefault("replicas", {})[local] = strategy.num_replicas_in_sync
                out[f"{opt_name}-{'traced' if traced else 'eager'}-{local}"], vs = train(
                    strategy, opt_name, traced)
    out["traces"] = TRACES
    out["started"] = STARTED
    out["keras"] = keras_fit(make_strategy(1, overlap=True))

    # Checkpoints: written by this run, and (MPI) the reference run's restored here.
    ckpt_dir = os.path.join(OUT, f"ckpt_{MODE}")
    strategy = make_strategy(1)
    with strategy.scope() if strategy else contextlib.nullcontext():
        kept = [tf.Variable(np.full((2, 3), 7.0 + rank, np.float32)), tf.Variable(3 + rank)]
    checkpoint = tf.train.Checkpoint(a=kept[0], b=kept[1])
    out["saved"] = checkpoint.save(os.path.join(ckpt_dir, "ck"))
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(ckpt_dir, "managed"), 1)
    out["managed"] = [manager.save(), manager.save()]
    out["managed_kept"] = manager.checkpoints
    if MODE == "mpi":
        with strategy.scope():
            fresh = [tf.Variable(np.zeros((2, 3), np.float32)), tf.Variable(0)]
        tf.train.Checkpoint(a=fresh[0], b=fresh[1]).restore(
            os.path.join(OUT, "ckpt_reference", "ck-1"))
        out["restored"] = [[c.numpy().tolist() for c in v.values] for v in fresh]
        strategy.extended._collectives.barrier()  # the chief's files exist from here on
        out["files"] = sorted(os.listdir(ckpt_dir)) + sorted(
            os.listdir(os.path.join(ckpt_dir, "managed")))
    with open(os.path.join(OUT, f"result_{MODE}_{rank}.json"), "w") as f:
        json.dump(out, f)
"""

MLP_CONFIGS = [f"{opt}-{mode}-{local}" for opt in ("sgd", "adam") for mode in ("eager", "traced")
               for local in (1, 2)]


@pytest.fixture(scope="module")
def mlp_runs(tmp_path_factory):
    """{"reference": the one-device results, 0/1: each worker's}, and the results' directory."""
    out = tmp_path_factory.mktemp("mlp")
    script = out / "mlp_worker.py"
    script.write_text(textwrap.dedent(MLP_WORKER))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TF_CONFIG", None)
    reference = subprocess.run([sys.executable, str(script), "reference", str(out)], cwd=out,
                               env=env, capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
    assert reference.returncode == 0, reference.stdout + reference.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "eager.distribute.run", "-n", "2", str(script), "mpi", str(out)],
        cwd=out, env=env, capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = {"reference": json.loads((out / "result_reference_0.json").read_text())}
    for rank in (0, 1):
        runs[rank] = json.loads((out / f"result_mpi_{rank}.json").read_text())
    return runs, out


@pytest.mark.parametrize("config", MLP_CONFIGS)
def test_two_workers_end_at_the_one_device_weights(mlp_runs, config):
    """SGD and Adam, eager and traced, 1 or 2 replicas per worker: the 2-worker run's weights
    are the one-device run's with the global batch (within float32 rounding), on both."""
    runs, _ = mlp_runs
    for rank in (0, 1):
        assert runs[rank]["replicas"] == {"1": 2, "2": 4}
        for got, want in zip(runs[rank][config], runs["reference"][config]):
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_steps_start_their_all_reduces_on_the_communication_thread(mlp_runs):
    """With overlap on (the SGD runs), a traced step's all-reduces are split and started on
    the engine's thread: one per gradient (buckets of one) per step for one replica per
    worker, one fused bucket per gradient for two; an eager step with one replica per worker
    starts each bucket from its backward pass (`eager_overlap`), one with two does not; with
    overlap off none is started. Their weights are checked against one device above."""
    runs, _ = mlp_runs
    for rank in (0, 1):
        started = runs[rank]["started"]
        # 3 steps; the first call traces (its collectives run as traced, unsplit).
        assert started["sgd-traced-1"] >= 2 * 4, started
        assert started["sgd-traced-2"] >= 2 * 4, started
        assert started["sgd-eager-1"] >= 3 * 4, started
        assert started["sgd-eager-2"] == 0, started
        assert all(started[f"adam-{mode}-{n}"] == 0 for mode in ("eager", "traced")
                   for n in (1, 2)), started


def test_a_traced_step_on_two_workers_traces_as_often_as_on_one_device(mlp_runs):
    """The traced step over a distributed dataset (PerReplica batches with 2 replicas per
    worker) is traced as many times as the one-device step (variables made by the first
    trace: two traces for Adam, as TF), not once per batch."""
    runs, _ = mlp_runs
    reference = runs["reference"]["traces"]
    assert reference == {"sgd-1": 1, "adam-1": 2}
    for rank in (0, 1):
        assert runs[rank]["traces"] == {"sgd-1": 1, "sgd-2": 1, "adam-1": 2, "adam-2": 2}


def test_keras_fit_on_two_workers_ends_at_the_one_device_weights(mlp_runs):
    runs, out = mlp_runs
    for rank in (0, 1):
        for got, want in zip(runs[rank]["keras"], runs["reference"]["keras"]):
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    import eager  # noqa: PLC0415 - the job's weights file, read back in this one process

    model = eager.keras.Sequential([eager.keras.Input((6,)), eager.keras.layers.Dense(8),
                                    eager.keras.layers.Dense(3)])
    model.load_weights(str(out / "ckpt_mpi" / "model.weights.h5"))
    for got, want in zip(model.get_weights(), runs["reference"]["keras"]):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_a_two_worker_checkpoint_restores_into_one_device_and_back(mlp_runs):
    """The chief's values land at the path (non-chief copies go to a temporary directory,
    deleted); a one-device checkpoint restores into every worker's mirrored variables."""
    import eager  # noqa: PLC0415

    runs, out = mlp_runs
    for rank in (0, 1):
        assert runs[rank]["saved"] == str(out / "ckpt_mpi" / "ck-1")
        assert runs[rank]["managed"] == [str(out / "ckpt_mpi" / "managed" / f"ckpt-{n}")
                                         for n in (2, 3)]
        assert runs[rank]["managed_kept"] == [str(out / "ckpt_mpi" / "managed" / "ckpt-3")]
        assert runs[rank]["files"] == ["checkpoint", "ck-1", "managed", "model.weights.h5",
                                       "checkpoint", "ckpt-3"]  # no workertemp_1
        # The one-device checkpoint holds 7.0 and 3: every component of every worker has them.
        assert runs[rank]["restored"] == [[[[7.0] * 3] * 2], [3]]
    a, b = eager.Variable(np.zeros((2, 3), np.float32)), eager.Variable(0)
    eager.train.Checkpoint(a=a, b=b).restore(str(out / "ckpt_mpi" / "ck-1"))
    np.testing.assert_array_equal(a.numpy(), np.full((2, 3), 7.0))  # rank 0's values
    assert int(b.numpy()) == 3
    assert eager.train.latest_checkpoint(str(out / "ckpt_mpi" / "managed")).endswith("ckpt-3")


API_WORKER = """
    import json
    import os
    import sys

    import numpy as np

    import eager as tf

    OUT = sys.argv[1]
    s = tf.distribute.MultiWorkerMirroredStrategy()
    rank = s.cluster_resolver.task_id
    e = s.extended
    out = {"num": s.num_replicas_in_sync, "multi": e._in_multi_worker_mode(),
           "chief": [e.should_checkpoint, e.should_save_summary],
           "task": [s.cluster_resolver.task_type, s.cluster_resolver.task_id],
           "jobs": s.cluster_resolver.cluster_spec().jobs}
    value = tf.constant([[1.0, 2.0]] * (rank + 1)) * (rank + 1)  # rank 0: 1 row, rank 1: 2 rows
    out["mean_axis"] = s.reduce("MEAN", value, axis=0).numpy().tolist()
    out["sum_axis"] = s.reduce("SUM", value, axis=0).numpy().tolist()
    out["mean"] = s.reduce("MEAN", tf.constant(float(rank)), axis=None).numpy().tolist()
    out["gather"] = s.gather(value, axis=0).numpy().tolist()
    out["ids"] = s.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
    out["values_fn"] = s.experimental_distribute_values_from_function(
        lambda ctx: ctx.replica_id_in_sync_group * 10)
    with s.scope():
        metric = tf.keras.metrics.Mean()
    s.run(lambda: metric.update_state(tf.constant([1.0, 3.0]) + 10 * rank))
    out["metric"] = float(metric.result().numpy())
    contexts = []


    def dataset_fn(ctx):
        contexts.append([ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync])
        return tf.data.Dataset.range(4).batch(2)


    iter(s.distribute_datasets_from_function(dataset_fn))
    out["input_context"] = contexts[0]
    options = tf.data.Options()
    for policy in ("AUTO", "DATA", "OFF"):
        data = tf.data.Dataset.range(12).batch(4)
        if policy != "AUTO":
            options.experimental_distribute.auto_shard_policy = getattr(
                tf.data.experimental.AutoShardPolicy, policy)
            data = data.with_options(options)
        out[policy] = [b.numpy().tolist() for b in s.experimental_distribute_dataset(data)]
    files = []
    for i in range(4):
        files.append(os.path.join(OUT, f"lines_{i}.txt"))
        if rank == 0:
            with open(files[-1], "w") as f:
                f.write("".join(f"{i}{j}\\n" for j in range(3)))
    e._collectives.barrier()
    lines = tf.data.TextLineDataset(files).map(tf.strings.to_number).batch(4)
    out["FILE"] = [b.numpy().tolist() for b in s.experimental_distribute_dataset(lines)]
    with open(os.path.join(OUT, f"api_{rank}.json"), "w") as f:
        json.dump(out, f)
"""


def test_multi_worker_strategy_api_across_two_workers(tmp_path):
    proc = run_job(tmp_path, API_WORKER, str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for rank in (0, 1):
        out = json.loads((tmp_path / f"api_{rank}.json").read_text())
        assert out["num"] == 2 and out["multi"] is True
        assert out["chief"] == [rank == 0] * 2
        assert out["task"] == ["worker", rank] and out["jobs"] == ["worker"]
        # Rank 0 gives one row [1, 2], rank 1 two rows [2, 4]: MEAN divides by all 3 rows.
        np.testing.assert_allclose(out["mean_axis"], [5 / 3, 10 / 3], rtol=1e-6)
        assert out["sum_axis"] == [5.0, 10.0]
        assert out["mean"] == 0.5
        assert out["gather"] == [[1.0, 2.0], [2.0, 4.0], [2.0, 4.0]]
        assert out["ids"] == rank and out["values_fn"] == 10 * rank
        assert out["metric"] == 7.0  # the mean of 1, 3, 11, 13: both workers' updates
        assert out["input_context"] == [2, rank, 2]
        # DATA (and AUTO on a non-file source): each global batch of 4 split between workers.
        mine = [[4 * i + 2 * rank, 4 * i + 2 * rank + 1] for i in range(3)]
        assert out["AUTO"] == out["DATA"] == mine
        assert out["OFF"] == [[2 * i, 2 * i + 1] for i in range(6)]  # the same rows on both
        # FILE: worker r reads files r and r + 2 (lines "<file><line>"), 2 rows a step.
        rows = [10 * f + j for f in (rank, rank + 2) for j in range(3)]
        assert out["FILE"] == [rows[i:i + 2] for i in (0, 2, 4)]


def test_a_worker_raising_inside_strategy_run_ends_the_job_naming_it(tmp_path):
    proc = run_job(tmp_path, """
        import eager as tf

        s = tf.distribute.MultiWorkerMirroredStrategy()
        with s.scope():
            v = tf.Variable([1.0, 2.0])
        rank = s.cluster_resolver.task_id

        def step():
            if rank == 1:
                raise ValueError("bad batch on this worker")
            return tf.distribute.get_replica_context().all_reduce("SUM", v * 1.0)

        for _ in range(100):  # rank 0 would wait in the all-reduce forever
            s.run(step)
    """)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "ValueError: bad batch on this worker" in output
    assert "eager.distribute: worker 1 of 2" in output
    assert "eager.distribute.run: the job failed" in output


def test_the_example_runs_on_two_workers_and_on_two_local_devices(tmp_path):
    """`examples/distributed_training.py` as `mpiexec -n 2 python ...` (MultiWorkerMirrored-
    Strategy) and as plain `python ...` (MirroredStrategy on 2 logical CPUs): the same 2-replica
    training, so the same final weights; the chief's checkpoint is the only file written."""
    example = ROOT / "examples" / "distributed_training.py"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TF_CONFIG", None)
    local = subprocess.run([sys.executable, str(example), str(tmp_path / "local")], env=env,
                           capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
    assert local.returncode == 0, local.stdout + local.stderr
    workers = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, str(example),
                              str(tmp_path / "mpi")], env=env, capture_output=True, text=True,
                             timeout=JOB_TIMEOUT_S)
    assert workers.returncode == 0, workers.stdout + workers.stderr
    last = [p.stdout.strip().splitlines()[-1] for p in (local, workers)]
    assert last[0].startswith("2 replicas; w = ") and last[1].startswith("2 replicas; w = ")
    assert last[0].split("; saved")[0] == last[1].split("; saved")[0]
    assert workers.stdout.count("epoch 4") == 1  # the chief alone reports
    assert sorted(os.listdir(tmp_path / "mpi")) == ["final"]


def test_only_the_chiefs_keras_archive_lands_at_the_path(tmp_path):
    """`model.save("m.keras")` on every worker (as `ModelCheckpoint(save_weights_only=False)`
    does): the non-chief writes a temporary copy, deleted (TF/Keras's rule), so the file holds
    the chief's model even when the other worker saves after it with other weights."""
    proc = run_job(tmp_path, """
        import os
        import numpy as np
        import eager as tf

        s = tf.distribute.MultiWorkerMirroredStrategy()
        rank = s.cluster_resolver.task_id
        model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
        model.set_weights([np.full((2, 1), rank + 1.0, np.float32), np.zeros(1, np.float32)])
        path = os.path.join(os.getcwd(), "m.keras")
        for turn in (0, 1):  # the chief first, then the other worker
            if turn == rank:
                model.save(path)
            s.extended._collectives.barrier()
        if rank == 0:
            loaded = tf.keras.models.load_model(path)
            with open("result.txt", "w") as f:
                f.write(f"{loaded.get_weights()[0].ravel().tolist()} {sorted(os.listdir('.'))}")
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "result.txt").read_text() == \
        "[1.0, 1.0] ['m.keras', 'result.txt', 'worker.py']"
