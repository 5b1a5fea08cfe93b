"""`eager.distribute` on local devices: N replicas with global batch B train to the weights one
device reaches with batch B; names, reprs and errors as TensorFlow 2.21 gives them (goldens
recorded from TF). Each scenario runs in a fresh process so it can configure its devices."""

import json

import numpy as np
import pytest

import eager as tf
from distribute_scripts import run_scenario
from eager.ops.collective_ops import collective_reduce, register_group, unregister_group


@pytest.mark.parametrize("devices", ["cpu", "gpu"])
@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_two_replicas_match_one_device(devices, opt):
    out = run_scenario(f"""
        for traced in (False, True):
            w2, b2, l2, _ = train(tf.distribute.MirroredStrategy(NAMES), tf.keras.optimizers.{opt},
                               traced)
            w1, b1, l1, _ = train(tf.distribute.OneDeviceStrategy(NAMES[0]),
                               tf.keras.optimizers.{opt}, traced)
            assert type(w2).__name__ == "MirroredVariable", type(w2)
            for a, c in zip(w2.values, b2.values):
                np.testing.assert_allclose(a.numpy(), w1.numpy(), rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(c.numpy(), b1.numpy(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(l2.numpy(), l1.numpy(), rtol=1e-5)
            assert not np.allclose(w1.numpy(), 1.0)
        print("ok")
    """, devices)
    assert out.strip() == "ok"


def test_names_reprs_and_errors_as_tf():
    out = run_scenario("""
        s = tf.distribute.MirroredStrategy(NAMES)
        assert s.num_replicas_in_sync == 2
        with s.scope():
            v = tf.Variable(1.0, name="v")
            assert tf.distribute.has_strategy() and tf.distribute.in_cross_replica_context()
        # TF: MirroredVariable:{ 0: <tf.Variable 'v:0' ...>, 1: <tf.Variable 'v/replica_1:0' ...> }
        text = repr(v)
        assert text.startswith("MirroredVariable:{\\n  0: "), text
        assert "'v:0'" in text and "'v/replica_1:0'" in text
        r = s.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
        assert repr(r).startswith("PerReplica:{"), repr(r)
        assert s.experimental_local_results(r) == (0, 1)
        assert int(s.reduce(tf.distribute.ReduceOp.SUM, r, axis=None)) == 1
        # TF: ValueError: A non-DistributedValues value tf.Tensor(1.0, ...) cannot be reduced
        # with the given reduce op ReduceOp.SUM.
        try:
            s.reduce("SUM", tf.constant(1.0), axis=None)
        except ValueError as e:
            assert "cannot be reduced with the given reduce op ReduceOp.SUM." in str(e), e
        else:
            raise AssertionError("no error")
        pr = s.run(lambda: tf.ones([2, 3]))
        try:
            s.reduce("SUM", pr, axis=3)
        except ValueError as e:
            assert "Invalid reduction dimension 3 for input with 2 dimensions" in str(e), e
        else:
            raise AssertionError("no error")
        np.testing.assert_allclose(s.reduce("SUM", pr, axis=0).numpy(), [4.0, 4.0, 4.0])
        np.testing.assert_allclose(s.reduce("MEAN", pr, axis=0).numpy(), [1.0, 1.0, 1.0])
        assert tuple(s.gather(pr, axis=0).shape) == (4, 3)
        # ReplicaContext.all_reduce and merge_call
        total = s.run(lambda: tf.distribute.get_replica_context().all_reduce(
            "SUM", tf.constant(float(tf.distribute.get_replica_context()
                                     .replica_id_in_sync_group + 1))))
        assert [float(t) for t in s.experimental_local_results(total)] == [3.0, 3.0]
        assert str(tf.distribute.ReduceOp.SUM) == "ReduceOp.SUM"
        assert not tf.distribute.has_strategy()
        # the default strategy's reduce without an axis returns the value itself (TF: `1.0`)
        default = tf.distribute.get_strategy()
        assert repr(default.reduce("SUM", 1., axis=None)) == "1.0"
        t = tf.constant([1.0, 3.0])
        assert default.reduce("SUM", t, axis=None) is t
        np.testing.assert_allclose(default.reduce("MEAN", t, axis=0).numpy(), 2.0)
        # TF splits a global batch of 8 into 4 + 4 (values [0 1 2 3], [4 5 6 7])
        ds = s.experimental_distribute_dataset(tf.data.Dataset.range(8).batch(8))
        parts = s.experimental_local_results(next(iter(ds)))
        assert [p.numpy().tolist() for p in parts] == [[0, 1, 2, 3], [4, 5, 6, 7]]
        # replica-context write of a MirroredVariable without aggregation: TF's ValueError
        try:
            s.run(lambda: v.assign(2.0))
        except ValueError as e:
            assert "You must specify an aggregation method" in str(e), e
        else:
            raise AssertionError("no error")
        with s.scope():
            m = tf.Variable(0.0, aggregation=tf.VariableAggregation.MEAN)
        s.run(lambda: m.assign(float(tf.distribute.get_replica_context()
                                     .replica_id_in_sync_group)))
        assert [float(c) for c in m.values] == [0.5, 0.5]
        print("ok")
    """)
    assert out.strip() == "ok"


