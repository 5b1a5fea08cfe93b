"""TensorFlow's counter-based Philox4x32-10 generator and the samplers its stateless random ops
build on it, in numpy, so that `eager.random.stateless_*` give TensorFlow's numbers bit for bit
(TensorFlow's CPU kernels; its GPU kernels give the same uniform bits).

A stateless op's `seed=[a, b]` becomes a Philox key and counter (`key_counter`, TensorFlow's
`StatelessRandomGetKeyCounter`); output element i then comes from the (i // group)-th block of
four 32-bit words after that counter, where `group` is how many elements one block makes (4
float32, 2 float64 or int64). Everything here is vectorised over blocks: one call of
`blocks(key, counter, n)` computes n blocks at once.

Host-only code: kernels call it with numpy and move the result to their device.
"""

from __future__ import annotations

import numpy as np

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)
#: The key TensorFlow scrambles a seed with before using it.
_SEED_KEY = (0x3EC8F720, 0x02461E29)


def _add_counter(counter, n):
    """The 4-word counters counter, counter+1, ..., counter+n-1 (128-bit increments), as four
    uint64 columns of 32-bit values."""
    lo = (int(counter[0]) | int(counter[1]) << 32)
    hi = (int(counter[2]) | int(counter[3]) << 32)
    steps = np.arange(n, dtype=np.uint64)
    low64 = np.uint64(lo) + steps  # wraps modulo 2**64, as the carry test below expects
    carry = (low64 < np.uint64(lo)).astype(np.uint64)
    high64 = np.uint64(hi) + carry
    return [low64 & _LOW, low64 >> _SHIFT, high64 & _LOW, high64 >> _SHIFT]


def blocks(key, counter, n):
    """n Philox4x32-10 outputs from `counter` on: a uint32 array of shape [n, 4]."""
    c0, c1, c2, c3 = _add_counter(counter, n)
    k0, k1 = int(key[0]), int(key[1])
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0 = _M0 * c0
            p1 = _M1 * c2
            c0, c1, c2, c3 = ((p1 >> _SHIFT) ^ c1 ^ np.uint64(k0), p1 & _LOW,
                              (p0 >> _SHIFT) ^ c3 ^ np.uint64(k1), p0 & _LOW)
            k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.uint32)


def key_counter(seed0, seed1):
    """TensorFlow's key and counter for a stateless op's seed pair (two int64s): the seed is
    itself run through one Philox round trip, so that both halves of it matter equally."""
    s0, s1 = int(seed0) & 0xFFFFFFFFFFFFFFFF, int(seed1) & 0xFFFFFFFFFFFFFFFF
    mix = blocks(_SEED_KEY, (s0 & 0xFFFFFFFF, s0 >> 32, s1 & 0xFFFFFFFF, s1 >> 32), 1)[0]
    return (int(mix[0]), int(mix[1])), (0, 0, int(mix[2]), int(mix[3]))


