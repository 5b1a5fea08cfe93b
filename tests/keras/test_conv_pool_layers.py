"""Conv1D/Conv2D and the pooling layers against Keras 3.15 goldens (recorded on TensorFlow)."""

import numpy as np
import pytest

import eager as tf
from eager.devices import registry
from eager.keras import layers
from layer_goldens import GOLDENS, arr, numeric_grad, run_golden, same_config

X4 = arr(1, (2, 5, 5, 2))
X3 = arr(2, (2, 7, 2))

CASES = {
    "conv2d_same": (lambda: layers.Conv2D(3, 3, padding="same"), X4),
    "conv2d_valid_stride": (lambda: layers.Conv2D(2, (2, 3), strides=2), X4),
    "conv2d_dilated_relu": (lambda: layers.Conv2D(2, 2, dilation_rate=2, activation="relu",
                                                  use_bias=False), X4),
    "conv1d_causal": (lambda: layers.Conv1D(3, 3, padding="causal", dilation_rate=2), X3),
    "conv1d_same_stride": (lambda: layers.Conv1D(2, 2, strides=2, padding="same"), X3),
    "maxpool2d": (lambda: layers.MaxPooling2D(2), X4),
    "maxpool2d_same": (lambda: layers.MaxPooling2D(3, strides=2, padding="same"), X4),
    "avgpool2d_same": (lambda: layers.AveragePooling2D(2, padding="same"), X4),
    "maxpool1d": (lambda: layers.MaxPooling1D(), X3),
    "avgpool1d_same": (lambda: layers.AveragePooling1D(3, strides=2, padding="same"), X3),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_forward_matches_keras(case):
    make, x = CASES[case]
    y = run_golden(make(), x)
    np.testing.assert_allclose(y.numpy(), GOLDENS[case], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["conv2d_same", "conv1d_causal", "avgpool2d_same"])
def test_traced_call_matches_eager(case):
    make, x = CASES[case]
    layer = make()
    eager_y = run_golden(layer, x).numpy()
    traced = tf.function(lambda v: layer(v))
    np.testing.assert_allclose(traced(tf.constant(x)).numpy(), eager_y, rtol=1e-6, atol=1e-6)


def test_conv_weights_names_shapes_order():
    layer = layers.Conv2D(3, 3)
    layer(X4)
    assert [(w.path.split("/", 1)[1], list(w.shape)) for w in layer.weights] == \
        [(p.split("/", 1)[1], s) for p, s in GOLDENS["conv2d_weights"]]
    assert [w.name for w in layer.trainable_weights] == ["kernel", "bias"]


@pytest.mark.parametrize("make", [lambda: layers.Conv2D(2, 2, padding="same"),
                                  lambda: layers.Conv1D(2, 3, padding="causal")])
def test_conv_gradients_match_finite_differences(make):
    x = X4[:1, :3, :3] if make().rank == 2 else X3[:1, :4]
    layer = make()
    layer(x)
    weight = tf.constant(arr(9, tuple(layer(x).shape)))

    def loss():
        return tf.reduce_sum(layer(x) * weight)

    with tf.GradientTape() as tape:
        y = loss()
    grads = tape.gradient(y, layer.trainable_weights)
    for g, w in zip(grads, layer.trainable_weights):
        np.testing.assert_allclose(g.numpy(), numeric_grad(loss, w), rtol=2e-2, atol=2e-3)


def test_channels_first_equals_transposed_channels_last():
    last = layers.Conv2D(3, 2, strides=2, padding="same")
    first = layers.Conv2D(3, 2, strides=2, padding="same", data_format="channels_first")
    y_last = run_golden(last, X4).numpy()
    y_first = run_golden(first, np.transpose(X4, (0, 3, 1, 2))).numpy()
    np.testing.assert_allclose(np.transpose(y_first, (0, 2, 3, 1)), y_last, rtol=1e-5,
                               atol=1e-6)
    p = layers.MaxPooling1D(2, data_format="channels_first")
    np.testing.assert_allclose(p(np.transpose(X3, (0, 2, 1))).numpy(),
                               np.transpose(GOLDENS["maxpool1d"], (0, 2, 1)), atol=1e-6)


def test_grouped_conv_is_two_convs():
    x = arr(4, (1, 4, 4, 4))
    grouped = layers.Conv2D(4, 2, groups=2, use_bias=False)
    grouped(x)
    kernel = grouped.kernel.numpy()
    assert kernel.shape == (2, 2, 2, 4)
    halves = []
    for g in range(2):
        single = layers.Conv2D(2, 2, use_bias=False)
        single(x[..., 2 * g:2 * g + 2])
        single.set_weights([kernel[..., 2 * g:2 * g + 2]])
        halves.append(single(x[..., 2 * g:2 * g + 2]).numpy())
    np.testing.assert_allclose(grouped(x).numpy(), np.concatenate(halves, -1), rtol=1e-5,
                               atol=1e-6)


def _assert_pooled(y, x, reduce, axis, keepdims=False):
    """`y`, a global pooling layer's output tensor, is `reduce` (np.mean or np.max) of `x` over
    `axis`: within rtol 1e-6 on the CPU, which sums in numpy's order. A GPU sums in its own
    (tree) order, and where the terms cancel the mean's relative error grows without bound, so
    there a mean may also differ by the rounding any summation order allows: n - 1 float32 ulps
    of the mean of |x| (n: the number of terms)."""
    want = reduce(x, axis=axis, keepdims=keepdims)
    atol = 0.0
    if reduce is np.mean and registry.lookup(y.device).device_type != "CPU":
        n = np.prod([x.shape[a] for a in np.atleast_1d(axis)])
        atol = (n - 1) * np.finfo(np.float32).eps * np.abs(x).mean(axis=axis).max()
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6, atol=atol)


