"""Optimizer updates of many variables in one CUDA launch: the optimizers' grouped updates.

Why: an optimizer updates each variable with one kernel (`cupy_kernels.UPDATES`), and on a GPU
at training batch sizes a step's time is mostly the host's launches (about 15 µs each through
CuPy on an H200). A model with six variables pays six launches where one would do; PyTorch's
`foreach` optimizers group their updates the same way. A `GroupedUpdate` launches one raw CUDA
kernel (`cupy.RawKernel`, cheaper to call than an `ElementwiseKernel`: no type resolution or
broadcasting per call) over up to `SLOTS` variables; more variables take one launch per `SLOTS`.

The kernel: each thread walks the variables' elements laid end to end (a grid-stride loop, so
any grid covers them all), finds the variable an element belongs to from the variables' end
offsets, and computes the update with each operation rounded on its own (`__fmul_rn`,
`__fsub_rn`, ...: no multiply-add contraction), in the order of `training_ops`' numpy
arithmetic, so the results are the per-variable kernels' and the CPU's bit for bit. The
scalars (learning rate, Adam's powers and constants) are read from the device, where the
optimizers keep them, so nothing waits for the GPU. Unused slots repeat the last variable's
arrays with the same end offset: never reached.

`GROUPED` holds the updates: plain gradient descent (`var -= alpha * delta`), Keras' momentum
and Nesterov momentum (`training_ops._momentum_math`) and Adam (`training_ops._adam_math`
without AMSGrad). Only float32 and float64 variables whose arrays
are all C-contiguous, of one dtype and shape, are grouped (`covers`); anything else takes the
per-variable kernel. `reference` is the same computation in numpy, for stand-ins of CuPy that
cannot run CUDA C (the tests check it against the source compiled for the host).
"""

from __future__ import annotations

import numpy as np

from .cupy_kernels import COMPILE_OPTIONS

__all__ = ["SLOTS", "THREADS", "MAX_BLOCKS", "GroupedUpdate", "GROUPED"]

#: Variables per launch.
SLOTS = 8
#: Threads per block; the grid is enough blocks for one element per thread, at most
#: `MAX_BLOCKS` (the loop strides over the rest).
THREADS = 256
MAX_BLOCKS = 4096

_C_TYPES = {np.dtype(np.float32): ("float", "f"), np.dtype(np.float64): ("double", "d")}


