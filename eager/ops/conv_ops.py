"""Sliding-window ops over images (`eager.nn.conv2d`, `eager.nn.max_pool2d`).

Both share TensorFlow's window arithmetic (`_window`: output size and padding per spatial axis,
the same function for shape inference and for the kernel) and the same argument parsing. Both
kernels are vectorised with a strided *view* of the padded input, shape
[N, out_h, out_w, k_h, k_w, C], that costs no copy: max pooling reduces it directly, convolution
reshapes it into the im2col matrix and does one batched matmul (one per group). No Python loop
runs over pixels or taps.

Beyond TF's CPU kernels (which refuse them), NCHW and grouped convolutions (input depth a multiple
of the filter's input depth, as TF's GPU kernel accepts) are supported on every device.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import UnimplementedError
from ..base.ieee import add_reduce
from ..core.specs import TensorSpec
from ..base.tensor_shape import UNKNOWN_SHAPE
from ..core.argument_conversion import as_tensor, check_dtype, same_type
from ..core.dispatch import execute
from ..core.registry import op_error, register_op

__all__ = ["conv2d", "max_pool2d"]


# -----------------------------------------------------------------------------------------------
# Window arithmetic and argument parsing (shared)
# -----------------------------------------------------------------------------------------------

def _window(op_name, size, k, stride, dilation, padding, pads):
    """(output size, pad before, pad after) along one spatial axis, by TensorFlow's rule.

    VALID: no padding. EXPLICIT: the given pads. SAME: output ceil(size / stride), and
    pad_total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0) split with the extra
    pixel at the end. Unknown `size` gives (None, None, None). A negative output size is
    TensorFlow's InvalidArgumentError; the division truncates toward zero as TF's C++ does.
    """
    if size is None or k is None:
        if padding == "SAME" and size is not None:
            return -(-size // stride), None, None
        return None, None, None
    effective = (k - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + effective - size, 0)
        return out, total // 2, total - total // 2
    before, after = pads if padding == "EXPLICIT" else (0, 0)
    n = size + before + after - effective + stride
    out = n // stride if n >= 0 else -(-n // stride)
    if out < 0:
        raise op_error(op_name, f"Computed output size would be negative: {out} [input_size: "
                                f"{size}, effective_filter_size: {effective}, stride: {stride}]")
    return out, before, after


def _data_format(op_name, data_format):
    if data_format is None:
        return "NHWC"
    if data_format in ("NHWC", "NCHW"):
        return data_format
    if data_format == "NCHW_VECT_C":
        raise NotImplementedError(f"{op_name}: data_format 'NCHW_VECT_C' is not supported.")
    raise ValueError(f"{op_name}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}.")


def _four(op_name, value, what, data_format):
    """TF's `_get_sequence` for 2 spatial dims: an int, or a list of 1, 2 or 4 ints, as a 4-tuple
    in `data_format` order (batch and channel entries 1 unless given)."""
    if value is None:
        return (1, 1, 1, 1)
    if hasattr(value, "numpy") or isinstance(value, np.ndarray):
        value = np.asarray(value).tolist()
    if not isinstance(value, (list, tuple)):
        value = [value]
    try:
        value = [operator.index(v) for v in value]
    except TypeError:
        raise TypeError(f"{op_name}: {what} must be an int or a list of ints, got "
                        f"{value!r}.") from None
    if len(value) == 1:
        value = value * 2
    if len(value) == 2:
        return (1, 1, *value) if data_format == "NCHW" else (1, *value, 1)
    if len(value) == 4:
        return tuple(value)
    raise ValueError(f"{op_name}: {what} should be of length 1, 2 or 4. Received: {what}="
                     f"{value} of length {len(value)}")


def _spatial(four, data_format):
    return (four[2], four[3]) if data_format == "NCHW" else (four[1], four[2])


def _outer(four, data_format):
    """The batch and channel entries of a 4-tuple."""
    return (four[0], four[1]) if data_format == "NCHW" else (four[0], four[3])


def _padding(op_name, padding, data_format):
    """('SAME' | 'VALID' | 'EXPLICIT', explicit ((top, bottom), (left, right)) or ())."""
    if isinstance(padding, str):
        if padding in ("SAME", "VALID"):
            return padding, ()
        if padding == "EXPLICIT":
            raise ValueError(f'{op_name}: "EXPLICIT" is not a valid value for `padding`. To use '
                             "explicit padding, `padding` must be a list.")
        # TensorFlow: an attr value outside the allowed list ('valid' included).
        raise op_error(op_name, f"padding must be 'SAME', 'VALID' or a list of 4 [before, "
                                f"after] pairs; got {padding!r}")
    if isinstance(padding, np.ndarray):
        padding = padding.tolist()
    if not isinstance(padding, (list, tuple)):
        raise ValueError(f"{op_name}: padding must be 'SAME', 'VALID' or a list of 4 [before, "
                         f"after] pairs; got {padding!r}.")
    pairs = []
    for pair in padding:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"{op_name}: when `padding` is a list, each element must be a "
                             f"list/tuple of size 2. Received: padding={padding}")
        try:
            pairs.append((operator.index(pair[0]), operator.index(pair[1])))
        except TypeError:
            raise TypeError(f"{op_name}: explicit paddings must be ints, got {padding}.") from None
    if len(pairs) != 4:
        raise ValueError(f"{op_name}: when padding is a list, it must be of size 4. Received: "
                         f"padding={padding} of size {len(pairs)}")
    if any(p < 0 for pair in pairs for p in pair):
        raise op_error(op_name, f"All elements of explicit_paddings must be nonnegative, got "
                                f"{padding}")
    if any(_outer(pairs, data_format)[i] != (0, 0) for i in range(2)):
        raise op_error(op_name, "Nonzero explicit padding in the batch or depth dimensions is "
                                "not supported")
    return "EXPLICIT", _spatial(pairs, data_format)


def _to_nhwc(xp, x, data_format):
    return xp.moveaxis(x, -3, -1) if data_format == "NCHW" else x


def _from_nhwc(xp, y, data_format):
    return xp.ascontiguousarray(xp.moveaxis(y, -1, -3)) if data_format == "NCHW" else y


def _windows(xp, x, out_hw, k_hw, strides, dilations, pads, fill):
    """A [N, out_h, out_w, k_h, k_w, C] strided view of `x` ([N, H, W, C]) padded with `fill`."""
    (pt, pb), (pl, pr) = pads
    if pt or pb or pl or pr:
        x = xp.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill)
    s_n, s_h, s_w, s_c = x.strides
    shape = (x.shape[0], *out_hw, *k_hw, x.shape[3])
    strides = (s_n, s_h * strides[0], s_w * strides[1], s_h * dilations[0], s_w * dilations[1],
               s_c)
    return xp.lib.stride_tricks.as_strided(x, shape, strides)


def _geometry(op_name, hw, k_hw, strides, dilations, padding, explicit):
    pads = explicit or ((0, 0), (0, 0))
    return [_window(op_name, hw[i], k_hw[i], strides[i], dilations[i], padding, pads[i])
            for i in range(2)]


def _spatial_shape(shape, data_format):
    return (shape[-2], shape[-1]) if data_format == "NCHW" else (shape[-3], shape[-2])


def _with_spatial(shape, hw, channels, data_format):
    batch = list(shape[:-3])
    if data_format == "NCHW":
        return batch + [channels, *hw]
    return batch + [*hw, channels]


# -----------------------------------------------------------------------------------------------
# conv2d
# -----------------------------------------------------------------------------------------------

_CONV = "Conv2D"


def _conv2d_ranks(x_rank, w_rank, x_shape, w_shape):
    if w_rank is not None and w_rank != 4:
        raise op_error(_CONV, f"filter must be 4-dimensional: {list(w_shape)}")
    if x_rank is not None and x_rank < 4:
        raise op_error(_CONV, f"input must be at least 4-dimensional: {list(x_shape)}")


def _conv2d_infer(x, w, strides=(1, 1), dilations=(1, 1), padding="VALID", explicit_paddings=(),
                  data_format="NHWC"):
    sx, sw = x.shape, w.shape
    _conv2d_ranks(sx.rank, sw.rank, sx, sw)
    kh, kw, cin, cout = sw if sw._rank_known else (None,) * 4
    if 0 in (kh, kw, cin):
        raise op_error(_CONV, f"filter spatial sizes and input depth must be positive, got "
                              f"filter shape {list(sw)}", [x, w])
    if not sx._rank_known:
        return TensorSpec(UNKNOWN_SHAPE, x.dtype)
    depth = sx[-3] if data_format == "NCHW" else sx[-1]
    if depth is not None and cin is not None:
        if depth % cin:
            raise op_error(_CONV, f"input depth must be evenly divisible by filter depth: {depth}"
                                  f" vs {cin}", [x, w])
        groups = depth // cin
        if cout is not None and cout % groups:
            raise op_error(_CONV, f"output depth must be evenly divisible by number of groups: "
                                  f"{cout} vs {groups}", [x, w])
    hw = _spatial_shape(sx, data_format)
    out = _geometry(_CONV, hw, (kh, kw), strides, dilations, padding, explicit_paddings)
    return TensorSpec(_with_spatial(sx, (out[0][0], out[1][0]), cout, data_format), x.dtype)


def _conv2d_kernel(xp, x, w, strides=(1, 1), dilations=(1, 1), padding="VALID",
                   explicit_paddings=(), data_format="NHWC"):
    _conv2d_ranks(x.ndim, w.ndim, x.shape, w.shape)
    dtype = x.dtype
    x = _to_nhwc(xp, x, data_format)
    batch, (h, wd, depth) = x.shape[:-3], x.shape[-3:]
    n = math.prod(batch)
    x = x.reshape(n, h, wd, depth)
    kh, kw, cin, cout = w.shape
    if 0 in (kh, kw):  # numpy would silently make zeros
        raise op_error(_CONV, f"filter spatial sizes must be positive, got {list(w.shape)}")
    groups = depth // cin
    (oh, pt, pb), (ow, pl, pr) = _geometry(_CONV, (h, wd), (kh, kw), strides, dilations, padding,
                                           explicit_paddings)
    view = _windows(xp, x, (oh, ow), (kh, kw), strides, dilations, ((pt, pb), (pl, pr)), 0)
    m, taps, og = n * oh * ow, kh * kw * cin, cout // groups
    # im2col per group: [G, M, taps] @ [G, taps, og] -> [G, M, og]
    cols = view.reshape(n, oh, ow, kh, kw, groups, cin).transpose(5, 0, 1, 2, 3, 4, 6)
    cols = cols.reshape(groups, m, taps)
    filt = w.reshape(kh * kw, cin, groups, og).transpose(2, 0, 1, 3).reshape(groups, taps, og)
    if dtype == np.float16:  # accumulate in float32
        cols, filt = cols.astype(np.float32), filt.astype(np.float32)
    out = xp.matmul(cols, filt).transpose(1, 0, 2).reshape(*batch, oh, ow, cout)
    return _from_nhwc(xp, out.astype(dtype, copy=False), data_format)


CONV2D = register_op(_CONV, _conv2d_kernel, _conv2d_infer,
                     dtypes=frozenset({_dt.float16, _dt.float32, _dt.float64, _dt.int32}))


def _check_outer(op_name, four, data_format, what):
    if _outer(four, data_format) != (1, 1):
        raise op_error(op_name, f"Current implementation does not yet support {what} in the "
                                f"batch and depth dimensions (got {what}={list(four)}).")
    if min(_spatial(four, data_format)) < 1:
        raise op_error(op_name, f"{what} must be positive, got {what}={list(four)}.")


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None,  # noqa: A002
           name=None):
    """≈ `tf.nn.conv2d`: 2-D cross-correlation of `input` ([..., H, W, C] for NHWC, rank >= 4,
    leading axes are batch) with `filters` [k_h, k_w, C / groups, out_channels].

    `strides` and `dilations` are an int or a list of 1, 2 or 4 ints; `padding` is 'SAME', 'VALID'
    or an explicit list [[0, 0], [top, bottom], [left, right], [0, 0]] (in `data_format` order).
    SAME pads pad_total = max((ceil(in / s) - 1) * s + (k - 1) * d + 1 - in, 0) zeros, the extra
    one at the end, exactly as TensorFlow. float16 accumulates in float32.
    """
    x, w = same_type(CONV2D, input, filters)
    data_format = _data_format(_CONV, data_format)
    strides4 = _four(_CONV, strides, "strides", data_format)
    dilations4 = _four(_CONV, dilations, "dilations", data_format)
    _check_outer(_CONV, strides4, data_format, "strides")
    _check_outer(_CONV, dilations4, data_format, "dilations")
    padding, explicit = _padding(_CONV, padding, data_format)
    return execute(CONV2D, (x, w), {"strides": _spatial(strides4, data_format),
                                    "dilations": _spatial(dilations4, data_format),
                                    "padding": padding, "explicit_paddings": explicit,
                                    "data_format": data_format})


# -----------------------------------------------------------------------------------------------
# max_pool2d
# -----------------------------------------------------------------------------------------------

_POOL = "MaxPool"


def _pool_infer(op_name):
    """The shape inference of a pooling op (MaxPool, AvgPool): its errors name `op_name`."""
    def infer(x, ksize=(1, 1), strides=(1, 1), padding="VALID", explicit_paddings=(),
              data_format="NHWC"):
        s = x.shape
        if not s._rank_known:
            return TensorSpec(UNKNOWN_SHAPE, x.dtype)
        if len(s) != 4:
            raise op_error(op_name, f"tensor_in must be 4-dimensional, got shape {list(s)}", [x])
        out = _geometry(op_name, _spatial_shape(s, data_format), ksize, strides, (1, 1),
                        padding, explicit_paddings)
        depth = s[1] if data_format == "NCHW" else s[3]
        return TensorSpec(_with_spatial(s, (out[0][0], out[1][0]), depth, data_format), x.dtype)
    return infer


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _max_pool_kernel(xp, x, ksize=(1, 1), strides=(1, 1), padding="VALID", explicit_paddings=(),
                     data_format="NHWC"):
    x = _to_nhwc(xp, x, data_format)
    n, h, w, c = x.shape
    (oh, pt, pb), (ow, pl, pr) = _geometry(_POOL, (h, w), ksize, strides, (1, 1), padding,
                                           explicit_paddings)
    pads = ((pt, pb), (pl, pr))
    out = _windows(xp, x, (oh, ow), ksize, strides, (1, 1), pads, _lowest(x.dtype)).max(
        axis=(3, 4))
    if x.dtype.kind == "f":
        # TensorFlow's CPU kernel starts each window at the dtype's lowest finite value and
        # takes an element only when it is greater: NaN never wins, and -inf gives the lowest
        # value. numpy's max propagates NaN, so when any window gave NaN all are taken again
        # with NaN read as the lowest value (on a GPU always: looking would wait for it).
        lowest = np.finfo(x.dtype).min
        if xp is not np or xp.isnan(out).any():
            x = xp.where(xp.isnan(x), lowest, x)
            out = _windows(xp, x, (oh, ow), ksize, strides, (1, 1), pads, lowest).max(
                axis=(3, 4))
        xp.maximum(out, lowest, out=out)
    return _from_nhwc(xp, out, data_format)


MAX_POOL = register_op(_POOL, _max_pool_kernel, _pool_infer(_POOL), dtypes=_dt.REAL)


def _pool_attrs(op_name, ksize, strides, padding, data_format):
    """A pooling op's attributes from TensorFlow's arguments, with TensorFlow's errors."""
    data_format = _data_format(op_name, data_format)
    ksize4 = _four(op_name, ksize, "ksize", data_format)
    strides4 = _four(op_name, strides, "strides", data_format)
    if ksize4[0] != 1 or strides4[0] != 1:
        raise op_error(op_name, "Pooling is not yet supported on the batch dimension.",
                       cls=UnimplementedError)
    if _outer(ksize4, data_format)[1] != 1 or _outer(strides4, data_format)[1] != 1:
        raise NotImplementedError(f"{op_name}: pooling across the depth dimension is not "
                                  f"supported (ksize={list(ksize4)}, strides={list(strides4)}).")
    ksize, strides = _spatial(ksize4, data_format), _spatial(strides4, data_format)
    if min(ksize) < 1 or min(strides) < 1:
        raise op_error(op_name, f"Sliding window ksize and strides must be positive, got ksize="
                                f"{list(ksize4)} and strides={list(strides4)}")
    padding, explicit = _padding(op_name, padding, data_format)
    if explicit and any(p > k for pair, k in zip(explicit, ksize) for p in pair):
        raise op_error(op_name, f"explicit paddings {[list(p) for p in explicit]} cannot be "
                                f"greater than the window size {list(ksize)}")
    return {"ksize": ksize, "strides": strides, "padding": padding,
            "explicit_paddings": explicit, "data_format": data_format}


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """≈ `tf.nn.max_pool2d`: the maximum over each `ksize` window of a 4-D `input`, moved by
    `strides` (ints or lists of 1, 2 or 4). SAME padding never wins a maximum. As TensorFlow's
    CPU kernel, a window's maximum starts from the dtype's lowest finite value: NaN is never
    the maximum, and a window holding only NaN and -inf gives that lowest value (-3.4028235e38
    for float32). Explicit padding (a list of 4 pairs) may not exceed the window size, as TF
    documents."""
    x = as_tensor(input)
    check_dtype(MAX_POOL, x, MAX_POOL.dtypes)
    return execute(MAX_POOL, (x,), _pool_attrs(_POOL, ksize, strides, padding, data_format))


