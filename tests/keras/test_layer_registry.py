"""`keras.layers.serialize` / `deserialize` / `get`, the shared table of built-in layers, and
every built-in layer's `from_config(get_config())` round trip."""

import json

import numpy as np
import pytest

import eager as tf
from eager.keras import layers
from eager.keras.layers.serialization import builtin_layers
from eager.keras.serialization import custom_object_scope, register_keras_serializable

#: One instance of every built-in layer, with non-default arguments where they exist, so a
#: config that drops or renames an argument shows up in the round trip.
SAMPLES = {
    "Layer": lambda: layers.Layer(name="base"),
    "Activation": lambda: layers.Activation("tanh"),
    "Dense": lambda: layers.Dense(3, activation="relu", use_bias=False,
                                  kernel_regularizer="l2"),
    "Identity": lambda: layers.Identity(),
    "InputLayer": lambda: layers.InputLayer(shape=(4,), batch_size=2),
    "Lambda": lambda: layers.Lambda(tf.math.abs),
    "Flatten": lambda: layers.Flatten(),
    "Permute": lambda: layers.Permute((2, 1)),
    "RepeatVector": lambda: layers.RepeatVector(3),
    "ZeroPadding1D": lambda: layers.ZeroPadding1D((1, 2)),
    "ZeroPadding2D": lambda: layers.ZeroPadding2D(((1, 0), (2, 1)),
                                                  data_format="channels_first"),
    "Cropping1D": lambda: layers.Cropping1D((2, 0)),
    "Cropping2D": lambda: layers.Cropping2D(1),
    "UpSampling1D": lambda: layers.UpSampling1D(3),
    "UpSampling2D": lambda: layers.UpSampling2D((2, 3), interpolation="bilinear"),
    "Reshape": lambda: layers.Reshape((2, -1)),
    "Dropout": lambda: layers.Dropout(0.3, seed=1),
    "ELU": lambda: layers.ELU(alpha=0.5),
    "LeakyReLU": lambda: layers.LeakyReLU(negative_slope=0.1),
    "PReLU": lambda: layers.PReLU(shared_axes=[1]),
    "ReLU": lambda: layers.ReLU(max_value=6.0),
    "Softmax": lambda: layers.Softmax(axis=1),
    "Add": lambda: layers.Add(),
    "Average": lambda: layers.Average(),
    "Concatenate": lambda: layers.Concatenate(axis=1),
    "Dot": lambda: layers.Dot(axes=1, normalize=True),
    "Maximum": lambda: layers.Maximum(),
    "Minimum": lambda: layers.Minimum(),
    "Multiply": lambda: layers.Multiply(),
    "Subtract": lambda: layers.Subtract(),
    "Conv1D": lambda: layers.Conv1D(4, 3, strides=2, padding="same"),
    "Conv2D": lambda: layers.Conv2D(4, (2, 3), dilation_rate=2, activation="relu"),
    "Conv1DTranspose": lambda: layers.Conv1DTranspose(2, 3, strides=2, output_padding=1),
    "Conv2DTranspose": lambda: layers.Conv2DTranspose(2, (2, 3), padding="same",
                                                      data_format="channels_first"),
    "DepthwiseConv2D": lambda: layers.DepthwiseConv2D(3, depth_multiplier=2, strides=2),
    "SeparableConv2D": lambda: layers.SeparableConv2D(4, 3, padding="same",
                                                      pointwise_regularizer="l1"),
    "AveragePooling1D": lambda: layers.AveragePooling1D(3, padding="same"),
    "AveragePooling2D": lambda: layers.AveragePooling2D((2, 3)),
    "MaxPooling1D": lambda: layers.MaxPooling1D(2, strides=1),
    "MaxPooling2D": lambda: layers.MaxPooling2D(pool_size=3),
    "GlobalAveragePooling1D": lambda: layers.GlobalAveragePooling1D(keepdims=True),
    "GlobalAveragePooling2D": lambda: layers.GlobalAveragePooling2D(),
    "GlobalMaxPooling1D": lambda: layers.GlobalMaxPooling1D(),
    "GlobalMaxPooling2D": lambda: layers.GlobalMaxPooling2D(keepdims=True),
    "BatchNormalization": lambda: layers.BatchNormalization(momentum=0.9, center=False),
    "LayerNormalization": lambda: layers.LayerNormalization(epsilon=1e-5),
    "GroupNormalization": lambda: layers.GroupNormalization(groups=4, center=False),
    "UnitNormalization": lambda: layers.UnitNormalization(axis=[1, 2]),
    "Normalization": lambda: layers.Normalization(axis=(1, 2), mean=[1.0, 2.0],
                                                  variance=[3.0, 4.0], invert=True),
    "Rescaling": lambda: layers.Rescaling([0.5, 2.0], offset=-1.0),
    "Resizing": lambda: layers.Resizing(4, 5, interpolation="nearest",
                                        crop_to_aspect_ratio=True),
    "CenterCrop": lambda: layers.CenterCrop(3, 2, data_format="channels_first"),
    "Discretization": lambda: layers.Discretization(bin_boundaries=[0.0, 1.0],
                                                    output_mode="one_hot"),
    "CategoryEncoding": lambda: layers.CategoryEncoding(5, output_mode="count"),
    "Embedding": lambda: layers.Embedding(10, 4, mask_zero=True),
    "Masking": lambda: layers.Masking(mask_value=-1.0),
    "RNN": lambda: layers.RNN(layers.SimpleRNNCell(3), return_sequences=True),
    "SimpleRNN": lambda: layers.SimpleRNN(3, dropout=0.1),
    "LSTM": lambda: layers.LSTM(3, return_state=True),
    "GRU": lambda: layers.GRU(3, reset_after=False),
    "SimpleRNNCell": lambda: layers.SimpleRNNCell(3),
    "LSTMCell": lambda: layers.LSTMCell(3, unit_forget_bias=False),
    "GRUCell": lambda: layers.GRUCell(3),
    "StackedRNNCells": lambda: layers.StackedRNNCells([layers.LSTMCell(3),
                                                       layers.GRUCell(2)]),
    "Bidirectional": lambda: layers.Bidirectional(layers.LSTM(3), merge_mode="sum"),
    "TimeDistributed": lambda: layers.TimeDistributed(layers.Dense(2)),
}


