"""`eager.image.resize` and the resizes built on it (`resize_with_pad`), with TensorFlow 2's
`tf.image.resize` semantics: half-pixel centers, float32 results (the input dtype for nearest
neighbour), `antialias`, `preserve_aspect_ratio`.

A resize is separable: each output row is a fixed weighted sum of input rows, and the same for
columns. So a resize here is two constant weight matrices computed with numpy from the sizes
alone, applied with one `einsum` (bilinear, bicubic, area, lanczos, gaussian, mitchellcubic) or
a `gather` per axis (nearest): composites of existing ops, so they run eagerly and traced and
are differentiable where TensorFlow's are, with no kernel of their own. The spatial sizes must
be known when the op is built (they are, for images from files and for traced images of a
declared size).
"""

from __future__ import annotations

import enum
import math

import numpy as np

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import Tensor
from . import array_ops
from . import math_ops as _math
from .padding_ops import pad
from .product_ops import einsum
from .slicing_ops import gather

__all__ = ["ResizeMethod", "resize", "resize_with_pad"]


class ResizeMethod(str, enum.Enum):
    """≈ `tf.image.ResizeMethod`: the interpolation of `resize` (the values are TF's strings)."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"

    def __str__(self):
        return self.value


# -----------------------------------------------------------------------------------------------
# Weight matrices [out, in], from the sizes alone
# -----------------------------------------------------------------------------------------------

def _keys_cubic(x, a=-0.5):
    x = np.abs(x)
    return np.where(x <= 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))


def _lanczos(radius):
    def k(x):
        x = np.abs(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            v = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius) / (np.pi * np.pi * x * x)
        return np.where(x < 1e-3, 1.0, np.where(x > radius, 0.0, v))
    return k


def _mitchell(x):
    x = np.abs(x)
    b = c = 1 / 3
    return np.where(x < 1, ((12 - 9 * b - 6 * c) * x ** 3 + (-18 + 12 * b + 6 * c) * x ** 2
                            + (6 - 2 * b)) / 6,
                    np.where(x < 2, ((-b - 6 * c) * x ** 3 + (6 * b + 30 * c) * x ** 2
                                     + (-12 * b - 48 * c) * x + (8 * b + 24 * c)) / 6, 0.0))


#: TensorFlow's scale_and_translate kernels: (function, radius).
_KERNELS = {
    "bilinear": (lambda x: np.maximum(0.0, 1 - np.abs(x)), 1.0),
    "bicubic": (_keys_cubic, 2.0),
    "area": (lambda x: np.where(np.abs(x) < 0.5, 1.0, np.where(np.abs(x) == 0.5, 0.5, 0.0)),
             1.0),
    "lanczos3": (_lanczos(3), 3.0),
    "lanczos5": (_lanczos(5), 5.0),
    "gaussian": (lambda x: np.where(np.abs(x) < 1.5, np.exp(-x * x / (2 * (1.5 / 3) ** 2)),
                                    0.0), 1.5),
    "mitchellcubic": (_mitchell, 2.0),
}


def _kernel_weights(method, in_size, out_size, antialias):
    """TensorFlow's ScaleAndTranslate weights: output i samples the input at (i + 0.5) / scale
    with the method's kernel, widened by 1/scale when antialiasing a downscale."""
    kernel, _ = _KERNELS[method]
    inv_scale = in_size / out_size
    kernel_scale = max(inv_scale, 1.0) if antialias else 1.0
    sample = (np.arange(out_size) + 0.5) * inv_scale
    x = (np.arange(in_size)[None, :] + 0.5 - sample[:, None]) / kernel_scale
    w = kernel(x)
    total = w.sum(axis=1, keepdims=True)
    return np.where(np.abs(total) >= 1000 * np.finfo(np.float32).tiny, w / np.where(
        total == 0, 1, total), 0.0)


def _bilinear_weights(in_size, out_size):
    """TensorFlow's ResizeBilinear (half-pixel centers): the two neighbours of
    (i + 0.5) * scale - 0.5, clamped at the edges."""
    scale = in_size / out_size
    pos = (np.arange(out_size) + 0.5) * scale - 0.5
    low = np.floor(pos)
    frac = pos - low
    lo = np.clip(low, 0, in_size - 1).astype(np.int64)
    hi = np.clip(np.ceil(pos), 0, in_size - 1).astype(np.int64)
    w = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    np.add.at(w, (rows, lo), 1 - frac)
    np.add.at(w, (rows, hi), frac)
    return w


def _bicubic_weights(in_size, out_size):
    """TensorFlow's ResizeBicubic (half-pixel centers, Keys a=-0.5): the four taps around the
    sample point, those outside the image dropped and the rest renormalised; the fraction is
    rounded to TensorFlow's 1024-entry coefficient table."""
    scale = in_size / out_size
    pos = (np.arange(out_size) + 0.5) * scale - 0.5
    base = np.floor(pos)
    t = np.rint((pos - base) * 1024) / 1024
    w = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    taps = []
    for k in (-1, 0, 1, 2):
        idx = base + k
        weight = np.where((idx >= 0) & (idx < in_size), _keys_cubic(t - k), 0.0)
        taps.append((np.clip(idx, 0, in_size - 1).astype(np.int64), weight))
    total = sum(wt for _, wt in taps)
    for idx, wt in taps:
        np.add.at(w, (rows, idx), wt / total)
    return w


