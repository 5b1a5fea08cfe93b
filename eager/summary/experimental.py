"""`eager.summary.experimental` ≈ `tf.summary.experimental`: the default step."""

from ..ops.summaries import get_step, set_step

__all__ = ["get_step", "set_step"]
