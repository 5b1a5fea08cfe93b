"""eager.cond / switch_case / while_loop: eager semantics, traced results equal eager ones, one
trace serving every branch, side effects only in the taken branch, gradients, errors."""

import traceback

import numpy as np
import pytest

import eager


def c(x, dtype=None):
    return eager.constant(x, dtype=dtype)


# -- eager -----------------------------------------------------------------------------------
def test_cond_eager_python_and_tensor_pred():
    assert eager.cond(True, lambda: 1, lambda: 2) == 1
    assert eager.cond(c(False), lambda: 1, lambda: 2) == 2
    out = eager.cond(c(True), lambda: {"a": c(1.0), "b": (c(2), c(3))}, lambda: None)
    assert out["a"].numpy() == 1.0 and out["b"][1].numpy() == 3


def test_cond_eager_errors():
    with pytest.raises(ValueError, match="scalar"):
        eager.cond(c([True, False]), lambda: 1, lambda: 2)
    with pytest.raises(TypeError, match="bool"):
        eager.cond(c(1.0), lambda: 1, lambda: 2)
    with pytest.raises(TypeError, match="callable"):
        eager.cond(True, 1, lambda: 2)


def test_switch_case_eager():
    fns = [lambda: c(10), lambda: c(20), lambda: c(30)]
    assert [eager.switch_case(c(i), fns).numpy() for i in (0, 1, 2, 7, -1)] == [10, 20, 30, 30, 30]
    assert eager.switch_case(5, fns, default=lambda: c(-1)).numpy() == -1
    assert eager.switch_case(1, {0: lambda: "a", 1: lambda: "b"}) == "b"
    assert eager.switch_case(0, [(1, lambda: "b"), (0, lambda: "a")]) == "a"
    with pytest.raises(ValueError):
        eager.switch_case(0, {0: lambda: 1, 2: lambda: 2})
    with pytest.raises(ValueError, match="scalar"):
        eager.switch_case(c([0, 1]), fns)


def test_while_loop_eager_matches_python():
    i, s = eager.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i * i),
                            [c(0), c(0)])
    assert (i.numpy(), s.numpy()) == (10, sum(k * k for k in range(10)))
    # nested structure and a single loop var returned bare
    out = eager.while_loop(lambda v: v["n"] < 3,
                           lambda v: {"n": v["n"] + 1, "p": (v["p"][0] * 2.0,)},
                           [{"n": c(0), "p": (c(1.0),)}])
    assert out[0]["n"].numpy() == 3 and out[0]["p"][0].numpy() == 8.0
    assert eager.while_loop(lambda x: x < 100, lambda x: x * 3, c(1)).numpy() == 243


def test_while_loop_eager_maximum_iterations():
    i, = eager.while_loop(lambda i: True, lambda i: (i + 1,), (c(0),), maximum_iterations=7)
    assert i.numpy() == 7
    i, = eager.while_loop(lambda i: i < 3, lambda i: (i + 1,), (c(0),), maximum_iterations=c(7))
    assert i.numpy() == 3
    with pytest.raises(ValueError, match="scalar"):
        eager.while_loop(lambda i: True, lambda i: i, (c(0),), maximum_iterations=c([1, 2]))


def test_while_loop_eager_shape_checks():
    with pytest.raises(ValueError, match="shape_invariants"):
        eager.while_loop(lambda x: eager.size(x) < 4, lambda x: eager.concat([x, x], 0),
                         [eager.ones([1])])
    x, = eager.while_loop(lambda x: eager.size(x) < 4, lambda x: eager.concat([x, x], 0),
                          [eager.ones([1])], shape_invariants=[eager.TensorShape([None])])
    assert x.shape == (4,)
    with pytest.raises(TypeError):
        eager.while_loop(lambda x: x < 3, lambda x: eager.cast(x, eager.float32) + 1.0, [c(0)])
    with pytest.raises(ValueError):
        eager.while_loop(lambda a, b: a < 3, lambda a, b: (a + 1,), [c(0), c(0)])
    with pytest.raises(TypeError):
        eager.while_loop(lambda a: a[0] < 3, lambda a: ([a[0] + 1],), [(c(0),)])


