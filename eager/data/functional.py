"""Transformations that run a user function per element: `map`, `flat_map`, `interleave`, `scan`.

`map` and `scan` trace their function once (`traced.StructuredFunction`). `flat_map` and
`interleave` call theirs per element, eagerly, because it returns a dataset and a dataset is a
Python object here, not a graph value (TensorFlow traces it into the graph); the function sees
eager tensors, and its Python side effects run per element.

`map(num_parallel_calls=n)` hands the calls to `background.parallel_map` (bounded, ordered when
`deterministic` is not False); saving its iterator first drains the calls under way.
"""

from __future__ import annotations

import os
import warnings

from ..autograph.api import converting_call
from ..base import errors as _errors
from . import structure as _st
from . import element_state as _es
from . import iterator_context
from .background import available_cpus, parallel_map
from .node import Node, NodeIterator
from .traced import StructuredFunction

__all__ = ["Map", "FlatMap", "Interleave", "Scan", "ParallelMapIterator", "check_parallel_calls"]


def check_parallel_calls(value, op):
    if value is None:
        return None
    value = int(value)
    if value <= 0 and value != -1:
        raise _errors.InvalidArgumentError(
            None, op, f"num_parallel_calls must be greater than zero. [Op:{op}]")
    return value


class Map(Node):
    tf_name = "_MapDataset"

    def __init__(self, node, func, num_parallel_calls=None, deterministic=None):
        self.inputs = (node,)
        self.function = StructuredFunction(func, node.element_spec, "map")
        self.element_spec = self.function.output_spec
        if deterministic is not None and num_parallel_calls is None:
            warnings.warn("The `deterministic` argument has no effect unless the "
                          "`num_parallel_calls` argument is specified.", stacklevel=3)
        self.num_parallel_calls = check_parallel_calls(num_parallel_calls,
                                                       "ParallelMapDatasetV2")
        self.deterministic = deterministic  # None: the pipeline's options decide
        if self.num_parallel_calls is not None:
            self.tf_name = "_ParallelMapDataset"

    def cardinality(self):
        return self.inputs[0].cardinality()

    def make_iterator(self):
        if self.num_parallel_calls is None:
            return _MapIterator(self)
        return ParallelMapIterator(self.inputs[0].make_iterator(), self.function,
                                   self.num_parallel_calls, self.deterministic,
                                   self.element_spec)


class _MapIterator(NodeIterator):
    __slots__ = ("_input", "_fn")

    def __init__(self, node):
        self._input = node.inputs[0].make_iterator()
        self._fn = node.function

    def __next__(self):
        return self._fn(next(self._input))

    def save(self):
        return {"input": self._input.save()}

    def restore(self, state):
        self._input.restore(state["input"])

    def close(self):
        self._input.close()


class ParallelMapIterator(NodeIterator):
    """`fn` over the elements of the iterator `source`, the calls run in
    `background.parallel_map`; `_ready` holds outputs a save drained, in order. The pipeline's
    options (`iterator_context`) settle the order when `deterministic` is None, and bound the
    workers and the calls running at once."""

    __slots__ = ("_fn", "_calls", "_deterministic", "_spec", "_input", "_mapper", "_ready")

    def __init__(self, source, fn, num_parallel_calls, deterministic, output_spec):
        context = iterator_context.current()
        self._input = source
        self._fn = context.gated(fn)
        self._calls = context.parallel_calls(num_parallel_calls, available_cpus)
        self._deterministic = context.deterministic_for(deterministic)
        self._spec = output_spec
        self._mapper = None
        self._ready = []

    def __next__(self):
        if self._ready:
            return _delivered(self._ready.pop(0))
        if self._mapper is None:
            source = self._input
            self._mapper = parallel_map(lambda: source, self._fn, self._calls,
                                        self._deterministic)
        return next(self._mapper)

    @property
    def pipeline_source(self):
        return self._mapper if self._mapper is not None else self._input

    def _drain(self):
        if self._mapper is not None:
            self._ready.extend(self._mapper.close(drain=True))
            self._mapper = None

    def save(self):
        self._drain()
        spec = self._spec
        return {"ready": [_saved_item(item, spec) for item in self._ready],
                "input": self._input.save()}

    def restore(self, state):
        if self._mapper is not None:
            self._mapper.close()
            self._mapper = None
        spec = self._spec
        self._ready = [_restored_item(item, spec) for item in state["ready"]]
        self._input.restore(state["input"])

    def close(self):
        if self._mapper is not None:
            self._mapper.close()
            self._mapper = None
        self._input.close()


