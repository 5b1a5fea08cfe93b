"""`eager.distribute.experimental.CentralStorageStrategy`: two compute devices with global batch
B train to the weights one device reaches with batch B (custom loops, eager and traced, and
Keras `fit`), with every variable kept once on the parameter device; device names, types,
reprs and errors as TensorFlow 2.21 gives them.

The goldens were recorded from TensorFlow 2.21 (CPU, two logical CPUs). TF names devices in
full ("/job:localhost/replica:0/task:0/device:CPU:0"); eager's `.device` of a tensor or
variable is the short name ("CPU:0") throughout, so those goldens are compared by their short
form. `strategy.extended.worker_devices` and `parameter_devices` are TF's strings exactly.
Scenarios with two devices run in a fresh process so they can configure their devices."""

import pytest

import eager as tf
from distribute_scripts import run_scenario
from eager.distribute.experimental import CentralStorageStrategy

FULL = "/job:localhost/replica:0/task:0/device:"

_PRELUDE = """
import os, tempfile
from eager import keras
CS = tf.distribute.experimental.CentralStorageStrategy
FULL = "/job:localhost/replica:0/task:0/device:"
KIND = DEVICES.upper()

def expect_error(cls, words, fn):
    try:
        fn()
    except cls as e:
        assert words in str(e), str(e)
    else:
        raise AssertionError(f"no {cls.__name__}")
"""


def _run(body, devices="cpu"):
    out = run_scenario(body, devices, prelude=_PRELUDE, timeout_s=600)
    assert out.strip().endswith("ok"), out[-2000:]


# TF 2.21, CentralStorageStrategy(["/cpu:0", "/cpu:1"]), `distribute_scripts.SETUP`'s `train`,
# eager and traced alike: (w, b, last summed loss).
TF_TRAINED = {
    "SGD": ([0.13034629821777344, 0.13245685398578644, 0.18812747299671173],
            [-0.5220690369606018], 0.3113024830818176),
    "Adam": ([0.46329671144485474, 0.43767550587654114, 0.44182896614074707],
             [-0.49751681089401245], 0.8725172877311707),
}


@pytest.mark.parametrize("devices", ["cpu", "gpu"])
@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_two_compute_devices_match_one_device(devices, opt):
    w_tf, b_tf, loss_tf = TF_TRAINED[opt]
    _run(f"""
        for traced in (False, True):
            s = CS(NAMES)
            w2, b2, l2, opt2 = train(s, tf.keras.optimizers.{opt}, traced)
            w1, b1, l1, _ = train(tf.distribute.OneDeviceStrategy(NAMES[0]),
                                  tf.keras.optimizers.{opt}, traced)
            # one central copy (CPU:0, TF's parameter device for several compute devices)
            assert type(w2).__name__ == "AggregatingVariable", type(w2)
            assert len(w2.values) == 1 and w2.device == "CPU:0", (w2.values, w2.device)
            np.testing.assert_allclose(w2.numpy(), w1.numpy(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(b2.numpy(), b1.numpy(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(l2.numpy(), l1.numpy(), rtol=1e-5)
            np.testing.assert_allclose(w2.numpy().ravel(), {w_tf!r}, rtol=1e-5)
            np.testing.assert_allclose(b2.numpy(), {b_tf!r}, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(float(l2), {loss_tf!r}, rtol=1e-5)
            # slots and iterations are central too (TF: AggregatingVariables on CPU:0);
            # the update ran once per step
            assert all(type(v).__name__ == "AggregatingVariable" and v.device == "CPU:0"
                       for v in opt2.variables), opt2.variables
            assert int(opt2.iterations.numpy()) == 6
        print("ok")
    """, devices)


