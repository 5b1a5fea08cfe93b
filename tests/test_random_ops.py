"""Random ops: shapes and dtypes, statistics (fixed seeds, generous bounds), TensorFlow's seeding
rules, Generator, shuffle and dropout, and bad inputs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager
from eager.errors import InvalidArgumentError
from eager.ops import random_ops, stateful_random_ops
from eager.core.dispatch import execute
from eager.core.specs import TensorSpec
from tests.strategies import shapes

FLOATS = [eager.float16, eager.float32, eager.float64]
INTS = [eager.int32, eager.int64, eager.uint32, eager.uint64]


@pytest.fixture(autouse=True)
def _no_global_seed():
    eager.random.set_seed(None)
    yield
    eager.random.set_seed(None)


# -- shapes, dtypes, ranges ------------------------------------------------------------------

@given(shapes(max_dims=3), st.sampled_from(FLOATS), st.integers(0, 2 ** 31))
def test_float_ops_shape_dtype_range(shape, dtype, seed):
    for fn in (eager.random.normal, eager.random.truncated_normal, eager.random.uniform):
        out = fn(shape, dtype=dtype, seed=seed)
        assert out.shape == shape and out.dtype == dtype
        assert np.isfinite(out.numpy()).all()
    u = eager.random.uniform(shape, dtype=dtype, seed=seed).numpy()
    assert ((u >= 0) & (u < 1)).all()
    t = eager.random.truncated_normal(shape, dtype=dtype, seed=seed).numpy()
    assert (np.abs(t) <= 2).all()
    shifted = eager.random.uniform(shape, minval=-3.0, maxval=-1.0, dtype=dtype, seed=seed)
    assert ((shifted.numpy() >= -3) & (shifted.numpy() <= -1)).all()


@given(shapes(max_dims=3), st.sampled_from(INTS), st.integers(-100, 100),
       st.integers(1, 1000), st.integers(0, 2 ** 31))
def test_int_uniform_range(shape, dtype, lo, width, seed):
    if dtype.is_unsigned:
        lo = abs(lo)
    out = eager.random.uniform(shape, minval=lo, maxval=lo + width, dtype=dtype, seed=seed)
    assert out.shape == shape and out.dtype == dtype
    v = out.numpy()
    assert ((v >= lo) & (v < lo + width)).all()


def test_moments():
    n = 200_000
    x = eager.random.normal([n], mean=3.0, stddev=2.0, seed=1).numpy()
    assert abs(x.mean() - 3.0) < 0.05 and abs(x.std() - 2.0) < 0.05
    u = eager.random.uniform([n], minval=2.0, maxval=6.0, seed=2).numpy()
    assert abs(u.mean() - 4.0) < 0.05 and abs(u.var() - 16 / 12) < 0.05
    t = eager.random.truncated_normal([n], seed=3, dtype=eager.float64).numpy()
    # N(0, 1) truncated to (-2, 2) has variance 1 - 4 phi(2) / (Phi(2) - Phi(-2)) ~ 0.7737.
    assert abs(t.mean()) < 0.02 and abs(t.var() - 0.7737) < 0.02
    i = eager.random.uniform([n], 0, 10, dtype=eager.int64, seed=4).numpy()
    counts = np.bincount(i, minlength=10)
    assert counts.min() > n / 10 * 0.9 and counts.max() < n / 10 * 1.1
    h = eager.random.uniform([n], dtype=eager.float16, seed=5).numpy()
    assert h.max() < 1 and abs(h.astype(np.float64).mean() - 0.5) < 0.01


def test_mean_and_stddev_broadcast():
    out = eager.random.normal([1000, 2], mean=[0.0, 100.0], stddev=eager.constant([1.0, 0.0]),
                              seed=3)
    assert out.shape == (1000, 2)
    np.testing.assert_array_equal(out.numpy()[:, 1], 100.0)
    u = eager.random.uniform([3], minval=[0.0, 10.0, 20.0], maxval=[1.0, 11.0, 21.0], seed=1)
    assert (np.floor(u.numpy()) == [0, 10, 20]).all()


def test_independence_of_op_seeds():
    a = eager.random.normal([20_000], seed=1).numpy()
    b = eager.random.normal([20_000], seed=2).numpy()
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.05


def test_shape_as_tensor_or_numpy():
    assert eager.random.normal(eager.constant([2, 3])).shape == (2, 3)
    assert eager.random.uniform(np.array([4], np.int64)).shape == (4,)
    assert eager.random.normal(eager.TensorShape([1, 2])).shape == (1, 2)
    assert eager.random.normal([]).shape == ()


# -- seeding semantics ----------------------------------------------------------------------

def _program():
    return [eager.random.uniform([3]).numpy(), eager.random.normal([2]).numpy(),
            eager.random.uniform([3], seed=7).numpy(), eager.random.uniform([3], seed=7).numpy()]


def test_global_seed_repeats_the_program():
    eager.random.set_seed(1234)
    first = _program()
    eager.random.set_seed(1234)
    second = _program()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    # Within a run, calls without an op seed differ, and so do repeated calls with one.
    assert not np.array_equal(first[0], eager.random.uniform([3]).numpy())
    assert not np.array_equal(first[2], first[3])
    eager.random.set_seed(4321)
    assert not np.array_equal(first[0], _program()[0])


def test_op_seed_sequence_is_reproducible_and_reset_by_set_seed():
    a1, a2 = (eager.random.normal([4], seed=11).numpy() for _ in range(2))
    assert not np.array_equal(a1, a2)
    eager.random.set_seed(None)  # resets the streams: the sequence starts again
    b1, b2 = (eager.random.normal([4], seed=11).numpy() for _ in range(2))
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)


def test_op_seed_without_global_seed_uses_tf_default_global_seed():
    a = eager.random.uniform([5], seed=3).numpy()
    eager.random.set_seed(random_ops.DEFAULT_GRAPH_SEED)
    np.testing.assert_array_equal(a, eager.random.uniform([5], seed=3).numpy())


def test_no_seed_is_nondeterministic():
    assert random_ops.get_seed(None) == (0, 0)
    a, b = eager.random.normal([8]).numpy(), eager.random.normal([8]).numpy()
    assert not np.array_equal(a, b)


def test_get_seed_rules():
    eager.random.set_seed(0)
    assert random_ops.get_seed(0) == (0, 2 ** 31 - 1)  # (0, 0) would mean nondeterministic
    assert random_ops.get_seed(5) == (0, 5)
    assert random_ops.get_seed(2 ** 31 + 1) == (0, 2)
    eager.random.set_seed(None)
    assert random_ops.get_seed(9) == (87654321, 9)


def test_op_records_are_stateful_and_own_their_stream():
    assert random_ops.NORMAL.stateful and random_ops.UNIFORM.stateful
    assert not random_ops.NORMAL.differentiable
    attrs = {"shape": (3,), "dtype": eager.float32, "seed": 5, "seed2": 6}
    # The same record run twice (as a traced graph would) draws twice.
    first, second = execute(random_ops.NORMAL, (), attrs), execute(random_ops.NORMAL, (), attrs)
    assert not np.array_equal(first.numpy(), second.numpy())
    eager.random.set_seed(None)
    np.testing.assert_array_equal(execute(random_ops.NORMAL, (), attrs).numpy(), first.numpy())


def test_shape_known_only_at_run_time():
    spec = random_ops.UNIFORM.infer(TensorSpec([2], eager.int32), shape=None,
                                    dtype=eager.float32, seed=1, seed2=2)
    assert spec.shape.as_list() == [None, None] and spec.dtype == eager.float32
    assert random_ops.UNIFORM.infer(TensorSpec(None, eager.int64), shape=None,
                                    dtype=eager.float64, seed=1, seed2=2).shape.rank is None
    out = execute(random_ops.UNIFORM, (eager.constant([2, 5]),),
                  {"shape": None, "dtype": eager.float32, "seed": 1, "seed2": 2})
    assert out.shape == (2, 5)
    with pytest.raises(InvalidArgumentError, match="RandomUniform.*Dimension -1"):
        execute(random_ops.UNIFORM, (eager.constant([2, -1]),),
                {"shape": None, "dtype": eager.float32, "seed": 1, "seed2": 2})
    with pytest.raises(InvalidArgumentError, match="RandomUniform.*vector"):
        random_ops.UNIFORM.infer(TensorSpec([2, 2], eager.int32), shape=None,
                                 dtype=eager.float32, seed=1, seed2=2)


# -- shuffle --------------------------------------------------------------------------------

def test_shuffle():
    x = np.arange(50).reshape(25, 2)
    out = eager.random.shuffle(x, seed=4).numpy()
    assert not np.array_equal(out, x)
    np.testing.assert_array_equal(np.sort(out[:, 0]), x[:, 0])
    np.testing.assert_array_equal(out[:, 1], out[:, 0] + 1)  # rows move together
    eager.random.set_seed(None)
    np.testing.assert_array_equal(eager.random.shuffle(x, seed=4).numpy(), out)
    assert eager.random.shuffle(5).numpy() == 5
    assert eager.random.shuffle(np.zeros((0, 3))).shape == (0, 3)


# -- Generator ------------------------------------------------------------------------------

def test_generator_reproducible_and_advancing():
    g = eager.random.Generator.from_seed(42)
    a, b = g.normal([5]).numpy(), g.normal([5]).numpy()
    assert not np.array_equal(a, b)
    h = eager.random.Generator.from_seed(42)
    np.testing.assert_array_equal(h.normal([5]).numpy(), a)
    np.testing.assert_array_equal(h.normal([5]).numpy(), b)
    assert not np.array_equal(eager.random.Generator.from_seed(43).normal([5]).numpy(), a)
    g.reset_from_seed(42)
    np.testing.assert_array_equal(g.normal([5]).numpy(), a)
    # Unaffected by the global seed.
    eager.random.set_seed(1)
    np.testing.assert_array_equal(eager.random.Generator.from_seed(42).normal([5]).numpy(), a)


def test_generator_state_roundtrip_copy_and_skip():
    g = eager.random.Generator.from_seed([1, 2, 3])
    g.uniform([3])
    state = g.state
    assert state.dtype == eager.int64 and state.shape == (3,)
    c = eager.random.Generator(copy_from=g)
    s = eager.random.Generator.from_state(state, alg="philox")
    x = g.uniform([4]).numpy()
    np.testing.assert_array_equal(c.uniform([4]).numpy(), x)
    np.testing.assert_array_equal(s.uniform([4]).numpy(), x)
    s.reset(state)
    s.skip(10)
    assert not np.array_equal(s.uniform([4]).numpy(), x)
    assert not np.array_equal(g.state.numpy(), state.numpy())
    k = eager.random.Generator.from_key_counter(key=7, counter=[0, 0], alg=1)
    assert int(k.key) == 7 and k.algorithm == 1


def test_generator_split_is_independent_and_deterministic():
    g1, g2 = eager.random.Generator.from_seed(5).split(2)
    a, b = g1.normal([20_000]).numpy(), g2.normal([20_000]).numpy()
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.05
    h1, _ = eager.random.Generator.from_seed(5).split(2)
    np.testing.assert_array_equal(h1.normal([20_000]).numpy(), a)
    assert eager.random.Generator.from_seed(5).split(0) == []


def test_generator_distributions():
    g = eager.random.Generator.from_seed(0)
    n = 100_000
    x = g.normal([n], mean=1.0, stddev=3.0, dtype=eager.float64).numpy()
    assert abs(x.mean() - 1) < 0.1 and abs(x.std() - 3) < 0.1
    u = g.uniform([n], minval=-1.0, maxval=1.0).numpy()
    assert u.min() >= -1 and u.max() < 1 and abs(u.mean()) < 0.02
    t = g.truncated_normal([n], stddev=2.0).numpy()
    assert np.abs(t).max() <= 4
    i = g.uniform([n], minval=-5, maxval=5, dtype=eager.int32).numpy()
    assert i.min() == -5 and i.max() == 4 and i.dtype == np.int32
    full = g.uniform_full_int([n], dtype=eager.uint32).numpy()
    assert full.dtype == np.uint32 and full.max() > 2 ** 31 and full.min() < 2 ** 31
    assert g.uniform([3], minval=None, maxval=None, dtype=eager.int64).dtype == eager.int64
    seeds = g.make_seeds(3)
    assert seeds.shape == (2, 3) and seeds.dtype == eager.int64
    assert stateful_random_ops.GEN_NORMAL.stateful


def test_global_generator():
    g = eager.random.get_global_generator()
    assert g is eager.random.get_global_generator()
    mine = eager.random.Generator.from_seed(1)
    eager.random.set_global_generator(mine)
    try:
        assert eager.random.get_global_generator() is mine
    finally:
        eager.random.set_global_generator(g)
    nd = eager.random.Generator.from_non_deterministic_state()
    assert not np.array_equal(nd.normal([4]).numpy(), g.normal([4]).numpy())


def test_generator_bad_inputs():
    with pytest.raises(NotImplementedError, match="ThreeFry"):
        eager.random.Generator.from_seed(1, alg="threefry")
    with pytest.raises(ValueError, match="Generator.*algorithm"):
        eager.random.Generator.from_seed(1, alg="mersenne")
    with pytest.raises(ValueError, match="Generator"):
        eager.random.Generator()
    with pytest.raises(ValueError, match="Generator.*3 int64"):
        eager.random.Generator(state=[1, 2])
    with pytest.raises(TypeError, match="Generator"):
        eager.random.Generator.from_seed("seed")
    with pytest.raises(TypeError, match="Generator"):
        eager.random.Generator(copy_from=object())
    g = eager.random.Generator.from_seed(1)
    with pytest.raises(ValueError, match="StatefulUniform.*maxval"):
        g.uniform([2], dtype=eager.int32)
    with pytest.raises(InvalidArgumentError, match="StatefulUniformInt.*minval < maxval"):
        # (`.numpy()`: a device whose kernels run later reports the failure there)
        g.uniform([2], minval=3, maxval=3, dtype=eager.int64).numpy()
    with pytest.raises(TypeError, match="StatefulStandardNormalV2"):
        g.normal([2], dtype=eager.int32)
    with pytest.raises(ValueError, match="StatefulUniformFullInt"):
        g.uniform_full_int([2], dtype=eager.float32)
    with pytest.raises(InvalidArgumentError, match="StatefulUniform.*Dimension"):
        g.uniform([-2])


# -- dropout --------------------------------------------------------------------------------

def test_dropout_scales_kept_values():
    x = np.arange(1, 20_001, dtype=np.float32)
    out = eager.nn.dropout(x, 0.25, seed=1).numpy()
    kept = out != 0
    np.testing.assert_allclose(out[kept], x[kept] / 0.75, rtol=1e-6)
    assert abs(kept.mean() - 0.75) < 0.02
    t = eager.nn.dropout(x, eager.constant(0.25), seed=1).numpy()
    np.testing.assert_allclose(t[t != 0], x[t != 0] / 0.75, rtol=1e-6)


def test_dropout_rate_zero_returns_input_and_float16():
    x = eager.constant([1.0, 2.0])
    assert eager.nn.dropout(x, 0.0) is x
    h = eager.nn.dropout(np.ones(1000, np.float16), 0.5, seed=2)
    assert h.dtype == eager.float16 and set(np.unique(h.numpy())) <= {0.0, 2.0}


def test_dropout_noise_shape():
    x = np.ones((50, 4), np.float32)
    out = eager.nn.dropout(x, 0.5, noise_shape=[50, 1], seed=3).numpy()
    assert out.shape == (50, 4)
    assert (out == out[:, :1]).all()  # one decision per row
    assert 0 < (out[:, 0] == 0).sum() < 50
    filled = eager.nn.dropout(x, 0.5, noise_shape=[None, 1], seed=3).numpy()
    assert (filled == filled[:, :1]).all()
    same = eager.nn.dropout(x, 0.5, noise_shape=eager.constant([1, 4]), seed=3).numpy()
    assert (same == same[:1]).all()


def test_dropout_reproducible_with_global_seed():
    eager.random.set_seed(9)
    a = eager.nn.dropout(np.ones(100, np.float32), 0.5).numpy()
    eager.random.set_seed(9)
    np.testing.assert_array_equal(eager.nn.dropout(np.ones(100, np.float32), 0.5).numpy(), a)


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5])
def test_dropout_bad_rate(rate):
    with pytest.raises(ValueError, match="Dropout.*rate"):
        eager.nn.dropout([1.0], rate)


def test_dropout_bad_inputs():
    with pytest.raises(ValueError, match="Dropout.*floating"):
        eager.nn.dropout([1, 2], 0.5)
    with pytest.raises(ValueError, match="Dropout.*rate"):
        eager.nn.dropout([1.0], "half")
    with pytest.raises(ValueError, match="Dropout.*scalar"):
        eager.nn.dropout([1.0], eager.constant([0.5]))
    with pytest.raises(ValueError, match="Dropout.*rate.dtype"):
        eager.nn.dropout([1.0], eager.constant(0.5, eager.float64))
    with pytest.raises(InvalidArgumentError, match="Dropout.*noise_shape"):
        eager.nn.dropout(np.ones((3, 4), np.float32), 0.5, noise_shape=[3, 2])
    with pytest.raises(InvalidArgumentError, match="Dropout.*noise_shape"):
        eager.nn.dropout(np.ones((3, 4), np.float32), 0.5, noise_shape=[2, 3, 4])
    with pytest.raises(TypeError, match="Dropout.*noise_shape"):
        eager.nn.dropout(np.ones((3,), np.float32), 0.5, noise_shape=3)
    with pytest.raises(TypeError, match="Dropout"):
        eager.nn.dropout(np.ones((3,), np.float32), 0.5, noise_shape=["a"])
    for junk in (object(), "str", None):
        with pytest.raises((TypeError, ValueError, InvalidArgumentError),
                           match="Dropout"):
            eager.nn.dropout(junk, 0.5)
    for junk in (object(), None):  # (a string is a tensor; TF shuffles a scalar as it is)
        with pytest.raises((TypeError, ValueError), match="RandomShuffle"):
            eager.random.shuffle(junk)


# -- bad inputs -----------------------------------------------------------------------------

@pytest.mark.parametrize("fn,name", [(eager.random.normal, "RandomStandardNormal"),
                                     (eager.random.uniform, "RandomUniform"),
                                     (eager.random.truncated_normal, "TruncatedNormal")])
def test_bad_shapes(fn, name):
    for junk in (object(), "str", None, 2.5, {"a": 1}):
        with pytest.raises((TypeError, ValueError), match=name):
            fn(junk)
    with pytest.raises(InvalidArgumentError, match=name):  # TF 2.21: attr T rejects float
        fn([2.5])
    with pytest.raises(InvalidArgumentError, match=f"{name}.*Dimension -2"):
        fn([3, -2])
    with pytest.raises(InvalidArgumentError, match=f"{name}.*vector"):
        fn(3)
    with pytest.raises(TypeError, match=name):
        fn(eager.constant([2.0]))
    with pytest.raises(ValueError, match=name):
        fn(eager.TensorShape([None, 2]))
    with pytest.raises(InvalidArgumentError, match=f"{name}.*vector"):
        fn(np.ones((2, 2), np.int32))
    with pytest.raises(TypeError, match=name):
        fn([2], dtype="not a dtype")


def test_bad_dtypes_and_bounds():
    with pytest.raises(TypeError, match="RandomStandardNormal.*int32"):
        eager.random.normal([2], dtype=eager.int32)
    with pytest.raises(TypeError, match="TruncatedNormal"):
        eager.random.truncated_normal([2], dtype=eager.complex64)
    for dtype in (eager.bool, eager.complex64, eager.int8):
        with pytest.raises(ValueError, match="RandomUniform.*dtype"):
            eager.random.uniform([2], maxval=2, dtype=dtype)
    with pytest.raises(ValueError, match="RandomUniform.*maxval"):
        eager.random.uniform([2], dtype=eager.int32)
    with pytest.raises(InvalidArgumentError, match="RandomUniformInt.*minval < maxval"):
        # (`.numpy()`: a device whose kernels run later reports the failure there)
        eager.random.uniform([2], minval=5, maxval=2, dtype=eager.int32).numpy()
    with pytest.raises(InvalidArgumentError, match="RandomUniformInt.*0-D"):
        eager.random.uniform([2], minval=[0, 1], maxval=5, dtype=eager.int32)
    with pytest.raises(TypeError, match="RandomUniformInt.*minval"):
        eager.random.uniform([2], minval=0.5, maxval=5, dtype=eager.int32)
    with pytest.raises(ValueError, match="RandomStandardNormal.*mean"):
        eager.random.normal([2], mean=eager.constant(1.0, eager.float64))
    with pytest.raises(TypeError, match="RandomStandardNormal seed.*integer"):
        eager.random.normal([2], seed="x")
    with pytest.raises(TypeError, match="RandomShuffle seed"):
        eager.random.shuffle([1, 2], seed=1.5)
    with pytest.raises(TypeError, match="set_seed"):
        eager.random.set_seed(1.5)
    with pytest.raises(TypeError, match="set_seed"):
        eager.random.set_seed(object())
