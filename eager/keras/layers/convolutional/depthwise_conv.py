"""`DepthwiseConv2D` and `SeparableConv2D` as grouped `eager.nn.conv2d`s: a depthwise kernel
(kernel_size + (channels, depth_multiplier), Keras's layout) reshaped to
(kh, kw, 1, channels * depth_multiplier) is a conv2d with one group per input channel, whose
output channel c * depth_multiplier + m is TF's depthwise channel order. `SeparableConv2D`
follows it with a 1x1 pointwise conv2d, as `tf.nn.separable_conv2d` does."""

from __future__ import annotations

from ....ops import array_ops as _array
from ....ops import composite_ops as _composite
from ....ops import conv_ops as _conv
from ... import activations, constraints, initializers, regularizers
from ..input_spec import InputSpec
from ..layer import Layer
from .arguments import (standardize_data_format, standardize_padding, standardize_tuple,
                        window_output_length)

__all__ = ["DepthwiseConv2D", "SeparableConv2D"]


class _Depthwise(Layer):
    def __init__(self, kernel_size, strides, padding, data_format, dilation_rate,
                 depth_multiplier, activation, use_bias, bias_initializer, bias_regularizer,
                 bias_constraint, activity_regularizer, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.depth_multiplier = depth_multiplier
        self.kernel_size = standardize_tuple(kernel_size, 2, "kernel_size")
        self.strides = standardize_tuple(strides, 2, "strides")
        self.dilation_rate = standardize_tuple(dilation_rate, 2, "dilation_rate")
        self.padding = standardize_padding(padding)
        self.data_format = standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.bias_initializer = initializers.get(bias_initializer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=4)
        if depth_multiplier is not None and depth_multiplier <= 0:
            raise ValueError("Invalid value for argument `depth_multiplier`. Expected a "
                             "strictly positive value. Received "
                             f"depth_multiplier={depth_multiplier}.")
        if not all(self.kernel_size):
            raise ValueError("The argument `kernel_size` cannot contain 0. Received "
                             f"kernel_size={self.kernel_size}.")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > "
                             f"1`. Received: strides={self.strides} and "
                             f"dilation_rate={self.dilation_rate}")

    @property
    def _fmt(self):
        return "NHWC" if self.data_format == "channels_last" else "NCHW"

    def _channels(self, input_shape):
        return input_shape[-1 if self.data_format == "channels_last" else 1]

    def _depthwise(self, inputs, kernel):
        kh, kw, channels, mult = kernel.shape
        grouped = _array.reshape(kernel, (kh, kw, 1, channels * mult))
        return _conv.conv2d(inputs, grouped, strides=list(self.strides),
                            padding=self.padding.upper(), data_format=self._fmt,
                            dilations=list(self.dilation_rate))

    def _finish(self, outputs):
        if self.use_bias:
            outputs = _composite.bias_add(outputs, self.bias, data_format=self._fmt)
        return self.activation(outputs) if self.activation is not None else outputs

    def _output_shape(self, input_shape, channels_out):
        input_shape = tuple(input_shape)
        last = self.data_format == "channels_last"
        spatial = input_shape[1:3] if last else input_shape[2:4]
        out = tuple(window_output_length(s, k, st, d, self.padding) for s, k, st, d in
                    zip(spatial, self.kernel_size, self.strides, self.dilation_rate))
        return (input_shape[0], *out, channels_out) if last else \
            (input_shape[0], channels_out, *out)

    def _base_config(self):
        config = super().get_config()
        config.update({
            "depth_multiplier": self.depth_multiplier, "kernel_size": self.kernel_size,
            "strides": self.strides, "padding": self.padding, "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "bias_constraint": constraints.serialize(self.bias_constraint)})
        return config


class DepthwiseConv2D(_Depthwise):
    """≈ `keras.layers.DepthwiseConv2D(kernel_size, strides=(1, 1), padding="valid",
    depth_multiplier=1, data_format=None, dilation_rate=(1, 1), activation=None,
    use_bias=True, depthwise_initializer="glorot_uniform", ...)`."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate,
                         depth_multiplier, activation, use_bias, bias_initializer,
                         bias_regularizer, bias_constraint, activity_regularizer, **kwargs)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)

    def build(self, input_shape):
        channels = self._channels(input_shape)
        self.input_spec = InputSpec(min_ndim=4, axes={
            -1 if self.data_format == "channels_last" else 1: channels})
        self.kernel = self.add_weight(
            name="kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.bias = self.add_weight(
            name="bias", shape=(self.depth_multiplier * channels,),
            initializer=self.bias_initializer, regularizer=self.bias_regularizer,
            constraint=self.bias_constraint) if self.use_bias else None

    def call(self, inputs):
        return self._finish(self._depthwise(inputs, self.kernel))

    def compute_output_shape(self, input_shape):
        return self._output_shape(input_shape, self._channels(input_shape) *
                                  self.depth_multiplier)

    def get_config(self):
        config = self._base_config()
        config.update({
            "depthwise_initializer": initializers.serialize(self.depthwise_initializer),
            "depthwise_regularizer": regularizers.serialize(self.depthwise_regularizer),
            "depthwise_constraint": constraints.serialize(self.depthwise_constraint)})
        return config


class SeparableConv2D(_Depthwise):
    """≈ `keras.layers.SeparableConv2D(filters, kernel_size, strides=(1, 1), padding="valid",
    data_format=None, dilation_rate=(1, 1), depth_multiplier=1, activation=None,
    use_bias=True, depthwise_initializer="glorot_uniform",
    pointwise_initializer="glorot_uniform", ...)`."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate,
                         depth_multiplier, activation, use_bias, bias_initializer,
                         bias_regularizer, bias_constraint, activity_regularizer, **kwargs)
        if filters is not None and filters <= 0:
            raise ValueError("Invalid value for argument `filters`. Expected a strictly positive "
                             f"value. Received filters={filters}.")
        self.filters = filters
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.pointwise_constraint = constraints.get(pointwise_constraint)

    def build(self, input_shape):
        channels = self._channels(input_shape)
        self.input_spec = InputSpec(min_ndim=4, axes={
            -1 if self.data_format == "channels_last" else 1: channels})
        self.depthwise_kernel = self.add_weight(
            name="depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel",
            shape=(1, 1, self.depth_multiplier * channels, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self.bias = self.add_weight(
            name="bias", shape=(self.filters,), initializer=self.bias_initializer,
            regularizer=self.bias_regularizer, constraint=self.bias_constraint) \
            if self.use_bias else None

    def call(self, inputs):
        x = self._depthwise(inputs, self.depthwise_kernel)
        x = _conv.conv2d(x, self.pointwise_kernel, strides=[1, 1], padding="VALID",
                         data_format=self._fmt)
        return self._finish(x)

    def compute_output_shape(self, input_shape):
        return self._output_shape(input_shape, self.filters)

    def get_config(self):
        config = self._base_config()
        config.update({
            "filters": self.filters,
            "depthwise_initializer": initializers.serialize(self.depthwise_initializer),
            "pointwise_initializer": initializers.serialize(self.pointwise_initializer),
            "depthwise_regularizer": regularizers.serialize(self.depthwise_regularizer),
            "pointwise_regularizer": regularizers.serialize(self.pointwise_regularizer),
            "depthwise_constraint": constraints.serialize(self.depthwise_constraint),
            "pointwise_constraint": constraints.serialize(self.pointwise_constraint)})
        return config
