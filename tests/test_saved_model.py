"""`eager.saved_model` and `eager.train.load_checkpoint`: round trips, loading in a fresh process
without the defining code, fine-tuning and re-saving loaded models, and hostile or damaged
directories. Goldens (names, output keys, error wording) were recorded from TensorFlow 2.21."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import eager as tf
from eager.saved_model import layout

ROOT = pathlib.Path(__file__).resolve().parents[1]


class MLP(tf.Module):
    def __init__(self, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.w1 = tf.Variable(rng.normal(size=(4, 8)).astype(np.float32), name="w1")
        self.b1 = tf.Variable(rng.normal(size=(8,)).astype(np.float32), name="b1")
        self.w2 = tf.Variable(rng.normal(size=(8, 3)).astype(np.float32), name="w2")
        self.step = tf.Variable(0, trainable=False, name="step")

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def __call__(self, x):
        h = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
        return tf.matmul(h, self.w2) * 0.5

    @tf.function
    def scaled(self, x, factor=2.0, training=False):
        y = x * factor
        return {"y": y, "sum": tf.reduce_sum(y), "training": training} if training else y - 1.0


def _x(n=5, seed=1):
    return tf.constant(np.random.default_rng(seed).normal(size=(n, 4)).astype(np.float32))


def _assert_same(a, b):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# -- round trips ---------------------------------------------------------------------------------
def test_a_module_round_trips_with_its_functions_signature_and_variables(tmp_path):
    m = MLP()
    m.scaled(tf.constant(3.0))
    m.scaled(tf.constant([1.0, 2.0]), training=True)
    tf.saved_model.save(m, str(tmp_path / "m"))
    assert tf.saved_model.contains_saved_model(str(tmp_path / "m"))
    assert not tf.saved_model.contains_saved_model(str(tmp_path / "nothing"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    x = _x()
    _assert_same(loaded(x), m(x))
    _assert_same(loaded.__call__(x), m(x))
    _assert_same(loaded.scaled(tf.constant(4.0)), m.scaled(tf.constant(4.0)))
    out = loaded.scaled(tf.constant([1.0, 5.0]), training=True)
    assert sorted(out) == ["sum", "training", "y"] and bool(out["training"])
    _assert_same(out["y"], [2.0, 10.0])
    # Variables come back with their values, names, trainability.
    by_name = {v.name: v for v in loaded.variables}
    assert sorted(by_name) == ["b1:0", "step:0", "w1:0", "w2:0"]
    _assert_same(by_name["w1:0"], m.w1)
    assert not loaded.step.trainable and loaded.w1.trainable
    # TF: a restored function keeps its input_signature (None without one).
    assert loaded.__call__.input_signature == (tf.TensorSpec([None, 4], tf.float32),)
    assert loaded.scaled.input_signature is None


def test_the_serving_signature_is_a_dict_function_with_keyword_inputs_as_tf(tmp_path):
    m = MLP()
    tf.saved_model.save(m, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY == "serving_default"
    assert list(loaded.signatures) == ["serving_default"]
    serving = loaded.signatures["serving_default"]
    # TF 2.21: ((), {'x': TensorSpec(shape=(None, 1), dtype=tf.float32, name='x')}) and
    # {'output_0': TensorSpec(...)} for a function returning one tensor.
    args, kwargs = serving.structured_input_signature
    assert args == () and list(kwargs) == ["x"] and kwargs["x"].name == "x"
    x = _x()
    out = serving(x=x)
    assert list(out) == ["output_0"]
    _assert_same(out["output_0"], m(x))
    _assert_same(serving(x)["output_0"], m(x))  # TF accepts the tensors positionally too


def test_signatures_given_as_a_dict_name_outputs_as_tf(tmp_path):
    class P(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([2], tf.float32, name="inp")])
        def pair(self, x):
            return x, x + 1

        @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
        def named(self, x):
            return {"double": x * 2, "neg": -x}

    p = P()
    tf.saved_model.save(p, str(tmp_path / "p"),
                        signatures={"sig": p.pair, "sig2": p.named.get_concrete_function()})
    loaded = tf.saved_model.load(str(tmp_path / "p"))
    assert sorted(loaded.signatures) == ["sig", "sig2"]
    sig = loaded.signatures["sig"]
    # TF 2.21: {'output_0', 'output_1'}, inputs named by the spec's name 'inp'.
    assert list(sig.structured_input_signature[1]) == ["inp"]
    out = sig(inp=tf.constant([1.0, 2.0]))
    assert sorted(out) == ["output_0", "output_1"]
    _assert_same(out["output_1"], [2.0, 3.0])
    out2 = loaded.signatures["sig2"](x=tf.constant([1.0, 2.0]))
    assert sorted(out2) == ["double", "neg"]
    _assert_same(out2["neg"], [-1.0, -2.0])


def test_nested_modules_lists_and_shared_variables_keep_their_structure(tmp_path):
    class Dense(tf.Module):
        def __init__(self, w):
            super().__init__()
            self.w = w

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
        def __call__(self, x):
            return tf.matmul(x, self.w)

    shared = tf.Variable([[1.0, 2.0], [3.0, 4.0]])

    class Net(tf.Module):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(shared), Dense(tf.Variable(tf.eye(2) * 3.0))]
            self.alias = Dense(shared)
            self.table = {"bias": tf.Variable([0.5, -0.5])}

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x + self.table["bias"]

    net = Net()
    tf.saved_model.save(net, str(tmp_path / "n"))
    loaded = tf.saved_model.load(str(tmp_path / "n"))
    x = tf.constant([[1.0, 1.0]])
    _assert_same(loaded(x), net(x))
    _assert_same(loaded.layers[1](x), net.layers[1](x))
    assert len(loaded.layers) == 2 and "bias" in loaded.table
    # One variable, reachable by two paths, is one restored variable.
    assert loaded.layers[0].w is loaded.alias.w
    loaded.alias.w.assign([[0.0, 0.0], [0.0, 1.0]])
    _assert_same(loaded.layers[0](x), [[0.0, 1.0]])
    assert len(loaded.trainable_variables) == 3


def test_a_keras_sequential_model_saves_through_a_signature_function(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"),
                                 tf.keras.layers.Dense(2)])
    x = _x(3)
    expected = model(x)
    serve = tf.function(lambda inputs: model(inputs),
                        input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    tf.saved_model.save(model, str(tmp_path / "k"), signatures=serve)
    loaded = tf.saved_model.load(str(tmp_path / "k"))
    out = loaded.signatures["serving_default"](inputs=x)
    np.testing.assert_allclose(out["output_0"], expected, rtol=1e-6)


def test_a_loaded_model_can_be_saved_again_and_reloaded(tmp_path):
    m = MLP()
    m.scaled(tf.constant(3.0))
    tf.saved_model.save(m, str(tmp_path / "a"))
    first = tf.saved_model.load(str(tmp_path / "a"))
    first.w1.assign_add(tf.ones([4, 8]))
    tf.saved_model.save(first, str(tmp_path / "b"))
    second = tf.saved_model.load(str(tmp_path / "b"))
    x = _x()
    _assert_same(second(x), first(x))
    _assert_same(second.scaled(tf.constant(2.0)), m.scaled(tf.constant(2.0)))
    assert list(second.signatures) == ["serving_default"]
    _assert_same(second.signatures["serving_default"](x=x)["output_0"], first(x))


def test_saving_over_a_directory_replaces_it_whole(tmp_path):
    target = tmp_path / "m"
    tf.saved_model.save(MLP(seed=0), str(target))
    (target / "stale.txt").write_text("old")
    m = MLP(seed=5)
    tf.saved_model.save(m, str(target))
    assert not (target / "stale.txt").exists()
    _assert_same(tf.saved_model.load(str(target))(_x()), m(_x()))
    assert sorted(os.listdir(tmp_path)) == ["m"]  # no temporary directories left


# -- fine-tuning ---------------------------------------------------------------------------------
def _sgd_step(model, variables, x, target):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - target) ** 2)
    grads = tape.gradient(loss, variables)
    tf.keras.optimizers.SGD(0.1).apply_gradients(zip(grads, variables))
    return loss, grads


def test_gradients_flow_through_restored_functions_and_fine_tuning_matches(tmp_path):
    m = MLP()
    tf.saved_model.save(m, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    x, target = _x(6), tf.constant(np.ones((6, 3), np.float32))
    original = [m.w1, m.b1, m.w2]
    restored = [loaded.w1, loaded.b1, loaded.w2]
    loss_a, grads_a = _sgd_step(m, original, x, target)
    loss_b, grads_b = _sgd_step(loaded, restored, x, target)
    _assert_same(loss_a, loss_b)
    for a, b in zip(grads_a, grads_b):
        assert b is not None
        _assert_same(a, b)
    for a, b in zip(original, restored):
        _assert_same(a, b)
    # Trainable variables are watched automatically, as for any function call.
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(loaded(x))
    assert all(g is not None for g in tape.gradient(y, loaded.trainable_variables))


# -- a fresh process without the defining code ---------------------------------------------------
def test_a_fresh_process_without_the_source_loads_and_fine_tunes(tmp_path):
    m = MLP()
    tf.saved_model.save(m, str(tmp_path / "m"))
    x = _x(4)
    np.save(tmp_path / "x.npy", x.numpy())
    script = textwrap.dedent(f"""
        import sys, numpy as np
        assert "tests" not in sys.modules and "test_saved_model" not in sys.modules
        import eager as tf
        loaded = tf.saved_model.load({str(tmp_path / "m")!r})
        x = tf.constant(np.load({str(tmp_path / "x.npy")!r}))
        np.save({str(tmp_path / "y.npy")!r}, loaded(x).numpy())
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(loaded.signatures["serving_default"](x=x)["output_0"])
        g = tape.gradient(loss, loaded.w1)
        np.save({str(tmp_path / "g.npy")!r}, g.numpy())
        tf.saved_model.save(loaded, {str(tmp_path / "again")!r})
        print(type(loaded).__name__)
        """)
    done = subprocess.run([sys.executable, "-c", script], cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "_UserObject"
    _assert_same(np.load(tmp_path / "y.npy"), m(x))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(m(x))
    _assert_same(np.load(tmp_path / "g.npy"), tape.gradient(loss, m.w1))
    _assert_same(tf.saved_model.load(str(tmp_path / "again"))(x), m(x))


# -- what cannot be saved ------------------------------------------------------------------------
def test_an_untracked_captured_variable_is_tfs_assertion_error(tmp_path):
    outside = tf.Variable(2.0)

    class N(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def g(self, x):
            return x * outside

    with pytest.raises(AssertionError, match="references an 'untracked' resource"):
        tf.saved_model.save(N(), str(tmp_path / "n"))
    assert not (tmp_path / "n").exists()


def test_bad_signatures_and_options_are_tfs_errors(tmp_path):
    m = MLP()
    m.scaled(tf.constant(1.0))
    # TF 2.21's words.
    with pytest.raises(ValueError, match="Expected a TensorFlow function for which to generate a "
                       "signature, but got 3. Only `tf.functions` with an input signature or "
                       "concrete functions can be used as a signature."):
        tf.saved_model.save(m, str(tmp_path / "a"), signatures=3)
    with pytest.raises(ValueError, match="Expected a TensorFlow function"):
        tf.saved_model.save(m, str(tmp_path / "a"), signatures=m.scaled)
    with pytest.raises(NotImplementedError, match="save_debug_info"):
        tf.saved_model.save(m, str(tmp_path / "a"),
                            options=tf.saved_model.SaveOptions(save_debug_info=True))
    tf.saved_model.save(m, str(tmp_path / "a"), options=tf.saved_model.SaveOptions())
    with pytest.raises(NotImplementedError, match="allow_partial_checkpoint"):
        tf.saved_model.load(str(tmp_path / "a"),
                            options=tf.saved_model.LoadOptions(allow_partial_checkpoint=True))
    with pytest.raises(ValueError, match="Expected an object of type `Trackable`"):
        tf.saved_model.save(3, str(tmp_path / "b"))


def test_a_graph_the_format_cannot_hold_fails_before_writing(tmp_path):
    class Py(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def f(self, x):
            return tf.py_function(lambda a: a * 2, [x], tf.float32)

    target = tmp_path / "m"
    tf.saved_model.save(MLP(), str(target))
    with pytest.raises(ValueError, match="cannot"):
        tf.saved_model.save(Py(), str(target))
    assert sorted(os.listdir(tmp_path)) == ["m"]
    tf.saved_model.load(str(target))  # the earlier model is intact


def test_calls_no_trace_fits_are_tfs_value_error(tmp_path):
    m = MLP()
    m.scaled(tf.constant(1.0))
    tf.saved_model.save(m, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    with pytest.raises(ValueError, match="Could not find matching concrete function to call "
                       "loaded from the SavedModel"):
        loaded.scaled(tf.constant("a"))
    # An input_signature mismatch is the original's TypeError (TF 2.21's words).
    with pytest.raises(TypeError, match="Binding inputs to tf.function failed due to `Can not "
                       r"cast TensorSpec\(shape=\(1, 2\)"):
        loaded(tf.constant([[1.0, 2.0]]))


# -- hostile and damaged directories ---------------------------------------------------------------
def _saved(tmp_path):
    m = MLP()
    path = tmp_path / "m"
    tf.saved_model.save(m, str(path))
    return path


def _rewrite(path, change):
    """Changes the model JSON and seals it again, so that only validation can catch it."""
    raw = (path / layout.MODEL_FILE).read_bytes()
    meta = json.loads(raw[:raw.rindex(b"\neager.saved_model sha256:")])
    change(meta)
    (path / layout.MODEL_FILE).write_bytes(layout.encode_model(meta))


def _first_op(meta, op_type):
    return next(op for op in meta["concrete_functions"][0]["graph"]["ops"] if op["op"] == op_type)


def test_an_unregistered_op_name_is_not_found_and_nothing_runs(tmp_path):
    path = _saved(tmp_path)
    marker = tmp_path / "ran"

    def change(meta):
        op = _first_op(meta, "Relu")
        op["op"] = "os.system"
        op["attrs"] = {"command": {"s": f"touch {marker}"}}
    _rewrite(path, change)
    with pytest.raises(tf.errors.NotFoundError, match="Op type not registered 'os.system'"):
        tf.saved_model.load(str(path))
    assert not marker.exists()


@pytest.mark.parametrize("attr", [
    {"pickle": "gASVIQAAAAAAAACMBXBvc2l4lIwGc3lzdGVtlJOUjAVlY2hvIJSFlFKULg=="},
    {"py_object": "os.system"},
    {"b": "true"},
    {"i": 1 << 70},
    {"b": True, "i": 1},
])
def test_an_attribute_that_is_not_a_typed_value_is_data_loss(tmp_path, attr):
    path = _saved(tmp_path)

    def change(meta):
        _first_op(meta, "MatMul")["attrs"]["transpose_a"] = attr
    _rewrite(path, change)
    with pytest.raises(tf.errors.DataLossError, match="transpose_a"):
        tf.saved_model.load(str(path))


def test_a_huge_claimed_shape_is_refused_before_allocation(tmp_path):
    path = _saved(tmp_path)

    def change(meta):
        graph = meta["concrete_functions"][0]["graph"]
        graph["ops"].append({"name": "Huge", "op": "Zeros", "inputs": [], "control": [],
                             "device": "", "outputs": [["float32", [1 << 30, 1 << 30]]],
                             "attrs": {"shape": {"tuple": [{"i": 1 << 30}, {"i": 1 << 30}]},
                                       "dtype": {"dtype": "float32"}}})
    _rewrite(path, change)
    with pytest.raises(tf.errors.DataLossError, match="elements"):
        tf.saved_model.load(str(path))


def test_a_constant_whose_data_is_short_or_mistyped_is_data_loss(tmp_path):
    path = _saved(tmp_path)

    def truncate(meta):
        c = meta["constants"][0]
        c["shape"] = [1000]  # claims far more than its bytes hold
    _rewrite(path, truncate)
    with pytest.raises(tf.errors.DataLossError, match="constant 0"):
        tf.saved_model.load(str(path))


def test_recorded_types_that_inference_contradicts_are_data_loss(tmp_path):
    path = _saved(tmp_path)

    def change(meta):
        _first_op(meta, "MatMul")["outputs"] = [["float64", [None, 8]]]
    _rewrite(path, change)
    with pytest.raises(tf.errors.DataLossError, match="MatMul"):
        tf.saved_model.load(str(path))


def test_attribute_names_that_would_replace_machinery_are_refused(tmp_path):
    path = _saved(tmp_path)

    def change(meta):
        meta["objects"][0]["functions"] = {"__class__": 0}
    _rewrite(path, change)
    with pytest.raises(tf.errors.DataLossError, match="__class__"):
        tf.saved_model.load(str(path))


def test_truncated_or_changed_files_are_data_loss(tmp_path):
    path = _saved(tmp_path)
    model = path / layout.MODEL_FILE
    raw = model.read_bytes()
    model.write_bytes(raw[:len(raw) // 2])
    with pytest.raises(tf.errors.DataLossError, match="damaged"):
        tf.saved_model.load(str(path))
    model.write_bytes(raw.replace(b'"MatMul"', b'"MatMuk"', 1))
    with pytest.raises(tf.errors.DataLossError, match="SHA-256"):
        tf.saved_model.load(str(path))
    model.write_bytes(raw)
    variables = path / "variables" / "variables"
    data = bytearray(variables.read_bytes())
    data[40] ^= 1
    variables.write_bytes(bytes(data))
    with pytest.raises(tf.errors.DataLossError):
        tf.saved_model.load(str(path))


def test_a_variables_file_from_another_save_is_data_loss(tmp_path):
    path = _saved(tmp_path)
    other = tmp_path / "other"
    tf.saved_model.save(MLP(seed=9), str(other))
    (path / "variables" / "variables").write_bytes(
        (other / "variables" / "variables").read_bytes())
    with pytest.raises(tf.errors.DataLossError, match="does not belong"):
        tf.saved_model.load(str(path))


def test_missing_files_are_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="SavedModel file does not exist at"):
        tf.saved_model.load(str(tmp_path / "nothing"))
    path = _saved(tmp_path)
    os.remove(path / "variables" / "variables")
    with pytest.raises(tf.errors.NotFoundError, match="variables"):
        tf.saved_model.load(str(path))


# -- load_checkpoint -------------------------------------------------------------------------------
def test_load_checkpoint_reads_keys_shapes_and_dtypes_as_tf(tmp_path):
    path = tf.train.Checkpoint(w=tf.Variable([[1.0, 2.0]]), n=tf.Variable(3)).write(
        str(tmp_path / "ckpt"))
    reader = tf.train.load_checkpoint(path)
    # TF 2.21's maps for the same checkpoint.
    assert reader.get_variable_to_shape_map() == {"w/.ATTRIBUTES/VARIABLE_VALUE": [1, 2],
                                                  "n/.ATTRIBUTES/VARIABLE_VALUE": [],
                                                  "_CHECKPOINTABLE_OBJECT_GRAPH": []}
    assert reader.get_variable_to_dtype_map() == {"w/.ATTRIBUTES/VARIABLE_VALUE": tf.float32,
                                                  "n/.ATTRIBUTES/VARIABLE_VALUE": tf.int32,
                                                  "_CHECKPOINTABLE_OBJECT_GRAPH": tf.string}
    assert reader.has_tensor("w/.ATTRIBUTES/VARIABLE_VALUE") and not reader.has_tensor("w")
    _assert_same(reader.get_tensor("w/.ATTRIBUTES/VARIABLE_VALUE"), [[1.0, 2.0]])
    assert isinstance(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"), bytes)
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.get_tensor("nope")
    assert reader.debug_string() == (b"_CHECKPOINTABLE_OBJECT_GRAPH (DT_STRING) []\n"
                                     b"n/.ATTRIBUTES/VARIABLE_VALUE (DT_INT32) []\n"
                                     b"w/.ATTRIBUTES/VARIABLE_VALUE (DT_FLOAT) [1,2]\n")
    assert tf.train.list_variables(path) == sorted(reader.get_variable_to_shape_map().items())
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.load_checkpoint(str(tmp_path / "none"))


def test_a_saved_models_variables_are_a_checkpoint_with_tfs_keys(tmp_path):
    path = _saved(tmp_path)
    # TF 2.21 lists `w/.ATTRIBUTES/VARIABLE_VALUE` for a module's `self.w` in
    # variables/variables, and the object graph entry.
    assert [k for k, _ in tf.train.list_variables(str(path / "variables" / "variables"))] == [
        "_CHECKPOINTABLE_OBJECT_GRAPH", "b1/.ATTRIBUTES/VARIABLE_VALUE",
        "step/.ATTRIBUTES/VARIABLE_VALUE", "w1/.ATTRIBUTES/VARIABLE_VALUE",
        "w2/.ATTRIBUTES/VARIABLE_VALUE"]
