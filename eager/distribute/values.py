"""Per-replica values and distributed variables (≈ `tf.distribute`'s values module).

* `PerReplica`: one value per replica, what `strategy.run` returns and what a distributed
  dataset yields. It is a composite (`PerReplicaSpec`): an `eager.function` takes one as an
  argument keyed by its replicas' shapes and dtypes (one trace serves every batch, as in TF)
  and returns one rebuilt from the replicas' outputs.
* `MirroredVariable`: one component variable per device, kept equal. Reads go to the current
  replica's component (its device's copy: no transfer); writes in cross-replica context write
  every component; writes in replica context follow the variable's `aggregation` (TF's rules:
  NONE is an error, SUM/MEAN all-reduce the replicas' values first, ONLY_FIRST_REPLICA takes
  replica 0's).
* `SyncOnReadVariable`: one independent component per replica (a metric's running sums);
  reading it in cross-replica context aggregates the components.

Both are `eager.Variable`s (`isinstance(v, eager.Variable)` holds) made by the strategy's
variable creator; they are never constructed by user code.
"""

from __future__ import annotations

from ..base import nest
from ..core.composite import CompositeTensor, TypeSpec
from ..core.specs import TensorSpec
from ..ops import math_ops
from ..tensor import Tensor
from ..variables import Variable, VariableAggregation
from . import context as _ctx
from .reduce_util import ReduceOp


def _replica_id():
    """The current replica's index among this process's replicas (its component), or None in
    cross-replica context."""
    _, replica = _ctx.current()
    return None if replica is None else replica._local_replica_id


class DistributedValues:
    """One value per replica, in replica order."""

    _KIND = "DistributedValues"

    def __init__(self, values):
        self._values = tuple(values)

    @property
    def values(self):
        return self._values

    def _current(self):
        rid = _replica_id()
        return self._values[0 if rid is None else rid]

    def __repr__(self):
        parts = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self._values))
        return f"{self._KIND}:{{\n{parts}\n}}"

    __str__ = __repr__


class PerReplica(DistributedValues, CompositeTensor):
    """≈ `tf.distribute` PerReplica: what `strategy.run` returns. A composite whose components
    are the replicas' tensors (see `PerReplicaSpec`); not tensor-like (`eager.is_tensor` is
    False, as `tf.is_tensor` is)."""

    _KIND = "PerReplica"
    _tensor_like = False

    @property
    def _type_spec(self):
        return PerReplicaSpec.from_value(self)


class _PythonLeaf:
    """A leaf of a PerReplica that is not a tensor (None, a Python number, a variable): part of
    the spec, compared by value when hashable, else by identity; never a component."""

    __slots__ = ("value", "key")

    def __init__(self, value):
        self.value = value
        try:
            hash(value)
            self.key = (type(value), value)
        except TypeError:
            self.key = (type(value), id(value))

    def __repr__(self):
        return repr(self.value)


def _leaf_spec(leaf):
    return TensorSpec(leaf.shape, leaf.dtype) if isinstance(leaf, Tensor) else _PythonLeaf(leaf)


def _structure_key(spec):
    """Everything about one replica's value but its tensors' shapes: nesting, dtypes, Python
    leaves."""
    if isinstance(spec, dict):
        return (type(spec), tuple((k, _structure_key(spec[k])) for k in sorted(spec)))
    if isinstance(spec, (list, tuple)):
        return (type(spec), tuple(_structure_key(s) for s in spec))
    if isinstance(spec, TensorSpec):
        return spec.dtype
    return spec.key


class PerReplicaSpec(TypeSpec):
    """≈ TF's `PerReplicaSpec(*value_specs)`: one spec per replica (a TensorSpec, or a nest of
    them when each replica's value is a structure). The components are every replica's tensors,
    replica after replica; Python leaves stay in the spec."""

    __slots__ = ("_value_specs",)

    value_type = PerReplica

    def __init__(self, *value_specs):
        self._value_specs = tuple(value_specs)

    @classmethod
    def from_value(cls, value):
        return cls(*(nest.map_structure(_leaf_spec, v) for v in value.values))

    @property
    def component_specs(self) -> list:
        return [s for v in self._value_specs for s in nest.flatten(v)
                if isinstance(s, TensorSpec)]

    def to_components(self, value) -> list:
        return [leaf for v in value.values for leaf in nest.flatten(v)
                if isinstance(leaf, Tensor)]

    def from_components(self, tensors):
        parts = iter(tensors)
        return PerReplica([nest.map_structure(
            lambda s: next(parts) if isinstance(s, TensorSpec) else s.value, v)
            for v in self._value_specs])

    def _key(self) -> tuple:
        shapes = tuple(None if s.shape.rank is None else tuple(s.shape.as_list())
                       for s in self.component_specs)
        return (shapes, tuple(_structure_key(v) for v in self._value_specs))

    def __repr__(self):
        return f"PerReplicaSpec({', '.join(repr(v) for v in self._value_specs)})"


