"""`eager.base.device_checks`: a kernel's data check raises at once on numpy, and on a device
array module waits for the next synchronization, which raises the first failed check once.

The CUDA backend's use of it (gathers and sparse losses that read nothing back, the CPU's
error at the next read) is tested on the recorded CuPy in `test_recorded_gpu.py`."""

import types

import numpy as np
import pytest

from eager.base import device_checks


class _Flag:
    """A 0-d device flag: reading it (`bool`) is a host read, counted."""

    reads = 0

    def __init__(self, value):
        self.value = bool(value)

    def __bool__(self):
        _Flag.reads += 1
        return self.value


class _Flags:
    """What `stack` gives: a device array of flags, read once."""

    def __init__(self, flags):
        self.values = np.array([f.value for f in flags])

    def any(self):
        return _Flag(self.values.any())


#: A device array module: deferred checks, flags stacked into one read.
DEVICE = types.SimpleNamespace(stack=_Flags, argmax=lambda flags: int(np.argmax(flags.values)))
#: Another one whose flags cannot be stacked (as flags on several GPUs): read one by one.
OTHER = types.SimpleNamespace(stack=lambda flags: 1 / 0, argmax=None)


@pytest.fixture(autouse=True)
def _no_pending():
    device_checks.discard_pending()
    _Flag.reads = 0
    yield
    device_checks.discard_pending()


def _error(message):
    def make():
        return ValueError(message)
    return make


def test_on_numpy_a_failed_check_raises_at_once_and_a_passed_one_builds_no_error():
    with pytest.raises(ValueError, match="bad index"):
        device_checks.require(np, np.bool_(True), _error("bad index"))
    device_checks.require(np, np.array([1, 5]).max() > 9, lambda: pytest.fail("built"))
    assert device_checks.pending_checks() == 0


def test_a_host_flag_is_read_at_once_whatever_the_module():
    with pytest.raises(ValueError, match="host"):
        device_checks.require(DEVICE, np.bool_(True), _error("host"))
    assert device_checks.pending_checks() == 0


def test_on_a_device_checks_wait_and_the_next_synchronization_raises_the_first_failure_once():
    device_checks.require(DEVICE, _Flag(False), lambda: pytest.fail("built"))
    device_checks.require(DEVICE, _Flag(True), _error("second"))
    device_checks.require(DEVICE, _Flag(True), _error("third"))
    assert device_checks.pending_checks() == 3 and _Flag.reads == 0  # nothing read yet
    with pytest.raises(ValueError, match="^second$"):
        device_checks.raise_failed()
    assert _Flag.reads == 1  # the three flags in one read
    assert device_checks.pending_checks() == 0
    device_checks.raise_failed()  # reported once: the third failure went with the second


def test_passed_checks_are_settled_by_one_read():
    for _ in range(5):
        device_checks.require(DEVICE, _Flag(False), lambda: pytest.fail("built"))
    device_checks.raise_failed()
    assert _Flag.reads == 1 and device_checks.pending_checks() == 0


def test_flags_that_cannot_be_stacked_are_read_one_by_one_in_order():
    device_checks.require(OTHER, _Flag(False), lambda: pytest.fail("built"))
    device_checks.require(DEVICE, _Flag(True), _error("on another device"))
    device_checks.require(OTHER, _Flag(True), _error("later"))
    with pytest.raises(ValueError, match="^on another device$"):
        device_checks.raise_failed()
    assert _Flag.reads == 2  # stopped at the first failure


def test_a_full_queue_of_checks_is_read_by_the_check_after_it():
    for _ in range(device_checks.MAX_PENDING_CHECKS):
        device_checks.require(DEVICE, _Flag(False), lambda: pytest.fail("built"))
    assert _Flag.reads == 0
    with pytest.raises(ValueError, match="^over the limit$"):
        device_checks.require(DEVICE, _Flag(True), _error("over the limit"))
    assert device_checks.pending_checks() == 0


def test_discarded_checks_are_never_read():
    device_checks.require(DEVICE, _Flag(True), _error("forgotten"))
    device_checks.discard_pending()
    device_checks.raise_failed()
    assert _Flag.reads == 0
