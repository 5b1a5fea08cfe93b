"""Gradient cases for the linear-algebra ops and the thin SVD behind the spectral norm's gradient,
plus the product reductions whose rules use running products (Prod's other cases are in
grad_cases_math.py) and Cumprod (see test_gradients.py)."""

import numpy as np

import eager as tf
from eager.ops import linalg_grad
from gradcase import GradCase, crand, rand

C = GradCase


def _svd_invariants(x):
    """Functions of the SVD that do not depend on the singular vectors' signs or phases:
    s, u diag(c) v^H, u diag(c) u^H and v diag(c) v^H for fixed weights c."""
    s, u, v = linalg_grad.svd(x)
    k = s.shape[-1]
    c = tf.constant(np.linspace(0.5, 1.5, k), u.dtype)
    return [s, tf.matmul(u * c, v, adjoint_b=True), tf.matmul(u * c, u, adjoint_b=True),
            tf.matmul(v * (2.0 - c), v, adjoint_b=True)]


def _einsum(equation):
    return lambda *xs: tf.einsum(equation, *xs)


CASES = {
    "Tensordot": [C(lambda a, b: tf.tensordot(a, b, 1), lambda: [rand(2, 3), rand(3, 4, seed=1)]),
                  C(lambda a, b: tf.tensordot(a, b, 2),
                    lambda: [rand(2, 3, 4), rand(3, 4, 2, seed=1)]),
                  C(lambda a, b: tf.tensordot(a, b, [[0, 2], [2, 0]]),
                    lambda: [rand(3, 2, 4), rand(4, 5, 3, seed=1)]),
                  C(lambda a, b: tf.tensordot(a, b, [[2, 0], [0, 1]]),
                    lambda: [rand(3, 2, 4), rand(4, 3, 2, seed=1)]),
                  C(lambda a, b: tf.tensordot(a, b, 0), lambda: [rand(2), rand(3, seed=1)]),
                  C(lambda a, b: tf.tensordot(a, b, [[1], [0]]),
                    lambda: [crand(2, 3), crand(3, 2, seed=1)])],
    "Einsum": [C(_einsum("ij,jk->ik"), lambda: [rand(2, 3), rand(3, 4, seed=1)]),
               C(_einsum("bij,bjk->bik"), lambda: [rand(2, 2, 3), rand(2, 3, 2, seed=1)]),
               C(_einsum("ij,jk"), lambda: [rand(2, 3), rand(3, 2, seed=1)]),  # implicit
               C(_einsum("ijk->kji"), lambda: [rand(2, 3, 4)]),
               C(_einsum("ij->j"), lambda: [rand(3, 4)]),
               C(_einsum("ij->"), lambda: [rand(3, 4)]),
               C(_einsum("ii->i"), lambda: [rand(3, 3)]),
               C(_einsum("ii"), lambda: [rand(3, 3)]),  # trace
               C(_einsum("iij,jk->ik"), lambda: [rand(2, 2, 3), rand(3, 2, seed=1)]),
               C(_einsum("i,j->ij"), lambda: [rand(3), rand(2, seed=1)]),
               C(_einsum("i,i->"), lambda: [rand(4), rand(4, seed=1)]),
               C(_einsum("ij,kj->ik"), lambda: [rand(2, 3), rand(4, 3, seed=1)]),
               C(_einsum("...ij,...jk->...ik"),  # batch axes (2, 1) and (4,) broadcast
                 lambda: [rand(2, 1, 2, 3), rand(4, 3, 2, seed=1)]),
               C(_einsum("ab...,b->a..."), lambda: [rand(2, 3, 4), rand(3, seed=1)]),
               C(_einsum("i...,...->i..."), lambda: [rand(2, 3), rand(1, seed=1)]),
               C(_einsum("...i,i->..."), lambda: [rand(2, 3, 4), rand(4, seed=1)]),
               C(_einsum("ij,jk,kl->il"),
                 lambda: [rand(2, 3), rand(3, 2, seed=1), rand(2, 2, seed=2)]),
               C(_einsum("ij,jk->ik"), lambda: [crand(2, 3), crand(3, 2, seed=1)])],
    "MatrixSpectralNorm": [
        C(lambda x: tf.norm(x, ord=2, axis=[0, 1]), lambda: [rand(3, 4)]),
        C(lambda x: tf.norm(x, ord=2, axis=[1, 0]), lambda: [rand(4, 3)]),
        C(lambda x: tf.norm(x, ord=2, axis=[-2, -1]), lambda: [rand(2, 3, 3)]),
        C(lambda x: tf.norm(x, ord=2, axis=[2, 0], keepdims=True), lambda: [rand(3, 2, 4)]),
        C(lambda x: tf.norm(x, ord=2, axis=[0, 1]), lambda: [crand(3, 3)])],
    "Svd": [C(_svd_invariants, lambda: [rand(3, 3)]),
            C(_svd_invariants, lambda: [rand(3, 5)]),
            C(_svd_invariants, lambda: [rand(5, 3)]),
            C(_svd_invariants, lambda: [rand(2, 3, 2)]),
            C(_svd_invariants, lambda: [crand(3, 3)]),
            C(_svd_invariants, lambda: [crand(2, 4)]),
            C(_svd_invariants, lambda: [crand(4, 2)])],
    # Prod: the rule's other branches (several but not all axes: a transpose; complex).
    "Prod": [C(lambda x: tf.reduce_prod(x, axis=[0, 2]), lambda: [rand(2, 3, 2)]),
             C(lambda x: tf.reduce_prod(x, axis=[1, 2], keepdims=True),
               lambda: [np.array([[[1.5, 0.0], [2.0, -1.0]], [[0.5, 0.7], [0.0, 0.0]]])]),
             C(lambda x: tf.reduce_prod(x, axis=0), lambda: [crand(3, 2)])],
    "Cumprod": [C(lambda x: tf.math.cumprod(x, axis=1), lambda: [rand(2, 4)]),
                C(lambda x: tf.math.cumprod(x, exclusive=True), lambda: [rand(5)]),
                C(lambda x: tf.math.cumprod(x, reverse=True), lambda: [rand(3, 2)]),
                C(lambda x: tf.math.cumprod(x, exclusive=True, reverse=True),
                  lambda: [rand(5)]),
                # zeros: the first zero of a slice still has a gradient, later ones none
                C(lambda x: tf.math.cumprod(x, axis=1),
                  lambda: [np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [0.0, 1.5, -1.0, 2.0, 0.5]])]),
                C(lambda x: tf.math.cumprod(x, exclusive=True, reverse=True),
                  lambda: [np.array([2.0, 0.0, 3.0, 0.0, 5.0, 1.5])]),
                C(lambda x: tf.math.cumprod(x, axis=0, exclusive=True),
                  lambda: [np.array([[0.0, 1.0], [2.0, 0.0], [0.0, 3.0], [1.5, 0.5]])]),
                C(lambda x: tf.math.cumprod(x), lambda: [crand(4)])],
}


