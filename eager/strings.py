"""`eager.strings` ≈ `tf.strings`: string ops (defined in `eager.ops.string_ops`)."""

from .ops.string_ops import (as_string, format, join, length, lower,  # noqa: A004
                             reduce_join, regex_full_match, regex_replace, strip, substr,
                             to_number, unicode_encode, upper)
from .ops.string_split_ops import (bytes_split, split, unicode_decode,
                                   unicode_decode_with_offsets, unicode_split)
from .ops.string_hash_ops import to_hash_bucket_fast, to_hash_bucket_strong

__all__ = ["as_string", "format", "join", "length", "lower", "reduce_join", "regex_full_match",
           "regex_replace", "strip", "substr", "to_number", "unicode_decode", "unicode_encode",
           "upper", "split", "bytes_split", "unicode_split", "unicode_decode_with_offsets",
           "to_hash_bucket_fast", "to_hash_bucket_strong"]

from .base.traceback_filter import filter_public_functions as _filter_public_functions  # noqa: E402

_filter_public_functions(globals())  # errors leaving these show the user's frames only
