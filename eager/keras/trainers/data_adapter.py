"""Turns `fit`/`evaluate`/`predict`'s data into batches: arrays (numpy, tensors, nested in
tuples, lists and dicts) are sliced into batches of `batch_size` on the host, shuffled each
epoch when asked; an `eager.data.Dataset` is iterated as it is (its elements already batches
of `(x,)`, `(x, y)` or `(x, y, sample_weight)`).

Array batches are handed to the step as tensors; floating arrays are float32 (Keras's floatx)
as Keras's array adapter makes them, so a float64 numpy input does not make a second trace.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...base import nest
from ...core.tensor_conversion import convert_to_tensor
from ...data.dataset import Dataset
from ...tensor import Tensor
from ...variables import Variable

__all__ = ["EpochIterator", "unpack_x_y_sample_weight", "train_validation_split"]


def unpack_x_y_sample_weight(data):
    """`(x,)`, `(x, y)`, `(x, y, sample_weight)` or a bare `x` -> (x, y, sample_weight)."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or "
                     f"`(x, y, sample_weight)`, found: {data}")


def _as_array(x):
    if x is None:
        return None
    if isinstance(x, (Tensor, Variable)):
        x = x.numpy()
    x = np.asarray(x)
    if x.dtype == np.float64:
        x = x.astype(np.float32)
    if x.ndim == 0:
        raise ValueError(f"Expected all elements of the data to be arrays with a batch "
                         f"dimension; got a scalar: {x!r}")
    return x


def _check_cardinality(x, y, sample_weight) -> int:
    data = (x, y, sample_weight)
    sizes = {a.shape[0] for a in nest.flatten(data) if a is not None}
    if len(sizes) > 1:
        message = ("Data cardinality is ambiguous. Make sure all arrays contain the same "
                   "number of samples.")
        for label, part in zip(("x", "y", "sample_weight"), data):
            if part is None:
                continue
            shown = ", ".join(str(a.shape[0]) for a in nest.flatten(part) if a is not None)
            message += f"'{label}' sizes: {shown}\n"
        raise ValueError(message)
    return sizes.pop() if sizes else 0


def class_weight_to_sample_weights(y, class_weight):
    """One weight per sample from its class (the argmax of a one-hot target, else the
    rounded label), as Keras computes them."""
    y = np.asarray(y)
    if y.ndim > 1 and y.shape[-1] != 1:
        classes = np.argmax(y, axis=-1)
    else:
        classes = np.round(y.reshape(y.shape[0], -1)[:, 0]).astype("int64")
    weights = np.ones(classes.shape[0], np.float32)
    for cls, weight in class_weight.items():
        weights[classes == cls] = weight
    return weights


def train_validation_split(arrays, validation_split):
    """The last `validation_split` of the samples (Keras's split: no shuffling first)."""
    flat = [a for a in nest.flatten(arrays) if a is not None]
    if not all(isinstance(a, (np.ndarray, Tensor, Variable)) or hasattr(a, "__array__")
               for a in flat):
        raise ValueError("`validation_split` is only supported for Tensors or NumPy arrays, "
                         f"found following types in the input: {[type(a) for a in flat]}")
    arrays = nest.map_structure(_as_array, arrays)
    n = _check_cardinality(*arrays)
    split_at = int(math.floor(n * (1.0 - validation_split)))
    if split_at == 0 or split_at == n:
        raise ValueError(f"Training data contains {n} samples, which is not sufficient to "
                         f"split it into a validation and training set as specified by "
                         f"`validation_split={validation_split}`. Either provide more data, or "
                         "a different value for the `validation_split` argument.")
    head = nest.map_structure(lambda a: None if a is None else a[:split_at], arrays)
    tail = nest.map_structure(lambda a: None if a is None else a[split_at:], arrays)
    return head, tail


def _to_tensor(a):
    return None if a is None else convert_to_tensor(a)


