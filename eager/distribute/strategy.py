"""Strategies (≈ `tf.distribute.Strategy`): the default one, `OneDeviceStrategy` and
`MirroredStrategy` over this process's devices, and the replica context.

`strategy.scope()` installs a variable creator: inside it, `eager.Variable(...)` makes a
`MirroredVariable` (or a `SyncOnReadVariable` for `synchronization=ON_READ`) with one component
per device. `strategy.run` calls the step once per replica (`mirrored_run`); the cross-device
reductions go through the in-process collective engine's rule (sum in replica order) written
with ordinary ops, so they run eagerly, asynchronously and inside traced functions alike. Each
reduced bucket then passes through one `CollectiveReduceV2` op (`eager/ops/collective_ops.py`),
the all-reduce across the strategy's processes through its collective engine (one process
for these strategies: the op returns its input; `MultiWorkerMirroredStrategy` gives it the MPI
engine). It is a stateful, collective op, so a traced step keeps its
all-reduces in program order (automatic control dependencies chain them).
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np

from ..base import nest
from ..core import context as _core
from ..devices import registry as _devices
from ..devices.spec import DeviceSpec
from ..ops import array_ops, collective_ops, composite_ops, loss_scaling, math_ops
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import Tensor
from ..variables import (VariableAggregation, VariableSynchronization, variable_creator_scope)
from . import buckets as _buckets
from . import context as _ctx
from . import cross_device_ops as _cross_device_ops
from . import eager_overlap as _eager_overlap
from .collectives.local import LocalCollectives
from .input_context import InputContext  # noqa: F401 - part of this module's API
from .input_lib import DistributedDataset, DistributedDatasetsFromFunction
from .mirrored_run import call_for_each_replica, regroup, select_replica
from .reduce_util import ReduceOp, as_reduce_op
from .values import (DistributedValues, Mirrored, MirroredVariable, PerReplica,
                     SyncOnReadVariable)


class _Ops:  # what buckets.fuse/split need
    reshape = staticmethod(array_ops.reshape)
    concat = staticmethod(array_ops.concat)
    split = staticmethod(array_ops.split)


class ReplicaContext:
    """≈ `tf.distribute.ReplicaContext`: seen by the step inside `strategy.run`."""

    def __init__(self, strategy, replica_id, thread=None):
        self._strategy = strategy
        self._replica_id = replica_id  # among this process's replicas: indexes its components
        self._thread = thread

    @property
    def _local_replica_id(self):
        return self._replica_id

    @property
    def strategy(self):
        return self._strategy

    @property
    def replica_id_in_sync_group(self):
        """The replica's index among all workers' replicas (worker-major, as TF numbers them)."""
        extended = self._strategy.extended
        return extended._worker_index * extended._num + self._replica_id

    @property
    def num_replicas_in_sync(self):
        return self._strategy.num_replicas_in_sync

    @property
    def devices(self):
        return (self._strategy.extended.worker_devices[self._replica_id],)

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """Runs `merge_fn(strategy, *args, **kwargs)` once, in cross-replica context, with each
        argument that differs across replicas as a `PerReplica`; returns this replica's part."""
        kwargs = kwargs or {}
        if self._thread is None:  # one replica: nothing to wait for
            with _ctx.entered(self._strategy, None):
                result = merge_fn(self._strategy, *args, **kwargs)
            return select_replica(0, result)
        return self._thread.merge_call(merge_fn, args, kwargs)

    def all_reduce(self, reduce_op, value):
        """Every replica's `value` (a nest of tensors) reduced; each replica gets the result."""
        reduce_op = as_reduce_op(reduce_op)
        flat = nest.flatten(value)

        def merge(strategy, *per_replica):
            return strategy.extended.batch_reduce_to(reduce_op, list(per_replica))
        reduced = self.merge_call(merge, args=tuple(flat))
        return nest.pack_sequence_as(value, list(reduced))

    def __repr__(self):
        return f"<ReplicaContext replica_id_in_sync_group={self.replica_id_in_sync_group}>"


