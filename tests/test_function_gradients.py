"""Gradients of `eager.function` calls: the call is one op on the tape whose backward is a traced
graph derived from the forward graph (`eager.functions.function_gradient`).

Checked against eager (un-traced) gradients and finite differences, first and higher order,
with the derived programs inspected: the forward returns only the intermediates the backward
reads, the backward is a graph of gradient ops that never re-runs a stateful op.
"""

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager
from eager.core import dispatch
from eager.functions import function_gradient as derived
from gradcheck import derivatives

c = eager.constant
RNG = np.random.default_rng(7)


def _rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _grads(fn, args, sources=(), persistent=False, **kwargs):
    """fn(*args) under one tape watching the floating args; gradients w.r.t. those args and
    `sources` (None for non-floating args)."""
    floats = [a for a in args if a.dtype.is_floating]
    with eager.GradientTape(persistent=persistent) as tape:
        tape.watch(floats)
        y = fn(*args)
    grads = iter(tape.gradient(y, floats + list(sources), **kwargs))
    return y, [next(grads) if a.dtype.is_floating else None for a in args] + list(grads)


def _dense(g):
    return eager.convert_to_tensor(g).numpy() if isinstance(g, eager.IndexedSlices) else g.numpy()


def _assert_same(traced, expected, rtol=1e-5):
    assert len(traced) == len(expected)
    for a, b in zip(traced, expected):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(_dense(a), _dense(b), rtol=rtol, atol=1e-6)


def _derived_entry(tape):
    """The single recorded entry of a function call, and its derived backward."""
    (entry,) = tape._tape.as_recorded_ops()
    assert isinstance(entry.backward, derived._CallBackward)
    return entry


# -- functions to differentiate ------------------------------------------------------------------
W1 = eager.Variable(_rand(4, 5), name="w1")
B1 = eager.Variable(_rand(5), name="b1")
W2 = eager.Variable(_rand(5, 2), name="w2")


def mlp(x):
    h = eager.nn.relu(eager.matmul(x, W1) + B1)
    return eager.reduce_sum(eager.math.tanh(eager.matmul(h, W2)))


def broadcasting(x, y):
    return (x * y - y / (1.0 + x * x)) + eager.reduce_mean(x, axis=0)


def reductions(x):
    return (eager.reduce_max(x, axis=1) + eager.reduce_logsumexp(x, axis=0)[:1]
            + eager.reduce_prod(x, axis=1) * eager.reduce_mean(x))


def captured_and_argument_variables(x, v):
    return eager.reduce_sum(eager.math.sin(x * v) * W2[:, 0][: x.shape[0]] + B1[0] * v)


def _case_id(value):
    return getattr(value, "__name__", "")


CASES = [
    (mlp, lambda: [c(_rand(3, 4))], [W1, B1, W2]),
    (broadcasting, lambda: [c(_rand(3, 1)), c(_rand(1, 4))], []),
    (reductions, lambda: [c(_rand(2, 3) + 2.0)], []),
]


@pytest.mark.parametrize("body,make_args,variables", CASES, ids=_case_id)
@pytest.mark.parametrize("persistent", [False, True])
def test_traced_gradients_equal_eager(body, make_args, variables, persistent):
    args = make_args()
    f = eager.function(body)
    for _ in range(2):  # the first call derives, the second reuses
        y_t, g_t = _grads(f, args, variables, persistent)
        y_e, g_e = _grads(body, args, variables, persistent)
        np.testing.assert_allclose(y_t.numpy(), y_e.numpy(), rtol=1e-5)
        _assert_same(g_t, g_e)
    (variant,) = f.get_concrete_function(*args).gradient_functions.variants
    assert variant.higher_order == persistent


@pytest.mark.parametrize("body,make_args,variables", CASES, ids=_case_id)
def test_traced_gradients_equal_finite_differences(body, make_args, variables):
    f = eager.function(body)
    theoretical, numerical = eager.test.compute_gradient(f, make_args())
    for a, b in zip(theoretical, numerical):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2)


