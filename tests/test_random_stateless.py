"""Stateless random ops, `categorical`, `split`/`fold_in` and TensorFlow's random initializers:
TensorFlow 2.21's values for the same seeds (goldens recorded from TF's CPU kernels), determinism
eagerly and traced, distribution moments, shapes, dtypes and TF's errors."""

import numpy as np
import pytest

import eager
from eager.errors import InvalidArgumentError

INF = float("inf")

# Recorded from TensorFlow 2.21 (CPU), e.g. tf.random.stateless_uniform([2, 3], seed=[1, 2]).
GOLD = {'uniform_f32_1_2': [[0.8440604209899902, 0.19204533100128174, 0.9962232112884521],
                     [0.16038739681243896, 0.27199018001556396, 0.6493459939956665]],
 'uniform_f32_neg': [0.9402140378952026,
                     0.5625103712081909,
                     0.019165396690368652,
                     0.5711572170257568,
                     0.08633315563201904],
 'uniform_f64': [0.33218130521983413, 0.33605759834170157, 0.9693234020558519],
 'uniform_f16': [0.1533203125, 0.064453125, 0.1220703125, 0.7099609375, 0.5869140625],
 'uniform_bounds': [1.1245678663253784, 2.5654454231262207, 3.4170069694519043],
 'uniform_i32': [15, 4, 15, 10],
 'uniform_i64': [-812025294691, -173573578627, -223153782183],
 'full_u32': [4018491549, 1478766658, 2520080509],
 'full_i64': [6351254438543708317, -1249974470052585347, 4715617131889132121],
 'normal_f32': [0.544110119342804,
                0.20738030970096588,
                0.0735643208026886,
                0.04643455147743225,
                -1.301589846611023,
                -0.9538565278053284,
                0.8417285680770874],
 'normal_f64': [2.6364199023094423,
                1.6178915239404135,
                2.1247232330470975,
                2.0047541980309758,
                2.389228840598357],
 'normal_f16': [2.46875, -0.51513671875, 1.2412109375, -0.457763671875, -0.05810546875],
 'trunc_f32': [0.544110119342804,
               0.20738030970096588,
               0.0735643208026886,
               0.04643455147743225,
               0.16820591688156128,
               -1.6850333213806152,
               0.24202857911586761,
               1.703450322151184,
               1.1060677766799927],
 'trunc_f64': [4.818519413856656,
               -1.2926508563575196,
               -0.06584660120213348,
               2.299928694857723,
               3.472179410789294],
 'cat': [[2, 2, 2, 0, 2, 0], [2, 1, 0, 1, 0, 0]],
 'cat2': [[1, 1, 0, 1, 1], [1, 1, 1, 1, 1]],
 'split': [[1105988140, 1738052849], [-335576002, 370444179], [10670227, -246211131]],
 'split64': [[7464880146280614444, 1591045637757961278],
             [-1057468755545501549, 2524363516007002203]],
 'fold_in': [1105988140, 7],
 'init_normal': [[3.1267015155702214, 0.8902997940094538], [1.488400172412554, 3.43525005079908]],
 'init_uniform': [8, 7, 2, 2],
 'init_uniform_f': [-0.030408715829253197, 0.04393452778458595, 0.0032275207340717316]}

R = eager.random
CASES = {
    "uniform_f32_1_2": lambda: R.stateless_uniform([2, 3], seed=[1, 2]),
    "uniform_f32_neg": lambda: R.stateless_uniform([5], seed=[-5, 2 ** 40]),
    "uniform_f64": lambda: R.stateless_uniform([3], seed=[7, 8], dtype=eager.float64),
    "uniform_f16": lambda: R.stateless_uniform([5], seed=[7, 8], dtype=eager.float16),
    "uniform_bounds": lambda: R.stateless_uniform([3], seed=[7, 8], minval=[1., 2., 3.],
                                                  maxval=4.),
    "uniform_i32": lambda: R.stateless_uniform([4], seed=[1, 2], minval=3, maxval=17,
                                               dtype=eager.int32),
    "uniform_i64": lambda: R.stateless_uniform([3], seed=[7, 8], minval=-2 ** 40, maxval=2 ** 40,
                                               dtype=eager.int64),
    "full_u32": lambda: R.stateless_uniform([3], seed=[7, 8], minval=None, maxval=None,
                                            dtype=eager.uint32),
    "full_i64": lambda: R.stateless_uniform([3], seed=[7, 8], minval=None, maxval=None,
                                            dtype=eager.int64),
    "normal_f32": lambda: R.stateless_normal([7], seed=[1, 2]),
    "normal_f64": lambda: R.stateless_normal([5], seed=[7, 8], dtype=eager.float64, mean=2.,
                                             stddev=0.5),
    "normal_f16": lambda: R.stateless_normal([5], seed=[7, 8], dtype=eager.float16),
    "trunc_f32": lambda: R.stateless_truncated_normal([9], seed=[1, 2]),
    "trunc_f64": lambda: R.stateless_truncated_normal([5], seed=[7, 8], dtype=eager.float64,
                                                      mean=1, stddev=3),
    "cat": lambda: R.stateless_categorical([[0., -INF, 1.], [1., 1., 1.]], 6, seed=[7, 8],
                                           dtype=eager.int32),
    "cat2": lambda: R.stateless_categorical(eager.math.log([[0.5, 0.5], [0.1, 0.9]]), 5,
                                            seed=[1, 2]),
    "split": lambda: R.split([1, 2], 3),
    "split64": lambda: R.split(eager.constant([1, 2], eager.int64)),
    "fold_in": lambda: R.fold_in([1, 2], 7),
    "init_normal": lambda: eager.random_normal_initializer(1., 2., seed=3)([2, 2], eager.float64),
    "init_uniform": lambda: eager.random_uniform_initializer(0, 10, seed=3)([4], eager.int32),
    "init_uniform_f": lambda: eager.random_uniform_initializer(seed=3)([3]),
}
DTYPES = {"uniform_f64": np.float64, "uniform_f16": np.float16, "uniform_i32": np.int32,
          "uniform_i64": np.int64, "full_u32": np.uint32, "full_i64": np.int64,
          "normal_f64": np.float64, "normal_f16": np.float16, "trunc_f64": np.float64,
          "cat": np.int32, "cat2": np.int64, "split": np.int32, "split64": np.int64,
          "fold_in": np.int32, "init_normal": np.float64, "init_uniform": np.int32}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tensorflow_values(name):
    out = CASES[name]().numpy()
    want = np.asarray(GOLD[name], dtype=DTYPES.get(name, np.float32))
    assert out.dtype == want.dtype and out.shape == want.shape
    if name in ("trunc_f32", "normal_f32"):
        # The same draws; TF's float32 sin/cos/log differ from numpy's in the last bits.
        np.testing.assert_allclose(out, want, rtol=1e-5)
    else:
        np.testing.assert_array_equal(out, want)