def test_placement_names_reprs_and_errors_as_tf():
    _run("""
        s = CS(NAMES)
        # TF 2.21: canonical compute devices, the parameter device as TF spells it
        assert s.extended.worker_devices == (FULL + "CPU:0", FULL + "CPU:1"), \\
            s.extended.worker_devices
        assert s.extended.parameter_devices == ("/device:CPU:0",)
        assert s.extended.worker_devices_by_replica == [[FULL + "CPU:0"], [FULL + "CPU:1"]]
        assert s.num_replicas_in_sync == 2
        with s.scope():
            v = tf.Variable(1.0, name="v")
            w = tf.Variable([[1.0, 2.0]], name="w")
            anon = tf.Variable(3.0)
            m = tf.Variable(0.0, aggregation=tf.VariableAggregation.MEAN)
            total = tf.Variable(0.0, aggregation=tf.VariableAggregation.SUM)
            first = tf.Variable(0.0, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
            unsynced = tf.Variable(1.0, synchronization=tf.VariableSynchronization.NONE)
            on_read = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ,
                                  aggregation=tf.VariableAggregation.MEAN)
        # TF: AggregatingVariable, repr/str of the wrapped variable:
        #   <tf.Variable 'v:0' shape=() dtype=float32, numpy=1.0>; device .../device:CPU:0
        assert type(v).__name__ == "AggregatingVariable" and isinstance(v, tf.Variable)
        assert repr(v) == str(v) == "<eager.Variable 'v:0' shape=() dtype=float32, numpy=1.0>"
        assert repr(w).startswith("<eager.Variable 'w:0' shape=(1, 2) dtype=float32"), repr(w)
        assert v.name == "v:0" and anon.name == "Variable:0", (v.name, anon.name)
        assert v.device == "CPU:0" and type(v.get()).__name__ == "ResourceVariable"
        assert str(v.aggregation) == "VariableAggregation.NONE"
        assert str(v.synchronization) == "VariableSynchronization.AUTO"
        assert type(unsynced).__name__ == "AggregatingVariable"
        assert str(unsynced.synchronization) == "VariableSynchronization.NONE"
        assert s.experimental_local_results(v) == (v,)
        # cross-replica writes: the one copy
        assert repr(v.assign_add(1.0)) == \\
            "<eager.Variable 'UnreadVariable' shape=() dtype=float32, numpy=2.0>"
        assert float(v.assign_sub(0.5)) == 1.5 and v.assign(2.0, read_value=False) is None
        # every replica reads the central copy; its result stays on the replica's device
        r = s.run(lambda: v * 2.0)
        assert repr(r).startswith("PerReplica:{"), repr(r)
        assert [float(t) for t in s.experimental_local_results(r)] == [4.0, 4.0]
        assert [t.device for t in s.experimental_local_results(r)] == [KIND + ":0", KIND + ":1"]
        assert s.run(lambda: v.device) == "CPU:0"
        # replica-context writes: TF's aggregation rules
        expect_error(ValueError, "You must specify an aggregation method to update a "
                     "AggregatingVariable in Replica Context.",
                     lambda: s.run(lambda: v.assign(5.0)))
        rid = lambda: tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group,
                              tf.float32)
        s.run(lambda: m.assign(rid()))
        s.run(lambda: total.assign_add(1.0 + rid()))
        s.run(lambda: first.assign(7.0 + rid()))
        s.run(lambda: on_read.assign_add(1.0 + rid()))
        # TF: 0.5, 3.0, 7.0, 1.5
        assert [float(x) for x in (m, total, first, on_read)] == [0.5, 3.0, 7.0, 1.5]
        # TF: the same Python value on every replica cannot be summed
        expect_error(ValueError, "A non-DistributedValues value 1.0 cannot be reduced with the "
                     "given reduce op ReduceOp.SUM.", lambda: s.run(lambda: total.assign_add(1.0)))
        expect_error(ValueError, "A non-DistributedValues value 1.0 cannot be reduced",
                     lambda: tf.function(lambda: s.run(lambda: total.assign_add(1.0)))())
        # reduce, gather, all_reduce, merge_call as MirroredStrategy's (TF's values)
        pr = s.run(lambda: tf.ones([2, 3]) * (rid() + 1.0))
        assert s.reduce("SUM", pr, axis=None).numpy().tolist() == [[3.0] * 3] * 2
        assert s.reduce("SUM", pr, axis=None).device == "CPU:0"
        assert s.reduce("MEAN", pr, axis=0).numpy().tolist() == [1.5] * 3
        # TF: "A non-DistributedValues value tf.Tensor(1.0, shape=(), dtype=float32) cannot be
        # reduced with the given reduce op ReduceOp.SUM." (eager's str of a tensor differs)
        expect_error(ValueError, "cannot be reduced with the given reduce op ReduceOp.SUM.",
                     lambda: s.reduce("SUM", tf.constant(1.0), axis=None))
        g = s.gather(pr, axis=0)
        assert g.numpy().tolist() == [[1.0] * 3] * 2 + [[2.0] * 3] * 2 and g.device == "CPU:0"
        summed = s.run(lambda: tf.distribute.get_replica_context().all_reduce("SUM", rid() + 1.0))
        assert [float(t) for t in s.experimental_local_results(summed)] == [3.0, 3.0]
        assert [t.device for t in s.experimental_local_results(summed)] == [KIND + ":0",
                                                                          KIND + ":1"]
        merged = s.run(lambda: tf.distribute.get_replica_context().merge_call(
            lambda st, x: st.reduce("SUM", x, axis=None), args=(tf.constant(2.0),)))
        assert [float(t) for t in s.experimental_local_results(merged)] == [4.0]
        ds = s.experimental_distribute_dataset(tf.data.Dataset.range(8).batch(8))
        parts = s.experimental_local_results(next(iter(ds)))
        assert [p.numpy().tolist() for p in parts] == [[0, 1, 2, 3], [4, 5, 6, 7]]
        assert [p.device for p in parts] == [KIND + ":0", KIND + ":1"]
        dd = s.distribute_datasets_from_function(
            lambda c: tf.data.Dataset.range(8).batch(c.get_per_replica_batch_size(8)))
        assert [p.numpy().tolist() for p in s.experimental_local_results(next(iter(dd)))] == \\
            [[0, 1, 2, 3], [4, 5, 6, 7]]
        assert repr(s.experimental_distribute_values_from_function(
            lambda c: c.replica_id_in_sync_group)) == "PerReplica:{\\n  0: 0,\\n  1: 1\\n}"
        # a given parameter device (TF keeps its spelling); soft placement of a missing one
        s2 = CS(NAMES, parameter_device="/cpu:1" if KIND == "CPU" else "/gpu:1")
        assert s2.extended.parameter_devices == (("/cpu:1",) if KIND == "CPU" else ("/gpu:1",))
        with s2.scope():
            v2 = tf.Variable(1.0)
        assert type(v2).__name__ == "AggregatingVariable" and v2.device == KIND + ":1"
        with CS(NAMES, parameter_device="/cpu:7").scope():
            assert tf.Variable(1.0).device == "CPU:0"
        # one compute device: TF's plain variable on it, the device canonical
        s4 = CS([NAMES[1]])
        assert s4.extended.worker_devices == (FULL + KIND + ":1",)
        assert s4.extended.parameter_devices == (FULL + KIND + ":1",)
        with s4.scope():
            v4 = tf.Variable(1.0)
        assert type(v4).__name__ == "ResourceVariable" and v4.device == KIND + ":1"
        # TF: a bad parameter device name is a ValueError when the first variable is made
        bad = CS(NAMES, parameter_device="nonsense")
        def make():
            with bad.scope():
                tf.Variable(1.0)
        expect_error(ValueError, "nonsense", make)
        # TF: mixing strategies' scopes is a RuntimeError
        def mix():
            with s.scope():
                with tf.distribute.MirroredStrategy(NAMES).scope():
                    pass
        expect_error(RuntimeError, "Mixing different tf.distribute.Strategy objects", mix)
        # checkpoints: the central variable restores into a one-device variable and back
        d = tempfile.mkdtemp()
        with s.scope():
            c = tf.Variable([1.0, 2.0], name="c")
        path = tf.train.Checkpoint(v=c).save(os.path.join(d, "ck"))
        # TF: [('_CHECKPOINTABLE_OBJECT_GRAPH', []), ('save_counter/...', []),
        #      ('v/.ATTRIBUTES/VARIABLE_VALUE', [2])]
        assert ("v/.ATTRIBUTES/VARIABLE_VALUE", [2]) in \\
            [(k, list(sh)) for k, sh in tf.train.list_variables(path)]
        plain = tf.Variable([0.0, 0.0])
        tf.train.Checkpoint(v=plain).restore(path)
        assert plain.numpy().tolist() == [1.0, 2.0]
        plain.assign([5.0, 6.0])
        tf.train.Checkpoint(v=c).restore(tf.train.Checkpoint(v=plain).save(os.path.join(d, "p")))
        assert c.numpy().tolist() == [5.0, 6.0] and c.device == "CPU:0"
        print("ok")
    """)


