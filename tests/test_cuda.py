"""The CuPy backend on a real CUDA device. Skipped (with the reason) where no CUDA device answers;
run on a GPU machine to exercise it. The same stream/event logic is tested everywhere through
the CPU backend's streams and the simulated GPUs (`EAGER_SIMULATED_GPUS`)."""

import subprocess
import sys

import numpy as np
import pytest

import eager as tf
from eager.devices import registry
from eager.devices.cuda import cuda_device_count
from eager.core.context import _reset_for_tests
from eager.graph import trace
from eager.runtime import Program, run_program
from eager.runtime.passes import fuse_elementwise
from eager.ops import cupy_grouped_updates, cupy_kernels

# CuPy is optional: the tests that use it import it themselves, so that without it this module
# is still collected, and skipped with this reason.
pytestmark = pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device answers (CuPy "
                                                                  "backend tests need a GPU)")


def test_default_device_is_gpu0_and_tensors_live_there():
    import cupy  # noqa: PLC0415 - optional: see pytestmark

    assert registry.default_device().name == "GPU:0"
    t = tf.constant([1.0, 2.0, 3.0])
    assert t.device == "GPU:0"
    assert isinstance(t._value, cupy.ndarray)
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0])


def test_gpu_streams_are_not_the_legacy_default_stream():
    import cupy  # noqa: PLC0415 - optional: see pytestmark

    gpu = registry.lookup("GPU:0")
    for stream in (gpu.compute_stream, gpu.copy_stream):
        assert stream.cupy_stream.ptr != cupy.cuda.Stream.null.ptr
    assert gpu.compute_stream.cupy_stream.ptr != gpu.copy_stream.cupy_stream.ptr


def test_ops_match_numpy_on_gpu():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((32, 16)).astype(np.float32)
    ta, tb = tf.constant(a), tf.constant(b)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose((ta * 2.0 + 1.0).numpy(), a * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(tf.reduce_sum(ta, axis=0).numpy(), a.sum(0), rtol=1e-4, atol=1e-4)


def test_copies_between_cpu_and_gpu_round_trip_large_and_small():
    for n in (7, 1 << 20):  # below and above the pinned-staging threshold
        host = np.arange(n, dtype=np.float32)
        with tf.device("CPU:0"):
            on_cpu = tf.constant(host)
        with tf.device("GPU:0"):
            on_gpu = on_cpu + 0.0
        assert on_gpu.device == "GPU:0"
        with tf.device("CPU:0"):
            back = on_gpu + 0.0
        assert back.device == "CPU:0"
        np.testing.assert_array_equal(back.numpy(), host)


def test_kernel_errors_on_gpu_are_op_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        tf.add(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0]))


# -- streams, events and buffer lifetimes on a real device ---------------------------------------

def test_kernels_run_with_the_device_compute_stream_current():
    import cupy  # noqa: PLC0415 - optional: see pytestmark

    gpu = registry.lookup("GPU:0")
    current = gpu.compute_stream.launch(lambda: cupy.cuda.get_current_stream().ptr)
    assert current == gpu.compute_stream.cupy_stream.ptr


@pytest.fixture
def two_logical_gpus():
    _reset_for_tests()
    gpu = tf.config.list_physical_devices("GPU")[0]
    tf.config.set_logical_device_configuration(
        gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=1024)] * 2)
    yield registry.lookup("GPU:0"), registry.lookup("GPU:1")
    tf.experimental.sync_devices()
    _reset_for_tests()


def test_a_copy_to_another_gpu_waits_for_its_producer_and_holds_the_source(two_logical_gpus):
    g0, g1 = two_logical_gpus
    rng = np.random.default_rng(0)
    host = rng.standard_normal((1024, 1024)).astype(np.float32)
    x = tf.constant(host)
    y = x
    for _ in range(8):  # a chain the GPU is still computing when the copy is issued
        y = tf.matmul(y, x) * (1.0 / 1024.0)
    expected = host.astype(np.float64)
    for _ in range(8):
        expected = expected @ host / 1024.0
    with tf.device("GPU:1"):
        moved = tf.identity(y)
    del y  # the copy stream must keep the source block until it has read it
    garbage = [tf.fill([1024, 1024], -1.0) for _ in range(4)]
    np.testing.assert_allclose(moved.numpy(), expected, rtol=2e-3, atol=2e-3)
    assert all(float(tf.reduce_max(g)) == -1.0 for g in garbage)
    g1.synchronize()
    assert len(g1._copy_holds) == 0


