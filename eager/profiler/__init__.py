"""`eager.profiler` ≈ `tf.profiler.experimental` (simpler): record every op into a Chrome trace
(eager/profiler/tracing.py); `eager.profiler.experimental` has TensorFlow's names for it."""

from . import experimental
from .tracing import Slice, Trace, start, stop, trace

__all__ = ["trace", "start", "stop", "Trace", "Slice", "experimental"]
