"""Argument checks shared by the convolution and pooling layers, with Keras 3's messages:
int-or-tuple arguments (`kernel_size`, `strides`, ...), `padding`, `data_format`, and the
output length of a sliding window along one axis."""

from __future__ import annotations

from ... import backend

__all__ = ["standardize_tuple", "standardize_padding", "standardize_data_format",
           "window_output_length"]


def standardize_tuple(value, n, name, allow_zero=False) -> tuple:
    """`value` (an int or n ints) as a tuple of n ints, each > 0 (>= 0 with `allow_zero`)."""
    message = f"The `{name}` argument must be a tuple of {n} integers. Received {name}={value}"
    if isinstance(value, int):
        values = (value,) * n
    else:
        try:
            values = tuple(value)
        except TypeError:
            raise ValueError(message) from None
        if len(values) != n:
            raise ValueError(message)
        for v in values:
            try:
                int(v)
            except (ValueError, TypeError):
                raise ValueError(f"{message}including element {v} of type {type(v)}") from None
    bad = {v for v in values if (v < 0 if allow_zero else v <= 0)}
    if bad:
        raise ValueError(f"{message}, including values {bad} that do not satisfy "
                         f"`value {'>= 0' if allow_zero else '> 0'}`")
    return values


def standardize_padding(value, allow_causal=False) -> str:
    if isinstance(value, (list, tuple)):
        return value
    padding = value.lower()
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if padding not in allowed:
        # Keras prints a set (its order varies between runs); this is one of its orders.
        shown = "{" + ", ".join(repr(a) for a in allowed) + "}"
        raise ValueError(f"The `padding` argument must be a list/tuple or one of {shown}. "
                         f"Received: {padding}")
    return padding


def standardize_data_format(data_format) -> str:
    if data_format is None:
        return backend.image_data_format()
    data_format = str(data_format).lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return data_format


def window_output_length(size, kernel, stride, dilation, padding):
    """Output length along one axis (None for an unknown size), Keras's rule: 'same' keeps
    ceil(size / stride); 'valid' (and 'causal', which pads before) drop the window's reach."""
    if size is None:
        return None
    if padding in ("same", "causal"):
        return (size + stride - 1) // stride
    effective = (kernel - 1) * dilation + 1
    return (size - effective) // stride + 1
