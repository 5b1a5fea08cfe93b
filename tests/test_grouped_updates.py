"""The grouped optimizer updates (`eager.ops.cupy_grouped_updates`,
`eager.ops.training_ops_grouped`): their CUDA sources compiled for the host and run thread by
thread against the CPU's numpy arithmetic, their launches and argument layout, the ops on the
CPU against one per-variable op per variable, and their errors. On the CUDA backend they run in
`test_recorded_gpu` (values against the CPU, one launch for an SGD or Adam step's variables)."""

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
from eager.ops.training_ops_grouped import KINDS, MAX_GROUP, grouped_update, groups_on
from eager.devices import registry

_SHIM = r"""
#include <cmath>
struct Dim { unsigned x; };
static Dim blockIdx = {0}, blockDim = {1}, threadIdx = {0}, gridDim = {1};
extern "C" void set_thread(unsigned grid, unsigned block, unsigned b, unsigned t) {
    gridDim.x = grid; blockDim.x = block; blockIdx.x = b; threadIdx.x = t;
}
#define __global__
#define ROUNDED(name, type, expr) \
    static inline type name(type a, type b) { volatile type r = expr; return r; }
ROUNDED(__fadd_rn, float, a + b) ROUNDED(__fsub_rn, float, a - b)
ROUNDED(__fmul_rn, float, a * b) ROUNDED(__fdiv_rn, float, a / b)
ROUNDED(__dadd_rn, double, a + b) ROUNDED(__dsub_rn, double, a - b)
ROUNDED(__dmul_rn, double, a * b) ROUNDED(__ddiv_rn, double, a / b)
static inline float __fsqrt_rn(float a) { return std::sqrt(a); }
static inline double __dsqrt_rn(double a) { return std::sqrt(a); }
"""

_DTYPES = (np.float32, np.float64)
_KINDS = sorted(grouped.GROUPED)


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """The CUDA sources compiled as host C++, run one thread at a time (`set_thread`)."""
    compiler = shutil.which("g++") or shutil.which("clang++")
    if compiler is None:
        pytest.skip("no C++ compiler to build the kernel sources for the host")
    directory = tmp_path_factory.mktemp("grouped")
    out = {}
    for kind, update in grouped.GROUPED.items():
        for dtype in map(np.dtype, _DTYPES):
            stem = directory / f"{kind}_{dtype.name}"
            stem.with_suffix(".cpp").write_text(_SHIM + update.kernel_source(dtype))
            subprocess.run([compiler, "-O2", "-ffp-contract=off", "-shared", "-fPIC", "-o",
                            str(stem.with_suffix(".so")), str(stem.with_suffix(".cpp"))],
                           check=True, capture_output=True)
            lib = ctypes.CDLL(str(stem.with_suffix(".so")))
            kernel = getattr(lib, update.kernel_name(dtype))
            kernel.restype = None
            width = len(update.arrays)
            kernel.argtypes = [ctypes.c_void_p] * len(update.scalars) + (
                [ctypes.c_void_p] * width + [ctypes.c_longlong]) * grouped.SLOTS
            out[kind, dtype] = (lib, kernel)
    return out


class _Module:
    """An array module whose RawKernel runs `run(kernel name, grid, block, args)`, recording
    every launch's grid, block and arguments."""

    def __init__(self, run):
        self.launches = []
        self._run = run

    def RawKernel(self, code, name, options=()):  # noqa: N802 - CuPy's name
        assert "--fmad=false" in options

        def launch(grid, block, args):
            self.launches.append((grid, block, args))
            self._run(name, grid, block, args)
        return launch


def _on_host(host_kernels, kind, threads=None):
    """A `_Module` running the host-compiled source as `threads` (blocks, threads per block),
    or as the launch asks, one thread after the other."""
    def run(name, grid, block, args):
        lib, kernel = host_kernels[kind, np.dtype(args[0].dtype)]
        blocks, per_block = threads or (grid[0], block[0])
        values = [a.ctypes.data if isinstance(a, np.ndarray) else int(a) for a in args]
        for b in range(blocks):
            for t in range(per_block):
                lib.set_thread(blocks, per_block, b, t)
                kernel(*values)
    return _Module(run)


def _by_reference(kind):
    return _Module(lambda name, grid, block, args: grouped.GROUPED[kind].reference(args))