def test_large_host_copies_are_staged_and_sync_devices_waits_for_everything():
    import cupy  # noqa: PLC0415 - optional: see pytestmark

    gpu = registry.lookup("GPU:0")
    host = np.arange(1 << 21, dtype=np.float32)  # 8 MiB: through pinned staging
    t = tf.constant(host)
    total = tf.reduce_sum(t * 2.0)
    tf.experimental.sync_devices()
    assert gpu.compute_stream.record_event().query() and gpu.copy_stream.record_event().query()
    assert float(total) == pytest.approx(float(host.astype(np.float64).sum() * 2.0), rel=1e-5)
    assert isinstance(t._value, cupy.ndarray)


def test_async_dispatch_on_the_gpu_matches_synchronous():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, 256)).astype(np.float32)

    def program():
        x = tf.constant(a)
        for _ in range(5):
            x = tf.tanh(tf.matmul(x, x) * 0.01) + x
        return tf.reduce_sum(x, axis=0).numpy()

    expected = program()
    with tf.experimental.async_scope():
        got = program()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_interpreter_exit_with_pending_gpu_work_does_not_crash():
    code = ("import eager as tf, numpy as np\n"
            "tf.config.experimental.set_synchronous_execution(False)\n"
            "a = tf.constant(np.ones((512, 512), np.float32))\n"
            "for _ in range(50): a = tf.matmul(a, a) / 512.0\n"
            "v = tf.Variable(1.0); v.assign_add(1.0)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr


def test_the_profiler_has_a_lane_for_the_gpu_compute_stream_timed_on_the_gpu(tmp_path):
    x = tf.constant(np.ones((512, 512), np.float32))
    with tf.profiler.trace(str(tmp_path / "gpu.json")) as trace:
        y = tf.matmul(x, x)
        z = tf.reduce_sum(y)
        float(z)
    gpu_slices = [s for s in trace.slices if s.lane == "GPU:0/compute"]
    names = [s.name for s in gpu_slices]
    assert "MatMul" in names and "Sum" in names
    assert all(s.end_ns >= s.start_ns >= 0 for s in gpu_slices)
    host = {s.name: s for s in trace.slices if s.lane.startswith("host dispatch")}
    matmul = next(s for s in gpu_slices if s.name == "MatMul")
    assert matmul.end_ns >= host["MatMul"].start_ns  # the GPU ran it after the host issued it


def test_a_fused_elementwise_chain_runs_as_one_device_kernel():
    # fuse_elementwise's node, run on the GPU, goes through cupy.fuse: one kernel for the
    # whole chain, with the values of the ops run one by one (up to a contracted multiply-add).
    def f(x, y):
        for _ in range(4):
            x = tf.nn.relu(tf.math.tanh(x * y + x) * y - x)
        return x

    g = trace(f, tf.TensorSpec([256]), tf.TensorSpec([256]))
    program = Program.from_graph(g, constants={ph: v for v, ph in g.captures})
    fused = fuse_elementwise(program)
    # (x is read three times per round, so each round is one cluster)
    assert [n.type for n in fused.nodes] == ["Fused[Mul,AddV2,Tanh,Mul,Sub,Relu]"] * 4
    rng = np.random.default_rng(0)
    feeds = [tf.constant(rng.standard_normal(256).astype(np.float32)) for _ in range(2)]
    assert feeds[0].device == "GPU:0"
    (unfused_value,) = run_program(program, feeds)
    for _ in range(2):
        (fused_value,) = run_program(fused, feeds)
        assert fused_value.device == "GPU:0"
        np.testing.assert_allclose(fused_value.numpy(), unfused_value.numpy(), rtol=1e-6,
                                   atol=1e-7)
    assert all(node.op_def.kernel.on_device.fused for node in fused.nodes)
    with tf.device("CPU:0"):
        on_cpu = f(*[tf.constant(t.numpy()) for t in feeds])
    np.testing.assert_allclose(fused_value.numpy(), on_cpu.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make, grouped", [
    (lambda: tf.optimizers.SGD(0.1), "gradient_descent"),
    (lambda: tf.optimizers.SGD(0.1, momentum=0.9), "momentum"),
    (lambda: tf.optimizers.SGD(0.1, momentum=0.9, nesterov=True), "nesterov"),
    (lambda: tf.optimizers.Adam(0.01), "adam"),
    (lambda: tf.optimizers.Adam(0.01, amsgrad=True), None)],
    ids=["SGD", "momentum", "nesterov", "Adam", "AMSGrad"])