def test_variable_arguments_get_their_gradient_through_the_handle():
    f = eager.function(captured_and_argument_variables)
    x = c(_rand(3))
    for v in (eager.Variable(0.7), eager.Variable(-1.3)):  # one trace serves both variables
        # _grads calls each lambda right away, within this iteration (hence B023's noqa).
        y_t, g_t = _grads(lambda x: f(x, v), [x], [v, B1, W2])  # noqa: B023
        y_e, g_e = _grads(lambda x: captured_and_argument_variables(x, v),  # noqa: B023
                          [x], [v, B1, W2])
        np.testing.assert_allclose(y_t.numpy(), y_e.numpy(), rtol=1e-5)
        _assert_same(g_t, g_e)
    assert f.experimental_get_tracing_count() == 1


@given(st.lists(st.floats(-2, 2, width=32), min_size=6, max_size=6))
def test_traced_equals_eager_first_and_second_order(values):
    def body(x, y):
        return eager.math.tanh(x * y) * x + eager.math.exp(-y * y) * eager.math.sin(x)

    f = eager.function(body)
    x, y = c(np.array(values[:3], np.float32)), c(np.array(values[3:], np.float32))
    results = []
    for fn in (f, body):
        with eager.GradientTape() as t2:
            t2.watch([x, y])
            with eager.GradientTape() as t1:
                t1.watch([x, y])
                z = fn(x, y)
            gx, gy = t1.gradient(z, [x, y])
        results.append([z, gx, gy, *t2.gradient(gx, [x, y])])
    _assert_same(results[0], results[1], rtol=1e-4)


# -- stateful functions ----------------------------------------------------------------------------
def test_stateful_function_runs_once_and_its_gradient_flows_through_reads():
    v = eager.Variable(2.0)
    calls = eager.Variable(0.0, trainable=False)

    def body(x):
        calls.assign_add(1.0)
        v.assign(v * x)  # the gradient flows through the reads, not the assign
        return v.read_value() * x + v * v

    f = eager.function(body)
    f(c(1.0))  # trace
    x = c(1.5)
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    backward = _derived_entry(tape).backward.variant.backward
    gx, gv = tape.gradient(y, [x, v])
    assert calls.numpy() == 2.0  # the forward ran exactly once
    assert v.numpy() == pytest.approx(3.0)
    assert y.numpy() == pytest.approx(3.0 * 1.5 + 9.0)
    # y = r * x + r2 * r2 with r = r2 = v's value read after the assign (3.0): dy/dx = r
    assert gx.numpy() == pytest.approx(3.0)
    assert gv.numpy() == pytest.approx(1.5 + 2 * 3.0)
    assert not any(op.op_def.stateful or op.op_def.resource_reads
                   for op in backward.graph.get_operations())
    assert calls.numpy() == 2.0  # the backward did not run the forward again
    v.assign(2.0)
    with eager.GradientTape() as tape:  # the same body, eagerly
        tape.watch(x)
        y_e = body(x)
    _assert_same([y, gx, gv], [y_e, *tape.gradient(y_e, [x, v])])


def test_random_draw_is_not_redrawn_by_the_backward():
    f = eager.function(lambda x: (x * eager.random.uniform([3]), eager.random.normal([2])))
    x = c([1.0, 2.0, 3.0])
    with eager.GradientTape() as tape:
        tape.watch(x)
        y, _ = f(x)
    g = tape.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), y.numpy() / x.numpy(), rtol=1e-6)


