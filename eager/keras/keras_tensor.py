"""The functional API's symbolic values: `KerasTensor`, and the `Node` that records which layer
made it from which inputs.

`keras.Input(shape=(784,))` is a KerasTensor: a shape (batch dimension None) and a dtype, no
value. Calling a layer on KerasTensors builds the layer from their shapes, works out the
output's shape and dtype, and returns new KerasTensors whose `_keras_history` points at a
`Node` (the layer, the call's arguments, its outputs). `Model(inputs, outputs)` walks those
nodes back from the outputs to find the graph of layers it runs.

The output shape comes from the layer's `compute_output_shape` when it defines one, and
otherwise from tracing its `call` once into a throwaway eager graph with placeholders of the
inputs' shapes (`compute_output_spec`): every layer written with eager ops gets symbolic
shapes for free, as Keras 3's backends do.
"""

from __future__ import annotations

import collections

from ..base import nest
from ..core.specs import TensorSpec
from ..graph.tracing import trace
from ..tensor import Tensor
from . import backend

__all__ = ["KerasTensor", "KerasHistory", "Node", "any_symbolic_tensors",
           "compute_output_spec"]

KerasHistory = collections.namedtuple("KerasHistory", ["operation", "node_index",
                                                       "tensor_index"])


class KerasTensor:
    """A symbolic tensor of the functional API: shape (a tuple, None for unknown dims) and
    dtype (a string, "float32"), no value."""

    _is_keras_tensor = True

    def __init__(self, shape, dtype="float32", sparse=False, ragged=False, name=None,
                 record_history=True):
        if hasattr(shape, "as_list"):
            shape = shape.as_list()
        self._shape = tuple(None if d is None else int(d) for d in shape)
        self._dtype = backend.standardize_dtype(dtype)
        self.sparse = bool(sparse)
        self.ragged = bool(ragged)
        self.name = name or backend.auto_name("keras_tensor")
        self._keras_history = None

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def dtype(self) -> str:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def spec(self) -> TensorSpec:
        """The `eager.TensorSpec` this tensor stands for (its placeholder's spec)."""
        return TensorSpec(self._shape, self._dtype)

    def __repr__(self):
        return (f"<KerasTensor shape={self._shape}, dtype={self._dtype}, sparse={self.sparse}, "
                f"ragged={self.ragged}, name={self.name}>")

    def __bool__(self):
        raise TypeError("A symbolic KerasTensor cannot be used as a boolean.")

    def __iter__(self):
        raise NotImplementedError("Iterating over a symbolic KerasTensor is not supported.")

    def numpy(self):
        raise ValueError("A KerasTensor is symbolic: it's a placeholder for a shape and a dtype. "
                         "It doesn't have any actual numerical value. You cannot convert it "
                         "to a NumPy array.")

    __array__ = numpy


class Node:
    """One call of an operation (a layer) on symbolic inputs: the edge the functional API
    walks. Registers itself with the operation (`_inbound_nodes`) and with the operations that
    made its inputs (`_outbound_nodes`), and stamps its outputs' `_keras_history`."""

    def __init__(self, operation, call_args=(), call_kwargs=None, outputs=None):
        self.operation = operation
        self.arguments = (tuple(call_args), dict(call_kwargs or {}))
        self.outputs = [] if outputs is None else nest.flatten(outputs)
        self.input_tensors = [x for x in nest.flatten(self.arguments)
                              if isinstance(x, KerasTensor)]
        operation._inbound_nodes.append(self)
        for x in self.input_tensors:
            if x._keras_history is not None:
                x._keras_history.operation._outbound_nodes.append(self)
        node_index = len(operation._inbound_nodes) - 1
        for i, tensor in enumerate(self.outputs):
            tensor._keras_history = KerasHistory(operation, node_index, i)

    @property
    def is_input(self) -> bool:
        return not self.input_tensors

    @property
    def parent_nodes(self) -> list:
        """The nodes that made this node's inputs, in input order."""
        parents = []
        for x in self.input_tensors:
            history = x._keras_history
            if history is not None:
                node = history.operation._inbound_nodes[history.node_index]
                if node not in parents:
                    parents.append(node)
        return parents

    def __repr__(self):
        return f"<Node operation={getattr(self.operation, 'name', self.operation)}>"


def any_symbolic_tensors(args=(), kwargs=None) -> bool:
    return any(isinstance(x, KerasTensor) for x in nest.flatten((args, kwargs or {})))


def compute_output_spec(fn, *args, **kwargs):
    """The KerasTensors `fn(*args, **kwargs)` would return, found by tracing `fn` once with
    placeholders for the KerasTensors among the arguments (other values are passed as they
    are). Nothing of the trace is kept."""
    structure = (args, kwargs)
    flat = nest.flatten(structure)
    stand_ins = [x.spec() if isinstance(x, KerasTensor) else x for x in flat]

    def run(*flat_symbolic):
        call_args, call_kwargs = nest.pack_sequence_as(structure, list(flat_symbolic))
        return fn(*call_args, **call_kwargs)

    graph = trace(run, *stand_ins, name=getattr(fn, "__name__", "compute_output_spec"))
    return nest.map_structure(
        lambda t: KerasTensor(t.shape, t.dtype.name) if isinstance(t, Tensor) else t,
        graph.structured_outputs)