def test_optimizer_steps_on_the_gpu_run_fused_kernels_and_match_the_cpu(make, grouped):
    # The two float32 variables' updates in one grouped launch (`cupy_grouped_updates`), or one
    # kernel per variable (AMSGrad), compiled without multiply-add contraction: the CPU's values
    # (within rounding: Adam's bias corrections are CUDA's `pow` of the step on the device).
    import cupy  # noqa: PLC0415 - optional: see pytestmark

    rng = np.random.default_rng(0)
    start = [rng.standard_normal((64, 32)).astype(np.float32),
             rng.standard_normal(32).astype(np.float32)]
    grads = [[rng.standard_normal(s.shape).astype(np.float32) for s in start] for _ in range(3)]
    results = []
    for device in ("GPU:0", "CPU:0"):
        with tf.device(device):
            variables = [tf.Variable(s) for s in start]
            opt = make()
            for step in grads:
                opt.apply_gradients(zip([tf.constant(g) for g in step], variables))
        assert variables[0].device.endswith(device)
        results.append([v.numpy() for v in variables])
    for on_gpu, on_cpu in zip(*results):
        np.testing.assert_allclose(on_gpu, on_cpu, rtol=1e-6, atol=1e-7)
    if grouped is None:
        assert (cupy, "eager_amsgrad", np.dtype(np.float32)) in cupy_kernels._BUILT
    else:
        update = cupy_grouped_updates.GROUPED[grouped]
        assert update._module is cupy and np.dtype(np.float32) in update._kernels


_OPTIMIZERS = {"SGD": lambda: tf.optimizers.SGD(0.1),
               "momentum": lambda: tf.optimizers.SGD(0.1, momentum=0.9),
               "nesterov": lambda: tf.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
               "Adam": lambda: tf.optimizers.Adam(0.01)}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", list(_OPTIMIZERS))
def test_grouped_updates_of_many_variables_match_the_cpu_eager_and_traced(name, dtype):
    # Eleven variables of mixed sizes (empty, 0-d, not a multiple of a block, larger than one
    # grid pass) take two launches of up to eight each; float16 runs the per-variable kernels.
    # Gradient descent and momentum are the CPU's bit for bit; Adam within the rounding of the
    # device's `pow` for its bias corrections. The traced step (the `group_updates` pass) gives
    # the eager step's values.
    shapes = [(3,), (0,), (1025,), (7, 9), (), (300, 5), (2,), (70000,), (1,), (33, 33), (5,)]
    rng = np.random.default_rng(1)
    start = [rng.standard_normal(s).astype(dtype) for s in shapes]
    steps = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(3)]
    results = {}
    for how in ("CPU eager", "GPU eager", "GPU traced"):
        with tf.device(how.split()[0] + ":0"):
            variables = [tf.Variable(s) for s in start]
            opt = _OPTIMIZERS[name]()

            def apply(grads, opt=opt, variables=variables):
                return opt.apply_gradients(zip(grads, variables))

            if how.endswith("traced"):
                apply = tf.function(apply)
            for step in steps:
                apply([tf.constant(g) for g in step])
        assert all(v.device.endswith(how.split()[0] + ":0") for v in variables)
        results[how] = [v.numpy() for v in variables]
    tolerance = {"SGD": 0, "momentum": 0, "nesterov": 0,
                 "Adam": {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-14}[dtype]}[name]
    for how in ("GPU eager", "GPU traced"):
        for got, want, shape in zip(results[how], results["CPU eager"], shapes):
            assert got.shape == shape
            np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance, err_msg=how)
    if dtype is not np.float16:
        kind = "gradient_descent" if name == "SGD" else name.lower()
        assert np.dtype(dtype) in cupy_grouped_updates.GROUPED[kind]._kernels


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.int8, np.uint16, np.float16,
                                   np.int64])
def test_scatter_adds_of_every_dtype_match_the_cpu(dtype):
    """CuPy's add.at exists only for dtypes with CUDA atomics; the others go through a pair of
    floats (complex) or a 32-bit integer (narrow ints). Repeated indices accumulate."""
    rng = np.random.default_rng(3)
    data = (rng.standard_normal((6, 3)) * 40).astype(dtype)
    if np.dtype(dtype).kind == "c":
        data = data + 1j * (rng.standard_normal((6, 3)) * 40).astype(dtype)
    ids = np.array([2, 0, 2, -1, 4, 2])
    on_gpu = tf.math.unsorted_segment_sum(data, ids, 5)
    assert on_gpu.device == "GPU:0"
    with tf.device("CPU:0"):
        on_cpu = tf.math.unsorted_segment_sum(data, ids, 5)
        nd_cpu = tf.scatter_nd(ids[[0, 1, 2, 4]].reshape(4, 1), data[:4], [5, 3])
    np.testing.assert_allclose(on_gpu.numpy(), on_cpu.numpy(), rtol=1e-3)
    nd_gpu = tf.scatter_nd(ids[[0, 1, 2, 4]].reshape(4, 1), data[:4], [5, 3])
    np.testing.assert_allclose(nd_gpu.numpy(), nd_cpu.numpy(), rtol=1e-3)
    v = tf.Variable(np.zeros((5, 3), dtype))
    v.scatter_add(tf.IndexedSlices(tf.constant(data[:3]), tf.constant([1, 1, 4])))
    expected = np.zeros((5, 3), dtype)
    np.add.at(expected, [1, 1, 4], data[:3])
    np.testing.assert_allclose(v.numpy(), expected, rtol=1e-3)


