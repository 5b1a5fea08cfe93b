"""`eager.image`'s pixel operations: dtype conversion, flips and rotations, crops and pads,
colour adjustments, standardisation, random augmentations, total variation and Sobel edges,
with TensorFlow 2's semantics (`tf.image`).

Every function is a composite of existing ops (slices, `reverse`, `pad`, arithmetic), so each
runs eagerly and traced and is differentiable where TensorFlow's is. Images are [height, width,
channels] or [batch, height, width, channels]; as in TensorFlow, the crops and pads need the
sizes known when the op is built. The stateless augmentations draw with
`eager.random.stateless_uniform`, so they give TensorFlow's choices for the same seed; the
seeded ones (`random_crop`, `random_flip_left_right`) follow eager's stateful streams.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import Tensor
from . import array_ops
from . import math_ops as _math
from .composite_ops import reverse
from .image_resize import image_arg
from .padding_ops import pad
from .random_ops import uniform
from .slicing_ops import slice as _slice
from .stateless_random_ops import stateless_uniform

__all__ = ["convert_image_dtype", "flip_left_right", "flip_up_down", "rot90", "transpose",
           "random_flip_left_right", "random_flip_up_down", "stateless_random_flip_left_right",
           "stateless_random_flip_up_down", "crop_to_bounding_box", "pad_to_bounding_box",
           "resize_with_crop_or_pad", "central_crop", "random_crop", "stateless_random_crop",
           "rgb_to_grayscale", "grayscale_to_rgb", "adjust_brightness", "adjust_contrast",
           "adjust_saturation", "random_brightness", "random_contrast",
           "stateless_random_brightness", "stateless_random_contrast",
           "per_image_standardization", "total_variation", "sobel_edges"]


def _unbatch(out, squeeze):
    return array_ops.squeeze(out, [0]) if squeeze else out


def _static_size(op_name, images):
    h, w = images.shape[1], images.shape[2]
    if h is None or w is None:
        raise ValueError(f"{op_name}: the image's height and width must be known when the op "
                         f"is built, got shape {images.shape}.")
    return h, w


# -----------------------------------------------------------------------------------------------
# dtype conversion
# -----------------------------------------------------------------------------------------------

def convert_image_dtype(image, dtype, saturate=False, name=None):
    """≈ `tf.image.convert_image_dtype`: floats are in [0, 1), integers span their dtype's
    positive range; converting rescales (integer to integer by bit shifts), and float to
    integer rounds (`saturate` clips first, for values outside [0, 1])."""
    image = as_tensor(image)
    dtype = _dt.as_dtype(dtype)
    if not (image.dtype.is_floating or image.dtype.is_integer):
        raise AttributeError("image dtype must be a float or integer type, got "
                             f"{image.dtype.name}")
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError(f"dtype must be a float or integer type, got {dtype.name}")
    if image.dtype == dtype:
        return image
    src = image.dtype
    if src.is_integer and dtype.is_integer:
        in_max, out_max = int(np.iinfo(src.dtype).max), int(np.iinfo(dtype.dtype).max)
        if in_max > out_max:
            scale = (in_max + 1) // (out_max + 1)
            scaled = _math.floordiv(image, convert_to_tensor(scale, dtype=src))
            return _math.cast(scaled, dtype)
        scale = (out_max + 1) // (in_max + 1)
        return _math.multiply(_math.cast(image, dtype), convert_to_tensor(scale, dtype=dtype))
    if src.is_floating and dtype.is_floating:
        return _math.cast(image, dtype)
    if src.is_integer:
        cast = _math.cast(image, dtype)
        return _math.multiply(cast, convert_to_tensor(1.0 / np.iinfo(src.dtype).max,
                                                      dtype=dtype))
    scale = convert_to_tensor(np.iinfo(dtype.dtype).max + 0.5, dtype=src)
    scaled = _math.multiply(image, scale)
    if saturate:
        info = np.iinfo(dtype.dtype)
        scaled = _math.clip_by_value(scaled, convert_to_tensor(float(info.min), dtype=src),
                                     convert_to_tensor(float(info.max), dtype=src))
    return _math.cast(scaled, dtype)


def _to_float(image):
    """TensorFlow's colour adjustments work on float16/32 as they are, on others in float32."""
    if image.dtype in (_dt.float16, _dt.float32):
        return image
    return convert_image_dtype(image, _dt.float32)


# -----------------------------------------------------------------------------------------------
# Flips, rotations, transposes
# -----------------------------------------------------------------------------------------------

