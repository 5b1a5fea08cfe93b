"""TensorFlow API functions made of other ops: no kernel or gradient of their own.

Each follows TensorFlow's definition operation for operation where the result could differ
otherwise (`clip_by_norm`'s guard for a zero norm, `moments`' stop-gradient on the mean,
`clip_by_global_norm`'s NaN for an infinite norm, `linspace`'s exact last value), so values and
gradients match TensorFlow's; gradients, higher order included, come from the parts. Where a
function selects between branches with `where` (`elu`, `softplus`, `relu6`, `divide_no_nan`),
each branch is computed only on the values it is selected for, so that an unselected branch
never overflows and turns a gradient into NaN, and the gradient at a branch point is TensorFlow
kernel's (`relu6`: 0 at both ends; `softplus`: sigmoid(0) = 0.5).
"""

from __future__ import annotations

import builtins

import numpy as np

from ..base import dtypes as _dt
from ..tensor import IndexedSlices, Tensor
from ..core.tensor_conversion import convert_to_tensor
from . import math_ops as m
from .array_ops import (broadcast_to, concat, expand_dims, identity, reshape, squeeze,
                        stop_gradient)
from .array_ops import range as _range
from ..core.argument_conversion import as_tensor, same_type
from ..core.registry import OpDef, op_error
from ..core.shapes import (UnknownDimensionError, broadcast_shapes, normalize_axis, static_int,
                           static_ints)
from .slicing_ops import gather

__all__ = ["add_n", "bias_add", "leaky_relu", "elu", "l2_loss", "moments", "reduce_variance",
           "reduce_std", "clip_by_norm", "clip_by_global_norm", "global_norm", "l2_normalize",
           "embedding_lookup", "softplus", "log_sigmoid", "silu", "relu6", "squared_difference",
           "divide_no_nan", "is_nan", "is_inf", "is_finite", "boolean_mask", "reverse", "roll",
           "linspace", "meshgrid", "sequence_mask", "batch_normalization",
           "reduce_euclidean_norm", "count_nonzero"]


def _floating(x, what):
    x = as_tensor(x)
    if not x.dtype.is_floating:
        raise TypeError(f"{what}: expected a floating-point tensor, got {x.dtype.name}.")
    return x


def add_n(inputs, name=None):
    """≈ `tf.math.add_n`: the elementwise sum of a list of tensors of one shape and dtype (no
    broadcasting, as TensorFlow's AddN)."""
    if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and "
                         "shape")
    tensors = [convert_to_tensor(t) for t in inputs]
    first = tensors[0]
    if first.dtype.is_string:  # TensorFlow's AddN has no string kernel (AddV2 has)
        raise op_error("AddN", "input dtype string is not in the list of allowed values "
                               "(numeric dtypes); use eager.strings.join", tensors)
    for t in tensors[1:]:
        if t.dtype != first.dtype or not t.shape.is_compatible_with(first.shape):
            raise ValueError(f"inputs must be a list of at least one Tensor with the same dtype "
                             f"and shape; got {first.dtype.name}{first.shape} and "
                             f"{t.dtype.name}{t.shape}")
    total = tensors[0]
    for t in tensors[1:]:
        total = m.add(total, t)
    return total if len(tensors) > 1 else identity(total)


def bias_add(value, bias, data_format=None, name=None):
    """≈ `tf.nn.bias_add`: `bias` (1-D) added along the channel axis of `value` (rank >= 2):
    the last axis by default ("N...C"), axis 1 for a data format starting "NC"."""
    value, bias = as_tensor(value), as_tensor(bias, value.dtype)
    if bias.shape.rank != 1:
        raise ValueError(f"bias_add: bias must be 1-D, got shape {bias.shape}")
    rank = value.shape.rank
    if rank is not None and rank < 2:
        raise ValueError(f"bias_add: value must have rank >= 2, got shape {value.shape}")
    channels_first = data_format is not None and data_format.startswith("NC")
    axis = 1 if channels_first else -1
    channels = value.shape[axis] if rank is not None else None
    if channels is not None and bias.shape[0] is not None and channels != bias.shape[0]:
        raise ValueError(f"bias_add: bias has {bias.shape[0]} elements, value's channel axis "
                         f"({'1' if channels_first else 'last'}) has {channels} (value shape "
                         f"{value.shape})")
    if channels_first and rank > 2:
        bias = reshape(bias, [-1] + [1] * (rank - 2))
    return m.add(value, bias)


