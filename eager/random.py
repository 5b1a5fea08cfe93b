"""`eager.random` ≈ `tf.random`: the seeded random ops and `Generator`."""

from .ops.random_ops import *  # noqa: F401,F403
from .ops.stateful_random_ops import *  # noqa: F401,F403
from .ops.stateless_random_ops import *  # noqa: F401,F403

from .base.traceback_filter import filter_public_functions as _filter_public_functions  # noqa: E402

_filter_public_functions(globals())  # errors leaving these show the user's frames only
