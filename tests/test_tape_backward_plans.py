"""Compiled backward plans for eager tapes (`eager.runtime.tape_backward_plans`) against the
op-by-op walk: same gradients for every differentiable op's cases, the cases where no plan may be
used, and the cache's bounds."""

import gc
import threading
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eager
from eager.core import dispatch
from eager.runtime import tape_backward_plans
from eager.ops import math_ops
from eager.autodiff import tape_backward

from gradcheck import _differentiable, _outputs, _weights, tape_gradients
from test_gradients import CASES


@pytest.fixture(autouse=True)
def fresh_cache():
    tape_backward_plans.clear()
    tape_backward_plans.set_enabled(True)
    yield
    tape_backward_plans.set_enabled(True)
    tape_backward_plans.clear()


def _gradients(fn, args, weights):
    return tape_gradients(fn, args, weights, eager.UnconnectedGradients.NONE)


def _walked_and_planned(fn, args):
    """Gradients by the walk, then three times with plans on (seen, planned, reused), and
    whether a plan was made."""
    args = [np.asarray(a) if isinstance(a, (list, float)) else a for a in args]
    ys = _outputs(fn(*[eager.constant(a) if _differentiable(a) else a for a in args]))
    weights = _weights([np.asarray(y) for y in ys], 0)
    tape_backward_plans.set_enabled(False)
    walked = _gradients(fn, args, weights)
    tape_backward_plans.set_enabled(True)
    tape_backward_plans.clear()
    runs = [_gradients(fn, args, weights) for _ in range(3)]
    return walked, runs, tape_backward_plans.plan_count() > 0


def _assert_same(walked, planned, what):
    assert len(walked) == len(planned)
    for k, (w, p) in enumerate(zip(walked, planned)):
        if w is None:
            assert p is None, f"{what}: argument {k} planned a gradient the walk did not give"
            continue
        assert p is not None, f"{what}: argument {k} lost its gradient in the plan"
        assert p.shape == w.shape and p.dtype == w.dtype, what
        np.testing.assert_allclose(p, w, rtol=1e-12, atol=1e-14,
                                   err_msg=f"{what}: argument {k} differs from the walk")


#: Ops whose gradient must be plannable (no value-dependent rule): a regression that makes
#: them walk every step would go unnoticed otherwise.
MUST_PLAN = {"AddV2", "Sub", "Mul", "RealDiv", "MatMul", "Relu", "Sigmoid", "Tanh", "Exp",
             "Log", "Sum", "Mean", "Softmax", "SoftmaxCrossEntropyWithLogits", "BiasAdd",
             "Reshape", "Transpose", "Square", "Sqrt", "Maximum", "GatherV2", "ConcatV2"}


@pytest.fixture(params=["tensor form", "array form"])
def plan_form(request):
    """Plans run in their tensor form while the suite cross-checks inference (every op through
    dispatch); with the check off, in a one-device process (`cpu_only`), in their array form."""
    if request.param == "array form":
        request.getfixturevalue("cpu_only")
        dispatch.check_inference(False)
        assert eager.core.context.FAST_PATH.device is not None
        yield request.param
        dispatch.check_inference(True)
    else:
        yield request.param


@pytest.mark.parametrize("op_name", sorted(name for name, cases in CASES.items()
                                           if any(c.check is None for c in cases)))
def test_plan_gives_the_walks_gradients(op_name, plan_form):
    planned_any = False
    for n, case in enumerate(CASES[op_name]):
        if case.check is not None:
            continue
        walked, runs, planned = _walked_and_planned(case.fn, case.args())
        planned_any |= planned
        for r, run in enumerate(runs):
            _assert_same(walked, run, f"{op_name} case {n}, run {r}")
    if op_name in MUST_PLAN:
        assert planned_any, f"{op_name}: no compiled backward plan was made"
    if plan_form == "array form":
        for plan in tape_backward_plans._state.cache.values():
            if plan.__class__ is tape_backward_plans._Plan:
                assert plan.run._array_fn is not None


