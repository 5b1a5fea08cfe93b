"""Model serialization against Keras 3.15 (goldens recorded with TF 2.21): Sequential and
functional configs, from_config round trips, clone_model, to_json, `.keras` archives written
and read back in a fresh process (predictions and a resumed `fit`), `keras.saving`'s names, and
damaged or hostile archives."""

import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from eager import keras
from eager.keras import layers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# keras.Sequential([keras.Input((4,)), Dense(3, "relu", name="d1"), Dropout(0.5, name="drop"),
# Dense(2, name="d2")], name="seq").get_config(), and
# keras.Model([a, b], Dense(1, name="out")(Concatenate(name="cat")([a, b])), name="fun")
# .get_config() with a = Input((3,), name="a"), b = Input((2,), name="b"), from Keras 3.15.
KERAS_CONFIGS = json.loads(r"""
{
 "sequential": {
  "name": "seq",
  "trainable": true,
  "dtype": {
   "module": "keras",
   "class_name": "DTypePolicy",
   "config": {
    "name": "float32"
   },
   "registered_name": null
  },
  "layers": [
   {
    "module": "keras.layers",
    "class_name": "InputLayer",
    "config": {
     "batch_shape": [
      null,
      4
     ],
     "dtype": "float32",
     "sparse": false,
     "ragged": false,
     "name": "input_layer",
     "optional": false
    },
    "registered_name": null
   },
   {
    "module": "keras.layers",
    "class_name": "Dense",
    "config": {
     "name": "d1",
     "trainable": true,
     "dtype": {
      "module": "keras",
      "class_name": "DTypePolicy",
      "config": {
       "name": "float32"
      },
      "registered_name": null
     },
     "units": 3,
     "activation": "relu",
     "use_bias": true,
     "kernel_initializer": {
      "module": "keras.initializers",
      "class_name": "GlorotUniform",
      "config": {
       "seed": null,
       "input_axes": null,
       "output_axes": null
      },
      "registered_name": null
     },
     "bias_initializer": {
      "module": "keras.initializers",
      "class_name": "Zeros",
      "config": {},
      "registered_name": null
     },
     "kernel_regularizer": null,
     "bias_regularizer": null,
     "kernel_constraint": null,
     "bias_constraint": null,
     "quantization_config": null
    },
    "registered_name": null,
    "build_config": {
     "input_shape": [
      null,
      4
     ]
    }
   },
   {
    "module": "keras.layers",
    "class_name": "Dropout",
    "config": {
     "name": "drop",
     "trainable": true,
     "dtype": {
      "module": "keras",
      "class_name": "DTypePolicy",
      "config": {
       "name": "float32"
      },
      "registered_name": null
     },
     "rate": 0.5,
     "seed": null,
     "noise_shape": null
    },
    "registered_name": null
   },
   {
    "module": "keras.layers",
    "class_name": "Dense",
    "config": {
     "name": "d2",
     "trainable": true,
     "dtype": {
      "module": "keras",
      "class_name": "DTypePolicy",
      "config": {
       "name": "float32"
      },
      "registered_name": null
     },
     "units": 2,
     "activation": "linear",
     "use_bias": true,
     "kernel_initializer": {
      "module": "keras.initializers",
      "class_name": "GlorotUniform",
      "config": {
       "seed": null,
       "input_axes": null,
       "output_axes": null
      },
      "registered_name": null
     },
     "bias_initializer": {
      "module": "keras.initializers",
      "class_name": "Zeros",
      "config": {},
      "registered_name": null
     },
     "kernel_regularizer": null,
     "bias_regularizer": null,
     "kernel_constraint": null,
     "bias_constraint": null,
     "quantization_config": null
    },
    "registered_name": null,
    "build_config": {
     "input_shape": [
      null,
      3
     ]
    }
   }
  ],
  "build_input_shape": [
   null,
   4
  ]
 },
 "two_inputs": {
  "name": "fun",
  "trainable": true,
  "layers": [
   {
    "module": "keras.layers",
    "class_name": "InputLayer",
    "config": {
     "batch_shape": [
      null,
      3
     ],
     "dtype": "float32",
     "sparse": false,
     "ragged": false,
     "name": "a",
     "optional": false
    },
    "registered_name": null,
    "name": "a",
    "inbound_nodes": []
   },
   {
    "module": "keras.layers",
    "class_name": "InputLayer",
    "config": {
     "batch_shape": [
      null,
      2
     ],
     "dtype": "float32",
     "sparse": false,
     "ragged": false,
     "name": "b",
     "optional": false
    },
    "registered_name": null,
    "name": "b",
    "inbound_nodes": []
   },
   {
    "module": "keras.layers",
    "class_name": "Concatenate",
    "config": {
     "name": "cat",
     "trainable": true,
     "dtype": {
      "module": "keras",
      "class_name": "DTypePolicy",
      "config": {
       "name": "float32"
      },
      "registered_name": null
     },
     "axis": -1
    },
    "registered_name": null,
    "build_config": {
     "input_shape": [
      [
       null,
       3
      ],
      [
       null,
       2
      ]
     ]
    },
    "name": "cat",
    "inbound_nodes": [
     {
      "args": [
       [
        {
         "class_name": "__keras_tensor__",
         "config": {
          "shape": [
           null,
           3
          ],
          "dtype": "float32",
          "keras_history": [
           "a",
           0,
           0
          ]
         }
        },
        {
         "class_name": "__keras_tensor__",
         "config": {
          "shape": [
           null,
           2
          ],
          "dtype": "float32",
          "keras_history": [
           "b",
           0,
           0
          ]
         }
        }
       ]
      ],
      "kwargs": {}
     }
    ]
   },
   {
    "module": "keras.layers",
    "class_name": "Dense",
    "config": {
     "name": "out",
     "trainable": true,
     "dtype": {
      "module": "keras",
      "class_name": "DTypePolicy",
      "config": {
       "name": "float32"
      },
      "registered_name": null
     },
     "units": 1,
     "activation": "linear",
     "use_bias": true,
     "kernel_initializer": {
      "module": "keras.initializers",
      "class_name": "GlorotUniform",
      "config": {
       "seed": null,
       "input_axes": null,
       "output_axes": null
      },
      "registered_name": null
     },
     "bias_initializer": {
      "module": "keras.initializers",
      "class_name": "Zeros",
      "config": {},
      "registered_name": null
     },
     "kernel_regularizer": null,
     "bias_regularizer": null,
     "kernel_constraint": null,
     "bias_constraint": null,
     "quantization_config": null
    },
    "registered_name": null,
    "build_config": {
     "input_shape": [
      null,
      5
     ]
    },
    "name": "out",
    "inbound_nodes": [
     {
      "args": [
       {
        "class_name": "__keras_tensor__",
        "config": {
         "shape": [
          null,
          5
         ],
         "dtype": "float32",
         "keras_history": [
          "cat",
          0,
          0
         ]
        }
       }
      ],
      "kwargs": {}
     }
    ]
   }
  ],
  "input_layers": [
   [
    "a",
    0,
    0
   ],
   [
    "b",
    0,
    0
   ]
  ],
  "output_layers": [
   "out",
   0,
   0
  ]
 }
}
""")