class Mirrored(DistributedValues):
    """The same value on every replica (a reduced result placed back on each device)."""

    _KIND = "Mirrored"


class DistributedVariable(Variable):
    """A variable with one component per replica device (see the module doc)."""

    __slots__ = ("_values", "_strategy", "_aggregation", "__weakref__", "__dict__")
    _KIND = "DistributedVariable"
    _is_distributed_variable = True

    def __init__(self, strategy, values, aggregation):
        self._strategy = strategy
        self._values = tuple(values)
        self._aggregation = aggregation

    # -- which component --------------------------------------------------------------------
    @property
    def values(self):
        return self._values

    def _current(self):
        rid = _replica_id()
        return self._values[0 if rid is None else rid]

    @property
    def primary(self):
        return self._values[0]

    # -- the Variable interface: the current replica's component ----------------------------
    def value(self):
        return self._current().value()

    def read_value(self):
        return self._current().read_value()

    def _tape_source(self):
        return self._current()._tape_source()

    def _watch_on_tape(self, tape):
        return self._current()._watch_on_tape(tape)

    @property
    def handle(self):
        return self._current().handle

    @property
    def _handle(self):
        return self.primary._handle

    @property
    def aggregation(self):
        return self._aggregation

    def __getattr__(self, name):  # name, dtype, shape, trainable, path, regularizer, ...
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._values[0], name)

    @property
    def name(self):
        return self.primary.name

    @property
    def dtype(self):
        return self.primary.dtype

    @property
    def shape(self):
        return self.primary.shape

    @property
    def device(self):
        return self._current().device

    @property
    def trainable(self):
        return self.primary.trainable

    def get_shape(self):
        return self.shape

    def __repr__(self):
        parts = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self._values))
        return f"{self._KIND}:{{\n{parts}\n}}"

    # -- writes: each kind's `_write(method, value, read_value)` (TF's rules per kind) --------
    def assign(self, value, use_locking=None, name=None, read_value=True):
        return self._write("assign", value, read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return self._write("assign_add", delta, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._write("assign_sub", delta, read_value)


class MirroredVariable(DistributedVariable):
    """≈ `tf.distribute` MirroredVariable (see the module doc)."""

    _KIND = "MirroredVariable"

    def _write(self, method, value, read_value):
        rid = _replica_id()
        if rid is None:  # cross-replica: the same value into every component
            for component in self._values:
                getattr(component, method)(value, read_value=False)
            return self.value() if read_value else None
        return self._strategy.extended.update_in_replica(self, method, value, read_value, {})


class SyncOnReadVariable(DistributedVariable):
    """≈ `tf.distribute` SyncOnReadVariable: each replica updates its own component; a
    cross-replica read aggregates them (SUM, MEAN or ONLY_FIRST_REPLICA)."""

    _KIND = "SyncOnReadVariable"

    def _aggregated(self):
        agg = self._aggregation
        if agg in (VariableAggregation.ONLY_FIRST_REPLICA, VariableAggregation.NONE):
            return self.primary.value()
        return self._strategy.reduce(ReduceOp.from_variable_aggregation(agg),
                                     PerReplica([c.value() for c in self._values]), axis=None)

    def value(self):
        if _replica_id() is None:
            return self._aggregated()
        return self._current().value()

    def read_value(self):
        return self.value()

    def _write(self, method, value, read_value):
        if _replica_id() is None:  # cross-replica assign: TF writes every component
            if method == "assign" and self._aggregation == VariableAggregation.SUM:
                value = math_ops.divide(value, self._strategy.num_replicas_in_sync)
            for component in self._values:
                getattr(component, method)(value, read_value=False)
            return self.value() if read_value else None
        return getattr(self._current(), method)(value, read_value=read_value)