def test_simulated_gpus_are_the_default_compute_devices():
    _run("""
        s = CS()  # TF: every GPU computes, the CPU holds the variables
        assert s.extended.worker_devices == (FULL + "GPU:0", FULL + "GPU:1")
        assert s.extended.parameter_devices == ("/device:CPU:0",)
        with s.scope():
            v = tf.Variable(2.0)
        assert type(v).__name__ == "AggregatingVariable" and v.device == "CPU:0"
        r = s.run(lambda: v * 3.0)
        assert [t.device for t in s.experimental_local_results(r)] == ["GPU:0", "GPU:1"]
        assert float(s.reduce("SUM", r, axis=None)) == 12.0
        print("ok")
    """, "gpu")


# TF 2.21 Keras 3 (`fit` below under CentralStorageStrategy(["/cpu:0", "/cpu:1"])): weights and
# `predict(X[:4])`; the one-device fit ends at the same weights.
TF_FIT_WEIGHTS = [[0.8280225396156311, 0.8280225396156311, 0.8142049908638, 0.8142049908638,
                   0.8038238286972046, 0.8038238286972046],
                  [-0.18135479092597961, -0.18135479092597961],
                  [0.8197876811027527, 0.8197876811027527], [-0.18920168280601501]]
TF_PREDICT = [3.732438564300537, 3.7608160972595215, 0.46520909667015076, 2.1798057556152344]