def test_plan_made_on_second_sight_and_reused():
    x = eager.constant(np.arange(4.0))

    def grad():
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.reduce_sum(x * x)
        return tape.gradient(y, x).numpy()

    np.testing.assert_array_equal(grad(), 2 * np.arange(4.0))
    assert tape_backward_plans.plan_count() == 0
    for _ in range(3):
        np.testing.assert_array_equal(grad(), 2 * np.arange(4.0))
    assert tape_backward_plans.plan_count() == 1


def test_tape_with_unconnected_entries_plans_and_matches_the_walk(plan_form):
    """The plan is keyed on the whole tape (so a hit skips pruning): entries off the path from
    the sources to the target (a metric, a product of constants, a second loss) must neither
    change the gradients nor be fed to the plan; a source the target does not reach gets
    None."""
    rng = np.random.default_rng(3)
    xv, wv = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    x, w, unused = eager.constant(xv), eager.constant(wv), eager.constant(np.ones(2))

    def grads(planned):
        tape_backward_plans.set_enabled(planned)
        with eager.GradientTape() as tape:
            tape.watch([x, w, unused])
            metric = eager.reduce_mean(eager.exp(x))  # recorded, off the path to loss
            h = eager.tanh(eager.matmul(x, w))
            other = eager.reduce_sum(unused * 2.0)  # recorded, reaches no target
            loss = eager.reduce_sum(h * h)
            del metric, other
        return [None if g is None else g.numpy() for g in tape.gradient(loss, [x, w, unused])]

    walked = grads(False)
    runs = [grads(True) for _ in range(3)]
    assert walked[2] is None
    t = np.tanh(xv @ wv)
    dh = 2 * t * (1 - t * t)
    np.testing.assert_allclose(walked[0], dh @ wv.T, rtol=1e-12)
    np.testing.assert_allclose(walked[1], xv.T @ dh, rtol=1e-12)
    for run in runs:
        assert run[2] is None
        np.testing.assert_allclose(run[0], walked[0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(run[1], walked[1], rtol=1e-12, atol=1e-14)
    assert tape_backward_plans.plan_count() == 1


def test_custom_gradient_off_the_path_still_plans():
    """A custom gradient cannot be keyed, so a tape holding one is pruned first and keyed over
    the walk alone: when the custom gradient is off the path, the walk is still planned."""
    @eager.custom_gradient
    def doubled(v):
        return v * 2.0, lambda dy: dy * 2.0

    x = eager.constant(np.array([1.0, -2.0, 3.0]))
    for _ in range(3):
        with eager.GradientTape() as tape:
            tape.watch(x)
            side = doubled(x)  # recorded as a custom-gradient entry, not on loss's path
            loss = eager.reduce_sum(eager.exp(x))
        np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.exp([1.0, -2.0, 3.0]))
        del side
    assert tape_backward_plans.plan_count() == 1


def test_op_without_gradient_off_the_path_still_plans(monkeypatch):
    """A tape holding an entry a plan cannot stand for (here an op whose gradient is missing)
    is keyed over its pruned walk: with that entry off the path, the walk is planned and gives
    the walk's gradients; on the path, gradient() still names the op."""
    monkeypatch.setattr(math_ops.EXP, "gradient", None)
    x = eager.constant(np.array([1.0, -2.0, 3.0]))
    for _ in range(4):
        with eager.GradientTape() as tape:
            tape.watch(x)
            side = eager.exp(x)  # recorded, no gradient, not on loss's path
            loss = eager.reduce_sum(eager.sin(x))
        np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.cos([1.0, -2.0, 3.0]))
        del side
    assert tape_backward_plans.plan_count() == 1
    with eager.GradientTape() as tape:
        tape.watch(x)
        loss = eager.reduce_sum(eager.exp(x))
    with pytest.raises(LookupError, match="No gradient defined for operation 'Exp'"):
        tape.gradient(loss, x)


