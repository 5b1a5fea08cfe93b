"""Whether a buffer is exclusively ours, so that a result may be written into it.

Tensors are immutable to every observer, yet writing a result into a buffer nobody else can see
saves an allocation (for large arrays, fresh pages cost as much as the arithmetic). numpy does
it for its own temporaries; TensorFlow's kernels forward input buffers whose reference count is
one. eager does it at five sites, and this module owns the question they all ask:

* "operators": in `y = p - lr * g` the product `lr * g` is a temporary; the subtraction writes
  into it (`writable_operand`, from the EagerTensor operators; temporary elision);
* "variable storage": a resource update works in place unless a read snapshot shares the
  storage's array (copy-on-write; `eager.ops.resource_ops`, `eager.ops.training_ops`);
* "list storage": a TensorList push reuses a storage no other view shares
  (`eager.ops.list_ops`);
* "program tensors" and "program arrays": a compiled program writes an elementwise result into
  an input that dies at that node (`eager.runtime.compiler`, its tensor and array forms).

"Nobody else" is decided by reference counts, and a count depends on how the interpreter calls
the site: each frame between the holder and the check may hold references. So counts are never
assumed. Each site is calibrated at import by the one pattern in `calibrate`: a probe with the
same parameters and locals as the site (so the same references are counted) is run once on an
object only the site holds and once on an object one more holder shares; the site may reuse a
buffer at the first count only when the second is exactly one more. Where the two cannot be
told apart (another Python implementation or version), that site never reuses, and everything
still works, without the saving. `SITES` records each site's count (None: off), and the test
suite runs every site through its real code path, exclusive and shared, so a site whose frame
drifts from its probe fails a test instead of silently never reusing (or worse).
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["MIN_ELEMENTS", "SITES", "calibrate", "enabled", "writable_operand"]

#: Site name -> the reference count at which its object is exclusive (a tuple for the
#: operators, which count a tensor and its array), or None where calibration failed (the site
#: then never reuses). Filled as the sites' modules are imported.
SITES: dict = {}


def calibrate(site, exclusive, shared):
    """Calibrates one site (the module doc's pattern) and records it in `SITES`.

    `exclusive()` runs the site's probe on a fresh object that only the site holds and returns
    the reference count the probe saw, or a tuple of counts whose first is that object's (the
    operators also count its array); `shared()` does the same after one more holder took a
    reference to that first object. Returns the exclusive count(s), or None unless the shared
    first count is exactly one more and every other count is unchanged.
    """
    alone = exclusive()
    held = shared()
    if alone is None or held is None:
        counts = None
    elif isinstance(alone, tuple):
        counts = alone if held == (alone[0] + 1,) + alone[1:] else None
    else:
        counts = alone if held == alone + 1 else None
    SITES[site] = counts
    return counts

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


def enabled(site="operators") -> bool:
    """Whether `site` (see `SITES`) may reuse buffers: its calibration succeeded."""
    return SITES.get(site) is not None


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


def _temporary_counts():
    """(tensor count, array count) the operators see for an unobserved operand, the same for a
    right, a left and a reflected temporary (else None)."""
    named = _Probe()
    temporary_right, _ = _Probe() - (_Probe() * 1)  # right operand is a temporary
    _, temporary_left = (_Probe() * 1) - named  # left operand is a temporary
    temporary_reflected = 2 * _Probe()
    if temporary_right == temporary_left == temporary_reflected:
        return temporary_right
    return None


def _named_counts():
    """The same counts for an operand one name holds."""
    named = _Probe()
    named_right, _ = _Probe() - named
    return named_right


_TEMPORARY = calibrate("operators", _temporary_counts, _named_counts)
