"""The `Const` op: a value the traced code made from a Python or numpy value, embedded in the
graph (TensorFlow's `Const`).

TensorFlow bakes such values into the trace: `x * 3` inside a `tf.function` adds a `Const`, and
`concrete_function.graph.inputs` lists only the arguments' placeholders and the captures of values
made outside the trace. The op's attribute holds the eager tensor the conversion made. Runtimes
do not run the op: a program (`Program.from_graph`) and a graph runner (`GraphPlan`) take that
tensor as a constant, exactly as they take a capture's value. The kernel exists for code that
runs a graph's ops one by one (trace-time values, the semantics explorer).
"""

from __future__ import annotations

import numpy as np

from ..core.registry import register_op
from ..core.specs import TensorSpec

__all__ = ["CONST", "ConstantValue"]


class ConstantValue:
    """An eager tensor as an op attribute, with its value on the host. Attributes must be
    hashable (graphs compare nodes); two constants are the same attribute only when they are
    the same object."""

    __slots__ = ("tensor", "host")

    def __init__(self, tensor):
        self.tensor = tensor
        # Read now, on the tracing thread: a kernel may run on a device's stream thread, where
        # reading a device tensor would wait for that very stream.
        self.host = np.asarray(tensor._numpy_host())

    def __repr__(self):
        return f"ConstantValue({self.tensor!r})"


def _const_kernel(xp, *, value):
    # numpy: the host array itself; another device's module: a copy of it there.
    return xp.asarray(value.host)


def _const_infer(*, value):
    return TensorSpec(value.tensor.shape, value.tensor.dtype)


CONST = register_op("Const", _const_kernel, _const_infer, differentiable=False,
                    doc="A value of the trace itself (made from a Python or numpy value).")
