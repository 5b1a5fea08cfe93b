"""What the seeded random ops (`random_ops`) and `Generator` (`stateful_random_ops`) share:
drawing samples from a numpy bit generator, and the shape, dtype and argument handling around
a draw.

A random op's kernel gets a bit generator (from its seed stream, or rebuilt from a Generator's
Philox state) and calls `draw`, the one place that knows numpy's and CuPy's random APIs. The
public functions of both modules check their arguments with the helpers here, run the op with
`run_op`, and scale or shift the unit samples as TensorFlow composes them (`scale_shift`,
`stretch`). How the bit generator is chosen is each caller's business.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..base import dtypes as _dt
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from ..core.dispatch import execute
from ..core.registry import op_error
from ..core.shapes import STRICT, check_bools_in_dims, known_elements, static_ints
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import Tensor
from . import math_ops as _math

#: The dtypes of normal, truncated-normal and float uniform samples.
FLOAT_DTYPES = frozenset({_dt.float16, _dt.float32, _dt.float64})
#: The integer dtypes uniform samples (bounded or over the full range) may have.
UNIFORM_INT_DTYPES = frozenset({_dt.int32, _dt.int64, _dt.uint32, _dt.uint64})
#: The dtypes a shape tensor may have.
SHAPE_DTYPES = frozenset({_dt.int32, _dt.int64})


def as_int(what, value):
    """`value` (a Python or numpy integer, or an integer scalar tensor) as a Python int; a
    TypeError naming `what` for anything else (bools included)."""
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral,
                                                                     np.integer)):
        raise TypeError(f"{what}: expected an integer, got {value!r}.")
    return int(value)


# -----------------------------------------------------------------------------------------------
# Drawing (the one place that knows numpy's and cupy's random APIs)
# -----------------------------------------------------------------------------------------------

class Sampler:
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


def draw(op_name, xp, bitgen, kind, shape, dtype, bounds):
    """An array of `shape` and `dtype` drawn from `bitgen` (advancing it) on `xp`'s device.
    `kind` is "normal", "truncated", "uniform" ([0, 1) for floats), "full_int" (the dtype's
    whole range) or "int" (integers in [bounds[0], bounds[1]), checked here because the bounds
    are tensors whose values the kernel sees first)."""
    sampler = Sampler(xp, bitgen)
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
# Shapes of a random op's output, when it runs and when it is traced
# -----------------------------------------------------------------------------------------------

def kernel_output_shape(op_name, inputs, shape):
    """The output shape: the `shape` attr, or (when it is None) the first input's values."""
    if shape is not None:
        return shape, inputs
    dims = tuple(int(d) for d in inputs[0].tolist())
    for d in dims:
        if d < 0:
            raise op_error(op_name, f"Dimension {d} must be >= 0 in shape {list(dims)}")
    return dims, inputs[1:]


def inferred_output_shape(op_name, inputs, shape):
    """What tracing and async dispatch know of the output shape, and the inputs after the shape
    tensor: the `shape` attr, or (when it is None) as much as the shape tensor tells: its length
    is the rank, and the sizes the trace knows are known (`core.shapes.known_elements`)."""
    if shape is not None:
        return TensorShape(shape), inputs
    s = inputs[0]
    if s.dtype not in SHAPE_DTYPES:
        raise op_error(op_name, f"shape must be an int32 or int64 tensor, got {s.dtype.name}")
    if s.shape.rank is None:
        return UNKNOWN_SHAPE, inputs[1:]
    if s.shape.rank != 1:
        raise op_error(op_name, f"shape must be a vector of {{int32,int64}}, got shape "
                                f"{list(s.shape)}")
    known = known_elements(s)
    if known is None:
        return UNKNOWN_SHAPE, inputs[1:]
    return TensorShape([d if d is not None and d >= 0 else None for d in known]), inputs[1:]


def make_infer(op_name, kind):
    """The `infer` of a random op of `kind` (see `draw`); an "int" op also checks that its
    minval and maxval inputs are scalars of the output dtype."""
    def infer(*inputs, shape, dtype, **_):
        out, rest = inferred_output_shape(op_name, inputs, shape)
        if kind == "int":
            for what, t in zip(("minval", "maxval"), rest):
                if t.shape.rank not in (None, 0):
                    raise op_error(op_name, f"{what} must be 0-D, got shape {list(t.shape)}")
                if t.dtype is not dtype:
                    raise op_error(op_name, f"{what} must be {dtype.name}, got {t.dtype.name}")
        return TensorSpec(out, dtype)
    return infer