def test_traced_step_chains_its_all_reduces_in_creation_order():
    """The all-reduces of a traced step are `CollectiveReduceV2` ops, each waiting (by an
    automatic control edge) for the one created before it and for no other op of theirs, so
    every worker issues them in program order; the step still computes the right numbers."""
    run_scenario("""
    strategy = tf.distribute.MirroredStrategy(NAMES)
    with strategy.scope():
        w = tf.Variable(np.ones((3, 1), np.float32))
        opt = tf.keras.optimizers.SGD(0.1)

    def replica_step(xb):
        ctx = tf.distribute.get_replica_context()
        first = ctx.all_reduce("SUM", tf.reduce_sum(xb))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(xb, w))
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        second = ctx.all_reduce("MEAN", tf.reduce_max(xb))
        return first + second

    @tf.function
    def step(x0, x1):
        out = strategy.run(replica_step, (tf.distribute.PerReplica([x0, x1]),))
        return strategy.experimental_local_results(out)

    xs = (tf.constant(X[:8]), tf.constant(X[8:]))
    out = step(*xs)
    for r in range(2):
        np.testing.assert_allclose(out[r].numpy(),
                                   X.sum() + np.mean([X[:8].max(), X[8:].max()]), rtol=1e-5)
    np.testing.assert_allclose(w.values[1].numpy(),
                               1 - 0.1 * X.sum(axis=0, keepdims=True).T, rtol=1e-5)
    graph = step.get_concrete_function(*xs).graph
    ops = graph.get_operations()
    collectives = [op for op in ops if op.type == "CollectiveReduceV2"]
    assert len(collectives) == 3, [op.type for op in ops]
    keys = [op.get_attr("instance_key") for op in collectives]
    assert keys == sorted(keys) and len(set(keys)) == 3, keys
    for before, op in zip(collectives, collectives[1:]):
        assert before in op.control_inputs, (before, op, op.control_inputs)
    assert not [c for c in collectives[0].control_inputs if c.type == "CollectiveReduceV2"]
    for op in collectives:  # one chain of their own: never ordered after another op's chain
        assert all(c.type == "CollectiveReduceV2" for c in op.control_inputs), op.control_inputs
        assert op in graph.control_outputs
    print("OK")
    """)


