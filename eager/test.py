"""`eager.test` ≈ `tf.test`: gradient checking, `TestCase`/`main`;
`eager.test.experimental.sync_devices`."""

import types

from .async_exec import sync_devices
from .base.traceback_filter import filter_traceback
from .autodiff.checker import compute_gradient
from .test_case import TestCase, main

#: ≈ `tf.test.experimental` (RFC 434 places sync_devices there too).
experimental = types.SimpleNamespace(sync_devices=filter_traceback(sync_devices))

__all__ = ["compute_gradient", "experimental", "TestCase", "main"]