def words(key, counter, n):
    """The first n 32-bit words of the stream, in order."""
    return blocks(key, counter, -(-n // 4)).reshape(-1)[:n]


# -----------------------------------------------------------------------------------------------
# Words to numbers (TensorFlow's random_distributions.h conversions)
# -----------------------------------------------------------------------------------------------

def to_float32(w):
    """[0, 1) float32 from the low 23 bits (a float in [1, 2) minus 1)."""
    return ((w & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)


def to_float16(w):
    return ((w & np.uint32(0x3FF)) | np.uint32(0x3C00)).astype(np.uint16).view(np.float16) \
        - np.float16(1)


def to_float64(w0, w1):
    """[0, 1) float64 from 52 bits of a word pair: the low 20 of w0 (the high mantissa bits)
    and all of w1."""
    bits = ((w0.astype(np.uint64) & np.uint64(0xFFFFF)) << _SHIFT) | w1.astype(np.uint64)
    bits = bits | np.uint64(0x3FF0000000000000)
    return bits.view(np.float64) - 1.0


def box_muller32(w0, w1):
    """Two float32 standard normals per word pair, computed in float32 as TensorFlow does."""
    eps = np.float32(1.0e-7)
    u1 = np.maximum(to_float32(w0), eps)
    v1 = np.float32(2 * np.pi) * to_float32(w1)
    # float32 results of correctly rounded functions, as C's sinf/cosf/logf give them
    u2 = np.sqrt(np.float32(-2.0) * np.log(u1.astype(np.float64)).astype(np.float32))
    v1 = v1.astype(np.float64)
    return np.sin(v1).astype(np.float32) * u2, np.cos(v1).astype(np.float32) * u2


def box_muller64(w0, w1, w2, w3):
    eps = 1.0e-7
    u1 = np.maximum(to_float64(w0, w1), eps)
    v1 = 2 * np.pi * to_float64(w2, w3)
    u2 = np.sqrt(-2.0 * np.log(u1))
    return np.sin(v1) * u2, np.cos(v1) * u2


# -----------------------------------------------------------------------------------------------
# Samplers: n elements of one kind from (key, counter)
# -----------------------------------------------------------------------------------------------

def uniform(key, counter, n, dtype):
    """n floats in [0, 1) of `dtype` (a numpy dtype)."""
    if dtype == np.float64:
        w = blocks(key, counter, -(-n // 2)).reshape(-1, 2)
        return to_float64(w[:, 0], w[:, 1])[:n]
    w = words(key, counter, n)
    return to_float16(w) if dtype == np.float16 else to_float32(w)


def full_int(key, counter, n, dtype):
    """n integers over the whole range of a 32- or 64-bit `dtype`."""
    if np.dtype(dtype).itemsize == 8:
        w = blocks(key, counter, -(-n // 2)).reshape(-1, 2).astype(np.uint64)
        return (w[:, 0] | (w[:, 1] << _SHIFT))[:n].view(dtype)
    return words(key, counter, n).view(dtype)


def bounded_int(key, counter, n, dtype, lo, hi):
    """n integers in [lo, hi): the raw bits modulo the range, as TensorFlow (slightly biased for
    ranges that do not divide 2**32 or 2**64, as there)."""
    span = int(hi) - int(lo)
    if np.dtype(dtype).itemsize == 8:
        bits = full_int(key, counter, n, np.uint64)
        return (np.uint64(int(lo) & 0xFFFFFFFFFFFFFFFF) + bits % np.uint64(span)).view(dtype)
    bits = words(key, counter, n)
    return (np.uint32(int(lo) & 0xFFFFFFFF) + bits % np.uint32(span)).view(dtype)


def normal(key, counter, n, dtype):
    """n standard normals; float16 is computed in float32, as TensorFlow."""
    if dtype == np.float64:
        w = blocks(key, counter, -(-n // 2))
        a, b = box_muller64(w[:, 0], w[:, 1], w[:, 2], w[:, 3])
        return np.stack([a, b], axis=1).reshape(-1)[:n]
    w = blocks(key, counter, -(-n // 4))
    a, b = box_muller32(w[:, 0], w[:, 1])
    c, d = box_muller32(w[:, 2], w[:, 3])
    return np.stack([a, b, c, d], axis=1).reshape(-1)[:n].astype(dtype)


#: Philox blocks TensorFlow reserves for each truncated-normal output (256 words).
_TRUNCATED_BLOCKS_PER_OUTPUT = 64


def truncated_normal(key, counter, n, dtype):
    """n standard normals with |x| < 2: each group of outputs (4 float32, 2 float64) takes the
    first accepted Box-Muller values of its own stretch of the stream (64 blocks per output), as
    TensorFlow's kernel does, so values do not depend on how the work is split."""
    group = 2 if dtype == np.float64 else 4
    n_groups = -(-n // group)
    out = np.empty((n_groups, group), np.float64 if dtype == np.float64 else np.float32)
    reserved = group * _TRUNCATED_BLOCKS_PER_OUTPUT
    low = int(counter[0]) | int(counter[1]) << 32
    high = int(counter[2]) | int(counter[3]) << 32
    for g in range(n_groups):
        base = low + g * reserved
        hi = high + (base >> 64)
        base &= 0xFFFFFFFFFFFFFFFF
        ctr = (base & 0xFFFFFFFF, base >> 32, hi & 0xFFFFFFFF, (hi >> 32) & 0xFFFFFFFF)
        n_blocks = 4
        while True:
            w = blocks(key, ctr, n_blocks).reshape(-1)
            if dtype == np.float64:
                a, b = box_muller64(w[0::4], w[1::4], w[2::4], w[3::4])
            else:
                a, b = box_muller32(w[0::2], w[1::2])
            cand = np.stack([a, b], axis=1).reshape(-1)
            good = cand[np.abs(cand) < 2]
            if good.size >= group or n_blocks >= reserved:
                break
            n_blocks = min(n_blocks * 4, reserved)
        out[g] = good[:group]
    return out.reshape(-1)[:n].astype(dtype)


def categorical(key, counter, logits, num_samples):
    """[batch, num_samples] class indices drawn from the rows of `logits` (a float numpy array
    [batch, classes]) as TensorFlow's Multinomial kernel: each draw is a uniform double times
    the row's unnormalised total, located in the running sum of exp(logit - max) over the
    finite logits. Rows draw one after the other from one stream."""
    batch = logits.shape[0]
    w = words(key, counter, 2 * batch * num_samples).reshape(batch, num_samples, 2)
    return categorical_from_uniform(logits, to_float64(w[..., 0], w[..., 1]))


def categorical_from_uniform(logits, u):
    """TensorFlow's Multinomial sampling rule given the [batch, num_samples] uniform doubles."""
    batch, classes = logits.shape
    finite = np.isfinite(logits)
    lg = logits.astype(np.float64)
    row_max = np.max(np.where(finite, lg, -np.inf), axis=1, keepdims=True) if classes else \
        np.zeros((batch, 1))
    row_max = np.where(np.isfinite(row_max), row_max, np.finfo(logits.dtype).min)
    with np.errstate(over="ignore", invalid="ignore"):
        terms = np.where(finite, np.exp(lg - row_max), 0.0)
    cdf = np.cumsum(terms, axis=1)
    total = cdf[:, -1:] if classes else np.zeros((batch, 1))
    u = u * total
    out = np.empty(u.shape, np.int64)
    for b in range(batch):
        out[b] = np.searchsorted(cdf[b], u[b], side="right")
    return out