def test_entry_links_number_ids_in_order_of_first_sight():
    """The links a tape numbers while recording (which key a whole tape) are the ids of each
    entry's inputs then outputs renumbered in order of first sight (0 for untracked), as a
    pruned walk's key renumbers them: for one- and two-input ops, several outputs, integer
    outputs, a Python number's constant and a custom gradient's entry."""
    @eager.custom_gradient
    def doubled(v):
        return v * 2.0, lambda dy: dy * 2.0

    x = eager.constant(np.array([[1.0, -2.0], [3.0, 0.5]]))
    y = eager.constant(np.array([0.5, 4.0]))
    with eager.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        a, b = eager.unstack(x * y + 1.0)
        c = eager.math.exp(a) - doubled(b) * y
        eager.argmax(c)
        d = eager.reduce_sum(eager.concat([c, a], 0))
    numbers = {0: 0}
    for entry in tape._tape.as_recorded_ops():
        expected = []
        for i in entry.input_ids + entry.output_ids:
            if i not in numbers:
                numbers[i] = len(numbers)
            expected.append(numbers[i])
        assert entry.links == tuple(expected), entry
    assert numbers == tape._tape.numbers
    xn, yn = x.numpy(), y.numpy()
    a_n, b_n = xn[0] * yn + 1.0, xn[1] * yn + 1.0
    expected = np.exp(a_n) * xn[0] - 2 * xn[1] * yn - 2 * b_n + xn[0]
    for _ in range(3):  # a walk, then (second sight) a plan
        np.testing.assert_allclose(tape.gradient(d, y).numpy(), expected)


