"""Transformations over several datasets: `zip` and `concatenate`."""

from __future__ import annotations

from . import structure as _st
from .node import INFINITE, UNKNOWN, Node, NodeIterator

__all__ = ["Zip", "Concatenate"]


class Zip(Node):
    """`Dataset.zip(datasets)`: `datasets` a structure of datasets; each element is that
    structure of their elements, until the shortest ends."""

    tf_name = "_ZipDataset"

    def __init__(self, datasets):
        flat = _st.flatten(datasets)
        for d in flat:
            if not _st.is_dataset(d):
                raise TypeError(f"Invalid input to `zip`. Inputs are expected to be (nested) "
                                f"structures of `tf.data.Dataset` objects but encountered "
                                f"object of type {type(d)}.")
        self.structure = datasets
        self.inputs = tuple(d._node for d in flat)
        self.element_spec = _st.pack(datasets, [n.element_spec for n in self.inputs])

    def signature(self):
        return f"Zip({', '.join(n.signature() for n in self.inputs)})"

    def cardinality(self):
        counts = [n.cardinality() for n in self.inputs]
        known = [c for c in counts if c >= 0]
        if known:
            shortest = min(known)
            if all(c >= 0 or c == INFINITE for c in counts):
                return shortest
            return UNKNOWN if shortest > 0 else 0
        if all(c == INFINITE for c in counts):
            return INFINITE
        return UNKNOWN

    def make_iterator(self):
        return _ZipIterator(self)


class _ZipIterator(NodeIterator):
    __slots__ = ("_inputs", "_structure")

    def __init__(self, node):
        self._inputs = [n.make_iterator() for n in node.inputs]
        self._structure = node.structure

    def __next__(self):
        return _st.pack(self._structure, [next(it) for it in self._inputs])

    def save(self):
        return {"inputs": [it.save() for it in self._inputs]}

    def restore(self, state):
        for it, saved in zip(self._inputs, state["inputs"]):
            it.restore(saved)

    def close(self):
        for it in self._inputs:
            it.close()


class Concatenate(Node):
    tf_name = "_ConcatenateDataset"

    def __init__(self, first, second):
        self.inputs = (first, second)
        self.element_spec = _st.compatible_spec(first.element_spec, second.element_spec,
                                                "concatenate")

    def signature(self):
        return f"Concatenate({self.inputs[0].signature()}, {self.inputs[1].signature()})"

    def cardinality(self):
        a, b = (n.cardinality() for n in self.inputs)
        if a == INFINITE or b == INFINITE:
            return INFINITE
        if a < 0 or b < 0:
            return UNKNOWN
        return a + b

    def make_iterator(self):
        return _ConcatenateIterator(self)


class _ConcatenateIterator(NodeIterator):
    __slots__ = ("_node", "_index", "_current")

    def __init__(self, node):
        self._node = node
        self._index = 0
        self._current = node.inputs[0].make_iterator()

    def __next__(self):
        while True:
            try:
                return next(self._current)
            except StopIteration:
                if self._index == 1:
                    raise
                self._current.close()
                self._index = 1
                self._current = self._node.inputs[1].make_iterator()

    def save(self):
        return {"index": self._index, "input": self._current.save()}

    def restore(self, state):
        index = int(state["index"])
        if index != self._index:
            self._current.close()
            self._index = index
            self._current = self._node.inputs[index].make_iterator()
        self._current.restore(state["input"])

    def close(self):
        self._current.close()
