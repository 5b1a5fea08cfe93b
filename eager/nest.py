"""`eager.nest` ≈ `tf.nest`: nested structures of lists, tuples, namedtuples and dicts (defined
in `eager.base.nest`)."""

from .base.nest import __all__, flatten, is_nested, map_structure, pack_sequence_as  # noqa: F401
