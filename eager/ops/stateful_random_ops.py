"""`tf.random.Generator`: random numbers from an explicit Philox state (counter and key).

The state is a plain Python object (`_GeneratorState`), not a variable: Generator ops receive
it as an attr (hashable by identity), lock it, draw from a numpy Philox bit generator rebuilt
from it and store the advanced counter back, so a traced graph that runs a Generator op twice
draws twice. Samples come from the sampler the seeded ops in `random_ops` use (`random_sampling`:
numpy on the CPU, cupy seeded from the Philox stream on a GPU), so values differ from
TensorFlow's; the API and the reproducibility guarantees are TensorFlow's.
"""

from __future__ import annotations

import enum
import threading

import numpy as np

from ..core import context as _context
from ..base import dtypes as _dt
from ..tensor import Tensor
from ..core.tensor_conversion import convert_to_tensor
from .random_sampling import (UNIFORM_INT_DTYPES, as_dtype, as_int, convert_arg, draw,
                              float_dtype, kernel_output_shape, make_infer, run_op, scale_shift,
                              shape_arg, stretch, uniform_dtype)
from ..core.registry import register_op

__all__ = ["Generator", "Algorithm", "get_global_generator", "set_global_generator"]

_MASK64 = 2 ** 64 - 1


def _generator_op(op_name, kind):
    def kernel(xp, *inputs, shape, dtype, state):
        shape, bounds = kernel_output_shape(op_name, inputs, shape)
        with state.lock:
            bitgen = state.bit_generator()
            out = draw(op_name, xp, bitgen, kind, shape, dtype, bounds)
            state.advance_to(bitgen)
        return out

    return register_op(op_name, kernel, make_infer(op_name, kind), stateful=True,
                       differentiable=False)


GEN_NORMAL = _generator_op("StatefulStandardNormalV2", "normal")
GEN_UNIFORM = _generator_op("StatefulUniform", "uniform")
GEN_UNIFORM_INT = _generator_op("StatefulUniformInt", "int")
GEN_TRUNCATED_NORMAL = _generator_op("StatefulTruncatedNormal", "truncated")
GEN_FULL_INT = _generator_op("StatefulUniformFullInt", "full_int")


# -----------------------------------------------------------------------------------------------

