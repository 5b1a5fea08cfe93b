"""The string dtype: conversion, reprs and printing, the ops TensorFlow allows on strings and
its errors for the others, strings in functions, datasets, variables, checkpoints, async mode
and on simulated GPUs (host memory). Goldens recorded from TensorFlow 2.21."""

import io
import os
import subprocess
import sys

import numpy as np
import pytest

import eager as tf
from eager import errors


def test_dtype_facts():
    # TF 2.21: (tf.string.size, is_numpy_compatible, as_numpy_dtype, as_datatype_enum) ==
    # (0, True, object, 7); as_dtype of numpy's object, str_, bytes_, "S3", "<U2" is tf.string.
    s = tf.string
    assert (s.size, s.is_numpy_compatible, s.as_numpy_dtype, s.as_datatype_enum) == (
        0, True, object, 7)
    assert s.name == "string" and not s.is_floating and not s.is_numeric
    assert tf.dtypes.string is s and tf.as_dtype("string") is s
    for v in (np.object_, np.str_, np.bytes_, np.dtype("S3"), np.dtype("<U2"), np.dtype(object)):
        assert tf.as_dtype(v) is s
    assert s == np.object_
    with pytest.raises(TypeError, match="minimum"):
        s.min  # noqa: B018
    for junk in (str, bytes):  # TF: "Cannot convert the argument `type_value`: <class 'str'>"
        with pytest.raises(TypeError):
            tf.as_dtype(junk)


def test_constants_hold_bytes():
    t = tf.constant("text")
    assert t.dtype is tf.string and t.shape == () and t.device == "CPU:0"
    assert t.numpy() == b"text" and isinstance(t.numpy(), bytes)
    m = tf.constant([["a", "bc"], ["é", b"\xff"]])
    assert m.numpy().dtype == object and m.numpy().tolist() == [[b"a", b"bc"],
                                                               [b"\xc3\xa9", b"\xff"]]
    assert tf.constant(np.array(["ab", "é"])).numpy().tolist() == [b"ab", b"\xc3\xa9"]
    assert tf.constant(np.array([b"ab", b"\x00x"])).numpy().tolist() == [b"ab", b"\x00x"]
    assert tf.constant("a\x00b").numpy() == b"a\x00b"
    assert tf.constant(np.str_("x")).numpy() == b"x"
    assert tf.constant([], dtype=tf.string).shape == (0,)
    assert tf.constant([[], []], dtype=tf.string).shape == (2, 0)
    assert tf.constant("x", shape=[2]).numpy().tolist() == [b"x", b"x"]
    assert tf.constant(["a", "b"], shape=[2, 1]).shape == (2, 1)
    assert tf.convert_to_tensor("a", dtype_hint=tf.int32).numpy() == b"a"
    assert tf.constant([tf.constant("a"), "b"]).numpy().tolist() == [b"a", b"b"]
    assert tf.TensorSpec([], tf.string).dtype is tf.string


@pytest.mark.parametrize("make,exc,words", [
    (lambda: tf.constant([1], dtype=tf.string), TypeError,
     "Cannot convert [1] to EagerTensor of dtype string"),
    (lambda: tf.constant(["a", 1]), ValueError,
     "Can't convert Python sequence with mixed types to Tensor"),
    (lambda: tf.constant([1, "a"]), ValueError,
     "Can't convert Python sequence with mixed types to Tensor"),
    (lambda: tf.constant(["a", None]), ValueError,
     "Can't convert Python sequence with mixed types to Tensor"),
    (lambda: tf.constant("x", dtype=tf.int32), TypeError,
     "Cannot convert 'x' to EagerTensor of dtype int32"),
    (lambda: tf.constant(np.array(["x", 1], dtype=object)), ValueError,
     "Failed to convert a NumPy array to a Tensor (Unsupported object type int)."),
    (lambda: tf.constant("\udc80"), ValueError, "Error converting unicode string"),
    (lambda: tf.convert_to_tensor(1, dtype=tf.string), TypeError,
     "Cannot convert 1 to EagerTensor of dtype string"),
])
def test_conversion_errors_are_tensorflows(make, exc, words):
    with pytest.raises(exc) as info:
        make()
    assert words in str(info.value)


