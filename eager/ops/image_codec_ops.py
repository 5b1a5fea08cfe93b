"""`eager.image.decode_png`, `encode_png` and `decode_image`: ops on string tensors (host
kernels, so they run in traced functions and `Dataset.map`), decoding with `png`.

`decode_image` reads PNG. JPEG, GIF and BMP need decoders eager does not have; their bytes are
a NotImplementedError naming the format (decode them with another library and pass the pixels
to `eager.constant`).
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.specs import TensorSpec
from . import png
from .image_ops import convert_image_dtype
from .io_ops import _string_input

__all__ = ["decode_png", "encode_png", "decode_image"]

_HOST = frozenset({"CPU"})
_PIXEL_DTYPES = frozenset({_dt.uint8, _dt.uint16})


def _scalar_bytes(op_name, contents):
    if contents.shape != ():
        raise op_error(op_name, f"contents must be scalar, got shape {list(contents.shape)}")
    return bytes(contents.reshape(-1)[0])


def _decode(op_name, contents, channels, dtype):
    data = _scalar_bytes(op_name, contents)
    if not data.startswith(png.SIGNATURE):
        raise op_error(op_name, _UNKNOWN)
    try:
        return png.decode(data, channels, dtype.dtype)
    except png.PngError as exc:
        raise op_error(op_name, f"Invalid PNG data, size {len(data)}: {exc}") from None


def _decode_png_kernel(xp, contents, channels, dtype):
    return _decode("DecodePng", contents, channels, dtype)


_UNKNOWN = "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required."


def _unsupported(kind):
    return NotImplementedError(f"DecodeImage: {kind} images cannot be decoded by eager (it has "
                               f"no {kind} decoder; PNG is supported). Decode them with another "
                               f"library and pass the pixels to eager.constant.")


def _format_of(data):
    if data.startswith(png.SIGNATURE):
        return "png"
    if data[:3] == b"\xff\xd8\xff":
        return "JPEG"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF"
    if data[:2] == b"BM":
        return "BMP"
    return None


def _decode_image_kernel(xp, contents, channels, dtype, expand_animations):
    data = _scalar_bytes("DecodeImage", contents)
    kind = _format_of(data)
    if kind is None:
        raise op_error("DecodeImage", _UNKNOWN)
    if kind != "png":
        raise _unsupported(kind)
    return _decode("DecodeImage", contents, channels, dtype)


def _infer(op_name):
    def infer(contents, channels, dtype, **_):
        if contents.dtype != _dt.string:
            raise op_error(op_name, f"contents must be a string tensor, got "
                                    f"{contents.dtype.name}")
        if channels not in (0, 1, 2, 3, 4):
            raise op_error(op_name, f"channels must be 0, 1, 2, 3 or 4, got {channels}")
        return TensorSpec([None, None, channels or None], dtype)
    return infer


DECODE_PNG = register_op("DecodePng", _decode_png_kernel, _infer("DecodePng"),
                         differentiable=False, device_types=_HOST,
                         doc="The pixels of a PNG file's bytes.")
DECODE_IMAGE = register_op("DecodeImage", _decode_image_kernel, _infer("DecodeImage"),
                           differentiable=False, device_types=_HOST,
                           doc="The pixels of an image file's bytes (PNG).")


def _encode_png_kernel(xp, image, compression):
    host = image.get() if hasattr(image, "get") else np.asarray(image)
    return np.array(png.encode(host, compression), dtype=object)


def _encode_infer(image, compression):
    if image.dtype not in _PIXEL_DTYPES:
        raise op_error("EncodePng", f"image must be uint8 or uint16, got {image.dtype.name}")
    if image.shape.rank not in (None, 3):
        raise op_error("EncodePng", f"image must be 3-dimensional, got shape "
                                    f"{list(image.shape)}")
    if image.shape.rank == 3 and image.shape[2] not in (None, 1, 2, 3, 4):
        raise op_error("EncodePng", f"image must have 1, 2, 3, or 4 channels, got "
                                    f"{image.shape[2]}")
    return TensorSpec([], _dt.string)


ENCODE_PNG = register_op("EncodePng", _encode_png_kernel, _encode_infer, differentiable=False,
                         device_types=_HOST, doc="PNG bytes of a uint8/uint16 image.")


def decode_png(contents, channels=0, dtype=_dt.uint8, name=None):
    """≈ `tf.io.decode_png` / `tf.image.decode_png`: [height, width, channels] pixels
    (`channels` 0 keeps the file's, 1/3/4 convert), uint8 or uint16."""
    dtype = _dt.as_dtype(dtype)
    if dtype not in _PIXEL_DTYPES:
        raise TypeError(f"DecodePng: dtype must be uint8 or uint16, got {dtype.name}.")
    return execute(DECODE_PNG, (_string_input("DecodePng", contents),),
                   {"channels": int(channels), "dtype": dtype})


def encode_png(image, compression=-1, name=None):
    """≈ `tf.io.encode_png` / `tf.image.encode_png`: a scalar string of PNG bytes."""
    return execute(ENCODE_PNG, (as_tensor(image),), {"compression": int(compression)})


def decode_image(contents, channels=None, dtype=_dt.uint8, name=None, expand_animations=True):
    """≈ `tf.io.decode_image` / `tf.image.decode_image`: a PNG's pixels (see the module doc
    for other formats); a float `dtype` gives values in [0, 1] (`convert_image_dtype`)."""
    dtype = _dt.as_dtype(dtype)
    pixel_dtype = dtype if dtype in _PIXEL_DTYPES else _dt.uint8
    contents = _string_input("DecodeImage", contents)
    if not contents.is_symbolic and contents.shape == ():
        kind = _format_of(bytes(contents.numpy()))
        if kind not in (None, "png"):
            raise _unsupported(kind)  # eagerly as itself; a traced graph's error wraps it
    out = execute(DECODE_IMAGE, (contents,),
                  {"channels": int(channels or 0), "dtype": pixel_dtype,
                   "expand_animations": bool(expand_animations)})
    return out if dtype == pixel_dtype else convert_image_dtype(out, dtype)