class StrategyExtended:
    """The devices and the cross-device work of a strategy (≈ `strategy.extended`)."""

    #: The all-reduce across this process's devices when it runs on NCCL
    #: (`cross_device_ops.ReplicaAllReduce`); None: the in-process rule below.
    _replica_all_reduce = None

    def __init__(self, strategy, devices, collectives=None):
        self._strategy = strategy
        self.worker_devices = tuple(devices)
        self.bucket_bytes = _buckets.BUCKET_BYTES
        # Across processes: the given engine (one participant per worker), else this one alone.
        self._collectives = LocalCollectives() if collectives is None else collectives
        self._group_key = collective_ops.register_group(self._collectives)
        self._instance_keys = itertools.count(1)
        # The buckets an eager backward pass started (`eager_overlap`), for batch_reduce_to.
        self._started_gradients = None

    @property
    def parameter_devices(self):
        """Where variables live: every replica's device (mirrored), as TF's."""
        return self.worker_devices

    @property
    def _num_workers(self):
        return self._collectives.size

    @property
    def _worker_index(self):
        return self._collectives.rank

    @property
    def _num_replicas_in_sync(self):
        """Every worker's replicas: this process's devices times the number of workers."""
        return len(self.worker_devices) * self._collectives.size

    def _in_multi_worker_mode(self):
        """Whether the strategy spans more than one worker process."""
        return self._collectives.size > 1

    @property
    def should_checkpoint(self):
        """Whether this worker writes the real checkpoint files: the chief (rank 0; the only
        worker of a one-process strategy). The others write to a temporary directory."""
        return self._collectives.rank == 0

    @property
    def should_save_summary(self):
        return self._collectives.rank == 0

    @property
    def experimental_should_init(self):
        return True

    def _all_reduce_bucket_across_processes(self, tensors, reduce_op):
        """`_all_reduce_across_processes` of several tensors as one collective op."""
        return collective_ops.collective_reduce_n(
            tensors, self._collectives.size, self._group_key, next(self._instance_keys),
            merge_op="Add", final_op="Div" if reduce_op is ReduceOp.MEAN else "Id")

    def _all_reduce_across_processes(self, tensor, reduce_op):
        """`tensor` (this process's reduction over its replicas) all-reduced across the
        strategy's processes, as one collective op (see the module doc)."""
        return collective_ops.collective_reduce(
            tensor, self._collectives.size, self._group_key, next(self._instance_keys),
            merge_op="Add", final_op="Div" if reduce_op is ReduceOp.MEAN else "Id")

    @property
    def _num(self):
        return len(self.worker_devices)

    @property
    def _component_devices(self):
        """Where a distributed variable's components live, one device per component: every
        replica's device here (mirrored); `CentralStorageStrategy` keeps one copy."""
        return self.worker_devices

    @property
    def _reduce_device(self):
        """Where the replicas' values are summed (and gathered) before the result is copied
        back to each replica: the first replica's device (TF's in-process rule)."""
        return self.worker_devices[0]

    def _broadcast_initial_value(self, variable):
        """Every worker's copy of a new variable starts as rank 0's (TF's rule: random
        initializers differ across processes). Nothing to do within one process."""
        if not self._in_multi_worker_mode():
            return
        value = variable.numpy()
        if value.dtype.kind not in "biufc":  # strings: not a buffer MPI can send
            return
        received = self._collectives.broadcast(np.array(value, order="C"), root=0)
        variable.assign(received, read_value=False)

    def _all_gather_across_processes(self, tensor, axis):
        """Every worker's `tensor` concatenated along `axis`, in rank order (eager only: the
        parts may differ in length, which only the host engine can size)."""
        if getattr(tensor, "is_symbolic", False):
            raise NotImplementedError(
                "strategy.gather across workers runs eagerly only: call it outside "
                "tf.function (or return the PerReplica value from the function and gather it "
                "there).")
        return convert_to_tensor(self._collectives.all_gather(tensor.numpy(), axis))

    def _to_components(self, value):
        if isinstance(value, DistributedValues):
            return list(value.values)
        return [value] * self._num

    def batch_reduce_to(self, reduce_op, values):
        """Reduces each PerReplica of `values` across replicas; one `Mirrored` per value (the
        result placed on every device). Tensors are fused into buckets first."""
        reduce_op = as_reduce_op(reduce_op)
        components = [[convert_to_tensor(c) for c in self._to_components(v)] for v in values]
        if not components:
            return []
        n = self._num
        shapes = [tuple(c[0].shape) for c in components]
        dtypes = [c[0].dtype.as_numpy_dtype for c in components]
        results = [[None] * n for _ in components]
        single_replica = n == 1 and self._replica_all_reduce is None
        if single_replica and self._collectives.size == 1:  # nothing to reduce across
            return [Mirrored(c) for c in components]
        # A small first bucket pays only where its exchange can start early (overlap).
        first = (_buckets.FIRST_BUCKET_BYTES
                 if collective_ops.overlaps(self._group_key, self._collectives.size)
                 else self.bucket_bytes)
        # Buckets an eager backward pass already started (`eager_overlap`): waited for here.
        started = (_eager_overlap.take_started(self, len(components), reduce_op)
                   if single_replica else None)
        plan = _buckets.plan_buckets(list(zip(shapes, dtypes)), self.bucket_bytes, first)
        for k, bucket in enumerate(plan):
            if single_replica:
                # One replica per process: the bucket's tensors go to the other processes as
                # they are, in one exchange (no fused buffer, no split back).
                tensors = [components[i][0] for i in bucket]
                reduced = None if started is None else started.result_for(k, bucket, tensors)
                if reduced is None:
                    with _core.device(self.worker_devices[0]):
                        reduced = self._all_reduce_bucket_across_processes(tensors, reduce_op)
                for i, part in zip(bucket, reduced):
                    results[i][0] = part
                continue
            fused = []
            for r, device in enumerate(self.worker_devices):
                with _core.device(device):
                    fused.append(_buckets.fuse([components[i][r] for i in bucket], _Ops))
            if (self._replica_all_reduce is not None and n > 1  # NCCL, device to device
                    and self._replica_all_reduce.supports(dtypes[bucket[0]])):
                reduced = self._replica_all_reduce(
                    fused, "mean" if reduce_op is ReduceOp.MEAN else "sum")
            else:
                with _core.device(self._reduce_device):
                    total = composite_ops.add_n([array_ops.identity(f) for f in fused]) \
                        if n > 1 else fused[0]
                    if reduce_op is ReduceOp.MEAN and n > 1:
                        total = math_ops.divide(total, math_ops.cast(n, total.dtype))
                    total = self._all_reduce_across_processes(total, reduce_op)
                reduced = [total] * n
            for r, device in enumerate(self.worker_devices):
                with _core.device(device):
                    parts = _buckets.split(array_ops.identity(reduced[r]),
                                           [shapes[i] for i in bucket], _Ops)
                for i, part in zip(bucket, parts):
                    results[i][r] = part
        if started is not None:
            started.drain()  # buckets of a plan other than this one: waited for, dropped
        return [Mirrored(r) for r in results]

    def reduce_to(self, reduce_op, value):
        reduce_op = as_reduce_op(reduce_op)
        if not isinstance(value, DistributedValues) and self._num > 1:
            # The same value on every replica (TF's reduce_non_distributed_value): zero stays
            # zero, MEAN is the value itself, and a SUM of it is refused as ill-defined.
            if not isinstance(value, Tensor) and np.all(np.asarray(value) == 0):
                return value
            if reduce_op is ReduceOp.MEAN:
                return value
            raise ValueError(f"A non-DistributedValues value {value} cannot be reduced with "
                             f"the given reduce op {reduce_op}.")
        return self.batch_reduce_to(reduce_op, [value])[0]

    def update_in_replica(self, variable, method, value, read_value, kwargs):
        """A distributed variable (mirrored, or one central copy) written in replica context,
        by its aggregation (TF's rules): the replicas' values reduced, then written into every
        component on its device."""
        agg = variable.aggregation
        if agg == VariableAggregation.NONE and self._num_replicas_in_sync > 1:
            kind = variable._KIND
            raise ValueError(f"You must specify an aggregation method to update a {kind} in "
                             "Replica Context. You can do so by passing an explicit value for "
                             "argument `aggregation` to tf.Variable(..)."
                             "e.g. `tf.Variable(..., aggregation=tf.VariableAggregation.SUM)`"
                             "`tf.VariableAggregation` lists the possible aggregation methods."
                             f"This is required because {kind} should always be kept in sync. "
                             "When updating them or assigning to them in a replica context, we "
                             "automatically try to aggregate the values before updating the "
                             "variable. For this aggregation, we need to know the aggregation "
                             f"method. Another alternative is to not try to update such {kind} "
                             "in replica context, but in cross replica context. You can enter "
                             "cross replica context by calling "
                             "`tf.distribute.get_replica_context().merge_call(merge_fn, ..)`.")
        context = _ctx.current()[1]

        def merge(strategy, v):
            if agg == VariableAggregation.ONLY_FIRST_REPLICA \
                    or self._num_replicas_in_sync == 1 \
                    or agg == VariableAggregation.NONE:
                first = v.values[0] if isinstance(v, DistributedValues) else v
                v = first
            else:
                v = strategy.extended.reduce_to(ReduceOp.from_variable_aggregation(agg), v)
            for i, component in enumerate(variable.values):
                part = v.values[i] if isinstance(v, DistributedValues) else v
                with _core.device(self._component_devices[i]):
                    getattr(component, method)(part, read_value=False)
        context.merge_call(merge, args=(value,))
        return variable.value() if read_value else None