class GroupedUpdate:
    """One grouped update: `arrays` name each variable's arrays (the variable first, then its
    slots, then the gradient: all but the last are updated), `scalars` the shared 0-d inputs,
    `body` the C statements computing element `j` (arrays read as `name[j]`, scalars by name,
    `ADD`/`SUB`/`MUL`/`DIV`/`SQRT` the correctly rounded operations, `T` the type), and
    `numpy_update(scalars, arrays)` the same computation on flat numpy arrays, in place."""

    __slots__ = ("name", "arrays", "scalars", "body", "numpy_update", "_module", "_kernels")

    def __init__(self, name, arrays, scalars, body, numpy_update):
        self.name = name
        self.arrays = arrays
        self.scalars = scalars
        self.body = body
        self.numpy_update = numpy_update
        self._module = None
        self._kernels = {}

    def kernel_name(self, dtype) -> str:
        return f"eager_grouped_{self.name}_{_C_TYPES[np.dtype(dtype)][0]}"

    @property
    def arity(self) -> int:
        """The kernel's number of arguments: the scalars, then each slot's arrays and end."""
        return len(self.scalars) + SLOTS * (len(self.arrays) + 1)

    def kernel_source(self, dtype) -> str:
        """The CUDA C of this update for `dtype` (float32 or float64)."""
        ctype, s = _C_TYPES[np.dtype(dtype)]
        *written, read = self.arrays
        params = [f"const {ctype}* {name}_p" for name in self.scalars]
        for k in range(SLOTS):
            params += [f"{ctype}* {name}{k}" for name in written]
            params += [f"const {ctype}* {read}{k}", f"long long e{k}"]
        signature = ",\n    ".join(params)
        scalars = "".join(f"    const {ctype} {name} = *{name}_p;\n" for name in self.scalars)
        pointers = "".join(f"        {ctype}* {name};\n" for name in written)
        pointers += f"        const {ctype}* {read};\n        long long j;\n"
        branches = []
        for k in range(SLOTS):
            picks = " ".join(f"{name} = {name}{k};" for name in self.arrays)
            offset = "i" if k == 0 else f"i - e{k - 1}"
            test = ("else" if k == SLOTS - 1 else
                    ("if" if k == 0 else "else if") + f" (i < e{k})")
            branches.append(f"        {test} {{ {picks} j = {offset}; }}\n")
        macros = (f"#define ADD(a, b) __{s}add_rn(a, b)\n#define SUB(a, b) __{s}sub_rn(a, b)\n"
                  f"#define MUL(a, b) __{s}mul_rn(a, b)\n#define DIV(a, b) __{s}div_rn(a, b)\n"
                  f"#define SQRT(a) __{s}sqrt_rn(a)\n#define T {ctype}\n")
        return (f"{macros}extern \"C\" __global__ void {self.kernel_name(dtype)}(\n"
                f"    {signature})\n{{\n{scalars}"
                f"    const long long stride = (long long)blockDim.x * gridDim.x;\n"
                f"    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;"
                f" i < e{SLOTS - 1}; i += stride) {{\n{pointers}{''.join(branches)}"
                f"{self.body}    }}\n}}\n")

    @staticmethod
    def covers(arrays) -> bool:
        """Whether one variable's arrays (the variable, its slots, the gradient) can be grouped:
        float32/float64, one dtype and shape, all C-contiguous (the kernel indexes them flat)."""
        first = arrays[0]
        return first.dtype in _C_TYPES and all(
            a.dtype == first.dtype and a.shape == first.shape and a.flags.c_contiguous
            for a in arrays)

    def _kernel(self, xp, dtype):
        if xp is not self._module:
            self._module, self._kernels = xp, {}
        kernel = self._kernels.get(dtype)
        if kernel is None:
            kernel = self._kernels[dtype] = xp.RawKernel(
                self.kernel_source(dtype), self.kernel_name(dtype), options=COMPILE_OPTIONS)
        return kernel

    def __call__(self, xp, scalars, per_variable):
        """Updates in place; `scalars` are 0-d device arrays of the variables' dtype and each
        item of `per_variable` is one variable's arrays, in `arrays` order, that `covers`."""
        kernel = self._kernel(xp, per_variable[0][0].dtype)
        width = len(self.arrays) + 1
        for start in range(0, len(per_variable), SLOTS):
            args = list(scalars)
            end = 0
            for arrays in per_variable[start:start + SLOTS]:
                end += arrays[0].size
                args += (*arrays, np.int64(end))
            if not end:
                continue
            args += args[-width:] * ((self.arity - len(args)) // width)
            blocks = min(-(-end // THREADS), MAX_BLOCKS)
            kernel((blocks,), (THREADS,), tuple(args))

    def reference(self, args):
        """The kernel's computation in numpy on its argument tuple (arrays that numpy can
        write in place): for CuPy stand-ins."""
        n_scalars, width = len(self.scalars), len(self.arrays) + 1
        scalars = args[:n_scalars]
        start = 0
        with np.errstate(all="ignore"):
            for k in range(SLOTS):
                *arrays, end = args[n_scalars + width * k: n_scalars + width * (k + 1)]
                if end > start:
                    self.numpy_update(scalars, [a.reshape(-1) for a in arrays])
                start = max(start, int(end))

    def __repr__(self):
        return f"<GroupedUpdate {self.name}: {SLOTS} variables per launch>"


def _numpy_gradient_descent(scalars, arrays):
    (alpha,), (var, delta) = scalars, arrays
    np.subtract(var, np.multiply(alpha, delta), out=var)


def _numpy_momentum(nesterov):
    def update(scalars, arrays):
        (lr, momentum), (var, accum, grad) = scalars, arrays
        scaled = np.multiply(grad, lr)
        np.subtract(np.multiply(accum, momentum), scaled, out=accum)
        np.add(var, accum * momentum - scaled if nesterov else accum, out=var)
    return update


def _momentum(nesterov):
    step = "SUB(MUL(a, momentum), scaled)" if nesterov else "a"
    return GroupedUpdate(
        "nesterov" if nesterov else "momentum", ("var", "accum", "grad"), ("lr", "momentum"),
        "        const T scaled = MUL(grad[j], lr);\n"
        "        const T a = SUB(MUL(accum[j], momentum), scaled);\n"
        f"        accum[j] = a;\n        var[j] = ADD(var[j], {step});\n",
        _numpy_momentum(nesterov))


def _numpy_adam(scalars, arrays):
    beta1_power, beta2_power, lr, one_minus_beta1, one_minus_beta2, epsilon = scalars
    var, m, v, grad = arrays
    alpha = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    np.add(m, (grad - m) * one_minus_beta1, out=m)
    np.add(v, (grad * grad - v) * one_minus_beta2, out=v)
    np.subtract(var, (m * alpha) / (np.sqrt(v) + epsilon), out=var)


#: The grouped updates by `training_ops_grouped`'s kind names.
GROUPED = {
    "gradient_descent": GroupedUpdate(
        "gradient_descent", ("var", "delta"), ("alpha",),
        "        var[j] = SUB(var[j], MUL(alpha, delta[j]));\n", _numpy_gradient_descent),
    # training_ops._momentum_math's operations in its order (Keras' SGD with momentum).
    "momentum": _momentum(False),
    "nesterov": _momentum(True),
    # training_ops._adam_math's operations in its order; alpha is computed per element, as
    # cheap as reading it, with the CPU's rounding.
    "adam": GroupedUpdate(
        "adam", ("var", "m", "v", "grad"),
        ("beta1_power", "beta2_power", "lr", "one_minus_beta1", "one_minus_beta2", "epsilon"),
        "        const T alpha = DIV(MUL(lr, SQRT(SUB((T)1, beta2_power))),"
        " SUB((T)1, beta1_power));\n"
        "        const T g = grad[j];\n"
        "        const T mj = ADD(m[j], MUL(SUB(g, m[j]), one_minus_beta1));\n"
        "        const T vj = ADD(v[j], MUL(SUB(MUL(g, g), v[j]), one_minus_beta2));\n"
        "        m[j] = mj;\n        v[j] = vj;\n"
        "        var[j] = SUB(var[j], DIV(MUL(mj, alpha), ADD(SQRT(vj), epsilon)));\n",
        _numpy_adam),
}