def test_eager_gradients():
    x = c(3.0)
    with eager.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = eager.cond(x > 2.0, lambda: x * x, lambda: -x)
        z = eager.cond(x > 5.0, lambda: x * x, lambda: -x)
        _, p = eager.while_loop(lambda i, p: i < 4, lambda i, p: (i + 1, p * x), [c(0), c(1.0)])
    assert tape.gradient(y, x).numpy() == pytest.approx(6.0)
    assert tape.gradient(z, x).numpy() == pytest.approx(-1.0)
    assert tape.gradient(p, x).numpy() == pytest.approx(4 * 27.0)


# -- traced ----------------------------------------------------------------------------------
def test_traced_cond_matches_eager_one_trace():
    def f(p, x):
        return eager.cond(p, lambda: (x * 2.0, {"k": x + 1.0}), lambda: (x - 1.0, {"k": x}))

    tf_f = eager.function(f)
    for p in (True, False, True):
        for x in (3.0, -2.0):
            got, want = tf_f(c(p), c(x)), f(c(p), c(x))
            assert got[0].numpy() == want[0].numpy() and got[1]["k"].numpy() == want[1]["k"].numpy()
    assert tf_f.experimental_get_tracing_count() == 1


def test_traced_cond_shapes_relax():
    @eager.function
    def f(p):
        return eager.cond(p, lambda: eager.zeros([2, 3]), lambda: eager.ones([4, 3]))

    graph = f.get_concrete_function(c(True)).graph
    assert [o.op.type if hasattr(o.op, "type") else None for o in graph.outputs]
    out_shapes = [t.shape.as_list() for t in graph.get_operation_by_name("If").outputs]
    assert out_shapes == [[None, 3]]
    assert f(c(True)).shape == (2, 3) and f(c(False)).shape == (4, 3)


def test_traced_switch_case_matches_eager():
    def f(i, x):
        return eager.switch_case(i, [lambda: x, lambda: x * 10.0, lambda: x * 100.0],
                                 default=lambda: -x)

    tf_f = eager.function(f)
    for i in (0, 1, 2, 3, -4):
        assert tf_f(c(i), c(1.5)).numpy() == f(c(i), c(1.5)).numpy()
    assert tf_f.experimental_get_tracing_count() == 1


def test_traced_while_matches_eager_one_trace():
    def f(n, x):
        def body(i, acc):
            return i + 1, {"s": acc["s"] + eager.cast(i, eager.float32) * x,
                           "p": eager.cond(i % 2 == 0, lambda: acc["p"] * x, lambda: acc["p"])}
        return eager.while_loop(lambda i, acc: i < n, body,
                                [c(0), {"s": c(0.0), "p": c(1.0)}], maximum_iterations=8)

    tf_f = eager.function(f)
    for n in (0, 3, 6, 20):
        got, want = tf_f(c(n), c(1.5)), f(c(n), c(1.5))
        assert got[0].numpy() == want[0].numpy()
        assert got[1]["s"].numpy() == pytest.approx(want[1]["s"].numpy())
        assert got[1]["p"].numpy() == pytest.approx(want[1]["p"].numpy())
    assert tf_f.experimental_get_tracing_count() == 1


def test_traced_while_shape_invariants():
    @eager.function
    def f(n):
        return eager.while_loop(lambda x: eager.size(x) < n, lambda x: eager.concat([x, x], 0),
                                [eager.ones([1])], shape_invariants=[eager.TensorShape([None])])

    assert f(c(5))[0].shape == (8,) and f(c(1))[0].shape == (1,)

    @eager.function
    def g(n):
        return eager.while_loop(lambda x: eager.size(x) < n, lambda x: eager.concat([x, x], 0),
                                [eager.ones([1])])

    with pytest.raises(ValueError, match="shape_invariants"):
        g(c(5))


def test_traced_nested_cond_captures_outer_tensors():
    @eager.function
    def f(p, q, x):
        y = x * 2.0
        return eager.cond(p, lambda: eager.cond(q, lambda: y + 1.0, lambda: x + 2.0),
                          lambda: y + 3.0)

    got = [f(c(a), c(b), c(1.0)).numpy() for a in (True, False) for b in (True, False)]
    assert got == [3.0, 3.0, 5.0, 5.0]
    assert f.experimental_get_tracing_count() == 1


def test_traced_side_effects_only_in_taken_branch():
    v = eager.Variable(0.0)

    @eager.function
    def f(p):
        def yes():
            v.assign_add(1.0)
            return c(1)
        return eager.cond(p, yes, lambda: c(0))

    assert [f(c(b)).numpy() for b in (True, False, True, False)] == [1, 0, 1, 0]
    assert v.numpy() == 2.0

    w = eager.Variable(1.0)

    @eager.function
    def g(n):
        # ordering: the assign after the loop sees the loop's assigns
        def body(i):
            w.assign(w * 2.0)
            return i + 1

        eager.while_loop(lambda i: i < n, body, [c(0)])
        w.assign_add(1.0)
        return w.read_value()

    assert g(c(3)).numpy() == 9.0


