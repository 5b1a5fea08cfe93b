"""Gradient functions of the control-flow ops (`eager.control_flow.control_flow_grad`).

A tape opened *inside* a traced function records `If`/`Case`/`While` as one op each (the graph
is being built, nothing is replayed), so its `gradient` call runs these ops' gradient functions
and emits gradient control flow into the graph. Every test compares with the same code run
eagerly (Python control flow, ordinary op gradients) and, where cheap, with finite differences;
graph contents show that the symbolic path was taken.
"""

import collections

import numpy as np
import pytest
from hypothesis import given, strategies as st

import eager
from eager.control_flow import ops as cf_ops
from gradcheck import derivatives
from eager.control_flow.control_flow_grad import NotRecomputableError, recompute_issue
from eager.ops import list_ops
from eager.runtime.graph_runner import replay_graph


def c(x, dtype=None):
    return eager.constant(x, dtype=dtype)


def tape_gradient(fn, sources=()):
    """`g(*args)`: fn(*args) and its gradients w.r.t. the float args then `sources`, computed
    with a tape opened inside g (so, traced, the tape records control flow as one op)."""
    def g(*args):
        floats = [a for a in args if a.dtype.is_floating]
        with eager.GradientTape() as tape:
            for a in floats:
                tape.watch(a)
            y = fn(*args)
        return y, tape.gradient(y, floats + list(sources))
    return g


def check(fn, args, sources=(), fd=True, rtol=1e-5):
    """The traced tape's value and gradients equal eager execution's (an eager None must be a
    traced None or zeros: the traced op is connected even when no iteration/branch used the
    input, as in TensorFlow) and finite differences; returns the traced function."""
    g = tape_gradient(fn, sources)
    traced = eager.function(g)
    y_e, grads_e = g(*args)
    y_t, grads_t = traced(*args)
    np.testing.assert_allclose(y_t.numpy(), y_e.numpy(), rtol=rtol)
    for a, b in zip(grads_t, grads_e):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=1e-6)
    if fd:
        floats = [k for k, a in enumerate(args) if a.dtype.is_floating]
        for k, grad in zip(floats, grads_t):
            expected = _finite_difference(fn, args, k)
            got = 0.0 if grad is None else grad.numpy()
            np.testing.assert_allclose(got, expected, rtol=2e-2, atol=2e-3)
    # a second call runs the compiled program: same values
    y_2, grads_2 = traced(*args)
    np.testing.assert_allclose(y_2.numpy(), y_t.numpy(), rtol=1e-6)
    for a, b in zip(grads_2, grads_t):
        if a is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    return traced


def _finite_difference(fn, args, k, eps=1e-3):
    x = np.array(args[k].numpy(), dtype=np.float64)
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        f_hi = np.sum(fn(*_replace(args, k, hi)).numpy().astype(np.float64))
        f_lo = np.sum(fn(*_replace(args, k, lo)).numpy().astype(np.float64))
        grad[idx] = (f_hi - f_lo) / (2 * eps)
    return grad


def _replace(args, k, value):
    out = list(args)
    out[k] = c(np.asarray(value, args[k].dtype.as_numpy_dtype))
    return out


def op_types(traced, *args):
    graph = traced.get_concrete_function(*args).graph
    return collections.Counter(op.type for op in graph.get_operations()), graph


def all_op_types(graph):
    """Op types in `graph` and every sub-graph of its control-flow ops."""
    found = collections.Counter()
    for op in graph.get_operations():
        found[op.type] += 1
        body = op.attrs.get("body")
        for sub in getattr(body, "branches", ()) or ((body.cond, body.body) if isinstance(
                body, cf_ops.WhileBody) else ()):
            found.update(all_op_types(sub))
    return found


# -- the symbolic path is the one taken ------------------------------------------------------------
def test_while_recorded_as_one_op_accumulates_and_gets_a_gradient_while():
    def fn(x):
        return eager.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * x), (0, x))[1]

    traced = check(fn, (c(1.3),))
    _, (g,) = traced(c(2.0))
    assert g.numpy() == pytest.approx(6 * 2.0 ** 5)  # x * x**5
    types, graph = op_types(traced, c(2.0))
    assert types["While"] == 2
    forward, backward = [op for op in graph.get_operations() if op.type == "While"]
    body = forward.attrs["body"]
    assert body.accumulate == (0, 1)  # the int counter and the float accumulator are pushed
    assert len(forward.outputs) == 2 + 1 + 2  # loop vars, iteration count, two TensorLists
    assert backward.attrs["body"].accumulate is None  # nothing differentiates the gradient
    assert all_op_types(backward.attrs["body"].body)["TensorListGetItem"] == 2


