"""Suite-wide setup.

* Every op run eagerly in the suite has its shape/dtype inference cross-checked against the
  kernel's real output (`check_inference`), so tracing and async dispatch, which trust inference,
  are tested by every numeric test. Tests of the operators' fast path switch it off locally.
* Hypothesis is derandomized by default so CI is reproducible; run with
  `--hypothesis-profile=thorough` for fresh random examples and more of them.
"""

import pytest
from hypothesis import HealthCheck, settings

import eager
from eager.core.context import _reset_for_tests
from eager.devices import registry
from eager.core import dispatch

settings.register_profile("default", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")


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
