"""`eager.distribute` ≈ `tf.distribute`: data-parallel training across devices (see
docs/distributed.md)."""

from . import optimizer_hook as _optimizer_hook  # noqa: F401 - installs the optimizers' hook
from . import cluster_resolver  # noqa: F401 - TF_CONFIG and cluster specs (no MPI import)
from . import experimental  # noqa: F401 - tf.distribute.experimental's names
from .cross_device_ops import (CrossDeviceOps, HierarchicalCopyAllReduce, NcclAllReduce,
                               ReductionToOneDevice)
from .input_lib import DistributedDataset
from .input_options import InputOptions, InputReplicationMode
from .multi_worker import MultiWorkerMirroredStrategy
from .reduce_util import ReduceOp
from .strategy import (InputContext, MirroredStrategy, OneDeviceStrategy, ReplicaContext,
                       Strategy, StrategyExtended, get_cross_replica_context,
                       get_replica_context, get_strategy, has_strategy,
                       in_cross_replica_context)
from .values import (DistributedValues, MirroredVariable, PerReplica, SyncOnReadVariable)

__all__ = ["MirroredStrategy", "MultiWorkerMirroredStrategy", "OneDeviceStrategy", "Strategy",
           "StrategyExtended",
           "ReplicaContext", "InputContext", "ReduceOp", "get_strategy", "has_strategy",
           "get_replica_context", "get_cross_replica_context", "in_cross_replica_context",
           "PerReplica", "DistributedValues", "MirroredVariable", "SyncOnReadVariable",
           "DistributedDataset", "CrossDeviceOps", "NcclAllReduce", "ReductionToOneDevice",
           "HierarchicalCopyAllReduce", "InputOptions", "InputReplicationMode"]
