"""TensorFlow's string hashes, bit for bit: `fingerprint64` (FarmHash's Fingerprint64, the
64-bit hash behind `tf.strings.to_hash_bucket_fast` and the out-of-vocabulary buckets of
`tf.lookup.StaticVocabularyTable`) and `siphash24` (SipHash-2-4, behind
`tf.strings.to_hash_bucket_strong`).

Both are specified on little-endian 64-bit words with wrap-around arithmetic; here they are
written on Python integers masked to 64 bits, one string at a time (the callers loop over a
tensor's strings, as every string kernel does). Written from the algorithms' published
descriptions; the test compares them with TensorFlow's values at every length class boundary.

Host-only code: kernels call it on bytes and move the result to their device.
"""

from __future__ import annotations

__all__ = ["fingerprint64", "siphash24"]

_MASK = 0xFFFFFFFFFFFFFFFF
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F


def _fetch64(data, i):
    return int.from_bytes(data[i:i + 8], "little")


def _fetch32(data, i):
    return int.from_bytes(data[i:i + 4], "little")


def _rotate(value, shift):
    """Rotation right by `shift` bits (0 leaves the value)."""
    if shift == 0:
        return value
    return ((value >> shift) | (value << (64 - shift))) & _MASK


def _shift_mix(value):
    return value ^ (value >> 47)


def _hash16(u, v, mul):
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _hash_0_to_16(data, n):
    if n >= 8:
        mul = _K2 + n * 2
        a = (_fetch64(data, 0) + _K2) & _MASK
        b = _fetch64(data, n - 8)
        c = (_rotate(b, 37) * mul + a) & _MASK
        d = ((_rotate(a, 25) + b) * mul) & _MASK
        return _hash16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        a = _fetch32(data, 0)
        return _hash16((n + (a << 3)) & _MASK, _fetch32(data, n - 4), mul)
    if n > 0:
        y = data[0] + (data[n >> 1] << 8)
        z = n + (data[n - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _MASK) * _K2) & _MASK
    return _K2


def _hash_17_to_32(data, n):
    mul = _K2 + n * 2
    a = (_fetch64(data, 0) * _K1) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, n - 8) * mul) & _MASK
    d = (_fetch64(data, n - 16) * _K2) & _MASK
    return _hash16((_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK,
                   (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)


def _hash_33_to_64(data, n):
    mul = _K2 + n * 2
    a = (_fetch64(data, 0) * _K2) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, n - 8) * mul) & _MASK
    d = (_fetch64(data, n - 16) * _K2) & _MASK
    y = (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK
    z = _hash16(y, (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_fetch64(data, 16) * mul) & _MASK
    f = _fetch64(data, 24)
    g = ((y + _fetch64(data, n - 32)) * mul) & _MASK
    h = ((z + _fetch64(data, n - 24)) * mul) & _MASK
    return _hash16((_rotate((e + f) & _MASK, 43) + _rotate(g, 30) + h) & _MASK,
                   (e + _rotate((f + a) & _MASK, 18) + g) & _MASK, mul)


def _weak32(data, i, a, b):
    """The 128-bit mix of the 32 bytes at `i` with seeds `a`, `b`."""
    w, x, y, z = (_fetch64(data, i), _fetch64(data, i + 8), _fetch64(data, i + 16),
                  _fetch64(data, i + 24))
    a = (a + w) & _MASK
    b = _rotate((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rotate(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def fingerprint64(data: bytes) -> int:
    """FarmHash's Fingerprint64 of `data`: an unsigned 64-bit integer."""
    n = len(data)
    if n <= 16:
        return _hash_0_to_16(data, n)
    if n <= 32:
        return _hash_17_to_32(data, n)
    if n <= 64:
        return _hash_33_to_64(data, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _MASK
    z = (_shift_mix((y * _K2 + 113) & _MASK) * _K2) & _MASK
    v0 = v1 = w0 = w1 = 0
    x = (x * _K2 + _fetch64(data, 0)) & _MASK
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    s = 0
    while True:
        x = (_rotate((x + y + v0 + _fetch64(data, s + 8)) & _MASK, 37) * _K1) & _MASK
        y = (_rotate((y + v1 + _fetch64(data, s + 48)) & _MASK, 42) * _K1) & _MASK
        x ^= w1
        y = (y + v0 + _fetch64(data, s + 40)) & _MASK
        z = (_rotate((z + w0) & _MASK, 33) * _K1) & _MASK
        v0, v1 = _weak32(data, s, (v1 * _K1) & _MASK, (x + w0) & _MASK)
        w0, w1 = _weak32(data, s + 32, (z + w1) & _MASK, (y + _fetch64(data, s + 16)) & _MASK)
        z, x = x, z
        s += 64
        if s == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    s = last64
    w0 = (w0 + ((n - 1) & 63)) & _MASK
    v0 = (v0 + w0) & _MASK
    w0 = (w0 + v0) & _MASK
    x = (_rotate((x + y + v0 + _fetch64(data, s + 8)) & _MASK, 37) * mul) & _MASK
    y = (_rotate((y + v1 + _fetch64(data, s + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w1 * 9) & _MASK
    y = (y + v0 * 9 + _fetch64(data, s + 40)) & _MASK
    z = (_rotate((z + w0) & _MASK, 33) * mul) & _MASK
    v0, v1 = _weak32(data, s, (v1 * mul) & _MASK, (x + w0) & _MASK)
    w0, w1 = _weak32(data, s + 32, (z + w1) & _MASK, (y + _fetch64(data, s + 16)) & _MASK)
    z, x = x, z
    return _hash16((_hash16(v0, w0, mul) + _shift_mix(y) * _K0 + z) & _MASK,
                   (_hash16(v1, w1, mul) + x) & _MASK, mul)


def _rotl(value, shift):
    return ((value << shift) | (value >> (64 - shift))) & _MASK


def _sip_round(v0, v1, v2, v3):
    v0 = (v0 + v1) & _MASK
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & _MASK
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & _MASK
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & _MASK
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def siphash24(key0: int, key1: int, data: bytes) -> int:
    """SipHash-2-4 of `data` under the 128-bit key (`key0`, `key1`): an unsigned 64-bit
    integer."""
    k0, k1 = key0 & _MASK, key1 & _MASK
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    n = len(data)
    full = n - n % 8
    for i in range(0, full, 8):
        m = _fetch64(data, i)
        v3 ^= m
        v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
        v0 ^= m
    last = ((n & 0xFF) << 56) | int.from_bytes(data[full:], "little")
    v3 ^= last
    v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
    v0 ^= last
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3
