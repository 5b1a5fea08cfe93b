"""Distributed datasets: each global batch split across the replicas, each part on its
replica's device (≈ `experimental_distribute_dataset`), or one dataset per input pipeline from
a function (≈ `distribute_datasets_from_function`)."""

from __future__ import annotations

from ..base import nest
from ..core import context as _core
from ..ops import array_ops
from . import auto_shard as _auto_shard
from . import input_options as _options
from .mirrored_run import regroup
from .input_context import InputContext


def split_sizes(batch, n):
    """TF's rebatching of a global batch of `batch` over `n` replicas: as equal as possible,
    the earlier replicas one larger when it does not divide."""
    base, extra = divmod(batch, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


class DistributedDataset:
    """Iterates a dataset of global batches as `PerReplica` batches (this worker's replicas'
    parts; see `auto_shard.py` for how workers share the data)."""

    def __init__(self, strategy, dataset, options=None):
        self._strategy = strategy
        self._dataset = dataset
        self._options = _options.check_for_dataset(options)
        extended = strategy.extended
        self._policy = None
        if extended._in_multi_worker_mode():
            self._dataset, self._policy = _auto_shard.shard_for_worker(
                dataset, extended._num_workers, extended._worker_index)

    def __iter__(self):
        if self._policy in (None, _auto_shard.DATA):
            return DistributedIterator(self._strategy, iter(self._dataset), self._options)
        return DistributedIterator(self._strategy, _auto_shard.rebatched(
            iter(self._dataset), self._strategy.extended._num_workers), self._options)

    @property
    def element_spec(self):
        return self._dataset.element_spec


def _part_devices(devices, on_device):
    """Where each replica's part is made: its device, or the host for
    `experimental_fetch_to_device=False`."""
    return list(devices) if on_device else ["/device:CPU:0"] * len(devices)


class DistributedIterator:
    def __init__(self, strategy, iterator, options=_options.DEFAULT):
        self._strategy = strategy
        self._iterator = iterator
        self._devices = _part_devices(strategy.extended.worker_devices,
                                      options.experimental_fetch_to_device)
        extended = strategy.extended
        # DATA sharding: every worker reads every global batch and keeps its replicas' parts.
        self._global = extended._in_multi_worker_mode() and not isinstance(
            iterator, _auto_shard.Rebatched)

    def __iter__(self):
        return self

    def __next__(self):
        element = next(self._iterator)
        extended = self._strategy.extended
        devices = extended.worker_devices
        n = len(devices)
        flat = nest.flatten(element)
        batch = int(flat[0].shape[0]) if flat and flat[0].shape.rank else None
        if batch is None:
            raise ValueError("experimental_distribute_dataset needs batched elements: the "
                             "dataset's elements have no batch dimension.")
        first = 0
        if self._global:  # this worker's replicas are global replicas first .. first + n
            first = extended._worker_index * n
            sizes = split_sizes(batch, n * extended._num_workers)
        else:
            sizes = split_sizes(batch, n)
        parts = [array_ops.split(t, sizes, 0) if len(sizes) > 1 else [t] for t in flat]
        per_replica = []
        for r, device in enumerate(self._devices):
            with _core.device(device):
                per_replica.append(nest.pack_sequence_as(
                    element, [array_ops.identity(p[first + r]) for p in parts]))
        return regroup(per_replica)

    def get_next(self):
        return next(self)


class DistributedDatasetsFromFunction:
    """Datasets from `dataset_fn(InputContext)`. PER_WORKER (the default): one input pipeline
    per worker, feeding every replica of that worker, as TF's strategies do: the function is
    called once per process, told which pipeline of how many it is, and its batches, already
    per-replica sized, go to the worker's replicas in turn. PER_REPLICA: the function is called
    once per replica (pipeline id = the global replica id) and each replica reads its own."""

    def __init__(self, strategy, dataset_fn, options=None):
        self._strategy = strategy
        self._options = options = _options.check_for_function(options)
        extended = strategy.extended
        self._per_replica = (options.experimental_replication_mode
                             is _options.InputReplicationMode.PER_REPLICA)
        on_device = options.experimental_fetch_to_device or (
            self._per_replica and options.experimental_place_dataset_on_device)
        self._devices = _part_devices(extended.worker_devices, on_device)
        if self._per_replica:
            first = extended._worker_index * extended._num
            total = strategy.num_replicas_in_sync
            self._datasets = [dataset_fn(InputContext(total, first + r, total))
                              for r in range(extended._num)]
        else:
            self._dataset = dataset_fn(InputContext(extended._num_workers, extended._worker_index,
                                                    strategy.num_replicas_in_sync))

    def __iter__(self):
        devices = self._devices
        if self._per_replica:
            iterators = [iter(d) for d in self._datasets]
        else:
            iterator = iter(self._dataset)
            iterators = [iterator] * len(devices)  # the replicas take turns

        def gen():
            while True:
                per_replica = []
                for device, source in zip(devices, iterators):
                    try:
                        element = next(source)
                    except StopIteration:
                        return
                    with _core.device(device):
                        per_replica.append(nest.map_structure(array_ops.identity, element))
                yield regroup(per_replica)
        return gen()
