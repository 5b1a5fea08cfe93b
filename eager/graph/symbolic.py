"""`SymbolicTensor`: an output of an operation in a graph being built (tracing).

It has a static type (dtype and a possibly partial shape, from the op's shape inference) and no
value: the value exists only when the graph runs. Everything that would need the value
(`bool()`, `len()` on an unknown first dimension, iteration) raises, with TensorFlow's kind of
message, and `numpy()` raises TensorFlow's AttributeError, so that a traced function fails at
trace time instead of silently capturing a stale value. Operators (`a + b`) come from `Tensor`
and go through dispatch like every op, which hands them to the graph installed on the thread.

Slotted: a traced graph holds one of these per op output.
"""

from __future__ import annotations

from ..core import context as _context
from ..tensor import Tensor
from ..base.tensor_shape import TensorShape, as_shape
from .constant_value import constant_value, partial_value

__all__ = ["SymbolicTensor"]


class SymbolicTensor(Tensor):
    """Output `value_index` of operation `op` (≈ a graph `tf.Tensor`)."""

    # `_tape_id`: gradient tapes read/assign it on every input/output of a recorded op, whatever
    # its class (see eager.autodiff.tape), so a symbolic tensor must have it too.
    __slots__ = ("_op", "_value_index", "_shape", "_dtype", "_tape_id", "__weakref__")

    def __init__(self, op, value_index, shape, dtype):
        self._op = op
        self._value_index = value_index
        self._shape = as_shape(shape)
        self._dtype = dtype
        self._tape_id = 0

    # -- static information --------------------------------------------------------------------
    @property
    def op(self):
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def name(self) -> str:
        return f"{self._op.name}:{self._value_index}"

    @property
    def graph(self):
        return self._op.graph

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self) -> str:
        return self._op.device

    @property
    def is_symbolic(self) -> bool:
        return True

    def set_shape(self, shape):
        """Refines the static shape (≈ `Tensor.set_shape`); an incompatible shape is a
        ValueError."""
        shape = as_shape(shape)
        if not self._shape.is_compatible_with(shape):
            raise ValueError(f"Tensor's shape {self._shape} is not compatible with supplied "
                             f"shape {shape}.")
        self._shape = self._shape.merge_with(shape)

    def _constant_value(self):
        """This tensor's value if the trace determines it (`graph.constant_value`), else None:
        what ops that take a size as an attribute ask of a symbolic size."""
        return constant_value(self)

    def _partial_value(self):
        """What the trace knows of this integer tensor's elements (`graph.partial_value`): an
        object array with None where an element is known only at run time, or None. What ops
        whose output shape comes from a shape tensor ask of it."""
        return partial_value(self)

    # -- what needs a value --------------------------------------------------------------------
    def numpy(self):
        """TensorFlow's graph tensors have no `numpy`: the value only exists when the graph
        runs. Calling it raises their AttributeError (TensorFlow's words first), which the
        guides' `except AttributeError` catches, inside a trace or on a tensor leaked out of
        one. (The method itself exists, so `hasattr(t, "numpy")` still tells a tensor from a
        list, as eager's argument checks ask.)"""
        raise AttributeError(
            "'SymbolicTensor' object has no attribute 'numpy': "
            f"{self.name} is a symbolic tensor of a traced function, with no value outside a "
            "run of it; return it from the function instead.", name="numpy", obj=self)

    def __len__(self):
        shape = self._shape
        if shape.rank is None or shape.rank == 0 or shape[0] is None:
            raise TypeError(f"len is not well defined for symbolic Tensors ({self.name} has "
                            f"shape {_shape_text(shape)}). Please call `x.shape` rather than "
                            "`len(x)` for shape information.")
        return shape[0]

    def __hash__(self):
        # TensorFlow 2's rule: inside a function being traced (`eager.function`, a control-flow
        # branch), its tensors are unhashable, since `==` is elementwise (an op): a dict or set
        # keyed by one would silently key by identity. Use `t.ref()`. Elsewhere (a hand-built
        # `Graph`, TF1's graph mode with Session feeds and fetches; the runtime's bookkeeping of
        # a finished trace) they hash by identity.
        if self._op._graph.building_function:
            interpreter = _context.thread_state().interpreter
            if interpreter is not None and getattr(interpreter, "building_function", False):
                raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")
        return id(self)

    def __repr__(self):
        return (f"<eager.Tensor '{self.name}' shape={_shape_text(self._shape)} "
                f"dtype={self._dtype.name}>")

    def __str__(self):
        # TensorFlow's `print` of a traced tensor, which its guides show.
        shape = "" if self._shape.rank is None else f", shape={_shape_text(self._shape)}"
        return f'Tensor("{self.name}"{shape}, dtype={self._dtype.name})'


def _shape_text(shape) -> str:
    if shape.rank is None:
        return "<unknown>"
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + (
        ",)" if shape.rank == 1 else ")")
