"""A pipeline step (`Node`) and the iterator it makes (`NodeIterator`): the protocol every source
and transformation implements.

A `Dataset` is a light Python object holding one `Node`; the node holds its inputs' nodes, its
static `element_spec` and cardinality, and makes iterators. Nothing runs until an iterator is
asked for an element: an iterator is a plain Python iterator over elements (nested structures
of host `EagerTensor`s), pulling from its inputs' iterators.

Iterators are checkpointable: `save()` returns the position as a small tree of plain values
(ints, floats, bools, strings, numpy arrays, lists and dicts of them) and `restore(state)` puts
a fresh iterator of the same pipeline there (`element_state.encode` turns the tree into
bytes). An iterator whose position cannot be saved (a Python generator's) raises TensorFlow's
FailedPreconditionError from `save`.
"""

from __future__ import annotations

from ..base import errors as _errors

__all__ = ["Node", "NodeIterator", "INFINITE", "UNKNOWN", "not_checkpointable"]

#: ≈ `tf.data.INFINITE_CARDINALITY` / `tf.data.UNKNOWN_CARDINALITY`.
INFINITE = -1
UNKNOWN = -2


class Node:
    """One source or transformation. Subclasses set `tf_name` (TensorFlow's class name, shown in
    a dataset's repr), `inputs` (the nodes it reads) and `element_spec`, and implement
    `cardinality()` and `make_iterator()`."""

    tf_name = "_Dataset"
    inputs: tuple = ()
    element_spec = None
    #: The `Options` a `with_options` step sets for its whole pipeline; None for other steps.
    options = None

    def cardinality(self) -> int:
        return UNKNOWN

    def make_iterator(self) -> "NodeIterator":
        raise NotImplementedError

    def walk(self):
        """This node and every node below it, depth first, inputs in order."""
        yield self
        for node in self.inputs:
            yield from node.walk()

    def node_state(self):
        """State the node itself keeps across its iterators (a shuffle's seed and epoch count),
        saved with an iterator's position; None for none."""
        return None

    def set_node_state(self, state) -> None:
        """Puts back what `node_state` returned."""

    def signature(self) -> str:
        """The pipeline's shape, as checkpoints record it ("Range/Map/Batch"): a restore into
        another pipeline fails instead of reading a wrong position."""
        parts = [node.signature() for node in self.inputs]
        own = type(self).__name__
        if not parts:
            return own
        if len(parts) == 1:
            return f"{parts[0]}/{own}"
        return f"{own}({', '.join(parts)})"


class NodeIterator:
    """An iterator over a node's elements (see the module doc)."""

    __slots__ = ()

    def __iter__(self):
        return self

    def __next__(self):
        raise NotImplementedError

    def next_function(self):
        """The fastest callable giving the next element (an iterator backed by a generator
        hands over the generator's own `__next__`)."""
        return self.__next__

    def save(self):
        raise NotImplementedError

    def restore(self, state) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Stops any background work (threads); an iterator with none has nothing to do."""

    @property
    def pipeline_source(self):
        """The iterator this one reads (the background module follows these links from a
        producer's source to a threaded iterator below it, to stop it along); None for a
        source."""
        return getattr(self, "_input", None)


def not_checkpointable(what: str):
    """TensorFlow's error for saving an iterator over state it cannot serialize."""
    return _errors.FailedPreconditionError(
        None, "SerializeIterator", f"{what} is stateful. [Op:SerializeIterator]")
