"""TensorFlow API functions made of other ops (`eager.ops.composite_ops`): values against numpy
(hypothesis), gradients against finite differences (first and second order), and TensorFlow's
edge cases (zero norms, infinite norms, None entries, unselected branches that overflow)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager as tf
from gradcheck import check_gradient, check_second_order
from strategies import arrays, shapes

FLOATS = st.floats(-3.0, 3.0)


def _draw_tensor(data):
    """(shape, numpy array, tensor): a float64 tensor of 1 to 3 non-empty dimensions."""
    shape = data.draw(shapes(min_dims=1, max_dims=3, min_side=1))
    x_np = data.draw(arrays(np.float64, shape, FLOATS))
    return shape, x_np, tf.constant(x_np)


@settings(max_examples=30)
@given(data=st.data())
def test_values_match_numpy(data):
    shape, x_np, x = _draw_tensor(data)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    np.testing.assert_allclose(tf.math.add_n([x, x * 2.0, x]).numpy(), 4 * x_np)
    np.testing.assert_allclose(tf.nn.leaky_relu(x, 0.3).numpy(), np.where(x_np > 0, x_np,
                                                                          0.3 * x_np))
    np.testing.assert_allclose(tf.nn.elu(x).numpy(), np.where(x_np > 0, x_np, np.expm1(x_np)),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(tf.nn.l2_loss(x).numpy(), np.sum(x_np ** 2) / 2)
    mean, variance = tf.nn.moments(x, [axis])
    np.testing.assert_allclose(mean.numpy(), x_np.mean(axis), atol=1e-12)
    np.testing.assert_allclose(variance.numpy(), x_np.var(axis), atol=1e-12)
    np.testing.assert_allclose(tf.math.reduce_variance(x, axis, keepdims=True).numpy(),
                               x_np.var(axis, keepdims=True), atol=1e-12)
    np.testing.assert_allclose(tf.math.reduce_std(x).numpy(), x_np.std(), atol=1e-12)
    norm = np.sqrt(np.sum(x_np ** 2, axis, keepdims=True))
    np.testing.assert_allclose(tf.math.l2_normalize(x, axis).numpy(),
                               x_np / np.maximum(norm, 1e-6), atol=1e-12)
    total = np.sqrt(np.sum(x_np ** 2))
    np.testing.assert_allclose(tf.clip_by_norm(x, 1.5).numpy(),
                               x_np * 1.5 / max(total, 1.5), atol=1e-12)
    np.testing.assert_allclose(tf.math.softplus(x).numpy(), np.logaddexp(0, x_np), rtol=1e-12)
    np.testing.assert_allclose(tf.math.log_sigmoid(x).numpy(), -np.logaddexp(0, -x_np),
                               rtol=1e-12)
    np.testing.assert_allclose(tf.nn.silu(x).numpy(), x_np / (1 + np.exp(-x_np)), rtol=1e-12)
    np.testing.assert_array_equal(tf.nn.relu6(x * 3.0).numpy(), np.clip(x_np * 3.0, 0, 6))
    np.testing.assert_allclose(tf.math.squared_difference(x, 0.5).numpy(), (x_np - 0.5) ** 2)
    np.testing.assert_allclose(tf.math.divide_no_nan(x, x).numpy(),
                               np.where(x_np == 0, 0.0, 1.0))
    bias = data.draw(arrays(np.float64, (shape[-1],), FLOATS))
    np.testing.assert_allclose(tf.nn.bias_add(tf.expand_dims(x, 0), bias).numpy(),
                               x_np[None] + bias)


@pytest.mark.parametrize("name,fn,make", [
    ("add_n", lambda a, b: tf.math.add_n([a, b, a * b]), lambda r: [r(2, 3), r(2, 3)]),
    ("bias_add", lambda a, b: tf.nn.bias_add(a, b), lambda r: [r(2, 3), r(3)]),
    ("bias_add NCHW", lambda a, b: tf.nn.bias_add(a, b, data_format="NCHW"),
     lambda r: [r(2, 3, 2, 2), r(3)]),
    ("leaky_relu", lambda a: tf.nn.leaky_relu(a, 0.1), lambda r: [r(3, 4, away=True)]),
    ("elu", tf.nn.elu, lambda r: [r(3, 4, away=True)]),
    ("l2_loss", tf.nn.l2_loss, lambda r: [r(3, 2)]),
    ("moments", lambda a: tf.nn.moments(a, [0, 2]), lambda r: [r(2, 3, 2)]),
    ("reduce_variance", lambda a: tf.math.reduce_variance(a, 1), lambda r: [r(3, 4)]),
    ("reduce_std", lambda a: tf.math.reduce_std(a, 0), lambda r: [r(3, 4)]),
    ("clip_by_norm clipped", lambda a: tf.clip_by_norm(a, 0.5, axes=[1]), lambda r: [r(2, 3)]),
    ("clip_by_norm unclipped", lambda a: tf.clip_by_norm(a, 50.0), lambda r: [r(2, 3)]),
    ("clip_by_global_norm", lambda a, b: tf.clip_by_global_norm([a, b], 0.7)[0],
     lambda r: [r(2, 2), r(3)]),
    ("global_norm", lambda a, b: tf.linalg.global_norm([a, b]), lambda r: [r(2, 2), r(3)]),
    ("l2_normalize", lambda a: tf.math.l2_normalize(a, 1), lambda r: [r(3, 4)]),
    ("embedding_lookup", lambda p: tf.nn.embedding_lookup(p, [2, 0, 2]), lambda r: [r(3, 2)]),
    ("softplus", tf.math.softplus, lambda r: [r(3, 4)]),
    ("log_sigmoid", tf.math.log_sigmoid, lambda r: [r(3, 4)]),
    ("silu", lambda a: tf.nn.swish(a), lambda r: [r(3, 4)]),
    ("relu6", lambda a: tf.nn.relu6(a * 4.0), lambda r: [r(3, 4, away=True)]),
    ("squared_difference", tf.math.squared_difference, lambda r: [r(2, 3), r(3)]),
    ("divide_no_nan", tf.math.divide_no_nan, lambda r: [r(2, 3), r(2, 3, away=True)]),
    ("boolean_mask", lambda a: tf.boolean_mask(a, tf.constant([[True, False, True],
                                                               [False, True, True]])),
     lambda r: [r(2, 3, 2)]),
    ("boolean_mask axis", lambda a: tf.boolean_mask(a, tf.constant([True, False, True]), axis=1),
     lambda r: [r(2, 3)]),
    ("reverse", lambda a: tf.reverse(a, [0, -1]), lambda r: [r(2, 3)]),
    ("roll", lambda a: tf.roll(a, [1, -2, 4], [0, 1, 0]), lambda r: [r(3, 4)]),
    ("linspace", lambda a, b: tf.linspace(a, b, 4), lambda r: [r(), r()]),
    ("batch_normalization", lambda x, mu, var, beta, gamma: tf.nn.batch_normalization(
        x, mu, var * var + 0.5, beta, gamma, 1e-3),
     lambda r: [r(4, 3), r(3), r(3), r(3), r(3)]),
    ("reduce_euclidean_norm", lambda a: tf.math.reduce_euclidean_norm(a, 1),
     lambda r: [r(3, 4, away=True)]),
])
def test_gradients_match_finite_differences(name, fn, make):
    rng = np.random.default_rng(len(name))

    def rand(*shape, away=False):
        values = rng.uniform(-2.0, 2.0, shape)
        return np.where(np.abs(values) < 0.2, 0.5, values) if away else values

    check_gradient(fn, make(rand), rtol=1e-5, atol=1e-7)
    # Second order: not for the piecewise linear and the gather, and not for moments, whose
    # variance stops the gradient at the mean as TensorFlow's does: exact first derivatives
    # (the deviations sum to zero), but not the true second ones.
    if name not in ("embedding_lookup", "leaky_relu", "moments", "relu6", "boolean_mask",
                    "boolean_mask axis", "reverse", "roll", "linspace"):  # linear or gathers
        check_second_order(fn, make(rand))


def test_unselected_branches_and_zero_norms_keep_gradients_finite():
    """TF's formulations: elu's exp branch never sees a large x, clip_by_norm's sqrt never sees
    a zero sum; leaky_relu's gradient at 0 is alpha and elu's is 1, as TensorFlow's kernels."""
    x = tf.constant([1000.0, 0.0, -1000.0], tf.float64)
    zeros = tf.zeros([3], tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, zeros])
        elu = tf.reduce_sum(tf.nn.elu(x))
        leaky = tf.reduce_sum(tf.nn.leaky_relu(x, 0.25))
        clipped = tf.reduce_sum(tf.clip_by_norm(zeros, 1.0))
    np.testing.assert_array_equal(tape.gradient(elu, x).numpy(), [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(tape.gradient(leaky, x).numpy(), [1.0, 0.25, 0.25])
    np.testing.assert_array_equal(tape.gradient(clipped, zeros).numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(tf.clip_by_norm(zeros, 1.0).numpy(), [0.0, 0.0, 0.0])


def test_activation_edges_follow_tensorflow():
    """softplus' and log_sigmoid's gradients are sigmoids everywhere (0.5 at 0) and stay finite
    at +-1000; relu6's gradient is 1 strictly inside (0, 6) and 0 at both ends; divide_no_nan's
    gradient is 0 where the divisor is 0; the is_* predicates as TensorFlow's."""
    x = tf.constant([-1000.0, 0.0, 6.0, 1000.0], tf.float64)
    y = tf.constant([0.0, 2.0, 0.0, 4.0], tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        softplus = tf.reduce_sum(tf.math.softplus(x))
        log_sigmoid = tf.reduce_sum(tf.math.log_sigmoid(x))
        relu6 = tf.reduce_sum(tf.nn.relu6(x))
        quotient = tf.reduce_sum(tf.math.divide_no_nan(x, y))
    np.testing.assert_allclose(tape.gradient(softplus, x).numpy(), [0.0, 0.5, 1 / (1 + np.exp(-6)),
                                                                    1.0])
    np.testing.assert_allclose(tape.gradient(log_sigmoid, x).numpy(),
                               [1.0, 0.5, 1 / (1 + np.exp(6)), 0.0], atol=1e-300)
    np.testing.assert_array_equal(tape.gradient(relu6, x).numpy(), [0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(tape.gradient(quotient, x).numpy(), [0.0, 0.5, 0.0, 0.25])
    assert np.isfinite(tape.gradient(quotient, y).numpy()).all()
    values = tf.constant([np.nan, -np.inf, 1.0, np.inf])
    np.testing.assert_array_equal(tf.math.is_nan(values).numpy(), [True, False, False, False])
    np.testing.assert_array_equal(tf.math.is_inf(values).numpy(), [False, True, False, True])
    np.testing.assert_array_equal(tf.math.is_finite(values).numpy(), [False, False, True, False])
    assert tf.nn.relu6(tf.constant([7, -1])).numpy().tolist() == [6.0, 0.0]


@settings(max_examples=25)
@given(data=st.data())
def test_array_functions_match_numpy(data):
    shape, x_np, x = _draw_tensor(data)
    mask_np = data.draw(arrays(np.bool_, shape[:1]))
    np.testing.assert_array_equal(tf.boolean_mask(x, mask_np).numpy(), x_np[mask_np])
    full_mask = x_np > 0
    np.testing.assert_array_equal(tf.boolean_mask(x, full_mask).numpy(), x_np[full_mask])
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, min_size=1))
    np.testing.assert_array_equal(tf.reverse(x, axes).numpy(), np.flip(x_np, axes))
    shifts = data.draw(st.lists(st.integers(-7, 7), min_size=len(axes), max_size=len(axes)))
    np.testing.assert_array_equal(tf.roll(x, shifts, axes).numpy(),
                                  np.roll(x_np, shifts, axes))
    num = data.draw(st.integers(1, 6))
    np.testing.assert_allclose(tf.linspace(-1.5, 2.0, num).numpy(),
                               np.linspace(-1.5, 2.0, num, dtype=np.float32), rtol=1e-6)
    lengths = data.draw(arrays(np.int32, shape[:1], st.integers(0, 5)))
    np.testing.assert_array_equal(tf.sequence_mask(lengths, 5).numpy(),
                                  np.arange(5) < lengths[:, None])
    np.testing.assert_array_equal(tf.math.count_nonzero(tf.constant(full_mask)).numpy(),
                                  np.count_nonzero(full_mask))
    vectors = [np.arange(n, dtype=np.float32) for n in shape]
    for indexing in ("xy", "ij"):
        for got, want in zip(tf.meshgrid(*vectors, indexing=indexing),
                             np.meshgrid(*vectors, indexing=indexing)):
            np.testing.assert_array_equal(got.numpy(), want)


def test_clip_by_global_norm_as_tensorflow():
    a = tf.constant([3.0, 4.0])
    sparse = tf.IndexedSlices(tf.constant([[0.0, 12.0]]), tf.constant([1]), tf.constant([2, 2]))
    clipped, norm = tf.clip_by_global_norm([a, None, sparse], 6.5)
    assert float(norm) == pytest.approx(13.0)
    assert clipped[1] is None
    np.testing.assert_allclose(clipped[0].numpy(), [1.5, 2.0])
    assert isinstance(clipped[2], tf.IndexedSlices)
    np.testing.assert_allclose(clipped[2].values.numpy(), [[0.0, 6.0]])
    same, _ = tf.clip_by_global_norm([a], 100.0)  # below the clip norm: unchanged
    np.testing.assert_allclose(same[0].numpy(), [3.0, 4.0])
    nan, norm = tf.clip_by_global_norm([tf.constant([np.inf, 1.0])], 1.0)
    assert np.isinf(float(norm)) and np.isnan(nan[0].numpy()).all()
    with pytest.raises(TypeError, match="sequence"):
        tf.clip_by_global_norm(a, 1.0)


def test_shapes_options_and_errors():
    x = tf.constant(np.ones((2, 3, 4), np.float16))
    mean, variance = tf.nn.moments(x, [1], keepdims=True)
    assert mean.dtype == tf.float16 and mean.shape == (2, 1, 4) and variance.shape == (2, 1, 4)
    assert tf.math.add_n([tf.constant([1, 2])]).numpy().tolist() == [1, 2]
    with pytest.raises(ValueError, match="same dtype and shape"):
        tf.math.add_n([tf.ones([2]), tf.ones([3])])
    with pytest.raises(ValueError, match="at least one"):
        tf.math.add_n([])
    with pytest.raises(ValueError, match="bias has 3 elements"):
        tf.nn.bias_add(tf.ones([2, 4]), tf.ones([3]))
    with pytest.raises(ValueError, match="must be 1-D"):
        tf.nn.bias_add(tf.ones([2, 4]), tf.ones([1, 4]))
    assert tf.nn.leaky_relu(tf.constant([-2, 3])).dtype == tf.float32  # ints: float32, as TF
    with pytest.raises(TypeError, match="floating-point"):
        tf.nn.l2_loss(tf.constant([1, 2]))
    with pytest.raises(NotImplementedError, match="max_norm"):
        tf.nn.embedding_lookup(tf.ones([3, 2]), [0], max_norm=1.0)


def test_an_embedding_lookup_on_a_variable_gives_indexed_slices():
    v = tf.Variable(np.arange(10.0).reshape(5, 2))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.nn.embedding_lookup(v, [4, 1, 4]))
    grad = tape.gradient(y, v)
    assert isinstance(grad, tf.IndexedSlices)
    np.testing.assert_array_equal(tf.convert_to_tensor(grad).numpy()[:, 0], [0, 1, 0, 0, 2])


def test_array_function_errors():
    with pytest.raises(TypeError, match="bool"):
        tf.boolean_mask(tf.ones([2]), tf.constant([1, 0]))
    with pytest.raises(ValueError, match="incompatible"):
        tf.boolean_mask(tf.ones([2, 3]), tf.constant([True, False, True]))
    with pytest.raises(ValueError, match="same length"):
        tf.roll(tf.ones([2, 3]), [1, 2], [0])
    assert tf.linspace(0.0, 1.0, 0).shape == (0,)  # TensorFlow: empty, not an error
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requires start <= limit"):
        tf.linspace(0.0, 1.0, -1)  # TensorFlow's error: its Range of the steps
    assert tf.linspace(0.0, 1.0, 7).numpy()[-1] == 1.0  # the last value is `stop` exactly
    assert tf.sequence_mask([2, 0]).shape == (2, 2)


def test_composites_trace_and_match_eager():
    def step(x, b):
        mean, variance = tf.nn.moments(tf.nn.elu(tf.nn.bias_add(x, b)), [0])
        clipped, _ = tf.clip_by_global_norm([mean, variance], 1.0)
        rolled = tf.roll(tf.reverse(x, [0]), 1, 1)
        picked = tf.reduce_sum(tf.boolean_mask(rolled, tf.constant([True, False, True, True])))
        return (tf.math.add_n(clipped) + tf.nn.l2_loss(tf.math.l2_normalize(x, 1)) + picked
                + tf.reduce_sum(tf.nn.batch_normalization(x, 0.5, 2.0, 0.1, 3.0, 1e-3)))

    x = tf.constant(np.random.default_rng(2).normal(size=(4, 3)))
    b = tf.constant([0.1, -0.2, 0.3], tf.float64)
    np.testing.assert_allclose(tf.function(step)(x, b).numpy(), step(x, b).numpy(), rtol=1e-12)