def test_structure_key_separates_aliasing_shapes_and_attributes():
    """x*x and x*y have the same ops and shapes but not the same structure; so do reductions
    over different axes, and the same ops on other shapes."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def square(x, y):
        return x * x

    def product(x, y):
        return x * y

    def over(axis):
        return lambda x, y: eager.reduce_sum(x * y, axis=axis) * 2.0

    for _ in range(3):
        for fn in (square, product, over(0), over(1)):
            for shape in ((3, 4), (2, 4)):
                args = [a[:shape[0]], b[:shape[0]]]
                walked, runs, _ = _walked_and_planned(fn, args)
                for run in runs:
                    _assert_same(walked, run, fn.__name__)
    # Interleaved, with a cache that keeps them all:
    tape_backward_plans.clear()
    x, y = eager.constant(a), eager.constant(b)
    for _ in range(4):
        for fn, expected in ((square, (2 * a, None)), (product, (b, a))):
            with eager.GradientTape() as tape:
                tape.watch([x, y])
                loss = eager.reduce_sum(fn(x, y))
            gx, gy = tape.gradient(loss, [x, y])
            np.testing.assert_allclose(gx.numpy(), expected[0])
            if expected[1] is None:
                assert gy is None
            else:
                np.testing.assert_allclose(gy.numpy(), expected[1])
    assert tape_backward_plans.plan_count() == 2


def test_indexed_slices_gradient_through_a_plan():
    params = eager.constant(np.arange(12.0).reshape(4, 3))
    indices = eager.constant([0, 2, 2])
    results = []
    for _ in range(3):
        with eager.GradientTape() as tape:
            tape.watch(params)
            loss = eager.reduce_sum(eager.gather(params, indices) * 3.0)
        results.append(tape.gradient(loss, params))
    assert tape_backward_plans.plan_count() == 1
    expected = np.zeros((4, 3))
    np.add.at(expected, [0, 2, 2], 3.0)
    for g in results:
        assert isinstance(g, eager.IndexedSlices)
        np.testing.assert_array_equal(eager.convert_to_tensor(g).numpy(), expected)


def test_variables_and_optimizer_step_through_a_plan():
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((5, 3))
    xs = rng.standard_normal((8, 5))

    def train(steps):
        w = eager.Variable(w0)
        x = eager.constant(xs)
        opt = eager.optimizers.SGD(0.1)
        for _ in range(steps):
            with eager.GradientTape() as tape:
                loss = eager.reduce_mean(eager.square(eager.matmul(x, w)))
            opt.apply_gradients([(tape.gradient(loss, w), w)])
        return w.numpy()

    tape_backward_plans.set_enabled(False)
    walked = train(5)
    tape_backward_plans.set_enabled(True)
    planned = train(5)
    assert tape_backward_plans.plan_count() == 1
    np.testing.assert_allclose(planned, walked, rtol=1e-12)


def test_no_plan_under_an_outer_tape_and_higher_order_still_right():
    x = eager.constant(np.array([0.3, -1.2, 2.0]))
    for _ in range(3):
        with eager.GradientTape() as outer:
            outer.watch(x)
            with eager.GradientTape() as inner:
                inner.watch(x)
                y = eager.reduce_sum(eager.tanh(x))
            g = inner.gradient(y, x)
        h = outer.gradient(g, x)
        t = np.tanh(x.numpy())
        np.testing.assert_allclose(h.numpy(), -2 * t * (1 - t * t))
    # Only the outer walk (no tape outside it) is planned; the inner one is recorded.
    assert tape_backward_plans.plan_count() == 1


def test_persistent_tape_inside_its_context_records_the_backward():
    x = eager.constant(np.array([1.0, 2.0]))
    with eager.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = eager.reduce_sum(x * x * x)
        for _ in range(3):
            g = tape.gradient(y, x)  # recorded on the tape itself: never planned
        gg = tape.gradient(eager.reduce_sum(g), x)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    np.testing.assert_allclose(gg.numpy(), 6 * x.numpy())
    assert tape_backward_plans.plan_count() == 0


def test_custom_gradient_is_walked():
    calls = []

    @eager.custom_gradient
    def clipped(x):
        def grad(dy):
            calls.append(1)
            return eager.clip_by_value(dy, -0.5, 0.5)
        return eager.identity(x), grad

    x = eager.constant(np.array([1.0, 2.0]))
    for _ in range(3):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.reduce_sum(clipped(x * 3.0))
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.5, 1.5])
    assert len(calls) == 3  # the Python gradient ran every time
    assert tape_backward_plans.plan_count() == 0


def test_disabled_plans_walk():
    tape_backward_plans.set_enabled(False)
    x = eager.constant(np.array([1.0, 2.0]))
    for _ in range(3):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.reduce_sum(eager.exp(x))
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.exp([1.0, 2.0]))
    assert tape_backward_plans.plan_count() == 0
    assert not tape_backward_plans.enabled()


def test_async_execution_is_walked():
    x = eager.constant(np.array([1.0, 2.0]))
    with eager.experimental.async_scope():
        for _ in range(3):
            with eager.GradientTape() as tape:
                tape.watch(x)
                y = eager.reduce_sum(eager.exp(x))
            g = tape.gradient(y, x)
        np.testing.assert_allclose(g.numpy(), np.exp([1.0, 2.0]))
    assert tape_backward_plans.plan_count() == 0


def test_plans_keep_no_tensors_alive():
    x = eager.constant(np.arange(6.0).reshape(2, 3))
    refs = []
    for _ in range(3):
        with eager.GradientTape() as tape:
            tape.watch(x)
            h = eager.exp(x)  # its output is kept by the tape for exp's gradient
            refs.append(weakref.ref(h))
            y = eager.reduce_sum(h)
        tape.gradient(y, x)
        del tape, h, y
    gc.collect()
    assert tape_backward_plans.plan_count() == 1
    assert all(r() is None for r in refs)


def test_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(tape_backward_plans, "MAX_PLANS", 4)
    for n in range(1, 12):
        x = eager.constant(np.ones(n))
        for _ in range(2):
            with eager.GradientTape() as tape:
                tape.watch(x)
                y = eager.reduce_sum(x * 2.0)
            np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.full(n, 2.0))
    assert len(tape_backward_plans._state.cache) <= 4


def test_compilation_stops_while_plans_are_not_reused(monkeypatch):
    """Structures seen exactly twice (a new shape every other step) would compile a plan each
    and never run one: after COMPILE_GUARD compilations, new plans wait for reuse."""
    monkeypatch.setattr(tape_backward_plans, "COMPILE_GUARD", 3)
    monkeypatch.setattr(tape_backward_plans, "MIN_RUNS_PER_PLAN", 2)

    def grad(x):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.reduce_sum(eager.exp(x))
        return tape.gradient(y, x)

    for n in range(1, 9):  # each shape twice: the second sight compiles, if allowed
        x = eager.constant(np.linspace(0, 1, n))
        for _ in range(2):
            np.testing.assert_allclose(grad(x).numpy(), np.exp(x.numpy()))
    assert tape_backward_plans.plan_count() == 3  # then 3 runs < 2 * 3 compiled: no more
    # Reuse reopens compilation: run the existing plans until runs >= 2 * compiled.
    x = eager.constant(np.linspace(0, 1, 1))
    for _ in range(10):
        grad(x)
    x = eager.constant(np.linspace(0, 1, 20))
    for _ in range(2):
        np.testing.assert_allclose(grad(x).numpy(), np.exp(x.numpy()))
    assert tape_backward_plans.plan_count() == 4


def test_threads_share_plans_and_get_their_own_gradients():
    """Four threads compute gradients of one tape structure at once (the plan is compiled by
    whichever thread gets there; all of them run it): each gets its own data's gradient."""
    w = eager.constant(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    errors = []

    def worker(k):
        try:
            rng = np.random.default_rng(k)
            for _ in range(40):
                xv = rng.standard_normal((5, 4))
                x = eager.constant(xv)
                with eager.GradientTape() as tape:
                    tape.watch(x)
                    loss = eager.reduce_sum(eager.tanh(eager.matmul(x, w)))
                g = tape.gradient(loss, x).numpy()
                t = np.tanh(xv @ w.numpy())
                np.testing.assert_allclose(g, (1 - t * t) @ w.numpy().T, rtol=1e-12)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert tape_backward_plans.plan_count() == 1


_STEPS = {
    "tanh": lambda h, x, w: eager.tanh(h),
    "square_plus_x": lambda h, x, w: h * h + x,
    "scale": lambda h, x, w: h * 0.5 - 1.0,
    "relu": lambda h, x, w: eager.nn.relu(h),
    "exp": lambda h, x, w: eager.exp(eager.clip_by_value(h, -5.0, 5.0)),
    "matmul": lambda h, x, w: eager.matmul(h, w),
    "bias": lambda h, x, w: h + w[0],
    "softmax": lambda h, x, w: eager.nn.softmax(h),
    "sum_keep": lambda h, x, w: eager.reduce_sum(h, axis=-1, keepdims=True) * h,
    "transpose_twice": lambda h, x, w: eager.transpose(eager.transpose(h) * 2.0),
    "mean_rows": lambda h, x, w: h - eager.reduce_mean(h, axis=0),
}


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.sampled_from(sorted(_STEPS)), min_size=1, max_size=6),
       rows=st.integers(1, 3), n=st.integers(1, 4), seed=st.integers(0, 1000),
       with_w=st.booleans())