class Strategy:
    """≈ `tf.distribute.Strategy`: the interface the concrete strategies share."""

    _extended_class = StrategyExtended

    def __init__(self, devices, collectives=None):
        self._extended = self._extended_class(self, devices, collectives)

    @property
    def extended(self):
        return self._extended

    @property
    def cluster_resolver(self):
        """None: a one-process strategy has no cluster (MultiWorkerMirroredStrategy's has)."""
        return None

    @property
    def num_replicas_in_sync(self):
        """Every worker's replicas together (one process: its devices)."""
        return self._extended._num_replicas_in_sync

    # -- scope: the variable creator ----------------------------------------------------------
    @contextlib.contextmanager
    def scope(self):
        current, _ = _ctx.current()
        if current is not None and current is not self and not isinstance(current,
                                                                          _DefaultStrategy):
            raise RuntimeError("Mixing different tf.distribute.Strategy objects: "
                               f"{self!r} is not {current!r}")
        if current is self:  # re-entered: the creator is already installed
            with _ctx.entered(self, _ctx.current()[1]):
                yield self
            return
        with _ctx.entered(self, None), variable_creator_scope(self._create_variable):
            yield self

    def _create_variable(self, next_creator, **kwargs):
        sync = kwargs.get("synchronization") or VariableSynchronization.AUTO
        agg = kwargs.get("aggregation") or VariableAggregation.NONE
        if sync == VariableSynchronization.NONE:
            raise ValueError("`NONE` variable synchronization mode is not supported with "
                             "tf.distribute strategy. Please change the `synchronization` for "
                             "variable: " + str(kwargs.get("name")))
        kwargs = dict(kwargs, synchronization=VariableSynchronization.AUTO,
                      aggregation=VariableAggregation.NONE)
        if sync == VariableSynchronization.ON_READ:
            kwargs["trainable"] = False
        components = []
        base_name = kwargs.get("name")
        initial = kwargs.get("initial_value")
        for i, device in enumerate(self._extended.worker_devices):
            with _core.device(device):
                if i == 0:
                    if callable(initial):
                        initial = initial()
                    kwargs["initial_value"] = initial
                    v = next_creator(**kwargs)
                    self._extended._broadcast_initial_value(v)
                    first_value = v.value()
                else:
                    name = v.name.split(":")[0] if base_name is None else str(base_name)
                    kwargs["name"] = f"{name}/replica_{i}"
                    kwargs["initial_value"] = array_ops.identity(first_value)
                    v = next_creator(**kwargs)
                components.append(v)
        cls = SyncOnReadVariable if sync == VariableSynchronization.ON_READ \
            else MirroredVariable
        return cls(self, components, agg)

    # -- running ------------------------------------------------------------------------------
    def run(self, fn, args=(), kwargs=None):
        """≈ `strategy.run`: `fn` once per replica; a `PerReplica` of the results (the result
        itself with one replica)."""
        kwargs = kwargs or {}
        with self.scope():
            results = call_for_each_replica(self, self._extended.worker_devices, fn, args,
                                            kwargs, ReplicaContext)
        return regroup(results)

    def experimental_local_results(self, value):
        if isinstance(value, DistributedValues):
            return tuple(value.values)
        return (value,)

    def reduce(self, reduce_op, value, axis):
        """≈ `strategy.reduce`: across replicas (and along `axis` within each, if given)."""
        reduce_op = as_reduce_op(reduce_op)
        # A plain value is the one local replica's (across workers it is still reduced).
        if not isinstance(value, DistributedValues) and self._extended._num > 1:
            raise ValueError(f"A non-DistributedValues value {value} cannot be reduced with "
                             f"the given reduce op {reduce_op}.")
        components = self._extended._to_components(value)
        if axis is not None:
            counts = []
            summed = []
            for device, c in zip(self._extended.worker_devices, components):
                with _core.device(device):
                    c = convert_to_tensor(c)
                    rank = c.shape.rank
                    if not -rank <= axis < max(rank, 1) or rank == 0:
                        raise ValueError(f"Invalid reduction dimension {axis} for input with "
                                         f"{rank} dimensions.")
                    summed.append(math_ops.reduce_sum(c, axis=axis))
                    counts.append(array_ops.shape(c)[axis])
            total = self._extended.reduce_to(ReduceOp.SUM, PerReplica(summed)).values[0]
            if reduce_op is ReduceOp.MEAN:  # over every worker's rows, not this one's
                counts = [math_ops.cast(c, total.dtype) for c in counts]
                n = self._extended.reduce_to(ReduceOp.SUM, PerReplica(counts)
                                             if len(counts) > 1 else counts[0]).values[0]
                total = math_ops.divide(total, n)
            return total
        return self._extended.reduce_to(reduce_op, PerReplica(components)).values[0]

    def gather(self, value, axis):
        """≈ `strategy.gather`: the replicas' values concatenated along `axis` (every
        worker's, in replica order, when there are several)."""
        components = self._extended._to_components(value)
        with _core.device(self._extended._reduce_device):
            local = array_ops.concat([array_ops.identity(c) for c in components], axis)
            if not self._extended._in_multi_worker_mode():
                return local
            return self._extended._all_gather_across_processes(local, axis)

    # -- input ---------------------------------------------------------------------------------
    def experimental_distribute_dataset(self, dataset, options=None):
        return DistributedDataset(self, dataset, options)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        return DistributedDatasetsFromFunction(self, dataset_fn, options)

    def experimental_distribute_values_from_function(self, value_fn):
        first = self._extended._worker_index * self._extended._num
        return regroup([value_fn(_ValueContext(first + i, self.num_replicas_in_sync))
                        for i in range(self._extended._num)])


