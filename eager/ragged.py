"""`eager.ragged` ≈ `tf.ragged`: ragged tensors (defined in `eager.ops.ragged_tensor` and
`eager.ops.ragged_ops`)."""

from .ops.ragged_ops import boolean_mask, constant, map_flat_values, range  # noqa: A004
from .ops.ragged_tensor import RaggedTensor, RaggedTensorSpec

__all__ = ["RaggedTensor", "RaggedTensorSpec", "boolean_mask", "constant", "map_flat_values",
           "range"]

from .base.traceback_filter import filter_public_functions as _filter_public_functions  # noqa: E402

_filter_public_functions(globals())  # errors leaving these show the user's frames only
