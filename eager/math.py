"""`eager.math` ≈ `tf.math` (the same names TensorFlow 2 places there)."""

from .ops.composite_ops import (add_n, count_nonzero, divide_no_nan, is_finite, is_inf, is_nan,
                                l2_normalize, log_sigmoid, reduce_euclidean_norm, reduce_std,
                                reduce_variance, softplus, squared_difference)
from .ops.cumulative_ops import cumprod, cumsum
from .ops.segment_ops import segment_sum, unsorted_segment_mean, unsorted_segment_sum
from .ops.math_ops import abs, pow  # noqa: A004 - TensorFlow's names
from .ops.math_ops import (add, argmax, argmin, conj, cos, divide, equal, exp, floordiv,
                           floormod, greater, greater_equal, imag, less, less_equal, log, log1p,
                           logical_and, logical_not, logical_or, logical_xor, maximum, minimum,
                           mod, multiply, negative, not_equal, real, reduce_all, reduce_any,
                           reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod,
                           reduce_sum, rsqrt, sigmoid, sign, sin, sqrt, square, subtract, tanh,
                           truediv)
from .ops.sort_ops import top_k
from .ops.small_composites import confusion_matrix
from .ops.special_math_ops import round  # noqa: A004 - TensorFlow's name
from .ops.special_math_ops import (ceil, digamma, erf, erfc, floor, lgamma, polygamma,
                                   reciprocal, rint, tan, zeta)

__all__ = [
    "abs", "add", "argmax", "argmin", "conj", "cos", "cumprod", "cumsum", "divide", "equal", "exp",
    "floordiv", "floormod", "greater", "greater_equal", "imag", "less", "less_equal", "log",
    "log1p", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum", "minimum",
    "mod", "multiply", "negative", "not_equal", "pow", "real", "reduce_all", "reduce_any",
    "reduce_logsumexp", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum",
    "rsqrt", "sigmoid", "sign", "sin", "sqrt", "square", "subtract", "tanh", "truediv", "top_k",
    "add_n", "l2_normalize", "reduce_std", "reduce_variance", "divide_no_nan", "is_finite",
    "is_inf", "is_nan", "log_sigmoid", "softplus", "squared_difference", "count_nonzero",
    "reduce_euclidean_norm", "segment_sum", "unsorted_segment_mean", "unsorted_segment_sum",
    "ceil", "digamma", "erf", "erfc", "floor", "lgamma", "polygamma", "reciprocal", "rint",
    "round", "tan", "zeta", "confusion_matrix",
]
