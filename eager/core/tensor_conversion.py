"""Converting Python and numpy values to tensors: `convert_to_tensor`, `constant` and the
registry of conversion functions (`register_tensor_conversion_function`), with TensorFlow's
dtype rules (Python floats become float32, ints int32 or int64 by range, numpy values keep
their dtype, lists are inferred from their elements; nothing converts float to int).

Converted values are placed on the current device (the innermost `eager.device` scope, else
the default device); a CUDA array becomes a tensor on its own GPU without a host round trip.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..base import dtypes as _dt
from ..base.dtypes import BY_NUMPY, DType
from ..base.errors import InvalidArgumentError
from ..base.ieee import FP_SIGNALS, quietly
from ..base.tensor_shape import TensorShape, as_shape
from ..devices import registry as _registry
from ..tensor import EagerTensor, Tensor, set_number_converter, wrap_value
from .context import placement_device as _placement_device
from .context import thread_state as _thread_state
from .registry import op_error, out_of_memory_error
from .shapes import NONE_TO_TENSOR

__all__ = ["convert_to_tensor", "constant", "register_tensor_conversion_function", "host_number",
           "is_host_number", "conversion_functions_for"]

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)

# Registered conversion functions: (priority, order, base_type, fn), kept sorted.
_conversion_functions: list = []
_conversion_cache: dict = {}


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """≈ `tf.register_tensor_conversion_function`.

    `conversion_func(value, dtype=None, name=None, as_ref=False)` returns a Tensor (of `dtype`
    when one is requested) or NotImplemented to let the next function try. Lower priorities run
    first.
    """
    types = base_type if isinstance(base_type, tuple) else (base_type,)
    for t in types:
        if not isinstance(t, type):
            raise TypeError(f"base_type must be a type or tuple of types, got {t!r}.")
        if issubclass(t, (int, float, complex, str, np.ndarray, np.generic)):
            raise TypeError("Cannot register conversions for Python numeric types and NumPy "
                            "scalars and arrays.")
    if not callable(conversion_func):
        raise TypeError("conversion_func must be callable.")
    _conversion_functions.append((priority, len(_conversion_functions), types, conversion_func))
    _conversion_functions.sort(key=lambda e: (e[0], e[1]))
    _conversion_cache.clear()


def conversion_functions_for(cls):
    """The registered conversion functions that apply to values of class `cls`, in the order
    they are tried (cached per class)."""
    found = _conversion_cache.get(cls)
    if found is None:
        found = tuple(fn for _, _, types, fn in _conversion_functions if issubclass(cls, types))
        _conversion_cache[cls] = found
    return found


def _compatible(desired: DType, actual: DType) -> bool:
    """TensorFlow's rule for converting a non-tensor value to a requested dtype: integers to any
    integer, integers and floats to floats, any number to complex; never float to int."""
    if desired is actual:
        return True
    if desired.is_integer:
        return actual.is_integer
    if desired.is_floating:
        return actual.is_floating or actual.is_integer
    if desired.is_complex:
        return actual.is_floating or actual.is_integer or actual.is_complex
    return False


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_host_number(value) -> bool:
    """Whether `value` is a Python int or float or a numpy number: what `host_number` takes.
    (Other classes, bool included, go through `convert_to_tensor` and their registered
    conversions.)"""
    return type(value) in (int, float) or isinstance(value, np.number)


def host_number(value, dtype=None):
    """The 0-d numpy array `convert_to_tensor(value, dtype)` would hold for a Python or numpy
    number, made on the host only. Why: an op that needs a number's value when it is created
    (range's bounds) would otherwise make a device tensor of it and read it back, a wait for
    the GPU."""
    return np.asarray(_python_to_numpy(value, None if dtype is None else _dt.as_dtype(dtype)))


def _python_to_numpy(value, dtype):
    """A numpy array (or numpy scalar) for a Python/numpy value, with TensorFlow's dtype rules."""
    cls = value.__class__
    if cls is float:
        inferred = _dt.float32
        if dtype is None and _FLOAT32_MAX < abs(value) < np.inf:
            raise ValueError(f"Can't convert Python float {value!r} to a float32 tensor: out of "
                             "range (pass dtype=float64).")
    elif cls is int:
        inferred = _dt.int32 if _INT32_MIN <= value <= _INT32_MAX else _dt.int64
        # Only an inferred dtype must hold the int; a requested dtype (float32, uint64) may
        # hold ints beyond int64, and its own range is checked below.
        if dtype is None and not _INT64_MIN <= value <= _INT64_MAX:
            raise ValueError(f"Can't convert Python int {value} to a tensor: it does not fit "
                             "in int64.")
    elif cls is bool:
        inferred = _dt.bool
        if dtype is not None and (dtype.is_integer or dtype.is_floating):
            inferred = dtype  # TensorFlow: a scalar True converts to 1 / 1.0 (a list does not)
    elif cls is complex:
        inferred = _dt.complex128
    elif isinstance(value, (np.ndarray, np.generic)):
        if value.dtype.kind in "OSU":
            return _string_array(value, dtype)
        inferred = BY_NUMPY.get(value.dtype)
        if inferred is None:
            if not value.dtype.isnative:  # ">f4" on a little-endian machine: TensorFlow
                # converts it to the native dtype with the same values
                return _python_to_numpy(value.astype(value.dtype.newbyteorder("=")), dtype)
            raise TypeError(f"Cannot convert a numpy array of dtype {value.dtype} to a tensor: "
                            "eager supports bool, integer, float and complex dtypes.")
        arr = value
        if dtype is None or dtype is inferred:
            return np.array(arr, copy=True)
        if not _compatible(dtype, inferred):
            raise TypeError(f"Cannot convert {_describe(value)} to EagerTensor of dtype "
                            f"{dtype.name}.")
        try:
            return arr.astype(dtype.dtype)
        except FP_SIGNALS:  # a value beyond the dtype's range: inf, as TensorFlow converts it
            return quietly(arr.astype, dtype.dtype)
    elif value is None:
        raise ValueError(NONE_TO_TENSOR)
    elif isinstance(value, (str, bytes)):
        if dtype is not None and dtype is not _dt.string:
            raise TypeError(f"Cannot convert {_describe(value)} to EagerTensor of dtype "
                            f"{dtype.name}")
        array = np.empty((), dtype=object)
        array[()] = _as_bytes(value)
        return array
    elif isinstance(value, (list, tuple)):
        return _sequence_to_numpy(value, dtype)
    elif cls is range:
        return _range_to_numpy(value, dtype)
    elif isinstance(value, numbers.Integral):
        return _python_to_numpy(int(value), dtype)
    elif isinstance(value, numbers.Real):
        return _python_to_numpy(float(value), dtype)
    elif isinstance(value, numbers.Complex):
        return _python_to_numpy(complex(value), dtype)
    elif hasattr(value, "__array__") or hasattr(value, "__array_interface__"):
        return _python_to_numpy(np.asarray(value), dtype)
    else:
        raise ValueError(f"Attempt to convert a value ({_describe(value)}) with an unsupported "
                         f"type ({type(value)}) to a Tensor.")
    # A Python scalar.
    if dtype is _dt.string:
        raise TypeError(f"Cannot convert {_describe(value)} to EagerTensor of dtype string")
    if dtype is None:
        dtype = inferred
    elif not _compatible(dtype, inferred):
        raise TypeError(f"Cannot convert {_describe(value)} to EagerTensor of dtype "
                        f"{dtype.name}.")
    try:
        return np.asarray(value, dtype=dtype.dtype)
    except OverflowError:
        raise ValueError(f"Can't convert Python int {value} to EagerTensor of dtype "
                         f"{dtype.name}: out of range.") from None
    except FP_SIGNALS:  # `constant(7e4, float16)`: inf, as TensorFlow converts it
        return quietly(np.asarray, value, dtype=dtype.dtype)


def _sequence_to_numpy(value, dtype):
    """A Python list/tuple (nested, possibly holding numpy values and tensors) as TensorFlow
    converts it: the dtype is inferred from the elements, float precision from the first
    element (a leading numpy float32 makes float32; Python floats make float32), numpy integers
    count as Python ints (int32 when all fit), and a bool first element admits only bools."""
    first, tensor_dtypes, big_int = _scan_sequence(value)
    if (dtype is _dt.string or isinstance(first, (str, bytes))
            or _dt.string in tensor_dtypes):
        return _string_sequence(value, dtype)
    if tensor_dtypes:
        # TensorFlow packs a list holding tensors: they must share one dtype, which the other
        # elements adopt (as if it were requested).
        if len(tensor_dtypes) > 1:
            names = sorted(d.name for d in tensor_dtypes)
            raise InvalidArgumentError(None, "Pack", f"cannot compute Pack: the tensors in "
                                                     f"{_describe(value)} have different dtypes "
                                                     f"({', '.join(names)}) [Op:Pack]")
        if dtype is None:
            dtype = next(iter(tensor_dtypes))
    try:
        arr = np.array(value)
    except ValueError as e:
        raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor: "
                         f"{_describe(value)}.") from e
    if big_int is not None:
        if dtype is _dt.uint64 and big_int > 0:
            return _uint64_sequence(value)
        if dtype is None or not (dtype.is_floating or dtype.is_complex):
            raise ValueError(f"Can't convert Python sequence with out-of-range integer "
                             f"{big_int} to Tensor: {_describe(value)}.")
        try:
            return np.array(value, dtype=dtype.dtype)
        except FP_SIGNALS:  # an int beyond float16's range: inf
            return quietly(np.array, value, dtype=dtype.dtype)
    if arr.dtype == object:
        raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor: "
                         f"{_describe(value)}.")
    kind = arr.dtype.kind
    first_bool = isinstance(first, (bool, np.bool_))
    if (first_bool and kind != "b") or (kind == "c" and not isinstance(first, (complex,
                                                                              np.complexfloating))):
        raise ValueError(f"Can't convert Python sequence with mixed types to Tensor: "
                         f"{_describe(value)}.")
    if arr.size == 0:
        inferred = _dt.float32 if kind == "f" else BY_NUMPY.get(arr.dtype)
    elif kind == "f":
        inferred = BY_NUMPY[first.dtype] if isinstance(first, np.floating) else _dt.float32
        if dtype is None and inferred is _dt.float32 and arr.dtype.itemsize == 8:
            top = np.abs(arr[np.isfinite(arr)]).max(initial=0.0)
            if top > _FLOAT32_MAX:
                raise ValueError(f"Can't convert {_describe(value)} to a float32 tensor: a "
                                 "value is out of range (pass dtype=float64).")
    elif kind in "iu":
        inferred = _dt.int64
        if arr.max() > _INT64_MAX:  # numpy uint64 values: only a requested dtype takes them
            if dtype is None:
                raise ValueError(f"Can't convert Python sequence with out-of-range integer to "
                                 f"Tensor: {_describe(value)}.")
            inferred = _dt.uint64  # (the range check below refuses them for signed dtypes)
        elif _INT32_MIN <= arr.min() and arr.max() <= _INT32_MAX:
            inferred = _dt.int32
    elif kind == "c":
        inferred = _dt.complex128
    elif kind in "US":  # a string after numbers: TensorFlow refuses the mix
        raise ValueError(f"Can't convert Python sequence with mixed types to Tensor: "
                         f"{_describe(value)}.")
    else:
        inferred = BY_NUMPY.get(arr.dtype)
    if inferred is None:
        raise TypeError(f"Cannot convert {_describe(value)} (numpy dtype {arr.dtype}) to a "
                        "tensor.")
    if dtype is None:
        dtype = inferred
    elif arr.size and not _compatible(dtype, inferred):  # an empty list takes any dtype
        raise TypeError(f"Cannot convert {_describe(value)} to EagerTensor of dtype "
                        f"{dtype.name}.")
    if arr.dtype != dtype.dtype:
        if dtype.is_integer and arr.dtype.kind in "iu":
            info = np.iinfo(dtype.dtype)
            if arr.size and (arr.min() < info.min or arr.max() > info.max):
                raise ValueError(f"Can't convert {_describe(value)} to EagerTensor of dtype "
                                 f"{dtype.name}: out of range.")
        try:
            arr = arr.astype(dtype.dtype)
        except FP_SIGNALS:  # `constant([7e4], float16)`: inf, as TensorFlow converts it
            arr = quietly(arr.astype, dtype.dtype)
    return arr


