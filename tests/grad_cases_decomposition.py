"""Gradient cases for the diagonal/band ops and the decompositions (see test_gradients.py).
Decompositions are checked through functions their sign/phase freedom leaves fixed:
products of the factors, or the factors after fixing signs where the rule defines them."""

import numpy as np

import eager as tf
from gradcase import GradCase, crand, rand

C = GradCase


def _spd(*shape, seed=0):
    a = rand(*shape, seed=seed)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _sym(x):
    return (x + tf.linalg.adjoint(x)) / 2


def _eigh_invariants(x):
    e, v = tf.linalg.eigh(_sym(x))
    k = e.shape[-1]
    c = tf.constant(np.linspace(0.5, 1.5, k), v.dtype)
    return [e, tf.matmul(v * c, v, adjoint_b=True)]


def _qr_invariants(x):
    q, r = tf.linalg.qr(x)
    # r's diagonal signs fix q's column signs: normalise both to a positive diagonal.
    signs = tf.sign(tf.linalg.diag_part(r))
    return [q * tf.expand_dims(signs, -2), r * tf.expand_dims(signs, -1)]


CASES = {
    "MatrixDiagPartV3": [C(tf.linalg.diag_part, lambda: [rand(2, 3, 4)]),
                         C(lambda x: tf.linalg.diag_part(x, k=-1), lambda: [rand(3, 4)])],
    "MatrixDiagV3": [C(tf.linalg.diag, lambda: [rand(2, 3)]),
                     C(lambda d: tf.linalg.diag(d, k=1), lambda: [rand(3)])],
    "MatrixSetDiagV3": [C(tf.linalg.set_diag, lambda: [rand(2, 3, 3), rand(2, 3)]),
                        C(lambda x, d: tf.linalg.set_diag(x, d, k=1),
                          lambda: [rand(3, 4), rand(3, seed=1)])],
    "MatrixBandPart": [C(lambda x: tf.linalg.band_part(x, 1, 0), lambda: [rand(2, 4, 4)]),
                       C(lambda x: tf.linalg.band_part(x, -1, 0), lambda: [crand(3, 3)])],
    "Cholesky": [C(lambda x: tf.linalg.cholesky(_sym(x)), lambda: [_spd(3, 3)]),
                 C(lambda x: tf.linalg.cholesky(_sym(x)), lambda: [_spd(2, 2, 2, seed=1)])],
    "Qr": [C(_qr_invariants, lambda: [rand(4, 3)]),
           C(_qr_invariants, lambda: [rand(2, 3, 3, seed=2)])],
    "SelfAdjointEigV2": [C(_eigh_invariants, lambda: [rand(3, 3)]),
                         C(_eigh_invariants, lambda: [rand(2, 4, 4, seed=3)])],
    "LogMatrixDeterminant": [C(lambda x: tf.linalg.slogdet(x)[1], lambda: [_spd(3, 3)]),
                             C(lambda x: tf.linalg.slogdet(x)[1],
                               lambda: [rand(2, 3, 3, seed=4) + 3 * np.eye(3)])],
    "MatrixTriangularSolve": [
        C(lambda a, b: tf.linalg.triangular_solve(a, b), lambda: [_spd(3, 3), rand(3, 2)]),
        C(lambda a, b: tf.linalg.triangular_solve(a, b, lower=False, adjoint=True),
          lambda: [_spd(2, 3, 3, seed=5), rand(3, 2, seed=6)])],
}