def test_same_seed_same_values_eager_and_traced():
    f = eager.function(lambda s: (R.stateless_normal([4, 3], seed=s),
                                  R.stateless_uniform([4], seed=s, minval=0, maxval=9,
                                                      dtype=eager.int64),
                                  R.stateless_categorical([[0., 1.]], 4, seed=s)))
    for seed in ([1, 2], [3, -4]):
        traced = f(eager.constant(seed))
        eager_ = (R.stateless_normal([4, 3], seed=seed),
                  R.stateless_uniform([4], seed=seed, minval=0, maxval=9, dtype=eager.int64),
                  R.stateless_categorical([[0., 1.]], 4, seed=seed))
        for a, b in zip(traced, eager_):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(R.stateless_normal([4], seed=[1, 2]).numpy(),
                              R.stateless_normal([4], seed=[1, 3]).numpy())


def test_dynamic_shape_when_traced():
    f = eager.function(lambda n: R.stateless_uniform(eager.stack([n, 2]), seed=[1, 2]))
    np.testing.assert_array_equal(f(eager.constant(3)).numpy(),
                                  R.stateless_uniform([3, 2], seed=[1, 2]).numpy())


def test_moments():
    u = R.stateless_uniform([200000], seed=[5, 6], dtype=eager.float64).numpy()
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    assert u.min() >= 0 and u.max() < 1
    z = R.stateless_normal([200000], seed=[5, 6]).numpy()
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    t = R.stateless_truncated_normal([100000], seed=[5, 6]).numpy()
    assert np.abs(t).max() < 2 and abs(t.std() - 0.8796) < 0.01
    c = R.stateless_categorical(eager.math.log([[0.2, 0.3, 0.5]]), 100000, seed=[5, 6]).numpy()
    np.testing.assert_allclose(np.bincount(c[0], minlength=3) / 1e5, [0.2, 0.3, 0.5], atol=0.01)


def test_categorical_stateful():
    set_ = eager.random.set_seed
    set_(4)
    a = R.categorical([[0., 1.], [2., -INF]], 50, seed=3)
    b = R.categorical([[0., 1.], [2., -INF]], 50, seed=3)
    set_(4)
    a2 = R.categorical([[0., 1.], [2., -INF]], 50, seed=3)
    np.testing.assert_array_equal(a.numpy(), a2.numpy())
    assert not np.array_equal(a.numpy(), b.numpy())
    assert a.dtype == eager.int64 and a.shape == (2, 50)
    assert (a.numpy()[1] == 0).all()  # -inf never drawn
    assert R.categorical([[0., 1.]], 3, dtype=eager.int32).dtype == eager.int32


def test_errors_are_tensorflows():
    with pytest.raises(InvalidArgumentError, match=r"seed must have shape \[2\], not \[3\]"):
        R.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(InvalidArgumentError, match="seed must be int32 or int64"):
        R.stateless_normal([2], seed=[1., 2.])
    with pytest.raises(ValueError, match="must be both None or not None"):
        R.stateless_uniform([2], seed=[1, 2], dtype=eager.int32)
    with pytest.raises(InvalidArgumentError, match="Need minval < maxval, got 5 >= 5"):
        R.stateless_uniform([2], seed=[1, 2], minval=5, maxval=5, dtype=eager.int32).numpy()
    with pytest.raises(InvalidArgumentError, match=r"logits should be a matrix, got shape \[2\]"):
        R.categorical([1., 2.], 3)
    with pytest.raises(InvalidArgumentError, match="num_samples should be non-negative, got -1"):
        R.stateless_categorical([[1., 2.]], -1, seed=[1, 2])
    with pytest.raises(ValueError, match=r"Accepted dtypes are \(tf.int32, tf.int64\)"):
        R.categorical([[1., 2.]], 3, dtype=eager.float32)
    with pytest.raises(ValueError, match="is expected to be floating point"):
        eager.random_normal_initializer(seed=3)([2], eager.int32)


def test_initializers_config_and_unseeded():
    init = eager.random_normal_initializer(1., 2., seed=3)
    assert init.get_config() == {"mean": 1.0, "stddev": 2.0, "seed": 3}
    again = type(init).from_config(init.get_config())
    np.testing.assert_array_equal(again([3]).numpy(), init([3]).numpy())
    unseeded = eager.random_uniform_initializer(-1., 1.)
    a, b = unseeded([100]).numpy(), unseeded([100]).numpy()
    assert not np.array_equal(a, b) and a.min() >= -1 and a.max() < 1
