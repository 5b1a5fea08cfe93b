"""Gradient buckets: fuse many small tensors into a few large contiguous buffers, reduce each
buffer with one collective, and split the results back (Horovod's tensor fusion, PyTorch DDP's
buckets). One collective call per ~25 MB instead of one per variable: fewer, larger messages,
which is what MPI and NCCL are fast at.

Buckets are built in the reverse of the order the tensors are given (the variables' creation
order): the backward pass computes the last layers' gradients first, so the first bucket is the
first one ready, and its all-reduce can run while the backward pass computes the next
(`eager.runtime.passes.collectives`). Where the engine overlaps, the first bucket is small
(`FIRST_BUCKET_BYTES`, as PyTorch DDP's) so that its exchange starts early. Every replica and
every worker forms the same buckets from the same tensors and issues the same collectives in
the same order. Tensors of different dtypes go to different buckets.
"""

from __future__ import annotations

import numpy as np

#: The default bucket size, in bytes (PyTorch DDP's default).
BUCKET_BYTES = 25 * 2 ** 20
#: The first bucket's size, in bytes (PyTorch DDP's default first bucket).
FIRST_BUCKET_BYTES = 2 ** 20


def plan_buckets(shapes_dtypes, bucket_bytes=BUCKET_BYTES,
                 first_bucket_bytes=FIRST_BUCKET_BYTES) -> list:
    """Lists of indices into `shapes_dtypes`, one per bucket, taken from the last tensor to the
    first (see the module doc): tensors of one dtype next to each other, a bucket closed before
    it would pass `bucket_bytes` (the first one: the smaller of `first_bucket_bytes` and
    `bucket_bytes`); a larger tensor gets a bucket of its own."""
    buckets, current, size, dtype = [], [], 0, None
    limit = min(bucket_bytes, first_bucket_bytes)
    for i in reversed(range(len(shapes_dtypes))):
        shape, dt = shapes_dtypes[i]
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dt).itemsize
        if current and (dt != dtype or size + nbytes > limit):
            buckets.append(current)
            current, size, limit = [], 0, bucket_bytes
        current.append(i)
        size += nbytes
        dtype = dt
    if current:
        buckets.append(current)
    return buckets


def fuse(tensors, ops):
    """One flat tensor holding `tensors` end to end (`ops`: reshape and concat functions)."""
    flat = [ops.reshape(t, [-1]) for t in tensors]
    return flat[0] if len(flat) == 1 else ops.concat(flat, 0)


def split(buffer, shapes, ops):
    """The tensors of `shapes` back out of a fused buffer."""
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    parts = [buffer] if len(sizes) == 1 else ops.split(buffer, sizes, 0)
    return [ops.reshape(p, list(s)) for p, s in zip(parts, shapes)]
