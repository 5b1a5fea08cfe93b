"""`eager.saved_model` ≈ `tf.saved_model`: saving an object's variables and traced functions to
a directory, and loading them back without the Python code that defined them.

The format is eager's own (see `layout`, `graph_codec`, `function_codec`): JSON with typed
attributes and `.npy` constants, and the variables as an eager checkpoint. TensorFlow cannot
read it, and eager cannot read TensorFlow's protocol buffers.
"""

from .load import contains_saved_model, load
from .options import LoadOptions, SaveOptions
from .restored import RestoredFunction
from .save import DEFAULT_SERVING_SIGNATURE_DEF_KEY, save

__all__ = ["save", "load", "contains_saved_model", "SaveOptions", "LoadOptions",
           "DEFAULT_SERVING_SIGNATURE_DEF_KEY", "RestoredFunction"]
