"""`eager.bitwise` ≈ `tf.bitwise`."""

from .ops.math_ops import bitwise_and, bitwise_or, bitwise_xor, invert

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert"]

from .base.traceback_filter import filter_public_functions as _filter_public_functions  # noqa: E402

_filter_public_functions(globals())  # errors leaving these show the user's frames only
