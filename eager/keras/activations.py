"""`eager.keras.activations` (≈ `keras.activations`): Keras 3's activation functions.

Each is written with eager ops, so it runs eagerly, traced and on any device, and is
differentiable through the ops' gradient rules. The formulas and defaults are Keras 3's
(`leaky_relu`'s slope 0.2, `hard_sigmoid` as `relu6(x + 3) / 6`, `selu`'s constants,
`gelu` exact unless `approximate=True`). `get(None)` is `linear`, as in Keras.
"""

from __future__ import annotations

import types

from ..core.tensor_conversion import convert_to_tensor
from ..ops import array_ops as _array
from ..ops import composite_ops as _composite
from ..ops import math_ops as _math
from ..ops import nn_ops as _nn
from .serialization import deserialize_keras_object, get_registered_name, serialize_keras_object
from .utils.annotations import set_keras_logits

__all__ = ["relu", "leaky_relu", "relu6", "softmax", "elu", "selu", "softplus", "softsign",
           "soft_shrink", "sparse_plus", "silu", "swish", "squareplus", "gelu", "celu", "glu",
           "tanh", "tanh_shrink", "hard_tanh", "hard_shrink", "threshold", "sigmoid",
           "exponential", "hard_sigmoid", "log_sigmoid", "sparse_sigmoid", "hard_silu",
           "hard_swish", "linear", "mish", "log_softmax", "get", "serialize", "deserialize"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _t(x):
    return convert_to_tensor(x)


def _c(value, x):
    """A Python number as a constant of x's dtype."""
    return convert_to_tensor(value, dtype=x.dtype)


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Keras's relu: `max(x, 0)`, values at or below `threshold` become 0 (or
    `negative_slope * (x - threshold)`), clipped at `max_value` when given."""
    x = _t(x)
    if negative_slope != 0.0:
        if max_value is None and threshold == 0:
            return _composite.leaky_relu(x, alpha=negative_slope)
        negative_part = _nn.relu(_c(threshold, x) - x) if threshold != 0 else _nn.relu(-x)
    clip_max = max_value is not None
    if threshold != 0:
        x = x * _math.cast(_math.greater(x, _c(threshold, x)), x.dtype)
    elif max_value == 6:
        x = _composite.relu6(x)
        clip_max = False
    else:
        x = _nn.relu(x)
    if clip_max:
        x = _math.clip_by_value(x, _c(0.0, x), _c(max_value, x))
    if negative_slope != 0.0:
        x = x - _c(negative_slope, x) * negative_part
    return x


def leaky_relu(x, negative_slope=0.2):
    return _composite.leaky_relu(_t(x), alpha=negative_slope)


def relu6(x):
    return _composite.relu6(_t(x))


def softmax(x, axis=-1):
    """Softmax over `axis` (an int, or a tuple of axes normalised together as Keras does).
    The result remembers its logits, so a cross-entropy given it computes from them."""
    x = _t(x)
    if isinstance(axis, int):
        output = _nn.softmax(x, axis=axis)
    else:
        e = _math.exp(x - _math.reduce_max(x, axis=axis, keepdims=True))
        output = e / _math.reduce_sum(e, axis=axis, keepdims=True)
    set_keras_logits(output, x)
    return output


def log_softmax(x, axis=-1):
    x = _t(x)
    if isinstance(axis, int):
        return _nn.log_softmax(x, axis=axis)
    return x - _math.reduce_logsumexp(x, axis=axis, keepdims=True)


def elu(x, alpha=1.0):
    x = _t(x)
    if alpha == 1.0:
        return _composite.elu(x)
    return _math.where(_math.greater(x, _c(0.0, x)), x, _c(alpha, x) * _composite.elu(x))


def selu(x):
    x = _t(x)
    return _c(_SELU_SCALE, x) * elu(x, _SELU_ALPHA)


def softplus(x):
    return _composite.softplus(_t(x))


def softsign(x):
    x = _t(x)
    return x / (_c(1.0, x) + _math.abs(x))


def soft_shrink(x, threshold=0.5):
    x = _t(x)
    t = _c(threshold, x)
    return _math.where(_math.greater(x, t), x - t,
                       _math.where(_math.less(x, -t), x + t, _c(0.0, x)))


def hard_shrink(x, threshold=0.5):
    x = _t(x)
    return _math.where(_math.greater(_math.abs(x), _c(threshold, x)), x, _c(0.0, x))


def sparse_plus(x):
    """0 below -1, `(x + 1)**2 / 4` on [-1, 1], x above 1."""
    x = _t(x)
    one = _c(1.0, x)
    return _math.where(_math.less_equal(x, -one), _c(0.0, x),
                       _math.where(_math.greater_equal(x, one), x,
                                   _math.square(x + one) / _c(4.0, x)))


def silu(x):
    return _composite.silu(_t(x))


def squareplus(x, b=4):
    x = _t(x)
    return (x + _math.sqrt(_math.square(x) + _c(b, x))) / _c(2.0, x)


def gelu(x, approximate=False):
    return _nn.gelu(_t(x), approximate=approximate)


def celu(x, alpha=1.0):
    x = _t(x)
    a = _c(alpha, x)
    return _math.maximum(x, _c(0.0, x)) + a * (_math.exp(_math.minimum(x, _c(0.0, x)) / a) -
                                                _c(1.0, x))


def glu(x, axis=-1):
    """The gated linear unit: the first half of `axis` times the sigmoid of the second."""
    x = _t(x)
    if x.shape[axis] is not None and x.shape[axis] % 2:
        raise ValueError("axis size must be divisible by 2. "
                         f"Received: x.shape={tuple(x.shape)} with axis={axis}")
    a, b = _array.split(x, 2, axis=axis)
    return a * _math.sigmoid(b)


def tanh(x):
    return _math.tanh(_t(x))


def tanh_shrink(x):
    x = _t(x)
    return x - _math.tanh(x)


def hard_tanh(x):
    x = _t(x)
    return _math.clip_by_value(x, _c(-1.0, x), _c(1.0, x))


def threshold(x, threshold, default_value):  # noqa: A002 (Keras's argument name)
    """x where x > threshold, else `default_value`."""
    x = _t(x)
    return _math.where(_math.greater(x, _c(threshold, x)), x, _c(default_value, x))


def sigmoid(x):
    """The logistic function; the result remembers its logits (see `softmax`)."""
    x = _t(x)
    output = _math.sigmoid(x)
    set_keras_logits(output, x)
    return output


def exponential(x):
    return _math.exp(_t(x))


def hard_sigmoid(x):
    x = _t(x)
    return _composite.relu6(x + _c(3.0, x)) / _c(6.0, x)


def log_sigmoid(x):
    return _composite.log_sigmoid(_t(x))


def sparse_sigmoid(x):
    """0 below -1, `(x + 1) / 2` on [-1, 1], 1 above."""
    x = _t(x)
    return _math.clip_by_value((x + _c(1.0, x)) / _c(2.0, x), _c(0.0, x), _c(1.0, x))


def hard_silu(x):
    x = _t(x)
    return x * hard_sigmoid(x)


def linear(x):
    """The identity (what a layer with `activation=None` applies)."""
    return x


def mish(x):
    x = _t(x)
    return x * _math.tanh(softplus(x))


swish = silu
hard_swish = hard_silu
_BUILTINS = {fn.__name__: fn for fn in (
    relu, leaky_relu, relu6, softmax, elu, selu, softplus, softsign, soft_shrink, sparse_plus,
    silu, squareplus, gelu, celu, glu, tanh, tanh_shrink, hard_tanh, hard_shrink, threshold,
    sigmoid, exponential, hard_sigmoid, log_sigmoid, sparse_sigmoid, hard_silu, linear, mish,
    log_softmax)}
ALL_OBJECTS = dict(_BUILTINS, swish=silu, hard_swish=hard_silu)


def serialize(activation):
    """A built-in's name ("relu"); a registered function's or an object's config."""
    if isinstance(activation, types.FunctionType) and \
            _BUILTINS.get(activation.__name__) is activation:
        return activation.__name__
    if isinstance(activation, types.FunctionType):
        return get_registered_name(activation)
    return serialize_keras_object(activation)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, module_objects=ALL_OBJECTS,
                                    custom_objects=custom_objects,
                                    printable_module_name="activation function")


def get(identifier):
    """The activation `identifier` names: None is `linear`; a name, config or callable."""
    if identifier is None:
        return linear
    if isinstance(identifier, dict):
        obj = deserialize(identifier)
    elif isinstance(identifier, str):
        obj = ALL_OBJECTS.get(identifier)
    else:
        obj = identifier
    if callable(obj):
        return obj
    raise ValueError(f"Could not interpret activation function identifier: {identifier}")
