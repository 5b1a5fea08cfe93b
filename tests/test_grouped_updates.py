"""The grouped gradient descent update (`eager.ops.cupy_grouped_updates`,
`eager.ops.training_ops_grouped`): its CUDA source compiled for the host and run thread by
thread against numpy, its launches and argument layout, the op on the CPU against one
`ResourceApplyGradientDescent` per variable, and its errors. On the CUDA backend it runs in
`test_recorded_gpu` (values against the CPU, one launch for an SGD step's six variables)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, strategies as st

import eager
from eager import TensorSpec
from eager.core.dispatch import execute
from eager.ops import cupy_grouped_updates as grouped
from eager.ops import training_ops
from eager.ops.training_ops_grouped import (GROUPED_GD, MAX_GROUP, grouped_gradient_descent,
                                            groups_on)
from eager.devices import registry

_SHIM = r"""
struct Dim { unsigned x; };
static Dim blockIdx = {0}, blockDim = {1}, threadIdx = {0}, gridDim = {1};
extern "C" void set_thread(unsigned grid, unsigned block, unsigned b, unsigned t) {
    gridDim.x = grid; blockDim.x = block; blockIdx.x = b; threadIdx.x = t;
}
#define __global__
static inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
static inline float __fsub_rn(float a, float b) { volatile float r = a - b; return r; }
static inline double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }
static inline double __dsub_rn(double a, double b) { volatile double r = a - b; return r; }
"""

_DTYPES = (np.float32, np.float64)


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """The CUDA sources compiled as host C++ (one thread at a time: `set_thread`)."""
    compiler = shutil.which("g++") or shutil.which("clang++")
    if compiler is None:
        pytest.skip("no C++ compiler to build the kernel sources for the host")
    directory = tmp_path_factory.mktemp("grouped")
    out = {}
    for dtype in _DTYPES:
        source = directory / f"{np.dtype(dtype).name}.cpp"
        source.write_text(_SHIM + grouped.kernel_source(dtype))
        library = directory / f"{np.dtype(dtype).name}.so"
        subprocess.run([compiler, "-O2", "-ffp-contract=off", "-shared", "-fPIC", "-o",
                        str(library), str(source)], check=True, capture_output=True)
        lib = ctypes.CDLL(str(library))
        kernel = getattr(lib, grouped.kernel_name(dtype))
        kernel.restype = None
        kernel.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p, ctypes.c_void_p,
                                               ctypes.c_longlong] * grouped.SLOTS
        out[np.dtype(dtype)] = (lib, kernel)
    return out


def _launch_on_host(host_kernels, grid, block, args):
    """Runs the kernel as `grid` blocks of `block` threads, one thread after the other."""
    lib, kernel = host_kernels[np.dtype(args[0].dtype)]
    values = [a.ctypes.data if isinstance(a, np.ndarray) else int(a) for a in args]
    for b in range(grid[0]):
        for t in range(block[0]):
            lib.set_thread(grid[0], block[0], b, t)
            kernel(*values)


class _Module:
    """An array module whose RawKernel runs the source on the host (`host_kernels`) or the
    numpy reference, recording every launch's grid, block and arguments."""

    def __init__(self, run):
        self.launches = []
        self._run = run

    def RawKernel(self, code, name, options=()):  # noqa: N802 - CuPy's name
        assert "--fmad=false" in options

        def launch(grid, block, args):
            assert len(args) == 1 + 3 * grouped.SLOTS
            self.launches.append((grid, block, args))
            self._run(grid, block, args)
        return launch


def _pairs(rng, sizes, dtype):
    variables = [rng.standard_normal(n).astype(dtype) for n in sizes]
    deltas = [rng.standard_normal(n).astype(dtype) for n in sizes]
    return variables, deltas


def _expected(variables, deltas, alpha):
    with np.errstate(all="ignore"):  # numpy's two roundings, IEEE results of hostile values
        return [v - np.multiply(d, alpha) for v, d in zip(variables, deltas)]


@given(sizes=st.lists(st.integers(0, 40), min_size=1, max_size=19),
       dtype=st.sampled_from(_DTYPES), threads=st.sampled_from([(1, 1), (2, 3), (3, 8)]),
       seed=st.integers(0, 2**16))
