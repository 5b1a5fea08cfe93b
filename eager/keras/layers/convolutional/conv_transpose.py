"""`Conv1DTranspose` and `Conv2DTranspose`: Keras 3's transposed convolutions on
`eager.nn.conv2d_transpose` (one `Conv2DBackpropInput` op per call; the 1-D layer runs it over a
height-1 image). The kernel is Keras's `kernel_size + (filters, input_channels)`, and the output
size is Keras's rule (`output_padding` adds rows at the end), so Keras's weights give Keras's
numbers.
"""

from __future__ import annotations

from ....ops import array_ops as _array
from ....ops import composite_ops as _composite
from ....ops.conv_transpose_ops import conv2d_transpose
from ... import activations, constraints, initializers, regularizers
from ..input_spec import InputSpec
from ..layer import Layer
from .arguments import standardize_data_format, standardize_padding, standardize_tuple

__all__ = ["BaseConvTranspose", "Conv1DTranspose", "Conv2DTranspose", "transpose_output_length"]


def transpose_output_length(size, kernel, stride, padding, output_padding, dilation):
    """Keras's output length of a transposed convolution along one axis (None if unknown)."""
    if size is None:
        return None
    kernel = (kernel - 1) * dilation + 1
    if padding == "valid":
        extra = max(kernel, stride) - kernel if output_padding is None else output_padding
        return (size - 1) * stride + kernel + extra
    if output_padding is None:
        return size * stride
    return (size - 1) * stride + kernel % 2 + output_padding


class BaseConvTranspose(Layer):
    """The shared N-D transposed convolution (N = `rank`)."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid",
                 output_padding=None, data_format=None, dilation_rate=1, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.rank = rank
        self.filters = filters
        self.kernel_size = standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = standardize_tuple(strides, rank, "strides")
        self.dilation_rate = standardize_tuple(dilation_rate, rank, "dilation_rate")
        self.padding = standardize_padding(padding)
        self.output_padding = None if output_padding is None else standardize_tuple(
            output_padding, rank, "output_padding", allow_zero=True)
        self.data_format = standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=rank + 2)
        if filters is not None and filters <= 0:
            raise ValueError("Invalid value for argument `filters`. Expected a strictly positive "
                             f"value. Received filters={filters}.")
        if not all(self.kernel_size):
            raise ValueError("The argument `kernel_size` cannot contain 0. Received "
                             f"kernel_size={self.kernel_size}.")
        if self.output_padding is not None:
            for i, (op, s) in enumerate(zip(self.output_padding, self.strides)):
                if op >= s:
                    raise ValueError(
                        "`output_padding` must be strictly less than `strides` for all "
                        f"dimensions. At dimension {i}, `output_padding` is {op} but "
                        f"`strides` is {s}. Received: output_padding={self.output_padding}, "
                        f"strides={self.strides}")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > "
                             f"1`. Received: strides={self.strides} and "
                             f"dilation_rate={self.dilation_rate}")

    @property
    def _channels_last(self) -> bool:
        return self.data_format == "channels_last"

    def build(self, input_shape):
        channel_axis = -1 if self._channels_last else 1
        input_channel = input_shape[channel_axis]
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={channel_axis: input_channel})
        self.kernel = self.add_weight(
            name="kernel", shape=self.kernel_size + (self.filters, input_channel),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self.bias = self.add_weight(
            name="bias", shape=(self.filters,), initializer=self.bias_initializer,
            regularizer=self.bias_regularizer, constraint=self.bias_constraint) \
            if self.use_bias else None

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        spatial = input_shape[1:-1] if self._channels_last else input_shape[2:]
        paddings = self.output_padding or (None,) * self.rank
        out = tuple(transpose_output_length(s, k, st, self.padding, op, d) for s, k, st, op, d
                    in zip(spatial, self.kernel_size, self.strides, paddings,
                           self.dilation_rate))
        if self._channels_last:
            return (input_shape[0], *out, self.filters)
        return (input_shape[0], self.filters, *out)

    def convolution_op(self, inputs, kernel):
        raise NotImplementedError

    def call(self, inputs):
        outputs = self.convolution_op(inputs, self.kernel)
        if self.use_bias:
            outputs = _composite.bias_add(outputs, self.bias,
                                          data_format="NHWC" if self._channels_last else "NCHW")
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({
            "filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
            "padding": self.padding, "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "output_padding": self.output_padding})
        return config


def _transpose_2d(layer, inputs, kernel, kernel_hw, strides, dilations, output_padding):
    """One conv2d_transpose of a 4-D input with Keras's output size (batch may be unknown)."""
    last = layer.data_format == "channels_last"
    shape = tuple(inputs.shape.as_list())
    spatial = shape[1:3] if last else shape[2:4]
    out = tuple(transpose_output_length(s, k, st, layer.padding, op, d) for s, k, st, op, d in
                zip(spatial, kernel_hw, strides, output_padding, dilations))
    batch = shape[0]
    output_shape = (batch, *out, layer.filters) if last else (batch, layer.filters, *out)
    return conv2d_transpose(inputs, kernel, output_shape, list(strides),
                            padding=layer.padding.upper(),
                            data_format="NHWC" if last else "NCHW", dilations=list(dilations))


class Conv2DTranspose(BaseConvTranspose):
    """≈ `keras.layers.Conv2DTranspose(filters, kernel_size, strides=(1, 1), padding="valid",
    output_padding=None, data_format=None, dilation_rate=(1, 1), activation=None,
    use_bias=True, ...)`."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(2, filters, kernel_size, strides=strides, padding=padding,
                         output_padding=output_padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         **kwargs)

    def convolution_op(self, inputs, kernel):
        return _transpose_2d(self, inputs, kernel, self.kernel_size, self.strides,
                             self.dilation_rate, self.output_padding or (None, None))


class Conv1DTranspose(BaseConvTranspose):
    """≈ `keras.layers.Conv1DTranspose(filters, kernel_size, strides=1, padding="valid",
    output_padding=None, data_format=None, dilation_rate=1, activation=None, use_bias=True,
    ...)`: the 2-D op over a height-1 image."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(1, filters, kernel_size, strides=strides, padding=padding,
                         output_padding=output_padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         **kwargs)

    def convolution_op(self, inputs, kernel):
        height_axis = 1 if self._channels_last else 2
        x = _array.expand_dims(inputs, height_axis)
        padding = (0, (self.output_padding or (None,))[0])
        y = _transpose_2d(self, x, _array.expand_dims(kernel, 0), (1, self.kernel_size[0]),
                          (1, self.strides[0]), (1, self.dilation_rate[0]),
                          padding if self.output_padding else (None, None))
        return _array.squeeze(y, [height_axis])
