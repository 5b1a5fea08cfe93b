"""A step's scalar inputs to the fused update ops: the learning rate, bias corrections and
constants, as 0-d host arrays eagerly, as graph tensors while tracing (read on every call of
the traced function), or as tensors left on the accelerator that holds the step counter (no
per-step wait for the device). Host constants headed for an accelerator are copied there once
per value (`scalar_input`), not once per variable and step.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..base import dtypes as _dt
from ..core.context import thread_state
from ..core.tensor_conversion import convert_to_tensor
from ..ops.math_ops import cast
from ..ops.math_ops import pow as _pow
from ..tensor import EagerTensor, Tensor, wrap_value
from ..variables import ResourceVariable, Variable

__all__ = ["keras_float", "scalar_as", "scalar_input", "scalar_like", "step_power"]


def host_scalar(value):
    """A learning rate (tensor, variable, number) as a 0-d host numpy array. Its dtype is the
    tensor's, or what `convert_to_tensor` gives a Python number (float32, int32): Keras casts
    the learning rate to each variable's dtype from that tensor, so a float64 variable sees
    float32(lr), not the Python double."""
    if isinstance(value, Variable):
        value = value.value()
    if not isinstance(value, EagerTensor) and not isinstance(value, np.ndarray):
        value = convert_to_tensor(value)
    if isinstance(value, EagerTensor):
        value = value._value if isinstance(value._value, np.ndarray) else np.asarray(value)
    array = np.asarray(value)
    if array.ndim != 0 or array.dtype.kind not in "fiu":
        raise ValueError(f"The learning rate must be a real scalar, got {value!r}.")
    return array


def checked_lr(value):
    """A learning-rate tensor, checked from its type alone (a real scalar)."""
    if value.shape.rank not in (0, None) or not (value.dtype.is_floating
                                                 or value.dtype.is_integer):
        raise ValueError(f"The learning rate must be a real scalar, got {value!r}.")
    return value


def _as_tensor(x):
    return x if isinstance(x, EagerTensor) else convert_to_tensor(x)


def on_accelerator(var) -> bool:
    """Whether `var` (the learning rate's or the step counter's variable) lives on a device
    that computes apart from the host (a GPU). Its value then stays there: reading it on the
    host every step would wait for everything queued on the device, so the step's scalars are
    computed from it with device ops instead, as TensorFlow does."""
    return var.__class__ is ResourceVariable and not var._handle.device.inline


_DEVICE_SCALARS = weakref.WeakKeyDictionary()  # device -> {(dtype, bytes): EagerTensor}
_MAX_DEVICE_SCALARS = 1024


def scalar_input(x, device):
    """A fused update's scalar input (a 0-d host array, or a tensor) as a tensor for an op that
    runs on `device`. A host scalar headed for an accelerator is copied there once per distinct
    value and kept: one host-to-device copy per variable per step would cost more than the
    update itself (the learning rate rarely changes). While tracing, the graph gets constants."""
    if x.__class__ is not np.ndarray or tracing():
        return _as_tensor(x)
    try:
        cache = _DEVICE_SCALARS[device]
    except KeyError:
        cache = _DEVICE_SCALARS.setdefault(device, {})
    key = (x.dtype.str, x.tobytes())
    tensor = cache.get(key)
    if tensor is None:
        if len(cache) >= _MAX_DEVICE_SCALARS:  # values that change every step must not pile up
            cache.clear()
        tensor = cache[key] = wrap_value(device.from_host(x), device)
    return tensor


def scalar_like(x, tensor):
    """A 0-d host array `x` as a tensor beside `tensor` (on its device, when it is eager or
    pending: under async dispatch the step counter's value is a pending tensor)."""
    if tensor.__class__ is EagerTensor or hasattr(tensor, "_resolve"):
        return scalar_input(x, tensor._meta.device)
    return _as_tensor(x)


def tracing() -> bool:
    """Whether a graph is being built in this thread (inside `eager.function`): then the step's
    hyperparameters must be graph tensors, read on every call of the traced function, not host
    values fixed at trace time (which could not be read anyway: the variables' values are not
    known while tracing)."""
    interpreter = thread_state().interpreter
    return interpreter is not None and getattr(interpreter, "is_graph", False)


def scalar_as(value, np_dtype):
    """A step scalar (a 0-d host array, or while tracing a tensor) as `np_dtype`: a 0-d array
    eagerly, a cast tensor while tracing (the same rounding: one cast from the same dtype)."""
    if isinstance(value, Tensor):
        dtype = _dt.as_dtype(np_dtype)
        return value if value.dtype is dtype else cast(value, dtype)
    return np.array(value, np_dtype)


def step_power(base, step):
    """`base ** step` for a step scalar (see `scalar_as`): a 0-d array eagerly, a tensor while
    tracing or when the step counter lives on an accelerator. `base` is a 0-d array of the
    step's dtype."""
    if isinstance(step, Tensor):
        return _pow(scalar_like(base, step), step)
    return np.asarray(np.power(base, step))


def keras_float(value, np_dtype):
    """A Python float hyperparameter as Keras casts it (`ops.cast(beta, dtype)`): through a
    float32 tensor first, then to `np_dtype`."""
    return np.array(np.float32(value), np_dtype)