def leaky_relu(features, alpha=0.2, name=None):
    """≈ `tf.nn.leaky_relu`: x where x > 0, else alpha * x (gradient alpha at 0, as TF's).
    Integer inputs are computed in float32, as TensorFlow does."""
    x = as_tensor(features)
    if x.dtype.is_integer:
        x = m.cast(x, _dt.float32)
    return m.where(m.greater(x, 0), x, m.multiply(x, m.cast(alpha, x.dtype)))


def elu(features, name=None):
    """≈ `tf.nn.elu`: x where x > 0, else exp(x) - 1 (computed on min(x, 0), so that a large x
    gives no infinite unselected branch and no NaN gradient)."""
    x = _floating(features, "elu")
    negative = m.subtract(m.exp(m.minimum(x, m.cast(0, x.dtype))), m.cast(1, x.dtype))
    return m.where(m.greater(x, 0), x, negative)


def l2_loss(t, name=None):
    """≈ `tf.nn.l2_loss`: sum(t ** 2) / 2."""
    t = _floating(t, "l2_loss")
    return m.divide(m.reduce_sum(m.square(t)), m.cast(2, t.dtype))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """≈ `tf.nn.moments`: (mean, variance) over `axes`; float16 is computed in float32 and cast
    back, and the variance's gradient does not flow through the mean (as TensorFlow's)."""
    x = _floating(x, "moments")
    y = m.cast(x, _dt.float32) if x.dtype == _dt.float16 else x
    mean = m.reduce_mean(y, axes, keepdims=True)
    deviation = m.subtract(y, stop_gradient(mean))
    variance = m.reduce_mean(m.square(deviation), axes, keepdims=True)
    if not keepdims:
        mean = _squeeze_axes(mean, axes)
        variance = _squeeze_axes(variance, axes)
    if x.dtype == _dt.float16:
        return m.cast(mean, x.dtype), m.cast(variance, x.dtype)
    return mean, variance


