"""`keras.layers.Dense`: `activation(inputs @ kernel + bias)` over the last axis of an input of
any rank >= 2."""

from __future__ import annotations

from ....ops import math_ops as _math
from ....ops import product_ops as _product
from ... import activations, constraints, initializers, regularizers
from ..input_spec import InputSpec
from ..layer import Layer

__all__ = ["Dense"]


class Dense(Layer):
    """≈ `keras.layers.Dense(units, activation=None, use_bias=True,
    kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
    bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
    bias_constraint=None)`. Once built, the input's last axis is fixed (its `InputSpec`)."""

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, lora_alpha=None,
                 quantization_config=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if lora_rank is not None:
            raise NotImplementedError("Dense: `lora_rank` (LoRA) is not supported by eager.keras.")
        if quantization_config is not None:
            raise NotImplementedError("Dense: `quantization_config` (quantized weights) is not "
                                      "supported by eager.keras.")
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError("Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units}")
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=2)
        self.supports_masking = True

    def build(self, input_shape):
        input_dim = input_shape[-1]
        if input_dim is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be "
                             f"defined. Found None. Full input shape received: {input_shape}")
        self.kernel = self.add_weight(name="kernel", shape=(input_dim, self.units),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(name="bias", shape=(self.units,),
                                    initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.input_spec = InputSpec(min_ndim=2, axes={-1: input_dim})

    def call(self, inputs):
        # Rank 2 is the common case and one matmul; higher ranks contract the last axis.
        if inputs.shape.rank == 2:
            x = _product.matmul(inputs, self.kernel)
        else:
            x = _product.tensordot(inputs, self.kernel, [[inputs.shape.rank - 1], [0]])
        if self.bias is not None:
            x = _math.add(x, self.bias)
        return self.activation(x)

    def compute_output_shape(self, input_shape):
        return (*tuple(input_shape)[:-1], self.units)

    def get_config(self):
        config = super().get_config()
        config.update({
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "quantization_config": None,
        })
        return config
