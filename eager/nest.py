"""`eager.nest` ≈ `tf.nest`: nested structures of lists, tuples, namedtuples and dicts (defined
in `eager.base.nest`)."""

from .base.nest import (assert_same_structure, flatten, flatten_up_to,
                        flatten_with_joined_string_paths, is_nested, map_structure,
                        map_structure_up_to, pack_sequence_as)

__all__ = ["flatten", "pack_sequence_as", "map_structure", "is_nested", "assert_same_structure",
           "map_structure_up_to", "flatten_up_to", "flatten_with_joined_string_paths"]
