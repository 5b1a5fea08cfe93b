"""`eager.train` ≈ `tf.train`: object-based checkpoints (`Checkpoint`, `CheckpointManager`) and
the helpers that find and inspect them. The file format is described in `_format.py`; keys and
matching in `checkpoint.py`."""

from ..base.example_proto import BytesList, Example, Feature, Features, FloatList, Int64List
from .checkpoint import Checkpoint, CheckpointLoadStatus, InitializationOnlyStatus
from .checkpoint_management import (CheckpointManager, CheckpointState, get_checkpoint_state,
                                    latest_checkpoint, list_variables, load_variable,
                                    update_checkpoint_state)
from .checkpoint_reader import CheckpointReader, load_checkpoint

__all__ = ["Checkpoint", "CheckpointLoadStatus", "InitializationOnlyStatus", "CheckpointManager",
           "CheckpointState", "get_checkpoint_state", "latest_checkpoint", "list_variables",
           "load_variable", "update_checkpoint_state", "CheckpointReader", "load_checkpoint",
           "Example", "Features", "Feature", "BytesList", "FloatList", "Int64List"]
