"""Buffer reuse: the one calibration pattern, and every site that reuses buffers checked through
its real code path (a site whose frame drifts from its calibration probe would silently stop
reusing, or worse, write into a shared buffer)."""

import importlib
import sys

import numpy as np
import pytest

import eager as tf
import eager.runtime.compiler  # noqa: F401 - its sites calibrate at import
from eager.core import buffer_reuse
from eager.ops import resource_ops

#: Each reuse site and the tests that run it exclusive (the buffer is reused) and shared (it is
#: not), through the site's own code. A new site must be listed here with its tests.
SITE_TESTS = {
    "operators": ["tests.test_elision.test_a_temporary_buffer_is_reused",
                  "tests.test_elision.test_tensors_held_elsewhere_are_never_written"],
    "variable storage": [
        "tests.test_buffer_reuse.test_variable_updates_are_in_place_unless_a_read_shares_them"],
    "list storage": [
        "tests.test_list_ops.test_calibration_tells_a_storage_one_list_holds_from_a_shared_one",
        "tests.test_list_ops.test_a_push_loop_appends_to_one_storage"],
    "program tensors": [
        "tests.test_compiler."
        "test_a_dying_large_intermediate_is_written_in_place_and_results_are_unchanged",
        "tests.test_compiler.test_a_shared_buffer_is_never_donated"],
    "program arrays": ["tests.test_compiler.test_array_form_donates_a_dying_intermediate"],
}


def test_every_site_is_calibrated_here_and_has_its_tests():
    assert set(buffer_reuse.SITES) == set(SITE_TESTS)
    if sys.implementation.name == "cpython" and sys.version_info < (3, 14):
        assert all(count is not None for count in buffer_reuse.SITES.values()), \
            buffer_reuse.SITES
    for names in SITE_TESTS.values():
        for name in names:
            module, function = name.rsplit(".", 1)
            assert callable(getattr(importlib.import_module(module), function)), name


def test_calibration_accepts_exactly_one_more_holder():
    counts = iter([3, 4])
    assert buffer_reuse.calibrate("probe site", lambda: next(counts), lambda: next(counts)) == 3
    assert buffer_reuse.calibrate("probe site", lambda: 3, lambda: 3) is None  # not told apart
    assert buffer_reuse.calibrate("probe site", lambda: 3, lambda: 5) is None
    assert buffer_reuse.calibrate("probe site", lambda: (5, 5), lambda: (6, 5)) == (5, 5)
    # The extra holder refers to the first object only: any other count moving is a failure.
    assert buffer_reuse.calibrate("probe site", lambda: (5, 5), lambda: (6, 6)) is None
    assert buffer_reuse.calibrate("probe site", lambda: None, lambda: 4) is None
    assert buffer_reuse.SITES.pop("probe site") is None
    assert not buffer_reuse.enabled("probe site")


def _storage(v):
    return v._handle.device.resources.lookup(v._handle.uid)


def _update_with(path, v, step):
    if path == "assign_sub (resource_ops.apply_update)":
        v.assign_sub(step, read_value=False)
    elif path == "SGD (training_ops' gradient descent kernel)":
        tf.optimizers.SGD(1.0).apply_gradients([(step, v)])
    else:  # the fused updates with slots lock and copy through training_ops._writable
        tf.optimizers.SGD(1.0, momentum=0.5).apply_gradients([(step, v)])


@pytest.mark.parametrize("path", ["assign_sub (resource_ops.apply_update)",
                                  "SGD (training_ops' gradient descent kernel)",
                                  "SGD with momentum (training_ops._writable)"])
def test_variable_updates_are_in_place_unless_a_read_shares_them(cpu_only, path):
    """One calibration ("variable storage") serves three kernels: each must hold exactly the
    one local reference it was calibrated for."""
    v = tf.Variable(np.ones(1000, np.float32))
    step = tf.constant(np.full(1000, 0.25, np.float32))
    _update_with(path, v, step)  # (slots are created on the first step)
    before = id(_storage(v).value)
    _update_with(path, v, step)
    assert id(_storage(v).value) == before, "an unshared variable was reallocated"
    held = v.read_value()  # a snapshot now shares the buffer
    kept = held.numpy().copy()
    _update_with(path, v, step)
    assert id(_storage(v).value) != id(held._value)  # copy-on-write
    np.testing.assert_array_equal(held.numpy(), kept)


def test_a_failed_calibration_makes_every_update_copy(monkeypatch, cpu_only):
    monkeypatch.setattr(resource_ops, "UNSHARED_REFS", 0)
    v = tf.Variable(np.ones(1000, np.float32))
    before = id(_storage(v).value)
    v.assign_sub(tf.constant(np.ones(1000, np.float32)), read_value=False)
    assert id(_storage(v).value) != before
    np.testing.assert_array_equal(v.numpy(), np.zeros(1000, np.float32))