def _case(kind, sizes, dtype, rng, hostile=False):
    """(scalars, per-variable arrays) for `kind`: Adam's second moments non-negative."""
    dtype = np.dtype(dtype)
    width = len(grouped.GROUPED[kind].arrays)
    per = [[rng.standard_normal(n).astype(dtype) for _ in range(width)] for n in sizes]
    if kind == "adam":
        for arrays in per:
            arrays[2] = np.abs(arrays[2])
        scalars = [np.asarray(s, dtype) for s in (0.9 ** 3, 0.999 ** 3, 0.01, 0.1, 0.001, 1e-7)]
    elif kind in ("momentum", "nesterov"):
        scalars = [np.asarray(rng.uniform(0.01, 3.0), dtype), np.asarray(0.9, dtype)]
    else:
        scalars = [np.asarray(rng.uniform(0.01, 3.0), dtype)]
    if hostile:
        info = np.finfo(dtype)
        per[0][0][:] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.max, info.tiny,
                                 -info.tiny / 4], dtype)[:sizes[0]]
        per[-1][-1][:] = np.array([np.nan, np.inf, -0.0, info.max, 0.0, -np.inf, 1.0, -1.0],
                                  dtype)[:sizes[-1]]
    return scalars, per


def _cpu_result(kind, scalars, per):
    """What `training_ops`' CPU arithmetic makes of copies of `per`."""
    out = [[a.copy() for a in arrays] for arrays in per]
    with np.errstate(all="ignore"):
        for arrays in out:
            if kind == "adam":
                var, m, v, grad = arrays
                training_ops._adam_math(np, var, m, v, None, *scalars, grad)
            elif kind in ("momentum", "nesterov"):
                (lr, momentum), (var, accum, grad) = scalars, arrays
                training_ops._momentum_math(np, var, accum, np.multiply(grad, lr), momentum,
                                            kind == "nesterov")
            else:
                var, delta = arrays
                np.subtract(var, np.multiply(delta, scalars[0]), out=var)
    return out


@given(sizes=st.lists(st.integers(0, 40), min_size=1, max_size=19),
       dtype=st.sampled_from(_DTYPES), kind=st.sampled_from(_KINDS),
       threads=st.sampled_from([(1, 1), (2, 3), (3, 8)]), seed=st.integers(0, 2**16))
def test_each_cuda_source_run_thread_by_thread_gives_the_cpus_update(host_kernels, sizes, dtype,
                                                                     kind, threads, seed):
    """Each element updated exactly once, by its own variable, with the CPU's rounding: any
    grid (the loop strides), variables of any size (empty ones too), more than one launch."""
    scalars, per = _case(kind, sizes, dtype, np.random.default_rng(seed))
    expected = _cpu_result(kind, scalars, per)
    module = _on_host(host_kernels, kind, threads)
    grouped.GROUPED[kind](module, scalars, per)
    for got, want in zip(per, expected):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert len(module.launches) == sum(
        1 for k in range(0, len(sizes), grouped.SLOTS) if sum(sizes[k:k + grouped.SLOTS]))


def _check_on_hostile_values(module_for, kind, dtype):
    """`module_for(kind)`'s launches of `kind` against the CPU's update, on hostile values."""
    scalars, per = _case(kind, [8, 0, 5, 8], dtype, np.random.default_rng(3), hostile=True)
    expected = _cpu_result(kind, scalars, per)
    got = [[a.copy() for a in arrays] for arrays in per]
    grouped.GROUPED[kind](module_for(kind), scalars, got)
    for g_arrays, w_arrays in zip(got, expected):
        for g, w in zip(g_arrays, w_arrays):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("kind", _KINDS)
def test_the_numpy_reference_is_the_cpus_update(kind, dtype):
    """What CuPy stand-ins run for a kernel (any machine: no compiler needed)."""
    _check_on_hostile_values(_by_reference, kind, dtype)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("kind", _KINDS)
def test_the_cuda_source_on_hostile_values_is_the_cpus_update(host_kernels, kind, dtype):
    _check_on_hostile_values(lambda k: _on_host(host_kernels, k), kind, dtype)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("kind", _KINDS)
