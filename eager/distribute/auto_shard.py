"""How the workers of a multi-worker strategy share one dataset (≈ tf.data's auto-sharding,
`tf.data.experimental.AutoShardPolicy`).

The dataset yields global batches. The policy, from the dataset's
`options().experimental_distribute.auto_shard_policy`:

* FILE: each worker reads its own files (the file names feeding the pipeline's
  `TextLineDataset`/`TFRecordDataset` are sharded: worker w reads files w, w + W, ...), and
  each step takes its share of a global batch (B / W rows) from its own stream of rows.
* DATA: every worker reads the whole dataset and keeps, of each global batch, its replicas'
  parts (the batch split into one part per global replica, worker-major).
* OFF: no sharding: every worker reads the whole dataset and, like FILE, takes B / W rows a
  step from it (so the workers see the same rows).
* AUTO (the default): FILE when the pipeline reads files, else DATA.
"""

from __future__ import annotations

import copy

from ..base import nest
from ..data import files as _files
from ..data.dataset import Dataset
from ..data.options import AutoShardPolicy
from ..data.ordering import Shard
from ..ops import array_ops

OFF, AUTO, FILE, DATA = (AutoShardPolicy.OFF, AutoShardPolicy.AUTO, AutoShardPolicy.FILE,
                         AutoShardPolicy.DATA)
_READERS = (_files.TextLines,)  # TFRecords is a subclass


def _file_reader(node):
    for found in node.walk():
        if isinstance(found, _READERS):
            return found
    return None


def _replaced(node, target, replacement):
    """The pipeline `node` with `target` replaced (the nodes above it shallow-copied)."""
    if node is target:
        return replacement
    inputs = tuple(_replaced(i, target, replacement) for i in node.inputs)
    if all(a is b for a, b in zip(inputs, node.inputs)):
        return node
    clone = copy.copy(node)
    clone.inputs = inputs
    return clone


def shard_for_worker(dataset, num_workers, worker_index):
    """(this worker's dataset, the policy applied: FILE, DATA or OFF)."""
    policy = dataset.options().experimental_distribute.auto_shard_policy
    policy = AUTO if policy is None else policy
    if policy not in (OFF, AUTO, FILE, DATA):
        raise ValueError(f"auto_shard_policy {policy} is not supported by eager's "
                         f"multi-worker strategy; use OFF, AUTO, FILE or DATA.")
    if policy in (OFF, DATA):
        return dataset, policy
    reader = _file_reader(dataset._node)
    if reader is None:
        if policy == FILE:
            raise ValueError(
                "Found an unshardable source dataset: auto_shard_policy is FILE but the "
                "dataset reads no files (no TextLineDataset or TFRecordDataset in its "
                "pipeline); use AutoShardPolicy.DATA or OFF.")
        return dataset, DATA
    names = reader.inputs[0]
    sharded_reader = copy.copy(reader)
    sharded_reader.inputs = (Shard(names, num_workers, worker_index),)
    return Dataset(_replaced(dataset._node, reader, sharded_reader)), FILE


class Rebatched:
    """This worker's batches from its own stream: each step, its share of a global batch
    (`B // W` rows, B the size of the stream's first batch), carried across the stream's
    batches; the last step gets what remains."""

    def __init__(self, iterator, num_workers):
        self._iterator = iterator
        self._num_workers = num_workers
        self._pending = None  # flat tensors of rows not yet handed out
        self._structure = None
        self._share = None

    def __iter__(self):
        return self

    def _rows(self):
        return 0 if self._pending is None else int(self._pending[0].shape[0])

    def __next__(self):
        while self._share is None or self._rows() < self._share:
            try:
                element = next(self._iterator)
            except StopIteration:
                if self._rows() == 0:
                    raise
                break
            flat = nest.flatten(element)
            if self._structure is None:
                self._structure = element
                batch = int(flat[0].shape[0]) if flat and flat[0].shape.rank else None
                if batch is None:
                    raise ValueError("experimental_distribute_dataset needs batched elements: "
                                     "the dataset's elements have no batch dimension.")
                self._share = max(1, batch // self._num_workers)
            self._pending = flat if self._pending is None else [
                array_ops.concat([a, b], 0) for a, b in zip(self._pending, flat)]
        take = min(self._share, self._rows())
        out = [t[:take] for t in self._pending]
        rest = [t[take:] for t in self._pending]
        self._pending = rest if int(rest[0].shape[0]) else None
        return nest.pack_sequence_as(self._structure, out)


def rebatched(iterator, num_workers):
    return Rebatched(iterator, num_workers)
