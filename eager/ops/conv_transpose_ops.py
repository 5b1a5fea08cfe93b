"""`eager.nn.conv2d_transpose` and `conv1d_transpose`: the transpose ("deconvolution") of
`conv2d`, i.e. the gradient of a convolution with respect to its input.

As in TensorFlow, it runs the registered `Conv2DBackpropInput` op (eager/ops/nn_grad.py), whose
kernel, shape inference and gradients (with respect to the filter and to `input`, which is that
op's `dy`) already exist, so this module only parses and checks arguments: the result is the
input of a `conv2d` over `output_shape` with these filters, strides and padding whose output
has `input`'s shape.
"""

from __future__ import annotations

from ..core.argument_conversion import same_type
from ..core.dispatch import execute
from ..core.registry import op_error
from .array_ops import expand_dims, squeeze
from .conv_ops import _check_outer, _data_format, _four, _padding, _spatial, _window
from .nn_grad import CONV2D_INPUT_GRAD

__all__ = ["conv2d_transpose", "conv1d_transpose"]

_OP = "Conv2DBackpropInput"


def _static_output_shape(output_shape):
    """`output_shape` as a tuple of ints (a list, tuple, array or constant tensor)."""
    values = output_shape.numpy() if hasattr(output_shape, "numpy") else output_shape
    try:
        values = list(values)
        # eager's addition: a None batch size (a traced call with an unknown batch) is taken
        # from `input` when the op runs.
        return tuple(None if i == 0 and v is None else int(v) for i, v in enumerate(values))
    except (TypeError, ValueError):
        raise ValueError(f"conv2d_transpose: `output_shape` must be 4 known ints, got "
                         f"{output_shape!r}.") from None


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NHWC", dilations=None, name=None):
    """≈ `tf.nn.conv2d_transpose`: `input` [N, H, W, in_channels] (NHWC) and `filters`
    [k_h, k_w, out_channels, in_channels] give a tensor of `output_shape`
    [N, out_h, out_w, out_channels]; `conv2d(result, filters, strides, padding)` would have
    `input`'s shape. A None batch size in `output_shape` is `input`'s at run time. Mismatched
    depths, or an `output_shape` whose convolution would not give `input`'s spatial size, are
    InvalidArgumentErrors naming the shapes."""
    x, w = same_type(CONV2D_INPUT_GRAD, input, filters)
    data_format = _data_format(_OP, data_format)
    strides4 = _four(_OP, strides, "strides", data_format)
    dilations4 = _four(_OP, dilations, "dilations", data_format)
    _check_outer(_OP, strides4, data_format, "strides")
    _check_outer(_OP, dilations4, data_format, "dilations")
    padding, explicit = _padding(_OP, padding, data_format)
    shape = _static_output_shape(output_shape)
    if len(shape) != 4 or x.shape.rank not in (None, 4) or w.shape.rank not in (None, 4):
        raise op_error(_OP, f"input, filters and output_shape must be 4-D, got input shape "
                            f"{x.shape}, filters shape {w.shape}, output_shape {list(shape)}")
    channel = 3 if data_format == "NHWC" else 1
    in_depth, out_depth = x.shape[channel], shape[channel]
    filter_in, filter_out = w.shape[3], w.shape[2]
    if in_depth is not None and filter_in is not None and in_depth != filter_in:
        raise op_error(_OP, f"input depth {in_depth} does not match the filters' last "
                            f"dimension {filter_in} (input shape {x.shape}, filters shape "
                            f"{w.shape})")
    if filter_out is not None and out_depth != filter_out:
        raise op_error(_OP, f"output_shape depth {out_depth} does not match the filters' third "
                            f"dimension {filter_out} (output_shape {list(shape)}, filters "
                            f"shape {w.shape})")
    spatial_in = _spatial(tuple(x.shape), data_format)
    spatial_out = _spatial(shape, data_format)
    pads = explicit or ((0, 0), (0, 0))
    for axis in range(2):
        expected, _, _ = _window(_OP, spatial_out[axis], w.shape[axis],
                                 _spatial(strides4, data_format)[axis],
                                 _spatial(dilations4, data_format)[axis], padding, pads[axis])
        if spatial_in[axis] is not None and expected is not None and \
                expected != spatial_in[axis]:
            raise op_error(_OP, f"output_shape {list(shape)} convolved with filters of shape "
                                f"{w.shape} (strides {list(strides4)}, padding {padding}) "
                                f"gives spatial size {expected} along axis {axis}, but the "
                                f"input has {spatial_in[axis]} (input shape {x.shape})")
    if x.shape[0] is not None and shape[0] is not None and shape[0] != x.shape[0]:
        raise op_error(_OP, f"output_shape batch {shape[0]} does not match the input's batch "
                            f"{x.shape[0]}")
    return execute(CONV2D_INPUT_GRAD, (w, x), {
        "input_shape": shape, "strides": _spatial(strides4, data_format),
        "dilations": _spatial(dilations4, data_format), "padding": padding,
        "explicit_paddings": explicit, "data_format": data_format})


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NWC", dilations=None, name=None):
    """≈ `tf.nn.conv1d_transpose`: `input` [N, W, in_channels], `filters`
    [k, out_channels, in_channels], `output_shape` [N, out_w, out_channels]; the 2-D op over a
    height-1 image."""
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"conv1d_transpose: data_format must be 'NWC' or 'NCW', got "
                         f"{data_format!r}.")
    shape = list(_static_output_shape(output_shape))
    channels_last = data_format == "NWC"
    stride = strides if isinstance(strides, int) else list(strides)[-2 if not channels_last
                                                                     else 1]
    dilation = 1 if dilations is None else (dilations if isinstance(dilations, int)
                                            else list(dilations)[-1])
    height_axis = 1 if channels_last else 2
    x = expand_dims(input, height_axis)
    w = expand_dims(filters, 0)
    shape.insert(height_axis, 1)
    y = conv2d_transpose(x, w, shape, [1, stride], padding,
                         "NHWC" if channels_last else "NCHW", [1, dilation])
    return squeeze(y, [height_axis])