def test_collective_reduce_op_errors_and_its_own_chain():
    """Bad attributes and an unknown group are the op's InvalidArgumentError naming it; traced,
    collective ops chain among themselves and not onto the prints' chain."""
    x = tf.constant([1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"CollectiveReduceV2: merge_op must .*Op:CollectiveReduceV2"):
        collective_reduce(x, 1, 0, 1, merge_op="Sum")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"final_op must be one of"):
        collective_reduce(x, 1, 0, 1, final_op="Mean")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"no collective group with group_key=987654 .*float32\[2\]"):
        collective_reduce(x, 2, 987654, 1).numpy()  # (a GPU's kernel reports it at the sync)

    class Doubling:  # a stand-in engine of two members that each hold the same value
        size = 2

        def all_reduce(self, arrays, op="sum"):
            return [a * 2 for a in arrays]
    key = register_group(Doubling())
    try:
        np.testing.assert_allclose(collective_reduce(x, 2, key, 1).numpy(), [2.0, 4.0])
        np.testing.assert_allclose(collective_reduce(x, 2, key, 2, final_op="Div").numpy(),
                                   [1.0, 2.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"has 2 members"):
            collective_reduce(x, 3, key, 3).numpy()
    finally:
        unregister_group(key)

    @tf.function(autograph=False)
    def f(v):
        tf.print(v)
        a = collective_reduce(v, 1, 0, 1)
        tf.print(a)
        b = collective_reduce(v * 2.0, 1, 0, 2)
        return a + b
    graph = f.get_concrete_function(x).graph
    ops = graph.get_operations()
    prints = [op for op in ops if op.type == "PrintV2"]
    coll = [op for op in ops if op.type == "CollectiveReduceV2"]
    assert len(prints) == 2 and len(coll) == 2
    assert coll[0] in coll[1].control_inputs and prints[0] in prints[1].control_inputs
    assert not any(p in c.control_inputs for p in prints for c in coll)
    assert not any(c in p.control_inputs for p in prints for c in coll)


def test_collective_reduce_overflow_is_silent_ieee():
    """The op is never re-run (its peers would wait for a second exchange), so its arithmetic
    gives IEEE results without a signal even where warnings are errors."""
    class Summing:
        size = 2

        def all_reduce(self, arrays, op="sum"):
            return [np.add(a, a) for a in arrays]
    key = register_group(Summing())
    try:
        with np.errstate(all="raise"):
            out = collective_reduce(tf.constant([3e38, 1.0], tf.float32), 2, key, 1)
        np.testing.assert_array_equal(out.numpy(), [np.inf, 2.0])
    finally:
        unregister_group(key)


# -- MultiWorkerMirroredStrategy in one process (goldens from TensorFlow 2.21) -------------------

def test_multi_worker_strategy_without_mpiexec_is_one_worker(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    s = tf.distribute.MultiWorkerMirroredStrategy()
    e = s.extended
    assert s.num_replicas_in_sync == 1 and e._in_multi_worker_mode() is False
    assert (e.should_checkpoint, e.should_save_summary, e.experimental_should_init) == \
        (True, True, True)
    resolver = s.cluster_resolver
    assert (resolver.task_type, resolver.task_id, resolver.cluster_spec().as_dict()) == \
        (None, None, {})
    assert tf.distribute.experimental.MultiWorkerMirroredStrategy is \
        tf.distribute.MultiWorkerMirroredStrategy
    with s.scope():
        v = tf.Variable([1.0, 2.0])
    assert isinstance(v, tf.distribute.MirroredVariable)
    assert s.reduce("SUM", s.run(lambda: v * 2.0), axis=None).numpy().tolist() == [2.0, 4.0]
    assert tf.distribute.MirroredStrategy(["/cpu:0"]).cluster_resolver is None


def test_communication_options_take_tensorflow_arguments():
    exp = tf.distribute.experimental
    impl = exp.CommunicationImplementation
    assert [m.name for m in impl] == ["AUTO", "RING", "NCCL"]
    o = exp.CommunicationOptions(timeout_seconds=5, implementation=impl.RING)
    assert (o.bytes_per_pack, o.timeout_seconds, o.implementation) == (0, 5, impl.RING)
    assert exp.CommunicationOptions(implementation="nccl").implementation is impl.NCCL
    with pytest.raises(ValueError, match=r"^Argument `bytes_per_pack` must be >=0, "
                                         r"Received -1\.$"):
        exp.CommunicationOptions(bytes_per_pack=-1)
    with pytest.raises(ValueError, match="'X' is not a valid CommunicationImplementation"):
        exp.CommunicationOptions(implementation="x")
    with pytest.raises(ValueError, match=r"^Argument `implementation` must be instance of "
                                         r"`tf.distribute.experimental."
                                         r"CommunicationImplementation`\.$"):
        exp.CommunicationOptions(implementation=3)
    with pytest.raises(ValueError, match=r"^communication_options must be an instance of "
                                         r"tf.distribute.experimental.CommunicationOptions$"):
        tf.distribute.MultiWorkerMirroredStrategy(communication_options=5)
    s = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=exp.CommunicationOptions(bytes_per_pack=1024))
    assert s.extended.bucket_bytes == 1024


def test_a_tf_config_cluster_without_mpi_processes_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"worker": ["localhost:1", "localhost:2"]},
        "task": {"type": "worker", "index": 0}}))
    with pytest.raises(ValueError, match="TF_CONFIG describes a cluster of 2 workers, but this "
                                         "process was not started as one of 2 MPI processes"):
        tf.distribute.MultiWorkerMirroredStrategy()