def test_the_cuda_source_run_thread_by_thread_gives_numpys_update(host_kernels, sizes, dtype,
                                                                   threads, seed):
    """Each element updated exactly once, by its own pair, with numpy's rounding: any grid
    (the loop strides), segments of any size (empty ones too), more pairs than one launch."""
    rng = np.random.default_rng(seed)
    variables, deltas = _pairs(rng, sizes, dtype)
    alpha = np.array(rng.uniform(0.01, 3.0), dtype)
    expected = _expected(variables, deltas, alpha)
    blocks, per_block = threads
    module = _Module(lambda grid, block, args: _launch_on_host(
        host_kernels, (blocks,), (per_block,), args))
    grouped.GroupedGradientDescent()(module, alpha, variables, deltas)
    for got, want in zip(variables, expected):
        np.testing.assert_array_equal(got, want)
    assert len(module.launches) == sum(
        1 for k in range(0, len(sizes), grouped.SLOTS) if sum(sizes[k:k + grouped.SLOTS]))


@pytest.mark.parametrize("dtype", _DTYPES)
def test_the_numpy_reference_is_the_cuda_sources_computation(host_kernels, dtype):
    """What CuPy stand-ins run for the kernel, against the source itself, on hostile values."""
    rng = np.random.default_rng(3)
    info = np.finfo(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.max, info.tiny, -info.tiny / 4],
                       dtype)
    variables, deltas = _pairs(rng, [8, 0, 5, 8], dtype)
    variables[0][:], deltas[3][:] = special, special
    for alpha in (np.array(0.5, dtype), np.array(info.max, dtype), np.array(-0.0, dtype)):
        on_host = [v.copy() for v in variables]
        by_reference = [v.copy() for v in variables]
        grouped.GroupedGradientDescent()(_Module(lambda grid, block, args: _launch_on_host(
            host_kernels, grid, block, args)), alpha, on_host, deltas)
        grouped.GroupedGradientDescent()(_Module(lambda grid, block, args: (
            grouped.GroupedGradientDescent.reference(args))), alpha, by_reference, deltas)
        for a, b, want in zip(on_host, by_reference, _expected(variables, deltas, alpha)):
            np.testing.assert_array_equal(a, want)
            np.testing.assert_array_equal(b, want)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_the_cuda_source_compiles_with_nvcc(tmp_path, dtype):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no CUDA compiler (nvcc) on this machine")
    source = tmp_path / "grouped.cu"
    source.write_text(grouped.kernel_source(dtype))
    # nvcc's default contracts a * b - c into one fused multiply-add: the source's rounding
    # intrinsics must keep the two roundings even without `--fmad=false`.
    result = subprocess.run([nvcc, "--ptx", "-o", str(tmp_path / "out.ptx"), str(source)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    ptx = (tmp_path / "out.ptx").read_text()
    assert grouped.kernel_name(dtype) in ptx
    assert "mul.rn" in ptx and "sub.rn" in ptx and "fma" not in ptx


def test_a_launch_pads_unused_slots_with_the_last_pair_and_sizes_its_grid():
    module = _Module(lambda grid, block, args: grouped.GroupedGradientDescent.reference(args))
    rng = np.random.default_rng(0)
    variables, deltas = _pairs(rng, [3, 2 * grouped.THREADS + 1], np.float32)
    alpha = np.array(0.25, np.float32)
    grouped.GroupedGradientDescent()(module, alpha, variables, deltas)
    ((grid, block, args),) = module.launches
    assert block == (grouped.THREADS,) and grid == (3,)
    ends = [int(e) for e in args[3::3]]
    assert ends == [3] + [3 + 2 * grouped.THREADS + 1] * (grouped.SLOTS - 1)
    assert all(v is variables[1] for v in args[4::3])
    huge = [np.zeros(grouped.THREADS * grouped.MAX_BLOCKS * 2, np.float32)] * 1
    module.launches.clear()
    grouped.GroupedGradientDescent()(module, alpha, huge, [huge[0].copy()])
    assert module.launches[0][0] == (grouped.MAX_BLOCKS,)


def test_covers_only_contiguous_wide_floats_of_one_shape_and_dtype():
    covers = grouped.GroupedGradientDescent.covers
    a = np.zeros((4, 3), np.float32)
    assert covers(a, np.ones((4, 3), np.float32))
    assert covers(np.zeros(3), np.ones(3))
    assert not covers(np.zeros(3, np.float16), np.ones(3, np.float16))
    assert not covers(a, np.ones((4, 3)))
    assert not covers(a, np.ones((3, 4), np.float32).T)
    assert not covers(a, np.ones(12, np.float32))


# -- the op -------------------------------------------------------------------------------------

def _variables(dtype=np.float32, sizes=((3, 2), (4,), (), (2, 2, 2))):
    rng = np.random.default_rng(1)
    return [eager.Variable(rng.standard_normal(s).astype(dtype), name=f"v{i}")
            for i, s in enumerate(sizes)]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_the_op_equals_one_gradient_descent_per_variable(dtype):
    grouped_vars, single = _variables(dtype), _variables(dtype)
    rng = np.random.default_rng(2)
    grads = [eager.constant(rng.standard_normal(v.shape).astype(dtype)) for v in single]
    lr = eager.constant(np.array(0.3, dtype))
    execute(grouped_gradient_descent(len(grads)), (*[v.handle for v in grouped_vars], lr, *grads))
    for v, g in zip(single, grads):
        execute(training_ops.APPLY_GRADIENT_DESCENT, (v.handle, lr, g))
    for a, b in zip(grouped_vars, single):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_the_op_traced_equals_the_op_eagerly():
    eager_vars, traced_vars = _variables(), _variables()
    grads = [eager.ones(v.shape) * 0.5 for v in eager_vars]
    lr = eager.constant(0.1)
    op = grouped_gradient_descent(len(grads))
    execute(op, (*[v.handle for v in eager_vars], lr, *grads))

    @eager.function
    def update():
        execute(op, (*[v.handle for v in traced_vars], lr, *grads))

    update()
    for a, b in zip(eager_vars, traced_vars):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_bad_pair_is_resource_apply_gradient_descents_error_and_changes_nothing():
    variables = _variables()
    before = [v.numpy() for v in variables]
    lr = eager.constant(0.1)
    op = grouped_gradient_descent(2)
    with pytest.raises(eager.errors.InvalidArgumentError,
                       match=r"ResourceApplyGradientDescent: var 'v1' and grad do not have the "
                             r"same shape: \[4\] vs. \[5\]"):
        execute(op, (variables[0].handle, variables[1].handle, lr, eager.ones((3, 2)),
                     eager.ones(5)))
    with pytest.raises(eager.errors.InvalidArgumentError, match=r"grad must be float32"):
        execute(op, (variables[0].handle, variables[1].handle, lr, eager.ones((3, 2)),
                     eager.ones(4, eager.float64)))
    with pytest.raises(eager.errors.InvalidArgumentError, match="passed twice"):
        execute(op, (variables[0].handle, variables[0].handle, lr, eager.ones((3, 2)),
                     eager.ones((3, 2))))
    for v, b in zip(variables, before):
        np.testing.assert_array_equal(v.numpy(), b)
    # Inference (what tracing trusts) rejects what the kernel does, from types alone.
    spec = TensorSpec
    with pytest.raises(eager.errors.InvalidArgumentError, match=r"\[4\] vs. \[5\]"):
        op.infer(variables[0].handle, variables[1].handle, spec([], eager.float32),
                 spec([3, 2], eager.float32), spec([5], eager.float32))
    assert op.infer(variables[0].handle, variables[1].handle, spec([], eager.float32),
                    spec([3, 2], eager.float32), spec([4], eager.float32)) == ()


def test_one_op_per_group_size_within_bounds():
    assert grouped_gradient_descent(3) is grouped_gradient_descent(3)
    assert grouped_gradient_descent(3).name == GROUPED_GD
    assert grouped_gradient_descent(3).resource_writes == (0, 1, 2)
    for n in (1, MAX_GROUP + 1):
        with pytest.raises(ValueError, match=f"2 to {MAX_GROUP} variables, not {n}"):
            grouped_gradient_descent(n)


def test_the_cpu_does_not_group_so_sgd_keeps_one_op_per_variable():
    """Only a backend with a grouped launch groups: on the CPU (and the simulated GPUs) an
    eager SGD step's ops, and so the placement log, are TensorFlow's."""
    assert not groups_on(registry.lookup("CPU:0"))
