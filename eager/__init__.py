"""eager: an eager-mode tensor framework on numpy and CuPy with TensorFlow 2's semantics.

The top-level names are TensorFlow 2's top-level names for the same things; ops that TensorFlow
keeps only in a namespace (`tf.math.log`) are only in that namespace here (`eager.math.log`).
"""

from .base import ieee as _ieee
from .base import traceback_filter as _traceback_filter

from . import dtypes, errors, nest
from .dtypes import (DType, as_dtype, bool, complex64, complex128, double,  # noqa: A004
                          float16, float32, float64, half, int8, int16, int32, int64, resource,
                          string, uint8, uint16, uint32, uint64, variant)
from .base.tensor_shape import TensorShape
from .tensor import EagerTensor, IndexedSlices, Tensor, is_tensor
from .core.specs import TensorSpec
from .core.tensor_conversion import constant, convert_to_tensor, register_tensor_conversion_function
from .core.context import device, executing_eagerly, name_scope
from . import ops as _ops
from .ops.cumulative_ops import cumsum
from .ops.math_ops import abs, pow  # noqa: A004 - TensorFlow's names
from .ops.math_ops import (add, argmax, argmin, cast, clip_by_value, cos, divide, equal, exp,
                           greater, greater_equal, less, less_equal, logical_and, logical_not,
                           logical_or, maximum, minimum, multiply, negative, not_equal,
                           reduce_all, reduce_any, reduce_logsumexp, reduce_max, reduce_mean,
                           reduce_min, reduce_prod, reduce_sum, sigmoid, sign, sin, sqrt, square,
                           subtract, tanh, truediv, where)
from .ops.array_ops import range, slice  # noqa: A004 - TensorFlow's names
from .ops.array_ops import (broadcast_to, concat, expand_dims, eye, fill, gather, gather_nd,
                            identity, one_hot, ones, ones_like, pad, rank, reshape, scatter_nd,
                            shape, size, split, squeeze, stack, stop_gradient, strided_slice,
                            tile, transpose, unstack, zeros, zeros_like)
from .ops.linalg_ops import norm
from .ops.product_ops import einsum, matmul, tensordot
from .ops.composite_ops import (add_n, boolean_mask, clip_by_global_norm, clip_by_norm,
                                linspace, meshgrid, reverse, roll, sequence_mask)
from .ops.sort_ops import argsort, sort
from .ops.special_math_ops import floor, round, tan  # noqa: A004 - TensorFlow's names
from .ops.tensor_scatter import tensor_scatter_nd_add, tensor_scatter_nd_sub
from .ops.logging_ops import print  # noqa: A004
from .ops.random_initializers import random_normal_initializer, random_uniform_initializer
from . import bitwise, config, debugging, experimental, linalg, math, nn, random, test  # noqa: F401
from . import autograph, optimizers, profiler, train  # noqa: F401
from . import io, strings  # noqa: F401
from . import ragged, sparse  # noqa: F401
from .ops.sparse_tensor import SparseTensor, SparseTensorSpec
from .ops.ragged_tensor import RaggedTensor, RaggedTensorSpec
from . import image  # noqa: F401
from . import version  # noqa: F401
from .small_names import get_logger, group, type_spec_from_value
from . import data  # noqa: F401
from . import distribute  # noqa: F401
from . import keras  # noqa: F401
from . import saved_model  # noqa: F401
# TensorFlow 2.21's `tf.losses`, `tf.metrics` and `tf.initializers` are Keras 3's modules.
from .keras import initializers, losses, metrics  # noqa: F401
from .state.module import Module
from .autodiff import GradientTape, UnconnectedGradients, custom_gradient
from .variables import (Variable, VariableAggregation, VariableSynchronization,
                        variable_creator_scope)
from .function import function
from .functions.lifting import init_scope
from .functions.py_function import numpy_function, py_function
from .control_flow import cond, switch_case, while_loop
from .ops.tensor_array import TensorArray, TensorArraySpec
from .runtime.session import Session
from .functions.vectorized_map import vectorized_map
from .functions.functional_ops import foldl, foldr, map_fn, scan

#: ≈ `tf.newaxis`: index with it to insert an axis of length 1.
newaxis = None

# Kernels follow TensorFlow: 1/0 is inf and 0/0 is nan, silently. Where the user's settings make
# numpy's signal an exception, eager answers it with the IEEE result (eager.base.ieee); where it
# is only a warning, this filter keeps it from being printed. It applies only to warnings raised
# from eager's own modules, never to the user's numpy code.
_ieee.ignore_kernel_warnings()

__version__ = "0.1.0"

# Errors leaving the top-level functions show the user's frames only (eager.base.traceback_filter).
_traceback_filter.filter_public_functions(globals())