def test_repr_str_and_print_as_tensorflow():
    # Goldens: TF 2.21's repr/str with "tf." for "eager.".
    assert repr(tf.constant("text")) == "<eager.Tensor: shape=(), dtype=string, numpy=b'text'>"
    assert str(tf.constant("text")) == "eager.Tensor(b'text', shape=(), dtype=string)"
    m = tf.constant([["a", "bc"], ["é", "d"]])
    assert repr(m) == ("<eager.Tensor: shape=(2, 2), dtype=string, numpy=\narray([[b'a', b'bc'],"
                       "\n       [b'\\xc3\\xa9', b'd']], dtype=object)>")
    assert str(m) == ("eager.Tensor(\n[[b'a' b'bc']\n [b'\\xc3\\xa9' b'd']], shape=(2, 2), "
                      "dtype=string)")
    assert format(tf.constant("text")) == "b'text'"
    assert repr(tf.Variable("abc")) == ("<eager.Variable 'Variable:0' shape=() dtype=string, "
                                        "numpy=b'abc'>")


def _printed(*args, **kwargs):
    out = io.StringIO()
    tf.print(*args, output_stream=out, **kwargs)
    return out.getvalue()


def test_eager_print_of_strings():
    # TF 2.21's tf.print: a top-level scalar string is its text; elements are quoted and
    # C-escaped (UTF-8 kept); structures quote their scalars; summarize applies.
    assert _printed(tf.constant("text")) == "text\n"
    assert _printed(tf.constant([["a", "b"]]), "x") == '[["a" "b"]] x\n'
    assert _printed("hello", tf.constant(["a\nb", "c"])) == 'hello ["a\\nb" "c"]\n'
    assert _printed(tf.constant(["é", "a\tb\"c'\\", "\x01\x7f", ""])) == (
        '["é" "a\\tb\\"c\\\'\\\\" "\\001\\177" ""]\n')
    assert _printed(tf.constant("é\n")) == "é\n\n"
    assert _printed({"a": tf.constant("x")}, [tf.constant(["y"])]) == "{'a': \"x\"} [[\"y\"]]\n"
    assert _printed(tf.constant([["a"] * 10] * 2)) == (
        '[["a" "a" "a" ... "a" "a" "a"]\n ["a" "a" "a" ... "a" "a" "a"]]\n')


def _vals(t):
    return t.numpy().tolist() if t.shape.rank else t.numpy()


def test_ops_tensorflow_allows_on_strings():
    s = tf.constant("text")
    v = tf.constant(["a", "b", "c"])
    assert (s + tf.constant("x")).numpy() == b"textx"
    assert (s + "x").numpy() == b"textx" and ("x" + s).numpy() == b"xtext"
    assert tf.add(s, s).numpy() == b"texttext"
    assert _vals(tf.constant(["a", "b"]) + tf.constant([["x"], ["y"]])) == [[b"ax", b"bx"],
                                                                          [b"ay", b"by"]]
    assert bool((s == "text").numpy()) and _vals(v == tf.constant(["a", "x", "c"])) == [
        True, False, True]
    assert _vals(v != "a") == [False, True, True] and _vals(tf.not_equal(v, "b")) == [
        True, False, True]
    assert _vals(tf.zeros_like(v)) == [b"", b"", b""]
    assert _vals(tf.fill([2], "z")) == [b"z", b"z"]
    assert int(tf.size(v)) == 3 and _vals(tf.shape(v)) == [3]
    assert _vals(tf.concat([v, ["d"]], 0)) == [b"a", b"b", b"c", b"d"]
    assert _vals(tf.stack(["a", "b"])) == [b"a", b"b"]
    assert _vals(tf.gather(v, [2, 0])) == [b"c", b"a"] and tf.gather(v, 1).numpy() == b"b"
    assert _vals(tf.boolean_mask(v, [True, False, True])) == [b"a", b"c"]
    assert _vals(tf.tile(v[:2], [2])) == [b"a", b"b", b"a", b"b"]
    assert _vals(tf.expand_dims(s, 0)) == [b"text"]
    assert _vals(tf.where([True, False], tf.constant(["a", "b"]), "c")) == [b"a", b"c"]
    assert _vals(tf.reshape(v, [3, 1])) == [[b"a"], [b"b"], [b"c"]]
    assert _vals(tf.transpose(tf.constant([["a", "b"]]))) == [[b"a"], [b"b"]]
    assert _vals(v[1:]) == [b"b", b"c"] and v[1].numpy() == b"b"
    assert _vals(tf.identity(v)) == [b"a", b"b", b"c"]
    assert _vals(tf.broadcast_to(s, [2])) == [b"text", b"text"]
    assert tf.squeeze(tf.constant([["a"]])).numpy() == b"a"
    assert _vals(tf.reverse(v, [0])) == [b"c", b"b", b"a"]
    assert [t.numpy() for t in tf.unstack(v)] == [b"a", b"b", b"c"]
    assert len(v) == 3 and [t.numpy() for t in v] == [b"a", b"b", b"c"] and bool(s)