def test_each_cuda_source_compiles_with_nvcc_without_contraction(tmp_path, kind, dtype):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no CUDA compiler (nvcc) on this machine")
    update = grouped.GROUPED[kind]
    source = tmp_path / "grouped.cu"
    source.write_text(update.kernel_source(dtype))
    # nvcc's default contracts a * b + c into one fused multiply-add: the source's rounding
    # intrinsics must keep the separate roundings even without `--fmad=false`.
    result = subprocess.run([nvcc, "--ptx", "-o", str(tmp_path / "out.ptx"), str(source)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    ptx = (tmp_path / "out.ptx").read_text()
    assert update.kernel_name(dtype) in ptx
    assert "mul.rn" in ptx and "sub.rn" in ptx and "fma" not in ptx


def test_a_launch_pads_unused_slots_with_the_last_variable_and_sizes_its_grid():
    update = grouped.GROUPED["gradient_descent"]
    module = _by_reference("gradient_descent")
    scalars, per = _case("gradient_descent", [3, 2 * grouped.THREADS + 1], np.float32,
                         np.random.default_rng(0))
    update(module, scalars, per)
    ((grid, block, args),) = module.launches
    assert block == (grouped.THREADS,) and grid == (3,) and len(args) == update.arity
    ends = [int(e) for e in args[3::3]]
    assert ends == [3] + [3 + 2 * grouped.THREADS + 1] * (grouped.SLOTS - 1)
    assert all(v is per[1][0] for v in args[4::3])
    huge = np.zeros(grouped.THREADS * grouped.MAX_BLOCKS * 2, np.float32)
    module.launches.clear()
    update(module, scalars, [[huge, huge.copy()]])
    assert module.launches[0][0] == (grouped.MAX_BLOCKS,)
    adam = grouped.GROUPED["adam"]
    scalars, per = _case("adam", [4, 4], np.float64, np.random.default_rng(1))
    module = _by_reference("adam")
    adam(module, scalars, per)
    ((_, _, args),) = module.launches
    assert len(args) == adam.arity == 6 + 5 * grouped.SLOTS
    assert args[6:10] == tuple(per[0]) and int(args[10]) == 4


def test_covers_only_contiguous_wide_floats_of_one_shape_and_dtype():
    covers = grouped.GroupedUpdate.covers
    a = np.zeros((4, 3), np.float32)
    assert covers([a, np.ones((4, 3), np.float32)])
    assert covers([np.zeros(3), np.ones(3), np.ones(3), np.ones(3)])
    assert not covers([np.zeros(3, np.float16), np.ones(3, np.float16)])
    assert not covers([a, np.ones((4, 3))])
    assert not covers([a, np.ones((3, 4), np.float32).T])
    assert not covers([a, np.ones(12, np.float32)])
    assert not covers([a, a.copy(), np.ones((3, 4), np.float32).T, a.copy()])


# -- the ops -------------------------------------------------------------------------------------

def _variables(dtype=np.float32, sizes=((3, 2), (4,), (), (2, 2, 2)), seed=1):
    rng = np.random.default_rng(seed)
    return [eager.Variable(rng.standard_normal(s).astype(dtype), name=f"v{i}")
            for i, s in enumerate(sizes)]


def _inputs(kind, variables, dtype, seed=2):
    """(per-variable handle tuples, scalars, gradients) for a grouped op of `kind`: the slots
    are variables of their own, made the same from `seed` for every call."""
    rng = np.random.default_rng(seed)
    if kind == "momentum":
        per = [(v, eager.Variable(rng.standard_normal(v.shape).astype(dtype))) for v in variables]
        scalars = [eager.constant(np.array(s, dtype)) for s in (0.3, 0.9)]
    elif kind == "adam":
        per = [(v, eager.Variable(rng.standard_normal(v.shape).astype(dtype)),
                eager.Variable(np.abs(rng.standard_normal(v.shape)).astype(dtype)))
               for v in variables]
        scalars = [eager.constant(np.array(s, dtype)) for s in (0.9 ** 2, 0.999 ** 2, 0.01,
                                                                 0.1, 0.001, 1e-7)]
    else:
        per = [(v,) for v in variables]
        scalars = [eager.constant(np.array(0.3, dtype))]
    grads = [eager.constant(rng.standard_normal(v.shape).astype(dtype)) for v in variables]
    return per, scalars, grads


def _flat(per):
    return [v.handle for group in per for v in group]


_OP_CASES = [("gradient_descent", {}), ("momentum", {"use_nesterov": False}),
             ("momentum", {"use_nesterov": True}), ("adam", {})]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize(("kind", "attrs"), _OP_CASES)
def test_a_grouped_op_equals_one_per_variable_op_per_variable(kind, attrs, dtype):
    per, scalars, grads = _inputs(kind, _variables(dtype), dtype)
    single_per, _, _ = _inputs(kind, _variables(dtype), dtype)
    execute(grouped_update(kind, len(grads)), (*_flat(per), *scalars, *grads), attrs)
    for group, grad in zip(single_per, grads):
        execute(KINDS[kind].op, KINDS[kind].op_inputs([v.handle for v in group], scalars, grad),
                attrs)
    for a, b in zip(per, single_per):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x.numpy(), y.numpy())


@pytest.mark.parametrize(("kind", "attrs"), _OP_CASES)
def test_a_grouped_op_traced_equals_it_eagerly(kind, attrs):
    eager_per, scalars, grads = _inputs(kind, _variables(), np.float32)
    traced_per, _, _ = _inputs(kind, _variables(), np.float32)
    op = grouped_update(kind, len(grads))
    execute(op, (*_flat(eager_per), *scalars, *grads), attrs)

    @eager.function
    def update():
        execute(op, (*_flat(traced_per), *scalars, *grads), attrs)

    update()
    for a, b in zip(eager_per, traced_per):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_a_bad_variable_is_the_per_variable_ops_error_and_changes_nothing():
    variables = _variables()
    before = [v.numpy() for v in variables]
    lr = eager.constant(0.1)
    op = grouped_update("gradient_descent", 2)
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
    adam = grouped_update("adam", 2)
    per, scalars, grads = _inputs("adam", variables[:2], np.float32)
    wrong_slot = eager.Variable(np.zeros(3, np.float32), name="wrong")
    with pytest.raises(eager.errors.InvalidArgumentError,
                       match=r"ResourceApplyAdam: slot wrong \(float32\[3\]\) does not match"):
        execute(adam, (*_flat(per[:1]), variables[1].handle, per[1][1].handle, wrong_slot.handle,
                       *scalars, *grads))
    for v, b in zip(variables, before):
        np.testing.assert_array_equal(v.numpy(), b)
    # Inference (what tracing trusts) rejects what the kernel does, from types alone.
    spec = TensorSpec
    with pytest.raises(eager.errors.InvalidArgumentError, match=r"\[4\] vs. \[5\]"):
        op.infer(variables[0].handle, variables[1].handle, spec([], eager.float32),
                 spec([3, 2], eager.float32), spec([5], eager.float32))
    assert op.infer(variables[0].handle, variables[1].handle, spec([], eager.float32),
                    spec([3, 2], eager.float32), spec([4], eager.float32)) == ()


def test_one_op_per_kind_and_group_size_within_bounds():
    assert grouped_update("adam", 3) is grouped_update("adam", 3)
    assert grouped_update("adam", 3).name == "_GroupedResourceApplyAdam"
    assert grouped_update("adam", 3).resource_writes == tuple(range(9))
    assert grouped_update("gradient_descent", 3).name == "_GroupedResourceApplyGradientDescent"
    assert grouped_update("gradient_descent", 3).resource_writes == (0, 1, 2)
    assert grouped_update("momentum", 3).name == "_GroupedResourceApplyKerasMomentum"
    assert grouped_update("momentum", 3).resource_writes == tuple(range(6))
    for n in (1, MAX_GROUP + 1):
        with pytest.raises(ValueError, match=f"2 to {MAX_GROUP} variables, not {n}"):
            grouped_update("gradient_descent", n)


def test_the_cpu_does_not_group_so_optimizers_keep_one_op_per_variable():
    """Only a backend with a grouped launch groups: on the CPU (and the simulated GPUs) an
    eager step's ops, and so the placement log, are TensorFlow's."""
    assert not groups_on(registry.lookup("CPU:0"))


def test_which_optimizers_group_their_updates():
    """SGD (with or without momentum) and Adam (AdamW too: its decay runs before the
    updates); not AMSGrad, and not a subclass with an update or scalars of its own, whose
    per-variable ops must run as it wrote them."""
    class OwnUpdate(eager.optimizers.SGD):
        def _update(self, var, slots, scalars, grad, indices, fast):
            return super()._update(var, slots, scalars, grad, indices, fast)

    class OwnScalars(eager.optimizers.Adam):
        def _scalars(self, np_dtype, lr):
            return super()._scalars(np_dtype, lr)

    kinds = {name: opt._grouped_kind() for name, opt in {
        "sgd": eager.optimizers.SGD(0.1), "momentum": eager.optimizers.SGD(0.1, momentum=0.9),
        "adam": eager.optimizers.Adam(), "adamw": eager.optimizers.AdamW(),
        "amsgrad": eager.optimizers.Adam(amsgrad=True), "rmsprop": eager.optimizers.RMSprop(),
        "own update": OwnUpdate(0.1), "own scalars": OwnScalars()}.items()}
    assert kinds == {"sgd": ("gradient_descent", {}),
                     "momentum": ("momentum", {"use_nesterov": False}), "adam": ("adam", {}),
                     "adamw": ("adam", {}), "amsgrad": None, "rmsprop": None,
                     "own update": None, "own scalars": None}
    nesterov = eager.optimizers.SGD(0.1, momentum=0.9, nesterov=True)._grouped_kind()
    assert nesterov == ("momentum", {"use_nesterov": True})
