"""Notebook displays: what Jupyter shows for eager's objects (`_repr_html_`), checked twice: in a
real ipykernel (the MIME bundles a notebook receives: `text/html` beside an unchanged
`text/plain`), and without a kernel, on the HTML builders directly (fast, and where the exact
content is asserted)."""

import html
import re

import numpy as np
import pytest

import eager as tf
from eager.base import rich_display
from tests.notebook_kernel import kernel_fixture

kernel = kernel_fixture()
pytestmark = pytest.mark.cpu_only(reason="the expected displays name CPU:0, whose values are "
                                         "ready at once (a GPU's show as pending)")


def _text(markup) -> str:
    """The visible text of display HTML: the style sheet and tags dropped, entities decoded."""
    markup = re.sub(r"<style>.*?</style>", "", markup, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def _facts(markup) -> dict:
    """The display's table rows, as {name: value}."""
    rows = re.findall(r"<tr><th>(.*?)</th><td>(.*?)</td></tr>", markup)
    return {html.unescape(k): html.unescape(v) for k, v in rows}


# -- without a kernel ----------------------------------------------------------------------------

def test_tensor_html_shows_shape_dtype_device_and_values_while_repr_is_unchanged():
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    markup = t._repr_html_()
    assert _facts(markup) == {"shape": "(2, 2)", "dtype": "float32", "device": "CPU:0"}
    assert "[[1. 2.]\n [3. 4.]]" in html.unescape(markup)
    assert repr(t) == ("<eager.Tensor: shape=(2, 2), dtype=float32, numpy=\n"
                       "array([[1., 2.],\n       [3., 4.]], dtype=float32)>")


def test_scalar_tensor_html_shows_the_python_value():
    assert "<pre>3.0</pre>" in tf.constant(3.0)._repr_html_()
    assert "<pre>7</pre>" in tf.constant(7)._repr_html_()


def test_large_tensor_html_is_small_and_summarised_as_numpy_summarises():
    value = np.arange(1_000_000, dtype=np.float32).reshape(1000, 1000)
    markup = tf.constant(value)._repr_html_()
    assert len(markup) < 4000  # not a million numbers
    text = _text(markup)
    assert "..." in text and "9.99999e+05" in text  # the first and the last elements shown
    assert "0.00000e+00" in text
    # numpy's own summary of the same array, capped at 3 edge items per axis
    assert np.array2string(value, separator=" ", edgeitems=3, threshold=1000) in \
        html.unescape(markup)


def test_large_tensor_html_is_summarised_even_when_numpy_prints_everything():
    with np.printoptions(threshold=10**9, edgeitems=50):
        markup = tf.zeros([300, 300])._repr_html_()
    assert len(markup) < 4000


def test_string_tensor_html_escapes_markup():
    markup = tf.constant(["<script>alert(1)</script>", "a&b"])._repr_html_()
    assert "<script>alert" not in markup
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markup
    assert "a&amp;b" in markup


def test_pending_tensor_html_does_not_wait_for_the_value():
    from eager.async_exec import PendingTensor  # noqa: PLC0415

    release = __import__("threading").Event()

    def slow(x):
        release.wait(30)
        return x

    with tf.experimental.async_scope():
        x = tf.constant([1.0, 2.0])
        y = tf.py_function(slow, [x], tf.float32)
        z = y * 2.0
        try:
            assert isinstance(z, PendingTensor)
            bundle = z._repr_mimebundle_()  # returns at once: the worker is blocked in `slow`
            assert bundle["text/plain"] == \
                "<eager.Tensor: shape=<unknown>, dtype=float32, numpy=<pending>>"
            assert "pending" in _text(bundle["text/html"])
            assert _facts(bundle["text/html"])["dtype"] == "float32"
        finally:
            release.set()
        tf.experimental.async_wait()
        assert "[2. 4.]" in z._repr_html_()
        assert z._repr_mimebundle_()["text/plain"] == repr(z) == \
            "<eager.Tensor: shape=(2,), dtype=float32, numpy=array([2., 4.], dtype=float32)>"


def test_failed_async_tensor_html_names_the_error_and_how_to_clear_it():
    with tf.experimental.async_scope():
        bad = tf.gather(tf.constant([1.0, 2.0]), [5])
        try:
            tf.experimental.async_wait()
        except tf.errors.InvalidArgumentError:
            pass
        bundle = bad._repr_mimebundle_()  # a display does not raise the error again
        tf.experimental.async_clear_error()
    text = _text(bundle["text/html"])
    assert bundle["text/plain"] == \
        "<eager.Tensor: shape=(1,), dtype=float32, numpy=<failed: InvalidArgumentError>>"
    assert "failed: InvalidArgumentError: GatherV2: indices[0] = 5 is not in [0, 2)" in text
    assert "async_clear_error()" in text


def test_variable_html_shows_name_trainable_and_value():
    v = tf.Variable([1.0, 2.0, 3.0], name="weights", trainable=False)
    markup = v._repr_html_()
    assert _facts(markup) == {"shape": "(3,)", "dtype": "float32", "device": "CPU:0",
                              "name": "weights:0", "trainable": "False"}
    assert "[1. 2. 3.]" in markup
    assert repr(v).startswith("<eager.Variable 'weights:0' shape=(3,) dtype=float32")


class _Block(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.ones([4, 3]), name="w")
        self.b = tf.Variable(tf.zeros([3]), name="b", trainable=False)


class _Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [_Block(name="first"), _Block(name="second")]
        self.scale = tf.Variable(2.0, name="scale")
        self.me = self  # a cycle: drawn once


def test_module_html_is_a_collapsible_tree_with_parameter_counts():
    markup = _Net()._repr_html_()
    assert markup.count("<details") == 3  # the net, then each block
    assert "<details open>" in markup  # the root starts expanded
    text = _text(markup)
    assert "_net (_Net)" in text and "31 params" in text  # 2 * (12 + 3) + 1
    assert "blocks[0] (_Block)" in text and "blocks[1] (_Block)" in text
    assert "15 params" in text
    facts = _facts(markup)
    assert facts["w"] == "(4, 3) float32" and facts["b"] == "(3,) float32, non-trainable"
    assert facts["scale"] == "() float32"
    assert facts["Total params"] == "31"
    assert facts["Trainable params"] == "25" and facts["Non-trainable params"] == "6"


def test_keras_model_html_matches_summary_counts():
    keras = tf.keras
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="dense"),
                              keras.layers.BatchNormalization(name="batch_normalization"),
                              keras.layers.Dense(1, name="dense_1")])
    markup = model._repr_html_()
    text = _text(markup)
    for layer in ("dense (Dense)", "batch_normalization (BatchNormalization)",
                  "dense_1 (Dense)"):
        assert layer in text
    facts = _facts(markup)
    # Keras 3's summary of this model: 31 params, 25 trainable, 6 non-trainable
    assert (facts["Total params"], facts["Trainable params"],
            facts["Non-trainable params"]) == ("31", "25", "6")
    assert facts["kernel"] == "(3, 1) float32"  # the last layer's, in order
    assert facts["moving_mean"] == "(3,) float32, non-trainable"
    assert "unbuilt" in _text(keras.layers.Dense(2)._repr_html_())