def _area_weights(in_size, out_size):
    """TensorFlow's ResizeArea: each output pixel averages the input span it covers, partial
    pixels by their covered fraction."""
    scale = in_size / out_size
    w = np.zeros((out_size, in_size))
    for i in range(out_size):
        start, end = i * scale, (i + 1) * scale
        for j in range(int(math.floor(start)), min(int(math.ceil(end)), in_size)):
            w[i, j] = (min(j + 1, end) - max(j, start)) / scale
    return w


def _nearest_indices(in_size, out_size):
    """TensorFlow's ResizeNearestNeighbor (half-pixel centers)."""
    scale = in_size / out_size
    idx = np.floor((np.arange(out_size) + 0.5) * scale).astype(np.int64)
    return np.minimum(idx, in_size - 1)


def _weights(method, in_size, out_size, antialias):
    """TensorFlow 2 resizes bilinear and bicubic without antialias with ResizeBilinear and
    ResizeBicubic, area always with ResizeArea, and everything else with ScaleAndTranslate."""
    if method == "area":
        return _area_weights(in_size, out_size)
    if method == "bilinear" and not antialias:
        return _bilinear_weights(in_size, out_size)
    if method == "bicubic" and not antialias:
        return _bicubic_weights(in_size, out_size)
    return _kernel_weights(method, in_size, out_size, antialias)


# -----------------------------------------------------------------------------------------------
# resize
# -----------------------------------------------------------------------------------------------

def image_arg(op_name, images):
    """(images as a 4-D tensor, whether it was 3-D): TensorFlow's `_ImageDimensions` checks."""
    images = as_tensor(images)
    rank = images.shape.rank
    if rank not in (3, 4):
        raise ValueError(f"{op_name}: 'images' must have either 3 or 4 dimensions, got shape "
                         f"{images.shape}.")
    if rank == 3:
        return array_ops.expand_dims(images, 0), True
    return images, False


def _size_arg(size):
    if isinstance(size, Tensor):
        size = size.numpy().tolist()
    size = [int(s) for s in np.asarray(size).reshape(-1).tolist()]
    if len(size) != 2:
        raise ValueError(f"'size' must be a 1-D Tensor of 2 elements: new_height, new_width, "
                         f"got {size}.")
    if min(size) <= 0:
        raise ValueError(f"'size' must contain positive sizes, got {size}.")
    return size


def _static_hw(op_name, images):
    h, w = images.shape[1], images.shape[2]
    if h is None or w is None:
        raise ValueError(f"{op_name}: the image's height and width must be known when the op "
                         f"is built, got shape {images.shape}; give the function an "
                         f"input_signature with the image size.")
    return h, w


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False,
           antialias=False, name=None):
    """≈ `tf.image.resize`: [batch,] height, width, channels images resized to `size`
    ([new_height, new_width]). Results are float32, except that NEAREST_NEIGHBOR keeps the
    dtype. `preserve_aspect_ratio` fits the image inside `size` keeping its shape;
    `antialias` low-pass filters when downsampling (not for nearest)."""
    method = str(ResizeMethod(method)) if not isinstance(method, ResizeMethod) else str(method)
    images, squeeze = image_arg("resize", images)
    new_h, new_w = _size_arg(size)
    h, w = _static_hw("resize", images)
    if preserve_aspect_ratio:
        scale = min(new_h / h, new_w / w)
        new_h = max(int(round(h * scale)), 1) if new_h / h != scale else new_h
        new_w = max(int(round(w * scale)), 1) if new_w / w != scale else new_w
    if method == "nearest":
        out = images
        if (new_h, new_w) != (h, w):
            out = gather(out, _nearest_indices(h, new_h), axis=1)
            out = gather(out, _nearest_indices(w, new_w), axis=2)
    else:
        x = images if images.dtype == _dt.float32 else _math.cast(images, _dt.float32)
        wy = convert_to_tensor(_weights(method, h, new_h, antialias).astype(np.float32))
        wx = convert_to_tensor(_weights(method, w, new_w, antialias).astype(np.float32))
        out = einsum("hH,bHWc,wW->bhwc", wy, x, wx)
    return array_ops.squeeze(out, [0]) if squeeze else out


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR,
                    antialias=False):
    """≈ `tf.image.resize_with_pad`: resizes keeping the aspect ratio to fit inside the target,
    then pads with zeros (centred) to exactly target_height x target_width."""
    images, squeeze = image_arg("resize_with_pad", image)
    h, w = _static_hw("resize_with_pad", images)
    target_height, target_width = int(target_height), int(target_width)
    if target_height <= 0 or target_width <= 0:
        raise ValueError("target_height and target_width must be > 0.")
    # TensorFlow computes the fit in float32, and centres by the unrounded size.
    f32 = np.float32
    ratio = max(f32(w) / f32(target_width), f32(h) / f32(target_height))
    float_h, float_w = f32(h) / ratio, f32(w) / ratio
    resized_h, resized_w = int(np.floor(float_h)), int(np.floor(float_w))
    resized = resize(images, [resized_h, resized_w], method=method, antialias=antialias)
    top = max(int(np.floor((f32(target_height) - float_h) / 2)), 0)
    left = max(int(np.floor((f32(target_width) - float_w) / 2)), 0)
    out = pad(resized, [[0, 0], [top, target_height - resized_h - top],
                        [left, target_width - resized_w - left], [0, 0]])
    return array_ops.squeeze(out, [0]) if squeeze else out
