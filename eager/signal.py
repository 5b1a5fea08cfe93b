"""`eager.signal` ≈ `tf.signal`: Fourier transforms, windows, framing, STFTs and mel features."""

from .ops.fft_ops import *  # noqa: F401,F403
from .ops.fft_ops import __all__ as _transforms
from .ops.signal_ops import *  # noqa: F401,F403
from .ops.signal_ops import __all__ as _composites

__all__ = [*_transforms, *_composites]
