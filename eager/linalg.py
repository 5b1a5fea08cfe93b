"""`eager.linalg` ≈ `tf.linalg`."""

from .ops.product_ops import *  # noqa: F401,F403
from .ops.linalg_ops import *  # noqa: F401,F403
from .ops.composite_ops import global_norm, l2_normalize  # noqa: F401