def test_singular_matrices_on_the_gpu_are_op_errors_as_on_the_cpu():
    with pytest.raises(tf.errors.InvalidArgumentError, match="MatrixInverse: Input is not inv"):
        tf.linalg.inv(np.zeros((2, 2)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="MatrixSolve: Input is not inv"):
        tf.linalg.solve(np.ones((3, 2, 2)), np.ones((3, 2, 1)))
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(tf.linalg.inv(a).numpy(), np.linalg.inv(a), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64])
def test_signed_zeros_and_scalars_reach_the_gpu_intact(dtype):
    """CuPy's asarray of a 0-d float16 array dropped the sign of -0. (so rsqrt(-0.) was +inf
    on the GPU); uploads of 0-d arrays go through a one-element array."""
    for shape in ((), (1,), (3,)):
        host = np.full(shape, -0.0, dtype)
        t = tf.constant(host)
        assert t.device == "GPU:0"
        back = t.numpy()
        assert back.shape == shape and back.dtype == dtype
        assert np.signbit(back.real).all()
    if np.dtype(dtype).kind == "f":
        assert float(tf.math.rsqrt(tf.constant(np.array(-0.0, dtype)))) == -np.inf


_SPECIAL = [-0.0, 0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 2.5, -3.75, 1e-3, 88.0, -90.0, 700.0,
            1e30, -1e-30, 65504.0, 7e4]


def _special_values(dtype):
    with np.errstate(all="ignore"):
        if np.dtype(dtype).kind == "f":
            return np.array(_SPECIAL, np.float64).astype(dtype)
        return np.array([0, 1, -1, 7, -8, 100, 2**31 - 1, -2**31], np.int64).astype(dtype)


def _direct_cases():
    for name, source in cupy_kernels.TABLE.items():
        for dtype in (np.float16, np.float32, np.float64, np.int32, np.int64):
            if source.covers(np.dtype(dtype)):
                yield name, dtype


@pytest.mark.parametrize("op_name, dtype", list(_direct_cases()))
def test_the_direct_kernels_match_cupys_own_calls_and_the_cpu(op_name, dtype):
    """Each table kernel on the GPU, on NaN, infinities and zeros of both signs: bit for bit the
    op's CPU kernel where that is one IEEE operation (the select ops' signed-zero ties included,
    which CuPy's own maximum does not promise); exp/tanh/sigmoid within a few ulps of CuPy's own
    calls (the fallback) and of numpy (a float32 result numpy gives as a subnormal may be zero:
    CUDA's expf flushes it); reductions equal within rounding."""
    import cupy  # noqa: PLC0415 - optional: see pytestmark

    from eager.core.registry import get_op  # noqa: PLC0415

    op = get_op(op_name)
    v = _special_values(dtype)
    source = cupy_kernels.TABLE[op_name]
    if isinstance(source, cupy_kernels.ReductionSource):
        x = np.random.default_rng(0).standard_normal((33, 17)).astype(dtype)
        x[3, 4], x[5, 6], x[7, 8] = np.nan, np.inf, -0.0
        for attrs in ({"axes": None}, {"axes": (0,)}, {"axes": (1,), "keepdims": True}):
            got = op.cupy_kernel(cupy, cupy.asarray(x), **attrs).get()
            with np.errstate(all="ignore"):
                expected = op.kernel(np, x, **attrs)
            np.testing.assert_allclose(got, expected, rtol=1e-5, equal_nan=True)
        return
    binary = op_name in ("AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "ReluGrad")
    args = (np.repeat(v, len(v)), np.tile(v, len(v))) if binary else (v,)
    on_gpu = [cupy.asarray(a) for a in args]
    got = op.cupy_kernel(cupy, *on_gpu).get()
    with np.errstate(all="ignore"):
        on_cpu = op.kernel(np, *args)
    if op_name in ("Exp", "Tanh", "Sigmoid"):
        ulps = 4 * np.finfo(dtype).eps  # (not one IEEE operation: CUDA's expf is not glibc's)
        np.testing.assert_allclose(got, op.kernel(cupy, *on_gpu).get(), rtol=ulps,
                                   equal_nan=True)
        if dtype == np.float32:
            # CUDA's expf (CuPy's exp calls it too) flushes a subnormal result to zero: exp(-90)
            # and sigmoid(-90) are 0 on the GPU, 8.19e-40 on the CPU. Only exactly that is
            # allowed: a zero where the CPU's result is subnormal.
            cpu_subnormal = (on_cpu != 0) & (np.abs(on_cpu) < np.finfo(dtype).tiny)
            on_cpu = np.where(cpu_subnormal & (got == 0), got, on_cpu)
        np.testing.assert_allclose(got, on_cpu, rtol=ulps, equal_nan=True)
        return
    np.testing.assert_array_equal(got, on_cpu)
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(got)]),
                                      np.signbit(on_cpu[~np.isnan(on_cpu)]))