def _sequential():
    return keras.Sequential([keras.Input((4,), name="input_layer"),
                             layers.Dense(3, activation="relu", name="d1"),
                             layers.Dropout(0.5, name="drop"), layers.Dense(2, name="d2")],
                            name="seq")


def _two_inputs():
    a = keras.Input((3,), name="a")
    b = keras.Input((2,), name="b")
    x = layers.Concatenate(name="cat")([a, b])
    return keras.Model([a, b], layers.Dense(1, name="out")(x), name="fun")


def _json(value):
    return json.loads(json.dumps(value))


def _same_outputs(a, b, x):
    b.set_weights(a.get_weights())
    np.testing.assert_allclose(b(x).numpy(), a(x).numpy(), rtol=1e-6, atol=1e-6)


X4 = np.random.RandomState(0).rand(5, 4).astype("float32")
XA = np.random.RandomState(1).rand(5, 3).astype("float32")
XB = np.random.RandomState(2).rand(5, 2).astype("float32")


# -- configs -------------------------------------------------------------------------------------
def test_sequential_config_is_keras():
    assert _json(_sequential().get_config()) == KERAS_CONFIGS["sequential"]


def test_functional_config_is_keras():
    assert _json(_two_inputs().get_config()) == KERAS_CONFIGS["two_inputs"]


def test_sequential_from_keras_config_rebuilds_same_model():
    model = keras.Sequential.from_config(KERAS_CONFIGS["sequential"])
    assert [type(layer).__name__ for layer in model.layers] == ["Dense", "Dropout", "Dense"]
    assert [layer.name for layer in model.layers] == ["d1", "drop", "d2"]
    assert model.built and [tuple(w.shape) for w in model.weights] == [(4, 3), (3,), (3, 2),
                                                                        (2,)]
    _same_outputs(_sequential(), model, X4)
    assert _json(model.get_config()) == KERAS_CONFIGS["sequential"]


