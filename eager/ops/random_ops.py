"""Random numbers (`eager.random`) and `eager.nn.dropout`, with TensorFlow's seeding rules.

Seeds (≈ `tf.random.set_seed`): every random op carries two seeds, `seed` and `seed2`, as attrs.

* A global seed set and no op seed: the op seed is drawn from a counter (a `random.Random`
  seeded by `set_seed`), so re-running a program after `set_seed(s)` repeats its sequence.
* An op seed: `(global seed, op seed)`, or `(87654321, op seed)` (TensorFlow's default global
  seed) when no global seed is set. Calling the same op again eagerly gives *different* values in
  a reproducible sequence, because the stream state lives with the kernel, keyed by the op, its
  dtype and both seeds; `set_seed` resets every such stream.
* Neither: `(0, 0)`, which the kernel treats as "seed from the OS" (nondeterministic).

Random ops are `stateful=True` records: a traced graph running one twice draws twice, and later
graph passes never merge or fold them. The numbers come from numpy's Philox on the CPU and from
`cupy.random` (seeded from the same Philox stream) on a GPU, so, as in TensorFlow, the CPU and
GPU streams differ, and neither reproduces TensorFlow's own bits: the seeding *semantics* are
TensorFlow's, the sample values are not.

`Generator` (≈ `tf.random.Generator`) lives in `stateful_random_ops` and is re-exported here.
"""

from __future__ import annotations

import collections
import numbers
import random as _pyrandom
import threading

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError
from ..tensor import Tensor
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from . import math_ops as _math
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.shapes import broadcast_shapes, static_ints

__all__ = ["normal", "uniform", "truncated_normal", "shuffle", "set_seed", "Generator",
           "Algorithm", "get_global_generator", "set_global_generator"]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1
_MASK64 = 2 ** 64 - 1
_FLOATS = frozenset({_dt.float16, _dt.float32, _dt.float64})
_UNIFORM_INTS = frozenset({_dt.int32, _dt.int64, _dt.uint32, _dt.uint64})
_SHAPE_DTYPES = frozenset({_dt.int32, _dt.int64})


# -----------------------------------------------------------------------------------------------
# Seeds and the streams kernels own
# -----------------------------------------------------------------------------------------------

class _Seeds:
    """The process-wide global seed (TensorFlow keeps it on the eager context)."""

    def __init__(self):
        self.global_seed = None
        self.rng = _pyrandom.Random()
        self.lock = threading.Lock()


_seeds = _Seeds()

#: (device, op name, dtype, seed, seed2) -> numpy Philox bit generator. Bounded: with a global
#: seed every op call without an op seed makes a new key that is never used again.
_STREAMS: collections.OrderedDict = collections.OrderedDict()
_STREAMS_LIMIT = 8192
_STREAMS_LOCK = threading.Lock()


def set_seed(seed):
    """≈ `tf.random.set_seed`: sets the global seed (None unsets it), restarts the op-seed
    counter and resets the state of every seeded random stream, so that the same program gives
    the same numbers after the same `set_seed`."""
    if seed is not None:
        seed = _int_seed("set_seed", seed)
    with _seeds.lock:
        _seeds.global_seed = seed
        _seeds.rng = _pyrandom.Random(seed)
    with _STREAMS_LOCK:
        _STREAMS.clear()


def _int_seed(what, value):
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral,
                                                                     np.integer)):
        raise TypeError(f"{what}: expected an integer, got {value!r}.")
    return int(value)


def get_seed(op_seed, op_name="random op"):
    """≈ `tf.compat.v1.random.get_seed`: the (seed, seed2) attrs for an op given its op seed,
    (0, 0) meaning nondeterministic."""
    if op_seed is not None:
        op_seed = _int_seed(f"{op_name} seed", op_seed)
    with _seeds.lock:
        global_seed = _seeds.global_seed
        if global_seed is not None and op_seed is None:
            op_seed = _seeds.rng.randint(0, _MAXINT32)
    if global_seed is not None:
        seeds = (global_seed % _MAXINT32, op_seed % _MAXINT32)
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, op_seed % _MAXINT32)
    else:
        return 0, 0
    # (0, 0) means "nondeterministic" to kernels; TensorFlow avoids it the same way.
    return (0, _MAXINT32) if seeds == (0, 0) else seeds


def _device_key(xp):
    if xp.__name__ == "numpy":
        return "numpy"
    return ("cupy", xp.cuda.Device().id)


