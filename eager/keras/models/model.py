"""`keras.Model`: a layer that is the root of a network.

Subclass it (`__init__` making layers, `call` using them), or call it as
`Model(inputs, outputs)` with `keras.Input` tensors to get a `Functional` model (a recorded
graph of layer calls). What a model adds to a layer: `layers`, `get_layer`, `summary()`, and
`save_weights`/`load_weights`. Training (`compile`, `fit`, ...) comes from the `Trainer`
mixin (eager/keras/trainers/)."""

from __future__ import annotations

import inspect
import json

from ...base import nest
from ...core.specs import TensorSpec
from ...functions.polymorphic import function
from .. import serialization
from ..layers.layer import Layer
from ..trainers.trainer import Trainer
from . import compile_config, weights_io
from .summary import print_summary

__all__ = ["Model"]


def _is_functional_call(args, kwargs) -> bool:
    return ("inputs" in kwargs and "outputs" in kwargs) or \
        (len(args) == 2 and "outputs" not in kwargs) or \
        (len(args) == 1 and "outputs" in kwargs)


def _is_shape(value) -> bool:
    return isinstance(value, (tuple, list)) and all(d is None or isinstance(d, int)
                                                    for d in value)


class Model(Trainer, Layer):
    """≈ `keras.Model`: `Model(inputs, outputs, name=None)` builds a functional model;
    a subclass defines `call`."""

    _functional_class = None

    def __new__(cls, *args, **kwargs):
        if cls is Model and _is_functional_call(args, kwargs):
            functional = Model._functional_class  # set by functional.py (it subclasses Model)
            return functional.__new__(functional, *args, **kwargs)
        return super().__new__(cls, *args, **kwargs)

    def __init__(self, *args, **kwargs):
        if args or "inputs" in kwargs:
            raise TypeError("Model: pass `inputs` and `outputs` (the functional API) or "
                            "subclass Model; positional arguments are not accepted here.")
        trainable = kwargs.pop("trainable", True)
        name = kwargs.pop("name", None)
        dtype = kwargs.pop("dtype", None)
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)

    # -- layers ------------------------------------------------------------------------------
    @property
    def layers(self) -> list:
        """The model's direct sublayers, in the order they were assigned."""
        return [layer for layer in self._sublayers()]

    def get_layer(self, name=None, index=None):
        """A layer by `name` or by `index` into `layers` (exactly one of them)."""
        if index is not None and name is not None:
            raise ValueError("Provide only a layer name or a layer index. Received: "
                             f"index={index}, name={name}.")
        if index is not None:
            if len(self.layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only "
                                 f"has {len(self.layers)} layers.")
            return self.layers[index]
        if name is not None:
            for layer in self.layers:
                if layer.name == name:
                    return layer
            raise ValueError(f"No such layer: {name}. Existing layers are: "
                             f"{[layer.name for layer in self.layers]}.")
        raise ValueError("Provide either a layer name or layer index at `get_layer`.")

    # -- SavedModel ------------------------------------------------------------------------------
    def _default_save_signature(self):
        """The signature `eager.saved_model.save(model, path)` writes when given none, as
        Keras 3 models on TensorFlow: `serving_default(inputs)` calling the model, its input
        specs the model's inputs (functional models, Sequential with an input) or the shapes
        it was built with. None for a model never built or called."""
        try:
            inputs = self.input if hasattr(type(self), "input") else None
        except (AttributeError, ValueError):
            inputs = None
        if inputs is not None:
            signature = (nest.map_structure(lambda x: TensorSpec(x.shape, x.dtype), inputs),)
        else:
            shapes = self._build_shapes_dict
            if not shapes or not all(_is_shape(v) for v in shapes.values()):
                return None  # never built, or built from nested inputs: no default
            signature = tuple(TensorSpec(v, self.input_dtype) for v in shapes.values())

        def serving_default(inputs):
            return self(inputs)

        return function(serving_default, input_signature=signature)

    # -- inspection and weights files --------------------------------------------------------
    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False, layer_range=None):
        """Prints the layers, their output shapes and parameter counts as Keras 3 does."""
        print_summary(self, line_length=line_length, positions=positions, print_fn=print_fn,
                      expand_nested=expand_nested, show_trainable=show_trainable)

    def save_weights(self, filepath, overwrite=True):
        """Writes every weight to `filepath` in eager's checkpoint format (see
        `eager.keras.models.weights_io`)."""
        weights_io.save_weights(self, filepath, overwrite=overwrite)

    def load_weights(self, filepath, skip_mismatch=False):
        """Reads weights written by `save_weights` into this model: all or nothing."""
        weights_io.load_weights(self, filepath, skip_mismatch=skip_mismatch)

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Writes a `.keras` archive (config, metadata, weights, optimizer state): see
        `eager.keras.saving.save_model`."""
        from ..saving.saving_api import save_model  # noqa: PLC0415 (saving imports models)
        save_model(self, filepath, overwrite=overwrite, zipped=zipped, **kwargs)

    # -- configs -----------------------------------------------------------------------------
    def get_config(self):
        if type(self).get_config is Model.get_config and type(self).__init__ is Model.__init__:
            return {"name": self.name, "trainable": self.trainable}
        return super().get_config()

    # A subclass that does not override `get_config` gets Layer's automatic config (its
    # `__init__` arguments) or Keras's NotImplementedError, as in Keras 3.
    get_config._keras_default = True

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A functional config (layers, input/output layers) rebuilds a `Functional` when the
        class can take one; otherwise the config is passed to the constructor, as Keras 3."""
        from .functional_config import functional_from_config  # noqa: PLC0415 (cycle)
        functional = Model._functional_class
        is_functional_config = all(k in config for k in ("name", "layers", "input_layers",
                                                         "output_layers"))
        spec = inspect.getfullargspec(cls.__init__)
        revivable = cls in (functional, Model) or \
            spec.args[1:] == inspect.getfullargspec(functional.__init__).args[1:] or \
            (spec.varargs == "args" and spec.varkw == "kwargs")
        if is_functional_config and revivable:
            return functional_from_config(cls, config, custom_objects=custom_objects)
        try:
            return cls(**config)
        except TypeError as e:
            raise TypeError("Unable to revive model from config. When overriding the "
                            "`get_config()` method, make sure that the returned config contains "
                            "all items used as arguments in the  constructor to "
                            f"{cls}, which is the default behavior. You can override this "
                            "default behavior by defining a `from_config(cls, config)` class "
                            f"method to specify how to create an instance of {cls.__name__} "
                            f"from its config.\n\nReceived config={config}\n\nError "
                            f"encountered during deserialization: {e}") from None

    def to_json(self, **kwargs):
        """The model's serialized config (`keras.saving.serialize_keras_object`) as JSON text;
        `keras.models.model_from_json` rebuilds the architecture (fresh weights)."""
        return json.dumps(serialization.serialize_keras_object(self), **kwargs)

    # -- build and compile configs (what `.keras` files record beside the config) ------------
    def __call__(self, *args, **kwargs):
        if args and self._build_shapes_dict is None:
            # The first call's input shape, for `get_build_config` (Keras records it for every
            # model; a subclassed model without `build` never goes through a build step).
            object.__setattr__(self, "_build_shapes_dict",
                               {"input_shape": nest.map_structure(_shape_or_none, args[0])})
        return super().__call__(*args, **kwargs)

    def get_build_config(self):
        shapes = vars(self).get("_build_shapes_dict")
        if not shapes:
            return None
        if len(shapes) == 1:
            return {"input_shape": next(iter(shapes.values()))}
        return {"shapes_dict": dict(shapes)}

    def build_from_config(self, config):
        """Creates the weights of a model rebuilt from its config: its own `build` gets the
        recorded shape; a model without one is called once on zeros of that shape (inference
        mode), as Keras 3 builds a subclassed model."""
        if not config or (self.built and self.weights):
            return
        if "input_shape" in config:
            shape = serialization._shape_tuple(config["input_shape"])
            if type(self).build is not Model.build and \
                    not getattr(type(self).build, "_keras_default", False):
                self.build(shape)
            else:
                self(_zeros_of(shape), training=False) if self._call_has_training_arg else \
                    self(_zeros_of(shape))
            object.__setattr__(self, "_build_shapes_dict", {"input_shape": shape})
        elif "shapes_dict" in config:
            shapes = {k: serialization._shape_tuple(v) for k, v in config["shapes_dict"].items()}
            self.build(**shapes)
            object.__setattr__(self, "_build_shapes_dict", shapes)
        self.built = True

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile="auto", auto_scale_loss=True):
        """`Trainer.compile`, with its arguments kept for `get_compile_config`."""
        super().compile(optimizer=optimizer, loss=loss, loss_weights=loss_weights,
                        metrics=metrics, weighted_metrics=weighted_metrics,
                        run_eagerly=run_eagerly, steps_per_execution=steps_per_execution,
                        jit_compile=jit_compile, auto_scale_loss=auto_scale_loss)
        object.__setattr__(self, "_compile_arguments", {
            "loss": loss, "loss_weights": loss_weights, "metrics": metrics,
            "weighted_metrics": weighted_metrics, "run_eagerly": run_eagerly,
            "steps_per_execution": steps_per_execution, "jit_compile": jit_compile})

    def get_compile_config(self):
        """Keras 3's `compile_config`: the serialized optimizer, loss and metrics and the other
        `compile` arguments ({} before `compile`)."""
        arguments = vars(self).get("_compile_arguments")
        if arguments is None or not self.compiled:
            return {}
        return compile_config.serialize(self.optimizer, arguments)

    def compile_from_config(self, config):
        """Compiles as `get_compile_config` recorded (optimizer rebuilt from its config, losses
        and metrics by name or registered class), then creates the optimizer's variables when
        the model is built, so that saved optimizer state can be loaded into them."""
        if not config:
            return
        self.compile(**compile_config.deserialize(config))
        if self.built and self.optimizer is not None and hasattr(self.optimizer, "build"):
            self.optimizer.build(self.trainable_weights)

    _TF_MODULE_IGNORED_PROPERTIES = Layer._TF_MODULE_IGNORED_PROPERTIES | frozenset({
        "_compile_arguments"})


def _shape_or_none(x):
    if x is None or not hasattr(x, "shape"):
        return None
    shape = x.shape
    if hasattr(shape, "as_list"):
        return tuple(shape.as_list()) if shape.rank is not None else None
    return tuple(shape)


def _zeros_of(shape):
    import numpy as np  # noqa: PLC0415 (only when building a restored model)
    if isinstance(shape, list):
        return [_zeros_of(s) for s in shape]
    return np.zeros(tuple(1 if d is None else d for d in shape), dtype="float32")