def test_functional_round_trip_two_inputs_and_concatenate():
    original = _two_inputs()
    rebuilt = keras.Model.from_config(_json(original.get_config()))
    assert type(rebuilt).__name__ == "Functional"
    assert [layer.name for layer in rebuilt.layers] == ["a", "b", "cat", "out"]
    rebuilt.set_weights(original.get_weights())
    np.testing.assert_allclose(rebuilt([XA, XB]).numpy(), original([XA, XB]).numpy(),
                               rtol=1e-6)
    assert _json(rebuilt.get_config()) == KERAS_CONFIGS["two_inputs"]


def test_nested_models_round_trip():
    inner = keras.Sequential([keras.Input((3,)), layers.Dense(3, name="i1")], name="inner")
    x = keras.Input((3,), name="x")
    shared = layers.Dense(3, name="shared")
    h = shared(inner(x))
    h = shared(h)  # a layer called twice: node indices 0 and 1
    sub_in = keras.Input((3,), name="sub_in")
    sub = keras.Model(sub_in, layers.Dense(2, name="s1")(sub_in), name="sub")
    model = keras.Model(x, {"y": sub(h), "h": h}, name="outer")
    config = _json(model.get_config())
    shared_nodes = [e for e in config["layers"] if e["name"] == "shared"][0]["inbound_nodes"]
    assert [n["args"][0]["config"]["keras_history"] for n in shared_nodes] == \
        [["inner", 0, 0], ["shared", 0, 0]]
    assert config["output_layers"] == {"y": ["sub", 0, 0], "h": ["shared", 1, 0]}
    rebuilt = keras.Model.from_config(config)
    assert [type(layer).__name__ for layer in rebuilt.layers] == \
        [type(layer).__name__ for layer in model.layers]
    rebuilt.set_weights(model.get_weights())
    got, want = rebuilt(XA), model(XA)
    for key in ("y", "h"):
        np.testing.assert_allclose(got[key].numpy(), want[key].numpy(), rtol=1e-6)


@keras.saving.register_keras_serializable(package="SavingTest")
class Scaled(keras.Model):
    def __init__(self, units=2, scale=1.0, **kwargs):
        super().__init__(**kwargs)
        self.units, self.scale = units, scale
        self.dense = layers.Dense(units)

    def call(self, x):
        return self.dense(x) * self.scale

    def get_config(self):
        return {**super().get_config(), "units": self.units, "scale": self.scale}


def test_registered_subclassed_model_round_trip():
    model = Scaled(3, scale=2.0, name="scaled")
    model(X4)
    config = keras.saving.serialize_keras_object(model)
    assert config["registered_name"] == "SavingTest>Scaled" and config["module"] is None
    assert _json(config["build_config"]) == {"input_shape": [5, 4]}
    assert keras.saving.get_registered_name(Scaled) == "SavingTest>Scaled"
    assert keras.saving.get_registered_object("SavingTest>Scaled") is Scaled
    rebuilt = keras.saving.deserialize_keras_object(_json(config))
    assert type(rebuilt) is Scaled and rebuilt.scale == 2.0 and rebuilt.built
    _same_outputs(model, rebuilt, X4)


def test_subclassed_model_without_config_has_keras_error():
    class Opaque(keras.Model):
        def __init__(self, units, thing):
            super().__init__()
            self.dense = layers.Dense(units)

        def call(self, x):
            return self.dense(x)

    with pytest.raises(NotImplementedError, match="Object Opaque was created by passing\n"
                       "non-serializable argument values in `__init__\\(\\)`"):
        Opaque(2, object()).get_config()


def test_model_from_config_with_missing_argument_has_keras_error():
    class Needs(keras.Model):
        def __init__(self, units):
            super().__init__()

        def get_config(self):
            return {}

    with pytest.raises(TypeError, match="Unable to revive model from config. When overriding "
                       "the `get_config\\(\\)` method"):
        Needs.from_config({})


# -- clone_model, to_json ------------------------------------------------------------------------
def test_clone_model_sequential_fresh_weights_same_architecture():
    model = _sequential()
    model.compile(optimizer="sgd", loss="mse")
    clone = keras.models.clone_model(model)
    assert type(clone) is keras.Sequential and clone.name == "seq"
    assert [tuple(w.shape) for w in clone.weights] == [tuple(w.shape) for w in model.weights]
    assert not any(a is b for a, b in zip(clone.weights, model.weights))
    assert not np.allclose(clone.weights[0].numpy(), model.weights[0].numpy())
    assert clone.compiled  # Keras 3 compiles a Sequential clone like its original
    _same_outputs(model, clone, X4)


