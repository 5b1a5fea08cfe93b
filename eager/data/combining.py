"""Transformations over several datasets: `zip`, `concatenate`, `choose_from_datasets` and
`sample_from_datasets`."""

from __future__ import annotations

import numpy as np

from ..base import errors as _errors
from . import element_state as _es
from . import iterator_context
from . import structure as _st
from .node import INFINITE, UNKNOWN, Node, NodeIterator

__all__ = ["Zip", "Concatenate", "DirectedInterleave"]


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
    __slots__ = ("_node", "_index", "_current", "_context")

    def __init__(self, node):
        self._node = node
        self._context = iterator_context.current()
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
                self._current = iterator_context.make_under(self._context, self._node.inputs[1])

    def save(self):
        return {"index": self._index, "input": self._current.save()}

    def restore(self, state):
        index = int(state["index"])
        if index != self._index:
            self._current.close()
            self._index = index
            self._current = iterator_context.make_under(self._context,
                                                        self._node.inputs[index])
        self._current.restore(state["input"])

    def close(self):
        self._current.close()


class DirectedInterleave(Node):
    """`choose_from_datasets` and `sample_from_datasets`: each element from the input the
    selector names (TensorFlow's `DirectedInterleaveDataset`). `selector` is a node of int64
    indices, or None for a seeded random choice by `weights` among the inputs not yet
    exhausted. With `stop_on_empty`, the first choice of an exhausted input ends the dataset;
    without, exhausted inputs are skipped."""

    tf_name = "_DirectedInterleaveDataset"

    def __init__(self, datasets, selector, weights, seed, stop_on_empty):
        datasets = list(datasets)
        if not datasets:
            raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
        for d in datasets:
            if not _st.is_dataset(d):
                raise TypeError(f"Invalid `datasets`. `datasets` must be a list of "
                                f"`tf.data.Dataset` objects, got {type(d)}.")
        spec = datasets[0].element_spec
        for d in datasets[1:]:
            try:
                spec = _st.compatible_spec(spec, d.element_spec, "sample_from_datasets")
            except TypeError:
                listing = "\n".join(f"Dataset {i} element_spec={x.element_spec!r}."
                                    for i, x in enumerate(datasets))
                raise TypeError(f"Invalid `datasets`. `datasets` must have compatible element "
                                f"specs.\n {listing}") from None
        self.inputs = tuple(d._node for d in datasets) + (() if selector is None else
                                                          (selector,))
        self.data = tuple(d._node for d in datasets)
        self.selector = selector
        self.weights = weights
        self.seed = seed
        self.stop_on_empty = stop_on_empty
        self.element_spec = spec

    def signature(self):
        return f"DirectedInterleave({', '.join(n.signature() for n in self.inputs)})"

    def node_state(self):
        return {"seed": self.seed}

    def set_node_state(self, state):
        self.seed = int(state["seed"])

    def make_iterator(self):
        return _DirectedIterator(self)


class _DirectedIterator(NodeIterator):
    __slots__ = ("_node", "_inputs", "_live", "_selector", "_rng")

    def __init__(self, node):
        self._node = node
        self._inputs = [n.make_iterator() for n in node.data]
        self._live = [True] * len(self._inputs)
        self._selector = None if node.selector is None else node.selector.make_iterator()
        self._rng = np.random.Generator(np.random.PCG64(node.seed))

    def _choose(self):
        if self._selector is not None:
            index = int(next(self._selector))
            if not 0 <= index < len(self._inputs):
                raise _errors.InvalidArgumentError(
                    None, "IteratorGetNext", f"Selector index out of range: {index} >= "
                    f"{len(self._inputs)} [Op:IteratorGetNext]")
            return index
        live = [i for i, ok in enumerate(self._live) if ok]
        if not live:
            raise StopIteration
        weights = np.array([self._node.weights[i] for i in live], np.float64)
        total = weights.sum()
        if total <= 0:
            raise StopIteration
        return live[int(self._rng.choice(len(live), p=weights / total))]

    def __next__(self):
        while True:
            index = self._choose()
            if not self._live[index]:
                if self._node.stop_on_empty:
                    raise StopIteration
                continue
            try:
                return next(self._inputs[index])
            except StopIteration:
                self._live[index] = False
                if self._node.stop_on_empty:
                    raise

    def save(self):
        return {"live": list(self._live), "rng": _es.rng_state(self._rng),
                "inputs": [it.save() for it in self._inputs],
                "selector": None if self._selector is None else self._selector.save()}

    def restore(self, state):
        self._live = [bool(x) for x in state["live"]]
        _es.set_rng_state(self._rng, state["rng"])
        for it, saved in zip(self._inputs, state["inputs"]):
            it.restore(saved)
        if self._selector is not None:
            self._selector.restore(state["selector"])

    def close(self):
        for it in self._inputs:
            it.close()
        if self._selector is not None:
            self._selector.close()
