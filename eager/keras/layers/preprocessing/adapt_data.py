"""What `adapt(data)` accepts, as Keras 3's preprocessing layers read it: one array or tensor
(all of it is one batch), or an `eager.data.Dataset` / iterable of batches (a dataset of
unbatched rank-1 elements is batched by 128 first). `(x, y)` elements give `x`."""

from __future__ import annotations

import itertools

import numpy as np

from ....data.dataset import Dataset
from ....tensor import Tensor

__all__ = ["adapt_batches"]


def _features(batch):
    if isinstance(batch, (tuple, list)) and not isinstance(batch, np.ndarray):
        batch = batch[0]
    return np.asarray(batch.numpy() if hasattr(batch, "numpy") else batch)


def adapt_batches(data):
    """(shape of one batch, iterator of numpy batches, whether `data` was a single array)."""
    if isinstance(data, (np.ndarray, Tensor)) or hasattr(data, "__array__") and \
            not isinstance(data, Dataset):
        array = _features(data)
        return array.shape, iter([array]), True
    if isinstance(data, Dataset):
        spec = data.element_spec
        spec = spec[0] if isinstance(spec, tuple) else spec
        if spec.shape.rank == 1:
            data = data.batch(128)
    if not hasattr(data, "__iter__"):
        raise TypeError(f"Unsupported data type: {type(data)}. `adapt` supports `np.ndarray`, "
                        "tensors, `eager.data.Dataset` and iterables of batches (e.g. list, "
                        "generator).")
    batches = (_features(b) for b in data)
    first = next(batches, None)
    if first is None:
        raise ValueError("adapt() received an empty iterable (no batches). Expected at least "
                         "one batch. Pass a non-empty iterable of arrays or tensors, e.g. "
                         "layer.adapt([x]) or layer.adapt(list_of_batches).")
    return first.shape, itertools.chain([first], batches), False