def test_multi_worker_strategy_from_two_local_devices_is_one_worker_of_two_replicas():
    out = run_scenario("""
        s = tf.distribute.MultiWorkerMirroredStrategy._from_local_devices(NAMES)
        data = tf.data.Dataset.range(8).batch(4)
        print([[t.numpy().tolist() for t in b.values]
               for b in s.experimental_distribute_dataset(data)])
        ids = s.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
        print(s.num_replicas_in_sync, list(ids.values))
        w, b, _, _ = train(s, tf.keras.optimizers.SGD, True)
        w1, b1, _, _ = train(tf.distribute.OneDeviceStrategy(NAMES[0]), tf.keras.optimizers.SGD,
                          True)
        np.testing.assert_allclose(w.values[1].numpy(), w1.numpy(), rtol=1e-5, atol=1e-6)
    """)
    assert out.splitlines() == ["[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]", "2 [0, 1]"]


def test_a_traced_step_over_a_distributed_dataset_traces_once_and_returns_per_replica():
    """A PerReplica argument keys the trace by its replicas' shapes and dtypes (TF's
    PerReplicaSpec), so a traced step over a distributed dataset traces once, not once per
    batch; a PerReplica returned from the function comes back as a PerReplica. Goldens from
    TensorFlow 2.21 on 2 logical CPUs (the same script)."""
    out = run_scenario("""
    import warnings
    warnings.simplefilter("error")  # no retracing warning
    s = tf.distribute.MirroredStrategy(NAMES)
    ds = s.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(
        np.arange(24, dtype=np.float32).reshape(12, 2)).batch(4))

    @tf.function
    def f(x):
        return s.run(lambda v: v * 2.0, (x,))

    @tf.function
    def g(x):
        return s.run(lambda v: (v * 2.0, {"a": v + 1.0}), (x,))

    @tf.function
    def h(x):
        return s.run(lambda v: 3, (x,))

    for x in ds:
        r = f(x)
    assert f.experimental_get_tracing_count() == 1, f.experimental_get_tracing_count()
    assert type(r).__name__ == "PerReplica" and type(x).__name__ == "PerReplica"
    assert not tf.is_tensor(x)
    # TF: PerReplicaSpec(TensorSpec(shape=(2, 2), dtype=tf.float32, name=None), <the same>)
    assert repr(x._type_spec).startswith("PerReplicaSpec(TensorSpec(shape=(2, 2)"), x._type_spec
    assert [v.numpy().tolist() for v in s.experimental_local_results(r)] == [
        [[32.0, 34.0], [36.0, 38.0]], [[40.0, 42.0], [44.0, 46.0]]]
    doubled, rest = g(x)
    assert type(doubled).__name__ == "PerReplica" and list(rest) == ["a"]
    assert [v.numpy().tolist() for v in rest["a"].values] == [
        [[17.0, 18.0], [19.0, 20.0]], [[21.0, 22.0], [23.0, 24.0]]]
    three = h(x)  # the same Python value on every replica: one tensor, as TF returns it
    assert tf.is_tensor(three) and int(three) == 3 and three.dtype == tf.int32
    assert int(s.reduce("SUM", f(x), axis=None).numpy().sum()) == 312
    # A batch of another shape (the last, partial one) traces once more, as in TF.
    smaller = next(iter(s.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices(np.ones((2, 2), np.float32)).batch(2))))
    assert [v.numpy().tolist() for v in f(smaller).values] == [[[2.0, 2.0]], [[2.0, 2.0]]]
    assert f.experimental_get_tracing_count() == 2
    print("ok")
    """)
    assert out.strip() == "ok"


def test_auto_shard_policy_defaults_to_auto_as_in_tf():
    """TF 2.21: `Options().experimental_distribute.auto_shard_policy` is
    `<AutoShardPolicy.AUTO: 0>` (an IntEnum), a dataset's options report it too, an int is a
    TypeError naming the enum, and a later `with_options` leaves a set policy in place."""
    policy = tf.data.experimental.AutoShardPolicy
    options = tf.data.Options()
    assert options.experimental_distribute.auto_shard_policy is policy.AUTO
    assert repr(options.experimental_distribute.auto_shard_policy) == "<AutoShardPolicy.AUTO: 0>"
    assert [repr(p) for p in policy] == ["<AutoShardPolicy.OFF: -1>", "<AutoShardPolicy.AUTO: 0>",
                                         "<AutoShardPolicy.FILE: 1>", "<AutoShardPolicy.DATA: 2>",
                                         "<AutoShardPolicy.HINT: 3>"]
    data = tf.data.Dataset.range(3)
    assert data.options().experimental_distribute.auto_shard_policy is policy.AUTO
    wording = (r"Property \"auto_shard_policy\" must be of type <enum 'AutoShardPolicy'>, "
               r"got: 2 \(type: <class 'int'>\)")
    with pytest.raises(TypeError, match=wording):
        options.experimental_distribute.auto_shard_policy = 2
    with pytest.raises(TypeError, match=r"Property \"num_devices\" must be of type <class 'int'>"):
        options.experimental_distribute.num_devices = 2.0
    options.experimental_distribute.auto_shard_policy = policy.OFF
    kept = data.with_options(options).with_options(tf.data.Options())
    assert kept.options().experimental_distribute.auto_shard_policy is policy.OFF


