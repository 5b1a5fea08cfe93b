"""eager.keras models (Sequential, functional, subclassed) against Keras 3.15 goldens recorded
with TF 2.21: outputs, weight paths, layer order, summary text, errors, save/load."""

import numpy as np
import pytest

import eager as tf
from eager import keras
from eager.keras import layers

# Keras 3.15's summary() text at an 80-column terminal (line length 76).
SEQ_SUMMARY = """\
Model: "sequential"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ dense (Dense)                   │ (None, 8)              │            40 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_1 (Dense)                 │ (None, 3)              │            27 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 67 (268.00 B)
 Trainable params: 67 (268.00 B)
 Non-trainable params: 0 (0.00 B)
"""

FUNC_SUMMARY = """\
Model: "two_in"
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃ Layer (type)        ┃ Output Shape      ┃    Param # ┃ Connected to      ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│ a (InputLayer)      │ (None, 4)         │          0 │ -                 │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ b (InputLayer)      │ (None, 2)         │          0 │ -                 │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ concatenate         │ (None, 6)         │          0 │ a[0][0], b[0][0]  │
│ (Concatenate)       │                   │            │                   │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ out (Dense)         │ (None, 1)         │          7 │ concatenate[0][0] │
└─────────────────────┴───────────────────┴────────────┴───────────────────┘
 Total params: 7 (28.00 B)
 Trainable params: 7 (28.00 B)
 Non-trainable params: 0 (0.00 B)
"""

SUB_UNBUILT_SUMMARY = """\
Model: "m"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ dense_2 (Dense)                 │ ?                      │   0 (unbuilt) │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_3 (Dense)                 │ ?                      │   0 (unbuilt) │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 0 (0.00 B)
 Trainable params: 0 (0.00 B)
 Non-trainable params: 0 (0.00 B)
"""

SUB_BUILT_SUMMARY = """\
Model: "m"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ dense_2 (Dense)                 │ (2, 5)                 │            20 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_3 (Dense)                 │ (2, 2)                 │            12 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 32 (128.00 B)
 Trainable params: 32 (128.00 B)
 Non-trainable params: 0 (0.00 B)
"""

BIG_TOTALS = (" Total params: 203,530 (795.04 KB)\n Trainable params: 203,530 (795.04 KB)\n"
              " Non-trainable params: 0 (0.00 B)\n")