def test_while_loop_returns_only_user_vars_when_accumulating():
    @eager.function
    def f(x):
        with eager.GradientTape() as tape:
            tape.watch(x)
            out = eager.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0), (0, x))
        assert len(out) == 2
        return out[1]

    assert f(c(1.5)).numpy() == 12.0


def test_no_accumulators_without_a_recording_tape():
    @eager.function
    def f(x):
        return eager.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), (0, x))[1]

    graph = f.get_concrete_function(c(2.0)).graph
    (op,) = [op for op in graph.get_operations() if op.type == "While"]
    assert op.attrs["body"].accumulate is None and len(op.outputs) == 2


def test_cond_gradient_is_an_if_both_branches():
    v = eager.Variable(3.0)

    def fn(p, x, y):
        return eager.cond(p, lambda: x * x * y + v * x, lambda: eager.sin(x) * v * v)

    for pred in (True, False):
        traced = check(fn, (c(pred), c(2.0), c(5.0)), [v])
    types, _ = op_types(traced, c(True), c(2.0), c(5.0))
    assert types["If"] == 2  # the forward cond and its gradient
    _, (gx, gy, gv) = traced(c(False), c(2.0), c(5.0))
    assert gy.numpy() == 0.0  # y is read only by the branch not taken
    np.testing.assert_allclose(gv.numpy(), 2 * 3.0 * np.sin(2.0), rtol=1e-6)


def test_nested_cond():
    def fn(p, q, x):
        return eager.cond(p, lambda: eager.cond(q, lambda: x * x * x, lambda: x * 3.0),
                          lambda: eager.exp(x) * x)

    for p in (True, False):
        for q in (True, False):
            traced = check(fn, (c(p), c(q), c(0.7)))
    assert all_op_types(op_types(traced, c(True), c(True), c(0.7))[1])["If"] >= 4


def test_switch_case_with_variable_read_by_one_branch():
    v = eager.Variable([1.0, 2.0])

    def fn(i, x):
        return eager.switch_case(i, [lambda: x * 2.0, lambda: eager.reduce_sum(v * x),
                                     lambda: eager.exp(x)])

    for i in (0, 1, 2, 7):  # 7: out of range, the last branch
        traced = check(fn, (c(i), c(0.4)), [v])
    _, (_, gv) = traced(c(0), c(0.4))
    np.testing.assert_array_equal(gv.numpy(), [0.0, 0.0])
    _, (_, gv) = traced(c(1), c(0.4))
    np.testing.assert_allclose(gv.numpy(), [0.4, 0.4])
    assert op_types(traced, c(1), c(0.4))[0]["Case"] == 2


def test_cond_reading_a_tensorlist_in_one_branch():
    # The list's gradient is a list; the branch that does not read it gives a list of zeros.
    def fn(p, x):
        lst = list_ops.tensor_list_from_tensor(x * 2.0, element_shape=[])
        return eager.cond(p, lambda: list_ops.tensor_list_get_item(lst, 1, eager.float32, []) * 3.0,
                          lambda: x[0] * x[1])

    for p in (True, False):
        traced = check(fn, (c(p), c([1.0, 2.0])))
    assert all_op_types(op_types(traced, c(True), c([1.0, 2.0]))[1])["TensorListZerosLike"] == 1


def test_complex_loop_variable():
    def g(x):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), (0, x))[1]
            y = eager.math.real(y * eager.math.conj(y))
        return y, tape.gradient(y, x)

    z = c(np.complex64(1 + 0.5j))
    (y_e, d_e), (y_t, d_t) = g(z), eager.function(g)(z)
    np.testing.assert_allclose([y_t.numpy(), d_t.numpy()], [y_e.numpy(), d_e.numpy()], rtol=1e-6)


def test_while_maximum_iterations():
    def fn(x):
        return eager.while_loop(lambda y: y < 1000.0, lambda y: y * x, [x],
                                maximum_iterations=3)[0]

    traced = check(fn, (c(2.0),))
    y, (g,) = traced(c(2.0))
    assert y.numpy() == 16.0 and g.numpy() == pytest.approx(4 * 2.0 ** 3)


