"""eager.linalg beyond products: diagonals and bands, decompositions, solves and the
compositions on them. Values are checked against numpy (reconstructions, where the factors are
unique only up to sign) and against TensorFlow 2.21's recorded values where TF chooses."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager as tf
from eager import errors
from gradcheck import check_gradient

A = np.array([[1.0, 2.0, 0.5], [3.0, -1.0, 2.0], [0.0, 1.0, 1.0], [2.0, 2.0, -1.0]])
B = np.array([[1.0], [0.0], [2.0], [-1.0]])


def _spd(*shape, seed=0):
    a = np.random.default_rng(seed).normal(size=shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _close(got, want, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


# -- TensorFlow's values ---------------------------------------------------------------------

def test_values_match_tensorflow():
    _close(tf.linalg.svd(A)[0], [4.082829449017041, 3.2798362556306295, 1.680231480031862])
    _close(tf.linalg.eigvalsh(A.T @ A), [2.8231778264900633, 10.75732586374915,
                                         16.669496309760788])
    _close(tf.linalg.pinv(A), [[-0.044444444444444606, 0.19999999999999993, -0.15555555555555567,
                                0.2222222222222222],
                               [0.25185185185185194, -0.1333333333333334, 0.21481481481481485,
                                0.07407407407407403],
                               [0.19259259259259276, 0.13333333333333333, 0.34074074074074084,
                                -0.2962962962962965]])
    _close(tf.linalg.lstsq(A, B), [[-0.5777777777777777], [0.6074074074074073], [1.17037037037037]])
    _close(tf.linalg.lstsq(A, B, l2_regularizer=0.5),
           [[-0.4853556485355648], [0.5188284518828452], [0.99581589958159]])
    _close(tf.linalg.lstsq(A, B, fast=False),
           [[-0.5777777777777777], [0.6074074074074073], [1.17037037037037]])
    _close(tf.linalg.expm(np.array([[1.0, 2.0], [0.5, -1.0]])),
           [[3.5464824286171615, 2.736597744017182], [0.6841494360042955, 0.8098846845999804]])
    sign, logabs = tf.linalg.slogdet(np.array([[1.0, 2.0], [3.0, 1.0]]))
    assert (float(sign), float(logabs)) == pytest.approx((-1.0, 1.6094379124341005))


def test_diagonal_ops_match_tensorflow():
    assert tf.linalg.diag([1, 2], k=-1).numpy().tolist() == [[0, 0, 0], [1, 0, 0], [0, 2, 0]]
    assert tf.linalg.diag([1, 2], num_rows=3).numpy().tolist() == [[1, 0], [0, 2], [0, 0]]
    assert tf.linalg.diag([1, 2], num_cols=4, k=1).numpy().tolist() == [[0, 1, 0, 0],
                                                                       [0, 0, 2, 0]]
    assert tf.linalg.diag_part([[1, 2, 3], [4, 5, 6]], k=1).numpy().tolist() == [2, 6]
    assert tf.linalg.trace([[1, 2], [2, 1]]).numpy() == 2
    assert tf.linalg.band_part(tf.ones([3, 3]), 1, 0).numpy().tolist() == [
        [1, 0, 0], [1, 1, 0], [0, 1, 1]]
    assert tf.linalg.set_diag(tf.zeros([2, 3]), tf.ones([2])).numpy().tolist() == [
        [1, 0, 0], [0, 1, 0]]
    assert tf.linalg.diag([[1.0, 2.0], [3.0, 4.0]], padding_value=9).numpy().tolist() == [
        [[1, 9], [9, 2]], [[3, 9], [9, 4]]]


def test_errors_as_tensorflow():
    with pytest.raises(errors.InvalidArgumentError, match="must be square"):
        tf.linalg.eigh(tf.constant([[1.0, 2.0, 3.0]]))
    with pytest.raises(errors.InvalidArgumentError, match="must be square"):
        tf.linalg.cholesky(tf.constant([[1.0, 2.0, 3.0]]))
    with pytest.raises(errors.InvalidArgumentError, match="rank >= 2"):
        tf.linalg.qr(tf.constant([1.0, 2.0]))
    with pytest.raises(errors.InvalidArgumentError, match="rank >= 2"):
        tf.linalg.svd(tf.constant([1.0, 2.0]))
    with pytest.raises(errors.InvalidArgumentError, match="not in the list of allowed values"):
        tf.linalg.svd(tf.constant([[1, 2], [2, 1]]))
    with pytest.raises(errors.InvalidArgumentError, match="In.0. mismatch In.1. shape: 2 vs. 3"):
        tf.linalg.triangular_solve(tf.constant([[1.0, 0.0], [2.0, 1.0]]), tf.ones([3, 1]))
    with pytest.raises(errors.InvalidArgumentError, match="num_lower must be negative"):
        tf.linalg.band_part(tf.ones([2, 3]), 3, 1)
    with pytest.raises(errors.InvalidArgumentError, match="MatrixDiagPartV3"):
        tf.linalg.diag_part(tf.constant([[1, 2, 3], [4, 5, 6]]), k=3)
    with pytest.raises(errors.UnimplementedError, match="band of diagonals"):
        tf.linalg.diag_part(tf.ones([3, 3]), k=(-1, 1))
    with pytest.raises(ValueError, match="rank >= 2"):
        tf.linalg.matrix_transpose(tf.constant([1.0, 2.0]))


def test_singular_inputs_give_tensorflows_nans_and_infs():
    got = tf.linalg.cholesky(tf.constant([[1.0, 2.0], [2.0, 1.0]])).numpy()
    assert np.isnan(got[0, 0]) and got[0, 1] == 0 and np.isnan(got[1]).all()
    got = tf.linalg.triangular_solve(tf.constant([[0.0, 0.0], [2.0, 1.0]]),
                                     tf.constant([[1.0], [1.0]])).numpy()
    assert got[0, 0] == np.inf and np.isinf(got[1, 0])
    sign, logabs = tf.linalg.slogdet(tf.zeros([2, 2]))
    assert float(sign) == 0.0 and float(logabs) == -np.inf


# -- against numpy, batched --------------------------------------------------------------------

_SHAPES = st.tuples(st.lists(st.integers(1, 3), max_size=2), st.integers(1, 4), st.integers(1, 4))


@settings(max_examples=25, deadline=None)
@given(_SHAPES, st.sampled_from([np.float32, np.float64, np.complex128]), st.booleans())
def test_decompositions_reconstruct_their_input(shape, dtype, full):
    batch, rows, cols = shape
    rng = np.random.default_rng(rows * 7 + cols)
    a = rng.normal(size=(*batch, rows, cols))
    if dtype is np.complex128:
        a = a + 1j * rng.normal(size=a.shape)
    a = a.astype(dtype)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype is np.float32 else {}
    s, u, v = tf.linalg.svd(a, full_matrices=full)
    k = min(rows, cols)
    assert s.dtype == tf.as_dtype(dtype).real_dtype
    _close(s, np.linalg.svd(a, compute_uv=False), **tol)
    _close(tf.matmul(u[..., :k] * tf.cast(s, u.dtype)[..., None, :], v[..., :k],
                     adjoint_b=True), a, **tol)
    if full:
        assert u.shape[-1] == rows and v.shape[-1] == cols
    q, r = tf.linalg.qr(a, full_matrices=full)
    _close(tf.matmul(q, r), a, **tol)
    _close(np.triu(r.numpy()), r, **tol)
    m = a @ np.conj(np.swapaxes(a, -1, -2)) + rows * np.eye(rows)
    low = tf.linalg.cholesky(m)
    _close(tf.matmul(low, low, adjoint_b=True), m, **tol)
    e, vec = tf.linalg.eigh(m)
    _close(tf.math.real(e), np.linalg.eigvalsh(m), **tol)
    _close(tf.matmul(vec * e[..., None, :], vec, adjoint_b=True), m, **tol)
    _close(tf.linalg.logdet(m), np.linalg.slogdet(m)[1], **tol)
    rhs = rng.normal(size=(rows, 2)).astype(dtype)
    x = tf.linalg.triangular_solve(low, rhs)  # rhs broadcasts over the batch
    _close(tf.matmul(low, x), np.broadcast_to(rhs, x.shape), **tol)


def test_expm_against_a_taylor_series_and_its_scaled_norms():
    rng = np.random.default_rng(1)
    for scale in (1e-3, 0.3, 3.0, 30.0):
        a = rng.normal(size=(2, 3, 3)) * scale / 3
        want = np.stack([_expm_reference(m) for m in a])
        _close(tf.linalg.expm(a), want, rtol=1e-9, atol=1e-9)


def _expm_reference(a, squarings=12):
    """exp(a) by a long Taylor series of a / 2^s, squared s times (slow, exact enough)."""
    x = a / 2.0 ** squarings
    term, total = np.eye(len(a)), np.eye(len(a))
    for k in range(1, 30):
        term = term @ x / k
        total = total + term
    for _ in range(squarings):
        total = total @ total
    return total


def test_traced_calls_match_eager_ones():
    @tf.function
    def f(a, m):
        s, u, v = tf.linalg.svd(a)
        q, r = tf.linalg.qr(a)
        return [s, tf.matmul(q, r), tf.linalg.cholesky(m), tf.linalg.eigvalsh(m),
                tf.linalg.expm(m / 10.0), tf.linalg.pinv(a), tf.linalg.trace(m),
                tf.linalg.diag_part(m), tf.linalg.band_part(m, 0, -1)]

    m = _spd(3, 3)
    for got, want in zip(f(A, m), f.python_function(A, m)):
        _close(got, want)
    _close(f(A, m * 40)[4], tf.linalg.expm(m * 4.0), rtol=1e-9)  # more squarings, same trace


def test_gradients_of_compositions_against_finite_differences():
    check_gradient(lambda a: tf.linalg.pinv(a), [A])
    check_gradient(lambda a, b: tf.linalg.lstsq(a, b, l2_regularizer=0.1), [A, B])
    check_gradient(lambda a: tf.linalg.expm(a), [np.array([[0.3, 1.0], [-0.5, 0.2]])])
    check_gradient(lambda a: tf.linalg.logdet(a + tf.linalg.adjoint(a)), [_spd(3, 3)])
    check_gradient(lambda a: tf.linalg.trace(a), [A[:3]])
    check_gradient(lambda a: tf.linalg.svd(a, compute_uv=False), [A])


def test_svd_gradient_with_full_matrices():
    x = tf.constant(A)
    with tf.GradientTape() as tape:
        tape.watch(x)
        s, _, _ = tf.linalg.svd(x, full_matrices=True)
        y = tf.reduce_sum(s)
    _close(tape.gradient(y, x), [[0.117451, 0.67122025, 0.30203344],
                                 [0.76369228, -0.3712798, 0.5281339],
                                 [-0.18601905, 0.43579774, 0.57535449],
                                 [0.60694009, 0.470845, -0.54664211]], rtol=1e-6)
    x = tf.ones([5, 3], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        s, _, _ = tf.linalg.svd(x, full_matrices=True)
    with pytest.raises(NotImplementedError, match="abs.m - n. > 1"):
        tape.gradient(s, x)