class _ValueContext:
    def __init__(self, replica_id, num):
        self.replica_id_in_sync_group = replica_id
        self.num_replicas_in_sync = num


def _device_name(device):
    return getattr(device, "name", str(device))


def canonical_device(name) -> str:
    """TF's `device_util.canonicalize`, the form of `extended.worker_devices`: '/gpu:1' ->
    '/job:localhost/replica:0/task:0/device:GPU:1' (a missing type is the CPU, a missing index
    0). ValueError for a malformed name."""
    spec = _devices.parse_device(_device_name(name))
    full = DeviceSpec("localhost", 0, 0, "CPU", 0).make_merged_spec(spec)
    if spec.device_type is not None and spec.device_index is None:
        full = DeviceSpec(full.job, full.replica, full.task, full.device_type, 0)
    return full.to_string()


class MirroredStrategy(Strategy):
    """≈ `tf.distribute.MirroredStrategy`: synchronous data parallelism over this process's
    devices (default: every GPU, else the CPU)."""

    def __init__(self, devices=None, cross_device_ops=None):
        if devices is None:  # TF's: every GPU, else every (logical) CPU
            devices = [d.name for d in (_devices.list_logical_devices("GPU")
                                        or _devices.list_logical_devices("CPU"))]
        devices = [_device_name(d) for d in devices]
        if not devices:
            raise ValueError("Must specify at least one device.")
        if len(set(_devices.parse_device(d).to_string() for d in devices)) != len(devices):
            raise ValueError(f"No duplicates allowed in `devices` argument: {devices}")
        for d in devices:
            _devices.resolve(_devices.parse_device(d), soft=False)  # an unknown device: error
        devices = [canonical_device(d) for d in devices]
        super().__init__(devices)
        self._cross_device_ops = cross_device_ops
        self._extended._replica_all_reduce = _cross_device_ops.replica_all_reduce(
            cross_device_ops, devices)


