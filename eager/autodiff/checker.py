"""`eager.test.compute_gradient` ≈ `tf.test.compute_gradient`: theoretical vs numerical Jacobians.

For `y = f(*x)`, returns two tuples with one 2-d numpy array per argument, shaped
(y_size, x_size): the Jacobian from the tape (`theoretical`) and from central differences with
step `delta` (`numerical`, default 1/1024, exactly representable so that rounding adds no noise).
"""

from __future__ import annotations

import numpy as np

from ..core.tensor_conversion import convert_to_tensor
from .gradient_tape import GradientTape

__all__ = ["compute_gradient"]


def _values(xs):
    tensors = [convert_to_tensor(v) for v in xs]
    for t in tensors:
        if t.dtype.is_complex:
            raise NotImplementedError("compute_gradient: complex arguments are not supported "
                                      "(check the real and imaginary parts separately).")
    return tensors


def _theoretical(f, xs):
    with GradientTape(persistent=True) as tape:
        for x in xs:
            tape.watch(x)
        y = convert_to_tensor(f(*xs))
    y_size = int(np.prod(y.shape, dtype=np.int64))
    jacobians = []
    for x in xs:
        x_size = int(np.prod(x.shape, dtype=np.int64))
        if y_size == 0 or x_size == 0:
            jacobians.append(np.zeros((y_size, x_size), dtype=x.dtype.as_numpy_dtype))
            continue
        j = tape.jacobian(y, x, unconnected_gradients="zero")
        jacobians.append(np.asarray(j).reshape(y_size, x_size))
    return y, jacobians


def _numerical(f, xs, y, delta):
    arrays = [np.array(x.numpy(), copy=True) for x in xs]
    y_size = int(np.prod(y.shape, dtype=np.int64))
    jacobians = []
    for x in arrays:
        flat = x.reshape(-1)
        jacobian = np.zeros((y_size, flat.size), dtype=x.dtype)
        for col in range(flat.size):
            original = flat[col]
            flat[col] = original + delta
            y_pos = np.asarray(convert_to_tensor(f(*[convert_to_tensor(a) for a in arrays])))
            flat[col] = original - delta
            y_neg = np.asarray(convert_to_tensor(f(*[convert_to_tensor(a) for a in arrays])))
            flat[col] = original
            jacobian[:, col] = ((y_pos - y_neg) / (2 * delta)).reshape(-1)
        jacobians.append(jacobian)
    return jacobians


def compute_gradient(f, x, delta=None):
    """Theoretical and numerical Jacobians of `f` at `x` (a list or tuple of arguments)."""
    if not isinstance(x, (list, tuple)):
        raise ValueError("`x` must be a list or tuple of values convertible to a Tensor "
                         f"(arguments to `f`), not a {type(x)}")
    if delta is None:
        delta = 1.0 / 1024
    xs = _values(x)
    y, theoretical = _theoretical(f, xs)
    numerical = _numerical(f, xs, y, delta)
    return tuple(theoretical), tuple(numerical)