@pytest.mark.parametrize("run,cls,words", [
    (lambda s: s * s, errors.InvalidArgumentError, "Mul: input dtype string is not in the list"),
    (lambda s: s - s, errors.InvalidArgumentError, "Sub: input dtype string is not in the list"),
    (lambda s: -s, errors.InvalidArgumentError, "Neg: input dtype string"),
    (lambda s: s < s, errors.InvalidArgumentError, "Less: input dtype string"),
    (lambda s: tf.maximum(s, s), errors.InvalidArgumentError, "Maximum: input dtype string"),
    (lambda s: tf.reduce_sum(s), errors.InvalidArgumentError, "Sum: input dtype string"),
    (lambda s: tf.ones_like(s), errors.InvalidArgumentError, "OnesLike: input dtype string"),
    (lambda s: tf.math.add_n([s, s]), errors.InvalidArgumentError, "AddN: input dtype string"),
    (lambda s: tf.sort(tf.stack([s, s])), errors.InvalidArgumentError, "dtype string"),
    (lambda s: tf.cast(s, tf.int32), errors.UnimplementedError,
     "Cast string to int32 is not supported"),
    (lambda s: tf.cast(tf.constant(1), tf.string), errors.UnimplementedError,
     "Cast int32 to string is not supported"),
    (lambda s: s == 1, TypeError, "Cannot convert 1 to EagerTensor of dtype string"),
    (lambda s: tf.constant([1.0]) + s, errors.InvalidArgumentError,
     "expected to be a float32 tensor but is a string tensor"),
])
def test_ops_tensorflow_refuses_on_strings(run, cls, words):
    with pytest.raises(cls) as info:
        run(tf.constant("text"))
    assert words in str(info.value)


def test_no_gradient_through_strings():
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        s = tf.constant("a")
        tape.watch(s)
        y = s + "b"
    assert tape.gradient(y, s) is None


def test_strings_in_functions():
    traces = []

    @tf.function
    def f(s):
        traces.append(1)
        return s + "!"

    assert f(tf.constant("x")).numpy() == b"x!"
    assert _vals(f(tf.constant(["a", "b"]))) == [b"a!", b"b!"]
    assert f("x").numpy() == b"x!"  # a Python string's result is a string tensor, as TF's
    cf = f.get_concrete_function(tf.TensorSpec([None], tf.string))
    assert cf.structured_input_signature[0][0].dtype is tf.string
    captured = tf.constant(["c1", "c2"])

    @tf.function
    def g(i):
        return tf.gather(captured, i), "lit", captured[0] == "c1", tf.constant("made")

    a, lit, eq, made = g(1)
    assert a.numpy() == b"c2" and lit.numpy() == b"lit" and bool(eq) and made.numpy() == b"made"

    @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
    def k(s):
        return tf.reshape(tf.stack([s, s]), [2, 1])

    assert _vals(k("q")) == [[b"q"], [b"q"]]


