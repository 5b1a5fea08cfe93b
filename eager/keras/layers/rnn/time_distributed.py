"""`TimeDistributed`: one layer applied to every time step (axis 1) of its input, with the
same weights (Keras 3's wrapper)."""

from __future__ import annotations

from ....ops import array_ops as _array
from ...serialization import serialize_keras_object
from ..layer import Layer
from ..serialization import deserialize as deserialize_layer

__all__ = ["TimeDistributed"]


class TimeDistributed(Layer):
    """≈ `keras.layers.TimeDistributed(layer)`: input (batch, time, ...) -> the layer on each
    (batch, ...) slice -> (batch, time, ...). With a known number of steps it calls the layer
    once per step, as Keras does (so a layer with batch statistics sees each step on its own);
    with an unknown one it calls it once on the steps folded into the batch axis. A mask
    (batch, time) is passed on unchanged, and per step to a layer that takes one."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `TimeDistributed` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        super().__init__(**kwargs)
        self.layer = layer
        self.supports_masking = True

    @staticmethod
    def _child_input_shape(input_shape):
        if not isinstance(input_shape, (tuple, list)) or len(input_shape) < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape` with "
                             f"at least 3 dimensions, received: {input_shape}")
        return (input_shape[0], *input_shape[2:])

    def build(self, input_shape):
        child_shape = self._child_input_shape(tuple(input_shape))
        if not self.layer.built:
            with self.layer._scope():
                self.layer.build(child_shape)
            self.layer.built = True

    def compute_output_shape(self, input_shape):
        child = self.layer.compute_output_shape(self._child_input_shape(tuple(input_shape)))
        return (child[0], input_shape[1], *child[1:])

    def call(self, inputs, training=None, mask=None):
        if mask is not None and len(mask.shape) < 2:
            raise ValueError("The `mask` passed to the `TimeDistributed` layer must be at "
                             "least 2D (e.g., `(batch_size, timesteps)`), but it has "
                             f"{len(mask.shape)} dimension(s) with shape {tuple(mask.shape)}.")
        layer = self.layer

        def step(x, step_mask):
            kwargs = {}
            if layer._call_has_mask_arg and step_mask is not None:
                kwargs["mask"] = step_mask
            if layer._call_has_training_arg and training is not None:
                kwargs["training"] = training
            with layer._scope():
                return layer.call(x, **kwargs)

        steps = inputs.shape[1]
        if steps is not None:
            outputs = [step(inputs[:, t], None if mask is None else mask[:, t])
                       for t in range(steps)]
            return _array.stack(outputs, axis=1)
        # Unknown number of steps: fold time into the batch axis.
        shape = _array.shape(inputs)
        folded = _array.reshape(inputs, _array.concat([[-1], shape[2:]], axis=0))
        folded_mask = None if mask is None else \
            _array.reshape(mask, _array.concat([[-1], _array.shape(mask)[2:]], axis=0))
        y = step(folded, folded_mask)
        y_shape = _array.shape(y)
        return _array.reshape(y, _array.concat([shape[:2], y_shape[1:]], axis=0))

    def get_config(self) -> dict:
        config = super().get_config()
        config["layer"] = serialize_keras_object(self.layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["layer"] = deserialize_layer(config["layer"], custom_objects)
        return cls(**config)
