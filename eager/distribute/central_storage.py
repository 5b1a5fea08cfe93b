"""`CentralStorageStrategy` (≈ `tf.distribute.experimental.CentralStorageStrategy`): the step
runs on every compute device, the variables live once, on one parameter device.

Built on the mirrored machinery (`strategy.Strategy`): `run`, `reduce`, `gather`, the datasets,
`ReplicaContext.all_reduce` and `merge_call` are `MirroredStrategy`'s. What differs is the
variable creator and where reductions happen (TF's `ParameterServerStrategyExtended` in its
one-machine form):

* **Devices.** `compute_devices` default to every GPU, else the CPU (canonical names, as TF's
  `worker_devices`); `parameter_device` defaults to the CPU when there are several compute
  devices, else to the one compute device. Names are checked as TF does: a compute device name
  that does not parse is a ValueError at construction, a parameter device's when the first
  variable is made; devices this machine lacks are placed softly.
* **Variables.** With several compute devices, `eager.Variable(...)` in `scope()` makes an
  `AggregatingVariable`: one variable on the parameter device, wrapped. Every replica reads it
  (the read is copied to the replica's device by the ops that use it); `assign*` in
  cross-replica context writes it; in replica context the variable's `aggregation` reduces the
  replicas' values first (NONE is TF's ValueError), then it is written once. Its `repr`,
  `name` and `device` are the wrapped variable's, as in TF. With one compute device the
  variable is a plain one on the parameter device (TF does not wrap it either).
* **Reductions** (`reduce`, `all_reduce`, the optimizer's sum of gradients, `gather`) happen
  on the CPU (TF's `ReductionToOneDevice(reduce_to_device="/device:CPU:0")`), then the result
  goes to the replicas. The optimizer then updates each variable and its slots (also central)
  once, on the parameter device (`optimizer_hook`, through `_component_devices`).
"""

from __future__ import annotations

from ..devices import registry as _devices
from ..core import context as _core
from ..variables import VariableAggregation, VariableSynchronization
from . import context as _ctx
from .strategy import Strategy, StrategyExtended, canonical_device
from .values import DistributedVariable

__all__ = ["AggregatingVariable", "CentralStorageStrategy"]

_LOCAL_CPU = "/device:CPU:0"  # TF's parameter (and reduction) device when there are several
_AGGREGATIONS = (VariableAggregation.NONE, VariableAggregation.SUM, VariableAggregation.MEAN,
                 VariableAggregation.ONLY_FIRST_REPLICA)


class AggregatingVariable(DistributedVariable):
    """≈ TF's `ps_values.AggregatingVariable`: one variable (on the parameter device) shared by
    every replica, whose replica-context writes are aggregated across replicas first (see the
    module doc). `values` is that one variable; `get()` returns it, as TF's does."""

    _KIND = "AggregatingVariable"

    def __init__(self, strategy, v, aggregation, synchronization=VariableSynchronization.AUTO):
        super().__init__(strategy, (v,), aggregation)
        self._synchronization = synchronization

    def _current(self):  # every replica reads the one copy
        return self._values[0]

    def get(self):
        return self._values[0]

    @property
    def synchronization(self):
        return self._synchronization

    def _write(self, method, value, read_value):
        if _ctx.current()[1] is None:  # cross-replica: the one copy, as given
            return getattr(self._values[0], method)(value, read_value=read_value)
        return self._strategy.extended.update_in_replica(self, method, value, read_value, {})

    def __repr__(self):  # TF shows the wrapped variable
        return repr(self._values[0])

    __str__ = __repr__


class CentralStorageExtended(StrategyExtended):
    """`strategy.extended` of a `CentralStorageStrategy`: the compute devices are the
    replicas (`worker_devices`), `parameter_devices` holds the one variable device."""

    def __init__(self, strategy, devices, collectives=None):
        super().__init__(strategy, devices, collectives)
        self._parameter_devices = (_LOCAL_CPU,)

    @property
    def parameter_devices(self):
        return self._parameter_devices

    @property
    def worker_devices_by_replica(self):
        return [[d] for d in self.worker_devices]

    @property
    def _variable_device(self):
        return self._parameter_devices[0]

    @property
    def _component_devices(self):
        return self._parameter_devices

    @property
    def _reduce_device(self):
        return _LOCAL_CPU


class CentralStorageStrategy(Strategy):
    """≈ `tf.distribute.experimental.CentralStorageStrategy`: synchronous data parallelism
    over this machine's compute devices with every variable kept once, on the parameter device
    (see the module doc)."""

    _extended_class = CentralStorageExtended

    def __init__(self, compute_devices=None, parameter_device=None):
        if compute_devices is None:
            gpus = _devices.list_logical_devices("GPU")
            compute_devices = [f"/device:GPU:{i}" for i in range(len(gpus))] or [_LOCAL_CPU]
        # A device this machine lacks is no error: its work is placed softly, as in TF.
        compute_devices = [canonical_device(d) for d in compute_devices]
        super().__init__(compute_devices)
        if parameter_device is None:
            parameter_device = compute_devices[0] if len(compute_devices) == 1 else _LOCAL_CPU
        self._extended._parameter_devices = (getattr(parameter_device, "name",
                                                     parameter_device),)

    def _create_variable(self, next_creator, **kwargs):
        """The variable on the parameter device, wrapped in an `AggregatingVariable` when
        there are several replicas. With one, TF makes the plain variable; so does this, unless
        it asks for an aggregation or a synchronization (a metric's state), which only the
        wrapper carries here."""
        aggregation = kwargs.pop("aggregation", None) or VariableAggregation.NONE
        sync = kwargs.pop("synchronization", None) or VariableSynchronization.AUTO
        if aggregation not in _AGGREGATIONS:
            raise ValueError(f"Invalid variable aggregation mode: {aggregation} for variable: "
                             f"{kwargs.get('name')}")
        if sync == VariableSynchronization.ON_READ:
            kwargs["trainable"] = False
        plain = sync in (VariableSynchronization.AUTO, VariableSynchronization.NONE)
        with _core.device(self._extended._variable_device):
            if callable(kwargs.get("initial_value")):  # Keras hands a function
                kwargs["initial_value"] = kwargs["initial_value"]()
            v = next_creator(**kwargs, synchronization=sync if plain
                             else VariableSynchronization.AUTO)
        if self.num_replicas_in_sync <= 1 and plain \
                and aggregation == VariableAggregation.NONE:
            return v
        return AggregatingVariable(self, v, aggregation, sync)
