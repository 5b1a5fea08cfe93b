"""`eager.saved_model` with control flow (`cond`, `switch_case`, `while_loop`, AutoGraph loops
over TensorArrays, Keras LSTMs): values, gradients and re-saving after a load in a fresh
process; hostile nested functions; Keras models' default signature; and the refusal of
`py_function`. Goldens (signature names, specs, error wording) were recorded from TensorFlow
2.21 with Keras 3."""

import collections
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


class Flow(tf.Module):
    def __init__(self):
        super().__init__()
        self.v = tf.Variable([1.5, -2.0], name="v")

    @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
    def branchy(self, x):
        return tf.cond(tf.reduce_sum(x) > 0, lambda: x * self.v, lambda: tf.square(x) - self.v)

    @tf.function(input_signature=[tf.TensorSpec([2], tf.float32), tf.TensorSpec([], tf.int32)])
    def looped(self, x, n):
        def body(i, y):
            y = tf.cond(i % 2 == 0, lambda: tf.sin(y) * self.v, lambda: y + self.v * 0.5)
            return i + 1, y
        return tf.while_loop(lambda i, y: i < n, body, (0, x))[1]

    @tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([2], tf.float32)])
    def switched(self, k, x):
        return tf.switch_case(k, [lambda: x * 2.0, lambda: x * self.v, lambda: tf.exp(x)])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def autograph(self, x):
        out = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(tf.shape(x)[0]):
            if x[i] > 0:
                out = out.write(i, x[i] * self.v[0])
            else:
                out = out.write(i, x[i] * self.v[1])
        return out.stack()


_X = np.array([0.3, 0.9], np.float32)
_XN = np.array([-0.3, -0.9], np.float32)
_SEQ = np.array([1.0, -2.0, 3.0, -0.5], np.float32)


def _results(m):
    """Values and gradients (with respect to the input and the variable) of every function."""
    x, xn, seq = tf.constant(_X), tf.constant(_XN), tf.constant(_SEQ)
    out = {}
    calls = {"b_pos": lambda: m.branchy(x), "b_neg": lambda: m.branchy(xn),
             "loop": lambda: m.looped(x, tf.constant(3)),
             "loop0": lambda: m.looped(x, tf.constant(0)),
             "case0": lambda: m.switched(tf.constant(0), x),
             "case1": lambda: m.switched(tf.constant(1), x),
             "case_default": lambda: m.switched(tf.constant(7), x),
             "ag": lambda: m.autograph(seq)}
    for name, call in calls.items():
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, xn, seq])
            y = call()
            loss = tf.reduce_sum(y * y)
        out[name] = y.numpy()
        for k, g in enumerate(tape.gradient(loss, [x, xn, seq, m.v])):
            out[f"{name}_g{k}"] = None if g is None else tf.convert_to_tensor(g).numpy()
    return out