def _as_bytes(text) -> bytes:
    """One string element as TensorFlow holds it: bytes as they are, `str` encoded as UTF-8 (a
    lone surrogate, which UTF-8 cannot encode, is TensorFlow's ValueError)."""
    if isinstance(text, bytes):
        return bytes(text)
    try:
        return str(text).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("Error converting unicode string while converting Python sequence to "
                         "Tensor.") from None


def _string_array(value, dtype):
    """A numpy string array (fixed-width `S`/`U`, or object holding str/bytes) as a `string`
    tensor's value: an object array of bytes. Any other requested dtype is refused, as
    TensorFlow fails to parse the text as numbers; an object array holding anything but strings
    is TensorFlow's "Unsupported object type"."""
    if dtype is not None and dtype is not _dt.string:
        raise TypeError(f"Cannot convert {_describe(value)} to EagerTensor of dtype "
                        f"{dtype.name}.")
    value = np.asarray(value)
    out = np.empty(value.shape, dtype=object)
    flat = out.reshape(-1)
    for i, item in enumerate(value.reshape(-1)):
        if not isinstance(item, (str, bytes)):
            raise ValueError(f"Failed to convert a NumPy array to a Tensor (Unsupported object "
                             f"type {type(item).__name__}).")
        flat[i] = _as_bytes(item)
    return out


