"""`Operation`: one node of a graph, an `OpDef` applied to symbolic inputs.

A node keeps exactly what a later runtime needs to run it with the op's own kernel (the same
`OpDef` record eager execution uses, its attributes, its input tensors) plus its control inputs
(operations that must run first although no value flows from them). Slotted: graphs hold many.
"""

from __future__ import annotations

from ..base import user_code as _user_code

__all__ = ["Operation"]


class Operation:
    """≈ `tf.Operation`: `.type`, `.name`, `.inputs`, `.outputs`, `.control_inputs`."""

    __slots__ = ("_graph", "_op_def", "_name", "_inputs", "_attrs", "_outputs",
                 "_control_inputs", "_device", "_source", "__weakref__")

    def __init__(self, graph, op_def, name, inputs, attrs, device=""):
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._inputs = tuple(inputs)
        self._attrs = dict(attrs)
        self._outputs = ()
        self._control_inputs = []
        self._device = device
        # Where user code created the op (`user_code.user_point`): a failure when the graph
        # runs names this line, not only the runtime's.
        self._source = (None, 0)

    @property
    def type(self) -> str:
        return self._op_def.name

    @property
    def name(self) -> str:
        return self._name

    @property
    def op_def(self):
        return self._op_def

    @property
    def graph(self):
        return self._graph

    @property
    def inputs(self) -> tuple:
        return self._inputs

    @property
    def outputs(self) -> tuple:
        return self._outputs

    @property
    def attrs(self) -> dict:
        return self._attrs

    @property
    def device(self) -> str:
        """The device requested by the device scope the op was created in ("" for none).
        Placement of a graph is a later pass; this is only the request."""
        return self._device

    @property
    def source(self) -> tuple:
        """(file, line) of the user code that created this op (("<unknown>", 0) if none)."""
        return _user_code.line_of(self._source)

    @property
    def control_inputs(self) -> list:
        return list(self._control_inputs)

    def get_attr(self, name):
        """≈ `Operation.get_attr`: one attribute; ValueError if the op has no such attribute."""
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation {self._name!r} has no attr named {name!r}.") from None

    def _add_control_input(self, op) -> None:
        """Makes `op` run before this one (no data flows). Both must be in the same graph; an
        edge that already exists is not added twice."""
        if not isinstance(op, Operation):
            raise TypeError(f"Control inputs must be Operations, got {type(op).__name__}.")
        if op._graph is not self._graph:
            raise ValueError(f"Control input {op._name!r} is from a different graph than "
                             f"operation {self._name!r}.")
        if op is self:
            raise ValueError(f"Operation {self._name!r} cannot be its own control input.")
        if not any(c is op for c in self._control_inputs):
            self._control_inputs.append(op)

    def _add_control_inputs(self, ops) -> None:
        for op in ops:
            self._add_control_input(op)

    def __repr__(self):
        return f"<eager.Operation '{self._name}' type={self.type}>"
