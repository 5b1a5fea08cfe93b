"""Suite-wide setup.

* Every op run eagerly in the suite has its shape/dtype inference cross-checked against the
  kernel's real output (`check_inference`), so tracing and async dispatch, which trust inference,
  are tested by every numeric test. Tests of the operators' fast path switch it off locally.
* Hypothesis is derandomized by default so CI is reproducible; run with
  `--hypothesis-profile=thorough` for fresh random examples and more of them.
* The suite also runs with simulated GPUs as the default device (`EAGER_SIMULATED_GPUS=1`,
  `.ci/run` does both). A test of behaviour that exists only where the one device is the CPU
  says so with `@pytest.mark.cpu_only(reason=...)` (or the `cpu_only` fixture), the reason
  being what the test observes that a GPU does differently (numpy buffers' addresses, host
  allocations, the CPU fast path, a kernel failing on the calling thread).
* On a device whose kernels run later (the simulated GPU), a failing kernel is reported at the
  next synchronization. A test that leaves such a failure unreported fails itself, at its end,
  instead of handing the error to whichever later test synchronizes first.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

if os.environ.get("EAGER_RECORDED_GPU"):  # the CUDA backend on numpy (tests/recording_cupy.py)
    import recording_cupy

    recording_cupy.install()

import eager
from eager.base.errors import OpError
from eager.core.context import _reset_for_tests
from eager.devices import registry
from eager.core import dispatch

settings.register_profile("default", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cpu_only(reason): the test runs with one CPU and no GPU, whatever the "
                   "machine has (see the `cpu_only` fixture); `reason` says what it observes "
                   "that exists only there")


def pytest_collection_modifyitems(items):
    for item in items:
        marker = item.get_closest_marker("cpu_only")
        if marker is not None and not (marker.kwargs.get("reason") or marker.args):
            raise pytest.UsageError(f"{item.nodeid}: cpu_only needs a reason (what the test "
                                    "observes that exists only with one CPU)")


@pytest.fixture(autouse=True)
def _cpu_only_marker(request):
    if request.node.get_closest_marker("cpu_only") is not None:
        request.getfixturevalue("cpu_only")


@pytest.fixture(autouse=True)
def _no_kernel_failure_left_unreported():
    """Fails a test that leaves a kernel failure queued on a device's stream (see the module
    doc): the test issued an op that fails and never synchronized to see it."""
    yield
    if not registry.is_initialized():
        return
    unreported = []
    for device in registry.devices():
        if device.inline:
            continue
        try:
            device.synchronize()
        except OpError as exc:
            unreported.append(f"{device.name}: {type(exc).__name__}: {exc}")
    if unreported:
        pytest.fail(f"a kernel failure was left unreported by the test (on a device whose "
                    f"kernels run later it surfaces at the next synchronization; make the test "
                    f"synchronize, e.g. with .numpy()): {'; '.join(unreported)}", pytrace=False)


@pytest.fixture(autouse=True, scope="session")
def _check_inference():
    dispatch.check_inference(True)
    yield
    dispatch.check_inference(False)


@pytest.fixture
def no_inference_check():
    """Turns the inference cross-check off (and with it the fast-path veto) for one test."""
    dispatch.check_inference(False)
    yield
    dispatch.check_inference(True)


@pytest.fixture
def cpu_only():
    """For one test, the devices are one CPU and no GPU, whatever the machine has: the only
    configuration with the operators' fast path (one inline device), and with it temporary
    elision. Tests of behaviour that is CPU-only by design use it, so that they exercise that
    behaviour on a GPU machine too instead of failing (or passing vacuously) there. The
    machine's devices come back afterwards."""
    _reset_for_tests()
    eager.config.set_visible_devices([], "GPU")
    registry.devices()
    yield
    _reset_for_tests()
    registry.devices()


@pytest.fixture
def simulated_gpu():
    """One simulated GPU for one test (GPU:0 becomes the default device); yields it. The
    machine's devices come back afterwards."""
    _reset_for_tests()
    eager.config.experimental.set_simulated_gpus(1)
    yield registry.lookup("GPU:0")
    eager.experimental.sync_devices()
    _reset_for_tests()
    registry.devices()


@pytest.fixture
def logical_cpus():
    """Returns a function `configure(n)` that splits the CPU into n logical devices (CPU:0..n-1)
    for one test, GPUs hidden; the machine's configuration comes back afterwards."""

    def configure(n):
        _reset_for_tests()
        eager.config.set_visible_devices([], "GPU")  # CPU placement tests: CPU:0 is the default
        cpu = eager.config.list_physical_devices("CPU")[0]
        eager.config.set_logical_device_configuration(
            cpu, [eager.config.LogicalDeviceConfiguration() for _ in range(n)])
        return eager.config.list_logical_devices("CPU")

    yield configure
    _reset_for_tests()
    registry.devices()