def _string_sequence(value, dtype):
    """A nested list of str/bytes (or string tensors) as an object array of bytes; a number
    among strings, or strings asked for as another dtype, are TensorFlow's errors."""
    if dtype is not None and dtype is not _dt.string:
        raise TypeError(f"Cannot convert {_describe(value)} to EagerTensor of dtype "
                        f"{dtype.name}")
    leaves = []
    shape = _string_shape(value, leaves)
    out = np.empty(len(leaves), dtype=object)
    for i, item in enumerate(leaves):
        if isinstance(item, Tensor):
            item = item.numpy()
        if not isinstance(item, (str, bytes)):
            if dtype is _dt.string:
                raise TypeError(f"Cannot convert {_describe(value)} to EagerTensor of dtype "
                                "string")
            raise ValueError(f"Can't convert Python sequence with mixed types to Tensor: "
                             f"{_describe(value)}.")
        out[i] = _as_bytes(item)
    return out.reshape(shape)


def _string_shape(value, leaves) -> tuple:
    """The shape of nested lists `value`, appending its leaves (row-major) to `leaves`; a
    ragged nesting is the non-rectangular ValueError."""
    if isinstance(value, (list, tuple)):
        if not value:
            return (0,)
        shapes = [_string_shape(item, leaves) for item in value]
        if any(s != shapes[0] for s in shapes):
            raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor: "
                             f"{_describe(value)}.")
        return (len(value),) + shapes[0]
    if isinstance(value, np.ndarray):
        leaves.extend(value.reshape(-1).tolist())
        return value.shape
    if isinstance(value, Tensor) and value.dtype is _dt.string:
        array = np.asarray(value.numpy(), dtype=object)
        leaves.extend(array.reshape(-1).tolist())
        return array.shape
    leaves.append(value)
    return ()