def _squeeze_axes(t, axes):
    rank = t.shape.rank
    axes = [axes] if isinstance(axes, int) else list(axes)
    return squeeze(t, [a % rank for a in axes])


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """≈ `tf.math.reduce_variance`: the mean squared deviation from the mean (of the absolute
    deviation, for complex inputs: a real result)."""
    x = as_tensor(input_tensor)
    if not x.dtype._inexact:
        raise TypeError(f"reduce_variance: expected a floating-point or complex tensor, got "
                        f"{x.dtype.name}.")
    deviation = m.subtract(x, m.reduce_mean(x, axis, keepdims=True))
    squared = (m.square(m.abs(deviation)) if x.dtype.is_complex else m.square(deviation))
    return m.reduce_mean(squared, axis, keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """≈ `tf.math.reduce_std`: the square root of `reduce_variance`."""
    return m.sqrt(reduce_variance(input_tensor, axis, keepdims))


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """≈ `tf.clip_by_norm`: `t * clip_norm / max(l2norm(t), clip_norm)`, the norm over `axes`
    (all by default); a zero norm leaves `t` as it is, with a finite gradient. A negative
    `clip_norm` counts as 0, as TensorFlow documents (so `t` clips to zeros, and a zero `t` to
    0 / 0 = NaN); a NaN one stays NaN."""
    if isinstance(t, IndexedSlices):
        return IndexedSlices(clip_by_norm(t.values, clip_norm, axes), t.indices, t.dense_shape)
    t = _floating(t, "clip_by_norm")
    if np.isscalar(clip_norm):  # as TensorFlow: a Python or numpy scalar is clamped in Python
        clip_norm = 0 if clip_norm < 0 else clip_norm
    else:
        clip_norm = m.maximum(clip_norm, 0)
    clip_norm = m.cast(clip_norm, t.dtype)
    l2sum = m.reduce_sum(m.square(t), axes, keepdims=True)
    positive = m.greater(l2sum, 0)
    safe = m.where(positive, l2sum, m.cast(1, t.dtype))  # no sqrt'(0) in the gradient
    l2norm = m.where(positive, m.sqrt(safe), l2sum)
    return m.divide(m.multiply(t, clip_norm), m.maximum(l2norm, clip_norm))


def global_norm(t_list, name=None):
    """≈ `tf.linalg.global_norm`: sqrt of the sum of the squares of every element of every tensor
    in `t_list` (None entries ignored; float16 computed in float32)."""
    if isinstance(t_list, Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError("t_list should be a sequence of tensors")
    values = [t.values if isinstance(t, IndexedSlices) else t for t in t_list if t is not None]
    if not values:
        return convert_to_tensor(0.0)
    squares = []
    for v in values:
        v = _floating(v, "global_norm")
        if v.dtype == _dt.float16:
            v = m.cast(v, _dt.float32)
        squares.append(m.reduce_sum(m.square(v)))
    dtype = squares[0].dtype
    return m.sqrt(add_n([m.cast(s, dtype) for s in squares]))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """≈ `tf.clip_by_global_norm`: every tensor scaled by `clip_norm / max(global_norm,
    clip_norm)`; returns (the clipped list, the global norm). An infinite or NaN norm makes every
    value NaN, as in TensorFlow; None entries stay None."""
    if isinstance(t_list, Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError("t_list should be a sequence of tensors")
    norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    one = m.cast(1, norm.dtype)
    clip = m.cast(clip_norm, norm.dtype)
    scale = m.multiply(clip, m.minimum(m.divide(one, norm), m.divide(one, clip)))
    scale = m.add(scale, m.subtract(norm, norm))  # NaN when the norm is infinite or NaN
    clipped = []
    for t in t_list:
        if t is None:
            clipped.append(None)
        elif isinstance(t, IndexedSlices):
            clipped.append(IndexedSlices(m.multiply(t.values, m.cast(scale, t.values.dtype)),
                                         t.indices, t.dense_shape))
        else:
            t = as_tensor(t)
            clipped.append(m.multiply(t, m.cast(scale, t.dtype)))
    return clipped, norm


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """≈ `tf.math.l2_normalize`: `x / sqrt(max(sum(x ** 2, axis), epsilon))`."""
    if dim is not None:
        axis = dim
    x = _floating(x, "l2_normalize")
    square_sum = m.reduce_sum(m.square(x), axis, keepdims=True)
    return m.multiply(x, m.rsqrt(m.maximum(square_sum, m.cast(epsilon, x.dtype))))


def embedding_lookup(params, ids, max_norm=None, name=None):
    """≈ `tf.nn.embedding_lookup` with one tensor or variable of `params` (its rows `ids`; the
    gradient of a variable is IndexedSlices, as a gather's)."""
    if max_norm is not None:
        raise NotImplementedError("embedding_lookup: max_norm is not supported.")
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise NotImplementedError("embedding_lookup: sharded params (a list of more than "
                                      "one tensor) are not supported.")
        params = params[0]
    return gather(params, ids)


def softplus(features, name=None):
    """≈ `tf.math.softplus`: log(1 + exp(x)), stably (x + log1p(exp(-x)) for x > 0), with
    gradient sigmoid(x) everywhere (0.5 at 0). Each branch sees only the x it is selected for,
    so neither overflows."""
    x = _floating(features, "softplus")
    zero = m.cast(0, x.dtype)
    positive = m.greater(x, zero)
    x_pos = m.where(positive, x, zero)
    x_neg = m.where(positive, zero, x)
    return m.where(positive, m.add(x_pos, m.log1p(m.exp(m.negative(x_pos)))),
                   m.log1p(m.exp(x_neg)))


def log_sigmoid(x, name=None):
    """≈ `tf.math.log_sigmoid`: log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    return m.negative(softplus(m.negative(_floating(x, "log_sigmoid"))))


def silu(features, beta=1.0, name=None):
    """≈ `tf.nn.silu` (also `tf.nn.swish`): x * sigmoid(beta * x)."""
    x = _floating(features, "silu")
    return m.multiply(x, m.sigmoid(m.multiply(x, m.cast(beta, x.dtype))))


def relu6(features, name=None):
    """≈ `tf.nn.relu6`: min(max(x, 0), 6) in `x`'s dtype (integers too), NaN staying NaN, with
    TensorFlow's gradient: 1 strictly inside (0, 6), 0 at both ends, outside and at NaN."""
    x = as_tensor(features)
    zero, six = m.cast(0, x.dtype), m.cast(6, x.dtype)
    inside = m.logical_and(m.greater(x, zero), m.less(x, six))
    outside = m.where(m.greater_equal(x, six), six, zero)
    if x.dtype.is_floating:  # NaN is neither inside nor outside: x * 0 is it, with no gradient
        outside = m.where(m.less_equal(x, zero), zero,
                          m.where(m.greater_equal(x, six), six, m.multiply(x, zero)))
    return m.where(inside, x, outside)


#: The argument rules of TensorFlow's SquaredDifference (made of Sub and Mul here): one dtype for
#: both, and only these (no 8/16-bit or unsigned integers, no bool).
_SQUARED_DIFFERENCE_ARGS = OpDef("SquaredDifference", None, None, dtypes=frozenset(
    {_dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.int64, _dt.complex64,
     _dt.complex128}))


def squared_difference(x, y, name=None):
    """≈ `tf.math.squared_difference`: (x - y) * conj(x - y), elementwise, broadcasting. Other
    dtypes than TensorFlow's kernel has (bool, int8, int16, unsigned) are its error, naming
    SquaredDifference: InvalidArgumentError eagerly, TypeError while tracing."""
    x, y = same_type(_SQUARED_DIFFERENCE_ARGS, x, y)
    difference = m.subtract(x, y)
    if difference.dtype.is_complex:
        return m.multiply(difference, m.conj(difference))
    return m.square(difference)


def divide_no_nan(x, y, name=None):
    """≈ `tf.math.divide_no_nan`: x / y, and 0 where y is 0, whatever x is there (inf and NaN
    too); also its gradient, as the division only ever sees nonzero divisors. Converted as
    TensorFlow's wrapper converts: `y` with `x`'s dtype as a hint (`x` with `y`'s dtype when only
    `y` is a tensor), equal dtypes or a TypeError, integers divided in the float dtype `truediv`
    uses (so `divide_no_nan(int32, int32)` is float64), bools refused."""
    if isinstance(y, Tensor) and not isinstance(x, Tensor):
        y = as_tensor(y)
        x = as_tensor(x, y.dtype)
    else:
        x = as_tensor(x)
        y = convert_to_tensor(y, dtype_hint=x.dtype)
    if x.dtype != y.dtype:
        raise TypeError(f"divide_no_nan: `x` and `y` must have the same dtype, got "
                        f"{x.dtype!r} != {y.dtype!r}.")
    if x.dtype.is_bool or not (x.dtype.is_integer or x.dtype._inexact):
        raise TypeError(f"Invalid dtype {x.dtype!r} in divide_no_nan: expected an integer, "
                        "floating or complex dtype.")
    target = m.truediv_float_dtype(x.dtype)
    if target is not None:
        x, y = m.cast(x, target), m.cast(y, target)
    zero = m.cast(0, y.dtype)
    nonzero = m.not_equal(y, zero)
    safe = m.where(nonzero, y, m.cast(1, y.dtype))
    return m.where(nonzero, m.truediv(x, safe), zero)


def is_nan(x, name=None):
    """≈ `tf.math.is_nan` (floating inputs)."""
    x = _floating(x, "is_nan")
    return m.not_equal(x, x)


def is_inf(x, name=None):
    """≈ `tf.math.is_inf` (floating inputs)."""
    x = _floating(x, "is_inf")
    return m.equal(m.abs(x), m.cast(float("inf"), x.dtype))


def is_finite(x, name=None):
    """≈ `tf.math.is_finite` (floating inputs)."""
    x = _floating(x, "is_finite")
    return m.logical_not(m.logical_or(is_nan(x), is_inf(x)))


def boolean_mask(tensor, mask, axis=None, name=None):
    """≈ `tf.boolean_mask`: the elements (or slices) of `tensor` where the k-D boolean `mask`
    is true, its k dimensions (from `axis`) flattened into one of unknown length; a gather, so
    the gradient is IndexedSlices-shaped as TensorFlow's."""
    tensor, mask = as_tensor(tensor), as_tensor(mask)
    if not mask.dtype.is_bool:
        raise TypeError(f"boolean_mask: mask must be a bool tensor, got {mask.dtype.name}.")
    k = mask.shape.rank
    if k is None or k == 0:
        raise ValueError("boolean_mask: mask's rank must be known and at least 1, got shape "
                         f"{mask.shape}")
    axis = 0 if axis is None else static_int("boolean_mask", axis, "axis")
    shape = tensor.shape
    if shape.rank is None or not shape[axis:axis + k].is_compatible_with(mask.shape):
        raise ValueError(f"boolean_mask: shapes {shape} (from axis {axis}) and {mask.shape} are "
                         "incompatible")
    dims = list(shape)
    flat = [d if d is not None else -1 for d in dims[:axis]] + [-1] + list(dims[axis + k:])
    indices = reshape(m.where(reshape(mask, [-1])), [-1])
    return gather(reshape(tensor, flat), indices, axis=axis)


def reverse(tensor, axis, name=None):
    """≈ `tf.reverse`: the order of the elements along each axis in `axis` reversed."""
    tensor = as_tensor(tensor)
    rank = tensor.shape.rank
    axes = set()
    for a in static_ints("ReverseV2", axis, "axis"):
        a = normalize_axis("ReverseV2", a, rank)
        if a in axes:  # TensorFlow's kernel refuses it (reversing twice would be a no-op)
            raise op_error("ReverseV2", f"axis {a} specified more than once.")
        axes.add(a)
    return tensor[tuple(builtins.slice(None, None, -1) if i in axes else builtins.slice(None)
                        for i in builtins.range(rank))]


def roll(input, shift, axis, name=None):  # noqa: A002 - TensorFlow's argument name
    """≈ `tf.roll`: elements shifted by `shift` along `axis` (both ints or equal-length lists),
    wrapping around; shifts on one axis add up."""
    x = as_tensor(input)
    shifts = static_ints("Roll", shift, "shift")
    axes = static_ints("Roll", axis, "axis")
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift and axis must have the same length, got {len(shifts)} "
                         f"and {len(axes)}")
    total = {}
    for s_, a in zip(shifts, axes):
        a = normalize_axis("Roll", a, x.shape.rank)
        total[a] = total.get(a, 0) + s_
    for a, s_ in total.items():
        n = x.shape[a]
        if n is None:
            raise ValueError(f"roll: axis {a} needs a static length, got shape {x.shape}")
        s_ = s_ % n if n else 0
        if s_:
            head = (builtins.slice(None),) * a
            x = concat([x[head + (builtins.slice(n - s_, None),)],
                        x[head + (builtins.slice(None, n - s_),)]], a)
    return x


def linspace(start, stop, num, name=None, axis=0):
    """≈ `tf.linspace`: `num` evenly spaced values from `start` to `stop` (which broadcast
    together) along a new dimension `axis`, computed operation for operation as TensorFlow's
    `linspace_nd`: `delta = (stop - start) / (num - 1)` in the dtype integer division gives
    (int32 bounds make float64, int8 float32), the values in between `start + delta * k` for
    k = 1 .. num - 2, and the ends exactly `start` and `stop`. So `linspace(0., inf, 3)` is
    [0, inf, inf] and `linspace(0., nan, 3)` [0, nan, nan] (the first value is `start` itself,
    never `start + delta * 0`); `num` 0 gives an empty result, a negative `num` Range's error."""
    start = as_tensor(start)
    stop = as_tensor(stop, start.dtype)
    num = static_int("LinSpace", num, "num")
    shape = broadcast_shapes("BroadcastArgs", start.shape, stop.shape)
    if start.shape != shape:
        start = broadcast_to(start, list(shape))
    if stop.shape != shape:
        stop = broadcast_to(stop, list(shape))
    start, stop = expand_dims(start, axis), expand_dims(stop, axis)
    rank = start.shape.rank
    axis = normalize_axis("LinSpace", axis, rank)
    n_steps = builtins.max(num - 1, 1)
    delta = m.truediv(m.subtract(stop, start), m.cast(n_steps, stop.dtype))
    start, stop = m.cast(start, delta.dtype), m.cast(stop, delta.dtype)
    steps = _range(1, n_steps if num >= 0 else -1, dtype=_dt.int64)  # num < 0: Range's error
    steps = reshape(m.cast(steps, delta.dtype), [-1 if i == axis else 1 for i in range(rank)])
    values = concat([start, m.add(start, m.multiply(delta, steps)), stop], axis)
    if num >= 2:
        return values
    return values[(builtins.slice(None),) * axis + (builtins.slice(0, num),)]


def meshgrid(*args, **kwargs):
    """≈ `tf.meshgrid`: N-D coordinate arrays from 1-D ones; `indexing="xy"` (the default,
    Cartesian: the first two output axes swapped) or `"ij"` (matrix)."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid: unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [reshape(as_tensor(a), [-1]) for a in args]
    sizes = [v.shape[0] for v in vectors]
    if indexing == "xy" and len(vectors) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    outputs = []
    for i, v in enumerate(vectors):
        place = i if indexing == "ij" or len(vectors) < 2 else (1 - i if i < 2 else i)
        shape = [1] * len(vectors)
        shape[place] = -1
        outputs.append(broadcast_to(reshape(v, shape), sizes))
    return outputs


def sequence_mask(lengths, maxlen=None, dtype=_dt.bool, name=None):
    """≈ `tf.sequence_mask`: `mask[..., j] = j < lengths[...]`; `maxlen` defaults to the largest
    length (in a traced function, possibly known only when it runs)."""
    lengths = as_tensor(lengths)
    if not lengths.dtype.is_integer:
        raise TypeError(f"sequence_mask: lengths must be integers, got {lengths.dtype.name}.")
    if maxlen is None:
        maxlen = m.reduce_max(lengths)
    try:
        maxlen = static_int("SequenceMask", maxlen, "maxlen")
    except UnknownDimensionError:  # a scalar known only at run time: range reads it then
        pass
    row = m.cast(_range(maxlen), lengths.dtype)
    mask = m.less(row, expand_dims(lengths, -1) if lengths.shape.rank else lengths)
    return mask if _dt.as_dtype(dtype) is _dt.bool else m.cast(mask, dtype)


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """≈ `tf.nn.batch_normalization`: `(x - mean) * scale / sqrt(variance + epsilon) + offset`,
    computed as TensorFlow does (one multiply by the scaled inverse, then one add)."""
    x = _floating(x, "batch_normalization")
    inv = m.rsqrt(m.add(as_tensor(variance, x.dtype), m.cast(variance_epsilon, x.dtype)))
    if scale is not None:
        inv = m.multiply(inv, as_tensor(scale, x.dtype))
    shift = m.negative(m.multiply(as_tensor(mean, x.dtype), inv))
    if offset is not None:
        shift = m.add(as_tensor(offset, x.dtype), shift)
    return m.add(m.multiply(x, inv), shift)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """≈ `tf.math.reduce_euclidean_norm` for floating and complex inputs: sqrt(sum(|x| ** 2))."""
    x = as_tensor(input_tensor)
    if not x.dtype._inexact:
        raise TypeError(f"reduce_euclidean_norm: expected a floating-point or complex tensor, "
                        f"got {x.dtype.name}.")
    if x.dtype.is_complex:  # TensorFlow's EuclideanNorm keeps the input's (complex) dtype
        return m.cast(m.sqrt(m.reduce_sum(m.square(m.abs(x)), axis, keepdims)), x.dtype)
    return m.sqrt(m.reduce_sum(m.square(x), axis, keepdims))


def count_nonzero(input, axis=None, keepdims=None, dtype=_dt.int64, name=None):  # noqa: A002
    """≈ `tf.math.count_nonzero`: how many elements are not zero (not False, for bools)."""
    x = as_tensor(input)
    nonzero = m.not_equal(x, m.cast(0, x.dtype)) if not x.dtype.is_bool else x
    return m.reduce_sum(m.cast(nonzero, dtype), axis, bool(keepdims))
