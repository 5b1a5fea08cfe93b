"""`eager.nest` ≈ `tf.nest`: nested structures of lists, tuples, namedtuples and dicts (defined
in `eager.base.nest`)."""

from .base.nest import flatten, is_nested, map_structure, pack_sequence_as

__all__ = ["flatten", "pack_sequence_as", "map_structure", "is_nested"]