def _range_to_numpy(value, dtype):
    """A Python range as TensorFlow's `convert_to_tensor` converts it: its registered conversion
    runs `tf.range(start, stop, step, dtype)`, so the dtype comes from the bounds (int32, or
    int64 when one needs it), also for an empty range, which a list would make float32; and
    bounds that lie the wrong way for the step (`range(5, 0)`, merely empty in Python) are
    Range's InvalidArgumentError. (`constant` reads a range as a list, as TensorFlow's does.)"""
    start, stop, step = value.start, value.stop, value.step
    if (start > stop) if step > 0 else (start < stop):
        relation, sign = ("<=", ">") if step > 0 else (">=", "<")
        raise op_error("Range", f"Requires start {relation} limit when delta {sign} 0: "
                                f"{start}/{stop}")
    if dtype is None:
        bounds = (start, stop, step)
        for bound in bounds:
            if not _INT64_MIN <= bound <= _INT64_MAX:
                raise ValueError(f"Can't convert Python int {bound} to a tensor: it does not "
                                 "fit in int64.")
        fits = all(_INT32_MIN <= bound <= _INT32_MAX for bound in bounds)
        dtype = _dt.int32 if fits else _dt.int64
    return _sequence_to_numpy(list(value), dtype)


def _uint64_sequence(value):
    """A list holding Python ints beyond int64, asked for as uint64: TensorFlow converts every
    element in [0, 2**64) (numpy alone would go through float64 and round them)."""
    cells = np.empty(np.shape(np.array(value, dtype=object)), dtype=object)
    cells[...] = value
    for item in cells.flat:
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)):
            raise TypeError(f"Cannot convert {_describe(value)} to EagerTensor of dtype uint64.")
        if not 0 <= item < 2 ** 64:
            raise ValueError(f"Can't convert {_describe(value)} to EagerTensor of dtype uint64: "
                             "out of range.")
    return cells.astype(np.uint64)


