"""`InputOptions` and `InputReplicationMode` (≈ `tf.distribute.InputOptions`): how a strategy's
distributed dataset is fed to the replicas.

What eager does with each option:
- `experimental_fetch_to_device` (default True): each replica's part is copied to the replica's
  device; False keeps every part on the host (CPU:0), for steps that read the batch on the host.
- `experimental_replication_mode`: PER_WORKER (default) calls a dataset function once per
  worker; PER_REPLICA calls it once per replica, each with its own `InputContext`, and each
  replica reads its own dataset (only `distribute_datasets_from_function`, as in TF).
- `experimental_place_dataset_on_device`: with PER_REPLICA, each replica's elements are made on
  its device even when `experimental_fetch_to_device` is False; TF's ValueError without
  PER_REPLICA.
- `experimental_per_replica_buffer_size`: accepted and recorded; eager copies a batch to its
  devices when the batch is requested and keeps no prefetch buffer per replica.
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class InputReplicationMode(enum.Enum):
    """≈ `tf.distribute.InputReplicationMode`."""

    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


class _Fields(NamedTuple):
    experimental_fetch_to_device: bool
    experimental_replication_mode: InputReplicationMode
    experimental_place_dataset_on_device: bool
    experimental_per_replica_buffer_size: int


class InputOptions(_Fields):
    """≈ `tf.distribute.InputOptions` (see the module doc for what each field does); a named
    tuple, as TF's is."""

    __slots__ = ()

    def __new__(cls, experimental_fetch_to_device=None,
                experimental_replication_mode=InputReplicationMode.PER_WORKER,
                experimental_place_dataset_on_device=False,
                experimental_per_replica_buffer_size=1):
        if experimental_fetch_to_device is None:
            experimental_fetch_to_device = True
        return super().__new__(cls, experimental_fetch_to_device, experimental_replication_mode,
                               experimental_place_dataset_on_device,
                               experimental_per_replica_buffer_size)

    def __repr__(self):
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"InputOptions({fields})"


DEFAULT = InputOptions()


def check_for_dataset(options):
    """The options for `experimental_distribute_dataset` (TF's error for PER_REPLICA)."""
    options = DEFAULT if options is None else options
    if options.experimental_replication_mode is InputReplicationMode.PER_REPLICA:
        raise NotImplementedError("InputReplicationMode.PER_REPLICA is only supported in "
                                  "`distribute_datasets_from_function`.")
    return options


def check_for_function(options):
    """The options for `distribute_datasets_from_function` (TF's error for on-device
    placement without PER_REPLICA)."""
    options = DEFAULT if options is None else options
    if (options.experimental_place_dataset_on_device
            and options.experimental_replication_mode is not InputReplicationMode.PER_REPLICA):
        raise ValueError("When `experimental_place_dataset_on_device` is set for dataset "
                         "placement, you must also specify `PER_REPLICA` for the replication "
                         "mode")
    return options
