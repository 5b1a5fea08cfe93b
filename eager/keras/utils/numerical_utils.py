"""`keras.utils.to_categorical` and `keras.utils.normalize`.

As in Keras, numpy inputs give numpy outputs (computed with numpy), tensors give tensors.
"""

from __future__ import annotations

import numpy as np

from . import loss_ops as kops

__all__ = ["to_categorical", "normalize"]


def normalize(x, axis=-1, order=2):
    """x divided by its `order`-norm along `axis` (zero norms leave x as is).

    A numpy array is normalised with numpy (`np.linalg.norm`); anything else becomes a tensor
    and, for order 2, is scaled by min(rsqrt(sum(x ** 2)), 1 / 1e-7), Keras's form."""
    if isinstance(x, np.ndarray):
        norm = np.atleast_1d(np.linalg.norm(x, order, axis))
        norm[norm == 0] = 1
        axis = axis or -1
        return x / np.expand_dims(norm, axis)
    if not isinstance(order, int) or isinstance(order, bool) or order < 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    x = kops.convert(x)
    if kops.rank(x) == 0:
        x = kops.expand_dims(x, 0)
    if order == 2:
        square_sum = kops.reduce_sum(kops.square(x), axis=axis, keepdims=True)
        inv_norm = kops.minimum(kops.rsqrt(square_sum), 1.0 / kops.epsilon())
        return x * inv_norm
    if order == 1:
        norm = kops.reduce_sum(kops.abs(x), axis=axis, keepdims=True)
    else:
        norm = kops.pow(kops.reduce_sum(kops.pow(kops.abs(x), float(order)), axis=axis,
                                        keepdims=True), 1.0 / order)
    return x / kops.maximum(norm, kops.epsilon())


def to_categorical(x, num_classes=None):
    """One-hot encode class indices: `x` of shape S (or S + (1,)) becomes S + (num_classes,).

    A tensor gives a float32 tensor (`num_classes` is then required); anything else gives a
    float64 numpy array, with `num_classes` defaulting to max(x) + 1."""
    if kops.is_tensor(x):
        dims = tuple(x.shape)
        if len(dims) > 1 and dims[-1] == 1:
            x = kops.squeeze(x, axis=[-1])
        if num_classes is None:
            raise ValueError("to_categorical: `num_classes` is required for a tensor input. "
                             f"Received: x.shape={dims}")
        return kops.one_hot(kops.cast(x, "int64"), int(num_classes), dtype="float32")
    x = np.array(x, dtype="int64")
    input_shape = x.shape
    if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
        input_shape = tuple(input_shape[:-1])
    x = x.reshape(-1)
    if not num_classes:
        num_classes = np.max(x) + 1
    categorical = np.zeros((x.shape[0], num_classes))
    categorical[np.arange(x.shape[0]), x] = 1
    return np.reshape(categorical, input_shape + (num_classes,))
