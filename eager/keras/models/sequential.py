"""`keras.Sequential`: a stack of layers, each called on the previous one's output.

Given an input shape (a `keras.Input` first, or `input_shape=` on the first layer) it builds
at once, by calling its layers on a symbolic input, so `summary()` shows output shapes;
otherwise it builds on its first call from the data's shape, as Keras 3 does."""

from __future__ import annotations

from ...base import nest
from ..keras_tensor import KerasTensor
from ..layers.core.input_layer import InputLayer
from ..layers.layer import Layer
from ..serialization import serialize_keras_object
from .layer_configs import deserialize_layer
from .model import Model

__all__ = ["Sequential"]


class Sequential(Model):
    """≈ `keras.Sequential(layers=None, trainable=True, name=None)`."""

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        self._stack = []
        object.__setattr__(self, "_input_layer", None)
        object.__setattr__(self, "_symbolic_outputs", None)
        self.built = False
        for layer in layers or ():
            self.add(layer, rebuild=False)
        self._maybe_rebuild()

    _TF_MODULE_IGNORED_PROPERTIES = Model._TF_MODULE_IGNORED_PROPERTIES | frozenset({
        "_input_layer", "_symbolic_outputs"})

    def add(self, layer, rebuild=True):
        """Appends a layer (or a `keras.Input` tensor, which sets the input shape)."""
        if isinstance(layer, KerasTensor) and layer._keras_history is not None:
            layer = layer._keras_history.operation
        if not isinstance(layer, Layer):
            raise ValueError("Only instances of `keras.Layer` can be added to a Sequential "
                             f"model. Received: {layer} (of type {type(layer)})")
        if isinstance(layer, InputLayer):
            if self._input_layer is not None or self._stack:
                shape = self._input_layer.batch_shape if self._input_layer else None
                raise ValueError(f"Sequential model '{self.name}' has already been configured "
                                 f"to use input shape {shape}. You cannot add a different Input "
                                 "layer to it.")
            object.__setattr__(self, "_input_layer", layer)
        else:
            if any(existing.name == layer.name for existing in self._stack):
                raise ValueError("All layers added to a Sequential model should have unique "
                                 f"names. Name '{layer.name}' is already the name of a layer "
                                 "in this model. Update the `name` argument to pass a unique "
                                 "name.")
            self._stack.append(layer)
        if rebuild:
            self._maybe_rebuild()
        else:
            self.built = False

    def pop(self, rebuild=True):
        """Removes and returns the last layer."""
        if not self._stack:
            raise ValueError("There are no layers in the model.")
        layer = self._stack.pop()
        self.built = False
        object.__setattr__(self, "_symbolic_outputs", None)
        if rebuild:
            self._maybe_rebuild()
        return layer

    def _maybe_rebuild(self):
        self.built = False
        object.__setattr__(self, "_symbolic_outputs", None)
        if self._input_layer is not None:
            self.build(self._input_layer.batch_shape)
        elif self._stack and getattr(self._stack[0], "_batch_input_shape", None) is not None:
            self.build(self._stack[0]._batch_input_shape)

    def build(self, input_shape=None):
        """Builds every layer by calling the stack on a symbolic input of `input_shape`."""
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        input_shape = tuple(input_shape)
        if self._input_layer is None or self._input_layer.batch_shape != input_shape:
            object.__setattr__(self, "_input_layer", InputLayer(batch_shape=input_shape))
        x = self._input_layer.output
        with self._scope():
            for layer in self._stack:
                x = layer(x)
        object.__setattr__(self, "_symbolic_outputs", x)
        self.built = True

    def call(self, inputs, training=None, mask=None):
        x = inputs
        for layer in self._stack:
            x = layer(x)
        return x

    def __call__(self, *args, **kwargs):
        if not self.built and args and not isinstance(args[0], KerasTensor):
            first = nest.flatten(args[0])[0]
            shape = first.shape
            shape = tuple(shape.as_list()) if hasattr(shape, "as_list") else tuple(shape)
            self.build(shape)
        return super().__call__(*args, **kwargs)

    def compute_output_spec(self, inputs, training=None, mask=None):
        x = inputs
        for layer in self._stack:
            x = layer.compute_output_spec(x) if not isinstance(x, KerasTensor) else \
                layer(x)
        return KerasTensor(x.shape, dtype=x.dtype)

    def compute_output_shape(self, input_shape):
        x = KerasTensor(input_shape)
        return self.compute_output_spec(x).shape

    @property
    def layers(self) -> list:
        """The stacked layers (without the input layer, as Keras lists them)."""
        return list(self._stack)

    @property
    def inputs(self):
        return [self._input_layer.output] if self._input_layer is not None else None

    @property
    def outputs(self):
        return [self._symbolic_outputs] if self._symbolic_outputs is not None else None

    @property
    def input_shape(self):
        return self._input_layer.batch_shape if self._input_layer is not None else None

    @property
    def output_shape(self):
        return self._symbolic_outputs.shape if self._symbolic_outputs is not None else None

    def get_config(self):
        """Keras 3's config: each layer serialized (with its `build_config`), the input layer
        first when there is one, and `build_input_shape` once built."""
        layers = []
        if self._input_layer is not None:
            layers.append(serialize_keras_object(self._input_layer))
        layers.extend(serialize_keras_object(layer) for layer in self._stack)
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": super().get_config().get("dtype"), "layers": layers}
        if self.built and self._input_layer is not None:
            config["build_input_shape"] = self._input_layer.batch_shape
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The model `get_config` describes: each layer deserialized (built from its
        `build_config`) and added, then built from `build_input_shape`."""
        layer_configs = config.get("layers")
        if not isinstance(layer_configs, list):
            raise ValueError(f"A Sequential config needs a list of `layers`. Received: "
                             f"config={config}")
        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for item in layer_configs:
            model.add(deserialize_layer(item, custom_objects=custom_objects))
        shape = config.get("build_input_shape")
        if not model.built and isinstance(shape, (list, tuple)):
            model.build(tuple(shape))
        return model