def _well_conditioned(*shape, seed=0, complex_=False):
    """Matrices near the identity (well away from singular) for the square-matrix ops."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-0.3, 0.3, shape)
    if complex_:
        a = a + 1j * rng.uniform(-0.3, 0.3, shape)
    return a + np.eye(shape[-1])


SQUARE_CASES = {
    "MatrixInverse": [C(tf.linalg.inv, lambda: [_well_conditioned(3, 3)]),
                      C(lambda a: tf.linalg.inv(a, adjoint=True),
                        lambda: [_well_conditioned(2, 2, 2, seed=1)]),
                      C(tf.linalg.inv, lambda: [_well_conditioned(2, 2, seed=2, complex_=True)])],
    "MatrixDeterminant": [C(tf.linalg.det, lambda: [_well_conditioned(3, 3)]),
                          C(tf.linalg.det, lambda: [_well_conditioned(2, 2, 2, seed=3)]),
                          C(tf.linalg.det, lambda: [_well_conditioned(2, 2, seed=4,
                                                                      complex_=True)])],
    "MatrixSolve": [C(tf.linalg.solve, lambda: [_well_conditioned(3, 3), rand(3, 2)]),
                    C(lambda a, b: tf.linalg.solve(a, b, adjoint=True),
                      lambda: [_well_conditioned(2, 3, 3, seed=5), rand(2, 3, 1)])],
}
CASES.update(SQUARE_CASES)
