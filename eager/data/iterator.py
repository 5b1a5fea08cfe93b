"""Iterators over datasets: `OwnedIterator` (what `iter(dataset)` returns eagerly) and
`NumpyIterator` (`as_numpy_iterator`).

`OwnedIterator.__next__` is a hot path (one call per batch of a training loop) and written for
speed: it calls the top node iterator's bound `__next__`, and looks at the thread's interpreter
once, because `next(iterator)` inside an `eager.function` must become a graph op that reads the
iterator when the function runs (TensorFlow's `IteratorGetNext` on a captured iterator), never
an element frozen into the trace.

Checkpoints. An `OwnedIterator` is a trackable saved as one value: in the object graph a
variable-like `IteratorState` stands in its place (`_checkpoint_variable`), so its key is
TensorFlow's `<path>/.ATTRIBUTES/ITERATOR_STATE`. A checkpoint reads its value when it saves
(the iterator's position, serialized as a uint8 array by `element_state.encode`: TensorFlow
saves `ITERATOR_STATE` the same way, as one serialized tensor) and assigns it when it restores,
which puts the iterator at that position. The state records the pipeline's signature, and a
restore into another pipeline is TensorFlow's NotFoundError, changing nothing.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..base import dtypes as _dt
from ..base import errors as _errors
from ..base.tensor_shape import TensorShape
from ..core import context as _context
from ..state.trackable import Trackable
from ..tensor import wrap_value
from ..variables import Variable
from . import element_state as _es
from . import in_function, iterator_context
from . import structure as _st

__all__ = ["OwnedIterator", "NumpyIterator", "IteratorState"]

_per_thread = _context.per_thread


class OwnedIterator(Trackable):
    """≈ TensorFlow's `OwnedIterator`: `next()`, `get_next()`, `get_next_as_optional()`,
    `element_spec`, checkpointable (see the module doc). Closing it (`close()`, garbage
    collection, interpreter exit through the background module) stops any background work."""

    __slots__ = ("_node", "_iterator", "_next", "_done", "_state", "_handle", "__weakref__")

    def __init__(self, node):
        self._node = node
        self._iterator = iterator_context.make_under(iterator_context.for_pipeline(node), node)
        self._next = self._iterator.next_function()
        self._done = False
        self._state = None
        self._handle = None

    @property
    def element_spec(self):
        return self._node.element_spec

    def __iter__(self):
        return self

    def __next__(self):
        if _per_thread.state.interpreter is not None:  # a trace or an async executor
            graph_next = in_function.traced_next(self)
            if graph_next is not None:
                return graph_next
        try:
            return self._next()
        except StopIteration:
            self._finish()
            raise

    def __eager_for_loop__(self, loop):
        """AutoGraph's hook for `for element in iterator:` (the elements left)."""
        in_function.iterator_for_loop(self, loop)

    def next_element(self):
        """The next element read eagerly (what the graph op's kernel calls); raises
        StopIteration at the end."""
        try:
            return self._next()
        except StopIteration:
            self._finish()
            raise

    def graph_handle(self):
        """A variant tensor standing for this iterator in traced functions (made once; it holds
        the iterator weakly, so a function that captured it does not keep it alive)."""
        if self._handle is None:
            ref = weakref.ref(self)

            def next_element():
                owner = ref()
                if owner is None:
                    raise _errors.FailedPreconditionError(
                        None, "IteratorGetNext", "The iterator this function reads was deleted. "
                        "[Op:IteratorGetNext]")
                return owner.next_element()
            self._handle = in_function.iterator_handle(next_element)
        return self._handle

    def _finish(self):
        self._done = True
        self._next = _exhausted
        self._iterator.close()

    def get_next(self):
        """The next element; TensorFlow's OutOfRangeError at the end."""
        try:
            return next(self)
        except StopIteration:
            raise _errors.OutOfRangeError(None, "IteratorGetNext",
                                          "End of sequence [Op:IteratorGetNext]") from None

    def get_next_as_optional(self):
        try:
            return Optional.from_value(next(self))
        except StopIteration:
            return Optional.empty(self.element_spec)

    def close(self):
        self._iterator.close()

    def __del__(self):
        iterator = getattr(self, "_iterator", None)
        if iterator is not None:
            try:
                iterator.close()
            except Exception:  # noqa: BLE001 - nothing can be raised from a finalizer
                pass

    # -- checkpoints -----------------------------------------------------------------------------
    def _trackable_children(self):
        return {}

    def _checkpoint_variable(self):
        """What a checkpoint saves and restores in this iterator's place (see the module
        doc)."""
        if self._state is None:
            self._state = IteratorState(self)
        return self._state

    def save_state(self) -> np.ndarray:
        """The position, as bytes (see the module doc)."""
        state = None if self._done else self._iterator.save()
        nodes = [n.node_state() for n in self._node.walk()]
        return _es.encode({"signature": self._node.signature(), "done": self._done,
                           "state": state, "nodes": nodes})

    def restore_state(self, data) -> None:
        """Puts the iterator at the position `save_state` returned; on failure it stays where it
        was."""
        saved = _es.decode(data)
        signature = self._node.signature()
        if saved.get("signature") != signature:
            raise _errors.NotFoundError(
                None, "DeserializeIterator", f"Failed to restore dataset iterator from "
                f"checkpoint: {signature}. Make sure the dataset definition has not changed "
                f"between the process that saved the checkpoint and the process that is "
                f"restoring it. [Op:DeserializeIterator]")
        nodes = list(self._node.walk())
        before = [n.node_state() for n in nodes]
        for node, state in zip(nodes, saved["nodes"]):
            if state is not None:
                node.set_node_state(state)
        try:
            fresh = iterator_context.make_under(iterator_context.for_pipeline(self._node),
                                                self._node)
            if not saved["done"]:
                fresh.restore(saved["state"])
        except BaseException:
            for node, state in zip(nodes, before):
                if state is not None:
                    node.set_node_state(state)
            raise
        if saved["done"]:
            old = self._iterator
            self._iterator = fresh
            self._finish()
        else:
            old = self._iterator
            self._iterator, self._next, self._done = fresh, fresh.next_function(), False
        old.close()


