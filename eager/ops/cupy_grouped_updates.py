"""Gradient descent on many variables in one CUDA launch: the optimizers' grouped update.

Why: without momentum an SGD step updates each variable with one kernel, and on a GPU at
training batch sizes a step's time is mostly the host's launches (about 15 µs each through
CuPy on an H200). A model with six variables pays six launches where one would do; PyTorch's
`foreach` optimizers group their updates the same way. `GroupedGradientDescent` launches one
raw CUDA kernel (`cupy.RawKernel`, cheaper to call than an `ElementwiseKernel`: no type
resolution or broadcasting per call) over up to `SLOTS` (variable, delta) pairs; more pairs take
one launch per `SLOTS`.

The kernel: each thread walks the pairs' elements laid end to end (a grid-stride loop, so any
grid covers them all), finds the pair an element belongs to from the pairs' end offsets, and
stores `var - alpha * delta` with each operation rounded on its own (`__fmul_rn`, `__fsub_rn`:
no multiply-add contraction), bit for bit what the per-variable kernel and numpy compute.
`alpha` is read from the device (the optimizers keep their scalars there), so nothing waits
for the GPU. Unused slots repeat the last pair with the same end offset: never reached.

Only float32 and float64 C-contiguous pairs of one dtype are grouped (`covers`); anything else
takes the per-variable kernel. `reference` is the same computation in numpy, for stand-ins of
CuPy that cannot run CUDA C (the tests check it against the source compiled for the host).
"""

from __future__ import annotations

import numpy as np

from .cupy_kernels import COMPILE_OPTIONS

__all__ = ["SLOTS", "THREADS", "GroupedGradientDescent", "kernel_source", "kernel_name"]

#: Pairs per launch: each is three kernel arguments (variable, delta, end offset).
SLOTS = 8
#: Threads per block; the grid is enough blocks for one element per thread, at most
#: `MAX_BLOCKS` (the loop strides over the rest).
THREADS = 256
MAX_BLOCKS = 4096

_C_TYPES = {np.dtype(np.float32): ("float", "f"), np.dtype(np.float64): ("double", "d")}


def kernel_name(dtype) -> str:
    return f"eager_grouped_gradient_descent_{_C_TYPES[np.dtype(dtype)][0]}"


def kernel_source(dtype) -> str:
    """The CUDA C of the grouped update for `dtype` (float32 or float64)."""
    ctype, suffix = _C_TYPES[np.dtype(dtype)]
    params = ",\n    ".join(f"{ctype}* v{k}, const {ctype}* d{k}, long long e{k}"
                            for k in range(SLOTS))
    branches = "\n".join(
        f"        {'if' if k == 0 else 'else if'} (i < e{k}) "
        f"{{ v = v{k}; d = d{k}; j = i{'' if k == 0 else f' - e{k - 1}'}; }}"
        for k in range(SLOTS - 1))
    last = SLOTS - 1
    return f"""extern "C" __global__ void {kernel_name(dtype)}(
    const {ctype}* alpha,
    {params})
{{
    const {ctype} a = *alpha;
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < e{last};
         i += stride) {{
        {ctype}* v;
        const {ctype}* d;
        long long j;
{branches}
        else {{ v = v{last}; d = d{last}; j = i - e{last - 1}; }}
        v[j] = __{suffix}sub_rn(v[j], __{suffix}mul_rn(a, d[j]));
    }}
}}
"""


class GroupedGradientDescent:
    """`var -= alpha * delta` for many (var, delta) pairs of one dtype, in one launch per
    `SLOTS` pairs (see the module doc). Kernels are built once per (array module, dtype)."""

    __slots__ = ("_module", "_kernels")

    def __init__(self):
        self._module = None
        self._kernels = {}

    @staticmethod
    def covers(var, delta) -> bool:
        """Whether the pair can be grouped: float32/float64, one dtype and shape, C-contiguous
        (the kernel indexes both flat)."""
        return (var.dtype in _C_TYPES and delta.dtype == var.dtype and delta.shape == var.shape
                and var.flags.c_contiguous and delta.flags.c_contiguous)

    def _kernel(self, xp, dtype):
        if xp is not self._module:
            self._module, self._kernels = xp, {}
        kernel = self._kernels.get(dtype)
        if kernel is None:
            kernel = self._kernels[dtype] = xp.RawKernel(
                kernel_source(dtype), kernel_name(dtype), options=COMPILE_OPTIONS)
        return kernel

    def __call__(self, xp, alpha, variables, deltas):
        """Updates `variables` in place; `alpha` is a 0-d device array of their dtype, and every
        pair passed `covers`."""
        kernel = self._kernel(xp, variables[0].dtype)
        for start in range(0, len(variables), SLOTS):
            args = [alpha]
            end = 0
            for var, delta in zip(variables[start:start + SLOTS], deltas[start:start + SLOTS]):
                end += var.size
                args += (var, delta, np.int64(end))
            if not end:
                continue
            args += args[-3:] * ((1 + 3 * SLOTS - len(args)) // 3)
            blocks = min(-(-end // THREADS), MAX_BLOCKS)
            kernel((blocks,), (THREADS,), tuple(args))

    @staticmethod
    def reference(args):
        """The kernel's computation in numpy on its argument tuple (arrays that numpy can
        write in place): for CuPy stand-ins."""
        alpha = args[0]
        start = 0
        for k in range(SLOTS):
            var, delta, end = args[1 + 3 * k: 4 + 3 * k]
            if end > start:
                flat, change = var.reshape(-1), delta.reshape(-1)
                with np.errstate(all="ignore"):
                    np.subtract(flat, np.multiply(alpha, change), out=flat)
            start = max(start, int(end))

    def __repr__(self):
        return f"<GroupedGradientDescent: {SLOTS} pairs per launch>"