def test_keras_fit_matches_one_device_and_tf():
    _run(f"""
        def fit(strategy, eager):
            with strategy.scope():
                model = keras.Sequential([
                    keras.Input((3,)),
                    keras.layers.Dense(2, kernel_initializer="ones", activation="relu"),
                    keras.layers.Dense(1, kernel_initializer="ones")])
                model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse",
                              metrics=["mae"], run_eagerly=eager)
            history = model.fit(X, Y, batch_size=8, epochs=2, shuffle=False, verbose=0)
            return model, history

        one, h1 = fit(tf.distribute.OneDeviceStrategy(NAMES[0]), False)
        for eager in (False, True):
            s = CS(NAMES)
            two, h2 = fit(s, eager)
            assert two.distribute_strategy is s
            # TF: weights, slots, iterations and metric variables are AggregatingVariables
            # on the parameter device (TF wraps them in a Keras Variable; eager's weight is the
            # strategy's variable with the Keras variable inside, as under MirroredStrategy)
            state = two.weights + two.optimizer.variables + [
                v for m in two.metrics for v in m.variables]
            assert all(type(v).__name__ == "AggregatingVariable" and v.device == "CPU:0"
                       for v in state), state
            assert two.weights[0].path.endswith("/kernel")
            for a, b in zip(one.get_weights(), two.get_weights()):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
            for w, t in zip(two.weights, {TF_FIT_WEIGHTS!r}):
                np.testing.assert_allclose(w.numpy().ravel(), t, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(two.predict(X[:4], verbose=0).ravel(), {TF_PREDICT!r},
                                       rtol=1e-5)
            for key in ("loss", "mae"):
                np.testing.assert_allclose(h1.history[key], h2.history[key], rtol=1e-5)
            mse = float(np.mean((two.predict(X, verbose=0) - Y) ** 2))
            np.testing.assert_allclose(two.evaluate(X, Y, batch_size=8, verbose=0)[0], mse,
                                       rtol=1e-5)
            assert int(two.optimizer.iterations.numpy()) == 4
            # weights round-trip with a one-device model
            path = os.path.join(tempfile.mkdtemp(), "w.weights.h5")
            two.save_weights(path)
            one.load_weights(path)
            for a, b in zip(one.get_weights(), two.get_weights()):
                np.testing.assert_array_equal(a, b)
        print("ok")
    """)


def test_one_default_compute_device_makes_plain_variables():
    """On one device (the CPU, or the GPU where the suite runs on a simulated one) TF's
    defaults: that device computes and holds the variables, which are not wrapped."""
    gpus = tf.config.list_logical_devices("GPU")
    s = CentralStorageStrategy()
    if len(gpus) > 1:
        pytest.skip("this machine has several GPUs")
    kind = "GPU" if gpus else "CPU"
    assert s.extended.worker_devices == (FULL + kind + ":0",)
    assert s.extended.parameter_devices == (FULL + kind + ":0",)
    assert s.num_replicas_in_sync == 1
    with s.scope():
        v = tf.Variable(1.0, name="v3")
    assert type(v).__name__ == "ResourceVariable" and v.device == kind + ":0"
    where = ", device=GPU:0" if gpus else ""  # eager's repr names a device other than CPU:0
    assert repr(v) == f"<eager.Variable 'v3:0' shape=() dtype=float32{where}, numpy=1.0>"
    assert float(s.run(lambda: v + 1.0)) == 2.0
    with s.scope():
        opt = tf.keras.optimizers.SGD(0.5)
    s.run(lambda: opt.apply_gradients([(tf.constant(2.0), v)]))
    assert float(v) == 0.0


@pytest.mark.parametrize("name", ["/foo:0", "nonsense"])
def test_bad_compute_device_names_are_value_errors(name):
    # TF 2.21: ValueError "Unknown attribute 'foo' is encountered while parsing the device
    # spec: '/foo:0'." (eager's parser words it its own way, naming the spec)
    with pytest.raises(ValueError, match=name):
        CentralStorageStrategy([name])
