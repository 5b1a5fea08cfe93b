"""`eager.version` ≈ `tf.version`: eager's own version (the same as `eager.__version__`), not
TensorFlow's."""

VERSION = "0.1.0"
#: eager is not built from a tagged git checkout; TensorFlow's field is kept for programs that
#: print it.
GIT_VERSION = "unknown"

__all__ = ["VERSION", "GIT_VERSION"]
