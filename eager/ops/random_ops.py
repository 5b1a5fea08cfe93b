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

`Generator` (≈ `tf.random.Generator`) lives in `stateful_random_ops`; both share the sampling
helpers of `random_sampling`, and the `eager.random` namespace re-exports both modules.
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
from ..core.tensor_conversion import convert_to_tensor, is_host_number
from ..base.tensor_shape import TensorShape
from . import array_ops
from . import math_ops as _math
from .random_sampling import (Sampler, as_int, convert_arg, draw, float_dtype, kernel_output_shape,
                              make_infer, run_op, scale_shift, shape_arg, stretch, uniform_dtype)
from ..core import context as _context
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.shapes import broadcast_shapes, static_ints

__all__ = ["normal", "uniform", "truncated_normal", "shuffle", "set_seed"]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1


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
    the same numbers after the same `set_seed`.

    The streams advance when kernels run, which under async dispatch or on a GPU stream is later
    than the call, so the reset first waits for the work queued before it (TensorFlow's
    `set_seed` clears its kernel cache only once its executors are idle): a draw issued before
    `set_seed` never takes a reset stream, nor one issued after it the old state."""
    if seed is not None:
        seed = as_int("set_seed", seed)
    _context.wait_for_pending_work()
    with _seeds.lock:
        _seeds.global_seed = seed
        _seeds.rng = _pyrandom.Random(seed)
    with _STREAMS_LOCK:
        _STREAMS.clear()


def get_seed(op_seed, op_name="random op"):
    """≈ `tf.compat.v1.random.get_seed`: the (seed, seed2) attrs for an op given its op seed,
    (0, 0) meaning nondeterministic."""
    if op_seed is not None:
        op_seed = as_int(f"{op_name} seed", op_seed)
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
# Op records
# -----------------------------------------------------------------------------------------------

def _seeded_op(op_name, kind):
    def kernel(xp, *inputs, shape, dtype, seed, seed2):
        shape, bounds = kernel_output_shape(op_name, inputs, shape)
        return draw(op_name, xp, _op_stream(xp, op_name, dtype, seed, seed2), kind, shape,
                    dtype, bounds)

    # Every input (a shape known only when the op runs, integer bounds) is read on the host,
    # as TensorFlow's GPU kernels take them in host memory.
    return register_op(op_name, kernel, make_infer(op_name, kind), stateful=True,
                       differentiable=False, host_inputs=(0, 1, 2))


NORMAL = _seeded_op("RandomStandardNormal", "normal")
UNIFORM = _seeded_op("RandomUniform", "uniform")
UNIFORM_INT = _seeded_op("RandomUniformInt", "int")
TRUNCATED_NORMAL = _seeded_op("TruncatedNormal", "truncated")


def _shuffle_kernel(xp, x, seed, seed2):
    if x.ndim == 0 or x.shape[0] <= 1:
        return x.copy()
    perm = Sampler(xp, _op_stream(xp, "RandomShuffle", _dt.int64, seed, seed2)).permutation(
        x.shape[0])
    return xp.take(x, perm, axis=0)


# Not differentiable, as in TensorFlow (RandomShuffle has no registered gradient).
SHUFFLE = register_op("RandomShuffle", _shuffle_kernel,
                      lambda x, seed, seed2: TensorSpec(x.shape, x.dtype), stateful=True,
                      dtypes=_dt.ALL, differentiable=False)


# -----------------------------------------------------------------------------------------------
# Public functions
# -----------------------------------------------------------------------------------------------

def normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None):
    """≈ `tf.random.normal`: samples of N(mean, stddev**2); `mean` and `stddev` broadcast with
    the samples (see the module doc for `seed`)."""
    dtype = float_dtype("RandomStandardNormal", dtype)
    sample_shape = shape_arg("RandomStandardNormal", shape)
    seed, seed2 = get_seed(seed, NORMAL.name)
    rnd = run_op(NORMAL, sample_shape, {"dtype": dtype, "seed": seed, "seed2": seed2})
    return scale_shift(NORMAL.name, rnd, dtype, mean, stddev)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None):
    """≈ `tf.random.truncated_normal`: normal samples more than 2 standard deviations from the
    mean are dropped and drawn again."""
    dtype = float_dtype("TruncatedNormal", dtype)
    sample_shape = shape_arg("TruncatedNormal", shape)
    seed, seed2 = get_seed(seed, TRUNCATED_NORMAL.name)
    rnd = run_op(TRUNCATED_NORMAL, sample_shape, {"dtype": dtype, "seed": seed, "seed2": seed2})
    return scale_shift(TRUNCATED_NORMAL.name, rnd, dtype, mean, stddev)


def _host_bound(value, dtype, what):
    """An integer bound of `RandomUniformInt`, which its kernel reads on the host: a Python or
    numpy number becomes a tensor of the CPU, so that on a GPU the kernel never reads it back
    from the device (a wait for the GPU per draw)."""
    if is_host_number(value):
        with _context.device("CPU:0"):
            return convert_arg(UNIFORM_INT.name, value, dtype, what)
    return convert_arg(UNIFORM_INT.name, value, dtype, what)


def uniform(shape, minval=0, maxval=None, dtype=_dt.float32, seed=None, name=None):
    """≈ `tf.random.uniform`: samples in [minval, maxval); `maxval` defaults to 1 for floats and
    is required for integers (whose `minval`/`maxval` must be scalars with minval < maxval).
    Float bounds broadcast with the samples, as in TensorFlow."""
    dtype, maxval = uniform_dtype("RandomUniform", dtype, minval, maxval)
    sample_shape = shape_arg("RandomUniform", shape)
    seed, seed2 = get_seed(seed, UNIFORM.name)
    attrs = {"dtype": dtype, "seed": seed, "seed2": seed2}
    if dtype.is_integer:
        lo = _host_bound(minval, dtype, "minval")
        hi = _host_bound(maxval, dtype, "maxval")
        return run_op(UNIFORM_INT, sample_shape, attrs, (lo, hi))
    rnd = run_op(UNIFORM, sample_shape, attrs)
    return stretch(UNIFORM.name, rnd, dtype, minval, maxval)


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

