"""Transformations that gather elements into datasets: `window`, `group_by_window` and
`bucket_by_sequence_length` (built on it, as TensorFlow builds it).

A window is a structure of datasets, one per component, each over that component's values in
the window (TensorFlow's element type `DatasetSpec`). `group_by_window` keys each element with
a traced function, gathers elements per key, and hands each full group (and, at the end, each
partial one, in key order) to `reduce_func` as a dataset; the datasets it returns are
concatenated.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base import errors as _errors
from ..tensor import wrap_value
from . import structure as _st
from .node import Node, NodeIterator, not_checkpointable
from .traced import StructuredFunction

__all__ = ["Window", "GroupByWindow", "ElementList"]


class ElementList(Node):
    """A dataset over a list of elements already made (a group of `group_by_window`)."""

    tf_name = "_ElementListDataset"

    def __init__(self, elements, element_spec):
        self.elements = elements
        self.element_spec = element_spec

    def cardinality(self):
        return len(self.elements)

    def make_iterator(self):
        return _ListIterator(self.elements)


class _ListIterator(NodeIterator):
    __slots__ = ("_elements", "_index")

    def __init__(self, elements):
        self._elements, self._index = elements, 0

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


class Window(Node):
    tf_name = "_WindowDataset"

    def __init__(self, node, size, shift, stride, drop_remainder):
        self.inputs = (node,)
        self.size = _positive(size, "size")
        self.shift = self.size if shift is None else _positive(shift, "shift")
        self.stride = _positive(stride, "stride")
        self.drop_remainder = bool(drop_remainder)
        self.element_spec = _st.map_structure(lambda s: _st.DatasetSpec(s), node.element_spec)

    def cardinality(self):
        n = self.inputs[0].cardinality()
        if n < 0:
            return n
        if self.drop_remainder:
            span = (self.size - 1) * self.stride + 1
            return max(0, (n - span) // self.shift + 1)
        return -(-n // self.shift)

    def make_iterator(self):
        return _WindowIterator(self)


def _positive(value, name):
    value = int(value)
    if value <= 0:
        raise _errors.InvalidArgumentError(None, "WindowDataset", f"Window {name} must be "
                                           f"greater than zero, but got {value}. "
                                           f"[Op:WindowDataset]")
    return value


class _WindowIterator(NodeIterator):
    __slots__ = ("_node", "_input", "_buffer", "_exhausted", "_skip")

    def __init__(self, node):
        self._node = node
        self._input = node.inputs[0].make_iterator()
        self._buffer = []
        self._exhausted = False
        self._skip = 0  # input elements to drop before the next window (shift > size)

    def _fill(self, count):
        while not self._exhausted and len(self._buffer) < count:
            try:
                element = next(self._input)
            except StopIteration:
                self._exhausted = True
                break
            if self._skip:
                self._skip -= 1
                continue
            self._buffer.append(element)

    def __next__(self):
        node = self._node
        span = (node.size - 1) * node.stride + 1
        while self._skip and not self._exhausted:
            self._fill(0)
            try:
                next(self._input)
                self._skip -= 1
            except StopIteration:
                self._exhausted = True
        self._fill(span)
        buffer = self._buffer
        if not buffer or (node.drop_remainder and len(buffer) < span):
            raise StopIteration
        window = buffer[0:span:node.stride]
        dropped = min(node.shift, len(buffer))
        self._skip = node.shift - dropped
        del buffer[:dropped]
        return _window_datasets(window, node.inputs[0].element_spec)

    def save(self):
        raise not_checkpointable("A window dataset")

    def restore(self, state):
        raise not_checkpointable("A window dataset")

    def close(self):
        self._input.close()


def _window_datasets(elements, spec):
    """One dataset per component over its values in `elements`."""
    columns = list(zip(*[_st.flatten(e) for e in elements]))
    flat = [_st.wrap_node(_Column(list(column), s))
            for column, s in zip(columns, _st.flatten(spec))]
    return _st.pack(spec, flat)


class _Column(ElementList):
    tf_name = "_VariantDataset"


# -- group_by_window -------------------------------------------------------------------------------
class GroupByWindow(Node):
    tf_name = "_GroupByWindowDataset"

    def __init__(self, node, key_func, reduce_func, window_size_func, element_spec):
        self.inputs = (node,)
        self.key = StructuredFunction(key_func, node.element_spec, "key_func")
        out = self.key.output_spec
        if not (hasattr(out, "dtype") and out.dtype == _dt.int64 and out.shape.rank == 0):
            raise ValueError(f"Invalid `key_func`. `key_func` must return a single tf.int64 "
                             f"scalar tensor but its return type is {out!r}.")
        self.reduce_func = reduce_func
        self.window_size_func = window_size_func
        self.element_spec = element_spec

    def make_iterator(self):
        return _GroupIterator(self)


class _GroupIterator(NodeIterator):
    __slots__ = ("_node", "_input", "_groups", "_output", "_flushing")

    def __init__(self, node):
        self._node = node
        self._input = node.inputs[0].make_iterator()
        self._groups = {}
        self._output = None  # the iterator of the current reduced group
        self._flushing = None  # keys left to flush once the input is exhausted

    def _reduce(self, key, elements):
        node = self._node
        group = _st.wrap_node(ElementList(elements, node.inputs[0].element_spec))
        key_tensor = wrap_value(np.array(key, np.int64), _st.cpu_device())
        result = node.reduce_func(key_tensor, group)
        if not _st.is_dataset(result):
            raise TypeError("`reduce_func` must return a `Dataset` object.")
        return result._node.make_iterator()

    def __next__(self):
        node = self._node
        while True:
            if self._output is not None:
                try:
                    return next(self._output)
                except StopIteration:
                    self._output = None
            if self._flushing is None:
                try:
                    element = next(self._input)
                except StopIteration:
                    self._flushing = sorted(self._groups)
                    continue
                key = int(node.key(element))
                group = self._groups.setdefault(key, [])
                group.append(element)
                size = int(node.window_size_func(wrap_value(np.array(key, np.int64),
                                                            _st.cpu_device())))
                if size <= 0:
                    raise _errors.InvalidArgumentError(
                        None, "IteratorGetNext", f"Window size must be greater than zero, but "
                        f"got {size}. [Op:IteratorGetNext]")
                if len(group) >= size:
                    del self._groups[key]
                    self._output = self._reduce(key, group)
            elif self._flushing:
                key = self._flushing.pop(0)
                self._output = self._reduce(key, self._groups.pop(key))
            else:
                raise StopIteration

    def save(self):
        raise not_checkpointable("A group_by_window dataset")

    def restore(self, state):
        raise not_checkpointable("A group_by_window dataset")

    def close(self):
        self._input.close()