def test_loss_scaling_counts_the_strategys_replicas():
    """Without `global_batch_size`, `compute_average_loss` divides by this replica's batch times
    `num_replicas_in_sync` and `scale_regularization_loss` by `num_replicas_in_sync`;
    cross-replica context is TF's RuntimeError. Goldens: TensorFlow 2.21 on 2 logical CPUs
    (per replica [1, 2, 3, 4] gives 10 / 8 = 1.25; 2.0 regularization gives 1.0)."""
    out = run_scenario("""
    s = tf.distribute.MirroredStrategy(NAMES)
    r = s.run(lambda: (tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0, 4.0])),
                       tf.nn.scale_regularization_loss(tf.constant(2.0)),
                       tf.nn.compute_average_loss(tf.constant([1, 2, 3, 4])),
                       tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0, 4.0]),
                                                  global_batch_size=2)))
    print([[float(v) for v in s.experimental_local_results(x)] for x in r])

    @tf.function
    def traced():
        return s.run(lambda: tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0, 4.0])))
    print([float(v) for v in s.experimental_local_results(traced())])
    with s.scope():
        for fn, arg in [(tf.nn.compute_average_loss, tf.constant([1.0])),
                        (tf.nn.scale_regularization_loss, tf.constant(1.0))]:
            try:
                fn(arg)
            except RuntimeError as e:
                print(e)
    print(float(tf.nn.compute_average_loss(tf.constant([1.0, 2.0]))),
          float(tf.nn.scale_regularization_loss(3.0)))
    """)
    assert out.splitlines() == [
        "[[1.25, 1.25], [1.0, 1.0], [1.25, 1.25], [5.0, 5.0]]",
        "[1.25, 1.25]",
        "You are calling `compute_average_loss` in cross replica context, while it was expected "
        "to be called in replica context.",
        "You are calling `scale_regularization_loss` in cross replica context, while it was "
        "expected to be called in replica context.",
        "1.5 3.0"]


