"""Normalization, Rescaling, Resizing, CenterCrop, GroupNormalization, UnitNormalization,
Discretization and CategoryEncoding against Keras 3.15 goldens
(tests/fixtures/keras_reshaping_preprocessing_goldens.json): outputs, gradients, configs,
errors, traced calls; `adapt` over arrays, tensors and `eager.data.Dataset`s."""

import json

import numpy as np
import pytest

import eager as tf
from eager.keras import layers

from layer_goldens import arr, same_config
from reshaping_preprocessing_cases import CATEGORY_CASES
from reshaping_preprocessing_goldens import (GOLDENS, check_case, check_error, error_names_of,
                                             names_of)

PREPROCESSING = {"Normalization", "Rescaling", "Resizing", "CenterCrop", "GroupNormalization",
                 "UnitNormalization", "Discretization"}


@pytest.mark.parametrize("name", names_of(PREPROCESSING))
def test_matches_keras(name):
    check_case(name)


@pytest.mark.parametrize("name", error_names_of(PREPROCESSING | {"CategoryEncoding"}))
def test_errors_match_keras(name):
    check_error(name)


@pytest.mark.parametrize("name", sorted(CATEGORY_CASES))
def test_category_encoding_matches_keras(name):
    kwargs, x, call = CATEGORY_CASES[name]
    golden = GOLDENS["category"][name]
    layer = layers.CategoryEncoding(**kwargs)
    call = {k: np.asarray(v, "float32") for k, v in call.items()}
    y = layer(np.asarray(x, "int32"), **call)
    assert y.dtype.name == golden["dtype"]
    np.testing.assert_allclose(y.numpy(), golden["value"])
    same_config(layer.get_config(), golden["config"])


def test_category_encoding_ignores_out_of_range_ids_and_checks_count_weights():
    layer = layers.CategoryEncoding(3)
    np.testing.assert_allclose(layer(np.array([[0, 3]], "int32")).numpy(), [[1, 0, 0]])
    with pytest.raises(ValueError, match="`count_weights` is not used"):
        layer(np.array([[0, 1]]), count_weights=np.ones((1, 2), "float32"))


def test_normalization_adapt_over_dataset_and_batches_equals_whole_array():
    data = arr(3, (20, 3))
    whole = layers.Normalization()
    whole.adapt(data)
    for source in (tf.data.Dataset.from_tensor_slices(data).batch(6),
                   [data[:7], data[7:]], tf.constant(data)):
        layer = layers.Normalization()
        layer.adapt(source)
        np.testing.assert_allclose(layer.adapt_mean.numpy(), whole.adapt_mean.numpy(),
                                   rtol=1e-5)
        np.testing.assert_allclose(layer.adapt_variance.numpy(),
                                   whole.adapt_variance.numpy(), rtol=1e-5)
    # a dataset of rank-1 elements is batched first (each element is one scalar feature row)
    scalars = layers.Normalization(axis=None)
    scalars.adapt(tf.data.Dataset.from_tensor_slices(data[:, 0]))
    np.testing.assert_allclose(scalars.adapt_mean.numpy(), data[:, 0].mean(), rtol=1e-5)


def test_normalization_weights_and_traced_reads_after_adapt():
    layer = layers.Normalization()
    layer.build((None, 3))
    assert [w.name for w in layer.weights] == ["mean", "variance", "count"]
    assert layer.trainable_weights == []
    traced = tf.function(lambda x: layer(x))
    x = arr(0, (4, 3))
    np.testing.assert_allclose(traced(x).numpy(), x, rtol=1e-6)     # identity until adapted
    layer.adapt(arr(3, (20, 3)))
    np.testing.assert_allclose(traced(x).numpy(), layer(x).numpy(), rtol=1e-6)
    assert not np.allclose(layer(x).numpy(), x)


def test_normalization_argument_errors():
    with pytest.raises(ValueError, match="must have the same shape"):
        layers.Normalization(mean=[1.0, 2.0], variance=[1.0])
    with pytest.raises(ValueError, match=r"All `axis` values must be in the range"):
        layers.Normalization(axis=3)(arr(0, (2, 3)))
    layer = layers.Normalization()
    layer.adapt(arr(3, (5, 3)))
    with pytest.raises(ValueError, match="incompatible shape"):
        layer.adapt(arr(3, (5, 4)))


def test_group_normalization_gradients_match_finite_differences():
    layer = layers.GroupNormalization(groups=2, dtype="float64")
    x = tf.Variable(arr(1, (2, 3, 4)).astype("float64"))
    layer(x)
    probe = arr(7, (2, 3, 4)).astype("float64")
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) * probe)
    grads = tape.gradient(loss, [x, *layer.weights])
    for var, grad in zip([x, *layer.weights], grads):
        base, numeric = var.numpy(), np.zeros(var.shape)
        for index in np.ndindex(base.shape):
            for sign in (1, -1):
                shifted = base.copy()
                shifted[index] += sign * 1e-6
                var.assign(shifted)
                numeric[index] += sign * float(np.sum(layer(x).numpy() * probe)) / 2e-6
            var.assign(base)
        np.testing.assert_allclose(grad.numpy(), numeric, rtol=1e-5, atol=1e-7)


def test_group_normalization_unknown_batch_and_instance_norm():
    layer = layers.GroupNormalization(groups=-1)
    x = arr(2, (3, 4, 5, 2))
    y = layer(x)
    assert layer.groups == 2
    mean = y.numpy().mean(axis=(1, 2))
    np.testing.assert_allclose(mean, 0, atol=1e-5)
    traced = tf.function(lambda t: layer(t),
                         input_signature=[tf.TensorSpec([None, None, 5, 2], "float32")])
    np.testing.assert_allclose(traced(x).numpy(), y.numpy(), rtol=1e-5, atol=1e-6)


def test_resizing_and_center_crop_channels_first_symbolic_shapes():
    assert tuple(layers.Resizing(4, 5)(layers.Input((8, 8, 3))).shape) == (None, 4, 5, 3)
    assert tuple(layers.CenterCrop(2, 3, data_format="channels_first")(
        layers.Input((3, 8, 8))).shape) == (None, 3, 2, 3)
    assert tuple(layers.UnitNormalization()(layers.Input((4,))).shape) == (None, 4)


def test_rescaling_casts_integer_images():
    y = layers.Rescaling(1 / 255.0)(np.array([[0, 255]], "uint8"))
    assert y.dtype.name == "float32"
    np.testing.assert_allclose(y.numpy(), [[0.0, 1.0]])


def test_discretization_errors_and_config_round_trip():
    with pytest.raises(ValueError, match="call `adapt"):
        layers.Discretization(num_bins=3)(arr(0, (2,)))
    layer = layers.Discretization(bin_boundaries=[0.0, 1.0], output_mode="count")
    clone = layers.Discretization.from_config(layer.get_config())
    assert json.dumps(clone.get_config()) == json.dumps(layer.get_config())