# -----------------------------------------------------------------------------------------------
# Arguments of the public functions, and the ops around a draw
# -----------------------------------------------------------------------------------------------

def shape_arg(op_name, shape):
    """(static dims, None), or (None, shape tensor) for a shape only known when traced."""
    if shape is None:
        raise ValueError(f"{op_name}: shape must not be None.")
    if isinstance(shape, Tensor):
        if shape.dtype not in SHAPE_DTYPES:
            raise TypeError(f"{op_name}: shape must be an int32 or int64 tensor, got "
                            f"{shape.dtype.name}.")
        if shape.is_symbolic:
            inferred_output_shape(op_name, (shape,), None)  # validates the rank
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
    check_bools_in_dims(op_name, shape, "shape", STRICT)
    dims = static_ints(op_name, shape, "shape")
    for d in dims:
        if d < 0:
            raise op_error(op_name, f"Dimension {d} must be >= 0 in shape {list(dims)}")
    return dims, None


def convert_arg(op_name, value, dtype, what):
    """convert_to_tensor with the op's name in its TypeError/ValueError."""
    try:
        return convert_to_tensor(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{op_name}: cannot use {what}={value!r} with dtype {dtype.name}: "
                        f"{exc}") from None


def as_dtype(what, dtype):
    """`eager.as_dtype`, with `what` in its TypeError."""
    try:
        return _dt.as_dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{what}: {exc}") from None


def float_dtype(what, dtype):
    """`dtype` as a DType, if it is one normal samples may have (a TypeError otherwise)."""
    dtype = as_dtype(what, dtype)
    if dtype not in FLOAT_DTYPES:
        raise TypeError(f"{what}: dtype must be float16, float32 or float64, got {dtype.name}.")
    return dtype


def run_op(op, shape, attrs, extra=()):
    """Runs the random op `op` for `shape` (what `shape_arg` returns): static dims become the
    `shape` attr, a shape tensor becomes the first input, before the `extra` inputs."""
    dims, dynamic = shape
    inputs = (dynamic, *extra) if dynamic is not None else tuple(extra)
    return execute(op, inputs, {"shape": dims, **attrs})


def scale_shift(op_name, rnd, dtype, mean, stddev):
    """rnd * stddev + mean, as TensorFlow composes it (skipped for the literal defaults)."""
    unit = type(stddev) in (int, float) and stddev == 1
    zero = type(mean) in (int, float) and mean == 0
    if unit and zero:
        return rnd
    mean = convert_arg(op_name, mean, dtype, "mean")
    stddev = convert_arg(op_name, stddev, dtype, "stddev")
    return _math.add(_math.multiply(rnd, stddev), mean)


def stretch(op_name, rnd, dtype, minval, maxval):
    """TensorFlow's float uniform: [0, 1) samples stretched to [minval, maxval)."""
    minval_is_zero = isinstance(minval, int) and minval == 0
    maxval_is_one = isinstance(maxval, int) and maxval == 1
    if minval_is_zero and maxval_is_one:
        return rnd
    minval = convert_arg(op_name, minval, dtype, "minval")
    maxval = convert_arg(op_name, maxval, dtype, "maxval")
    if minval_is_zero:
        return _math.multiply(rnd, maxval)
    return _math.add(_math.multiply(rnd, _math.subtract(maxval, minval)), minval)


def uniform_dtype(what, dtype, minval, maxval):
    """(dtype, maxval) for a uniform draw: the dtype checked, and maxval defaulting to 1 for
    floats (integers must give it)."""
    dtype = as_dtype(what, dtype)
    if dtype not in FLOAT_DTYPES | UNIFORM_INT_DTYPES:
        raise ValueError(f"{what}: argument `dtype` got invalid value {dtype.name}. Accepted "
                         "dtypes are float16, float32, float64, int32, int64, uint32, uint64.")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"{what}: must specify maxval for integer dtype {dtype.name}.")
        maxval = 1
    return dtype, maxval

