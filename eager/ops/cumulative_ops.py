"""Cumulative scans along one axis (`eager.math.cumsum`, `eager.math.cumprod`,
`eager.math.cumulative_logsumexp`).

Both ops share one kernel shape: an optional flip (`reverse`), numpy's running sum or product
in the input's dtype (integers wrap, as in TensorFlow; the ufunc's `accumulate`, so that an
overflow is raised at eager's frame: `eager.base.ieee`), and for `exclusive` a shift by one that
starts from the identity (0 or 1). Their gradients live in `math_grad`.

`cumulative_logsumexp` (TensorFlow's CumulativeLogsumexp, floats only) runs `logaddexp`, so no
partial sum overflows or underflows; `exclusive` starts from -inf. numpy accumulates it in
order; CuPy has no `logaddexp.accumulate`, so a GPU scans in log2(n) whole-array `logaddexp`s
(`_logaddexp_scan`), equal to numpy's within rounding. Its gradient is TensorFlow's:
the reverse scan of the output gradient's logarithm (positive and negative parts apart) minus
the output, exponentiated with the input added, so it stays finite where exp would not.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base.ieee import add_accumulate, multiply_accumulate
from ..core.specs import TensorSpec
from ..core.argument_conversion import as_tensor, check_dtype
from ..core.dispatch import execute
from .math_ops import _check_axis_rank, _scalar_axis
from ..core.registry import register_op
from ..core.shapes import normalize_axis, static_int

__all__ = ["cumsum", "cumprod", "cumulative_logsumexp"]


def _scan(xp, x, axis, exclusive, reverse, running, fill):
    if reverse:
        x = xp.flip(x, axis)
    out = running(xp, x, axis, x.dtype)
    if exclusive and out.shape[axis]:
        first = xp.full_like(xp.take(out, [0], axis=axis), fill)
        out = xp.concatenate([first, xp.take(out, range(out.shape[axis] - 1), axis=axis)],
                             axis=axis)
    if reverse:
        out = xp.flip(out, axis)
    return xp.ascontiguousarray(out)


def _cumsum_kernel(xp, x, axis, exclusive, reverse):
    return _scan(xp, x, axis, exclusive, reverse, add_accumulate, 0)


def _cumprod_kernel(xp, x, axis, exclusive, reverse):
    return _scan(xp, x, axis, exclusive, reverse, multiply_accumulate, 1)


def _logaddexp_accumulate(xp, x, axis, dtype):
    with np.errstate(all="ignore"):  # inf - inf inside logaddexp: TensorFlow's NaN, no signal
        if xp is np:
            return np.logaddexp.accumulate(x, axis=axis, dtype=dtype)
        return _logaddexp_scan(xp, x, axis)


def _logaddexp_scan(xp, x, axis):
    """The inclusive running logaddexp along `axis` as a Hillis-Steele scan: after the step of
    width k every entry holds the logaddexp of the 2k entries ending at it (fewer at the start),
    so log2(n) steps finish it. Each step is one `logaddexp` of two shifted slices, which stays
    finite wherever the exact answer is and gives -inf for two -infs; two buffers take turns."""
    n = x.shape[axis]
    lead = (slice(None),) * axis
    current, spare = xp.array(x, copy=True), xp.empty_like(x)
    width = 1
    while width < n:
        spare[lead + (slice(None, width),)] = current[lead + (slice(None, width),)]
        xp.logaddexp(current[lead + (slice(width, None),)], current[lead + (slice(None, -width),)],
                     out=spare[lead + (slice(width, None),)])
        current, spare = spare, current
        width *= 2
    return current


def _cumulative_logsumexp_kernel(xp, x, axis, exclusive, reverse):
    return _scan(xp, x, axis, exclusive, reverse, _logaddexp_accumulate, -np.inf)


def _infer(op_name):
    def infer(x, axis, exclusive, reverse):
        _check_axis_rank(op_name, axis, x.shape.rank)
        if x.shape.rank is not None:
            normalize_axis(op_name, axis, x.shape.rank)
        return TensorSpec(x.shape, x.dtype)
    return infer


CUMSUM = register_op("Cumsum", _cumsum_kernel, _infer("Cumsum"), dtypes=_dt.NUMERIC)
CUMPROD = register_op("Cumprod", _cumprod_kernel, _infer("Cumprod"), dtypes=_dt.NUMERIC)
CUMULATIVE_LOGSUMEXP = register_op("CumulativeLogsumexp", _cumulative_logsumexp_kernel,
                                   _infer("CumulativeLogsumexp"), dtypes=_dt.FLOATING)


def _cumulative(op, x, axis, exclusive, reverse):
    x = as_tensor(x)
    check_dtype(op, x, op.dtypes)
    rank = x.shape.rank
    axis = static_int(op.name, _scalar_axis(op.name, axis, "axis"), "axis")
    _check_axis_rank(op.name, axis, rank)
    if rank is not None:
        axis = normalize_axis(op.name, axis, rank)
    return execute(op, (x,), {"axis": axis, "exclusive": bool(exclusive),
                              "reverse": bool(reverse)})


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """≈ `tf.math.cumsum`: running sums along `axis`; `exclusive` starts from 0, `reverse` sums
    from the end. As in TensorFlow, a scalar has no axis to scan (InvalidArgumentError)."""
    return _cumulative(CUMSUM, x, axis, exclusive, reverse)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """≈ `tf.math.cumprod`: running products along `axis`; `exclusive` starts from 1, `reverse`
    multiplies from the end. Integers wrap around on overflow, as in TensorFlow; a scalar has no
    axis to scan (InvalidArgumentError)."""
    return _cumulative(CUMPROD, x, axis, exclusive, reverse)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """≈ `tf.math.cumulative_logsumexp`: log(cumsum(exp(x))) along `axis` without overflow (see
    the module doc); `exclusive` starts from -inf, `reverse` scans from the end."""
    return _cumulative(CUMULATIVE_LOGSUMEXP, x, axis, exclusive, reverse)