def test_input_options_place_and_replicate_as_tf_does():
    """`tf.distribute.InputOptions` (goldens from TF 2.21 on 2 logical CPUs): the repr, where
    each replica's part lives, PER_REPLICA's dataset function once per replica, and TF's
    errors."""
    out = run_scenario("""
        import json
        s = tf.distribute.MirroredStrategy(NAMES)
        O, R = tf.distribute.InputOptions, tf.distribute.InputReplicationMode
        res = {"repr": repr(O()), "modes": [m.value for m in R]}
        ds = tf.data.Dataset.range(8).batch(4)

        def first(d):
            x = next(iter(d))
            return [[t.device.split("device:")[-1] for t in x.values],
                    [t.numpy().tolist() for t in x.values]]
        res["fetch"] = first(s.experimental_distribute_dataset(ds, O()))
        res["host"] = first(s.experimental_distribute_dataset(
            ds, O(experimental_fetch_to_device=False)))
        try:
            s.experimental_distribute_dataset(ds, O(experimental_replication_mode=R.PER_REPLICA))
        except NotImplementedError as e:
            res["per_replica_error"] = str(e)
        contexts = []

        def fn(ctx):
            contexts.append([ctx.input_pipeline_id, ctx.num_input_pipelines,
                             ctx.num_replicas_in_sync])
            return tf.data.Dataset.range(8).batch(2)
        res["per_replica"] = first(s.distribute_datasets_from_function(
            fn, O(experimental_replication_mode=R.PER_REPLICA)))
        res["per_replica_host"] = first(s.distribute_datasets_from_function(
            fn, O(experimental_replication_mode=R.PER_REPLICA, experimental_fetch_to_device=False)))
        res["per_replica_placed"] = first(s.distribute_datasets_from_function(
            fn, O(experimental_replication_mode=R.PER_REPLICA, experimental_fetch_to_device=False,
                  experimental_place_dataset_on_device=True)))
        res["per_worker"] = first(s.distribute_datasets_from_function(fn))
        res["contexts"] = contexts
        try:
            s.distribute_datasets_from_function(fn, O(experimental_place_dataset_on_device=True,
                                                      experimental_fetch_to_device=False))
        except ValueError as e:
            res["placed_error"] = str(e)
        print(json.dumps(res))
    """)
    res = json.loads(out.strip().splitlines()[-1])
    assert res["repr"] == (
        "InputOptions(experimental_fetch_to_device=True, experimental_replication_mode="
        "<InputReplicationMode.PER_WORKER: 'PER_WORKER'>, experimental_place_dataset_on_device="
        "False, experimental_per_replica_buffer_size=1)")
    assert res["modes"] == ["PER_WORKER", "PER_REPLICA"]
    assert res["fetch"] == [["CPU:0", "CPU:1"], [[0, 1], [2, 3]]]
    assert res["host"] == [["CPU:0", "CPU:0"], [[0, 1], [2, 3]]]
    assert res["per_replica_error"] == ("InputReplicationMode.PER_REPLICA is only supported in "
                                        "`distribute_datasets_from_function`.")
    assert res["per_replica"] == [["CPU:0", "CPU:1"], [[0, 1], [0, 1]]]
    assert res["per_replica_host"] == [["CPU:0", "CPU:0"], [[0, 1], [0, 1]]]
    assert res["per_replica_placed"] == [["CPU:0", "CPU:1"], [[0, 1], [0, 1]]]
    assert res["per_worker"] == [["CPU:0", "CPU:1"], [[0, 1], [2, 3]]]
    # PER_REPLICA: one call per replica (ids 0, 1 of 2) three times; PER_WORKER: one call
    assert res["contexts"] == [[0, 2, 2], [1, 2, 2]] * 3 + [[0, 1, 2]]
    assert res["placed_error"] == (
        "When `experimental_place_dataset_on_device` is set for dataset placement, you must "
        "also specify `PER_REPLICA` for the replication mode")


def test_mirrored_strategy_over_devices_this_machine_lacks_places_softly():
    """TF 2.21 builds `MirroredStrategy(devices=["/gpu:0", "/gpu:1"])` on a machine without
    GPUs (the distributed-training guide does) and soft-places its work: two replicas whose
    variables and steps run where they can."""
    s = tf.distribute.MirroredStrategy(devices=["/gpu:5", "/gpu:6"])
    assert s.num_replicas_in_sync == 2
    with s.scope():
        v = tf.Variable(1.0)
    assert [c.numpy() for c in v.values] == [1.0, 1.0]
    doubled = s.run(lambda: v * 2.0)
    assert [t.numpy() for t in s.experimental_local_results(doubled)] == [2.0, 2.0]
    assert float(s.reduce("SUM", doubled, axis=None)) == 4.0


def test_worker_devices_are_tfs_canonical_names():
    """TensorFlow 2.21 (two logical CPUs): `extended.worker_devices` and `parameter_devices`
    are full device names; MirroredStrategy() with no GPU takes every logical CPU,
    MultiWorkerMirroredStrategy() without a cluster only the first."""
    out = run_scenario("""
        M, O = tf.distribute.MirroredStrategy, tf.distribute.OneDeviceStrategy
        print(M(["/cpu:0", "/cpu:1"]).extended.worker_devices)
        print(M(["/device:CPU:0"]).extended.worker_devices)
        print(M().extended.worker_devices)
        print(O("/cpu:1").extended.worker_devices)
        print(O("cpu:0").extended.worker_devices)
        print(tf.distribute.MultiWorkerMirroredStrategy().extended.worker_devices)
        print(M(["/cpu:0", "/cpu:1"]).extended.parameter_devices)
        s, seen = M(["/cpu:0", "/cpu:1"]), []
        s.run(lambda: seen.append(tf.distribute.get_replica_context().devices))
        print(tuple(seen))
    """, cpus_only=True)
    full = "/job:localhost/replica:0/task:0/device:"
    assert out.splitlines() == [
        f"('{full}CPU:0', '{full}CPU:1')", f"('{full}CPU:0',)",
        f"('{full}CPU:0', '{full}CPU:1')", f"('{full}CPU:1',)", f"('{full}CPU:0',)",
        f"('{full}CPU:0',)", f"('{full}CPU:0', '{full}CPU:1')",
        f"(('{full}CPU:0',), ('{full}CPU:1',))"]
