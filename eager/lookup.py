"""`eager.lookup` ≈ `tf.lookup`: static lookup tables (defined in `eager.ops.lookup_ops`)."""

from .ops.lookup_ops import (KeyValueTensorInitializer, StaticHashTable, StaticVocabularyTable,
                             TextFileIndex, TextFileInitializer)

__all__ = ["KeyValueTensorInitializer", "StaticHashTable", "StaticVocabularyTable",
           "TextFileIndex", "TextFileInitializer"]
