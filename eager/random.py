"""`eager.random` ≈ `tf.random`: the seeded random ops and `Generator`."""

from .ops.random_ops import *  # noqa: F401,F403
from .ops.stateful_random_ops import *  # noqa: F401,F403
from .ops.stateless_random_ops import *  # noqa: F401,F403
