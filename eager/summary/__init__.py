"""`eager.summary` ≈ `tf.summary`: TensorBoard event files (defined in `eager.ops.summaries`,
`eager.ops.summary_ops` and `eager.functions.summary_trace`)."""

from ..ops.summaries import (SummaryWriter, audio, create_file_writer, create_noop_writer,
                             flush, histogram, image, record_if, scalar,
                             should_record_summaries, text, write)
from ..functions.summary_trace import trace_export, trace_off, trace_on
from . import experimental

__all__ = ["SummaryWriter", "audio", "create_file_writer", "create_noop_writer", "experimental",
           "flush", "histogram", "image", "record_if", "scalar", "should_record_summaries",
           "text", "trace_export", "trace_off", "trace_on", "write"]
