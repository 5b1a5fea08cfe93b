"""Per-replica values and distributed variables (≈ `tf.distribute`'s values module).

* `PerReplica`: one value per replica, what `strategy.run` returns and what a distributed
  dataset yields.
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

from ..ops import math_ops
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


class PerReplica(DistributedValues):
    """≈ `tf.distribute` PerReplica: what `strategy.run` returns."""

    _KIND = "PerReplica"


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


class MirroredVariable(DistributedVariable):
    """≈ `tf.distribute` MirroredVariable (see the module doc)."""

    _KIND = "MirroredVariable"

    def _write(self, method, value, read_value, kwargs):
        rid = _replica_id()
        if rid is None:  # cross-replica: the same value into every component
            for component in self._values:
                getattr(component, method)(value, read_value=False, **kwargs)
            return self.value() if read_value else None
        return self._strategy.extended.update_in_replica(self, method, value, read_value,
                                                         kwargs)

    def assign(self, value, use_locking=None, name=None, read_value=True):
        return self._write("assign", value, read_value, {})

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return self._write("assign_add", delta, read_value, {})

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._write("assign_sub", delta, read_value, {})


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

    def assign(self, value, use_locking=None, name=None, read_value=True):
        return self._write("assign", value, read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return self._write("assign_add", delta, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._write("assign_sub", delta, read_value)
