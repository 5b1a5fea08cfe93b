"""`eager.nn` ≈ `tf.nn`."""

from .ops.composite_ops import (batch_normalization, bias_add, elu,  # noqa: F401
                                embedding_lookup, l2_loss, l2_normalize, leaky_relu, log_sigmoid,
                                moments, relu6, silu, softplus)
from .ops.composite_ops import silu as swish  # noqa: F401 - TensorFlow's other name
from .ops.math_ops import sigmoid  # noqa: F401
from .ops.sort_ops import top_k  # noqa: F401
from .ops.counting_ops import in_top_k  # noqa: F401
from .ops.loss_scaling import compute_average_loss, scale_regularization_loss  # noqa: F401
from .ops.nn_ops import *  # noqa: F401,F403
from .ops.conv_transpose_ops import conv1d_transpose, conv2d_transpose  # noqa: F401
from .ops.random_ops import dropout  # noqa: F401
from .ops.nn_composites import *  # noqa: F401,F403

from .base.traceback_filter import filter_public_functions as _filter_public_functions  # noqa: E402

_filter_public_functions(globals())  # errors leaving these show the user's frames only