def _plain(config):
    return json.loads(json.dumps(config, default=repr))


def test_every_built_in_layer_is_in_the_table_and_sampled():
    table = builtin_layers()
    for name in layers.__all__:
        obj = getattr(layers, name)
        if isinstance(obj, type) and issubclass(obj, layers.Layer):
            assert table[name] is obj
    assert set(table) == set(SAMPLES), set(table) ^ set(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_from_config_of_get_config_rebuilds_the_layer(name):
    layer = SAMPLES[name]()
    config = layer.get_config()
    with custom_object_scope({"abs": tf.math.abs}):     # Lambda's function, by name
        clone = type(layer).from_config(config)
        again = layers.deserialize(layers.serialize(layer))
    assert type(clone) is type(layer)
    assert _plain(clone.get_config()) == _plain(config)
    assert type(again) is type(layer)
    assert _plain(again.get_config()) == _plain(config)


def test_dense_round_trip_keeps_quantization_config_key():
    dense = layers.Dense(3, name="d")
    config = dense.get_config()
    assert config["quantization_config"] is None       # Keras 3.15 writes the key
    assert layers.Dense.from_config(config).get_config() == config
    with pytest.raises(NotImplementedError, match="quantization_config"):
        layers.Dense(3, quantization_config={"mode": "int8"})


def test_serialize_is_keras_shape():
    out = layers.serialize(layers.Dense(3, name="d"))
    assert out["module"] == "keras.layers"
    assert out["class_name"] == "Dense"
    assert out["registered_name"] is None
    assert out["config"]["units"] == 3


def test_deserialize_built_layer_computes_the_same():
    dense = layers.Dense(2, activation="tanh")
    x = np.random.RandomState(0).uniform(-1, 1, (3, 4)).astype("float32")
    dense(x)
    clone = layers.deserialize(layers.serialize(dense))
    clone(x)
    clone.set_weights(dense.get_weights())
    np.testing.assert_allclose(clone(x).numpy(), dense(x).numpy())


def test_deserialize_errors_use_keras_wording():
    message = ("`keras.layers.deserialize` was passed a `config` object that is not a "
               "`keras.layers.Layer`. Received: ")
    with pytest.raises(ValueError) as e:
        layers.deserialize("Dense")
    assert str(e.value) == message + "Dense"
    with pytest.raises(ValueError) as e:
        layers.deserialize(3)
    assert str(e.value) == message + "3"
    config = {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {}}
    with pytest.raises(ValueError, match="GlorotUniform"):     # not a layer
        layers.deserialize(config)
    with pytest.raises(ValueError, match="Unknown layer: 'Nope'"):
        layers.deserialize({"class_name": "Nope", "config": {}})


def test_custom_layers_through_custom_objects_and_registration():
    class Scale(layers.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, x):
            return x * self.factor

    config = layers.serialize(Scale(3.0))
    with pytest.raises(ValueError, match="Unknown layer"):
        layers.deserialize(config)
    assert layers.deserialize(config, custom_objects={"Scale": Scale}).factor == 3.0
    rnn_config = layers.serialize(layers.TimeDistributed(Scale(4.0)))
    wrapped = layers.deserialize(rnn_config, custom_objects={"Scale": Scale})
    assert isinstance(wrapped.layer, Scale) and wrapped.layer.factor == 4.0

    @register_keras_serializable(package="TestRegistry")
    class Shift(layers.Layer):
        def __init__(self, by=1.0, **kwargs):
            super().__init__(**kwargs)
            self.by = by

        def call(self, x):
            return x + self.by

    config = layers.serialize(layers.Bidirectional(layers.RNN(layers.SimpleRNNCell(2))))
    assert isinstance(layers.deserialize(config), layers.Bidirectional)
    assert layers.deserialize(layers.serialize(Shift(5.0))).by == 5.0


def test_get():
    dense = layers.Dense(2)
    assert layers.get(dense) is dense
    assert layers.get(None) is None
    assert isinstance(layers.get("Flatten"), layers.Flatten)
    got = layers.get({"class_name": "Dense", "config": {"units": 4}})
    assert isinstance(got, layers.Dense) and got.units == 4
    with pytest.raises(ValueError, match="Could not interpret layer identifier: 3"):
        layers.get(3)


def test_rnn_wrappers_rebuild_their_inner_layers_from_the_table():
    bi = layers.Bidirectional(layers.GRU(2, return_sequences=True),
                              backward_layer=layers.LSTM(2, return_sequences=True,
                                                         go_backwards=True))
    clone = layers.Bidirectional.from_config(bi.get_config())
    assert isinstance(clone.forward_layer, layers.GRU)
    assert isinstance(clone.backward_layer, layers.LSTM)


def test_lambda_from_config_needs_its_function():
    config = layers.Lambda(tf.math.abs).get_config()
    with pytest.raises(ValueError, match=r"\('abs'\) is not among `custom_objects`"):
        layers.Lambda.from_config(config)
    layer = layers.deserialize(layers.serialize(layers.Lambda(tf.math.abs)),
                               custom_objects={"abs": tf.math.abs})
    np.testing.assert_allclose(layer(np.array([-2.0], "float32")).numpy(), [2.0])
