"""PNG decoding and encoding in numpy and the standard library's zlib (no image library):
what `eager.image.decode_png` / `encode_png` run.

Decoding reads the IHDR, PLTE, tRNS and IDAT chunks, inflates the data, undoes the per-row
filters (None, Sub, Up, Average, Paeth; the last three byte by byte in Python, so large
Paeth-filtered images decode slowly) and expands palettes and sub-byte depths. Interlaced
(Adam7) files are refused. Encoding writes 8- or 16-bit grey, grey+alpha, RGB or RGBA with
filter None, as TensorFlow's encoder with its default compression.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: colour type -> samples per pixel
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}


class PngError(ValueError):
    """A file that is not a PNG this decoder reads; the message says why."""


def _chunks(data):
    pos = len(SIGNATURE)
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if len(body) != length:
            raise PngError("truncated chunk")
        yield kind, body
        pos += 12 + length
        if kind == b"IEND":
            return


def _unfilter(raw, height, stride, bpp):
    """The rows of the image with each row's filter undone."""
    out = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    pos = 0
    for y in range(height):
        kind = raw[pos]
        row = np.frombuffer(raw, np.uint8, stride, pos + 1).astype(np.int32)
        pos += stride + 1
        if kind == 0:
            cur = row
        elif kind == 2:
            cur = (row + prev) & 0xFF
        elif kind in (1, 3, 4):
            cur = row.copy()
            for i in range(stride):
                left = cur[i - bpp] if i >= bpp else 0
                if kind == 1:
                    cur[i] = (cur[i] + left) & 0xFF
                elif kind == 3:
                    cur[i] = (cur[i] + ((left + prev[i]) >> 1)) & 0xFF
                else:
                    up, ul = prev[i], prev[i - bpp] if i >= bpp else 0
                    p = left + up - ul
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                    pred = left if pa <= pb and pa <= pc else up if pb <= pc else ul
                    cur[i] = (cur[i] + pred) & 0xFF
        else:
            raise PngError(f"unknown row filter {kind}")
        out[y] = cur
        prev = cur
    return out


def decode(data, channels=0, dtype=np.uint8):
    """[height, width, channels] pixels of a PNG (`channels` 0 keeps the file's; 1, 3 or 4
    convert), as uint8 or uint16 (depths are rescaled to the dtype's range)."""
    data = bytes(data)
    if not data.startswith(SIGNATURE):
        raise PngError("not a PNG file")
    header, palette, alpha, idat = None, None, None, []
    for kind, body in _chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = np.frombuffer(body, np.uint8).reshape(-1, 3)
        elif kind == b"tRNS":
            alpha = np.frombuffer(body, np.uint8)
        elif kind == b"IDAT":
            idat.append(body)
    if header is None:
        raise PngError("no IHDR chunk")
    width, height, depth, color, _, _, interlace = header
    if interlace:
        raise PngError("interlaced (Adam7) PNGs are not supported")
    if color not in _CHANNELS:
        raise PngError(f"unknown colour type {color}")
    samples = _CHANNELS[color]
    stride = (width * samples * depth + 7) // 8
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as exc:
        raise PngError(f"corrupt image data ({exc})") from None
    if len(raw) < height * (stride + 1):
        raise PngError("image data is shorter than the header says")
    rows = _unfilter(raw, height, stride, max(1, samples * depth // 8))
    if depth == 16:
        pix = rows.view(">u2").astype(np.uint16).reshape(height, width, samples)
        maxval = 65535
    elif depth == 8:
        pix = rows.reshape(height, width, samples)
        maxval = 255
    else:
        bits = np.unpackbits(rows, axis=1).reshape(height, -1, depth)
        weights = 1 << np.arange(depth - 1, -1, -1)
        pix = (bits * weights).sum(axis=2)[:, :width * samples].reshape(height, width, samples)
        maxval = (1 << depth) - 1
        if color != 3:
            pix = pix * (255 // maxval)
            maxval = 255
        pix = pix.astype(np.uint8)
    if color == 3:
        if palette is None:
            raise PngError("palette image without a PLTE chunk")
        idx = pix[..., 0]
        rgb = palette[np.minimum(idx, len(palette) - 1)]
        if alpha is not None:
            a = np.full(len(palette), 255, np.uint8)
            a[:len(alpha)] = alpha[:len(palette)]
            pix = np.concatenate([rgb, a[idx][..., None]], axis=-1)
        else:
            pix = rgb
        maxval = 255
    pix = _to_channels(pix, channels, maxval)
    return _to_dtype(pix, maxval, np.dtype(dtype))


def _to_channels(pix, channels, maxval):
    have = pix.shape[-1]
    if channels in (0, have):
        return pix
    color = pix[..., :3] if have >= 3 else np.repeat(pix[..., :1], 3, axis=-1)
    alpha = pix[..., -1:] if have in (2, 4) else np.full(pix.shape[:2] + (1,), maxval,
                                                         pix.dtype)
    if channels == 1:
        if have < 3:
            return pix[..., :1]
        # ITU-R 601 weights, truncated, as TensorFlow's decoder gives them.
        gray = np.floor(color.astype(np.float64) @ np.array([0.299, 0.587, 0.114]))
        return gray.astype(pix.dtype)[..., None]
    if channels == 3:
        return color
    return np.concatenate([color, alpha], axis=-1)


def _to_dtype(pix, maxval, dtype):
    if dtype == np.uint8:
        return (pix // 257).astype(np.uint8) if maxval == 65535 else pix.astype(np.uint8)
    return pix.astype(np.uint16) * 257 if maxval == 255 else pix.astype(np.uint16)


def _chunk(kind, body):
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))


def encode(pixels, compression=-1):
    """PNG bytes of a [height, width, channels] uint8 or uint16 array (1 to 4 channels)."""
    height, width, channels = pixels.shape
    depth = 16 if pixels.dtype == np.uint16 else 8
    rows = pixels.astype(">u2" if depth == 16 else np.uint8).reshape(height, -1).view(np.uint8)
    raw = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1).tobytes()
    level = 6 if compression in (-1, None) else int(compression)
    header = struct.pack(">IIBBBBB", width, height, depth, _COLOR_TYPES[channels], 0, 0, 0)
    return (SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, level))
            + _chunk(b"IEND", b""))