def test_traced_errors():
    @eager.function
    def structure(p):
        return eager.cond(p, lambda: (c(1), c(2)), lambda: c(1))

    with pytest.raises(ValueError, match="structure"):
        structure(c(True))

    @eager.function
    def types(p):
        return eager.cond(p, lambda: c(1), lambda: c(1.0))

    with pytest.raises(TypeError):
        types(c(True))

    @eager.function
    def seqtypes(p):
        return eager.cond(p, lambda: [c(1)], lambda: (c(1),))

    with pytest.raises(TypeError):
        seqtypes(c(True))

    @eager.function
    def nonscalar(p):
        return eager.cond(p, lambda: c(1), lambda: c(2))

    with pytest.raises(ValueError, match="scalar"):
        nonscalar(c([True, False]))


def test_python_if_on_symbolic_tensor_still_names_cond():
    @eager.function(autograph=False)  # with AutoGraph, the `if` becomes an eager.cond
    def f(p):
        if p:
            return c(1)
        return c(2)

    with pytest.raises(TypeError, match="cond"):
        f(c(True))


def test_traced_gradient_of_eager_ops_outside_cond_unaffected():
    # A tape around a function call whose cond does not feed the loss works as before.
    x = c(2.0)

    @eager.function
    def f(p, x):
        return x * x, eager.cond(p, lambda: c(1.0), lambda: c(0.0))

    with eager.GradientTape() as tape:
        tape.watch(x)
        y, _ = f(c(True), x)
    assert tape.gradient(y, x).numpy() == 4.0


def test_numpy_pred_and_python_bool_while_tracing():
    assert eager.cond(np.bool_(True), lambda: 1, lambda: 2) == 1

    @eager.function
    def f(x):
        return eager.cond(True, lambda: x + 1.0, lambda: x)  # known: only one branch traced

    assert f(c(1.0)).numpy() == 2.0


# -- gradients through traced control flow (the ops' gradients, or replayed under a tape) -------
def _grads(fn, args, sources=None):
    """fn(*args) and its gradients w.r.t. the floating args (None for the others) and
    `sources` (e.g. variables), under one tape."""
    floats = [a for a in args if a.dtype.is_floating]
    with eager.GradientTape() as tape:
        for a in floats:
            tape.watch(a)
        y = fn(*args)
    grads = iter(tape.gradient(y, floats + list(sources or ())))
    return y, [next(grads) if a.dtype.is_floating else None for a in args] + list(grads)


def _assert_traced_equals_eager(body, args, sources=None, traced=None):
    """The traced body's value and gradients equal the eager body's; returns the traced ones."""
    traced = traced or eager.function(body)
    y_e, g_e = _grads(body, args, sources)
    y_t, g_t = _grads(traced, args, sources)
    np.testing.assert_allclose(y_t.numpy(), y_e.numpy(), rtol=1e-6)
    for a, b in zip(g_t, g_e):
        if b is None:
            # an input only the branch not taken (or a loop that ran zero times) reads: None
            # eagerly; zeros through the traced op's gradient, as TensorFlow's tf.function
            assert a is None or not np.any(a.numpy())
        else:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    return y_t, g_t


def _finite_difference(fn, args, k, eps=1e-3):
    hi = list(args)
    lo = list(args)
    hi[k] = c(args[k].numpy() + eps)
    lo[k] = c(args[k].numpy() - eps)
    return (fn(*hi).numpy() - fn(*lo).numpy()) / (2 * eps)


def test_gradient_through_traced_cond_both_branches():
    v = eager.Variable(3.0)

    def body(p, x, y):
        return eager.cond(p, lambda: x * x * y + v * x, lambda: eager.sin(x) * v * v)

    f = eager.function(body)
    for pred, expected in ((True, (2 * 2.0 * 5.0 + 3.0, 4.0, 2.0)),
                           (False, (np.cos(2.0) * 9.0, 0.0, 2 * 3.0 * np.sin(2.0)))):
        args = (c(pred), c(2.0), c(5.0))
        y, (_, gx, gy, gv) = _assert_traced_equals_eager(body, args, [v], traced=f)
        np.testing.assert_allclose(y.numpy(), f(*args).numpy())  # forward value unchanged
        gy = 0.0 if gy is None else gy.numpy()
        np.testing.assert_allclose([gx.numpy(), gy, gv.numpy()], expected, rtol=1e-6)
        np.testing.assert_allclose(gx.numpy(), _finite_difference(f, args, 1), rtol=1e-3)
    assert f.experimental_get_tracing_count() == 1  # one trace served both branches


