"""`eager.errors` ≈ `tf.errors`: op failures with TensorFlow's classes and codes (defined in
`eager.base.errors`)."""

from .base.errors import *  # noqa: F403 - exactly the names of its __all__
from .base.errors import __all__  # noqa: F401
from .base.errors import exception_type_from_error_code  # noqa: F401