def flip_left_right(image):
    """≈ `tf.image.flip_left_right`: reverses the width axis."""
    image = as_tensor(image)
    image_arg("flip_left_right", image)
    return reverse(image, [image.shape.rank - 2])


def flip_up_down(image):
    """≈ `tf.image.flip_up_down`: reverses the height axis."""
    image = as_tensor(image)
    image_arg("flip_up_down", image)
    return reverse(image, [image.shape.rank - 3])


def transpose(image, name=None):
    """≈ `tf.image.transpose`: swaps height and width."""
    image = as_tensor(image)
    image_arg("transpose", image)
    perm = [1, 0, 2] if image.shape.rank == 3 else [0, 2, 1, 3]
    return array_ops.transpose(image, perm)


def rot90(image, k=1, name=None):
    """≈ `tf.image.rot90`: rotates counter-clockwise by k quarter turns."""
    image = as_tensor(image)
    k = int(k.numpy() if isinstance(k, Tensor) else k) % 4
    if k == 0:
        return image
    if k == 1:
        return transpose(flip_left_right(image))
    if k == 2:
        return flip_up_down(flip_left_right(image))
    return flip_left_right(transpose(image))


def _random_flip(image, flip, draw):
    """A flip chosen per image by a uniform draw rounded to 0 or 1, as TensorFlow's."""
    images, squeeze = image_arg("random_flip", image)
    batch = images.shape[0]
    u = draw([1] if squeeze else [batch])
    # TensorFlow rounds the draw: 1 above one half (exactly 0.5 rounds to even, 0).
    flips = _math.cast(_math.greater(u, 0.5), images.dtype)
    flips = array_ops.reshape(flips, [-1, 1, 1, 1])
    out = _math.add(_math.multiply(flips, flip(images)),
                    _math.multiply(_math.subtract(convert_to_tensor(1, dtype=images.dtype),
                                                  flips), images))
    return _unbatch(out, squeeze)


def random_flip_left_right(image, seed=None):
    """≈ `tf.image.random_flip_left_right`: each image flipped with probability 1/2."""
    return _random_flip(image, flip_left_right, lambda s: uniform(s, 0, 1.0, seed=seed))


def random_flip_up_down(image, seed=None):
    """≈ `tf.image.random_flip_up_down`."""
    return _random_flip(image, flip_up_down, lambda s: uniform(s, 0, 1.0, seed=seed))


def stateless_random_flip_left_right(image, seed):
    """≈ `tf.image.stateless_random_flip_left_right`: TensorFlow's choice for `seed`."""
    return _random_flip(image, flip_left_right, lambda s: stateless_uniform(s, seed, 0, 1.0))


def stateless_random_flip_up_down(image, seed):
    """≈ `tf.image.stateless_random_flip_up_down`."""
    return _random_flip(image, flip_up_down, lambda s: stateless_uniform(s, seed, 0, 1.0))


# -----------------------------------------------------------------------------------------------
# Crops and pads
# -----------------------------------------------------------------------------------------------

def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """≈ `tf.image.crop_to_bounding_box`."""
    images, squeeze = image_arg("crop_to_bounding_box", image)
    h, w = _static_size("crop_to_bounding_box", images)
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height,
                                       target_width))
    if oh < 0 or ow < 0:
        raise ValueError("offset_height and offset_width must be >= 0.")
    if th <= 0 or tw <= 0:
        raise ValueError("target_width and target_height must be > 0.")
    if w < tw + ow:
        raise ValueError("width must be >= target + offset.")
    if h < th + oh:
        raise ValueError("height must be >= target + offset.")
    out = _slice(images, [0, oh, ow, 0], [-1, th, tw, -1])
    return _unbatch(out, squeeze)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """≈ `tf.image.pad_to_bounding_box`: zero padding, the image at the offsets."""
    images, squeeze = image_arg("pad_to_bounding_box", image)
    h, w = _static_size("pad_to_bounding_box", images)
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height,
                                       target_width))
    if oh < 0 or ow < 0:
        raise ValueError("offset_height and offset_width must be >= 0")
    if th - oh - h < 0:
        raise ValueError("height must be <= target - offset")
    if tw - ow - w < 0:
        raise ValueError("width must be <= target - offset")
    out = pad(images, [[0, 0], [oh, th - oh - h], [ow, tw - ow - w], [0, 0]])
    return _unbatch(out, squeeze)