def test_clone_model_functional_and_clone_function_and_input_tensors():
    model = _two_inputs()
    seen = []

    def clone_function(layer):
        seen.append(layer.name)
        return layer.__class__.from_config(layer.get_config())

    clone = keras.models.clone_model(model, clone_function=clone_function)
    assert sorted(seen) == ["cat", "out"]
    assert [layer.name for layer in clone.layers] == ["a", "b", "cat", "out"]
    _same_outputs(model, clone, [XA, XB])
    new_a, new_b = keras.Input((3,), name="na"), keras.Input((2,), name="nb")
    clone = keras.models.clone_model(model, input_tensors=[new_a, new_b])
    assert clone.inputs[0] is new_a
    with pytest.raises(ValueError, match="Arguments `clone_function` and `input_tensors` are "
                       "only supported for Sequential models or Functional models"):
        keras.models.clone_model(Scaled(2), clone_function=lambda layer: layer)


def test_to_json_and_model_from_json():
    model = _two_inputs()
    text = model.to_json()
    assert json.loads(text)["class_name"] == "Functional"
    rebuilt = keras.models.model_from_json(text)
    assert [layer.name for layer in rebuilt.layers] == ["a", "b", "cat", "out"]
    _same_outputs(model, rebuilt, [XA, XB])


# -- .keras archives -----------------------------------------------------------------------------
def _run_fresh(code, tmp_path):
    script = tmp_path / "child.py"
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=ROOT)
    result = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def _data():
    rng = np.random.RandomState(3)
    return rng.rand(64, 4).astype("float32"), rng.rand(64, 2).astype("float32")


def test_save_load_in_fresh_process_predicts_and_resumes_fit(tmp_path):
    x, y = _data()
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    model = keras.Sequential([keras.Input((4,)), layers.Dense(3, activation="relu"),
                              layers.Dense(2)])  # no Dropout: its masks are eager's stream
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    path = tmp_path / "m.keras"
    model.save(path)
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["config.json", "metadata.json",
                                         "model.weights.eager_checkpoint"]
        config = json.loads(zf.read("config.json"))
    assert config["class_name"] == "Sequential" and config["module"] == "keras"
    assert config["compile_config"]["loss"] == "mse"
    assert config["compile_config"]["metrics"] == ["mae"]
    assert config["compile_config"]["optimizer"]["class_name"] == "Adam"
    predicted = model.predict(x, verbose=0)
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    continued = model.get_weights()
    _run_fresh("""
import numpy as np
from eager import keras
model = keras.models.load_model("m.keras")
x, y = np.load("x.npy"), np.load("y.npy")
np.save("predicted.npy", model.predict(x, verbose=0))
assert model.compiled and int(model.optimizer.iterations.numpy()) == 4
model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
for i, w in enumerate(model.get_weights()):
    np.save(f"w{i}.npy", w)
""", tmp_path)
    np.testing.assert_array_equal(np.load(tmp_path / "predicted.npy"), predicted)
    for i, w in enumerate(continued):
        np.testing.assert_allclose(np.load(tmp_path / f"w{i}.npy"), w, rtol=1e-6, atol=1e-7)


def test_load_model_compile_false_and_functional_and_subclassed(tmp_path):
    model = _two_inputs()
    model.compile(optimizer="sgd", loss="mse")
    model.save(tmp_path / "f.keras")
    loaded = keras.saving.load_model(tmp_path / "f.keras", compile=False)
    assert not loaded.compiled
    np.testing.assert_array_equal(loaded([XA, XB]).numpy(), model([XA, XB]).numpy())
    sub = Scaled(3, scale=0.5)
    sub(X4)
    keras.saving.save_model(sub, tmp_path / "s.keras")
    loaded = keras.models.load_model(tmp_path / "s.keras")
    assert type(loaded) is Scaled
    np.testing.assert_array_equal(loaded(X4).numpy(), sub(X4).numpy())


def test_lambda_layer_is_refused_in_safe_mode(tmp_path):
    model = keras.Sequential([keras.Input((4,)), layers.Lambda(lambda t: t * 2.0)])
    model.save(tmp_path / "l.keras")
    with pytest.raises(ValueError, match="Requested the deserialization of a `Lambda` layer "
                       "whose `function` is a Python lambda. This carries a potential risk of "
                       "arbitrary code execution"):
        keras.models.load_model(tmp_path / "l.keras")
    with pytest.raises(ValueError, match="carries no code"):
        keras.models.load_model(tmp_path / "l.keras", safe_mode=False)


def double(t):
    return t * 2.0