def test_concrete_function_html_shows_signature_ops_and_captured_variables():
    scale = tf.Variable([1.0, 2.0, 3.0], name="scale")

    @tf.function
    def weighted(x):
        return tf.reduce_sum(x * scale)

    concrete = weighted.get_concrete_function(tf.TensorSpec([None, 3], tf.float32))
    facts = _facts(concrete._repr_html_())
    assert facts["signature"] == concrete.pretty_printed_signature(verbose=False)
    assert facts["operations"] == str(concrete.graph.operations_count)
    assert int(facts["operations"]) > 1
    assert facts["captured variables"] == "scale:0"


def test_dataset_html_shows_cardinality_and_element_spec():
    ds = tf.data.Dataset.from_tensor_slices({"x": tf.ones([5, 2]), "y": tf.zeros([5])}).batch(2)
    facts = _facts(ds._repr_html_())
    assert facts["cardinality"] == "3"
    assert facts["element['x']"] == "TensorSpec(shape=(None, 2), dtype=eager.float32, name=None)"
    assert facts["element['y']"] == "TensorSpec(shape=(None,), dtype=eager.float32, name=None)"
    assert _facts(tf.data.Dataset.range(3).repeat()._repr_html_())["cardinality"] == "infinite"


def test_builders_escape_every_user_text():
    card = rich_display.facts_card("<b>", [("<k>", "<v>")], body_text="<t>", note="<n>")
    for raw in ("<b>", "<k>", "<v>", "<t>", "<n>"):
        assert raw not in card.split("</style>")[1]
    tree = rich_display.tree_html("<title>", rich_display.tree_node("<x>", "<y>", [("<z>", "1")]))
    body = tree.split("</style>")[1]
    assert "<x>" not in body and "&lt;x&gt;" in body and "&lt;title&gt;" in body


