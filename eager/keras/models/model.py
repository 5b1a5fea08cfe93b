"""`keras.Model`: a layer that is the root of a network.

Subclass it (`__init__` making layers, `call` using them), or call it as
`Model(inputs, outputs)` with `keras.Input` tensors to get a `Functional` model (a recorded
graph of layer calls). What a model adds to a layer: `layers`, `get_layer`, `summary()`, and
`save_weights`/`load_weights`. Training (`compile`, `fit`, ...) comes from the `Trainer`
mixin (eager/keras/trainers/)."""

from __future__ import annotations

from ...base import nest
from ...core.specs import TensorSpec
from ...functions.polymorphic import function
from ..layers.layer import Layer
from ..trainers.trainer import Trainer
from . import weights_io
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

    def get_config(self):
        if type(self).get_config is Model.get_config and type(self).__init__ is Model.__init__:
            return {"name": self.name, "trainable": self.trainable}
        return super().get_config()