def _op_stream(xp, op_name, dtype, seed, seed2):
    """The persistent bit generator of a seeded op (created on first use)."""
    key = (_device_key(xp), op_name, dtype.name, seed, seed2)
    with _STREAMS_LOCK:
        bitgen = _STREAMS.get(key)
        if bitgen is None:
            if seed == 0 and seed2 == 0:
                bitgen = np.random.Philox()  # seeded from the OS
            else:
                bitgen = np.random.Philox(key=(seed << 64) | seed2)
            _STREAMS[key] = bitgen
            if len(_STREAMS) > _STREAMS_LIMIT:
                _STREAMS.popitem(last=False)
        else:
            _STREAMS.move_to_end(key)
    return bitgen


# -----------------------------------------------------------------------------------------------
# Sampling (the one place that knows numpy's and cupy's random APIs)
# -----------------------------------------------------------------------------------------------

class _Sampler:
    """Draws from one numpy bit generator: with numpy's Generator on the CPU; on a GPU with a
    `cupy.random.RandomState` seeded from (and advancing) that bit generator."""

    def __init__(self, xp, bitgen):
        self.xp = xp
        self.bitgen = bitgen
        self.on_host = xp.__name__ == "numpy"
        if self.on_host:
            self.gen = np.random.Generator(bitgen)
        else:
            self.gen = xp.random.RandomState(int(bitgen.random_raw()) >> 1)

    def normal(self, shape, dtype):
        work = np.float32 if dtype == np.float16 else dtype
        out = self.gen.standard_normal(shape, dtype=work)
        return self.xp.asarray(out).astype(dtype, copy=False)

    def truncated_normal(self, shape, dtype):
        # TensorFlow's TruncatedNormal: values with |x| >= 2 are dropped and drawn again.
        work = np.float32 if dtype == np.float16 else dtype
        out = self.xp.asarray(self.gen.standard_normal(shape, dtype=work))
        bad = self.xp.abs(out) >= 2
        n = int(bad.sum())
        while n:
            out[bad] = self.gen.standard_normal((n,), dtype=work)
            bad = self.xp.abs(out) >= 2
            n = int(bad.sum())
        return out.astype(dtype, copy=False)

    def uniform(self, shape, dtype):
        """Floats in [0, 1). float16 is made from 10 random bits, so that it never rounds up
        to 1."""
        if dtype == np.float16:
            k = self.integers(0, 1024, shape, np.int32)
            return (k * np.float32(2.0 ** -10)).astype(np.float16)
        if self.on_host:
            out = self.gen.random(shape, dtype=dtype)
        else:
            out = self.gen.random_sample(shape, dtype=dtype)
        return self.xp.asarray(out)

    def integers(self, lo, hi, shape, dtype):
        if self.on_host:
            return np.asarray(self.gen.integers(lo, hi, size=shape, dtype=dtype))
        return self.gen.randint(lo, hi, size=shape, dtype=dtype)

    def full_int(self, shape, dtype):
        info = np.iinfo(dtype)
        # Drawn on the host on every device (cupy's randint cannot span a 64-bit range).
        host = np.random.Generator(self.bitgen) if not self.on_host else self.gen
        out = host.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        return self.xp.asarray(out)

    def permutation(self, n):
        return self.xp.asarray(self.gen.permutation(n))


def _draw(op_name, xp, bitgen, kind, shape, dtype, bounds):
    sampler = _Sampler(xp, bitgen)
    np_dtype = dtype.dtype
    if kind == "normal":
        return sampler.normal(shape, np_dtype)
    if kind == "truncated":
        return sampler.truncated_normal(shape, np_dtype)
    if kind == "uniform":
        return sampler.uniform(shape, np_dtype)
    if kind == "full_int":
        return sampler.full_int(shape, np_dtype)
    lo, hi = int(bounds[0]), int(bounds[1])
    if lo >= hi:
        raise op_error(op_name, f"Need minval < maxval: {lo} >= {hi}")
    return sampler.integers(lo, hi, shape, np_dtype)


# -----------------------------------------------------------------------------------------------
# Op records
# -----------------------------------------------------------------------------------------------

def _runtime_shape(op_name, inputs, shape):
    """The output shape: the `shape` attr, or (when it is None) the first input's values."""
    if shape is not None:
        return shape, inputs
    dims = tuple(int(d) for d in inputs[0].tolist())
    for d in dims:
        if d < 0:
            raise op_error(op_name, f"Dimension {d} must be >= 0 in shape {list(dims)}")
    return dims, inputs[1:]