@pytest.fixture(autouse=True)
def _fresh_names(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    keras.backend.clear_session()
    yield
    keras.backend.clear_session()


class Sub(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.d1 = layers.Dense(5)
        self.d2 = layers.Dense(2)

    def call(self, x):
        return self.d2(self.d1(x))


def _capture(model, **kwargs):
    out = []
    model.summary(print_fn=out.append, **kwargs)
    assert len(out) == 1
    return out[0]


def test_summary_text_equals_keras():
    seq = keras.Sequential([keras.Input((4,)), layers.Dense(8, activation="relu"),
                            layers.Dense(3)])
    assert _capture(seq) == SEQ_SUMMARY
    assert [w.path for w in seq.weights] == ["sequential/dense/kernel", "sequential/dense/bias",
                                             "sequential/dense_1/kernel",
                                             "sequential/dense_1/bias"]
    assert [layer.name for layer in seq.layers] == ["dense", "dense_1"]
    a, b = keras.Input((4,), name="a"), keras.Input((2,), name="b")
    out = layers.Dense(1, name="out")(layers.Concatenate()([a, b]))
    func = keras.Model([a, b], out, name="two_in")
    assert _capture(func) == FUNC_SUMMARY
    assert [layer.name for layer in func.layers] == ["a", "b", "concatenate", "out"]
    assert [w.path for w in func.weights] == ["out/kernel", "out/bias"]
    sub = Sub(name="m")
    assert _capture(sub).replace("dense_2", "dense_X").replace("dense_3", "dense_Y") == \
        SUB_UNBUILT_SUMMARY.replace("dense_2", "dense_X").replace("dense_3", "dense_Y")
    sub(np.ones((2, 3), "float32"))
    assert _capture(sub).replace("dense_2", "dense_X").replace("dense_3", "dense_Y") == \
        SUB_BUILT_SUMMARY.replace("dense_2", "dense_X").replace("dense_3", "dense_Y")
    assert [w.path for w in sub.weights][0].startswith("m/dense_")
    big = keras.Sequential([keras.Input((784,)), layers.Dense(256), layers.Dense(10)])
    assert _capture(big).endswith(BIG_TOTALS)


def test_functional_sequential_subclassed_agree():
    rng = np.random.default_rng(0)
    k1, b1 = rng.normal(size=(3, 5)).astype("float32"), rng.normal(size=5).astype("float32")
    k2, b2 = rng.normal(size=(5, 2)).astype("float32"), rng.normal(size=2).astype("float32")
    x = rng.normal(size=(4, 3)).astype("float32")
    seq = keras.Sequential([layers.Dense(5, input_shape=(3,)), layers.Dense(2)])
    inp = keras.Input((3,))
    func = keras.Model(inp, layers.Dense(2)(layers.Dense(5)(inp)))
    sub = Sub()
    sub(x)
    expected = (x @ k1 + b1) @ k2 + b2
    for model in (seq, func, sub):
        model.set_weights([k1, b1, k2, b2])
        np.testing.assert_allclose(model(x).numpy(), expected, rtol=1e-5, atol=1e-5)
        traced = tf.function(lambda v, m=model: m(v))
        np.testing.assert_allclose(traced(x).numpy(), model(x).numpy(), rtol=1e-6)


def test_functional_dict_io_nested_models_and_get_layer():
    a, b = keras.Input((2,), name="a"), keras.Input((3,), name="b", dtype="float64")
    inner_in = keras.Input((5,))
    inner = keras.Model(inner_in, layers.Dense(1, name="inner_dense")(inner_in), name="inner")
    joined = layers.concatenate([a, b])
    model = keras.Model({"a": a, "b": b}, {"y": inner(joined), "z": joined}, name="outer")
    out = model({"a": np.ones((2, 2)), "b": np.ones((2, 3))})
    assert set(out) == {"y", "z"} and out["y"].shape == (2, 1) and out["z"].shape == (2, 5)
    assert out["z"].dtype == tf.float32  # inputs cast to each Input's dtype, then the layer's
    assert model.get_layer("inner") is inner and model.get_layer(index=0).name == "a"
    assert [w.path for w in model.weights] == ["inner_dense/kernel", "inner_dense/bias"]
    with pytest.raises(ValueError, match="No such layer: nope"):
        model.get_layer("nope")
    with pytest.raises(ValueError, match='Missing data for input "b"'):
        model({"a": np.ones((2, 2))})


def test_bad_inputs_give_keras_errors():
    seq = keras.Sequential([keras.Input((4,)), layers.Dense(3)])
    with pytest.raises(ValueError, match=r"expected axis -1 of input shape to have value 4, but "
                       r"received input with shape \(2, 5\)"):
        seq(np.ones((2, 5), "float32"))
    a, b = keras.Input((4,), name="a"), keras.Input((2,), name="b")
    func = keras.Model([a, b], layers.Concatenate()([a, b]), name="two_in")
    with pytest.raises(ValueError, match=r"Input 1 with name 'b' of layer 'two_in' is "
                       r"incompatible with the layer: expected shape=\(None, 2\), found "
                       r"shape=\(2, 3\)"):
        func([np.ones((2, 4), "float32"), np.ones((2, 3), "float32")])
    with pytest.raises(ValueError, match="Only instances of `keras.Layer` can be added"):
        keras.Sequential().add(3)


def test_sequential_lazy_build_add_pop():
    seq = keras.Sequential([layers.Dense(2)])
    assert not seq.built
    assert "0 (unbuilt)" in _capture(seq)
    seq(np.ones((3, 4), "float32"))
    assert seq.built and seq.count_params() == 10
    assert "│ dense (Dense)                   │ (3, 2)  " in _capture(seq)
    seq.add(layers.Dense(1))
    assert seq(np.ones((3, 4), "float32")).shape == (3, 1)
    assert seq.pop().name == "dense_1" and [layer.name for layer in seq.layers] == ["dense"]
    built = keras.Sequential()
    built.add(layers.Dense(4))
    built.build((None, 6))
    assert built.output_shape == (None, 4) and built.count_params() == 28


def test_trainable_false_freezes_model_weights():
    seq = keras.Sequential([keras.Input((3,)), layers.Dense(2), layers.Dense(1)])
    seq.layers[0].trainable = False
    assert len(seq.trainable_weights) == 2 and len(seq.non_trainable_weights) == 2
    text = _capture(seq)
    assert " Trainable params: 3 (12.00 B)" in text
    assert " Non-trainable params: 8 (32.00 B)" in text


def test_save_load_weights_round_trip_and_mismatch(tmp_path):
    def make():
        return keras.Sequential([keras.Input((3,)), layers.Dense(4), layers.Dense(2)])

    src, dst = make(), make()
    x = np.arange(6, dtype="float32").reshape(2, 3)
    path = tmp_path / "m.weights.h5"
    src.save_weights(path)
    assert not np.allclose(src(x).numpy(), dst(x).numpy())
    dst.load_weights(path)
    np.testing.assert_array_equal(src(x).numpy(), dst(x).numpy())
    with pytest.raises(ValueError, match=r"The filename must end in `.weights.h5`"):
        src.save_weights(tmp_path / "m.h5")
    other = keras.Sequential([keras.Input((3,)), layers.Dense(5), layers.Dense(2)])
    before = other.get_weights()
    with pytest.raises(ValueError, match=r"has shape \(3, 5\), but the file .* holds shape "
                       r"\(3, 4\). Nothing was loaded."):
        other.load_weights(path)
    for old, new in zip(before, other.get_weights()):
        np.testing.assert_array_equal(old, new)
    with pytest.raises(ValueError, match="holds 4 weights, but model"):
        keras.Sequential([keras.Input((3,)), layers.Dense(2)]).load_weights(path)


def test_exports():
    assert tf.keras.Model is keras.models.Model and tf.keras.Sequential is keras.models.Sequential
    assert isinstance(tf.keras.Input((2,)), keras.KerasTensor)
