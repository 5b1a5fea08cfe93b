"""Temporary elision: reuse the buffer of a tensor nobody else can see.

In `y = p - lr * g` the product `lr * g` is a temporary: once the subtraction has read it, no
one can ever look at it again. Writing the difference into its buffer saves an allocation (for
large arrays, fresh pages cost as much as the arithmetic). numpy does the same for its own
temporaries; TensorFlow's kernels forward input buffers whose reference count is one. Tensors
stay immutable to every observer: only a tensor with no observer is written.

"No observer" is decided by reference counts, which depend on how the interpreter calls the
operator. So they are not assumed: at import, `_calibrate` runs a probe through the same kind of
call (a Python-level binary operator with the same parameters and locals) and records the counts
a temporary has, and also checks that a named operand counts more. Where the two are not
distinguishable (another Python implementation or version), elision stays off and everything
still works, without the saving.
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["MIN_ELEMENTS", "enabled", "writable_operand"]

#: Below this size the bookkeeping costs more than an allocation saves.
MIN_ELEMENTS = 1 << 14

_getrefcount = sys.getrefcount
_ndarray = np.ndarray
_TEMPORARY = None  # (tensor count, array count) of an unobserved operand, when calibrated


def _owned_and_unobserved(tensor, value, expected_tensor, expected_array):
    return (_getrefcount(tensor) == expected_tensor and _getrefcount(value) == expected_array
            and value.__class__ is _ndarray and value.base is None and value.flags.writeable)


def writable_operand(a, a_value, b, b_value):
    """The array of operand `a` or `b` that the result of an elementwise op on them can be
    written into, or None. `b` may be a Python scalar (then `b_value` is `b` itself), or None
    when the reflected operator asks about `a` alone.

    Call it directly from the operator method, with that method's own `self`/`other` and their
    arrays, and with no other local of that method referring to them: the reference counts it
    checks are those of `_Probe`'s frame, which has exactly those references.
    """
    calibrated = _TEMPORARY
    if calibrated is None:
        return None
    tensor_count, array_count = calibrated
    if b is None or b is b_value:
        if _owned_and_unobserved(a, a_value, tensor_count, array_count):
            return a_value
        return None
    shape = a_value.shape if a_value.shape == b_value.shape else np.broadcast_shapes(
        a_value.shape, b_value.shape)
    if a_value.shape == shape and _owned_and_unobserved(a, a_value, tensor_count, array_count):
        return a_value
    if (b_value.__class__ is _ndarray and b_value.shape == shape
            and _owned_and_unobserved(b, b_value, tensor_count, array_count)):
        return b_value
    return None


def enabled() -> bool:
    return _TEMPORARY is not None


# -- calibration ----------------------------------------------------------------------------------

def _measure(tensor, value, expected_tensor, expected_array):
    """Same signature and depth as `_owned_and_unobserved`: the same references are counted."""
    return _getrefcount(tensor), _getrefcount(value)


def _counts(a, a_value, b, b_value):
    """Same signature as `writable_operand`, calling down one level as it does."""
    return _measure(a, a_value, 0, 0)


class _Probe:
    """Mimics an EagerTensor operator: a Python-level binary operator whose frame holds `self`,
    `other` and their arrays as locals, then calls down into the check."""

    __slots__ = ("_value",)

    def __init__(self):
        self._value = np.empty(2)

    def __sub__(self, other):
        self_value = self._value
        other_value = other._value
        return (_counts(other, other_value, self, self_value),
                _counts(self, self_value, other, other_value))

    def __rmul__(self, other):
        self_value = self._value
        return _counts(self, self_value, None, None)

    def __mul__(self, other):
        return _Probe()


def _calibrate():
    global _TEMPORARY
    named = _Probe()
    temporary_right, _ = _Probe() - (_Probe() * 1)  # right operand is a temporary
    _, temporary_left = (_Probe() * 1) - named  # left operand is a temporary
    temporary_reflected = 2 * _Probe()
    named_right, named_left = _Probe() - named
    if (temporary_right == temporary_left == temporary_reflected
            and named_right[0] > temporary_right[0] and named_right[1] == temporary_right[1]):
        _TEMPORARY = temporary_right


_calibrate()
