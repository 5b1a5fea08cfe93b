"""`Conv1D` and `Conv2D`: Keras 3's convolution layers on `eager.nn.conv2d`.

Both run one conv2d op: a 1-D convolution is a 2-D one over a height-1 image (`causal` padding
pads the start of the sequence by `dilation_rate * (kernel_size - 1)` first), so the forward,
its gradient, NCHW and grouped kernels all come from conv_ops. The kernel is laid out as Keras
lays it out, `kernel_size + (input_channels // groups, filters)`, so weights move between
Keras and eager unchanged.
"""

from __future__ import annotations

import numpy as np

from ....ops import array_ops as _array
from ....ops import composite_ops as _composite
from ....ops import conv_ops as _conv
from ....ops import padding_ops as _padding
from ... import activations, constraints, initializers, regularizers
from ..input_spec import InputSpec
from ..layer import Layer
from .arguments import (standardize_data_format, standardize_padding, standardize_tuple,
                        window_output_length)

__all__ = ["BaseConv", "Conv1D", "Conv2D"]


class BaseConv(Layer):
    """The shared N-D convolution (N = `rank`): arguments, weights, config, output shape."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, lora_alpha=None,
                 **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if lora_rank:
            raise NotImplementedError(f"{type(self).__name__}: `lora_rank` (LoRA) is not "
                                      "supported by eager.keras.")
        self.rank = rank
        self.filters = filters
        self.groups = groups
        self.kernel_size = standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = standardize_tuple(strides, rank, "strides")
        self.dilation_rate = standardize_tuple(dilation_rate, rank, "dilation_rate")
        self.padding = standardize_padding(padding, allow_causal=rank == 1)
        self.data_format = standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.lora_rank = lora_rank
        self.lora_alpha = lora_alpha
        self.input_spec = InputSpec(min_ndim=rank + 2)
        if filters is not None and filters <= 0:
            raise ValueError("Invalid value for argument `filters`. Expected a strictly positive "
                             f"value. Received filters={filters}.")
        if groups <= 0:
            raise ValueError("The number of groups must be a positive integer. Received: "
                             f"groups={groups}.")
        if filters is not None and filters % groups != 0:
            raise ValueError("The number of filters must be evenly divisible by the number of "
                             f"groups. Received: groups={groups}, filters={filters}.")
        if not all(self.kernel_size):
            raise ValueError("The argument `kernel_size` cannot contain 0. Received "
                             f"kernel_size={self.kernel_size}.")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > "
                             f"1`. Received: strides={self.strides} and "
                             f"dilation_rate={self.dilation_rate}")

    def build(self, input_shape):
        channel_axis = -1 if self.data_format == "channels_last" else 1
        input_channel = input_shape[channel_axis]
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={channel_axis: input_channel})
        if input_channel % self.groups != 0:
            raise ValueError("The number of input channels must be evenly divisible by the "
                             f"number of groups. Received groups={self.groups}, but the input "
                             f"has {input_channel} channels (full input shape is "
                             f"{input_shape}).")
        self.compute_output_shape(input_shape)
        self.kernel = self.add_weight(
            name="kernel", shape=self.kernel_size + (input_channel // self.groups, self.filters),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight(
                name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        else:
            self.bias = None

    def convolution_op(self, inputs, kernel):
        raise NotImplementedError

    def call(self, inputs):
        outputs = self.convolution_op(inputs, self.kernel)
        if self.use_bias:
            outputs = _composite.bias_add(
                outputs, self.bias,
                data_format="NHWC" if self.data_format == "channels_last" else "NCHW")
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        last = self.data_format == "channels_last"
        spatial = input_shape[1:-1] if last else input_shape[2:]
        if len(spatial) != self.rank:
            raise ValueError(f"Kernel shape must have the same length as input, but received "
                             f"kernel of shape {self.kernel_size + (None, self.filters)} and "
                             f"input of shape {input_shape}.")
        out = tuple(window_output_length(s, k, st, d, self.padding) for s, k, st, d in
                    zip(spatial, self.kernel_size, self.strides, self.dilation_rate))
        if any(o is not None and o <= 0 for o in out):
            kernel_shape = self.kernel_size + (input_shape[-1 if last else 1], self.filters)
            raise ValueError(
                "Computed output size would be zero or negative. Received `inputs shape="
                f"{input_shape}`, `kernel shape={kernel_shape}`, `dilation_rate="
                f"{np.array(self.dilation_rate)}`, `strides={self.strides}`, "
                f"`padding={self.padding}`.")
        if last:
            return (input_shape[0], *out, self.filters)
        return (input_shape[0], self.filters, *out)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({
            "filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
            "padding": self.padding, "data_format": self.data_format,
            "dilation_rate": self.dilation_rate, "groups": self.groups,
            "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint)})
        return config


class Conv2D(BaseConv):
    """≈ `keras.layers.Conv2D(filters, kernel_size, strides=(1, 1), padding="valid",
    data_format=None, dilation_rate=(1, 1), groups=1, activation=None, use_bias=True, ...)`."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(2, filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, groups=groups,
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         **kwargs)

    def convolution_op(self, inputs, kernel):
        return _conv.conv2d(inputs, kernel, strides=list(self.strides),
                            padding=self.padding.upper(),
                            data_format="NHWC" if self.data_format == "channels_last"
                            else "NCHW", dilations=list(self.dilation_rate))


class Conv1D(BaseConv):
    """≈ `keras.layers.Conv1D(filters, kernel_size, strides=1, padding="valid",
    data_format=None, dilation_rate=1, groups=1, activation=None, use_bias=True, ...)`;
    `padding="causal"` makes output t see inputs up to t only."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(1, filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, groups=groups,
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         **kwargs)

    def convolution_op(self, inputs, kernel):
        last = self.data_format == "channels_last"
        padding = self.padding
        if padding == "causal":
            reach = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            pads = [[0, 0], [reach, 0], [0, 0]] if last else [[0, 0], [0, 0], [reach, 0]]
            inputs = _padding.pad(inputs, pads)
            padding = "valid"
        # A height-1 image: [N, 1, W, C] (NHWC) or [N, C, 1, W] (NCHW).
        x = _array.expand_dims(inputs, -3 if last else -2)
        y = _conv.conv2d(x, _array.expand_dims(kernel, 0), strides=[1, self.strides[0]],
                         padding=padding.upper(), data_format="NHWC" if last else "NCHW",
                         dilations=[1, self.dilation_rate[0]])
        return _array.squeeze(y, [-3 if last else -2])
