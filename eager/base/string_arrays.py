"""String arrays as plain bytes, for files that must hold no pickles (checkpoints, saved
iterator positions): `pack` writes the elements' lengths as little-endian uint64s and then
their bytes, in C order; `unpack` reads that back for a given shape, checking every length
against the data so that a damaged or hostile file cannot make it read past its end."""

from __future__ import annotations

import numpy as np

__all__ = ["pack", "unpack"]


def pack(array) -> np.ndarray:
    """A 1-D uint8 array holding the string (object of `bytes`) array `array`."""
    items = [bytes(b) for b in np.asarray(array, dtype=object).reshape(-1)]
    lengths = np.array([len(b) for b in items], dtype="<u8")
    return np.frombuffer(lengths.tobytes() + b"".join(items), np.uint8).copy()


def unpack(data, shape) -> np.ndarray:
    """The object array of `bytes` of `shape` that `pack` wrote into `data`; ValueError when
    the lengths do not fit the data."""
    raw = bytes(memoryview(np.ascontiguousarray(data, dtype=np.uint8)))
    count = 1
    for d in shape:
        count *= int(d)
    if len(raw) < 8 * count:
        raise ValueError(f"{len(raw)} bytes are too few for {count} string lengths")
    lengths = np.frombuffer(raw, dtype="<u8", count=count)
    if int(lengths.sum(dtype=np.uint64)) != len(raw) - 8 * count:
        raise ValueError("the string lengths do not add up to the bytes that follow them")
    out = np.empty(count, dtype=object)
    at = 8 * count
    for i, n in enumerate(lengths.tolist()):
        out[i] = raw[at:at + n]
        at += n
    return out.reshape(tuple(int(d) for d in shape))