def _scan_sequence(seq):
    """(first scalar element, set of dtypes of the tensors inside, first Python int outside
    int64 or None) of a nested list/tuple; numpy arrays inside count by their first element."""
    first = None
    tensor_dtypes = set()
    big_int = None
    stack = [seq]
    while stack:
        items = stack.pop()
        for item in items:
            cls = item.__class__
            if cls is float or cls is bool:
                pass
            elif cls is int:
                if big_int is None and not _INT64_MIN <= item <= _INT64_MAX:
                    big_int = item
            elif cls is list or cls is tuple:
                if first is None:
                    sub_first, sub_dtypes, sub_big = _scan_sequence(item)
                    first = sub_first
                    tensor_dtypes |= sub_dtypes
                    big_int = sub_big if big_int is None else big_int
                    continue
                stack.append(item)
                continue
            elif isinstance(item, Tensor):
                tensor_dtypes.add(item.dtype)
            elif isinstance(item, np.ndarray) and first is None:
                if item.size:
                    first = item.reshape(-1)[0]
                continue
            if first is None:
                first = item
    return first, tensor_dtypes, big_int


def _from_host(array, device) -> EagerTensor:
    """A tensor holding host array `array` (already converted), on `device` or the current one.
    A graph being built is told (`constant_made`): the traced code made this constant, so the
    graph embeds it as TensorFlow's `Const` instead of capturing it."""
    st = _thread_state()
    if device is None:
        device = _placement_device(st)
    if not device.inline and array.dtype.hasobject:  # strings live in host memory
        device = _registry.lookup("CPU:0")
    t = wrap_value(array if device.inline else device.from_host(array), device)
    interpreter = st.interpreter
    if interpreter is not None:
        made = getattr(interpreter, "constant_made", None)  # graphs have it; executors do not
        if made is not None:
            made(t)
    return t


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """≈ `tf.convert_to_tensor`.

    Tensors pass through (a different requested `dtype` is a ValueError, as in TensorFlow);
    registered conversion functions run next; Python and numpy values become constants on the
    current device with TensorFlow's dtype rules (Python floats -> float32, ints -> int32 or
    int64, numpy keeps its dtype). `dtype_hint` is tried when `dtype` is None and the value is
    not a tensor, and dropped silently if incompatible (as in TensorFlow).
    """
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not _dt.as_dtype(dtype):
            raise ValueError(f"Tensor conversion requested dtype {_dt.as_dtype(dtype).name} for "
                             f"Tensor with dtype {value.dtype.name}: {value!r}")
        return value
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
    for fn in conversion_functions_for(value.__class__):
        result = fn(value, dtype=dtype, name=name, as_ref=False)
        if result is NotImplemented:
            continue
        if not isinstance(result, Tensor):
            raise RuntimeError(f"Conversion function {fn!r} for type {type(value)} returned "
                               f"non-Tensor: {result!r}")
        if dtype is not None and result.dtype is not dtype:
            raise RuntimeError(f"Conversion function {fn!r} for type {type(value)} returned "
                               f"incompatible dtype: requested = {dtype.name}, actual = "
                               f"{result.dtype.name}")
        return result
    if hasattr(value, "__cuda_array_interface__") and hasattr(value, "__dlpack__"):
        return _from_device_array(value, dtype)
    if dtype is None and dtype_hint is not None:
        try:
            array = _python_to_numpy(value, _dt.as_dtype(dtype_hint))
        except (TypeError, ValueError):
            array = _python_to_numpy(value, None)
    else:
        array = _python_to_numpy(value, dtype)
    return _from_host(array, None)