class EpochIterator:
    """The batches of one epoch at a time: `for step, batch in iterator.epoch():` with
    `num_batches` steps (None when a dataset's length is unknown). With `steps_per_epoch` on
    a dataset, one iterator runs across epochs (as Keras's does); running out of data warns
    and ends the epoch (`exhausted` is then True)."""

    def __init__(self, x=None, y=None, sample_weight=None, batch_size=None,
                 steps_per_epoch=None, shuffle=False, class_weight=None):
        self.steps_per_epoch = steps_per_epoch
        self.exhausted = False
        self._dataset_iter = None
        if isinstance(x, Dataset):
            if y is not None:
                raise ValueError("When providing `x` as a tf.data.Dataset, `y` should not be "
                                 f"passed. Instead, the targets should be included as part of "
                                 f"the tf.data.Dataset. Received: y={y}")
            if sample_weight is not None:
                raise ValueError("When providing `x` as a tf.data.Dataset, `sample_weight` "
                                 "should not be passed. Instead, the sample weights should be "
                                 "included as part of the tf.data.Dataset.")
            self._dataset = x
            self._class_weight = class_weight
            cardinality = int(x.cardinality().numpy())
            size = cardinality if cardinality >= 0 else None
            self.num_batches = steps_per_epoch if steps_per_epoch else size
            return
        self._dataset = None
        if x is None:
            raise ValueError("Unrecognized data type: x=None (of type <class 'NoneType'>)")
        arrays = nest.map_structure(_as_array, (x, y, sample_weight))
        n = _check_cardinality(*arrays)
        if class_weight is not None:
            if arrays[2] is not None:
                raise ValueError("You cannot `class_weight` and `sample_weight` at the same "
                                 "time.")
            if len(nest.flatten(arrays[1])) != 1:
                raise ValueError("`class_weight` is only supported for Models with a single "
                                 "output.")
            arrays = (arrays[0], arrays[1],
                      class_weight_to_sample_weights(nest.flatten(arrays[1])[0], class_weight))
        self._arrays = arrays
        self._template = arrays
        self._template_leaves = nest.flatten(arrays)
        self._leaves = [a for a in self._template_leaves if a is not None]
        self._size = n
        self._batch_size = batch_size or 32
        self._shuffle = shuffle
        full = int(math.ceil(n / self._batch_size))
        self.num_batches = min(full, steps_per_epoch) if steps_per_epoch else full

    def epoch(self):
        """Yields (step, (x, y, sample_weight)) for one epoch."""
        for step, flat in self.flat_epoch():
            yield step, self.pack(flat)

    def pack(self, flat):
        """The batch structure (x, y, sample_weight) of `flat_epoch`'s tensors."""
        it = iter(flat)
        return nest.pack_sequence_as(self._template, [
            None if leaf is None else next(it) for leaf in self._template_leaves])

    def flat_epoch(self):
        """Yields (step, [tensor, ...]) for one epoch: the batch's tensors in `nest.flatten`
        order with the absent parts left out (`pack` rebuilds the structure). The per-step
        path of `fit`: arrays are sliced without walking their structure each step."""
        if self._dataset is not None:
            for step, batch in self._dataset_epoch():
                self._template = batch
                self._template_leaves = nest.flatten(batch)
                yield step, [t for t in self._template_leaves if t is not None]
            return
        n, size = self._size, self._batch_size
        order = np.random.permutation(n) if self._shuffle else None
        leaves = self._leaves
        for step in range(self.num_batches):
            start = step * size
            if order is None:
                index = slice(start, min(start + size, n))
            else:
                index = order[start:start + size]
            yield step, [convert_to_tensor(a[index]) for a in leaves]

    def _dataset_epoch(self):
        if self._dataset_iter is None or not self.steps_per_epoch:
            self._dataset_iter = iter(self._dataset)
        step = 0
        while self.num_batches is None or step < self.num_batches:
            try:
                element = next(self._dataset_iter)
            except StopIteration:
                if self.steps_per_epoch:
                    warnings.warn("Your input ran out of data; interrupting training. Make "
                                  "sure that your dataset or generator can generate at least "
                                  "`steps_per_epoch * epochs` batches. You may need to use the "
                                  "`.repeat()` function when building your dataset.",
                                  stacklevel=2)
                    self.exhausted = True
                if self.num_batches is None:
                    self.num_batches = step
                return
            x, y, w = unpack_x_y_sample_weight(element)
            if self._class_weight is not None and y is not None and w is None:
                w = convert_to_tensor(class_weight_to_sample_weights(
                    nest.flatten(y)[0].numpy(), self._class_weight))
            yield step, (x, y, w)
            step += 1