def _delivered(item):
    if isinstance(item, BaseException):
        raise item
    return item


def _saved_item(item, spec):
    """A drained output for a checkpoint: its arrays, or an error as its class and text."""
    if isinstance(item, BaseException):
        code = getattr(item, "error_code", _errors.UNKNOWN)
        return {"error_code": int(code), "message": str(item)}
    return {"arrays": _es.element_arrays(item, spec)}


def _restored_item(saved, spec):
    if "arrays" in saved:
        return _es.element_from_arrays(saved["arrays"], spec)
    cls = _errors.exception_type_from_error_code(int(saved["error_code"]))
    return cls(None, None, saved["message"])


# -- flat_map, interleave --------------------------------------------------------------------------
def _dataset_function(func, what):
    """`func` called eagerly on an element (unpacked as `map` does), checked to return a
    dataset; returns the dataset's node."""
    if not callable(func):
        raise TypeError(f"`{what}` must be callable, got {func!r}.")

    def call(element):
        result = func(*element) if element.__class__ is tuple else func(element)
        if not _st.is_dataset(result):
            raise TypeError(f"The function passed to `{what}` must return a `tf.data.Dataset` "
                            f"object, got {type(result).__name__}.")
        return result._node
    return call


class FlatMap(Node):
    tf_name = "_FlatMapDataset"

    def __init__(self, node, func, element_spec):
        self.inputs = (node,)
        self.function = _dataset_function(func, "flat_map")
        self.element_spec = element_spec

    def make_iterator(self):
        return _InterleaveIterator(self, 1, 1)


class Interleave(Node):
    tf_name = "_InterleaveDataset"

    def __init__(self, node, func, element_spec, cycle_length, block_length,
                 num_parallel_calls=None, deterministic=None):
        self.inputs = (node,)
        self.function = _dataset_function(func, "interleave")
        self.element_spec = element_spec
        self.cycle_length = -1 if cycle_length is None else int(cycle_length)
        self.block_length = 1 if block_length is None else int(block_length)
        if self.block_length <= 0:
            raise _errors.InvalidArgumentError(None, "InterleaveDataset", "block_length must be "
                                               "greater than zero. [Op:InterleaveDataset]")
        if self.cycle_length == 0 or self.cycle_length < -1:
            raise _errors.InvalidArgumentError(None, "InterleaveDataset", "cycle_length must be "
                                               "greater than zero. [Op:InterleaveDataset]")
        self.num_parallel_calls = check_parallel_calls(num_parallel_calls,
                                                       "ParallelInterleaveDatasetV4")
        if self.num_parallel_calls is not None:
            self.tf_name = "_ParallelInterleaveDataset"

    def make_iterator(self):
        cycle = self.cycle_length
        if cycle == -1:  # AUTOTUNE: TensorFlow uses the number of CPU cores
            cycle = os.cpu_count() or 1
        return _InterleaveIterator(self, cycle, self.block_length)