def _exhausted():
    raise StopIteration


class IteratorState(Variable):
    """What a checkpoint sees of an iterator: a uint8 vector variable whose value is the
    serialized position (read when saved) and whose assignment restores it."""

    __slots__ = ("_owner", "__weakref__")

    def __init__(self, owner):
        self._owner = weakref.ref(owner)  # no cycle: an abandoned iterator closes at once

    name = "iterator_state:0"
    checkpoint_attribute = "ITERATOR_STATE"
    dtype = _dt.uint8
    shape = TensorShape([None])
    trainable = False

    def value(self):
        return wrap_value(self._owner().save_state(), _st.cpu_device())

    read_value = value

    def numpy(self):
        return self._owner().save_state()

    def assign(self, value, use_locking=None, name=None, read_value=True):
        self._owner().restore_state(np.asarray(value.numpy() if hasattr(value, "numpy")
                                             else value, np.uint8))

    def __repr__(self):
        return f"<IteratorState of {self._owner()!r}>"


class NumpyIterator:
    """`as_numpy_iterator()`: the elements with every tensor as its numpy value (a scalar as a
    numpy scalar, as TensorFlow's)."""

    __slots__ = ("_iterator",)

    def __init__(self, node):
        self._iterator = OwnedIterator(node)

    def __iter__(self):
        return self

    def __next__(self):
        return _st.map_structure(lambda t: t.numpy(), next(self._iterator))


class Optional:
    """≈ `tf.experimental.Optional` (eager): a value or nothing, from `get_next_as_optional`."""

    __slots__ = ("_value", "_spec")

    def __init__(self, value, spec):
        self._value, self._spec = value, spec

    @staticmethod
    def from_value(value):
        return Optional(value, _st.spec_of(value))

    @staticmethod
    def empty(element_spec):
        return Optional(None, element_spec)

    @property
    def element_spec(self):
        return self._spec

    def has_value(self, name=None):
        return wrap_value(np.array(self._value is not None), _st.cpu_device())

    def get_value(self, name=None):
        if self._value is None:
            raise _errors.InvalidArgumentError(None, "OptionalGetValue", "The optional does not "
                                               "have a value [Op:OptionalGetValue]")
        return self._value
