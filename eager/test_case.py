"""`eager.test.TestCase` and `eager.test.main`: TensorFlow's test base class, a
`unittest.TestCase` with its assertion helpers on tensors and nested structures."""

from __future__ import annotations

import unittest

import numpy as np

from .base import nest
from .tensor import Tensor

__all__ = ["TestCase", "main"]


def _np(x):
    if isinstance(x, Tensor):
        return x.numpy()
    return np.asarray(x)


class TestCase(unittest.TestCase):
    """≈ `tf.test.TestCase`: `evaluate` (tensors to numpy), `assertAllClose` (nested, with
    TensorFlow's default tolerances 1e-6), `assertAllEqual`, `assertNotAllClose`,
    `assertAllGreater`/`Less`, `assertAllInRange`, `assertShapeEqual`, `assertDTypeEqual`."""

    def evaluate(self, tensors):
        return nest.map_structure(lambda t: _np(t) if isinstance(t, Tensor) else t, tensors)

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        if nest.is_nested(a) or nest.is_nested(b):
            nest.assert_same_structure(a, b, check_types=False)
            for x, y in zip(nest.flatten(a), nest.flatten(b)):
                self.assertAllClose(x, y, rtol=rtol, atol=atol, msg=msg)
            return
        x, y = _np(a), _np(b)
        self.assertEqual(x.shape, y.shape, f"Shape mismatch: expected {x.shape}, got {y.shape}"
                         f" {msg or ''}")
        np.testing.assert_allclose(y, x, rtol=rtol, atol=atol, err_msg=msg or "",
                                   equal_nan=True)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol)
        except AssertionError:
            return
        raise AssertionError(msg or "The two values are close at all elements.")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        x, y = _np(a), _np(b)
        self.assertEqual(x.shape, y.shape, f"Shape mismatch: expected {x.shape}, got {y.shape}"
                         f" {msg or ''}")
        np.testing.assert_array_equal(y, x, err_msg=msg or "")

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        if np.array_equal(_np(a), _np(b)):
            raise AssertionError(msg or "The two values are equal at all elements.")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(_np(a) > comparison_target))

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(_np(a) < comparison_target))

    def assertAllInRange(self, target, lower_bound, upper_bound):  # noqa: N802
        t = _np(target)
        self.assertTrue(np.all((t >= lower_bound) & (t <= upper_bound)),
                        f"{t} is not within [{lower_bound}, {upper_bound}]")

    def assertShapeEqual(self, input_a, input_b, msg=None):  # noqa: N802
        self.assertEqual(tuple(_np(input_a).shape), tuple(input_b.shape), msg)

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        self.assertEqual(_np(target).dtype, np.dtype(expected_dtype))

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        np.testing.assert_allclose(_np(farray2), _np(farray1), rtol=0, atol=err)


def main(argv=None):
    """≈ `tf.test.main`: runs the module's tests (unittest.main)."""
    return unittest.main(argv=argv)
