"""`eager.linalg` ≈ `tf.linalg`."""

from .ops.product_ops import *  # noqa: F401,F403
from .ops.linalg_ops import *  # noqa: F401,F403
from .ops.composite_ops import global_norm, l2_normalize  # noqa: F401
from .ops.array_ops import eye  # noqa: F401
from .ops.matrix_ops import *  # noqa: F401,F403
from .ops.decomposition_ops import *  # noqa: F401,F403
from .ops.linalg_composites import *  # noqa: F401,F403
from .functions.expm import expm  # noqa: F401

from .base.traceback_filter import filter_public_functions as _filter_public_functions  # noqa: E402

_filter_public_functions(globals())  # errors leaving these show the user's frames only