def _inferred_shape(op_name, inputs, shape):
    if shape is not None:
        return TensorShape(shape), inputs
    s = inputs[0]
    if s.dtype not in _SHAPE_DTYPES:
        raise op_error(op_name, f"shape must be an int32 or int64 tensor, got {s.dtype.name}")
    if s.shape.rank is None:
        return UNKNOWN_SHAPE, inputs[1:]
    if s.shape.rank != 1:
        raise op_error(op_name, f"shape must be a vector of {{int32,int64}}, got shape "
                                f"{list(s.shape)}")
    n = s.shape[0]
    return (UNKNOWN_SHAPE if n is None else TensorShape([None] * n)), inputs[1:]


def _make_infer(op_name, kind):
    def infer(*inputs, shape, dtype, **_):
        out, rest = _inferred_shape(op_name, inputs, shape)
        if kind == "int":
            for what, t in zip(("minval", "maxval"), rest):
                if t.shape.rank not in (None, 0):
                    raise op_error(op_name, f"{what} must be 0-D, got shape {list(t.shape)}")
                if t.dtype is not dtype:
                    raise op_error(op_name, f"{what} must be {dtype.name}, got {t.dtype.name}")
        return TensorSpec(out, dtype)
    return infer


def _seeded_op(op_name, kind):
    def kernel(xp, *inputs, shape, dtype, seed, seed2):
        shape, bounds = _runtime_shape(op_name, inputs, shape)
        return _draw(op_name, xp, _op_stream(xp, op_name, dtype, seed, seed2), kind, shape,
                     dtype, bounds)

    return register_op(op_name, kernel, _make_infer(op_name, kind), stateful=True,
                       differentiable=False)


NORMAL = _seeded_op("RandomStandardNormal", "normal")
UNIFORM = _seeded_op("RandomUniform", "uniform")
UNIFORM_INT = _seeded_op("RandomUniformInt", "int")
TRUNCATED_NORMAL = _seeded_op("TruncatedNormal", "truncated")


def _shuffle_kernel(xp, x, seed, seed2):
    if x.ndim == 0 or x.shape[0] <= 1:
        return x.copy()
    perm = _Sampler(xp, _op_stream(xp, "RandomShuffle", _dt.int64, seed, seed2)).permutation(
        x.shape[0])
    return xp.take(x, perm, axis=0)


# Not differentiable, as in TensorFlow (RandomShuffle has no registered gradient).
SHUFFLE = register_op("RandomShuffle", _shuffle_kernel,
                      lambda x, seed, seed2: TensorSpec(x.shape, x.dtype), stateful=True,
                      dtypes=_dt.ALL, differentiable=False)


# -----------------------------------------------------------------------------------------------
# Public functions
# -----------------------------------------------------------------------------------------------

def _shape_arg(op_name, shape):
    """(static dims, None), or (None, shape tensor) for a shape only known when traced."""
    if shape is None:
        raise ValueError(f"{op_name}: shape must not be None.")
    if isinstance(shape, Tensor):
        if shape.dtype not in _SHAPE_DTYPES:
            raise TypeError(f"{op_name}: shape must be an int32 or int64 tensor, got "
                            f"{shape.dtype.name}.")
        if shape.is_symbolic:
            _inferred_shape(op_name, (shape,), None)  # validates the rank
            return None, shape
        shape = shape.numpy()
    if isinstance(shape, TensorShape) and not shape.is_fully_defined():
        raise ValueError(f"{op_name}: cannot use the partially known shape {shape}.")
    if isinstance(shape, (np.ndarray, np.generic)):
        if shape.ndim > 1:
            raise op_error(op_name, f"shape must be a vector of {{int32,int64}}, got shape "
                                    f"{list(shape.shape)}")
        if shape.ndim == 1 and shape.dtype.kind not in "iu":
            raise TypeError(f"{op_name}: shape must hold integers, got {shape.dtype}.")
        shape = shape.tolist()
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        raise op_error(op_name, f"shape must be a vector of {{int32,int64}}, got shape [] "
                                f"(value {int(shape)}); pass [{int(shape)}]")
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{op_name}: shape must be a list or tuple of ints or an integer "
                        f"tensor, got {shape!r}.")
    dims = static_ints(op_name, shape, "shape")
    for d in dims:
        if d < 0:
            raise op_error(op_name, f"Dimension {d} must be >= 0 in shape {list(dims)}")
    return dims, None


def _convert(op_name, value, dtype, what):
    """convert_to_tensor with the op's name in its TypeError/ValueError."""
    try:
        return convert_to_tensor(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{op_name}: cannot use {what}={value!r} with dtype {dtype.name}: "
                        f"{exc}") from None


