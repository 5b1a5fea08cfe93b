"""`tf.nn` names TensorFlow composes in Python from other ops: `conv1d` and the
rank-dispatching front ends `convolution`, `max_pool` and `max_pool1d`. One-dimensional
convolution and pooling run as their two-dimensional ops on a height-1 image, as in TF.
"""

from __future__ import annotations

from ..core.argument_conversion import as_tensor
from ..core.dispatch import named
from .array_ops import expand_dims, squeeze
from .conv_ops import conv2d, max_pool2d

__all__ = ["convolution", "max_pool", "max_pool1d", "conv1d"]


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None,  # noqa: A002
           name=None):
    """≈ `tf.nn.conv1d`: conv2d on a height-1 image ([N, W, C] input, [k, C, out] filters)."""
    if data_format not in ("NWC", None):
        raise ValueError(f"conv1d: only data_format='NWC' is supported, got {data_format!r}.")
    x = expand_dims(as_tensor(input), -3)
    f = expand_dims(as_tensor(filters), 0)
    stride = stride[0] if isinstance(stride, (list, tuple)) and len(stride) == 1 else stride
    if isinstance(stride, (list, tuple)):
        stride = stride[1]
    d = 1 if dilations is None else (dilations[0] if isinstance(dilations, (list, tuple))
                                     else dilations)
    out = squeeze(conv2d(x, f, [1, 1, stride, 1], padding, dilations=[1, 1, d, 1]), [-3])
    return out if name is None else named(out, name)


def _per_axis(value, n, what):
    if value is None:
        return [1] * n
    if isinstance(value, int):
        return [value] * n
    value = list(value)
    if len(value) == 1:
        return value * n
    if len(value) == n:
        return value
    if len(value) == n + 2:
        return value[1:-1]
    raise ValueError(f"{what} must be an int or a list of 1, {n} or {n + 2} ints, got {value}.")


def convolution(input, filters, strides=None, padding="VALID", data_format=None,  # noqa: A002
                dilations=None, name=None):
    """≈ `tf.nn.convolution`: conv1d or conv2d by the input's rank (3 or 4, channels last)."""
    x = as_tensor(input)
    rank = x.shape.rank
    if rank == 3:
        (s,), (d,) = _per_axis(strides, 1, "strides"), _per_axis(dilations, 1, "dilations")
        return conv1d(x, filters, s, padding, dilations=d, name=name)
    if rank == 4:
        s, d = _per_axis(strides, 2, "strides"), _per_axis(dilations, 2, "dilations")
        return conv2d(x, filters, [1, *s, 1], padding, data_format=data_format or "NHWC",
                      dilations=[1, *d, 1], name=name)
    raise ValueError(f"convolution: input must be rank 3 or 4 (channels last; 3-D "
                     f"convolutions are not supported), got shape {x.shape}.")


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """≈ `tf.nn.max_pool1d`: max_pool2d on a height-1 image ([N, W, C])."""
    if data_format not in ("NWC", None):
        raise ValueError(f"max_pool1d: only data_format='NWC' is supported, got "
                         f"{data_format!r}.")
    (k,), (s,) = _per_axis(ksize, 1, "ksize"), _per_axis(strides, 1, "strides")
    x = expand_dims(as_tensor(input), -3)
    out = squeeze(max_pool2d(x, [1, 1, k, 1], [1, 1, s, 1], padding), [-3])
    return out if name is None else named(out, name)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """≈ `tf.nn.max_pool`: max_pool1d or max_pool2d by the input's rank (3 or 4)."""
    x = as_tensor(input)
    rank = x.shape.rank
    if rank == 3:
        return max_pool1d(x, ksize, strides, padding, name=name)
    if rank == 4:
        k, s = _per_axis(ksize, 2, "ksize"), _per_axis(strides, 2, "strides")
        return max_pool2d(x, [1, *k, 1], [1, *s, 1], padding, data_format=data_format or "NHWC",
                          name=name)
    raise ValueError(f"max_pool: input must be rank 3 or 4 (channels last; 3-D pooling is not "
                     f"supported), got shape {x.shape}.")
