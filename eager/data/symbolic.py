"""Sources built inside an `eager.function` from its symbolic tensors (`from_tensor_slices(x)`,
`from_tensors(x)`, `range(n)` where `x` and `n` are the function's arguments or values it
computed), as TensorFlow builds dataset ops over graph tensors.

Such a source is a `BoundSource` node: its element spec comes from the symbolic shapes and
dtypes, and it holds the symbolic tensors it was built from (`captures`). The op that makes an
iterator inside the function (`in_function.AnonymousIteratorV3`) takes every capture of the
pipeline as an input, so the trace records the dependency; when the function runs, the kernel
binds each source to the arrays its captures have in that call (`iterator_context`), and the
source makes the eager source (`TensorSlices`, `Tensors`, `Range`) over those values. The
function traces once; each call iterates its own arguments.

A pipeline over such a source exists only inside the function that built it: iterating it
anywhere else has no values to bind, and is TensorFlow's error for a graph tensor used out of
its graph. Its static cardinality is UNKNOWN (the size is the call's).
"""

from __future__ import annotations

from ..base import dtypes as _dt
from ..core.specs import TensorSpec
from ..tensor import Tensor, wrap_value
from . import iterator_context
from . import structure as _st
from .node import UNKNOWN, Node
from .sources import Range, Tensors, TensorSlices

__all__ = ["is_symbolic", "BoundSource", "symbolic_slices", "symbolic_tensors",
           "symbolic_range", "captures_of"]


def is_symbolic(value) -> bool:
    return isinstance(value, Tensor) and value.is_symbolic


class BoundSource(Node):
    """A source over symbolic tensors (see the module doc): `build(element)` makes the eager
    source once `element` (the captures' structure, with the call's values) is known."""

    def __init__(self, tf_name, structure, element_spec, build):
        self.tf_name = tf_name
        self.structure = structure
        self.captures = tuple(_st.flatten(structure))
        self.element_spec = element_spec
        self._build = build

    def signature(self):
        return f"Bound{self.tf_name}"

    def cardinality(self):
        return UNKNOWN

    def make_iterator(self):
        arrays = iterator_context.current().bindings.get(self)
        if arrays is None:
            raise ValueError(
                f"This dataset ({self.tf_name}) was built inside an eager.function from its "
                f"symbolic tensors {list(self.captures)!r}; it can be iterated only inside that "
                f"function (a graph tensor cannot be used out of its graph).")
        device = _st.cpu_device()
        element = _st.pack(self.structure, [wrap_value(a, device) for a in arrays])
        return self._build(element).make_iterator()


def _symbolic_structure(tensors, what):
    """`tensors` as an element whose leaves are tensors, symbolic ones kept (None when none is
    symbolic: the eager source takes it)."""
    flat = _st.flatten(tensors) if _st.is_structure(tensors) else [tensors]
    if not any(is_symbolic(t) for t in flat):
        return None
    return _st.normalize(tensors, what, keep_symbolic=True)


def symbolic_slices(tensors):
    element = _symbolic_structure(tensors, "tensors")
    if element is None:
        return None
    flat = _st.flatten(element)
    for t in flat:
        if t.shape.rank == 0:
            raise ValueError("Unbatching a tensor is only supported for rank >= 1")
    spec = _st.pack(element, [TensorSpec(t.shape[1:] if t.shape.rank is not None else None,
                                         t.dtype) for t in flat])
    return BoundSource("_TensorSliceDataset", element, spec, TensorSlices)


def symbolic_tensors(tensors):
    element = _symbolic_structure(tensors, "tensors")
    if element is None:
        return None
    return BoundSource("_TensorDataset", element, _st.spec_of(element), Tensors)


def symbolic_range(args, output_type):
    if not any(is_symbolic(a) for a in args):
        return None
    if not 1 <= len(args) <= 3:
        raise ValueError(f"Invalid `args`. The length of `args` should be between 1 and 3 "
                         f"but was {len(args)}.")
    structure = tuple(_st.host_tensor(a) if not is_symbolic(a) else a for a in args)
    for a in structure:
        if a.dtype != _dt.int64 and not a.dtype.is_integer:
            raise TypeError(f"Dataset.range takes integer arguments; got {a!r}.")
    dtype = _dt.as_dtype(output_type)
    return BoundSource("_RangeDataset", structure, TensorSpec([], dtype),
                       lambda values: Range(tuple(_plain_int(v) for v in values), dtype))


def _plain_int(tensor):
    return int(tensor.numpy())


def captures_of(node):
    """[(source, its symbolic tensors)] for every symbolic source in the pipeline."""
    return [(n, n.captures) for n in node.walk() if isinstance(n, BoundSource)]