def _as_dtype(what, dtype):
    try:
        return _dt.as_dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{what}: {exc}") from None


def _float_dtype(what, dtype):
    dtype = _as_dtype(what, dtype)
    if dtype not in _FLOATS:
        raise TypeError(f"{what}: dtype must be float16, float32 or float64, got {dtype.name}.")
    return dtype


def _run(op, shape_arg, attrs, extra=()):
    dims, dynamic = shape_arg
    inputs = (dynamic, *extra) if dynamic is not None else tuple(extra)
    return execute(op, inputs, {"shape": dims, **attrs})


def _scale_shift(op_name, rnd, dtype, mean, stddev):
    """rnd * stddev + mean, as TensorFlow composes it (skipped for the literal defaults)."""
    unit = type(stddev) in (int, float) and stddev == 1
    zero = type(mean) in (int, float) and mean == 0
    if unit and zero:
        return rnd
    mean = _convert(op_name, mean, dtype, "mean")
    stddev = _convert(op_name, stddev, dtype, "stddev")
    return _math.add(_math.multiply(rnd, stddev), mean)


def _stretch(op_name, rnd, dtype, minval, maxval):
    """TensorFlow's float uniform: [0, 1) samples stretched to [minval, maxval)."""
    minval_is_zero = isinstance(minval, int) and minval == 0
    maxval_is_one = isinstance(maxval, int) and maxval == 1
    if minval_is_zero and maxval_is_one:
        return rnd
    minval = _convert(op_name, minval, dtype, "minval")
    maxval = _convert(op_name, maxval, dtype, "maxval")
    if minval_is_zero:
        return _math.multiply(rnd, maxval)
    return _math.add(_math.multiply(rnd, _math.subtract(maxval, minval)), minval)


def _uniform_dtype(what, dtype, minval, maxval):
    dtype = _as_dtype(what, dtype)
    if dtype not in _FLOATS | _UNIFORM_INTS:
        raise ValueError(f"{what}: argument `dtype` got invalid value {dtype.name}. Accepted "
                         "dtypes are float16, float32, float64, int32, int64, uint32, uint64.")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"{what}: must specify maxval for integer dtype {dtype.name}.")
        maxval = 1
    return dtype, maxval


def normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None):
    """≈ `tf.random.normal`: samples of N(mean, stddev**2); `mean` and `stddev` broadcast with
    the samples (see the module doc for `seed`)."""
    dtype = _float_dtype("RandomStandardNormal", dtype)
    shape_arg = _shape_arg("RandomStandardNormal", shape)
    seed, seed2 = get_seed(seed, NORMAL.name)
    rnd = _run(NORMAL, shape_arg, {"dtype": dtype, "seed": seed, "seed2": seed2})
    return _scale_shift(NORMAL.name, rnd, dtype, mean, stddev)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None):
    """≈ `tf.random.truncated_normal`: normal samples more than 2 standard deviations from the
    mean are dropped and drawn again."""
    dtype = _float_dtype("TruncatedNormal", dtype)
    shape_arg = _shape_arg("TruncatedNormal", shape)
    seed, seed2 = get_seed(seed, TRUNCATED_NORMAL.name)
    rnd = _run(TRUNCATED_NORMAL, shape_arg, {"dtype": dtype, "seed": seed, "seed2": seed2})
    return _scale_shift(TRUNCATED_NORMAL.name, rnd, dtype, mean, stddev)


def uniform(shape, minval=0, maxval=None, dtype=_dt.float32, seed=None, name=None):
    """≈ `tf.random.uniform`: samples in [minval, maxval); `maxval` defaults to 1 for floats and
    is required for integers (whose `minval`/`maxval` must be scalars with minval < maxval).
    Float bounds broadcast with the samples, as in TensorFlow."""
    dtype, maxval = _uniform_dtype("RandomUniform", dtype, minval, maxval)
    shape_arg = _shape_arg("RandomUniform", shape)
    seed, seed2 = get_seed(seed, UNIFORM.name)
    attrs = {"dtype": dtype, "seed": seed, "seed2": seed2}
    if dtype.is_integer:
        lo = _convert(UNIFORM_INT.name, minval, dtype, "minval")
        hi = _convert(UNIFORM_INT.name, maxval, dtype, "maxval")
        return _run(UNIFORM_INT, shape_arg, attrs, (lo, hi))
    rnd = _run(UNIFORM, shape_arg, attrs)
    return _stretch(UNIFORM.name, rnd, dtype, minval, maxval)


