"""`eager.sparse` ≈ `tf.sparse`: sparse tensors (defined in `eager.ops.sparse_tensor` and
`eager.ops.sparse_ops`)."""

from .ops.sparse_ops import (add, concat, from_dense, map_values, reduce_max, reduce_sum,
                             reorder, reshape, slice, sparse_dense_matmul, to_dense)  # noqa: A004
from .ops.sparse_ops import transpose_sparse as transpose
from .ops.sparse_tensor import SparseTensor, SparseTensorSpec

__all__ = ["SparseTensor", "SparseTensorSpec", "add", "concat", "from_dense", "map_values",
           "reduce_max", "reduce_sum", "reorder", "reshape", "slice", "sparse_dense_matmul",
           "to_dense", "transpose"]

from .base.traceback_filter import filter_public_functions as _filter_public_functions  # noqa: E402

_filter_public_functions(globals())  # errors leaving these show the user's frames only