# -- higher order --------------------------------------------------------------------------------
@pytest.mark.parametrize("body,second", [
    (lambda x: x * x * x, lambda x: 6 * x),
    (lambda x: eager.math.tanh(x), lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    (lambda x: eager.math.exp(x) * eager.math.sin(x), lambda x: 2 * np.exp(x) * np.cos(x)),
])
def test_second_order_through_a_function(body, second):
    f = eager.function(body)
    x = c(np.array([0.3, -0.8, 1.1], np.float32))
    for fn in (f, body):
        np.testing.assert_allclose(derivatives(fn, x, 2)[2].numpy(), second(x.numpy()),
                                   rtol=1e-5)


def test_the_backward_call_is_one_op_on_the_outer_tape():
    f = eager.function(lambda x: eager.math.sin(x) * x)
    x = c(0.4)
    with eager.GradientTape() as t2:
        t2.watch(x)
        with eager.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        g = t1.gradient(y, x)
    names = [(e.name, e.attrs["f"]) for e in t2._tape.as_recorded_ops()]
    assert names == [("PartitionedCall", "<lambda>"), ("PartitionedCall", "<lambda>_backward")]
    assert all(isinstance(e.backward, derived._CallBackward) for e in t2._tape.as_recorded_ops())
    expected = 2 * np.cos(0.4) - 0.4 * np.sin(0.4)
    assert t2.gradient(g, x).numpy() == pytest.approx(expected, rel=1e-6)


def test_third_order():
    f = eager.function(lambda x: x * x * x * x)
    _, g1, g2, g3 = derivatives(f, c(2.0), 3)
    assert (g1.numpy(), g2.numpy(), g3.numpy()) == (32.0, 48.0, 48.0)


def test_persistent_tape_gradient_twice_and_of_its_own_gradient():
    f = eager.function(lambda x, y: (eager.math.tanh(x) * y, x * y * y))
    x, y = c([0.5, -1.0]), c([2.0, 0.3])
    results = []
    for fn in (f, lambda x, y: (eager.math.tanh(x) * y, x * y * y)):
        with eager.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            a, b = fn(x, y)
            ga = tape.gradient(a, x)
        gb = tape.gradient(b, [x, y])
        results.append([ga, *gb, *tape.gradient(ga, [x, y]), tape.gradient(a, y)])
    _assert_same(results[0], results[1])


def test_two_independent_tapes_record_the_same_call():
    f = eager.function(lambda x, y: x * eager.math.exp(y))
    x, y = c(1.5), c(0.5)
    with eager.GradientTape() as tx, eager.GradientTape() as ty:
        tx.watch(x)
        ty.watch(y)
        z = f(x, y)
    assert tx.gradient(z, x).numpy() == pytest.approx(np.exp(0.5))
    assert ty.gradient(z, y).numpy() == pytest.approx(1.5 * np.exp(0.5))


# -- nested functions ----------------------------------------------------------------------------
def test_nested_functions_first_and_second_order():
    v = eager.Variable(1.5)
    inner = eager.function(lambda x: eager.math.sin(x) * v)
    outer = eager.function(lambda x: inner(x) * inner(2.0 * x) + x)

    def eager_outer(x):
        return eager.math.sin(x) * v * (eager.math.sin(2.0 * x) * v) + x

    x = c(0.6)
    results = []
    for fn in (outer, eager_outer):
        with eager.GradientTape() as t2:
            t2.watch(x)
            with eager.GradientTape() as t1:
                t1.watch(x)
                y = fn(x)
            gx, gv = t1.gradient(y, [x, v])
        results.append([y, gx, gv, *t2.gradient(gx, [x, v])])
    _assert_same(results[0], results[1])
    cf = outer.get_concrete_function(x)
    assert "Sin" in {op.type for op in cf.graph.get_operations()}  # the inner call is inlined


def test_gradient_taken_inside_a_function_differentiated_from_outside():
    @eager.function
    def grad_of_cube(x):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = x * x * x
        return tape.gradient(y, x)

    x = c(1.5)
    with eager.GradientTape() as tape:
        tape.watch(x)
        g = grad_of_cube(x)
    assert g.numpy() == pytest.approx(3 * 1.5 ** 2)
    assert tape.gradient(g, x).numpy() == pytest.approx(6 * 1.5)


# -- inputs and outputs of every kind --------------------------------------------------------------
def test_integer_inputs_and_outputs_have_no_gradient():
    f = eager.function(lambda x, n: (x * eager.cast(n, eager.float32), n * 2, eager.argmax(x)))
    x, n = c([1.0, 3.0]), c(3)
    with eager.GradientTape() as tape:
        tape.watch(x)
        y, m, i = f(x, n)
    assert m.numpy() == 6 and i.numpy() == 1
    gx, gn = tape.gradient(y, [x, n])
    np.testing.assert_allclose(gx.numpy(), [3.0, 3.0])
    assert gn is None


def test_unused_outputs_returned_inputs_and_repeated_outputs():
    f = eager.function(lambda x: (x, x * 2.0, x * 2.0, eager.math.exp(x)))
    x = c(1.5)
    with eager.GradientTape() as tape:
        tape.watch(x)
        a, b, b2, _ = f(x)  # the exp output goes unused
        y = a + b + b2
    assert a is not x
    assert tape.gradient(y, x).numpy() == pytest.approx(5.0)


def test_unconnected_gradients():
    w = eager.Variable(2.0)
    f = eager.function(lambda x, y: x * w)
    x, y = c(3.0), c(4.0)
    with eager.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = f(x, y)
    gx, gy, gw = tape.gradient(z, [x, y, w])
    assert (gx.numpy(), gy, gw.numpy()) == (2.0, None, 3.0)
    gy = tape.gradient(z, y, unconnected_gradients=eager.UnconnectedGradients.ZERO)
    assert gy.numpy() == 0.0


def test_indexed_slices_gradients_of_a_gathered_variable():
    table = eager.Variable(_rand(5, 3))

    def body(idx, x):
        return eager.reduce_sum(eager.gather(table, idx) * x)

    f = eager.function(body)
    idx, x = c([0, 3, 3], eager.int32), c(_rand(3, 3))
    results = [_grads(fn, [idx, x], [table]) for fn in (f, body)]
    assert isinstance(results[0][1][2], eager.IndexedSlices)
    _assert_same(results[0][1], results[1][1])


def test_output_gradient_that_is_indexed_slices_is_densified():
    f = eager.function(lambda x: eager.math.sin(x) * 2.0)
    x = c(_rand(4, 2))
    results = []
    for fn in (f, lambda x: eager.math.sin(x) * 2.0):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = eager.reduce_sum(eager.gather(fn(x), c([1, 1, 3])))
        results.append([tape.gradient(y, x)])
    _assert_same(results[0], results[1])


def test_partial_shapes_derive_per_call_shape():
    @eager.function(input_signature=[eager.TensorSpec([None, 3], eager.float32)])
    def f(x):
        return eager.reduce_sum(x * eager.reduce_mean(x, axis=0), axis=1)

    def body(x):
        return eager.reduce_sum(x * eager.reduce_mean(x, axis=0), axis=1)

    for rows in (2, 5, 2):
        x = c(_rand(rows, 3))
        _assert_same(_grads(f, [x])[1], _grads(body, [x])[1])
    cf = f.get_concrete_function()
    assert len(cf.gradient_functions.variants) == 2  # one per shape seen


# -- what the derivation produces ----------------------------------------------------------------
def test_backward_is_a_graph_of_gradient_ops():
    f = eager.function(mlp)
    x = c(_rand(3, 4))
    with eager.GradientTape() as tape:
        y = f(x)
    entry = _derived_entry(tape)
    variant = entry.backward.variant
    cf = f.get_concrete_function(x)
    assert variant in cf.gradient_functions.variants
    types = [op.type for op in variant.backward.graph.get_operations()]
    assert "ReluGrad" in types and "MatMul" in types
    assert "Relu" not in types and "ReadVariableOp" not in types  # no forward op in it
    # the forward program returns the output and then the extras the backward reads
    assert len(variant.forward_program.fetches) == 1 + len(variant.extras)
    assert {t.op.type for t in variant.extras} >= {"Relu", "Tanh"}
    assert len(entry.backward.kept) == len(variant.kept)
    # x has no tape id: its gradient is not derived (only the variables')
    grads = tape.gradient(y, [W1, B1, W2])
    assert all(g is not None for g in grads)
    assert variant.structure[0] is None


def test_intermediates_the_backward_does_not_need_are_freed(monkeypatch):
    w1, w2 = c(_rand(64, 32)), c(_rand(64, 32))

    def body(x):
        return eager.reduce_sum(eager.matmul(x, w1)) + eager.reduce_sum(
            eager.math.tanh(eager.matmul(x, w2)))

    f = eager.function(body)
    x = c(_rand(8, 64))
    made = {}
    original = dispatch.run_kernel

    def spy(op, inputs, attrs, device):
        out = original(op, inputs, attrs, device)
        made.setdefault(op.name, []).append(weakref.ref(out))
        return out

    monkeypatch.setattr(dispatch, "run_kernel", spy)  # before the forward program is compiled
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    gc.collect()
    assert len(made["MatMul"]) == 2 and len(made["Tanh"]) == 1
    # Sum's gradient needs no value and tanh's needs its output: both products are gone while
    # the tape is alive, the tanh output is kept
    assert all(r() is None for r in made["MatMul"])
    assert made["Tanh"][0]() is not None
    assert any(k is made["Tanh"][0]() for k in _derived_entry(tape).backward.kept)
    tape.gradient(y, x)
    gc.collect()
    assert made["Tanh"][0]() is None  # released with the non-persistent tape's entries


# -- the fallback for ops without a gradient -----------------------------------------------------
def _cond_function():
    v = eager.Variable(3.0)

    def body(p, x, y):
        return eager.cond(p, lambda: x * y * v, lambda: eager.math.sin(x) + y)

    return eager.function(body), v


def _if_def(cf):
    (if_op,) = [op for op in cf.graph.get_operations() if op.type == "If"]
    return if_op


def test_control_flow_reading_variables_is_replayed_not_derived():
    # The If rule recomputes its branch when the backward runs; a variable assigned after the
    # call (or later in the function) would change it. Replaying keeps what the forward read.
    f, v = _cond_function()
    args = (c(True), c(2.0), c(5.0))
    cf = f.get_concrete_function(*args)
    assert _if_def(cf).op_def.gradient is not None
    with eager.GradientTape() as tape:
        tape.watch(args[1])
        y = f(*args)
    v.assign(100.0)  # between the call and the gradient
    gx, gv = tape.gradient(y, [args[1], v])
    assert gx.numpy() == pytest.approx(5.0 * 3.0) and gv.numpy() == pytest.approx(10.0)
    assert cf.gradient_functions.variants == []
    v.assign(3.0)


def test_control_flow_without_a_gradient_falls_back_to_the_replay(monkeypatch):
    f, v = _cond_function()
    args = (c(True), c(2.0), c(5.0))
    cf = f.get_concrete_function(*args)
    monkeypatch.setattr(_if_def(cf).op_def, "gradient", None)
    for pred, expected in ((True, (5.0 * 3.0, 2.0 * 3.0, 10.0)), (False, (np.cos(2.0), 1.0, None))):
        _, (_, gx, gy, gv) = _grads(f, [c(pred), args[1], args[2]], [v])
        assert gx.numpy() == pytest.approx(expected[0])
        assert gy.numpy() == pytest.approx(expected[1])
        assert (gv is None) if expected[2] is None else gv.numpy() == pytest.approx(expected[2])
    assert cf.gradient_functions.variants == []


def test_control_flow_uses_the_derived_gradient_once_the_op_has_one(monkeypatch):
    def body(p, x, y):  # no variables in the branches (see the next test)
        return eager.cond(p, lambda: x * y * 3.0, lambda: eager.math.sin(x) + y)

    f = eager.function(body)
    args = (c(True), c(2.0), c(5.0))
    cf = f.get_concrete_function(*args)
    if_op = _if_def(cf)
    op_def = if_op.op_def
    monkeypatch.setattr(op_def, "gradient", None)
    _grads(f, list(args))  # falls back, and remembers why
    assert cf.gradient_functions.variants == []

    positions = {t.name: i for i, t in enumerate(if_op.inputs)}

    def if_gradient(forward, dy):  # this cond's gradient, written for the test
        p = forward.inputs[0]
        x, y = forward.inputs[positions["x:0"]], forward.inputs[positions["y:0"]]
        grads = [None] * len(forward.inputs)
        grads[positions["x:0"]] = eager.where(p, dy * y * 3.0, dy * eager.math.cos(x))
        grads[positions["y:0"]] = eager.where(p, dy * x * 3.0, dy)
        return tuple(grads)

    monkeypatch.setattr(op_def, "gradient", if_gradient)
    monkeypatch.setattr(op_def, "grad_keeps_inputs", True)
    for pred, expected in ((True, (15.0, 6.0)), (False, (np.cos(2.0), 1.0))):
        _, (_, gx, gy) = _grads(f, [c(pred), args[1], args[2]])
        assert (gx.numpy(), gy.numpy()) == (pytest.approx(expected[0]), pytest.approx(expected[1]))
    (variant,) = cf.gradient_functions.variants
    assert "SelectV2" in {op.type for op in variant.backward.graph.get_operations()}