def _filled(target, n, array):
    """A scalar `array` broadcast to shape `target` of `n` elements, with the errors of
    TensorFlow's Fill (which `constant` runs for it) for a shape of more than 2**63 - 1 elements
    and for memory that cannot be had."""
    if n > _INT64_MAX:
        raise InvalidArgumentError(None, "Fill", f"Fill: Shape [{','.join(map(str, target))}] "
                                                 f"would have more than 2**63 - 1 elements "
                                                 f"[Op:Fill]")
    try:
        return np.full(target, np.asarray(array).reshape(()), dtype=array.dtype)
    except (MemoryError, ValueError):  # ValueError: numpy's "array is too big"
        raise out_of_memory_error("Fill", target, BY_NUMPY.get(array.dtype),
                                  _placement_device()) from None


def _from_device_array(value, dtype):
    """A CuPy (or other CUDA) array becomes a tensor on its GPU without a host round trip."""
    device_type, device_id = value.__dlpack_device__()
    device = _registry.gpu_for_cuda_device(device_id)
    if device is None:
        raise ValueError(f"Cannot convert an array on CUDA device {device_id}: no eager GPU "
                         "device uses it.")
    array = device.xp.array(value, copy=True)
    inferred = BY_NUMPY.get(array.dtype)
    if inferred is None:
        raise TypeError(f"Cannot convert an array of dtype {array.dtype} to a tensor.")
    if dtype is not None and dtype is not inferred:
        if not _compatible(dtype, inferred):
            raise TypeError(f"Cannot convert a {inferred.name} array to EagerTensor of dtype "
                            f"{dtype.name}.")
        array = array.astype(dtype.dtype)
    return wrap_value(array, device)


def constant(value, dtype=None, shape=None, name=None):
    """≈ `tf.constant`: a tensor from a Python or numpy value (always a new buffer).

    With `shape`, a scalar is broadcast to it and a value with the same number of elements is
    reshaped to it; anything else is a TypeError naming both shapes.
    """
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
    if isinstance(value, EagerTensor):
        if dtype is not None and dtype is not value._dtype:
            # As TensorFlow (which never casts here): use eager.cast.
            raise TypeError(f"Expected tensor with dtype {dtype.name}, but got dtype "
                            f"{value._dtype.name}.")
        array = np.array(value._numpy_host(), copy=True)
    elif isinstance(value, Tensor):
        if shape is None and (dtype is None or dtype is value.dtype):
            return value
        raise TypeError("eager.constant of a symbolic tensor with a new dtype or shape; use "
                        "eager.cast / eager.reshape.")
    elif value.__class__ is range:  # a list here, as in TensorFlow's constant (_range_to_numpy)
        array = _sequence_to_numpy(list(value), dtype)
    else:
        array = _python_to_numpy(value, dtype)
    if shape is not None:
        shape = as_shape(shape)
        if not shape.is_fully_defined():
            raise TypeError(f"eager.constant needs a fully defined shape, got {shape}.")
        target = tuple(shape)
        if array.shape != target:
            n = 1
            for d in target:  # exactly: numpy's int64 product would wrap
                n *= d
            if array.size == 1:
                array = _filled(target, n, array)
            elif array.size == n:
                array = np.asarray(array).reshape(target)
            else:
                raise TypeError(f"Eager execution of eager.constant with unsupported shape. Tensor "
                                f"{_describe(value)} with shape {TensorShape(array.shape)} has "
                                f"{array.size} elements, but got `shape` {shape} with {n} "
                                "elements.")
    return _from_host(array, None)


# The launching operators' conversion of a Python number (`x * 1.5` on a GPU): the constant the
# op library would make of it.
set_number_converter(lambda number, dtype: convert_to_tensor(number, dtype))