def test_gradient_through_traced_switch_case():
    def body(i, x):
        return eager.switch_case(i, [lambda: x * 2.0, lambda: x * x * x, lambda: eager.exp(x)])

    for i in (0, 1, 2, 7):  # 7: out of range, the last branch
        args = (c(i, eager.int32), c(1.5))
        _, (gi, gx) = _assert_traced_equals_eager(body, args)
        assert gi is None
        np.testing.assert_allclose(
            gx.numpy(), _finite_difference(eager.function(body), args, 1), rtol=1e-3)


def test_gradient_through_traced_while_power():
    def body(x, n):
        _, y = eager.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x),
                                (c(0, eager.int32), eager.ones_like(x)))
        return y

    for n in (0, 1, 4):
        args = (c([1.5, -2.0]), c(n, eager.int32))
        y, (gx, _) = _assert_traced_equals_eager(body, args)
        np.testing.assert_allclose(y.numpy(), np.array([1.5, -2.0]) ** n, rtol=1e-6)
        if n == 0:  # y = ones_like(x): None eagerly, zeros through the While's gradient
            assert gx is None or not np.any(gx.numpy())
        else:
            np.testing.assert_allclose(gx.numpy(), n * np.array([1.5, -2.0]) ** (n - 1),
                                       rtol=1e-6)


def test_gradient_through_traced_while_maximum_iterations():
    def body(x):
        return eager.while_loop(lambda y: y < 1000.0, lambda y: y * x, [x],
                                maximum_iterations=3)[0]

    args = (c(2.0),)
    y, (gx,) = _assert_traced_equals_eager(body, args)
    assert y.numpy() == 16.0  # x * x**3, stopped by maximum_iterations
    np.testing.assert_allclose(gx.numpy(), 4 * 2.0 ** 3, rtol=1e-6)


def test_gradient_through_nested_cond_in_while_with_variable():
    v = eager.Variable(0.5)

    def body(x):
        def step(i, y):
            y = eager.cond(i % 2 == 0, lambda: y * x, lambda: y + v * x)
            return i + 1, y
        return eager.while_loop(lambda i, y: i < 4, step, (c(0), x))[1]

    args = (c(1.25),)
    _, (gx, gv) = _assert_traced_equals_eager(body, args, [v])
    np.testing.assert_allclose(gx.numpy(), _finite_difference(eager.function(body), args, 0),
                               rtol=1e-3)
    assert gv is not None


def test_second_order_gradient_through_traced_cond():
    @eager.function
    def f(p, x):
        return eager.cond(p, lambda: x * x * x, lambda: eager.sin(x))

    for pred, d2 in ((True, 6 * 2.0), (False, -np.sin(2.0))):
        x = c(2.0)
        with eager.GradientTape() as outer:
            outer.watch(x)
            with eager.GradientTape() as inner:
                inner.watch(x)
                y = f(c(pred), x)
            dy = inner.gradient(y, x)
        np.testing.assert_allclose(outer.gradient(dy, x).numpy(), d2, rtol=1e-6)


def test_traced_control_flow_stays_one_op_without_tape_and_when_inlined():
    # No tape: the direct path runs the If op. An outer trace calling the function keeps one
    # If node (not expanded), and gradients through the outer function still work.
    @eager.function
    def inner(p, x):
        return eager.cond(p, lambda: x * x, lambda: -x)

    @eager.function
    def outer(p, x):
        return inner(p, x) + 1.0

    assert outer(c(True), c(3.0)).numpy() == 10.0
    graph = outer.get_concrete_function(c(True), c(3.0)).graph
    assert [op.type for op in graph.get_operations()].count("If") == 1
    x = c(3.0)
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = outer(c(False), x)
    assert tape.gradient(y, x).numpy() == -1.0


# -- errors name the line inside the body ------------------------------------------------------


def _failing_body(i, a):
    return i + 1, eager.gather(a, i * 5 + eager.zeros([4], eager.int32))  # fails on the second pass


