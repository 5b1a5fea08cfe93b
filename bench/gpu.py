"""GPU benchmarks (a CUDA device and CuPy needed; prints why and exits 0 otherwise).

    python bench/gpu.py [--rounds N]

Figures, each a ratio to raw CuPy issuing the same work on the same kind of stream, timed
in one process run (and PyTorch's CUDA tensors beside them when PyTorch is installed):

- launch cost of a small op: `x + y` on float32 (4,) tensors, per op, measured as the host's
  time to issue 1000 ops and then synchronize (the GPU finishes each tiny kernel long before
  the host issues the next, so this is the per-op host cost: dispatch + CuPy's launch);
- one SGD step of the MLP 784-256-256-10 (batch 128, lr 0.1) with a GradientTape and
  `eager.optimizers.SGD`, against the same step written by hand in CuPy;
  the SGD step also traced with `eager.function` (the bench's case (n) step);
- the same step with `eager.optimizers.Adam` (lr 0.001), against CuPy with Keras' Adam update
  written by hand (PyTorch: `torch.optim.Adam`, whose default is the multi-tensor update);
- a traced elementwise chain (`eager.function` of 24 ops: 4 x (x * a + b, tanh, x * a - b,
  relu)) on float32 (1024, 1024) and on (4,), whose compiled program fuses the chain into one
  device kernel, against CuPy issuing the 24 ufuncs one by one;
- the CuPy kernel layer (`eager/ops/cupy_kernels.py`): per op of its table, on float32 (4,) and
  (256, 256) arrays, the op's precompiled kernel object called directly against the op's own
  kernel on CuPy (the CuPy calls it replaces), host time per call; and Adam's update of a
  (256, 256) variable as its one fused kernel against `training_ops`' dozen CuPy calls.
  `--kernels-only` runs just these rows;
- launch floors: what one CuPy launch costs the host by each route (a ufunc, an
  `ElementwiseKernel`, a `RawKernel` on a preallocated output, `cupy.empty` alone), beside
  PyTorch's `x + y`: the lowest host cost any eager op on CuPy can reach; and by routes under
  CuPy's Python layer (the compiled `Function` given the stream, given raw addresses; entering
  the stream alone; an output from the memory pool), which size a launch path of eager's own.

Each row prints as soon as it is measured. `--profile` prints, after the rows, where the host
time of 20000 eager `x + y` and of 100 eager and 100 traced SGD steps goes (cProfile, by own
time).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import eager  # noqa: E402
from bench.cases_autodiff import LR, mlp_data, mlp_gradients  # noqa: E402
from bench.cases_runtime import traced_mlp_step  # noqa: E402
from bench.cases_training import eager_variable_mlp_step, torch_mlp_step  # noqa: E402
from eager.core.registry import get_op  # noqa: E402
from eager.devices.cuda import cuda_device_count  # noqa: E402
from eager.ops import cupy_grouped_updates, cupy_kernels, training_ops  # noqa: E402


def _best(fn, sync, rounds, inner):
    for _ in range(3):
        fn()
    sync()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        best = min(best, (time.perf_counter() - start) / inner)
    return best


def direct_kernel_rows(cupy, stream, rounds):
    """Rows (name, {"cupy": the op's own kernel on CuPy, "direct kernel": its table entry}),
    seconds per call: the host cost of each (the GPU finishes these kernels before the host
    issues the next), 1000 calls then one synchronize."""
    rows = []
    rng = np.random.default_rng(0)
    for shape in ((4,), (256, 256)):
        with stream:
            a = cupy.asarray(rng.standard_normal(shape).astype(np.float32))
            b = cupy.asarray(rng.uniform(0.5, 2.0, shape).astype(np.float32))
        for name, source in cupy_kernels.TABLE.items():
            op = get_op(name)
            if isinstance(source, cupy_kernels.ReductionSource):
                cases = [("all axes", (a,), {"axes": tuple(range(len(shape))),
                                             "keepdims": False}),
                         ("axis 0", (a,), {"axes": (0,), "keepdims": False})]
            elif "y" in source.in_params.replace("T x", ""):
                cases = [("", (a, b), {})]
            else:
                cases = [("", (a,), {})]
            for label, arrays, attrs in cases:
                def own(op=op, arrays=arrays, attrs=attrs):
                    with stream:
                        return op.kernel(cupy, *arrays, **attrs)

                def direct(op=op, arrays=arrays, attrs=attrs):
                    with stream:
                        return op.cupy_kernel(cupy, *arrays, **attrs)

                try:
                    np.testing.assert_allclose(cupy.asnumpy(direct()), cupy.asnumpy(own()),
                                               rtol=1e-5)
                except AssertionError as exc:  # a wrong kernel: say so, measure the rest
                    print(f"MISMATCH kernel layer {name} {label} {shape}: {exc}", flush=True)
                _emit(rows, (f"kernel layer: {name}{' ' + label if label else ''}, float32 "
                             f"{shape}, per call",
                             {"cupy": _best(own, stream.synchronize, rounds, 1000),
                              "direct kernel": _best(direct, stream.synchronize, rounds, 1000)}))
    with stream:
        var, m, v, grad = (cupy.asarray(rng.standard_normal((256, 256)).astype(np.float32))
                           for _ in range(4))
        v = abs(v)
        scalars = [cupy.asarray(np.float32(s)) for s in (0.9, 0.999, 1e-3, 0.1, 1e-3, 1e-7)]
    fused = cupy_kernels.update_kernel(cupy, "adam", np.dtype(np.float32))

    def adam_calls():
        with stream:
            training_ops._adam_math(cupy, var, m, v, None, *scalars, grad)

    def adam_fused():
        with stream:
            fused(grad, *scalars, var, m, v)

    _emit(rows, ("kernel layer: Adam update, float32 (256, 256), per variable",
                 {"cupy": _best(adam_calls, stream.synchronize, rounds, 200),
                  "direct kernel": _best(adam_fused, stream.synchronize, rounds, 200)}))
    rows += grouped_update_rows(cupy, stream, rounds)
    return rows


def grouped_update_rows(cupy, stream, rounds):
    """Rows of an optimizer step over the MLP's six variables: one fused kernel per variable
    ("cupy") against the grouped update's one launch ("direct kernel"), after checking that
    both give the same bits."""
    rows = []
    with stream:
        params = [cupy.asarray(p) for p in mlp_data()[0]]
        momentum = [cupy.asarray(np.float32(LR)), cupy.asarray(np.float32(0.9))]
        scalars = {"gradient_descent": [cupy.asarray(np.float32(LR))],
                   "momentum": momentum, "nesterov": momentum,
                   "adam": [cupy.asarray(np.float32(s))
                            for s in (0.9, 0.999, 1e-3, 0.1, 1e-3, 1e-7)]}
    for kind, update in cupy_grouped_updates.GROUPED.items():
        fused = cupy_kernels.update_kernel(cupy, kind, np.dtype(np.float32))
        with stream:
            per_variable = [[p.copy() for _ in update.arrays] for p in params]
            for arrays in per_variable:
                arrays[-1] *= 0.01  # the gradient
                if kind == "adam":
                    arrays[2] = abs(arrays[2])
            grouped = [[a.copy() for a in arrays] for arrays in per_variable]

        def one_by_one(per_variable=per_variable, kind=kind, fused=fused):
            with stream:
                for arrays in per_variable:
                    fused(arrays[-1], *scalars[kind], *arrays[:-1])

        def at_once(grouped=grouped, kind=kind, update=update):
            with stream:
                update(cupy, scalars[kind], grouped)

        one_by_one()
        at_once()
        for a, b in zip(per_variable, grouped):
            for x, y in zip(a, b):
                if not bool((x == y).all()):
                    print(f"MISMATCH grouped {kind} update against the per-variable kernels",
                          flush=True)
        _emit(rows, (f"grouped {kind} update of the MLP's six variables, float32, per step",
                     {"cupy": _best(one_by_one, stream.synchronize, rounds, 200),
                      "direct kernel": _best(at_once, stream.synchronize, rounds, 200)}))
    return rows


def launch_floor_rows(cupy, stream, rounds):
    """Rows of what one launch of `x + y` on float32 (4,) costs the host by each of CuPy's
    routes (and PyTorch's, when installed): the floor under any eager op on CuPy."""
    with stream:
        a, b = cupy.ones(4, cupy.float32), cupy.ones(4, cupy.float32)
        out = cupy.empty(4, cupy.float32)
    elementwise = cupy.ElementwiseKernel("T x, T y", "T z", "z = x + y", "floor_add")
    raw = cupy.RawKernel(r"""extern "C" __global__ void floor_add(const float* x,
        const float* y, float* z, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) z[i] = x[i] + y[i]; }""",
                         "floor_add")
    n = np.int32(4)

    def ufunc():
        with stream:
            return a + b

    def kernel_object():
        with stream:
            return elementwise(a, b)

    def raw_launch():
        with stream:
            raw((1,), (32,), (a, b, out, n))

    def allocate():
        with stream:
            return cupy.empty(4, cupy.float32)

    def bare_ufunc():  # the stream already current: no context manager per call
        return a + b

    results = {"cupy": _best(ufunc, stream.synchronize, rounds, 1000)}
    with stream:
        results["ufunc, stream entered once"] = _best(bare_ufunc, stream.synchronize, rounds,
                                                      1000)
    results["ElementwiseKernel"] = _best(kernel_object, stream.synchronize, rounds, 1000)
    results["RawKernel, output given"] = _best(raw_launch, stream.synchronize, rounds, 1000)
    results["cupy.empty"] = _best(allocate, stream.synchronize, rounds, 1000)
    results.update(_below_cupy_layer(cupy, stream, raw, a, b, out, n, rounds))
    try:
        import torch  # noqa: PLC0415 - optional, seconds to import: as in main

        tx, ty = torch.ones(4, device="cuda"), torch.ones(4, device="cuda")
        results["torch"] = _best(lambda: tx + ty, torch.cuda.synchronize, rounds, 1000)
    except Exception:  # noqa: BLE001 - PyTorch missing or without CUDA: leave it out
        pass
    rows = []
    _emit(rows, ("launch floors: x + y, float32 (4,), per launch", results))
    return rows


def _below_cupy_layer(cupy, stream, raw, a, b, out, n, rounds):
    """The same launch by routes under CuPy's Python layer, to size what an allocator and a
    launch of eager's own could save: the compiled `Function` with the stream passed (no
    `with stream`, no per-call device lookup), the same with the arrays' addresses as
    integers (no per-argument array descriptor), entering and leaving the stream alone, and an
    output taken from the memory pool without `cupy.empty`. Each is measured where this CuPy
    has the call; a route it lacks prints its error instead of stopping the bench."""
    routes = {}
    try:
        with stream:
            function = raw.kernel  # compiled for the current device; the cached `Function`
        addresses = (a.data.ptr, b.data.ptr, out.data.ptr, n)
        pool = cupy.get_default_memory_pool()
        routes["Function, stream given"] = (
            lambda: function((1,), (32,), (a, b, out, n), stream=stream))
        routes["Function, addresses, stream given"] = (
            lambda: function((1,), (32,), addresses, stream=stream))

        def enter_stream():
            with stream:
                pass

        def pool_output():
            with stream:
                return cupy.ndarray((4,), cupy.float32, pool.malloc(16))

        routes["with stream alone"] = enter_stream
        routes["pool.malloc + ndarray"] = pool_output
    except Exception as exc:  # noqa: BLE001 - an older or newer CuPy: say so, keep going
        print(f"launch floors below CuPy's layer: not measured ({type(exc).__name__}: {exc})")
    results = {}
    for name, fn in routes.items():
        try:
            results[name] = _best(fn, stream.synchronize, rounds, 1000)
        except Exception as exc:  # noqa: BLE001 - as above, per route
            print(f"launch floor {name!r}: not measured ({type(exc).__name__}: {exc})")
    return results


def profile_host_time(gpu):
    """Prints cProfile's top functions by own time for eager's `x + y` on the GPU, the eager
    SGD step and the traced one (see the module doc)."""
    import cProfile  # noqa: PLC0415 - only with --profile
    import pstats  # noqa: PLC0415

    ex, ey = eager.constant(np.ones(4, np.float32)), eager.constant(np.ones(4, np.float32))
    np_params, xn, yn = mlp_data()
    params = [eager.Variable(p) for p in np_params]
    opt = eager.optimizers.SGD(LR)
    xb, yb = eager.constant(xn), eager.constant(yn)
    traced_step = traced_mlp_step([eager.Variable(p) for p in np_params])
    for label, work in (("x + y, 20000 times", lambda: [ex + ey for _ in range(20000)]),
                        ("eager SGD step, 100 times",
                         lambda: [eager_variable_mlp_step(params, opt, xb, yb)
                                  for _ in range(100)]),
                        ("traced SGD step, 100 times",
                         lambda: [traced_step(xb, yb) for _ in range(100)])):
        work()
        gpu.synchronize()
        profiler = cProfile.Profile()
        profiler.enable()
        work()
        gpu.synchronize()
        profiler.disable()
        print(f"\n-- profile: {label} --")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--kernels-only", action="store_true",
                        help="only the CuPy kernel layer's rows")
    parser.add_argument("--profile", action="store_true",
                        help="also profile eager's host time (x + y, the SGD step)")
    args = parser.parse_args(argv)

    if cuda_device_count() == 0:
        print("bench/gpu.py: no CUDA device answers; nothing to measure.")
        return 0
    import cupy  # noqa: PLC0415 - optional: only once a CUDA device answers

    gpu = eager.devices.registry.lookup("GPU:0")
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}, "
          f"CuPy {cupy.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}",
          flush=True)
    stream = cupy.cuda.Stream(non_blocking=True)

    def cupy_sync():
        stream.synchronize()

    def eager_sync():
        gpu.synchronize()

    rows = []
    if args.kernels_only:
        direct_kernel_rows(cupy, stream, args.rounds)
        return 0
    # -- small-op launch cost -----------------------------------------------------------------
    with stream:
        cx, cy = cupy.ones(4, cupy.float32), cupy.ones(4, cupy.float32)
    ex, ey = eager.constant(np.ones(4, np.float32)), eager.constant(np.ones(4, np.float32))

    def cupy_add():
        with stream:
            return cx + cy

    results = {"cupy": _best(cupy_add, cupy_sync, args.rounds, 1000),
               "eager": _best(lambda: ex + ey, eager_sync, args.rounds, 1000)}
    with eager.experimental.async_scope():
        results["eager async"] = _best(lambda: ex + ey, eager.experimental.async_wait,
                                       args.rounds, 1000)
    try:
        # PyTorch is optional (and costs seconds to import): loaded only to compare.
        import torch  # noqa: PLC0415

        tx, ty = torch.ones(4, device="cuda"), torch.ones(4, device="cuda")
        results["torch"] = _best(lambda: tx + ty, torch.cuda.synchronize, args.rounds, 1000)
    except Exception:  # noqa: BLE001 - PyTorch missing or without CUDA: leave it out
        pass
    _emit(rows, ("small op x + y, float32 (4,), per op", results))
    # A Python number operand: CuPy and PyTorch pass it to the kernel; eager makes it a device
    # constant, copied to the device once per value (`host_memory.DeviceCopies.of_value`).

    def cupy_scaled():
        with stream:
            return cx * 1.5

    have_torch = "torch" in results
    results = {"cupy": _best(cupy_scaled, cupy_sync, args.rounds, 1000),
               "eager": _best(lambda: ex * 1.5, eager_sync, args.rounds, 1000)}
    if have_torch:
        results["torch"] = _best(lambda: tx * 1.5, torch.cuda.synchronize, args.rounds, 1000)
    _emit(rows, ("small op x * 1.5, float32 (4,), per op", results))

    # -- MLP steps: SGD, then Adam (Keras' update arithmetic, by hand in CuPy) ------------------
    np_params, xn, yn = mlp_data()
    with stream:
        cxb, cyb = cupy.asarray(xn), cupy.asarray(yn)
    ex_b, ey_b = eager.constant(xn), eager.constant(yn)
    adam_lr = 0.001

    def sgd_update(params, grads, _state):
        for param, grad in zip(params, grads):
            param -= LR * grad

    def adam_update(params, grads, state):
        state["t"] = t = state.get("t", 0) + 1
        slots = state.setdefault("slots", [(cupy.zeros_like(p), cupy.zeros_like(p))
                                           for p in params])
        alpha = np.float32(adam_lr * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t))
        for param, (m, v), grad in zip(params, slots, grads):
            m += (grad - m) * np.float32(0.1)
            v += (grad * grad - v) * np.float32(0.001)
            param -= m * alpha / (cupy.sqrt(v) + np.float32(1e-7))

    for label, update, make_eager, make_torch in (
            ("SGD", sgd_update, lambda: eager.optimizers.SGD(LR),
             lambda torch, ps: torch.optim.SGD(ps, lr=LR)),
            ("Adam", adam_update, lambda: eager.optimizers.Adam(adam_lr),
             lambda torch, ps: torch.optim.Adam(ps, lr=adam_lr, eps=1e-7))):
        with stream:
            c_params = [cupy.asarray(p) for p in np_params]
        state = {}

        def cupy_step(c_params=c_params, update=update, state=state):
            with stream:
                _, grads = mlp_gradients(cupy, c_params, cxb, cyb, with_loss=False)
                update(c_params, grads, state)

        e_params = [eager.Variable(p) for p in np_params]
        e_opt = make_eager()
        # The lambdas below are timed by _best at once, within this iteration (hence B023's noqa).
        results = {"cupy": _best(cupy_step, cupy_sync, args.rounds, 20),
                   "eager": _best(
                       lambda: eager_variable_mlp_step(e_params, e_opt, ex_b, ey_b),  # noqa: B023
                       eager_sync, args.rounds, 20)}
        if label == "SGD":  # the same step traced (assign_sub updates): one compiled program
            traced_step = traced_mlp_step([eager.Variable(p) for p in np_params])
            results["eager function"] = _best(lambda: traced_step(ex_b, ey_b),  # noqa: B023
                                              eager_sync, args.rounds, 20)
        try:
            import torch  # noqa: PLC0415 - optional, seconds to import: as above

            t_params = [torch.nn.Parameter(torch.from_numpy(p.copy()).cuda())
                        for p in np_params]
            t_opt = make_torch(torch, t_params)
            tx_b, ty_b = torch.from_numpy(xn).cuda(), torch.from_numpy(yn).cuda()
            results["torch"] = _best(
                lambda: torch_mlp_step(torch, t_params, t_opt, tx_b, ty_b),  # noqa: B023
                torch.cuda.synchronize, args.rounds, 20)
        except Exception:  # noqa: BLE001 - PyTorch missing or without CUDA: leave it out
            pass
        _emit(rows, (f"MLP 784-256-256-10 {label} step, batch 128", results))

    # -- traced elementwise chain (one fused device kernel) ---------------------------------------
    def chain_ops(x, a, b, xp_tanh, xp_relu):
        for _ in range(4):
            x = xp_tanh(x * a + b)
            x = xp_relu(x * a - b)
        return x

    traced_chain = eager.function(lambda x, a, b: chain_ops(x, a, b, eager.math.tanh,
                                                             eager.nn.relu))
    for shape in ((1024, 1024), (4,)):
        xn = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        with stream:
            cxc = cupy.asarray(xn)
            ca, cb = cupy.float32(0.999), cupy.float32(0.001)

        # cupy_chain and the lambdas below are called within this iteration (hence B023's noqa).
        def cupy_chain():
            with stream:
                return chain_ops(cxc, ca, cb, cupy.tanh,  # noqa: B023
                                 lambda v: cupy.maximum(v, 0))

        exc = eager.constant(xn)
        ea, eb = eager.constant(np.float32(0.999)), eager.constant(np.float32(0.001))
        np.testing.assert_allclose(traced_chain(exc, ea, eb).numpy(), cupy_chain().get(),
                                   rtol=1e-5, atol=1e-6)
        results = {"cupy": _best(cupy_chain, cupy_sync, args.rounds, 20),
                   "eager function": _best(lambda: traced_chain(exc, ea, eb),  # noqa: B023
                                           eager_sync, args.rounds, 20)}
        try:
            import torch  # noqa: PLC0415 - optional, seconds to import: as above

            txc = torch.from_numpy(xn).cuda()
            results["torch"] = _best(
                lambda: chain_ops(txc, 0.999, 0.001, torch.tanh, torch.relu),  # noqa: B023
                torch.cuda.synchronize, args.rounds, 20)
        except Exception:  # noqa: BLE001 - PyTorch missing or without CUDA: leave it out
            pass
        _emit(rows, (f"traced chain of 24 elementwise ops, float32 {shape}", results))

    rows.append(recurrence_row(cupy, stream, cupy_sync, eager_sync, args.rounds))
    rows.extend(launch_floor_rows(cupy, stream, args.rounds))
    rows.extend(direct_kernel_rows(cupy, stream, args.rounds))
    if args.profile:
        profile_host_time(gpu)
    return 0


