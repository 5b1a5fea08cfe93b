"""Gradient checking against central finite differences, in float64.

`check_gradient(fn, args)` differentiates the scalar L = sum(real(w_k * y_k)) over the outputs
y_k of `fn`, with fixed random weights w_k (so every output element matters, with different
weights), with respect to every floating/complex argument, and compares with central
differences of L. For complex arguments the gradient convention is TensorFlow's:
dL/d(real part) + i * dL/d(imaginary part).

`check_second_order(fn, args)` does the same for the gradient itself: the tape's Hessian-vector
product (nested tapes) against finite differences of the tape's gradient.

`derivatives(fn, x, n)` takes the first n derivatives with nested tapes.

Arguments that are not float/complex numpy arrays (int indices, Python values) are passed to
`fn` unchanged and not differentiated.
"""

import numpy as np

import eager


def _differentiable(a):
    return isinstance(a, np.ndarray) and a.dtype.kind in "fc"


def _weights(y_arrays, seed):
    rng = np.random.default_rng(seed)
    weights = []
    for y in y_arrays:
        w = rng.uniform(0.5, 1.5, size=y.shape)
        if y.dtype.kind == "c":
            w = w + 1j * rng.uniform(0.5, 1.5, size=y.shape)
        weights.append(w)
    return weights


def _outputs(result):
    if isinstance(result, (list, tuple)):
        return [r for r in result if r is not None]
    return [result]


def _loss_numpy(fn, args, weights):
    ys = _outputs(fn(*[eager.constant(a) if _differentiable(a) else a for a in args]))
    total = 0.0
    for y, w in zip(ys, weights):
        total += float(np.sum(np.real(w * np.asarray(y, dtype=np.complex128 if
                                                    np.iscomplexobj(np.asarray(y)) else
                                                    np.float64))))
    return total


def _loss_tensor(ys, weights):
    total = None
    for y, w in zip(ys, weights):
        term = eager.reduce_sum(
            eager.math.real(y * eager.constant(w.astype(y.dtype.as_numpy_dtype))))
        total = term if total is None else total + term
    return total


def numeric_gradients(fn, args, weights, delta=1e-6):
    grads = []
    for k, a in enumerate(args):
        if not _differentiable(a):
            grads.append(None)
            continue
        g = np.zeros(a.shape, dtype=a.dtype)
        flat_g = g.reshape(-1)
        parts = [1.0, 1j] if a.dtype.kind == "c" else [1.0]
        for i in range(a.size):
            for part in parts:
                plus = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
                minus = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
                plus[k].reshape(-1)[i] += part * delta
                minus[k].reshape(-1)[i] -= part * delta
                d = (_loss_numpy(fn, plus, weights) - _loss_numpy(fn, minus, weights)) / (2 * delta)
                flat_g[i] += part * d
        grads.append(g)
    return grads


def tape_gradients(fn, args, weights, unconnected=eager.UnconnectedGradients.ZERO):
    """Per argument, the tape's gradient of the weighted loss as a numpy array (None for an
    argument that is not differentiated, or, with `unconnected` NONE, not connected)."""
    tensors = [eager.constant(a) if _differentiable(a) else a for a in args]
    watched = [t for t, a in zip(tensors, args) if _differentiable(a)]
    with eager.GradientTape() as tape:
        tape.watch(watched)
        loss = _loss_tensor(_outputs(fn(*tensors)), weights)
    grads = iter(tape.gradient(loss, watched, unconnected_gradients=unconnected))
    out = []
    for a in args:
        g = next(grads) if _differentiable(a) else None
        out.append(None if g is None else np.asarray(eager.convert_to_tensor(g)))
    return out


def check_gradient(fn, args, rtol=1e-5, atol=1e-7, seed=0, delta=1e-6):
    args = [np.asarray(a) if isinstance(a, (list, float)) else a for a in args]
    ys = _outputs(fn(*[eager.constant(a) if _differentiable(a) else a for a in args]))
    weights = _weights([np.asarray(y) for y in ys], seed)
    analytic = tape_gradients(fn, args, weights)
    numeric = numeric_gradients(fn, args, weights, delta)
    for k, (a, n) in enumerate(zip(analytic, numeric)):
        if n is None:
            continue
        assert a.shape == n.shape, f"argument {k}: gradient shape {a.shape} != {n.shape}"
        np.testing.assert_allclose(a, n, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of argument {k} differs from finite "
                                           "differences")


def check_second_order(fn, args, rtol=1e-4, atol=1e-6, seed=1, delta=1e-5):
    """Hessian-vector products from nested tapes vs finite differences of the tape gradient."""
    args = [np.asarray(a) for a in args]
    rng = np.random.default_rng(seed)
    directions = [rng.uniform(-1, 1, a.shape) for a in args]
    ys = _outputs(fn(*[eager.constant(a) for a in args]))
    weights = _weights([np.asarray(y) for y in ys], seed)

    def grad_dot_v(arrays):
        tensors = [eager.constant(a) for a in arrays]
        with eager.GradientTape() as tape:
            tape.watch(tensors)
            loss = _loss_tensor(_outputs(fn(*tensors)), weights)
        grads = tape.gradient(loss, tensors, unconnected_gradients=eager.UnconnectedGradients.ZERO)
        return sum(float(np.sum(np.asarray(eager.convert_to_tensor(g)) * v))
                   for g, v in zip(grads, directions))

    tensors = [eager.constant(a) for a in args]
    with eager.GradientTape() as outer:
        outer.watch(tensors)
        with eager.GradientTape() as inner:
            inner.watch(tensors)
            loss = _loss_tensor(_outputs(fn(*tensors)), weights)
        grads = inner.gradient(loss, tensors,
                               unconnected_gradients=eager.UnconnectedGradients.ZERO)
        gv = None
        for g, v in zip(grads, directions):
            term = eager.reduce_sum(eager.convert_to_tensor(g) * eager.constant(v))
            gv = term if gv is None else gv + term
    hvp = outer.gradient(gv, tensors, unconnected_gradients=eager.UnconnectedGradients.ZERO)
    for k, a in enumerate(args):
        numeric = np.zeros(a.shape)
        flat = numeric.reshape(-1)
        for i in range(a.size):
            plus = [x.copy() for x in args]
            minus = [x.copy() for x in args]
            plus[k].reshape(-1)[i] += delta
            minus[k].reshape(-1)[i] -= delta
            flat[i] = (grad_dot_v(plus) - grad_dot_v(minus)) / (2 * delta)
        np.testing.assert_allclose(np.asarray(hvp[k]), numeric, rtol=rtol, atol=atol,
                                   err_msg=f"second derivative w.r.t. argument {k}")


def derivatives(fn, x, order):
    """[fn(x), d fn/dx, d2 fn/dx2, ...] up to `order`: each the gradient of the one before,
    taken with nested tapes (the outermost opened first, each gradient taken inside the tapes
    around it), as higher-order TensorFlow code writes them."""
    if order == 0:
        return [fn(x)]
    with eager.GradientTape() as tape:
        tape.watch(x)
        lower = derivatives(fn, x, order - 1)
    return lower + [tape.gradient(lower[-1], x)]

