"""Transformations that keep some elements by looking at them: `filter`, `take_while`,
`unique`. Predicates are traced once (`traced.StructuredFunction`) and must return a scalar
bool tensor, as in TensorFlow."""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base import string_arrays as _string_arrays
from . import structure as _st
from .node import UNKNOWN, Node, NodeIterator
from .traced import StructuredFunction

__all__ = ["Filter", "TakeWhile", "Unique"]


def _predicate(func, spec, what):
    function = StructuredFunction(func, spec, what)
    out = function.output_spec
    if not (hasattr(out, "dtype") and out.dtype == _dt.bool and out.shape.rank == 0):
        raise ValueError(f"Invalid `predicate`. `predicate` must return a `tf.bool` scalar "
                         f"tensor, but its return type is {out!r}.")
    return function


class Filter(Node):
    tf_name = "_FilterDataset"

    def __init__(self, node, predicate):
        self.inputs = (node,)
        self.predicate = _predicate(predicate, node.element_spec, "filter")
        self.element_spec = node.element_spec

    def cardinality(self):
        return UNKNOWN if self.inputs[0].cardinality() != 0 else 0

    def make_iterator(self):
        return _FilterIterator(self)


class _FilterIterator(NodeIterator):
    __slots__ = ("_input", "_predicate")

    def __init__(self, node):
        self._input = node.inputs[0].make_iterator()
        self._predicate = node.predicate

    def __next__(self):
        while True:
            element = next(self._input)
            if self._predicate(element):
                return element

    def save(self):
        return {"input": self._input.save()}

    def restore(self, state):
        self._input.restore(state["input"])

    def close(self):
        self._input.close()


class TakeWhile(Node):
    tf_name = "_TakeWhileDataset"

    def __init__(self, node, predicate):
        self.inputs = (node,)
        self.predicate = _predicate(predicate, node.element_spec, "take_while")
        self.element_spec = node.element_spec

    def cardinality(self):
        return UNKNOWN if self.inputs[0].cardinality() != 0 else 0

    def make_iterator(self):
        return _TakeWhileIterator(self)


class _TakeWhileIterator(NodeIterator):
    __slots__ = ("_input", "_predicate", "_done")

    def __init__(self, node):
        self._input = node.inputs[0].make_iterator()
        self._predicate = node.predicate
        self._done = False

    def __next__(self):
        if self._done:
            raise StopIteration
        element = next(self._input)
        if not self._predicate(element):
            self._done = True
            raise StopIteration
        return element

    def save(self):
        return {"done": self._done, "input": self._input.save()}

    def restore(self, state):
        self._done = bool(state["done"])
        self._input.restore(state["input"])

    def close(self):
        self._input.close()


class Unique(Node):
    """`unique()`: each distinct element once, in first-seen order (int32, int64 scalars or
    vectors, as TensorFlow allows integer and string types only; eager has no strings)."""

    tf_name = "_UniqueDataset"

    def __init__(self, node):
        spec = node.element_spec
        if not hasattr(spec, "dtype"):
            raise TypeError("`tf.data.Dataset.unique` does not support type "
                            f"{_st.describe_types(spec)} -- only `tf.int32`, `tf.int64`, and "
                            "`tf.string` are supported.")
        if spec.dtype not in (_dt.int32, _dt.int64, _dt.string):
            raise TypeError(f"`tf.data.Dataset.unique` does not support type <dtype: "
                            f"'{spec.dtype.name}'> -- only `tf.int32`, `tf.int64`, and "
                            "`tf.string` are supported.")
        self.inputs = (node,)
        self.element_spec = spec

    def cardinality(self):
        return UNKNOWN if self.inputs[0].cardinality() != 0 else 0

    def make_iterator(self):
        return _UniqueIterator(self)


class _UniqueIterator(NodeIterator):
    __slots__ = ("_input", "_seen")

    def __init__(self, node):
        self._input = node.inputs[0].make_iterator()
        self._seen = set()

    def __next__(self):
        while True:
            element = next(self._input)
            array = _st.host_array(element)
            key = (array.shape, _string_arrays.pack(array).tobytes() if array.dtype.hasobject
                   else array.tobytes())
            if key not in self._seen:
                self._seen.add(key)
                return element

    def save(self):
        keys = sorted(self._seen)
        return {"shapes": [list(shape) for shape, _ in keys],
                "values": [np.frombuffer(data, np.uint8).copy() for _, data in keys],
                "input": self._input.save()}

    def restore(self, state):
        self._seen = {(tuple(int(d) for d in shape), np.asarray(data, np.uint8).tobytes())
                      for shape, data in zip(state["shapes"], state["values"])}
        self._input.restore(state["input"])

    def close(self):
        self._input.close()