def recurrence_row(cupy, stream, cupy_sync, eager_sync, rounds, steps=50):
    """A traced `while_loop` of `steps` iterations of `h = tanh(h @ w + x)`, its int32 counter
    a small value the GPU keeps in host memory (so the loop's condition never waits for the
    device), against the same loop in Python over CuPy (the floor) and PyTorch."""
    rng = np.random.default_rng(0)
    hn = rng.standard_normal((32, 64)).astype(np.float32)
    wn = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
    with stream:
        ch, cw, cx = cupy.asarray(hn), cupy.asarray(wn), cupy.asarray(hn * 0.5)

    def cupy_loop():
        with stream:
            h = ch
            for _ in range(steps):
                h = cupy.tanh(h @ cw + cx)
            return h

    eh, ew, ex = eager.constant(hn), eager.constant(wn), eager.constant(hn * 0.5)
    loop = eager.function(lambda h, w, x: eager.while_loop(
        lambda i, h: i < steps, lambda i, h: (i + 1, eager.tanh(eager.matmul(h, w) + x)),
        (eager.constant(0), h))[1])
    np.testing.assert_allclose(loop(eh, ew, ex).numpy(), cupy_loop().get(), rtol=1e-4,
                               atol=1e-5)
    results = {"cupy": _best(cupy_loop, cupy_sync, rounds, 5),
               "eager function": _best(lambda: loop(eh, ew, ex), eager_sync, rounds, 5)}
    try:
        import torch  # noqa: PLC0415 - optional, seconds to import: as above

        th, tw, tx = (torch.from_numpy(a).cuda() for a in (hn, wn, hn * 0.5))

        def torch_loop():
            h = th
            for _ in range(steps):
                h = torch.tanh(h @ tw + tx)
            return h

        results["torch"] = _best(torch_loop, torch.cuda.synchronize, rounds, 5)
    except Exception:  # noqa: BLE001 - PyTorch missing or without CUDA: leave it out
        pass
    row = (f"traced while_loop of {steps} steps of tanh(h @ w + x), float32 (32, 64)", results)
    _emit([], row)
    return row


def _emit(rows, row):
    """Prints one row (each figure with its ratio to the row's CuPy floor) as soon as it is
    measured, so that a later failure keeps it, and keeps it in `rows`."""
    name, res = row
    floor = res["cupy"]
    parts = ", ".join(f"{k} {v * 1e6:.1f} us ({v / floor:.2f}x)" for k, v in res.items())
    print(f"{name}: {parts}", flush=True)
    rows.append(row)


if __name__ == "__main__":
    sys.exit(main())
