"""`eager.data.experimental` ≈ `tf.data.experimental`: the names TensorFlow keeps there."""

from ..base import dtypes as _dt
from .background import AUTOTUNE
from .buffering import DeviceStaging
from .csv_datasets import CsvDataset, make_csv_dataset
from .dataset import Dataset
from .node import INFINITE as INFINITE_CARDINALITY
from .node import UNKNOWN as UNKNOWN_CARDINALITY
from .options import (AutoShardPolicy, AutotuneOptions, DistributeOptions, ExternalStatePolicy,
                      OptimizationOptions, ThreadingOptions)

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "cardinality", "Counter",
           "sample_from_datasets", "choose_from_datasets",
           "prefetch_to_device", "copy_to_device", "CsvDataset", "make_csv_dataset",
           "AutoShardPolicy", "AutotuneOptions", "DistributeOptions", "ExternalStatePolicy",
           "OptimizationOptions", "ThreadingOptions", "dense_to_ragged_batch"]


def cardinality(dataset):
    """≈ `tf.data.experimental.cardinality(dataset)`."""
    return dataset.cardinality()


def prefetch_to_device(device, buffer_size=None):
    """≈ `tf.data.experimental.prefetch_to_device`: for `dataset.apply`, the elements copied
    to `device` ahead of the consumer (`buffer_size` of them; None: AUTOTUNE's choice)."""
    size = AUTOTUNE if buffer_size is None else int(buffer_size)

    def apply(dataset):
        return Dataset(DeviceStaging(dataset._node, device, size, prefetch=True))
    return apply


def copy_to_device(target_device, source_device="/cpu:0"):
    """≈ `tf.data.experimental.copy_to_device`: for `dataset.apply`, each element copied to
    `target_device` when it is asked for."""
    def apply(dataset):
        return Dataset(DeviceStaging(dataset._node, target_device, 0, prefetch=False))
    return apply


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=_dt.int64):
    """≈ `tf.data.experimental.dense_to_ragged_batch`: for `dataset.apply`, `ragged_batch`."""
    def apply(dataset):
        return dataset.ragged_batch(batch_size, drop_remainder, row_splits_dtype)
    return apply


def Counter(start=0, step=1, dtype=None):  # noqa: N802 - TensorFlow's name
    """≈ `tf.data.experimental.Counter` (`Dataset.counter`)."""
    return Dataset.counter(start, step, _dt.int64 if dtype is None else dtype)


sample_from_datasets = Dataset.sample_from_datasets
choose_from_datasets = Dataset.choose_from_datasets