def _assert_results_equal(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        if a[k] is None or b[k] is None:
            assert a[k] is None and b[k] is None, k
        else:
            np.testing.assert_allclose(b[k], a[k], rtol=1e-6, atol=1e-7, err_msg=k)


def test_control_flow_functions_round_trip_with_values_and_gradients(tmp_path):
    m = Flow()
    tf.saved_model.save(m, str(tmp_path / "m"))
    meta = _meta(tmp_path / "m")
    assert meta["version"] == 2 and len(meta["library"]) >= 8
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    expected = _results(m)
    # Gradients through cond/while equal the original's (and are what math says: the cond's
    # taken branch x * v).
    np.testing.assert_allclose(expected["b_pos_g0"], 2 * _X * np.array([1.5, -2.0]) ** 2,
                               rtol=1e-6)
    _assert_results_equal(expected, _results(loaded))
    tf.saved_model.save(loaded, str(tmp_path / "again"))
    _assert_results_equal(expected, _results(tf.saved_model.load(str(tmp_path / "again"))))


def test_a_fresh_process_loads_control_flow_and_a_keras_lstm_and_saves_again(tmp_path):
    m = Flow()
    tf.saved_model.save(m, str(tmp_path / "flow"))
    inp = tf.keras.Input((5, 3))
    model = tf.keras.Model(inp, tf.keras.layers.Dense(2)(tf.keras.layers.LSTM(4)(inp)))
    xs = np.random.default_rng(0).normal(size=(2, 5, 3)).astype(np.float32)
    tf.saved_model.save(model, str(tmp_path / "lstm"))
    script = textwrap.dedent(f"""
        import sys, json, numpy as np
        assert "tests" not in sys.modules
        import eager as tf
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from test_saved_model_control_flow import _results  # the measuring code only
        assert "eager" in sys.modules and not hasattr(sys.modules[__name__], "Flow")
        loaded = tf.saved_model.load({str(tmp_path / "flow")!r})
        np.savez({str(tmp_path / "flow.npz")!r},
                 **{{k: (np.array(np.nan) if v is None else v)
                     for k, v in _results(loaded).items()}})
        tf.saved_model.save(loaded, {str(tmp_path / "flow2")!r})
        lstm = tf.saved_model.load({str(tmp_path / "lstm")!r})
        serve = lstm.signatures["serving_default"]
        x = tf.constant(np.load({str(tmp_path / "xs.npy")!r}))
        with tf.GradientTape() as tape:
            y = serve(inputs=x)["output_0"]
            loss = tf.reduce_sum(y * y)
        grads = tape.gradient(loss, lstm.trainable_variables)
        np.save({str(tmp_path / "y.npy")!r}, y.numpy())
        print(json.dumps([list(lstm.signatures), sorted(serve.structured_outputs),
                          sum(g is not None for g in grads), len(grads)]))
        """)
    np.save(tmp_path / "xs.npy", xs)
    done = subprocess.run([sys.executable, "-c", script], cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    keys, outputs, with_grad, n_vars = json.loads(done.stdout.strip().splitlines()[-1])
    assert keys == ["serving_default"] and outputs == ["output_0"]  # TF 2.21's names
    assert with_grad == n_vars == 5  # kernel, recurrent kernel, bias; dense kernel, bias
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), model(xs).numpy(), rtol=1e-5,
                               atol=1e-6)
    got = dict(np.load(tmp_path / "flow.npz"))
    _assert_results_equal(_results(m), {k: None if v.shape == () and np.isnan(v) else v
                                        for k, v in got.items()})
    _assert_results_equal(_results(m), _results(tf.saved_model.load(str(tmp_path / "flow2"))))