class OneDeviceStrategy(Strategy):
    """≈ `tf.distribute.OneDeviceStrategy`: everything on one device."""

    def __init__(self, device):
        super().__init__([canonical_device(device)])


class _DefaultStrategy(Strategy):
    """The strategy current outside any scope: one replica, no mirroring."""

    def __init__(self):
        super().__init__([None])

    @contextlib.contextmanager
    def scope(self):
        with _ctx.entered(self, None):
            yield self

    def run(self, fn, args=(), kwargs=None):
        with _ctx.entered(self, ReplicaContext(self, 0)):
            return fn(*args, **(kwargs or {}))

    def reduce(self, reduce_op, value, axis):
        as_reduce_op(reduce_op)
        if axis is None:  # one replica: the value itself, unconverted (TF returns `1.` as is)
            return value
        value = convert_to_tensor(value)
        op = math_ops.reduce_sum if as_reduce_op(reduce_op) is ReduceOp.SUM \
            else math_ops.reduce_mean
        return op(value, axis=axis)


_DEFAULT = _DefaultStrategy()


def get_strategy():
    strategy, _ = _ctx.current()
    return _DEFAULT if strategy is None else strategy


def has_strategy():
    return get_strategy() is not _DEFAULT


def get_replica_context():
    strategy, replica = _ctx.current()
    if strategy is None:
        return ReplicaContext(_DEFAULT, 0)
    return replica


def in_cross_replica_context():
    strategy, replica = _ctx.current()
    return strategy is not None and replica is None


def _replica_count():
    """(num_replicas_in_sync, in cross-replica context) for `eager.nn`'s loss scaling."""
    strategy, replica = _ctx.current()
    if strategy is None or isinstance(strategy, _DefaultStrategy):
        return 1, False
    return strategy.num_replicas_in_sync, replica is None


loss_scaling.set_replica_count_hook(_replica_count)


def get_cross_replica_context():
    strategy, replica = _ctx.current()
    if strategy is None:
        return _DEFAULT
    return strategy if replica is None else None