def shuffle(value, seed=None, name=None):
    """≈ `tf.random.shuffle`: randomly permutes `value` along its first dimension."""
    try:
        value = as_tensor(value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"RandomShuffle: {exc}") from None
    seed, seed2 = get_seed(seed, SHUFFLE.name)
    return execute(SHUFFLE, (value,), {"seed": seed, "seed2": seed2})


# -----------------------------------------------------------------------------------------------
# Dropout (eager.nn.dropout; not in __all__ so that eager.random stays TensorFlow's namespace)
# -----------------------------------------------------------------------------------------------

def _noise_shape(x, noise_shape):
    """TensorFlow's `_get_noise_shape`: None entries take x's dimension. Returns a tuple of
    ints, or a shape tensor when the shape is only known at run time."""
    if noise_shape is None:
        if x.shape.is_fully_defined():
            return tuple(x.shape)
        from . import array_ops  # noqa: PLC0415 - only needed for shapes known at run time

        return array_ops.shape(x)
    if isinstance(noise_shape, Tensor):
        if noise_shape.is_symbolic:
            return noise_shape
        noise_shape = noise_shape.numpy().tolist()
    if isinstance(noise_shape, np.ndarray):
        noise_shape = noise_shape.tolist()
    if not isinstance(noise_shape, (list, tuple)):
        raise TypeError(f"Dropout: noise_shape must be a list or tuple of ints, got "
                        f"{noise_shape!r}.")
    dims = list(noise_shape)
    if x.shape.rank is not None and len(dims) == x.shape.rank:
        dims = [xd if nd is None and xd is not None else nd for nd, xd in zip(dims, x.shape)]
    if None in dims:
        raise ValueError(f"Dropout: noise_shape {noise_shape} has unknown dimensions that x's "
                         f"shape {x.shape} does not fill.")
    dims = static_ints("Dropout", dims, "noise_shape")
    if any(d < 0 for d in dims):
        raise op_error("Dropout", f"noise_shape {list(dims)} has a negative dimension")
    if x.shape.rank is not None:
        try:
            out = broadcast_shapes("Dropout", TensorShape(dims), x.shape)
        except InvalidArgumentError:
            out = None
        if out != x.shape:
            raise op_error("Dropout", f"noise_shape {list(dims)} must broadcast to x's shape "
                                      f"{list(x.shape)}")
    return dims


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """≈ `tf.nn.dropout`: zeroes each element with probability `rate` and scales the others by
    1 / (1 - rate), so the expected sum is unchanged. `noise_shape` (broadcastable to x's shape)
    shares one keep/drop decision along its size-1 dimensions. `rate` is a float in [0, 1) or a
    scalar tensor; rate 0 returns `x` itself."""
    is_rate_number = isinstance(rate, numbers.Real) and not isinstance(rate, Tensor)
    if is_rate_number and not 0 <= rate < 1:
        raise ValueError(f"Dropout: `rate` must be a scalar tensor or a float in the range "
                         f"[0, 1). Received: rate={rate}")
    if not is_rate_number and not isinstance(rate, Tensor):
        raise ValueError(f"Dropout: `rate` must be a scalar or scalar tensor. Received: "
                         f"rate={rate!r}")
    try:
        x = as_tensor(x)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"Dropout: {exc}") from None
    if not x.dtype.is_floating:
        raise ValueError(f"Dropout: `x.dtype` must be a floating point tensor as `x` will be "
                         f"scaled. Received: x_dtype={x.dtype.name}")
    if is_rate_number and rate == 0:
        return x
    if is_rate_number:
        scaled = _math.multiply(x, convert_to_tensor(1 / (1 - rate), dtype=x.dtype))
    else:
        if rate.shape.rank not in (None, 0):
            raise ValueError(f"Dropout: `rate` must be a scalar tensor, got shape {rate.shape}.")
        if rate.dtype is not x.dtype:
            raise ValueError(f"Dropout: `x.dtype` must be compatible with `rate.dtype`. "
                             f"Received: x.dtype={x.dtype.name} and rate.dtype="
                             f"{rate.dtype.name}")
        scaled = _math.truediv(x, _math.subtract(convert_to_tensor(1, dtype=x.dtype), rate))
    keep = _math.greater_equal(uniform(_noise_shape(x, noise_shape), dtype=x.dtype, seed=seed),
                               rate)
    return _math.where(keep, scaled, convert_to_tensor(0, dtype=x.dtype))


# Generator lives in its own module (it needs the helpers above); eager.random star-imports
# this module, so the names are re-exported here.
from .stateful_random_ops import (Algorithm, Generator, get_global_generator,  # noqa: E402
                                  set_global_generator)