def test_named_lambda_function_comes_from_custom_objects(tmp_path):
    model = keras.Sequential([keras.Input((4,)), layers.Lambda(double)])
    model.save(tmp_path / "l.keras")
    loaded = keras.models.load_model(tmp_path / "l.keras", custom_objects={"double": double})
    np.testing.assert_array_equal(loaded(X4).numpy(), X4 * 2.0)


def test_save_paths_have_keras_errors(tmp_path):
    model = _sequential()
    with pytest.raises(ValueError, match="Invalid filepath extension for saving. Please add "
                       "either a `.keras` extension for the native Keras format"):
        model.save(tmp_path / "dir")
    with pytest.raises(ImportError, match="`save_model\\(\\)` using h5 format requires h5py"):
        model.save(tmp_path / "m.h5")
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="File not found: filepath=.*Please ensure the file is "
                       "an accessible `.keras` zip file."):
        keras.models.load_model(tmp_path / "missing.keras")
    with pytest.raises(ValueError, match="File format not supported: filepath="):
        keras.models.load_model(tmp_path / "dir")


def _rewrite(src, dst, change):
    with zipfile.ZipFile(src) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    change(members)
    with zipfile.ZipFile(dst, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def _config_edit(edit):
    def change(members):
        config = json.loads(members["config.json"])
        edit(config)
        members["config.json"] = json.dumps(config).encode()
    return change


def _flip_weights(members):
    data = bytearray(members["model.weights.eager_checkpoint"])
    data[len(data) // 2] ^= 0xFF
    members["model.weights.eager_checkpoint"] = bytes(data)


def _extra_member(members):
    members["payload.pkl"] = b"\x80\x04."


def _bad_json(members):
    members["config.json"] = b"{" * 100000


def _widen(config):
    config["config"]["layers"][3]["config"]["units"] = 5


def _unknown_class(config):
    config["config"]["layers"][1]["class_name"] = "os.system"


def _not_a_model(config):
    config["class_name"] = "double"
    config["registered_name"] = None


@pytest.mark.parametrize("change, message", [
    (_flip_weights, "weights member is damaged"),
    (_extra_member, "unexpected members \\['payload.pkl'\\]"),
    (_bad_json, "config.json is not valid JSON"),
    (_config_edit(_widen), "holds shape \\(3, 2\\)"),
    (_config_edit(_unknown_class), "Unknown layer: 'os.system'"),
])
def test_hostile_archives_raise_clear_errors(tmp_path, change, message):
    model = _sequential()
    model.save(tmp_path / "good.keras")
    _rewrite(tmp_path / "good.keras", tmp_path / "bad.keras", change)
    with pytest.raises(ValueError, match=message):
        keras.models.load_model(tmp_path / "bad.keras")


def test_not_an_archive(tmp_path):
    (tmp_path / "x.keras").write_bytes(b"not a zip at all")
    with pytest.raises(ValueError, match="is not a valid `.keras` archive.*not a zip file"):
        keras.models.load_model(tmp_path / "x.keras")
    model = _sequential()
    model.save(tmp_path / "t.keras")
    data = (tmp_path / "t.keras").read_bytes()
    (tmp_path / "t.keras").write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match="is not a valid `.keras` archive"):
        keras.models.load_model(tmp_path / "t.keras")


def test_archive_naming_a_function_is_not_a_model(tmp_path):
    model = _sequential()
    model.save(tmp_path / "good.keras")
    _rewrite(tmp_path / "good.keras", tmp_path / "bad.keras", _config_edit(_not_a_model))
    with pytest.raises(ValueError, match="does not describe a Keras model"):
        keras.models.load_model(tmp_path / "bad.keras", custom_objects={"double": double})


def test_saving_namespace_has_keras_names():
    saving = keras.saving
    for name in ("register_keras_serializable", "get_registered_name", "get_registered_object",
                 "custom_object_scope", "CustomObjectScope", "get_custom_objects",
                 "serialize_keras_object", "deserialize_keras_object", "save_model",
                 "load_model", "save_weights", "load_weights"):
        assert callable(getattr(saving, name)), name
    assert keras.models.load_model is saving.load_model
    with saving.custom_object_scope({"double": double}):
        assert saving.get_registered_object("double") is double
    assert saving.get_registered_object("double") is None


def test_saving_weights_functions(tmp_path):
    model = _sequential()
    keras.saving.save_weights(model, tmp_path / "w.weights.h5")
    other = _sequential()
    keras.saving.load_weights(other, tmp_path / "w.weights.h5")
    _same_outputs(model, other, X4)
    model.save(tmp_path / "m.keras")
    third = _sequential()
    keras.saving.load_weights(third, tmp_path / "m.keras")
    np.testing.assert_array_equal(third(X4).numpy(), model(X4).numpy())