def test_while_maximum_iterations_tensor_and_cond_stop():
    def fn(x, m):
        return eager.while_loop(lambda i, y: y < 50.0, lambda i, y: (i + 1, y * x + 1.0),
                                (0, x), maximum_iterations=m)[1]

    for m in (0, 2, 10):
        check(fn, (c(1.7), c(m)))


def test_while_body_reads_variable():
    v = eager.Variable(1.5)

    def fn(x):
        return eager.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * v + x * x),
                                (0, x))[1]

    traced = check(fn, (c(0.8),), [v])
    _, (gx, gv) = traced(c(0.8))
    # finite difference in the variable
    base = v.numpy()
    v.assign(base + 1e-3)
    hi = fn(c(0.8)).numpy()
    v.assign(base - 1e-3)
    lo = fn(c(0.8)).numpy()
    v.assign(base)
    np.testing.assert_allclose(gv.numpy(), (hi - lo) / 2e-3, rtol=1e-2)


def test_cond_inside_while_with_variable():
    v = eager.Variable(0.5)

    def fn(x):
        def step(i, y):
            y = eager.cond(i % 2 == 0, lambda: y * x, lambda: y + v * x)
            return i + 1, y
        return eager.while_loop(lambda i, y: i < 4, step, (c(0), x))[1]

    traced = check(fn, (c(1.25),), [v])
    assert all_op_types(op_types(traced, c(1.25))[1])["If"] >= 2


def test_while_inside_cond_and_while_inside_while():
    def fn(p, x):
        def inner(y):
            return eager.while_loop(lambda j, z: j < 2, lambda j, z: (j + 1, z * x), (0, y))[1]
        looped = eager.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, inner(y)), (0, x))[1]
        return eager.cond(p, lambda: looped, lambda: inner(x) + x)

    for p in (True, False):
        check(fn, (c(p), c(1.1)))


def test_loop_vars_of_several_dtypes():
    def fn(x):
        _, a, b = eager.while_loop(
            lambda i, a, b: i < 3,
            lambda i, a, b: (i + 1, a * eager.cast(b, eager.float32) + 1.0,
                             b * eager.cast(a, eager.float64)),
            (0, x, eager.cast(x, eager.float64)))
        return a + eager.cast(b, eager.float32)

    traced = check(fn, (c(0.7),))
    forward = [op for op in op_types(traced, c(0.7))[1].get_operations() if op.type == "While"][0]
    assert [s.dtype for s in forward.attrs["body"].specs] == [eager.int32, eager.float32,
                                                              eager.float64]


def test_float64_argument():
    def fn(x):
        return eager.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, eager.sin(a) + x),
                                (0, x))[1]

    check(fn, (c(np.array([0.3, -1.2])),))


def test_loop_that_runs_zero_times():
    def through_var(x, n):
        return eager.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * x), (0, x))[1]

    def only_captured(x, n):
        return eager.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * x),
                                (0, eager.ones_like(x)))[1]

    traced = check(through_var, (c(2.0), c(0)))
    assert traced(c(2.0), c(0))[1][0].numpy() == 1.0  # y = x
    traced = check(only_captured, (c(2.0), c(0)))
    g = traced(c(2.0), c(0))[1][0]
    assert g is None or g.numpy() == 0.0
    check(only_captured, (c(2.0), c(3)))


def test_shape_invariants_keep_working():
    w = eager.Variable(0.5)

    def fn(x):
        return eager.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * w * x + 1.0),
                                [0, x], shape_invariants=[eager.TensorShape([]),
                                                          eager.TensorShape([None])])[1]

    traced = check(fn, (c([1.0, 2.0]),), [w])
    forward = [op for op in op_types(traced, c([1.0, 2.0]))[1].get_operations()
               if op.type == "While"][0]
    assert forward.attrs["body"].specs[1].shape.as_list() == [None]


def test_shape_invariant_violation_still_raises():
    @eager.function
    def f(x):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.while_loop(lambda s: eager.size(s) < 4, lambda s: eager.concat([s, s], 0),
                                 [x])[0]
        return tape.gradient(y, x)

    with pytest.raises(ValueError, match="shape_invariants"):
        f(c([1.0]))