def test_random_programs_planned_equal_walked(plan_form, steps, rows, n, seed, with_w):
    """Random chains of ops (aliasing, broadcasting, reductions, matmuls): the gradients from
    the plan (third run of a structure) equal the walk's, for the data of every run."""
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal((n, n))

    def gradients(xv):
        x = eager.constant(xv)
        w = eager.constant(w0)
        with eager.GradientTape() as tape:
            tape.watch([x, w] if with_w else [x])
            h = x
            for name in steps:
                h = _STEPS[name](h, x, w)
            loss = eager.reduce_sum(h * h)
        grads = tape.gradient(loss, [x, w])
        return [None if g is None else g.numpy() for g in grads]

    data = [rng.standard_normal((rows, n)) for _ in range(3)]
    tape_backward_plans.set_enabled(False)
    walked = [gradients(xv) for xv in data]
    tape_backward_plans.set_enabled(True)
    tape_backward_plans.clear()
    planned = [gradients(xv) for xv in data]
    assert tape_backward_plans.plan_count() == 1
    for w_run, p_run in zip(walked, planned):
        for a, b in zip(w_run, p_run):
            if a is None:
                assert b is None
            else:
                np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-13)


def test_targets_that_are_sources_and_several_targets():
    x = eager.constant(np.array([1.0, 2.0]))
    for _ in range(4):
        with eager.GradientTape() as tape:
            tape.watch(x)
        np.testing.assert_array_equal(tape.gradient(x, x).numpy(), [1.0, 1.0])
    for _ in range(4):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = x * 3.0
            z = eager.reduce_sum(y * y)
        gx = tape.gradient([y, x, z], x, output_gradients=[np.array([1.0, 0.5]), None, None])
        np.testing.assert_allclose(gx.numpy(), [3.0 + 1.0 + 18.0, 1.5 + 1.0 + 36.0])
    assert tape_backward_plans.plan_count() >= 1


