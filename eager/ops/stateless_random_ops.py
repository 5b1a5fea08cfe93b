"""Stateless random numbers (`eager.random.stateless_*`, `split`, `fold_in`) and
`eager.random.categorical`.

A stateless op is a pure function of its `seed` (a shape-[2] int32/int64 tensor): the same
seed gives the same numbers, eagerly, traced, on every device. The numbers are TensorFlow's
(its CPU kernels'): `philox` reproduces TensorFlow's Philox4x32-10 stream, its seed scrambling
and its conversions, so uniform and integer samples match bit for bit and normals to float32
rounding. Kernels compute on the host and place the result on the op's device.

`categorical` is the seeded stateful op (TensorFlow's `Multinomial`): its draws follow the
seeding rules of `random_ops` (numpy's Philox, values differ from TensorFlow's), and it shares
TensorFlow's sampling rule with `stateless_categorical` (`philox.categorical`).
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.shapes import known_elements
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from . import array_ops
from . import philox
from .random_ops import _op_stream, get_seed
from .random_sampling import (FLOAT_DTYPES, UNIFORM_INT_DTYPES, as_dtype, as_int, float_dtype,
                              inferred_output_shape, kernel_output_shape, run_op, scale_shift,
                              shape_arg, stretch)

__all__ = ["stateless_uniform", "stateless_normal", "stateless_truncated_normal",
           "stateless_categorical", "categorical", "split", "fold_in"]

_SEED_DTYPES = frozenset({_dt.int32, _dt.int64})


def _seed_words(op_name, seed):
    """(key, counter) from a seed array as a kernel sees it."""
    vals = [int(v) for v in seed.tolist()] if seed.ndim == 1 else []
    if len(vals) != 2:
        raise op_error(op_name, f"seed must have shape [2], not {list(seed.shape)}")
    return philox.key_counter(*vals)


def _check_seed(op_name, seed):
    if seed.dtype not in _SEED_DTYPES:
        raise op_error(op_name, f"seed must be int32 or int64, got {seed.dtype.name}")
    if seed.shape.rank is not None and list(seed.shape) not in ([2], [None]):
        raise op_error(op_name, f"seed must have shape [2], not {list(seed.shape)}")


def _stateless_op(op_name, sample):
    """A stateless op whose kernel calls `sample(key, counter, n, np_dtype, *bounds)`. Inputs:
    [shape tensor when the shape is dynamic], seed, [minval, maxval]."""
    def kernel(xp, *inputs, shape, dtype):
        shape, rest = kernel_output_shape(op_name, inputs, shape)
        seed, bounds = rest[0], [b.item() for b in rest[1:]]
        key, counter = _seed_words(op_name, seed)
        if len(bounds) == 2 and bounds[0] >= bounds[1]:
            raise op_error(op_name, f"Need minval < maxval, got {bounds[0]} >= {bounds[1]}")
        n = int(np.prod(shape, dtype=np.int64))
        out = sample(key, counter, n, dtype.dtype, *bounds) if n else np.empty(0, dtype.dtype)
        return xp.asarray(out.reshape(shape))

    def infer(*inputs, shape, dtype):
        out, rest = inferred_output_shape(op_name, inputs, shape)
        _check_seed(op_name, rest[0])
        for what, t in zip(("minval", "maxval"), rest[1:]):
            if t.shape.rank not in (None, 0):
                raise op_error(op_name, f"{what} must be 0-D, got shape {list(t.shape)}")
        return TensorSpec(out, dtype)

    return register_op(op_name, kernel, infer, differentiable=False)


STATELESS_UNIFORM = _stateless_op("StatelessRandomUniformV2", philox.uniform)
STATELESS_NORMAL = _stateless_op("StatelessRandomNormalV2", philox.normal)
STATELESS_TRUNCATED_NORMAL = _stateless_op("StatelessTruncatedNormalV2", philox.truncated_normal)
STATELESS_FULL_INT = _stateless_op("StatelessRandomUniformFullIntV2", philox.full_int)
STATELESS_UNIFORM_INT = _stateless_op("StatelessRandomUniformIntV2", philox.bounded_int)


def _seed_arg(op_name, seed):
    try:
        seed = as_tensor(seed)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{op_name}: cannot use seed={seed!r}: {exc}") from None
    _check_seed(op_name, seed)
    return seed


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=_dt.float32, name=None,
                      alg="auto_select"):
    """≈ `tf.random.stateless_uniform`: uniform samples in [minval, maxval), a deterministic
    function of `seed` (shape [2]). Integer dtypes need both bounds, or neither for the full
    range (int32, int64, uint32, uint64)."""
    dtype = as_dtype("StatelessRandomUniformV2", dtype)
    if dtype.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError(f"For integer `dtype` argument {dtype!r}, argument `minval` and "
                             f"`maxval` must be both None or not None. Got `minval`={minval} "
                             f"and `maxval`={maxval}.")
        if dtype not in UNIFORM_INT_DTYPES:
            raise ValueError(f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes "
                             "are float16, float32, float64, int32, int64, uint32, uint64.")
        op = STATELESS_FULL_INT if minval is None else STATELESS_UNIFORM_INT
        seed = _seed_arg(op.name, seed)
        bounds = () if minval is None else (convert_to_tensor(minval, dtype=dtype),
                                            convert_to_tensor(maxval, dtype=dtype))
        return run_op(op, shape_arg(op.name, shape), {"dtype": dtype}, (seed, *bounds))
    if dtype not in FLOAT_DTYPES:
        raise ValueError(f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes are "
                         "float16, float32, float64, int32, int64, uint32, uint64.")
    seed = _seed_arg(STATELESS_UNIFORM.name, seed)
    rnd = run_op(STATELESS_UNIFORM, shape_arg(STATELESS_UNIFORM.name, shape), {"dtype": dtype},
                 (seed,))
    return stretch(STATELESS_UNIFORM.name, rnd, dtype, minval, 1 if maxval is None else maxval)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None,
                     alg="auto_select"):
    """≈ `tf.random.stateless_normal`: N(mean, stddev**2) samples, a function of `seed`."""
    dtype = float_dtype(STATELESS_NORMAL.name, dtype)
    seed = _seed_arg(STATELESS_NORMAL.name, seed)
    rnd = run_op(STATELESS_NORMAL, shape_arg(STATELESS_NORMAL.name, shape), {"dtype": dtype},
                 (seed,))
    return scale_shift(STATELESS_NORMAL.name, rnd, dtype, mean, stddev)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None,
                               alg="auto_select"):
    """≈ `tf.random.stateless_truncated_normal`: normal samples within 2 standard deviations of
    the mean (values beyond are dropped and drawn again), a function of `seed`."""
    op = STATELESS_TRUNCATED_NORMAL
    dtype = float_dtype(op.name, dtype)
    seed = _seed_arg(op.name, seed)
    rnd = run_op(op, shape_arg(op.name, shape), {"dtype": dtype}, (seed,))
    return scale_shift(op.name, rnd, dtype, mean, stddev)


def split(seed, num=2, alg="auto_select"):
    """≈ `tf.random.split`: `num` new seeds (shape [num, 2], the seed's dtype) derived from
    `seed`, for further stateless ops."""
    seed = _seed_arg("StatelessRandomUniformFullIntV2", seed)
    return stateless_uniform([as_int("split num", num), 2], seed, minval=None, maxval=None,
                             dtype=seed.dtype)


def fold_in(seed, data, alg="auto_select"):
    """≈ `tf.random.fold_in`: a new seed [f(seed), data] that mixes integer `data` (a step, a
    replica id) into `seed`."""
    seed = _seed_arg("StatelessRandomUniformFullIntV2", seed)
    data = as_tensor(data)
    first = stateless_uniform([], seed, minval=None, maxval=None, dtype=data.dtype)
    return array_ops.stack([first, data])


# -----------------------------------------------------------------------------------------------
# Categorical
# -----------------------------------------------------------------------------------------------

_LOGIT_DTYPES = frozenset({_dt.float16, _dt.float32, _dt.float64})
_INDEX_DTYPES = frozenset({_dt.int32, _dt.int64})


def _categorical_infer(op_name):
    def infer(logits, num_samples, *seed, output_dtype, **_):
        if logits.dtype not in _LOGIT_DTYPES:
            raise op_error(op_name, f"logits must be a float tensor, got {logits.dtype.name}")
        if logits.shape.rank not in (None, 2):
            raise op_error(op_name, f"logits should be a matrix, got shape "
                                    f"{list(logits.shape)}")
        if seed:
            _check_seed(op_name, seed[0])
        batch = logits.shape[0] if logits.shape.rank is not None else None
        n = known_elements(num_samples)
        n = n[0] if n else None
        if n is not None and n < 0:
            raise op_error(op_name, f"num_samples should be non-negative, got {n}")
        return TensorSpec([batch, n], output_dtype)
    return infer


def _check_categorical(op_name, logits, num_samples):
    if logits.ndim != 2:
        raise op_error(op_name, f"logits should be a matrix, got shape {list(logits.shape)}")
    n = int(num_samples)
    if n < 0:
        raise op_error(op_name, f"num_samples should be non-negative, got {n}")
    if logits.shape[1] == 0 and logits.shape[0] and n:
        raise op_error(op_name, "num_classes should be positive, got 0")
    return n


def _multinomial_kernel(xp, logits, num_samples, *, output_dtype, seed, seed2):
    n = _check_categorical("Multinomial", logits, num_samples)
    host = logits.get() if hasattr(logits, "get") else np.asarray(logits)
    batch = host.shape[0]
    gen = np.random.Generator(_op_stream(xp, "Multinomial", output_dtype, seed, seed2))
    u = gen.random((batch, n))
    return xp.asarray(philox.categorical_from_uniform(host, u).astype(output_dtype.dtype))


def _stateless_multinomial_kernel(xp, logits, num_samples, seed, *, output_dtype):
    n = _check_categorical("StatelessMultinomial", logits, num_samples)
    key, counter = _seed_words("StatelessMultinomial", seed)
    host = logits.get() if hasattr(logits, "get") else np.asarray(logits)
    return xp.asarray(philox.categorical(key, counter, host, n).astype(output_dtype.dtype))


MULTINOMIAL = register_op("Multinomial", _multinomial_kernel, _categorical_infer("Multinomial"),
                          stateful=True, differentiable=False)
STATELESS_MULTINOMIAL = register_op("StatelessMultinomial", _stateless_multinomial_kernel,
                                    _categorical_infer("StatelessMultinomial"),
                                    differentiable=False)


def _categorical_args(op_name, logits, num_samples, dtype):
    dtype = as_dtype(op_name, dtype or _dt.int64)
    if dtype not in _INDEX_DTYPES:
        raise ValueError(f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes are "
                         "(tf.int32, tf.int64).")
    try:
        logits = as_tensor(logits)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{op_name}: cannot use logits: {exc}") from None
    num_samples = convert_to_tensor(num_samples, dtype=_dt.int32)
    return logits, num_samples, dtype


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """≈ `tf.random.categorical`: `num_samples` class indices per row of `logits` ([batch,
    classes] unnormalised log-probabilities; -inf excludes a class), [batch, num_samples] of
    `dtype` (int64 by default). Seeded as `eager.random.uniform`."""
    logits, num_samples, dtype = _categorical_args("Multinomial", logits, num_samples, dtype)
    seed, seed2 = get_seed(seed, "Multinomial")
    return execute(MULTINOMIAL, (logits, num_samples),
                   {"output_dtype": dtype, "seed": seed, "seed2": seed2})


def stateless_categorical(logits, num_samples, seed, dtype=_dt.int64, name=None):
    """≈ `tf.random.stateless_categorical`: `categorical` as a function of `seed`, with
    TensorFlow's values."""
    logits, num_samples, dtype = _categorical_args("StatelessMultinomial", logits, num_samples,
                                                   dtype)
    seed = _seed_arg("StatelessMultinomial", seed)
    return execute(STATELESS_MULTINOMIAL, (logits, num_samples, seed), {"output_dtype": dtype})