# -- higher order ----------------------------------------------------------------------------------
def _second(fn):
    def g(*args):
        _, d, dd = derivatives(lambda x: fn(*args[:-1], x), args[-1], 2)
        return d, dd
    return g


def test_second_order_cond():
    def fn(p, x):
        return eager.cond(p, lambda: x * x * x, lambda: eager.sin(x) * x)

    g = _second(fn)
    traced = eager.function(g)
    for p in (True, False):
        d_t, dd_t = traced(c(p), c(1.3))
        d_e, dd_e = g(c(p), c(1.3))
        np.testing.assert_allclose([d_t.numpy(), dd_t.numpy()], [d_e.numpy(), dd_e.numpy()],
                                   rtol=1e-5)
    expected = 6 * 1.3
    assert traced(c(True), c(1.3))[1].numpy() == pytest.approx(expected, rel=1e-5)
    assert op_types(traced, c(True), c(1.3))[0]["If"] == 3  # forward, gradient, its gradient


def test_third_order_cond():
    @eager.function
    def f(x):
        return derivatives(lambda x: eager.cond(x > 0, lambda: x ** 4, lambda: x), x, 3)[3]

    assert f(c(2.0)).numpy() == pytest.approx(24 * 2.0)
    assert f(c(-2.0)).numpy() == 0.0


def test_second_order_while():
    def fn(x):
        return eager.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * eager.sin(x)),
                                (0, x))[1]

    g = _second(fn)
    traced = eager.function(g)
    d_t, dd_t = traced(c(0.9))
    d_e, dd_e = g(c(0.9))
    np.testing.assert_allclose([d_t.numpy(), dd_t.numpy()], [d_e.numpy(), dd_e.numpy()],
                               rtol=1e-5)
    graph = op_types(traced, c(0.9))[1]
    loops = [op for op in graph.get_operations() if op.type == "While"]
    # forward, its gradient (accumulating: the outer tape follows it), the gradient's gradient,
    # and the forward's gradient under the outer tape, which reads gradients of the lists
    assert len(loops) == 4
    assert loops[1].attrs["body"].accumulate is not None
    assert all_op_types(loops[3].attrs["body"].body)["TensorListGetItem"] == 3


def test_third_and_fourth_order_while():
    def loop(x):
        return eager.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), (0, x))[1]

    # Higher-order loops carry TensorList gradients, accumulated as lists of lists: x**4 and
    # its derivatives 4 x**3, 12 x**2, 24 x, 24.
    values = eager.function(lambda x: derivatives(loop, x, 4))(c(2.0))
    assert [float(v) for v in values] == [16.0, 32.0, 48.0, 48.0, 24.0]


# -- what cannot be recomputed ----------------------------------------------------------------
def test_stateful_branch_is_refused_with_a_clear_error():
    @eager.function
    def f(x):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.cond(x > 0, lambda: x * eager.random.uniform([]), lambda: x)
        return tape.gradient(y, x)

    with pytest.raises(eager.errors.UnimplementedError, match="RandomUniform"):
        f(c(1.0))
    assert issubclass(NotRecomputableError, LookupError)


def test_stateful_loop_body_under_eager_tape_falls_back_to_replay():
    v = eager.Variable(0.0)

    @eager.function
    def f(x):
        def body(i, a):
            v.assign_add(1.0)
            return i + 1, a * x
        return eager.while_loop(lambda i, a: i < 3, body, (0, x))[1]

    graph = f.get_concrete_function(c(2.0)).graph
    (loop,) = [op for op in graph.get_operations() if op.type == "While"]
    assert "AssignAddVariableOp" in recompute_issue(loop.attrs["body"].body)
    x = c(2.0)
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert tape.gradient(y, x).numpy() == pytest.approx(4 * 2.0 ** 3)
    assert v.numpy() == 3.0  # the assigns ran once, in the forward pass


def test_prints_are_not_repeated_by_the_gradient(capfd):
    @eager.function
    def f(x):
        with eager.GradientTape() as tape:
            tape.watch(x)

            def body(i, a):
                eager.print("iteration", i)
                return i + 1, a * x
            y = eager.while_loop(lambda i, a: i < 2, body, (0, x))[1]
        return tape.gradient(y, x)

    assert f(c(3.0)).numpy() == pytest.approx(27.0)
    err = capfd.readouterr().err
    assert err.count("iteration") == 2