def test_strings_through_datasets():
    ds = tf.data.Dataset.from_tensor_slices(["a", "b", "c"])
    assert ds.element_spec == tf.TensorSpec([], tf.string)
    assert list(ds.as_numpy_iterator()) == [b"a", b"b", b"c"]
    batches = list(ds.map(lambda s: s + "x").batch(2))
    assert [_vals(b) for b in batches] == [[b"ax", b"bx"], [b"cx"]]
    assert list(tf.data.Dataset.from_tensor_slices(["a", "b", "a"]).unique()
                .as_numpy_iterator()) == [b"a", b"b"]


def test_string_iterator_state_round_trips(tmp_path):
    it = iter(tf.data.Dataset.from_tensor_slices(["a", "b", "c", "d"]).shuffle(4, seed=2))
    next(it)
    ckpt = tf.train.Checkpoint(it=it)
    path = ckpt.save(str(tmp_path / "ck"))
    rest = [t.numpy() for t in it]
    ckpt.restore(path)
    assert [t.numpy() for t in it] == rest


def test_string_variables_and_checkpoints(tmp_path):
    v = tf.Variable(["a", "bé"])
    assert v.dtype is tf.string
    v.assign(["c", "d"])
    assert _vals(v + "x") == [b"cx", b"dx"]
    s = tf.Variable("")
    ckpt = tf.train.Checkpoint(v=v, s=s)
    s.assign("\x00hello")
    path = ckpt.save(str(tmp_path / "ck"))
    v.assign(["z", "z"])
    s.assign("q")
    ckpt.restore(path)
    assert _vals(v) == [b"c", b"d"] and s.numpy() == b"\x00hello"
    reader = tf.train.load_checkpoint(path) if hasattr(tf.train, "load_checkpoint") else None
    if reader is not None:
        assert reader.get_tensor("s/.ATTRIBUTES/VARIABLE_VALUE") == b"\x00hello"


def test_damaged_string_checkpoint_is_a_data_loss(tmp_path):
    from eager.train import _format

    v = tf.Variable(["ab", "c"])
    path = tf.train.Checkpoint(v=v).write(str(tmp_path / "ck"))
    data = _format.read_checkpoint(path)
    assert data is not None
    from eager.base import string_arrays
    with pytest.raises(ValueError):
        string_arrays.unpack(np.frombuffer(b"\x05" + b"\x00" * 15, np.uint8), (1,))


def test_strings_in_async_mode():
    with tf.experimental.async_scope():
        a = tf.constant(["x"]) + "y"
        b = tf.concat([a, a], 0)
    assert _vals(b) == [b"xy", b"xy"]


_GPU_SCRIPT = r"""
import eager as tf
with tf.device("GPU:0"):
    c = tf.constant("a")
    d = tf.constant(["a"]) + "b"
    r = tf.reshape(tf.constant(["a", "b"]), [2, 1])
    f = tf.fill([2], "z")
    v = tf.Variable(["q"])
    n = tf.constant([1.0]) + 1.0

@tf.function
def fn(s, i):
    return tf.gather(s + "!", i), tf.constant(["k"]), tf.size(s)

with tf.device("GPU:0"):
    out = fn(tf.constant(["x", "y"]), 1)
print([t.device for t in (c, d, r, f, n)], v.device, [t.device for t in out])
print(d.numpy().tolist(), out[0].numpy(), int(out[2]))
"""


def test_strings_stay_on_the_host_with_simulated_gpus():
    # TF 2.21 (verified for `with tf.device("GPU:0"): tf.constant("a")`: device CPU:0): strings
    # live in host memory; TF's string kernels are HostMemory ones.
    env = dict(os.environ, EAGER_SIMULATED_GPUS="1")
    out = subprocess.run([sys.executable, "-c", _GPU_SCRIPT], env=env, capture_output=True,
                         text=True, timeout=120, cwd=os.path.dirname(os.path.dirname(
                             os.path.abspath(__file__))))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == ("['CPU:0', 'CPU:0', 'CPU:0', 'CPU:0', 'GPU:0'] CPU:0 "
                        "['CPU:0', 'CPU:0', 'CPU:0']")
    assert lines[1] == "[b'ab'] b'y!' 2"