# -- in a real kernel ----------------------------------------------------------------------------

def test_kernel_displays_tensors_as_html_and_keeps_plain_text(kernel):
    kernel.run("import eager as tf\nimport numpy as np")
    bundle = kernel.result("tf.constant([[1.0, 2.0], [3.0, 4.0]])")
    assert bundle["text/plain"] == ("<eager.Tensor: shape=(2, 2), dtype=float32, numpy=\n"
                                    "array([[1., 2.],\n       [3., 4.]], dtype=float32)>")
    assert _facts(bundle["text/html"])["shape"] == "(2, 2)"
    big = kernel.result("tf.constant(np.arange(10**6, dtype=np.float32).reshape(1000, 1000))")
    assert len(big["text/html"]) < 4000 and "..." in _text(big["text/html"])
    unsafe = kernel.result("tf.constant('<script>alert(1)</script>')")
    assert "<script>alert" not in unsafe["text/html"]


def test_kernel_displays_variables_modules_functions_and_datasets(kernel):
    kernel.run("import eager as tf\nv = tf.Variable([1.0, 2.0], name='v')")
    assert _facts(kernel.result("v")["text/html"])["name"] == "v:0"
    model = kernel.result(
        "m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])\nm")
    assert "<details" in model["text/html"] and "10 params" in _text(model["text/html"])
    assert re.fullmatch(r"<Sequential name=sequential(_\d+)?, built=True>", model["text/plain"])
    fn = kernel.result("f = tf.function(lambda x: x * v)\n"
                       "f.get_concrete_function(tf.TensorSpec([2], tf.float32))")
    assert _facts(fn["text/html"])["captured variables"] == "v:0"
    ds = kernel.result("tf.data.Dataset.range(4).batch(2)")
    assert _facts(ds["text/html"])["cardinality"] == "2"
    assert ds["text/plain"].startswith("<_BatchDataset element_spec=TensorSpec(")


def test_kernel_displays_a_failed_async_tensor_without_raising(kernel):
    outputs = kernel.run(
        "import eager as tf\n"
        "with tf.experimental.async_scope():\n"
        "    bad = tf.gather(tf.constant([1.0, 2.0]), [5])\n"
        "    try:\n"
        "        tf.experimental.async_wait()\n"
        "    except tf.errors.InvalidArgumentError:\n"
        "        pass\n"
        "    display(bad)\n"
        "    tf.experimental.async_clear_error()\n")
    assert [o["output_type"] for o in outputs] == ["display_data"]
    bundle = outputs[0]["data"]
    assert bundle["text/plain"].endswith("numpy=<failed: InvalidArgumentError>>")
    assert "async_clear_error()" in _text(bundle["text/html"])
    assert kernel.result("float(tf.reduce_sum(tf.ones([3])))")["text/plain"] == "3.0"