def _plans():
    return [p for p in tape_backward_plans._state.cache.values()
            if p.__class__ is tape_backward_plans._Plan]


def test_a_scalar_targets_seed_is_a_constant_and_its_ones_fold_away(plan_form):
    """The default seed of a one-element target is no feed: the plan holds it as a constant,
    folding turns Sum's broadcast of it into ones, and `ones * x` reads as `x`, so the plan of
    sum(x * x) is one AddV2 fed x alone, with the walk's values (signed zero, inf, NaN)."""
    x = eager.constant(np.array([1.5, -0.0, np.inf, np.nan, -2.0], np.float32))

    def grad():
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.reduce_sum(x * x)
        return tape.gradient(y, x).numpy()

    tape_backward_plans.set_enabled(False)
    walked = grad()
    tape_backward_plans.set_enabled(True)
    runs = [grad() for _ in range(3)]
    (plan,) = _plans()
    program = plan.run.program
    assert [node.type for node in program.nodes] == ["AddV2"]
    assert len(program.feeds) == 1 and not program.constants
    for got in runs:
        assert got.dtype == walked.dtype
        np.testing.assert_array_equal(got, walked)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(walked))


@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (3,), (2, 2)])
def test_default_seeds_of_every_target_shape_plan_as_the_walk(shape, plan_form):
    """A one-element target's seed is a constant of the plan, a larger one's a feed (made per
    call); either way three calls give the walk's gradients, and only the feed kind feeds a
    seed."""
    rng = np.random.default_rng(len(shape))
    x = eager.constant(rng.standard_normal((2, *shape)))
    w = eager.constant(rng.standard_normal((2, *shape)))

    def grad():
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.reduce_sum(eager.exp(x) * w, axis=0)
        return tape.gradient(y, x).numpy()

    tape_backward_plans.set_enabled(False)
    walked = grad()
    tape_backward_plans.set_enabled(True)
    for _ in range(3):
        np.testing.assert_array_equal(grad(), walked)
    (plan,) = _plans()
    seeds = [v for v in plan.run.program.feeds
             if plan.run.program.value_names.get(v, "").startswith("seed")]
    assert len(seeds) == (0 if int(np.prod(shape)) == 1 else 1)


