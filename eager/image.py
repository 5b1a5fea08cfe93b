"""`eager.image` ≈ `tf.image`: resizing, pixel operations and PNG coding."""

from .ops.image_ops import *  # noqa: F401,F403
from .ops.image_ops import __all__ as _pixels
from .ops.image_resize import *  # noqa: F401,F403
from .ops.image_resize import __all__ as _resize
from .ops.image_codec_ops import *  # noqa: F401,F403
from .ops.image_codec_ops import __all__ as _codecs

__all__ = [*_resize, *_pixels, *_codecs]