def test_eager_ops_on_the_gpu_launch_the_direct_kernels():
    import cupy  # noqa: PLC0415 - optional: see pytestmark

    x = tf.constant(np.array([-2.0, -0.0, 0.5, np.nan], np.float32))
    np.testing.assert_array_equal(tf.sigmoid(x).numpy(), tf.sigmoid(x.numpy()).numpy())
    np.testing.assert_array_equal(tf.nn.relu(x).numpy(), np.maximum(x.numpy(), np.float32(0)))
    assert np.isnan(tf.reduce_max(x).numpy())  # (CuPy's own max: NaN propagates there too)
    np.testing.assert_allclose(tf.reduce_mean(x[:3]).numpy(), -0.5)
    for name in ("eager_sigmoid", "eager_relu", "eager_mean"):
        assert (cupy, name, np.dtype(np.float32)) in cupy_kernels._BUILT


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_log_keeps_the_sign_of_a_zero_imaginary_part_on_the_gpu(dtype):
    """TensorFlow's values (recorded from TF 2.21): log(-0+0j) = -inf+pi j, log(-0-0j) =
    -inf-pi j, log(0+0j) = -inf+0j, log(-1+0j) = pi j; log1p(-2-0j) = -pi j."""
    z = tf.constant(np.array([complex(-0.0, 0.0), complex(-0.0, -0.0), 0j, complex(-1.0, 0.0)],
                             dtype))
    got = tf.math.log(z).numpy()
    np.testing.assert_array_equal(got.real, [-np.inf, -np.inf, -np.inf, 0.0])
    np.testing.assert_allclose(got.imag, [np.pi, -np.pi, 0.0, np.pi], rtol=1e-6)
    assert not np.signbit(got.imag[2])
    assert np.signbit(tf.math.log1p(tf.constant(np.array([complex(-2.0, -0.0)], dtype))).numpy()
                      .imag[0])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_rsqrt_of_negative_zero_is_negative_infinity_on_the_gpu_in_every_shape(dtype):
    """TensorFlow: rsqrt(-0.) = -inf, rsqrt(0.) = inf (float16 too)."""
    for shape in ((), (1,), (5,)):
        out = tf.math.rsqrt(tf.constant(np.full(shape, -0.0, dtype))).numpy()
        assert (out == -np.inf).all()
        assert (tf.math.rsqrt(tf.constant(np.zeros(shape, dtype))).numpy() == np.inf).all()


def test_a_bad_row_leaves_a_variable_and_its_slots_as_they_were_on_the_gpu():
    # The recorded CuPy's test (`test_recorded_gpu`), on CUDA itself: the gated scatters and
    # sparse updates (fused kernels, CuPy's `copyto(where=)`), errors at the next read.
    from eager.base import device_checks  # noqa: PLC0415
    from recorded_gpu_worker import gated_sparse_writes  # noqa: PLC0415

    got = gated_sparse_writes(tf, device_checks)
    with tf.device("CPU:0"):
        expected = gated_sparse_writes(tf, device_checks)
    for name, entry in got.items():
        assert entry["pending"] == 1 and entry["raised"] == expected[name]["raised"], name
        assert entry["unchanged"], name
        for g, e in zip(entry["after"], expected[name]["after"]):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=name)


def test_python_number_arguments_give_the_cpus_values_on_the_gpu():
    from recorded_gpu_worker import number_argument_values  # noqa: PLC0415

    got = number_argument_values(tf)
    with tf.device("CPU:0"):
        assert got == number_argument_values(tf)