class _InterleaveIterator(NodeIterator):
    """TensorFlow's interleave order: `cycle` slots visited in turn, `block` elements taken from
    each; an empty slot is filled with the next input element's dataset when its turn comes,
    and a slot whose dataset ends passes the turn on."""

    __slots__ = ("_node", "_input", "_block", "_slots", "_turn", "_taken", "_input_done")

    def __init__(self, node, cycle, block):
        self._node = node
        self._input = node.inputs[0].make_iterator()
        self._block = block
        self._slots = [None] * cycle  # [inner iterator, the input element it came from]
        self._turn = 0
        self._taken = 0
        self._input_done = False

    def _open(self):
        try:
            element = next(self._input)
        except StopIteration:
            self._input_done = True
            return None
        return [self._node.function(element).make_iterator(), element]

    def __next__(self):
        slots = self._slots
        while True:
            slot = slots[self._turn]
            if slot is None:
                if self._input_done:
                    if not any(slots):
                        raise StopIteration
                    self._advance()
                    continue
                slot = slots[self._turn] = self._open()
                if slot is None:
                    continue
            try:
                element = next(slot[0])
            except StopIteration:
                slots[self._turn] = None
                self._advance()
                continue
            self._taken += 1
            if self._taken >= self._block:
                self._advance()
            return element

    def _advance(self):
        self._taken = 0
        self._turn = (self._turn + 1) % len(self._slots)

    def save(self):
        spec = self._node.inputs[0].element_spec
        return {"turn": self._turn, "taken": self._taken, "input_done": self._input_done,
                "input": self._input.save(),
                "slots": [None if s is None else {"element": _es.element_arrays(s[1], spec),
                                                  "state": s[0].save()}
                          for s in self._slots]}

    def restore(self, state):
        """Reopens each open inner dataset from its saved input element and puts it at its
        saved position."""
        spec = self._node.inputs[0].element_spec
        slots = []
        for saved in state["slots"]:
            if saved is None:
                slots.append(None)
                continue
            element = _es.element_from_arrays(saved["element"], spec)
            inner = self._node.function(element).make_iterator()
            inner.restore(saved["state"])
            slots.append([inner, element])
        self._input.restore(state["input"])
        self._turn, self._taken = int(state["turn"]), int(state["taken"])
        self._input_done = bool(state["input_done"])
        self._slots = slots

    def close(self):
        for slot in self._slots:
            if slot is not None:
                slot[0].close()
        self._input.close()


# -- scan ------------------------------------------------------------------------------------------
class Scan(Node):
    """`scan(initial_state, scan_func)`: `scan_func(state, element) -> (new_state, output)`,
    traced once with the state's spec (the state must keep its structure and dtypes)."""

    tf_name = "_ScanDataset"

    def __init__(self, node, initial_state, func):
        self.inputs = (node,)
        self.initial = _st.normalize(initial_state, "initial_state")
        state_spec = _st.spec_of(self.initial)
        input_spec = (state_spec, node.element_spec)
        converted = converting_call(func)
        self.function = StructuredFunction(lambda s, e: _call_scan(converted, s, e), input_spec,
                                           "scan", autograph=False, user_function=func)
        out = self.function.output_spec
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError("The scan function must return a pair comprising the new state and "
                            "the output value.")
        new_state = out[0]
        _st.assert_same_structure(state_spec, new_state, "scan")
        for a, b in zip(_st.flatten(state_spec), _st.flatten(new_state)):
            if a.dtype != b.dtype:
                raise TypeError(f"The element types for the new state must match the initial "
                                f"state. Expected {_st.describe_types(state_spec)}; got "
                                f"{_st.describe_types(new_state)}.")
        self.state_spec = state_spec
        self.element_spec = out[1]

    def cardinality(self):
        return self.inputs[0].cardinality()

    def make_iterator(self):
        return _ScanIterator(self)


def _call_scan(func, state, element):
    return func(state, *element) if element.__class__ is tuple else func(state, element)


class _ScanIterator(NodeIterator):
    __slots__ = ("_node", "_input", "_state")

    def __init__(self, node):
        self._node = node
        self._input = node.inputs[0].make_iterator()
        self._state = node.initial

    def __next__(self):
        element = next(self._input)
        self._state, output = self._node.function((self._state, element))
        return output

    def save(self):
        return {"state": _es.element_arrays(self._state, self._node.state_spec),
                "input": self._input.save()}

    def restore(self, state):
        self._state = _es.element_from_arrays(state["state"], self._node.state_spec)
        self._input.restore(state["input"])

    def close(self):
        self._input.close()