def _failing_branch(a, k):
    return eager.gather(a, k)


_BODY_LINE = _failing_body.__code__.co_firstlineno + 1
_BRANCH_LINE = _failing_branch.__code__.co_firstlineno + 1


def _loop(a):
    return eager.while_loop(lambda i, a: i < 2, _failing_body, (eager.constant(0), a))


def _branches(a, k):
    return eager.cond(k > 0, lambda: _failing_branch(a, k), lambda: a[0])


def _report(exc):
    return "".join(traceback.format_exception(exc))


@pytest.mark.parametrize("mode", ["eager", "async", "traced, first call", "traced, compiled"])
@pytest.mark.parametrize("case", ["while_loop", "cond"])
def test_an_error_inside_a_body_or_branch_names_its_line(mode, case, cpu_only):
    """A kernel failing inside a `while_loop` body or a `cond` branch names the failing line in
    the body (a traceback frame eagerly, "issued at" asynchronously, a "Detected at node" note
    when traced), not only the line of the `while_loop` / `cond` call. (On the CPU, where a
    kernel's error is raised by the op that failed; a simulated GPU's stream reports it at the
    next wait.)"""
    fn, args, line = ((_loop, (eager.ones([4]),), _BODY_LINE) if case == "while_loop"
                      else (_branches, (eager.ones([4]), eager.constant(9)), _BRANCH_LINE))
    where = f"{__file__}:{line}"
    if mode == "async":
        with pytest.raises(eager.errors.InvalidArgumentError) as raised:
            with eager.experimental.async_scope():
                eager.nest.flatten(fn(*args))[-1].numpy()
        assert f"issued at {where}" in str(raised.value)
        return
    run = fn if mode == "eager" else eager.function(fn)
    if mode == "traced, compiled":
        with pytest.raises(eager.errors.InvalidArgumentError):
            run(*args)  # the first call runs op by op; the second runs the compiled program
    with pytest.raises(eager.errors.InvalidArgumentError, match="GatherV2") as raised:
        run(*args)
    report = _report(raised.value)
    if mode == "eager":
        assert f'File "{__file__}", line {line}, in ' in report
    else:
        op = "While" if case == "while_loop" else "If"
        notes = raised.value.__notes__
        assert any(f"Detected at node 'GatherV2' (GatherV2) defined at {where}: " in n
                   for n in notes), notes
        assert any(f"Detected at node '{op}' ({op})" in n for n in notes), notes  # the call


def test_traced_cond_traces_true_fn_first():
    # TensorFlow 2.21 traces tf.cond's true_fn before its false_fn (and switch_case's branches
    # in order), so Python side effects of tracing come in that order.
    seen = []

    @eager.function
    def f(x):
        a = eager.cond(x > 0, lambda: seen.append("true") or x, lambda: seen.append("false") or -x)
        b = eager.switch_case(eager.constant(1), [lambda: seen.append("b0") or x,
                                                  lambda: seen.append("b1") or x,
                                                  lambda: seen.append("b2") or x])
        return a + b

    assert int(f(c(2))) == 4 and int(f(c(-2))) == 0
    assert seen == ["true", "false", "b0", "b1", "b2"]


def test_a_loop_runs_its_body_compiled_from_the_second_run_with_the_same_values_and_effects():
    # The first run of a loop's condition and body goes op by op; later runs call the graphs'
    # compiled programs. Every call gives the Python loop's values, and the body's variable
    # update happens once per iteration in both.
    v = eager.Variable(0.0)

    @eager.function
    def power_sum(x):
        def body(i, acc):
            v.assign_add(1.0)
            return i + 1, acc * x + eager.cast(i, eager.float32)

        return eager.while_loop(lambda i, acc: i < 5, body,
                                (eager.constant(0), eager.constant(1.0)))[1]

    def by_hand(x):
        acc = 1.0
        for i in range(5):
            acc = acc * x + i
        return acc

    for calls, x in enumerate((2.0, 3.0, -1.5, 2.0), start=1):
        assert float(power_sum(eager.constant(x))) == pytest.approx(by_hand(x), rel=1e-6)
        assert float(v) == 5.0 * calls
    graph = power_sum.get_concrete_function(eager.constant(2.0)).graph
    (loop,) = [op for op in graph.get_operations() if op.type == "While"]
    body = loop.attrs["body"]
    assert body.cond.__dict__.get("_compiled_program") is not None
    assert body.body.__dict__.get("_compiled_program") is not None