def resize_with_crop_or_pad(image, target_height, target_width):
    """≈ `tf.image.resize_with_crop_or_pad`: centred crop and/or zero pad to the target."""
    images, squeeze = image_arg("resize_with_crop_or_pad", image)
    h, w = _static_size("resize_with_crop_or_pad", images)
    th, tw = int(target_height), int(target_width)
    if th <= 0 or tw <= 0:
        raise ValueError("target_width and target_height must be > 0.")
    cropped = crop_to_bounding_box(images, max((h - th) // 2, 0), max((w - tw) // 2, 0),
                                   min(th, h), min(tw, w))
    out = pad_to_bounding_box(cropped, max((th - h) // 2, 0), max((tw - w) // 2, 0), th, tw)
    return _unbatch(out, squeeze)


def central_crop(image, central_fraction):
    """≈ `tf.image.central_crop`: the central `central_fraction` (in (0, 1]) of each side."""
    if central_fraction <= 0.0 or central_fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    images, squeeze = image_arg("central_crop", image)
    if central_fraction == 1.0:
        return image if isinstance(image, Tensor) else as_tensor(image)
    h, w = _static_size("central_crop", images)
    start_h = int((h - h * central_fraction) / 2)
    start_w = int((w - w * central_fraction) / 2)
    out = _slice(images, [0, start_h, start_w, 0], [-1, h - 2 * start_h, w - 2 * start_w, -1])
    return _unbatch(out, squeeze)


def _crop_offsets(value, size, draw):
    value = as_tensor(value)
    size = [int(s) for s in np.asarray(size.numpy() if isinstance(size, Tensor) else size)
            .reshape(-1)]
    shape = list(value.shape)
    if None in shape or len(size) != len(shape):
        raise ValueError(f"random_crop: size {size} must have one entry per dimension of the "
                         f"value's known shape {value.shape}.")
    if any(s > d for s, d in zip(size, shape)):
        raise ValueError(f"random_crop: Need value.shape >= size, got {shape} and {size}.")
    limit = convert_to_tensor([d - s + 1 for d, s in zip(shape, size)], dtype=_dt.int32)
    offset = _math.floormod(draw(len(shape)), limit)
    return _slice(value, offset, size)


def random_crop(value, size, seed=None, name=None):
    """≈ `tf.image.random_crop`: a crop of `size` at a uniformly random offset."""
    return _crop_offsets(value, size, lambda n: uniform([n], 0, np.iinfo(np.int32).max,
                                                        dtype=_dt.int32, seed=seed))


def stateless_random_crop(value, size, seed, name=None):
    """≈ `tf.image.stateless_random_crop`: TensorFlow's crop for `seed`."""
    return _crop_offsets(value, size, lambda n: stateless_uniform(
        [n], seed, 0, np.iinfo(np.int32).max, dtype=_dt.int32))


# -----------------------------------------------------------------------------------------------
# Colour
# -----------------------------------------------------------------------------------------------

def rgb_to_grayscale(images, name=None):
    """≈ `tf.image.rgb_to_grayscale`: ITU-R 601 luma, [..., 1], in the input's dtype."""
    images = as_tensor(images)
    flt = convert_image_dtype(images, _dt.float32)
    weights = convert_to_tensor([0.2989, 0.5870, 0.1140], dtype=_dt.float32)
    gray = _math.reduce_sum(_math.multiply(flt, weights), axis=-1, keepdims=True)
    return convert_image_dtype(gray, images.dtype)


def grayscale_to_rgb(images, name=None):
    """≈ `tf.image.grayscale_to_rgb`: the one channel repeated three times."""
    images = as_tensor(images)
    return array_ops.concat([images, images, images], axis=-1)


def adjust_brightness(image, delta):
    """≈ `tf.image.adjust_brightness`: adds `delta` (in the float image's [0, 1] scale)."""
    image = as_tensor(image)
    flt = _to_float(image)
    out = _math.add(flt, _math.cast(as_tensor(delta), flt.dtype))
    return convert_image_dtype(out, image.dtype, saturate=True) if out.dtype != image.dtype \
        else out


def adjust_contrast(images, contrast_factor):
    """≈ `tf.image.adjust_contrast`: (x - mean) * factor + mean, per image and channel."""
    images = as_tensor(images)
    flt = _to_float(images)
    mean = _math.reduce_mean(flt, axis=[-3, -2], keepdims=True)
    factor = _math.cast(as_tensor(contrast_factor), flt.dtype)
    out = _math.add(_math.multiply(_math.subtract(flt, mean), factor), mean)
    return convert_image_dtype(out, images.dtype, saturate=True) if out.dtype != images.dtype \
        else out


def adjust_saturation(image, saturation_factor, name=None):
    """≈ `tf.image.adjust_saturation`: scales HSV saturation by the factor (clipped to 1),
    keeping hue and value. With value V = max and chroma V - min, scaling saturation moves each
    channel along V - (V - c) * s, which is computed directly."""
    image = as_tensor(image)
    flt = _to_float(image)
    v = _math.reduce_max(flt, axis=-1, keepdims=True)
    lo = _math.reduce_min(flt, axis=-1, keepdims=True)
    chroma = _math.subtract(v, lo)
    factor = _math.cast(as_tensor(saturation_factor), flt.dtype)
    safe = _math.where(_math.greater(chroma, 0), chroma, _math.add(chroma, 1))
    scale = _math.minimum(factor, _math.truediv(v, safe))
    out = _math.subtract(v, _math.multiply(_math.subtract(v, flt), scale))
    return convert_image_dtype(out, image.dtype, saturate=True) if out.dtype != image.dtype \
        else out


def random_brightness(image, max_delta, seed=None):
    """≈ `tf.image.random_brightness`: a delta uniform in [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, uniform([], -max_delta, max_delta, seed=seed))


def random_contrast(image, lower, upper, seed=None):
    """≈ `tf.image.random_contrast`: a factor uniform in [lower, upper)."""
    _check_bounds(lower, upper)
    return adjust_contrast(image, uniform([], lower, upper, seed=seed))


def stateless_random_brightness(image, max_delta, seed):
    """≈ `tf.image.stateless_random_brightness`: TensorFlow's delta for `seed`."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, stateless_uniform([], seed, -max_delta, max_delta))


def stateless_random_contrast(image, lower, upper, seed):
    """≈ `tf.image.stateless_random_contrast`: TensorFlow's factor for `seed`."""
    _check_bounds(lower, upper)
    return adjust_contrast(image, stateless_uniform([], seed, lower, upper))


def _check_bounds(lower, upper):
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


# -----------------------------------------------------------------------------------------------
# Statistics and filters
# -----------------------------------------------------------------------------------------------

def per_image_standardization(image):
    """≈ `tf.image.per_image_standardization`: (x - mean) / max(stddev, 1/sqrt(N)) per image,
    N its number of elements; integer images are cast to float32 first."""
    image = as_tensor(image)
    flt = image if image.dtype.is_floating else _math.cast(image, _dt.float32)
    axes = [-1, -2, -3]
    n = int(np.prod([d for d in flt.shape[-3:]]))
    mean = _math.reduce_mean(flt, axis=axes, keepdims=True)
    var = _math.reduce_mean(_math.square(_math.subtract(flt, mean)), axis=axes, keepdims=True)
    std = _math.maximum(_math.sqrt(var), convert_to_tensor(1.0 / np.sqrt(n), dtype=flt.dtype))
    return _math.truediv(_math.subtract(flt, mean), std)


def total_variation(images, name=None):
    """≈ `tf.image.total_variation`: the sum of absolute differences of neighbouring pixels,
    a scalar for one image, one per image for a batch."""
    images = as_tensor(images)
    rank = images.shape.rank
    if rank not in (3, 4):
        raise ValueError("'images' must be either 3 or 4-dimensional.")
    h_axis = rank - 3
    dy = _math.subtract(images[1:] if rank == 3 else images[:, 1:],
                        images[:-1] if rank == 3 else images[:, :-1])
    dx = _math.subtract(images[:, 1:] if rank == 3 else images[:, :, 1:],
                        images[:, :-1] if rank == 3 else images[:, :, :-1])
    axes = None if rank == 3 else [h_axis, h_axis + 1, h_axis + 2]
    return _math.add(_math.reduce_sum(_math.abs(dy), axis=axes),
                     _math.reduce_sum(_math.abs(dx), axis=axes))


def sobel_edges(image):
    """≈ `tf.image.sobel_edges`: [batch, h, w, d, 2], the vertical then horizontal Sobel
    responses, with the image reflected at its borders."""
    image = as_tensor(image)
    if image.shape.rank != 4:
        raise ValueError(f"sobel_edges: image must be 4-D [batch, height, width, depth], got "
                         f"shape {image.shape}.")
    h, w = _static_size("sobel_edges", image)
    padded = pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    outs = []
    for kernel in (ky, ky.T):
        acc = None
        for i in range(3):
            for j in range(3):
                if kernel[i, j] == 0:
                    continue
                term = _math.multiply(padded[:, i:i + h, j:j + w, :],
                                      convert_to_tensor(kernel[i, j], dtype=image.dtype))
                acc = term if acc is None else _math.add(acc, term)
        outs.append(acc)
    return array_ops.stack(outs, axis=-1)
