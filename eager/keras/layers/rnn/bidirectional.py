"""`Bidirectional`: a recurrent layer run forward and, as a copy, backward over the sequence,
outputs merged (Keras 3's wrapper). The copies are made from the wrapped layer's config, so
they share no state with it; the backward copy has `go_backwards` flipped and its output
sequence is flipped back into time order before merging."""

from __future__ import annotations

from ....base import nest
from ....ops import array_ops as _array
from ....ops import composite_ops as _composite
from ...serialization import serialize_keras_object
from ..layer import Layer
from ..serialization import deserialize as deserialize_layer

__all__ = ["Bidirectional"]

_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _copy(layer, name, **overrides):
    config = layer.get_config()
    config.update(overrides, name=name)
    return type(layer).from_config(config)


def _strip(name, prefix):
    return name[len(prefix):] if name.startswith(prefix) else name


class Bidirectional(Layer):
    """≈ `keras.layers.Bidirectional(layer, merge_mode="concat", weights=None,
    backward_layer=None)`: `merge_mode` is "concat" (last axis), "sum", "mul", "ave" or None
    (a list [forward, backward]); with `return_state` the forward layer's states follow the
    output, then the backward layer's; `initial_state` is split in half the same way."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None,
                 **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `Bidirectional` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError("`backward_layer` need to be a `keras.layers.Layer` instance. "
                             f"Received: {backward_layer}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should "
                             'be one of {"sum", "mul", "ave", "concat", None}')
        super().__init__(**kwargs)
        self.forward_layer = _copy(layer, "forward_" + _strip(layer.name, "forward_"))
        if backward_layer is None:
            backward_layer = _copy(layer, "backward_" + _strip(layer.name, "backward_"),
                                   go_backwards=not layer.go_backwards)
        self.backward_layer = backward_layer
        for name in ("go_backwards",):
            if getattr(self.forward_layer, name) == getattr(self.backward_layer, name):
                raise ValueError(
                    "Forward layer and backward layer should have different `go_backwards` "
                    f"value. Received: forward_layer.go_backwards "
                    f"{self.forward_layer.go_backwards}, backward_layer.go_backwards="
                    f"{self.backward_layer.go_backwards}")
        for name in ("stateful", "return_sequences", "return_state"):
            forward, backward = getattr(self.forward_layer, name), \
                getattr(self.backward_layer, name)
            if forward != backward:
                raise ValueError("Forward layer and backward layer are expected to have the "
                                 f'same value for attribute "{name}", got "{forward}" for '
                                 f'forward layer and "{backward}" for backward layer')
        for wrapped in (self.forward_layer, self.backward_layer):
            # Keras: masked steps of a returned sequence give zeros in both directions.
            if getattr(wrapped, "zero_output_for_mask", None) is not None:
                wrapped.zero_output_for_mask = wrapped.return_sequences
        self.merge_mode = merge_mode
        self._initial_weights = weights
        self.stateful = layer.stateful
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True
        self.input_spec = layer.input_spec

    def build(self, sequences_shape):
        for wrapped in (self.forward_layer, self.backward_layer):
            if not wrapped.built:
                with wrapped._scope():
                    wrapped.build(sequences_shape)
                wrapped.built = True
        if self._initial_weights:
            half = len(self._initial_weights) // 2
            self.forward_layer.set_weights(self._initial_weights[:half])
            self.backward_layer.set_weights(self._initial_weights[half:])
            self._initial_weights = None

    def call(self, sequences, initial_state=None, mask=None, training=None):
        kwargs = {}
        if self.forward_layer._call_has_training_arg and training is not None:
            kwargs["training"] = training
        if self.forward_layer._call_has_mask_arg:
            kwargs["mask"] = mask
        forward_state = backward_state = None
        if initial_state is not None:
            initial_state = nest.flatten(initial_state)
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        y = self.forward_layer(sequences, initial_state=forward_state, **kwargs)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, **kwargs)
        states = ()
        if self.return_state:
            states = (*y[1:], *y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = _composite.reverse(y_rev, [1])
        mode = self.merge_mode
        if mode == "concat":
            output = _array.concat([y, y_rev], axis=-1)
        elif mode == "sum":
            output = y + y_rev
        elif mode == "ave":
            output = (y + y_rev) / 2
        elif mode == "mul":
            output = y * y_rev
        else:
            output = [y, y_rev]
        if self.return_state:
            return [*output, *states] if mode is None else [output, *states]
        return output

    def compute_mask(self, _, mask):
        if isinstance(mask, list):
            mask = mask[0]
        if self.return_sequences:
            return [mask, mask] if not self.merge_mode else mask
        return [None, None] if not self.merge_mode else None

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        shape = self.forward_layer.compute_output_shape(sequences_shape)
        states = []
        if self.return_state:
            shape, states = shape[0], list(shape[1:])
        if self.merge_mode == "concat":
            shape = (*shape[:-1], shape[-1] * 2)
        outputs = [shape, shape] if self.merge_mode is None else [shape]
        if self.return_state:
            return [*outputs, *states, *states]
        return outputs if self.merge_mode is None else shape

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"merge_mode": self.merge_mode,
                       "layer": serialize_keras_object(self.forward_layer),
                       "backward_layer": serialize_keras_object(self.backward_layer)})
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["layer"] = deserialize_layer(config["layer"], custom_objects)
        if config.get("backward_layer") is not None:
            config["backward_layer"] = deserialize_layer(config["backward_layer"],
                                                         custom_objects)
        return cls(**config)
