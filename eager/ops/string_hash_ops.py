"""Hashing strings into buckets (`eager.strings.to_hash_bucket_fast`/`_strong`), with
TensorFlow's values: bucket = hash(string) mod num_buckets, the hash TensorFlow's
(`fingerprint.py`: FarmHash's Fingerprint64 for "fast", keyed SipHash-2-4 for "strong"), so
ids computed here match those of a model trained with TensorFlow.

Like every string op, these run on the host (a Python loop over the strings) and have no
gradient.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError
from ..core.dispatch import execute, named
from ..core.registry import register_op
from ..core.specs import TensorSpec
from .fingerprint import fingerprint64, siphash24
from .string_ops import _map, _strings

__all__ = ["to_hash_bucket_fast", "to_hash_bucket_strong", "fingerprint_buckets"]

_HOST = frozenset({"CPU"})


def fingerprint_buckets(strings, num_buckets):
    """Fingerprint64 of each element of the object array `strings`, mod `num_buckets`, as an
    int64 array of its shape (also what `StaticVocabularyTable`'s out-of-vocabulary ids use)."""
    return _map(lambda s: fingerprint64(s) % num_buckets, strings, np.int64)


def _fast_kernel(xp, x, num_buckets):
    return fingerprint_buckets(x, num_buckets)


def _strong_kernel(xp, x, num_buckets, key):
    k0, k1 = key
    return _map(lambda s: siphash24(k0, k1, s) % num_buckets, x, np.int64)


def _infer(x, **_):
    return TensorSpec(x.shape, _dt.int64)


STRING_TO_HASH_BUCKET_FAST = register_op(
    "StringToHashBucketFast", _fast_kernel, _infer, dtypes=frozenset({_dt.string}),
    differentiable=False, device_types=_HOST)
STRING_TO_HASH_BUCKET_STRONG = register_op(
    "StringToHashBucketStrong", _strong_kernel, _infer, dtypes=frozenset({_dt.string}),
    differentiable=False, device_types=_HOST)


def _num_buckets(op_name, num_buckets):
    n = int(num_buckets)
    if n < 1:
        raise InvalidArgumentError(None, op_name, f"Value for attr 'num_buckets' of {n} must be "
                                                  f"at least minimum 1 [Op:{op_name}]")
    return n


def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002 - TensorFlow's names
    """≈ `tf.strings.to_hash_bucket_fast`: Fingerprint64(string) mod `num_buckets`, int64."""
    x = _strings(input, "StringToHashBucketFast")
    n = _num_buckets("StringToHashBucketFast", num_buckets)
    out = execute(STRING_TO_HASH_BUCKET_FAST, (x,), {"num_buckets": n})
    return out if name is None else named(out, name)


def to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """≈ `tf.strings.to_hash_bucket_strong`: SipHash-2-4 of the string under the two-integer
    `key`, mod `num_buckets`, int64."""
    x = _strings(input, "StringToHashBucketStrong")
    n = _num_buckets("StringToHashBucketStrong", num_buckets)
    key = [int(k) for k in key]
    if len(key) != 2:
        raise InvalidArgumentError(None, "StringToHashBucketStrong",
                                   "Key must have 2 elements [Op:StringToHashBucketStrong]")
    out = execute(STRING_TO_HASH_BUCKET_STRONG, (x,), {"num_buckets": n, "key": tuple(key)})
    return out if name is None else named(out, name)
