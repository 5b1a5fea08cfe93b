"""Image resizing along known spatial axes, shared by `UpSampling2D`, `Resizing` and
`CenterCrop`: TensorFlow's `tf.image.resize` arithmetic (half-pixel centres, no antialiasing),
written with ops that already have gradients.

Bilinear resizing of one axis is a fixed (out, in) matrix of interpolation weights, so a resize
is two `einsum`s with constant matrices; its gradient is the transposed contraction. Nearest
resizing is a `gather` of source indices along each axis. Both need the spatial sizes to be
known (they are in every layer that uses them once built).
"""

from __future__ import annotations

import numpy as np

from ...ops import array_ops as _array
from ...ops import math_ops as _math
from ...ops import product_ops as _product
from ...ops.slicing_ops import gather

__all__ = ["resize", "repeat", "INTERPOLATIONS"]

INTERPOLATIONS = ("bilinear", "nearest")


def _bilinear_weights(in_size: int, out_size: int) -> np.ndarray:
    """(out_size, in_size) weights of TF's half-pixel-centre bilinear resize along one axis."""
    scale = in_size / out_size
    source = (np.arange(out_size) + 0.5) * scale - 0.5
    floor = np.floor(source)
    lower = np.clip(floor, 0, in_size - 1).astype(np.int64)
    upper = np.clip(np.ceil(source), 0, in_size - 1).astype(np.int64)
    frac = source - floor
    weights = np.zeros((out_size, in_size), np.float64)
    rows = np.arange(out_size)
    np.add.at(weights, (rows, lower), 1.0 - frac)
    np.add.at(weights, (rows, upper), frac)
    return weights


def _nearest_indices(in_size: int, out_size: int) -> np.ndarray:
    """Source index of each output position in TF's half-pixel-centre nearest resize."""
    scale = in_size / out_size
    source = np.floor((np.arange(out_size) + 0.5) * scale)
    return np.minimum(source, in_size - 1).astype(np.int32)


def resize(images, height: int, width: int, interpolation="bilinear"):
    """`images` (batch, h, w, channels) resized to (batch, height, width, channels)."""
    in_h, in_w = images.shape[1], images.shape[2]
    if in_h is None or in_w is None:
        raise ValueError(f"Resizing needs known spatial sizes. Received: images.shape="
                         f"{images.shape}")
    if (in_h, in_w) == (height, width):
        return images
    if interpolation == "nearest":
        x = gather(images, _nearest_indices(in_h, height), axis=1)
        return gather(x, _nearest_indices(in_w, width), axis=2)
    dtype = images.dtype
    if not dtype.is_floating:
        images = _math.cast(images, "float32")
        dtype = images.dtype
    rows = _math.cast(_bilinear_weights(in_h, height).astype(np.float32), dtype)
    cols = _math.cast(_bilinear_weights(in_w, width).astype(np.float32), dtype)
    x = _product.einsum("oh,bhwc->bowc", rows, images)
    return _product.einsum("pw,bowc->bopc", cols, x)


def repeat(x, size: int, axis: int):
    """Each entry of `x` along `axis` repeated `size` times (`np.repeat`), for any batch size."""
    if size == 1:
        return x
    rank = x.shape.rank
    tiled = _array.tile(_array.expand_dims(x, axis + 1),
                        [size if i == axis + 1 else 1 for i in range(rank + 1)])
    static = list(x.shape.as_list())
    if all(d is not None for d in static):
        static[axis] *= size
        return _array.reshape(tiled, static)
    dynamic = _array.shape(x)
    parts = [dynamic[:axis], _array.reshape(dynamic[axis] * size, [1]), dynamic[axis + 1:]]
    return _array.reshape(tiled, _array.concat(parts, 0))
