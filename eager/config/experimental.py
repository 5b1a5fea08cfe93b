"""`eager.config.experimental` ≈ `tf.config.experimental`: execution mode."""

from ..async_exec import get_synchronous_execution, set_synchronous_execution

__all__ = ["set_synchronous_execution", "get_synchronous_execution"]
