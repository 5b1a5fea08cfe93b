"""`eager.runtime.vectorize`: a program run once on a batch of feeds equals the program run per
row and stacked, for every batch rule; ops without a rule refuse. Then vectorised Jacobians:
`jacobian` / `batch_jacobian` give the per-row loop's values, and fall back to it when an op
cannot be vectorised."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager
from eager import TensorSpec
from eager.runtime import run_program
from eager.runtime import tape_backward_plans
from eager.runtime.vectorize import vectorize

from test_compiler import _program
from test_gradients import CASES
from gradcheck import _differentiable, _outputs


def _check_batched(fn, shapes, n=3, batched=(0,), seed=0):
    """Vectorises `fn`'s program over the feeds at positions `batched` and compares one run on
    stacked rows with the per-row runs."""
    rng = np.random.default_rng(seed)
    program = _program(fn, *[TensorSpec(s, eager.float64) for s in shapes])
    result = vectorize(program, [program.feeds[i] for i in batched], n)
    assert result is not None, "expected a batch rule for every op"
    vectorized, batched_values = result
    vectorized.validate()
    rows = [[rng.standard_normal(s) for s in shapes] for _ in range(n)]
    feeds = []
    for k, _shape in enumerate(shapes):
        if k in batched:
            feeds.append(eager.constant(np.stack([row[k] for row in rows])))
        else:
            feeds.append(eager.constant(rows[0][k]))  # shared by every row
    got = run_program(vectorized, feeds)
    per_row = []
    for row in rows:
        args = [eager.constant(row[k] if k in batched else rows[0][k]) for k in range(len(shapes))]
        per_row.append([v.numpy() for v in run_program(program, args)])
    for i, (value, fetch) in enumerate(zip(got, vectorized.fetches)):
        expected = np.stack([r[i] for r in per_row])
        if fetch in batched_values:
            np.testing.assert_allclose(value.numpy(), expected, rtol=1e-12, atol=1e-12)
        else:
            for r in per_row:
                np.testing.assert_allclose(value.numpy(), r[i], rtol=1e-12, atol=1e-12)


def test_elementwise_aligns_lower_rank_batched_operands():
    _check_batched(lambda x, y: (x * y + 1.0, eager.tanh(x) - y), [(4,), (2, 4)])
    _check_batched(lambda x, y: eager.where(x > 0.0, x, y), [(2, 4), (4,)], batched=(1,))
    _check_batched(lambda x, y: eager.cast(x * y, eager.float32), [(), (3,)])


def test_matmul_on_either_side_and_both():
    _check_batched(lambda a, b: eager.matmul(a, b), [(2, 3), (3, 4)])
    _check_batched(lambda a, b: eager.matmul(a, b, transpose_b=True), [(2, 3), (4, 3)],
                   batched=(1,))
    _check_batched(lambda a, b: eager.matmul(a, b, transpose_a=True), [(3, 2), (3, 4)],
                   batched=(0, 1))
    _check_batched(lambda a, b: eager.matmul(a, b), [(2, 3), (5, 3, 4)])  # batch dims align


def test_reductions_shift_their_axes():
    _check_batched(lambda x: (eager.reduce_sum(x), eager.reduce_mean(x, axis=-1),
                              eager.reduce_max(x, axis=0, keepdims=True),
                              eager.reduce_prod(x, axis=[0, 1])), [(2, 3)])


def test_shape_ops():
    _check_batched(lambda x: (eager.expand_dims(x, -1), eager.expand_dims(x, 0),
                              eager.transpose(x), eager.reshape(x, [-1]),
                              eager.reshape(x, [3, 1, 2])), [(2, 3)])
    _check_batched(lambda x: (eager.squeeze(x), eager.squeeze(x, axis=[0])), [(1, 3, 1)],
                   n=1)  # a batch of one must not be squeezed away
    _check_batched(lambda x: eager.broadcast_to(x, [2, 4, 3]), [(4, 1)])
    _check_batched(lambda x: (eager.zeros_like(x), eager.ones_like(x), eager.identity(x)),
                   [(2,)])


def test_concat_and_stack_broadcast_unbatched_inputs():
    _check_batched(lambda x, y: (eager.concat([x, y], axis=-1), eager.stack([x, y], axis=1)),
                   [(2, 3), (2, 3)])
    _check_batched(lambda x, y: eager.concat([y, x], axis=0), [(2, 3), (1, 3)])


def test_unbatched_values_stay_unbatched():
    program = _program(lambda x, y: (x + 1.0, y * 2.0), TensorSpec([2], eager.float64),
                       TensorSpec([2], eager.float64))
    vectorized, batched = vectorize(program, [program.feeds[0]], 4)
    assert program.fetches[0] in batched and program.fetches[1] not in batched
    assert vectorized.specs[program.fetches[0]].shape == (4, 2)


def test_an_op_without_a_batch_rule_refuses():
    program = _program(lambda x, i: eager.gather(x, i), TensorSpec([5], eager.float64),
                       TensorSpec([2], eager.int32))
    assert vectorize(program, [program.feeds[1]], 3) is None  # batched indices
    assert vectorize(program, [program.feeds[0]], 3) is not None  # batched params
    assert vectorize(program, [], 3) is not None  # nothing batched: nothing to rewrite
    program = _program(lambda x: eager.sort(x), TensorSpec([5], eager.float64))
    assert vectorize(program, [program.feeds[0]], 3) is None


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), n=st.integers(1, 4),
       seed=st.integers(0, 1000))
def test_random_shapes(shape, n, seed):
    def f(x, w):
        h = eager.nn.relu(x * w + 0.5)
        return eager.reduce_sum(h * h, axis=-1), eager.transpose(eager.expand_dims(h, 0))

    _check_batched(f, [tuple(shape), (shape[-1],)], n=n, seed=seed)


# -- vectorised Jacobians ---------------------------------------------------------------------

@pytest.fixture(autouse=True)
def fresh_plans():
    tape_backward_plans.clear()
    yield
    tape_backward_plans.clear()


def _jacobians(fn, *arrays, batch=False):
    """(vectorised, looped) Jacobians of fn w.r.t. every argument, and whether a batched plan
    was made."""
    out = []
    for pfor in (True, False):
        xs = [eager.constant(a) for a in arrays]
        with eager.GradientTape(persistent=True) as tape:
            tape.watch(xs)
            y = fn(*xs)
        if batch:
            out.append([tape.batch_jacobian(y, x, experimental_use_pfor=pfor) for x in xs])
        else:
            out.append(tape.jacobian(y, xs, experimental_use_pfor=pfor))
    planned = any(v.__class__ is tape_backward_plans._BatchedPlan
                  for v in tape_backward_plans._state.cache.values())
    return out[0], out[1], planned


def _assert_same(vectorized, looped):
    for got, want in zip(vectorized, looped):
        if want is None:
            assert got is None
            continue
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


JACOBIAN_CASES = {
    "mlp": (lambda x, w: eager.nn.softmax(eager.tanh(eager.matmul(x, w)) * 2.0), [(2, 3), (3, 4)]),
    "reductions": (lambda x: eager.stack([eager.reduce_sum(x * x, axis=0),
                                          eager.reduce_mean(eager.exp(x), axis=0)]), [(3, 2)]),
    "shapes": (lambda x: eager.reshape(eager.transpose(eager.concat([x, x * 2.0], 0)), [-1]),
               [(2, 3)]),
    "broadcast": (lambda x, b: eager.nn.sigmoid(x + b) / (1.0 + eager.abs(b)), [(3, 2), (2,)]),
    "log_softmax xent": (lambda z: eager.nn.log_softmax(z) * eager.reduce_max(z), [(2, 4)]),
}


@pytest.mark.parametrize("name", sorted(JACOBIAN_CASES))
def test_jacobian_vectorised_equals_the_loop(name):
    fn, shapes = JACOBIAN_CASES[name]
    rng = np.random.default_rng(0)
    vectorized, looped, planned = _jacobians(fn, *[rng.standard_normal(s) for s in shapes])
    assert planned, f"{name}: expected a vectorised Jacobian"
    _assert_same(vectorized, looped)


def test_batch_jacobian_vectorised_equals_the_loop():
    rng = np.random.default_rng(1)
    w = eager.constant(rng.standard_normal((3, 4)))
    vectorized, looped, planned = _jacobians(
        lambda x: eager.tanh(eager.matmul(x, w)), rng.standard_normal((5, 3)), batch=True)
    assert planned
    _assert_same(vectorized, looped)
    assert vectorized[0].shape == (5, 4, 3)


def test_jacobian_falls_back_to_the_loop_without_batch_rules():
    rng = np.random.default_rng(2)
    image = eager.constant(rng.standard_normal((1, 4, 4, 4)))
    vectorized, looped, planned = _jacobians(  # a grouped convolution's filter gradient
        lambda w: eager.nn.conv2d(image, w, 1, "VALID"), rng.standard_normal((2, 2, 2, 2)))
    assert not planned
    _assert_same(vectorized, looped)


def test_gathered_and_scattered_jacobians_are_dense_and_vectorised():
    rng = np.random.default_rng(3)
    vectorized, looped, planned = _jacobians(
        lambda x: eager.gather(x, [2, 0, 2]) * eager.pad(x, [[1, 1]])[1:-1][:3],
        rng.standard_normal(4))
    assert planned
    _assert_same(vectorized, looped)


def test_vectorised_jacobian_unconnected_and_variables():
    v = eager.Variable(np.array([1.0, 2.0]))
    x = eager.constant(np.array([0.5, -1.0, 2.0]))
    unused = eager.constant(np.array([3.0]))
    for unconnected in (eager.UnconnectedGradients.NONE, eager.UnconnectedGradients.ZERO):
        with eager.GradientTape() as tape:
            tape.watch([x, unused])
            y = eager.reduce_sum(x) * v * v
        jx, jv, ju = tape.jacobian(y, [x, v, unused], unconnected_gradients=unconnected)
        np.testing.assert_allclose(jx.numpy(), np.tile([[1.0], [4.0]], (1, 3)))
        np.testing.assert_allclose(jv.numpy(), np.diag(2 * 1.5 * np.array([1.0, 2.0])))
        if unconnected is eager.UnconnectedGradients.NONE:
            assert ju is None
        else:
            np.testing.assert_array_equal(ju.numpy(), np.zeros((2, 1)))


def test_unstack_and_split_shift_their_axes():
    _check_batched(lambda x: (*eager.unstack(x, axis=1), *eager.split(x, [1, 2], axis=-1)),
                   [(2, 3)])


def _registry_cases():
    return sorted(name for name, cases in CASES.items() if any(c.check is None for c in cases))


@pytest.mark.parametrize("op_name", _registry_cases())
def test_every_gradient_rule_vectorised_or_looped_gives_the_loops_jacobian(op_name):
    """For every differentiable op's cases: the Jacobian of its (first) output, vectorised
    where the batch rules cover the backward program, equals the per-row loop."""
    for case in CASES[op_name]:
        if case.check is not None:
            continue
        args = [np.asarray(a) if isinstance(a, (list, float)) else a for a in case.args()]
        results = []
        for pfor in (True, False):
            tensors = [eager.constant(a) if _differentiable(a) else a for a in args]
            watched = [t for t, a in zip(tensors, args) if _differentiable(a)]
            with eager.GradientTape() as tape:
                tape.watch(watched)
                y = _outputs(case.fn(*tensors))[0]
            if y.dtype.is_integer or y.dtype.is_bool:
                break
            results.append(tape.jacobian(y, watched, experimental_use_pfor=pfor))
        if len(results) == 2:
            _assert_same(*results)


def test_slices_pads_and_scans():
    _check_batched(lambda x: (x[1:, ::-1], x[..., 0], x[None, :, 1], x[0]), [(3, 4)])
    _check_batched(lambda x: eager.slice(x, [1, 0], [-1, 2]), [(3, 4)])
    _check_batched(lambda x: (eager.pad(x, [[1, 0], [0, 2]], constant_values=3.0),
                              eager.pad(x, [[1, 1], [0, 1]], mode="REFLECT")), [(3, 4)])
    _check_batched(lambda x: (eager.math.cumsum(x, axis=1, exclusive=True),
                              eager.math.cumprod(x, axis=0, reverse=True)), [(3, 4)])


def test_contractions_and_gathers():
    _check_batched(lambda a, b: eager.tensordot(a, b, axes=[[1], [0]]), [(2, 3), (3, 4)])
    _check_batched(lambda a, b: eager.tensordot(a, b, axes=[[0, 1], [1, 2]]), [(2, 3),
                                                                                (4, 2, 3)],
                   batched=(1,))
    _check_batched(lambda a, b: eager.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)],
                   batched=(0, 1))
    _check_batched(lambda a, b: eager.einsum("...ij,jk", a, b), [(5, 2, 3), (3, 4)],
                   batched=(1,))
    _check_batched(lambda x: eager.gather(x, [2, 0, 2], axis=1), [(2, 3)])


def test_convolutions_and_pooling_merge_the_batch_into_the_examples():
    _check_batched(lambda x, w: eager.nn.conv2d(x, w, strides=1, padding="SAME"),
                   [(2, 5, 5, 3), (3, 3, 3, 4)])
    _check_batched(lambda x: eager.nn.max_pool2d(x, 2, 2, "VALID"), [(2, 4, 4, 3)])


def test_a_batched_filter_or_two_batched_contraction_operands_refuse():
    program = _program(lambda x, w: eager.nn.conv2d(x, w, 1, "VALID"),
                       TensorSpec([1, 3, 3, 1], eager.float64),
                       TensorSpec([2, 2, 1, 1], eager.float64))
    assert vectorize(program, [program.feeds[1]], 2) is None
    program = _program(lambda a, b: eager.tensordot(a, b, 1), TensorSpec([2, 3], eager.float64),
                       TensorSpec([3, 2], eager.float64))
    assert vectorize(program, list(program.feeds), 2) is None


def test_scatter_nd_of_batched_updates():
    indices = np.array([[2], [0], [2]])
    _check_batched(lambda u: eager.scatter_nd(indices, u, [4, 3]), [(3, 3)])
    indices2 = np.array([[[1, 0], [0, 2]]])
    _check_batched(lambda u: eager.scatter_nd(indices2, u, [2, 3, 2]), [(1, 2, 2)])


def test_pooling_gradient_repeats_its_shared_forward_values():
    rng = np.random.default_rng(4)
    vectorized, looped, planned = _jacobians(
        lambda x: eager.nn.max_pool2d(x, 2, 2, "VALID") * 2.0, rng.standard_normal((2, 4, 4, 2)))
    assert planned
    _assert_same(vectorized, looped)


def test_gather_nd_of_batched_params():
    _check_batched(lambda p: eager.gather_nd(p, [[1, 0], [0, 2]]), [(2, 3, 4)])
    _check_batched(lambda p: eager.gather_nd(p, [[[1]], [[0]]]), [(2, 3)])


def test_filter_gradient_of_a_batched_output_gradient():
    rng = np.random.default_rng(5)
    image = eager.constant(rng.standard_normal((2, 5, 5, 2)))
    vectorized, looped, planned = _jacobians(
        lambda w: eager.nn.conv2d(image, w, 2, "SAME"), rng.standard_normal((3, 3, 2, 3)))
    assert planned
    _assert_same(vectorized, looped)


def test_parallel_iterations_runs_the_rows_in_chunks():
    rng = np.random.default_rng(6)
    w = eager.constant(rng.standard_normal((7, 3)))
    x = eager.constant(rng.standard_normal(3))
    results = []
    for parallel_iterations, pfor in ((None, True), (3, True), (1, True), (100, True),
                                      (None, False)):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.tanh(eager.linalg.matvec(w, x))
        results.append(tape.jacobian(y, x, parallel_iterations=parallel_iterations,
                                     experimental_use_pfor=pfor).numpy())
    batched = [v for v in tape_backward_plans._state.cache.values()
               if v.__class__ is tape_backward_plans._BatchedPlan]
    assert len(batched) == 3  # one plan per chunk size: 7 rows, 3 rows, 1 row (3 + 3 + 1)
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], rtol=1e-12)


def test_batch_jacobian_in_chunks():
    rng = np.random.default_rng(7)
    w = eager.constant(rng.standard_normal((3, 5)))
    x = eager.constant(rng.standard_normal((4, 3)))
    results = []
    for parallel_iterations, pfor in ((None, True), (2, True), (None, False)):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.tanh(eager.matmul(x, w))
        results.append(tape.batch_jacobian(y, x, parallel_iterations=parallel_iterations,
                                           experimental_use_pfor=pfor).numpy())
    assert results[0].shape == (4, 5, 3)
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], rtol=1e-12)


def test_softmaxes_cross_entropies_and_more():
    _check_batched(lambda x: (eager.nn.softmax(x, axis=0), eager.nn.log_softmax(x),
                              eager.math.reduce_logsumexp(x, axis=1), eager.argmax(x, axis=0),
                              eager.tile(x, [2, 1]), eager.stop_gradient(x)), [(2, 3)])
    _check_batched(lambda z, x: eager.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
                   [(2, 3), (2, 3)], batched=(1,))
    for batched in ((0,), (1,), (0, 1)):
        _check_batched(lambda z, x: eager.nn.softmax_cross_entropy_with_logits(labels=z,
                                                                              logits=x),
                       [(2, 3), (2, 3)], batched=batched)
    labels = np.array([2, 0])
    _check_batched(lambda x: eager.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                               logits=x),
                   [(2, 3)])