def test_single_source_calls_and_general_calls_share_plans(monkeypatch):
    """`gradient(y, x)` (the scalar-target planner's key, built directly) and `gradient(y, [x])`
    (the general key) key a tape the same way: one plan answers both, each call runs it, and
    the single-source call finds it without the general planner."""
    general = []
    planner = tape_backward._planner

    def counted(*args):
        general.append(1)
        return planner(*args)

    monkeypatch.setattr(tape_backward, "_planner", counted)
    x = eager.constant(np.array([0.5, -1.0, 2.0]))

    def grad(sources):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.reduce_sum(eager.exp(x) * x)
        return tape.gradient(y, sources)

    expected = np.exp(x.numpy()) * (1 + x.numpy())
    for sources in (x, x, [x], x, [x]):
        g = grad(sources)
        np.testing.assert_allclose((g[0] if isinstance(g, list) else g).numpy(), expected)
    assert tape_backward_plans.plan_count() == 1
    runs = tape_backward_plans._state.runs
    general.clear()
    grad(x)
    assert tape_backward_plans._state.runs == runs + 1 and not general
    grad([x])
    assert tape_backward_plans._state.runs == runs + 2 and len(general) == 1


def test_scalar_target_planner_declines_what_it_cannot_key():
    """A tape with a custom gradient on it, an integer or watched-only target, an unconnected
    source: the scalar-target planner leaves them to the general path, which gives TF's
    answers."""
    x = eager.constant(np.array([1.0, 2.0]))
    other = eager.constant(np.array([3.0]))

    @eager.custom_gradient
    def doubled(v):
        return v * 2.0, lambda dy: dy * 2.0

    for _ in range(3):
        with eager.GradientTape() as tape:
            tape.watch([x, other])
            y = eager.reduce_sum(doubled(x) * x)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), 4.0 * x.numpy())
        with eager.GradientTape() as tape:
            tape.watch([x, other])
            y = eager.reduce_sum(x * x)
        assert tape.gradient(y, other) is None
        with eager.GradientTape() as tape:
            tape.watch(x)
        np.testing.assert_array_equal(tape.gradient(x, x).numpy(), [1.0, 1.0])


def test_records_seen_as_recorded_ops_give_every_shape_and_dtype():
    """A record keeps one flat signature (links, shapes, dtypes of inputs then outputs); the
    RecordedOp a gradient rule sees splits it back: for the one- and two-input path
    (`record_eager`), several inputs, several outputs with an integer one, and a Python
    number's constant."""
    x = eager.constant(np.ones((2, 3), np.float32))
    y = eager.constant(np.ones((3,), np.float32))
    with eager.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        a = x * y  # two inputs, broadcasting
        b = eager.reduce_sum(a, axis=1)  # one input, attributes
        eager.concat([a, x, a], 0)  # three inputs
        values, indices = eager.math.top_k(b, k=1)  # an integer second output
        values * 2.0  # a Python number's constant
    f32, i32 = eager.float32, eager.int32
    expected = [
        ("Mul", [(2, 3), (3,)], [f32, f32], [(2, 3)], [f32]),
        ("Sum", [(2, 3)], [f32], [(2,)], [f32]),
        ("ConcatV2", [(2, 3)] * 3, [f32] * 3, [(6, 3)], [f32]),
        ("TopKV2", [(2,)], [f32], [(1,), (1,)], [f32, i32]),
        ("Mul", [(1,), ()], [f32, f32], [(1,)], [f32]),
    ]
    entries = tape._tape.as_recorded_ops()
    assert [e.name for e in entries] == [name for name, *_ in expected]
    for entry, (name, in_shapes, in_dtypes, out_shapes, out_dtypes) in zip(entries, expected):
        assert [tuple(s) for s in entry.input_shapes] == in_shapes, name
        assert list(entry.input_dtypes) == in_dtypes, name
        assert [tuple(s) for s in entry.output_shapes] == out_shapes, name
        assert list(entry.output_dtypes) == out_dtypes, name
        assert len(entry.links) == len(entry.input_ids) + len(entry.output_ids)
    assert entries[3].output_ids[1] == 0  # the indices are not followed
    assert entries[4].inputs[0] is values  # Mul keeps its inputs
