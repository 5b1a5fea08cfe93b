"""Transformations that hold elements for later: `prefetch` and `cache`.

`prefetch(n)` produces up to `n` elements ahead through `background.Prefetcher` (a bounded
producer thread); saving its iterator drains the producer first, and the elements it had made
are saved with the position.

`cache()` keeps the elements of the first complete iteration in memory and replays them after;
`cache(filename)` writes them to `<filename>.eager-cache` (numpy's `.npy` records, one per
component, in order) and every later iteration, in this process or another, reads that file.
An iteration that stops early leaves no cache behind (TensorFlow discards a partial one the same
way), and two iterators writing one file at once is TensorFlow's AlreadyExistsError.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from ..base import errors as _errors
from ..tensor import wrap_value
from . import structure as _st
from . import element_state as _es
from . import iterator_context
from .background import AUTOTUNE, PREFETCH_LIMIT, Prefetcher, stage_to_device
from .node import Node, NodeIterator, not_checkpointable

__all__ = ["Prefetch", "Cache", "DeviceStaging"]


class Prefetch(Node):
    tf_name = "_PrefetchDataset"

    def __init__(self, node, buffer_size):
        self.inputs = (node,)
        buffer_size = int(buffer_size)
        if buffer_size < -1:
            raise _errors.InvalidArgumentError(
                None, "PrefetchDataset", "buffer_size must be >= 0 or set buffer_size to be -1 "
                                         "for auto-tuning [Op:PrefetchDataset]")
        self.buffer_size = buffer_size
        self.element_spec = node.element_spec

    def cardinality(self):
        return self.inputs[0].cardinality()

    def make_iterator(self):
        return _PrefetchIterator(self)


class _PrefetchIterator(NodeIterator):
    """`_ready`: elements a save drained from the producer, given before it restarts."""

    __slots__ = ("_node", "_input", "_producer", "_ready", "_max_buffer")

    def __init__(self, node):
        self._node = node
        self._input = node.inputs[0].make_iterator()
        self._producer = None
        self._ready = []
        self._max_buffer = None
        if node.buffer_size == AUTOTUNE:  # the options may bound how deep it grows
            self._max_buffer = iterator_context.current().prefetch_limit(
                PREFETCH_LIMIT, iterator_context.spec_bytes(_st.flatten(node.element_spec)))

    def __next__(self):
        if self._ready:
            item = self._ready.pop(0)
            if isinstance(item, BaseException):
                raise item
            return item
        if self._node.buffer_size == 0:
            return next(self._input)
        if self._producer is None:
            source = self._input
            self._producer = Prefetcher(lambda: source, self._node.buffer_size,
                                        max_buffer=self._max_buffer)
        return next(self._producer)

    @property
    def pipeline_source(self):
        return self._producer if self._producer is not None else self._input

    def save(self):
        if self._producer is not None:
            self._ready.extend(self._producer.close(drain=True))
            self._producer = None
        spec = self._node.element_spec
        if any(isinstance(item, BaseException) for item in self._ready):
            raise not_checkpointable("A prefetched element that failed")
        return {"ready": [_es.element_arrays(e, spec) for e in self._ready],
                "input": self._input.save()}

    def restore(self, state):
        if self._producer is not None:
            self._producer.close()
            self._producer = None
        spec = self._node.element_spec
        self._ready = [_es.element_from_arrays(a, spec) for a in state["ready"]]
        self._input.restore(state["input"])

    def close(self):
        if self._producer is not None:
            self._producer.close()
            self._producer = None
        self._input.close()


# -- device staging -------------------------------------------------------------------------------
class DeviceStaging(Node):
    """`prefetch_to_device(device, buffer_size)` and `copy_to_device(device)`: the elements
    copied to `device` by `background.stage_to_device` (ahead of the consumer, on the device's
    copy path; `buffer_size` 0 copies each element when it is asked for)."""

    def __init__(self, node, device, buffer_size, prefetch):
        self.inputs = (node,)
        self.device = device
        self.buffer_size = int(buffer_size)
        self.tf_name = "_PrefetchDataset" if prefetch else "_CopyToDeviceDataset"
        self.element_spec = node.element_spec
        for s in _st.flatten(node.element_spec):
            if isinstance(s, _st.DatasetSpec):
                raise TypeError("prefetch_to_device: dataset elements must be tensors.")

    def make_iterator(self):
        return _StagingIterator(self)


class _StagingIterator(NodeIterator):
    __slots__ = ("_node", "_input", "_stager")

    def __init__(self, node):
        self._node = node
        self._input = node.inputs[0].make_iterator()
        self._stager = None

    @property
    def pipeline_source(self):
        return self._stager if self._stager is not None else self._input

    def __next__(self):
        if self._stager is None:
            node = self._node
            self._stager = stage_to_device(self._input, node.device, node.buffer_size)
        return next(self._stager)

    def save(self):
        raise not_checkpointable("A dataset staged to a device")

    def restore(self, state):
        raise not_checkpointable("A dataset staged to a device")

    def close(self):
        if self._stager is not None:
            self._stager.close()
            self._stager = None
        self._input.close()


# -- cache -----------------------------------------------------------------------------------------
_SUFFIX = ".eager-cache"


class Cache(Node):
    tf_name = "CacheDataset"

    def __init__(self, node, filename):
        self.inputs = (node,)
        self.filename = os.fspath(filename) if filename else ""
        self.element_spec = node.element_spec
        self.elements = None  # the memory cache, once an iteration completed

    def cardinality(self):
        return self.inputs[0].cardinality()

    def make_iterator(self):
        if self.filename:
            path = self.filename + _SUFFIX
            if os.path.exists(path):
                return _FileReader(self, path)
            return _Writer(self, _FileSink(self.filename))
        if self.elements is not None:
            return _MemoryReader(self)
        return _Writer(self, _MemorySink(self))


class _MemoryReader(NodeIterator):
    __slots__ = ("_elements", "_index")

    def __init__(self, node):
        self._elements = node.elements
        self._index = 0

    def __next__(self):
        i = self._index
        if i >= len(self._elements):
            raise StopIteration
        self._index = i + 1
        return self._elements[i]

    def save(self):
        return {"index": self._index}

    def restore(self, state):
        self._index = int(state["index"])


class _MemorySink:
    def __init__(self, node):
        self._node, self._elements = node, []

    def add(self, element):
        self._elements.append(element)

    def finish(self):
        if self._node.elements is None:
            self._node.elements = self._elements

    def abandon(self):
        self._elements = []


class _FileSink:
    """Streams `.npy` records to a temporary file, renamed into place when complete; a lock
    file keeps a second writer out."""

    def __init__(self, filename):
        self._path = filename + _SUFFIX
        self._lock = self._path + ".lock"
        try:
            fd = os.open(self._lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            raise _errors.AlreadyExistsError(
                None, "CacheDatasetV2", f"There appears to be a concurrent caching iterator "
                f"running - cache lockfile already exists ('{self._lock}'). If you are sure no "
                f"other running TF computations are using this cache prefix, delete the lockfile "
                f"and re-initialize the iterator.") from None
        os.close(fd)
        self._tmp = self._path + ".tmp"
        self._file = open(self._tmp, "wb")  # noqa: SIM115 - closed in finish/abandon

    def add(self, element):
        for leaf in _st.flatten(element):
            np.save(self._file, np.asarray(_st.host_array(leaf), order="C"), allow_pickle=False)

    def finish(self):
        self._file.close()
        os.replace(self._tmp, self._path)
        os.remove(self._lock)

    def abandon(self):
        self._file.close()
        for path in (self._tmp, self._lock):
            try:
                os.remove(path)
            except OSError:
                pass


class _Writer(NodeIterator):
    """Iterates the input and records each element; a complete iteration fills the cache."""

    __slots__ = ("_input", "_sink", "_partial", "__weakref__")

    def __init__(self, node, sink):
        self._input = node.inputs[0].make_iterator()
        self._sink = sink
        self._partial = False

    def __next__(self):
        if self._sink is None:
            raise StopIteration
        try:
            element = next(self._input)
        except StopIteration:
            sink, self._sink = self._sink, None
            if self._partial:
                sink.abandon()
            else:
                sink.finish()
            raise
        self._sink.add(element)
        return element

    def save(self):
        return {"input": self._input.save()}

    def restore(self, state):
        self._partial = True  # what came before the saved position is not in this sink
        self._input.restore(state["input"])

    def close(self):
        if self._sink is not None:
            sink, self._sink = self._sink, None
            sink.abandon()
            warnings.warn("The calling iterator did not fully read the dataset being cached. "
                          "In order to avoid unexpected truncation of the dataset, the partially "
                          "cached contents of the dataset will be discarded.", stacklevel=2)
        self._input.close()

    def __del__(self):
        if getattr(self, "_sink", None) is not None:
            sink, self._sink = self._sink, None
            sink.abandon()


class _FileReader(NodeIterator):
    __slots__ = ("_node", "_path", "_file", "_count", "_flat")

    def __init__(self, node, path):
        self._node, self._path = node, path
        self._file = None
        self._count = 0
        self._flat = len(_st.flatten(node.element_spec))

    def __next__(self):
        if self._file is None:
            self._file = open(self._path, "rb")  # noqa: SIM115 - closed at the end or in close
        try:
            arrays = [np.load(self._file, allow_pickle=False) for _ in range(self._flat)]
        except (EOFError, ValueError):
            self.close()
            raise StopIteration from None
        self._count += 1
        device = _st.cpu_device()
        return _st.pack(self._node.element_spec, [wrap_value(a, device) for a in arrays])

    def save(self):
        return {"count": self._count}

    def restore(self, state):
        self.close()
        self._count = 0
        for _ in range(int(state["count"])):
            next(self)

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None
