"""The `Placeholder` op: a graph input, fed when the graph runs.

Registered like every other op so that a graph holds nothing but `OpDef` applications. It has no
computation: its kernel raises if a runtime ever tries to run it (a runtime must feed it), and
its inference returns the spec its attributes declare (`dtype`, `shape`, shape possibly partial).
"""

from __future__ import annotations

from ..base.errors import InvalidArgumentError
from ..core.registry import register_op
from ..core.specs import TensorSpec

__all__ = ["PLACEHOLDER"]


def _placeholder_kernel(xp, *, dtype, shape):
    raise InvalidArgumentError(None, "Placeholder",
                               f"Placeholder: a placeholder of dtype {dtype.name} and shape "
                               f"{list(shape) if shape.rank is not None else '<unknown>'} must "
                               "be fed a value; it has no kernel of its own. [Op:Placeholder]")


def _placeholder_infer(*, dtype, shape):
    return TensorSpec(shape, dtype)


PLACEHOLDER = register_op("Placeholder", _placeholder_kernel, _placeholder_infer,
                          differentiable=False, infer_from_types=True,
                          doc="A graph input: fed when the graph runs; never executed.")