@pytest.mark.parametrize("keepdims", [False, True])
def test_global_pooling(keepdims):
    for cls, reduce in ((layers.GlobalAveragePooling2D, np.mean),
                        (layers.GlobalMaxPooling2D, np.max)):
        _assert_pooled(cls(keepdims=keepdims)(X4), X4, reduce, (1, 2), keepdims)
    for cls, reduce in ((layers.GlobalAveragePooling1D, np.mean),
                        (layers.GlobalMaxPooling1D, np.max)):
        _assert_pooled(cls(keepdims=keepdims)(X3), X3, reduce, 1, keepdims)
    _assert_pooled(layers.GlobalAveragePooling2D(data_format="channels_first")(X4), X4, np.mean,
                   (2, 3))


CONFIGS = {
    "conv2d": lambda: layers.Conv2D(4, 3),
    "conv1d": lambda: layers.Conv1D(2, 3, padding="causal"),
    "max_pooling2d": lambda: layers.MaxPooling2D(),
    "average_pooling1d": lambda: layers.AveragePooling1D(2),
    "global_average_pooling2d": lambda: layers.GlobalAveragePooling2D(keepdims=True),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_get_config_matches_keras(name):
    layer = CONFIGS[name]()
    same_config(layer.get_config(), GOLDENS["configs"][name])
    again = type(layer).from_config(layer.get_config())
    assert again.get_config() == layer.get_config()


def _error(key):
    kind, message = GOLDENS["errors"][key]
    return kind, message


@pytest.mark.parametrize("key, make", [
    ("conv_filters0", lambda: layers.Conv2D(0, 3)),
    ("conv_groups", lambda: layers.Conv2D(3, 3, groups=2)),
    ("conv_kernel_size", lambda: layers.Conv2D(3, (3, 3, 3))),
    ("conv_strides_dilation", lambda: layers.Conv2D(3, 3, strides=2, dilation_rate=2)),
    ("conv_padding", lambda: layers.Conv2D(3, 3, padding="full")),
    ("data_format", lambda: layers.Conv2D(3, 3, data_format="nhwc")),
    ("conv_too_small", lambda: layers.Conv2D(3, 3)(np.ones((1, 2, 2, 1), "float32"))),
])
def test_bad_arguments_give_keras_errors(key, make):
    kind, message = _error(key)
    with pytest.raises(ValueError) as info:
        make()
    assert kind == "ValueError"
    if key == "conv_padding":   # Keras prints a Python set: its order varies between runs
        assert str(info.value).replace("'same', 'valid'", "'valid', 'same'") == \
            message.replace("'same', 'valid'", "'valid', 'same'")
    else:
        assert str(info.value) == message


@pytest.mark.parametrize("key, make, x", [
    ("conv_rank", lambda: layers.Conv2D(3, 3), np.ones((2, 5, 5), "float32")),
    ("pool_rank", lambda: layers.MaxPooling2D(), np.ones((2, 5, 5), "float32")),
])
def test_bad_input_rank_gives_keras_errors(key, make, x):
    layer = make()
    _, message = _error(key)
    expected = message.split("incompatible with the layer: ")[1]
    with pytest.raises(ValueError, match="incompatible with the layer") as info:
        layer(x)
    assert str(info.value).endswith(expected)


def test_wrong_channel_count_after_build():
    layer = layers.Conv2D(2, 3)
    layer(np.ones((1, 5, 5, 2), "float32"))
    expected = _error("conv_channels")[1].split("incompatible with the layer: ")[1]
    with pytest.raises(ValueError) as info:
        layer(np.ones((1, 5, 5, 3), "float32"))
    assert str(info.value).endswith(expected)


def test_pool_window_larger_than_input_is_a_clear_error():
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        layers.MaxPooling2D(3).compute_output_shape((1, 2, 2, 1))
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        layers.MaxPooling2D(3)(np.ones((1, 2, 2, 1), "float32"))


def test_lora_and_dropout_style_refusals_are_clear():
    with pytest.raises(NotImplementedError, match="lora_rank"):
        layers.Conv2D(2, 2, lora_rank=4)
