"""Composite tensors: values made of several tensors (`RaggedTensor`, `SparseTensor`), and
the type specs that describe them.

A composite is a Python object over *components*, plain tensors (a ragged tensor's flat values
and row splits; a sparse tensor's indices, values and dense shape). Everything that moves
tensors across a boundary — `eager.function` arguments and results, datasets — works on the
components and rebuilds the composite on the other side from its `TypeSpec`:
`spec.to_components(value)` lists them, `spec.from_components(tensors)` rebuilds, and
`spec.component_specs` types them (with the dimensions the spec leaves open as None, so one
trace serves every value of the spec). Gradients flow through the components, since every
composite operation is made of ordinary ops on them.

Ops that accept composites (`eager.reduce_sum` of a ragged tensor, `eager.concat` of sparse
ones) find their implementation here: the module defining the composite registers a handler per
API name (`register_api`), and the API checks `isinstance(x, CompositeTensor)` before converting
its argument (`dispatch_api`). The op library itself knows nothing of ragged or sparse.
"""

from __future__ import annotations

__all__ = ["CompositeTensor", "TypeSpec", "register_api", "dispatch_api", "is_composite"]


class TypeSpec:
    """The type of a composite value (≈ `tf.TypeSpec`): what it is made of, without values.

    Subclasses define `value_type`, `component_specs` (TensorSpecs), `to_components(value)`,
    `from_components(tensors)` and `_key()` (a hashable tuple of everything that defines the
    type: shape, dtype, partitioning), which equality, hashing and `eager.function`'s cache key
    use."""

    __slots__ = ()

    value_type = None

    @property
    def component_specs(self) -> list:
        raise NotImplementedError

    def to_components(self, value) -> list:
        raise NotImplementedError

    def from_components(self, tensors):
        raise NotImplementedError

    def _key(self) -> tuple:
        raise NotImplementedError

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value if isinstance(spec_or_value, TypeSpec) else \
            getattr(spec_or_value, "_type_spec", None)
        if type(other) is not type(self):
            return False
        return all(a.is_compatible_with(b) for a, b in
                   zip(self.component_specs, other.component_specs)) and \
            self._key()[1:] == other._key()[1:]

    def __eq__(self, other):
        return type(other) is type(self) and self._key() == other._key()

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((type(self), self._key()))


class CompositeTensor:
    """A value made of tensors (≈ `tf.__internal__.CompositeTensor`); `_type_spec` is its
    `TypeSpec`."""

    __slots__ = ()

    #: Whether `eager.is_tensor` counts it (ragged, sparse); False for containers of
    #: tensors such as `eager.distribute`'s PerReplica, as in TensorFlow.
    _tensor_like = True

    @property
    def _type_spec(self) -> TypeSpec:
        raise NotImplementedError


def is_composite(value) -> bool:
    return isinstance(value, CompositeTensor)


#: (API name, composite class) -> handler; filled by the modules defining composites.
_HANDLERS: dict = {}


def register_api(api_name: str, cls, handler) -> None:
    """Makes `handler(*args, **kwargs)` what API `api_name` runs when its dispatching argument
    is an instance of `cls` (see the module doc)."""
    _HANDLERS[(api_name, cls)] = handler


def dispatch_api(api_name: str, value, *args, **kwargs):
    """Runs API `api_name`'s handler for composite `value`'s class (args as the API got them);
    a TypeError naming the API when none is registered."""
    for cls in type(value).__mro__:
        handler = _HANDLERS.get((api_name, cls))
        if handler is not None:
            return handler(*args, **kwargs)
    raise TypeError(f"{api_name} does not support {type(value).__name__} arguments; convert it "
                    "to a dense tensor first (e.g. with `to_tensor()` or "
                    "`eager.sparse.to_dense`).")
