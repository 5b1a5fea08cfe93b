"""Datasets inside `eager.function`: iteration as graph ops that read the data when the function
runs, so the function traces once whatever the data.

Three host ops (stateful: never folded, pruned or merged; they run in program order):

* `AnonymousIteratorV3` (attribute: the dataset's node) makes a fresh iterator each time the
  function runs and outputs it as a variant scalar (TensorFlow's iterator resource);
* `IteratorGetNext` (input: that variant) outputs the next element's components; at the end it
  fails with TensorFlow's OutOfRangeError "End of sequence";
* `IteratorGetNextAsOptional` outputs whether there was an element, then the components (zeros
  when there was none; TensorFlow's `Optional`, flattened).

`for element in dataset:` in a converted function reaches `dataset_for_loop` through
AutoGraph's `__eager_for_loop__` hook. It is TensorFlow's construction: an iterator op before
the loop, one `IteratorGetNextAsOptional`, then one `while_loop` whose condition is "there was an
element" (and the converter's `break`/`return` test) and whose body runs the user's body on the
element and fetches the next one. The element travels as loop variables typed by the
`element_spec`, so the body is traced once. Eagerly the hook is Python's loop.

`iter(dataset)` while tracing is a `GraphIterator` over a fresh iterator op; `next` on an eager
`OwnedIterator` while tracing reads that iterator (captured as a variant) through
`IteratorGetNext` each time the function runs, as TensorFlow's captured iterator resources do.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..autograph.operators.staging import staged_while
from ..base import dtypes as _dt
from ..base import errors as _errors
from ..control_flow.api import cond
from ..core.dispatch import execute
from ..core.registry import register_op
from ..core.specs import TensorSpec
from ..graph.tracing import get_default_graph
from ..tensor import wrap_value
from . import iterator_context, symbolic
from . import structure as _st

__all__ = ["IteratorHandle", "GraphIterator", "dataset_for_loop", "iterator_for_loop",
           "traced_next", "iterator_handle", "graph_reduce"]

_CPU = frozenset({"CPU"})


class IteratorHandle:
    """The variant value of an iterator: `next_element()` gives the next element or raises
    StopIteration."""

    __slots__ = ("next_element",)

    # What dispatch and EagerTensor read from a value: a scalar of dtype variant.
    eager_dtype = dtype = _dt.variant
    shape = ()
    ndim = 0

    def __init__(self, next_element):
        self.next_element = next_element


def iterator_handle(next_element):
    """A variant tensor holding an `IteratorHandle` (what a trace captures for an eager
    iterator)."""
    return wrap_value(IteratorHandle(next_element), _st.cpu_device(), _dt.variant)


# -- the ops ---------------------------------------------------------------------------------------
def _make_kernel(xp, *captured, dataset, bound):
    """A fresh iterator; `captured` are the arrays of the pipeline's symbolic sources' tensors
    in this call, `bound` says how many belong to each source (see `symbolic`)."""
    bindings, i = {}, 0
    for source, count in bound:
        bindings[source] = [np.asarray(a) for a in captured[i:i + count]]
        i += count
    context = iterator_context.for_pipeline(dataset, bindings)
    return IteratorHandle(iterator_context.make_under(context, dataset).__next__)


def _make_infer(*captured, dataset, bound):
    return (TensorSpec([], _dt.variant),)


def _flat_specs(spec):
    flat = _st.flatten_components(spec)  # a ragged or sparse leaf travels as its components
    for s in flat:
        if isinstance(s, _st.DatasetSpec):
            raise TypeError("A dataset whose elements are datasets (window) cannot be iterated "
                            "inside eager.function; flat_map over it first.")
    return tuple(TensorSpec(s.shape, s.dtype) for s in flat)


def _element_arrays(element, specs):
    arrays = []
    for t, s in zip(_st.flatten_components(element), specs):
        array = _st.host_array(t)
        if not s.shape.is_compatible_with(array.shape):
            raise _errors.InvalidArgumentError(
                None, "IteratorGetNext", f"Incompatible shapes: the element has shape "
                f"{array.shape}, the iterator's element_spec {s.shape}. [Op:IteratorGetNext]")
        arrays.append(array)
    return arrays


def _get_next_kernel(xp, handle, *, specs):
    try:
        element = handle.next_element()
    except StopIteration:
        raise _errors.OutOfRangeError(None, "IteratorGetNext",
                                      "End of sequence [Op:IteratorGetNext]") from None
    return tuple(_element_arrays(element, specs))


def _get_next_infer(handle, *, specs):
    return specs


def _zeros(spec):
    shape = [0 if d is None else d for d in spec.shape] if spec.shape.rank is not None else []
    return np.zeros(shape, spec.dtype.as_numpy_dtype)


def _optional_kernel(xp, handle, *, specs):
    try:
        element = handle.next_element()
    except StopIteration:
        return (np.array(False),) + tuple(_zeros(s) for s in specs)
    return (np.array(True),) + tuple(_element_arrays(element, specs))


def _optional_infer(handle, *, specs):
    return (TensorSpec([], _dt.bool),) + specs


MAKE_ITERATOR = register_op(
    "AnonymousIteratorV3", _make_kernel, _make_infer, stateful=True, num_outputs=1,
    device_types=_CPU, differentiable=False,
    doc="A fresh iterator over a dataset (its node an attribute), as a variant.")
GET_NEXT = register_op(
    "IteratorGetNext", _get_next_kernel, _get_next_infer, stateful=True, num_outputs=None,
    device_types=_CPU, differentiable=False,
    doc="The next element of an iterator variant; OutOfRangeError at the end.")
GET_NEXT_AS_OPTIONAL = register_op(
    "IteratorGetNextAsOptional", _optional_kernel, _optional_infer, stateful=True,
    num_outputs=None, device_types=_CPU, differentiable=False,
    doc="Whether an iterator variant had a next element, then its components (zeros if not).")


# -- iterating while tracing -----------------------------------------------------------------------
#: More `next` calls on one iterator in one trace than this means a Python `for` over a dataset
#: with AutoGraph off, which would unroll forever: TensorFlow's ValueError instead.
GET_NEXT_CALL_ERROR_THRESHOLD = 32
_GET_NEXT_CALL_ERROR = (
    "An unusually high number of `tf.data.Iterator.get_next()` calls was detected. This suggests "
    "that the `for elem in dataset: ...` idiom is used within tf.function with AutoGraph "
    "disabled. This idiom is only supported when AutoGraph is enabled.")
_next_calls = weakref.WeakKeyDictionary()  # graph -> {id(handle tensor): calls}


def _count_next(handle):
    calls = _next_calls.setdefault(get_default_graph(), {})
    n = calls[id(handle)] = calls.get(id(handle), 0) + 1
    if n > GET_NEXT_CALL_ERROR_THRESHOLD:
        raise ValueError(_GET_NEXT_CALL_ERROR)


def _new_iterator(node):
    found = symbolic.captures_of(node)
    inputs = tuple(t for _, captures in found for t in captures)
    bound = tuple((source, len(captures)) for source, captures in found)
    return execute(MAKE_ITERATOR, inputs, {"dataset": node, "bound": bound})


def _get_next(handle, spec):
    _count_next(handle)
    specs = _flat_specs(spec)
    return _st.pack_components(spec, list(execute(GET_NEXT, (handle,), {"specs": specs})))


def _get_next_as_optional(handle, specs):
    outputs = execute(GET_NEXT_AS_OPTIONAL, (handle,), {"specs": specs})
    return outputs[0], list(outputs[1:])


class GraphOptional:
    """What `get_next_as_optional()` gives while tracing: `has_value()` and `get_value()`."""

    __slots__ = ("_has", "_value")

    def __init__(self, has, value):
        self._has, self._value = has, value

    def has_value(self, name=None):
        return self._has

    def get_value(self, name=None):
        return self._value


class GraphIterator:
    """`iter(dataset)` while tracing: `next()` is an `IteratorGetNext` op (never StopIteration at
    trace time: the end is the OutOfRangeError of the call that reaches it)."""

    __slots__ = ("_handle", "_spec")

    def __init__(self, node):
        self._spec = node.element_spec
        _flat_specs(self._spec)
        self._handle = _new_iterator(node)

    @property
    def element_spec(self):
        return self._spec

    def __iter__(self):
        return self

    def __next__(self):
        return _get_next(self._handle, self._spec)

    get_next = __next__

    def get_next_as_optional(self):
        has, flat = _get_next_as_optional(self._handle, _flat_specs(self._spec))
        return GraphOptional(has, _st.pack_components(self._spec, flat))

    def __eager_for_loop__(self, loop):
        _staged_loop(self._handle, self._spec, loop)


def traced_next(owned):
    """`next(owned)` for an eager iterator while a graph is built: the element as an op on the
    captured iterator; None when the thread's interpreter is not a graph (an async executor:
    the element is read now)."""
    if get_default_graph() is None:
        return None
    return _get_next(owned.graph_handle(), owned.element_spec)


def dataset_for_loop(node, loop):
    """`for element in dataset:` (AutoGraph's `ForLoop`; see the module doc)."""
    if get_default_graph() is None:
        iterator = iterator_context.make_under(iterator_context.for_pipeline(node), node)
        try:
            loop.run_python(iterator)
        finally:
            iterator.close()
        return
    _flat_specs(node.element_spec)
    _staged_loop(_new_iterator(node), node.element_spec, loop)


def iterator_for_loop(owned, loop):
    """`for element in iterator:` over an eager iterator: its remaining elements."""
    if get_default_graph() is None:
        loop.run_python(owned)
        return
    _staged_loop(owned.graph_handle(), owned.element_spec, loop)


def graph_reduce(node, initial, function):
    """`dataset.reduce` while tracing: one while loop carrying the state (TensorFlow's
    `ReduceDataset` op, built from the iterator ops)."""
    spec = node.element_spec
    specs = _flat_specs(spec)
    n = len(specs)
    handle = _new_iterator(node)
    has, element = _get_next_as_optional(handle, specs)
    state = list(_st.flatten(initial))

    def get_state():
        return (has, *element, *state)

    def set_state(values):
        nonlocal has, element, state
        has, element, state = values[0], list(values[1:1 + n]), list(values[1 + n:])

    def body():
        nonlocal has, element, state
        new = function((_st.pack(initial, state), _st.pack(spec, element)))
        state = list(_st.flatten(new))
        has, element = _get_next_as_optional(handle, specs)

    names = (("<internal has_value>",) + ("<internal element>",) * n
             + ("<reduce state>",) * len(state))
    staged_while(lambda: has, body, get_state, set_state, names, {}, None)
    return _st.pack(initial, state)


def _staged_loop(handle, spec, loop):
    specs = _flat_specs(spec)
    n = len(specs)
    has, element = _get_next_as_optional(handle, specs)

    def get_state():
        return (has, *element) + tuple(loop.get_state())

    def set_state(values):
        nonlocal has, element
        has, element = values[0], list(values[1:1 + n])
        loop.set_state(tuple(values[1 + n:]))

    def body():
        nonlocal has, element
        loop.body(_st.pack_components(spec, list(element)))
        has, element = _get_next_as_optional(handle, specs)

    def test():
        if loop.extra_test is None:
            return has
        return cond(has, loop.extra_test, lambda: False)

    names = ("<internal has_value>",) + ("<internal element>",) * n + loop.symbol_names
    opts = {k: v for k, v in loop.opts.items() if k != "iterate_names"}
    staged_while(test, body, get_state, set_state, names, opts, loop.where)
