"""`eager.linalg` ≈ `tf.linalg`."""

from .ops.linalg_ops import *  # noqa: F401,F403
from .ops.composite_ops import global_norm, l2_normalize  # noqa: F401
from .ops.matrix_ops import det, inv, solve  # noqa: F401