# -- other ways of reaching the gradient functions ---------------------------------------------
def test_while_emitted_without_accumulators_is_recomputed():
    # A function called inside a traced tape is inlined: its While (traced without a tape)
    # has no accumulators, so the gradient runs the loop again with them.
    inner = eager.function(lambda x: eager.while_loop(
        lambda i, a: i < 3, lambda i, a: (i + 1, eager.sin(a) * x), (0, x))[1])
    traced = check(lambda x: inner(x), (c(0.7),))
    loops = [op for op in op_types(traced, c(0.7))[1].get_operations() if op.type == "While"]
    assert [op.attrs["body"].accumulate is not None for op in loops] == [False, True, False]


@pytest.mark.parametrize("asynchronous", [False, True])
def test_gradient_ops_run_eagerly_when_the_op_is_recorded_eagerly(asynchronous):
    if asynchronous:  # the kernels resolve pending inputs; the tapes must stay connected
        with eager.experimental.async_scope():
            test_gradient_ops_run_eagerly_when_the_op_is_recorded_eagerly(False)
        return
    fn = eager.function(lambda x: eager.while_loop(lambda i, a: i < 3,
                                                   lambda i, a: (i + 1, a * x), (0, x))[1])
    graph = fn.get_concrete_function(c(2.0)).graph
    (loop,) = [op for op in graph.get_operations() if op.type == "While"]
    x = c(2.0)
    feeds = {id(graph.inputs[0]): x, **{id(ph): value for value, ph in graph.captures},
             **{id(op.outputs[0]): op.attrs["value"].tensor for op in graph.get_operations()
                if op.type == "Const"}}  # the loop's 0, a constant of the trace
    inputs = tuple(feeds[id(t)] for t in loop.inputs)
    with eager.GradientTape() as t2:
        t2.watch(x)
        with eager.GradientTape() as t1:
            t1.watch(x)
            outputs = cf_ops.emit_while(loop.attrs["body"], inputs)  # recorded as one op
        assert len(outputs) == 5
        d = t1.gradient(outputs[1], x)
    assert (d.numpy(), t2.gradient(d, x).numpy()) == (32.0, 48.0)  # x**4


def test_replay_of_an_accumulating_loop_under_an_eager_tape():
    # The eager-tape path expands an accumulating While (and its gradient While) op by op,
    # pushing through dispatch, so a tape differentiates the traced gradient itself.
    @eager.function
    def f(x):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x * x), (0, x))[1]
        return tape.gradient(y, x)

    concrete = f.get_concrete_function(c(1.5))
    x = c(1.5)
    with eager.GradientTape() as tape:
        tape.watch(x)
        (d,) = replay_graph(concrete.graph, [x, *concrete.captured_inputs])
    assert d.numpy() == pytest.approx(7 * 1.5 ** 6)  # d/dx x**7
    assert tape.gradient(d, x).numpy() == pytest.approx(42 * 1.5 ** 5, rel=1e-5)
    with eager.GradientTape() as tape:  # and through the function call
        tape.watch(x)
        d = f(x)
    assert tape.gradient(d, x).numpy() == pytest.approx(42 * 1.5 ** 5, rel=1e-5)


@given(n=st.integers(0, 4), x=st.floats(-1.5, 1.5), pred=st.booleans(),
       kind=st.sampled_from(["mul", "sin", "poly"]))
def test_traced_gradients_match_eager(n, x, pred, kind):
    step = {"mul": lambda a, x: a * x, "sin": lambda a, x: eager.sin(a) * x,
            "poly": lambda a, x: a * a * 0.5 + x}[kind]

    def fn(p, x):
        y = eager.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, step(a, x)), (0, x))[1]
        return eager.cond(p, lambda: y * x, lambda: y - x)

    g = tape_gradient(fn)
    args = (c(pred), c(x))
    y_e, (d_e,) = g(*args)
    y_t, (d_t,) = eager.function(g)(*args)
    np.testing.assert_allclose(y_t.numpy(), y_e.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_t.numpy(), d_e.numpy(), rtol=1e-4, atol=1e-5)