def test_a_keras_model_without_signatures_gets_tfs_serving_default(tmp_path):
    inp = tf.keras.Input((5, 3))
    model = tf.keras.Model(inp, tf.keras.layers.Dense(2)(tf.keras.layers.LSTM(4)(inp)))
    tf.saved_model.save(model, str(tmp_path / "k"))
    loaded = tf.saved_model.load(str(tmp_path / "k"))
    serve = loaded.signatures["serving_default"]
    # TF 2.21 + Keras 3: ((), {'inputs': TensorSpec(shape=(None, 5, 3), dtype=tf.float32,
    # name='inputs')}), outputs {'output_0': ...}; the loaded object is not callable.
    assert list(loaded.signatures) == ["serving_default"]
    assert serve.structured_input_signature == (
        (), {"inputs": tf.TensorSpec([None, 5, 3], tf.float32, name="inputs")})
    assert list(serve.structured_outputs) == ["output_0"]
    with pytest.raises(TypeError, match="not callable"):
        loaded(tf.zeros([1, 5, 3]))

    class WithCond(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(3)

        def build(self, input_shape):
            self.dense.build(input_shape)

        def call(self, x):
            return tf.cond(tf.reduce_sum(x) > 0, lambda: self.dense(x), lambda: -self.dense(x))

    sub = WithCond()
    sub(np.ones((1, 4), np.float32))
    tf.saved_model.save(sub, str(tmp_path / "s"))
    loaded = tf.saved_model.load(str(tmp_path / "s"))
    serve = loaded.signatures["serving_default"]
    # A subclassed model: the shape it was built with, as Keras 3 (TF 2.21: (1, 4)).
    assert serve.structured_input_signature == (
        (), {"inputs": tf.TensorSpec([1, 4], tf.float32, name="inputs")})
    for sign in (1.0, -1.0):
        x = tf.constant(np.full((1, 4), sign, np.float32))
        np.testing.assert_allclose(serve(inputs=x)["output_0"], sub(x), rtol=1e-6)


# -- what cannot be saved --------------------------------------------------------------------------
def test_py_function_and_numpy_function_are_refused_naming_the_op(tmp_path):
    class Py(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def f(self, x):
            return tf.py_function(lambda a: a * 2, [x], tf.float32)

    class Np(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def g(self, x):
            return tf.cond(x[0] > 0, lambda: tf.numpy_function(lambda a: a * 2, [x], tf.float32),
                           lambda: x)

    m, n = Py(), Np()
    # TF 2.21 saves these and fails when a new process calls them: "Could not find callback
    # with key=pyfunc_0 in the registry." at node EagerPyFunc (PyFunc for numpy_function).
    with pytest.raises(ValueError, match=r"function 'f' cannot be saved: op 'EagerPyFunc' "
                       r"\(EagerPyFunc\) runs a Python function \(eager.py_function\).*"
                       r"Could not find callback with key=pyfunc_0 in the registry"):
        tf.saved_model.save(m, str(tmp_path / "p"), signatures=m.f)
    with pytest.raises(ValueError, match=r"op 'PyFunc' \(PyFunc\) runs a Python function "
                       r"\(eager.numpy_function\)"):
        tf.saved_model.save(n, str(tmp_path / "p"))
    assert not (tmp_path / "p").exists()


# -- hostile nested functions ----------------------------------------------------------------------
def _meta(path):
    raw = (path / layout.MODEL_FILE).read_bytes()
    return json.loads(raw[:raw.rindex(b"\neager.saved_model sha256:")])


def _rewrite(path, change):
    """Changes the model JSON and seals it again, so that only validation can catch it."""
    meta = _meta(path)
    change(meta)
    (path / layout.MODEL_FILE).write_bytes(layout.encode_model(meta))


class Small(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def __call__(self, x):
        y = tf.cond(x > 0, lambda: tf.exp(x), lambda: x * 2.0)
        return tf.while_loop(lambda y: y < 100.0, lambda y: (y * 3.0,), (y,))[0]


def _small(tmp_path):
    path = tmp_path / "m"
    tf.saved_model.save(Small(), str(path))
    return path


def _library_op(meta, op_type):
    for entry in meta["library"]:
        for op in entry["ops"]:
            if op["op"] == op_type:
                return op
    raise AssertionError(op_type)


def _control_op(meta, op_type):
    return next(op for op in meta["concrete_functions"][0]["graph"]["ops"]
                if op["op"] == op_type)


def test_a_branch_naming_an_unknown_op_is_not_found_and_nothing_runs(tmp_path):
    path = _small(tmp_path)
    marker = tmp_path / "ran"

    def change(meta):
        op = _library_op(meta, "Exp")
        op["op"] = "os.system"
        op["attrs"] = {"command": {"s": f"touch {marker}"}}
    _rewrite(path, change)
    with pytest.raises(tf.errors.NotFoundError, match="Op type not registered 'os.system'"):
        tf.saved_model.load(str(path))
    assert not marker.exists()


def test_a_function_calling_itself_is_data_loss(tmp_path):
    path = _small(tmp_path)
    marker = tmp_path / "ran"

    def change(meta):
        # The loop body (a library function) gets a While whose body is itself.
        cond = _control_op(meta, "While")["attrs"]["body"]["while"]
        body = meta["library"][cond["body"]]
        first = body["ops"][0]["name"]
        body["ops"].append({"name": "again", "op": "While", "inputs": [[first, 0]],
                            "control": [], "device": "",
                            "attrs": {"body": {"while": dict(cond)}},
                            "outputs": [["float32", []]]})
        body["ops"].append({"name": "x", "op": "os.system", "inputs": [], "control": [],
                            "device": "", "attrs": {"command": {"s": f"touch {marker}"}},
                            "outputs": []})
    _rewrite(path, change)
    with pytest.raises(tf.errors.DataLossError, match="calls itself"):
        tf.saved_model.load(str(path))
    assert not marker.exists()


@pytest.mark.parametrize("case", ["num_vars", "loop_var_dtype", "branch_outputs",
                                  "positions", "no_such_function", "If_with_one_branch"])
def test_a_body_that_does_not_match_its_call_is_data_loss(tmp_path, case):
    path = _small(tmp_path)

    def change(meta):
        loop = _control_op(meta, "While")["attrs"]["body"]["while"]
        case_ = _control_op(meta, "If")["attrs"]["body"]["case"]
        if case == "num_vars":
            loop["num_vars"] = 2
        elif case == "loop_var_dtype":
            body = meta["library"][loop["body"]]
            body["ops"][0]["attrs"]["dtype"] = {"dtype": "int32"}
            body["ops"][0]["outputs"][0][0] = "int32"
        elif case == "branch_outputs":
            meta["library"][case_["branches"][1]]["outputs"] = []
        elif case == "positions":
            case_["positions"][0] = [0, 0]
        elif case == "no_such_function":
            loop["cond"] = 999
        else:
            case_["branches"] = case_["branches"][:1]
            case_["positions"] = case_["positions"][:1]
    _rewrite(path, change)
    with pytest.raises(tf.errors.DataLossError):
        tf.saved_model.load(str(path))


def test_version_1_files_without_a_library_are_still_read(tmp_path):
    class Plain(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([2.0, 3.0])

        @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
        def __call__(self, x):
            return x * self.w

    path = tmp_path / "m"
    tf.saved_model.save(Plain(), str(path))

    def change(meta):
        assert meta.pop("library") == []
        meta["version"] = 1
    _rewrite(path, change)
    np.testing.assert_array_equal(tf.saved_model.load(str(path))(tf.constant([1.0, 2.0])),
                                  [2.0, 6.0])


def test_variable_and_namedtuple_arguments_are_refused_saying_what_to_do(tmp_path):
    Point = collections.namedtuple("Point", "x y")

    class Args(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable([1.0, 2.0])

        @tf.function
        def f(self, a):
            return tf.add_n(list(a)) if isinstance(a, tuple) else a * 2.0

    m = Args()
    m.f(m.v)
    with pytest.raises(ValueError, match=r"function 'f' was traced with a Variable argument: "
                       r".*Assign the variable to an attribute of the saved object.*"
                       r"variable.read_value\(\)"):
        tf.saved_model.save(m, str(tmp_path / "a"))
    n = Args()
    n.f(Point(tf.constant(1.0), tf.constant(2.0)))
    with pytest.raises(ValueError, match=r"holds a namedtuple \(Point\): eager's SavedModel "
                       r"format cannot hold namedtuples .*Pass a tuple or a dict of tensors"):
        tf.saved_model.save(n, str(tmp_path / "a"))
    assert not (tmp_path / "a").exists()


def test_a_function_differentiating_its_own_loop_round_trips(tmp_path):
    # The trace holds an accumulating While and the gradient While reading its lists.
    class G(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(1.3)

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def __call__(self, x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.sin(y) * self.v),
                                  (0, x))[1]
                z = tf.cond(y > 0, lambda: y * y, lambda: -y)
            return tape.gradient(z, [x, self.v])

    m = G()
    tf.saved_model.save(m, str(tmp_path / "g"))
    loaded = tf.saved_model.load(str(tmp_path / "g"))
    for a, b in zip(m(tf.constant(0.7)), loaded(tf.constant(0.7))):
        np.testing.assert_allclose(b, a, rtol=1e-6)