class Algorithm(enum.Enum):
    """≈ `tf.random.Algorithm`. Only Philox is implemented (AUTO_SELECT picks it)."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


_PHILOX = Algorithm.PHILOX.value


def _check_alg(alg):
    if isinstance(alg, Algorithm):
        alg = alg.value
    if isinstance(alg, str):
        alg = {"philox": 1, "threefry": 2, "auto_select": 3}.get(alg.lower(), alg)
    if alg is None or alg in (1, 3):
        return _PHILOX
    if alg == 2:
        raise NotImplementedError("Generator: the ThreeFry algorithm is not implemented; use "
                                  "'philox' (the default).")
    raise ValueError(f"Generator: unsupported algorithm {alg!r}; use 'philox'.")


def _words(values, what):
    """64-bit words from an int (a big one is cut into several), a list, array or tensor."""
    if isinstance(values, Tensor):
        values = values.numpy()
    if isinstance(values, (int, np.integer)) and not isinstance(values, (bool, np.bool_)):
        value = int(values)
        if value < 0:
            return [value & _MASK64]
        words = []
        while True:
            words.append(value & _MASK64)
            value >>= 64
            if not value:
                return words
    if isinstance(values, (list, tuple)):
        words = []
        for v in values:
            if isinstance(v, (list, tuple)) or not isinstance(v, (int, np.integer)) or \
                    isinstance(v, (bool, np.bool_)):
                raise TypeError(f"Generator: {what} must be a flat list of integers, got "
                                f"{values!r}.")
            words.append(int(v) & _MASK64)
        return words
    try:
        arr = np.asarray(values)
        if arr.dtype.kind not in "iu":
            raise TypeError
        return [int(v) & _MASK64 for v in arr.reshape(-1).tolist()]
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"Generator: {what} must be integers, got {values!r}.") from None


class _GeneratorState:
    """A Philox counter (two 64-bit words) and key (one word), as TensorFlow's state holds.
    Generator ops receive this object as an attr (hashable by identity) and advance it."""

    __slots__ = ("counter", "key", "lock", "__weakref__")

    def __init__(self, counter, key):
        self.counter = (counter[0] & _MASK64, counter[1] & _MASK64)
        self.key = key & _MASK64
        self.lock = threading.Lock()

    def bit_generator(self):
        return np.random.Philox(counter=[self.counter[0], self.counter[1], 0, 0],
                                key=[self.key, 0])

    def advance_to(self, bitgen):
        counter = bitgen.state["state"]["counter"]
        self.counter = (int(counter[0]), int(counter[1]))

    def skip(self, delta):
        value = ((self.counter[1] << 64) | self.counter[0]) + delta
        value %= 2 ** 128
        self.counter = (value & _MASK64, value >> 64)


def _state_from_seed(seed):
    words = [w for w in _words(seed, "seed")] or [0]
    key = int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0])
    return (0, 0), key


class Generator:
    """≈ `tf.random.Generator`: a random number generator with explicit Philox state.

    `Generator.from_seed(s)` always produces the same sequence; `split` gives independent
    generators; each call advances the state. How a seed becomes a state is unspecified (as in
    TensorFlow), and the sample values differ from TensorFlow's. The state is a plain Python
    object: `state` returns a snapshot tensor [counter_lo, counter_hi, key] (int64), not a
    variable.
    """

    def __init__(self, copy_from=None, state=None, alg=None):
        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("Generator: when copy_from is given, state and alg must be "
                                 "None.")
            if not isinstance(copy_from, Generator):
                raise TypeError(f"Generator: copy_from must be a Generator, got "
                                f"{type(copy_from).__name__}.")
            src = copy_from._settled_state()
            self._alg = copy_from._alg
            self._state = _GeneratorState(src.counter, src.key)
            return
        if state is None:
            raise ValueError("Generator: either copy_from or state must be given (or use "
                             "Generator.from_seed / from_non_deterministic_state).")
        self._alg = _check_alg(alg)
        self._state = _GeneratorState(*self._split_state(state))

    @staticmethod
    def _split_state(state):
        words = _words(state, "state")
        if len(words) != 3:
            raise ValueError(f"Generator: a Philox state has 3 int64 words, got {len(words)}.")
        return (words[0], words[1]), words[2]

    def _settled_state(self):
        """The state, once every queued op has run. Ops advance it when their kernel runs, which
        under async dispatch or on a GPU stream is later than the call; host-side reads and
        resets must not overtake them (TensorFlow keeps the state in a variable, whose reads
        are ordered like any op)."""
        _context.wait_for_pending_work()
        return self._state

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator whose state is derived from `seed` (an int or a list of ints)."""
        gen = cls(state=[0, 0, 0], alg=alg)
        gen.reset_from_seed(seed)
        return gen

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator seeded from the operating system's entropy."""
        key = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        return cls(state=[0, 0, key], alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        counter = _words(counter, "counter") + [0, 0]
        return cls(state=[counter[0], counter[1], _words(key, "key")[0]], alg=alg)

    # -- state -----------------------------------------------------------------------------------
    @property
    def state(self):
        s = self._settled_state()
        words = np.array([s.counter[0], s.counter[1], s.key], dtype=np.uint64).view(np.int64)
        return convert_to_tensor(words)

    @property
    def algorithm(self):
        return self._alg

    @property
    def key(self):
        return convert_to_tensor(np.array([self._settled_state().key],
                                          np.uint64).view(np.int64)[0])

    def reset(self, state):
        counter, key = self._split_state(state)
        with self._settled_state().lock:
            self._state.counter, self._state.key = counter, key

    def reset_from_seed(self, seed):
        counter, key = _state_from_seed(seed)
        with self._settled_state().lock:
            self._state.counter, self._state.key = counter, key

    def reset_from_key_counter(self, key, counter):
        counter = _words(counter, "counter") + [0, 0]
        self.reset([counter[0], counter[1], _words(key, "key")[0]])

    def skip(self, delta):
        """Advances the counter by `delta` (how far a draw advances it is unspecified)."""
        with self._settled_state().lock:
            self._state.skip(as_int("Generator.skip", delta))

    # -- sampling ----------------------------------------------------------------------------
    def _run(self, op, shape, dtype, extra=()):
        return run_op(op, shape_arg(op.name, shape), {"dtype": dtype, "state": self._state},
                      extra)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
        """≈ `Generator.normal`: samples of N(mean, stddev**2)."""
        dtype = float_dtype(GEN_NORMAL.name, dtype)
        return scale_shift(GEN_NORMAL.name, self._run(GEN_NORMAL, shape, dtype), dtype, mean,
                           stddev)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
        """≈ `Generator.truncated_normal`: normal samples within 2 standard deviations."""
        dtype = float_dtype(GEN_TRUNCATED_NORMAL.name, dtype)
        return scale_shift(GEN_TRUNCATED_NORMAL.name, self._run(GEN_TRUNCATED_NORMAL, shape,
                                                                dtype), dtype, mean, stddev)

    def uniform(self, shape, minval=0, maxval=None, dtype=_dt.float32, name=None):
        """≈ `Generator.uniform`: samples in [minval, maxval) (integers need maxval; with
        minval and maxval both None an integer dtype draws from its full range)."""
        dtype = as_dtype(GEN_UNIFORM.name, dtype)
        if dtype.is_integer and minval is None and maxval is None:
            return self.uniform_full_int(shape, dtype)
        dtype, maxval = uniform_dtype(GEN_UNIFORM.name, dtype, minval, maxval)
        if dtype.is_integer:
            lo = convert_arg(GEN_UNIFORM_INT.name, minval, dtype, "minval")
            hi = convert_arg(GEN_UNIFORM_INT.name, maxval, dtype, "maxval")
            return self._run(GEN_UNIFORM_INT, shape, dtype, (lo, hi))
        return stretch(GEN_UNIFORM.name, self._run(GEN_UNIFORM, shape, dtype), dtype, minval,
                       maxval)

    def uniform_full_int(self, shape, dtype=_dt.uint64, name=None):
        """≈ `Generator.uniform_full_int`: integers over the dtype's whole range."""
        dtype = as_dtype(GEN_FULL_INT.name, dtype)
        if dtype not in UNIFORM_INT_DTYPES:
            raise ValueError(f"{GEN_FULL_INT.name}: dtype must be int32, int64, uint32 or "
                             f"uint64, got {dtype.name}.")
        return self._run(GEN_FULL_INT, shape, dtype)

    def make_seeds(self, count=1):
        """≈ `Generator.make_seeds`: an int64 tensor of shape [2, count] of fresh seeds (for
        stateless ops, or for `split`)."""
        count = as_int("Generator.make_seeds", count)
        return self.uniform_full_int([2, count], dtype=_dt.int64)

    def split(self, count=1):
        """≈ `Generator.split`: `count` new generators, independent of this one and of each
        other (their keys are drawn from this generator, which advances)."""
        count = as_int("Generator.split", count)
        if count < 0:
            raise ValueError(f"Generator.split: count must be >= 0, got {count}.")
        keys = self.make_seeds(count).numpy()[0] if count else []
        return [Generator(state=[0, 0, int(k)], alg=self._alg) for k in keys]

    def __repr__(self):
        return f"<eager.random.Generator alg=philox key={self._state.key}>"


_global_generator = None
_global_generator_lock = threading.Lock()


def get_global_generator():
    """≈ `tf.random.get_global_generator`: created on first use from OS entropy."""
    global _global_generator
    with _global_generator_lock:
        if _global_generator is None:
            _global_generator = Generator.from_non_deterministic_state()
        return _global_generator


def set_global_generator(generator):
    """≈ `tf.random.set_global_generator`."""
    global _global_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator: expected a Generator, got "
                        f"{type(generator).__name__}.")
    with _global_generator_lock:
        _global_generator = generator