# -- on an accelerator ----------------------------------------------------------------------------
def test_gradients_on_a_simulated_gpu(simulated_gpu):
    # The accumulators live on the CPU (the While kernel's device); values and gradients stay
    # on the GPU. Second order goes through a function gradient, whose graph reads TensorList
    # gradients (an Identity of one must not be placed on the GPU).
    v = eager.Variable(0.5)

    def fn(x):
        def step(i, y):
            return i + 1, eager.cond(i % 2 == 0, lambda: y * x, lambda: y + v * x)
        return eager.while_loop(lambda i, y: i < 4, step, (c(0), x))[1]

    g = tape_gradient(fn, [v])
    traced = eager.function(g)
    x = c([1.25, 0.5])
    y_e, grads_e = g(x)
    for _ in range(2):  # the second call runs the compiled program
        y_t, grads_t = traced(x)
        assert y_t.device == "GPU:0" and grads_t[0].device == "GPU:0"
        np.testing.assert_allclose(y_t.numpy(), y_e.numpy(), rtol=1e-6)
        for a, b in zip(grads_t, grads_e):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    with eager.GradientTape() as tape:
        tape.watch(x)
        _, (gx, _) = traced(x)
    with eager.GradientTape() as t2:
        t2.watch(x)
        _, (gx_e, _) = g(x)
    np.testing.assert_allclose(tape.gradient(gx, x).numpy(), t2.gradient(gx_e, x).numpy(),
                               rtol=1e-5)


def test_integer_loop_variable_of_unknown_length_does_not_block_the_gradient():
    # the While's int outputs get no gradient; their zero stand-ins need no static shape
    @eager.function
    def f(x):
        with eager.GradientTape() as t:
            t.watch(x)
            _, seen, acc = eager.while_loop(
                lambda i, seen, acc: i < 3,
                lambda i, seen, acc: (i + 1, eager.concat([seen, eager.reshape(i, [1])], 0),
                                      acc * x),
                (eager.constant(0), eager.zeros([0], eager.int32), x),
                shape_invariants=(eager.TensorShape([]), eager.TensorShape([None]),
                                  eager.TensorShape([])))
        return t.gradient(acc, x), seen

    g, seen = f(eager.constant(2.0))
    assert g.numpy() == pytest.approx(4 * 2.0 ** 3)  # d(x^4)/dx
    np.testing.assert_array_equal(seen.numpy(), [0, 1, 2])


def _branch_reads_variable(v):
    return lambda p, x: eager.cond(p, lambda: v * x, lambda: x * 2.0)


def _case_reads_variable(v):
    return lambda i, x: eager.switch_case(i, [lambda: x * 2.0, lambda: v * x, lambda: x - v])


def _loop_reads_variable(v):
    def fn(p, x):
        return eager.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * v + x),
                                (eager.constant(0), x))[1]
    return fn


def _branch_reads_list(v):
    def fn(p, x):
        lst = list_ops.tensor_list_from_tensor(x * v, element_shape=[])
        return eager.cond(p, lambda: list_ops.tensor_list_get_item(lst, 1, eager.float32, []) * 3.0,
                          lambda: x[0] * x[1])
    return fn


@pytest.mark.parametrize("make", [_branch_reads_variable, _case_reads_variable,
                                  _loop_reads_variable, _branch_reads_list])
def test_control_flow_over_gpu_variables_and_lists(simulated_gpu, capfd, make):
    # The If/Case/While kernels run on the CPU. A GPU variable's handle must stay a GPU tensor
    # inside the branch (reads are placed on the variable's device), and a GPU list crossing
    # into a branch must bring its elements (a GPU array cannot pass through host memory as is;
    # the simulated GPU refuses that, as CuPy does).
    v = eager.Variable([0.5, 1.5])
    fn = make(v)
    first = c(1) if make is _case_reads_variable else c(True)
    traced = check(fn, (first, c([1.0, 2.0])), [v])
    capfd.readouterr()
    eager.debugging.set_log_device_placement(True)
    try:
        y, _ = traced(first, c([1.0, 2.0]))
    finally:
        eager.debugging.set_log_device_placement(False)
    assert y.device == "GPU:0" and v.device.endswith("GPU:0")
    if make is not _branch_reads_list:  # (whose read is outside the branch)
        reads = [line for line in capfd.readouterr().err.splitlines() if "ReadVariableOp" in line]
        assert reads and all(line.endswith("GPU:0") for line in reads)