_AVG_POOL = "AvgPool"


def window_counts(xp, hw, ksize, strides, padding, dtype):
    """(counts, geometry): how many input elements (padding excluded) each output window of an
    AvgPool covers, shaped [1, out_h, out_w, 1], and the padded geometry."""
    rows, cols = _geometry(_AVG_POOL, hw, ksize, strides, (1, 1), padding, ())
    ones = xp.ones((1, *hw, 1), dtype)
    view = _windows(xp, ones, (rows[0], cols[0]), ksize, strides, (1, 1),
                    ((rows[1], rows[2]), (cols[1], cols[2])), 0)
    return view.sum(axis=(3, 4)), (rows, cols)


def _avg_pool_kernel(xp, x, ksize=(1, 1), strides=(1, 1), padding="VALID", explicit_paddings=(),
                     data_format="NHWC"):
    x = _to_nhwc(xp, x, data_format)
    counts, (rows, cols) = window_counts(xp, x.shape[1:3], ksize, strides, padding, x.dtype)
    view = _windows(xp, x, (rows[0], cols[0]), ksize, strides, (1, 1),
                    ((rows[1], rows[2]), (cols[1], cols[2])), 0)
    total = add_reduce(xp, view, (3, 4))  # (its overflow: eager.base.ieee)
    return _from_nhwc(xp, (total / counts).astype(x.dtype, copy=False), data_format)


#: TensorFlow's AvgPool: each window's mean over the input elements it covers (SAME padding is
#: not counted, as TensorFlow's kernel). Gradient: AvgPoolGrad (nn_grad).
AVG_POOL = register_op(_AVG_POOL, _avg_pool_kernel, _pool_infer(_AVG_POOL), dtypes=_dt.FLOATING)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """≈ `tf.nn.avg_pool2d`: the mean over each `ksize` window of a 4-D `input`, moved by
    `strides`; with SAME padding a border window averages only the elements it covers. Padding
    is "SAME" or "VALID", as TensorFlow's AvgPool."""
    x = as_tensor(input)
    check_dtype(AVG_POOL, x, AVG_POOL.dtypes)
    if not isinstance(padding, str):
        raise op_error(_AVG_POOL, "explicit paddings are not supported by AvgPool; use 'SAME' "
                                  "or 'VALID'")
    return execute(AVG_POOL, (x,), _pool_attrs(_AVG_POOL, ksize, strides, padding, data_format))
