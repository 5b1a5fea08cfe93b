"""Optimisation passes of the graph runtime (eager/runtime/passes): pruning, constant folding,
common-subexpression elimination, elementwise fusion and the `optimize` pipeline.

Every rewritten program is checked three ways: its node list (what the pass did), `validate()`
(it is well formed), and its fetched values against the unoptimised program under the reference
runner and against eager execution or numpy (it means the same thing)."""

import linecache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager
from eager import TensorSpec
from eager.errors import InvalidArgumentError
from eager.graph import Graph, trace
from eager.core.registry import OpDef, registered_ops
from eager.runtime import Node, Program, run_program
from eager.core.dispatch import execute
from eager.ops import training_ops
from eager.runtime.passes import (DEFAULT_PASSES, PassOptions, bypass_identities,
                                  eliminate_common_subexpressions, fold_broadcasts,
                                  fold_constants, fold_scaled_updates, fuse_elementwise,
                                  group_updates, optimize, prune)
from eager.core.specs import TensorSpec as Spec

from cupy_stand_in import ElementwiseKernel

F32 = eager.float32


# -- helpers ---------------------------------------------------------------------------------------
def program_of(graph, feeds=None, fetches=None, targets=None):
    """The program of `graph` with its captures as constants."""
    return Program.from_graph(graph, feeds=feeds, fetches=fetches, targets=targets,
                              constants={ph: value for value, ph in graph.captures})


def types(program):
    return [node.type for node in program.nodes]


def run(program, *feeds):
    return [t.numpy() for t in run_program(program, [eager.constant(f) for f in feeds])]


def assert_same_run(original, rewritten, *feeds):
    """`rewritten` is valid and fetches bit-identical values (dtype included) to `original`;
    returns them."""
    rewritten.validate()
    expected = run(original, *feeds)
    got = run(rewritten, *feeds)
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        assert e.dtype == g.dtype and e.shape == g.shape
        np.testing.assert_array_equal(g, e)
    return got


def fused_nodes(program):
    return [node for node in program.nodes if node.type.startswith("Fused[")]


def first_op(graph, type_):
    return next(op for op in graph.get_operations() if op.type == type_)


# -- pruning ---------------------------------------------------------------------------------------
def test_prune_keeps_only_what_fetches_need_and_drops_unread_constants():
    def f(x):
        unused = eager.math.exp(x) * 3.0
        return x + 1.0, unused

    g = trace(f, TensorSpec([3]))
    p = program_of(g, fetches=[g.outputs[0]])
    assert types(p) == ["Exp", "Mul", "AddV2"] and len(p.constants) == 2
    q = prune(p)
    assert types(q) == ["AddV2"]
    assert len(q.constants) == 1  # the 3.0 is no longer read
    (value,) = assert_same_run(p, q, np.float32([1, 2, 3]))
    np.testing.assert_array_equal(value, np.float32([2, 3, 4]))
    assert prune(q) is q  # nothing left to prune


def test_prune_keeps_targets_and_their_control_inputs(capsys):
    g = Graph(auto_control_deps=False)
    with g.as_default():
        x = g.placeholder(F32, [2], name="x")
        before = eager.math.exp(x)  # needed only as the print's control input
        with g.control_dependencies([before]):
            eager.print("side effect")
        out = x * 2.0
        eager.math.sin(x)  # needed by nobody
    printer = first_op(g, "PrintV2")
    p = program_of(g, fetches=[out], targets=[printer])
    q = prune(p)
    assert types(q) == ["Exp", "PrintV2", "Mul"]
    assert q.node("PrintV2").control_inputs == ("Exp",)
    capsys.readouterr()
    (value,) = assert_same_run(p, q, np.float32([1, 2]))
    np.testing.assert_array_equal(value, np.float32([2, 4]))
    printed = capsys.readouterr()
    assert (printed.out + printed.err).splitlines() == ["side effect"] * 2  # p, then q


def test_prune_drops_unneeded_unfed_placeholder_and_keeps_needed_one():
    g = Graph()
    with g.as_default():
        x = g.placeholder(F32, [2], name="x")
        y = g.placeholder(F32, [2], name="y")
        from_x = x + 1.0
        from_y = y + 1.0
    q = prune(program_of(g, feeds=[x], fetches=[from_x]))
    assert types(q) == ["AddV2"]
    np.testing.assert_array_equal(run(q, np.float32([1, 2]))[0], np.float32([2, 3]))
    q = prune(program_of(g, feeds=[x], fetches=[from_y]))
    assert types(q) == ["Placeholder", "AddV2"]
    q.validate()
    with pytest.raises(InvalidArgumentError, match="You must feed a value for placeholder "
                                                   "tensor 'y'"):
        run(q, np.float32([1, 2]))


def test_prune_drops_producer_of_fed_over_value():
    g = Graph()
    with g.as_default():
        x = g.placeholder(F32, [2], name="x")
        a = eager.math.exp(x)
        b = a + 1.0
    p = program_of(g, feeds=[a], fetches=[b])
    assert "Exp" in types(p) and "Placeholder" in types(p)  # x is unfed, a fed over
    q = prune(p)
    assert types(q) == ["AddV2"]  # neither exp nor the unfed x is needed any more
    (value,) = run(q, np.float32([5, 6]))
    np.testing.assert_array_equal(value, np.float32([6, 7]))


def test_prune_rejects_unknown_target():
    g = trace(lambda x: x + 1.0, TensorSpec([2]))
    p = program_of(g).replace(targets=("no_such_node",))
    with pytest.raises(ValueError, match="no_such_node"):
        prune(p)


# -- constant folding ------------------------------------------------------------------------------
def test_fold_evaluates_constant_subgraph_once():
    c = eager.constant(np.float32([1, 2, 3]))

    def f(x):
        return x + eager.math.exp(c * 2.0 + 1.0)

    g = trace(f, TensorSpec([3]))
    p = program_of(g)
    assert types(p) == ["Mul", "AddV2", "Exp", "AddV2"]
    q = fold_constants(p)
    assert types(q) == ["AddV2"]
    feed = np.float32([10, 20, 30])
    (value,) = assert_same_run(p, q, feed)
    np.testing.assert_array_equal(value, feed + np.exp(np.float32([1, 2, 3]) * 2 + 1))
    np.testing.assert_array_equal(value, f(eager.constant(feed)).numpy())
    assert prune(q).constants.keys() == {q.node("AddV2_1").inputs[1]}  # only exp(...) remains


def test_fold_never_touches_stateful_or_resource_ops(capsys):
    v = eager.Variable(np.float32([1, 2]))

    def f():
        eager.print("hello")
        r = eager.random.uniform([2])
        return v.read_value() * 2.0, r

    g = trace(f)
    p = program_of(g)
    q = optimize(p)
    kept = types(q)
    assert kept.count("ReadVariableOp") == 1 and kept.count("RandomUniform") == 1
    assert kept.count("PrintV2") == 1
    capsys.readouterr()
    doubled, r = run(q)
    np.testing.assert_array_equal(doubled, np.float32([2, 4]))
    assert r.shape == (2,) and ((0 <= r) & (r < 1)).all()
    assert "hello" in capsys.readouterr().err


def test_fold_leaves_a_failing_kernel_for_run_time():
    def f(x):
        return x + eager.math.floordiv(eager.constant([1, 2]), eager.constant([1, 0]))

    g = trace(f, TensorSpec([2], eager.int32))
    p = program_of(g)
    q = fold_constants(p)
    assert types(q) == types(p) == ["FloorDiv", "AddV2"]
    q.validate()
    with pytest.raises(InvalidArgumentError, match="Integer division by zero") as from_program:
        run(q, np.int32([1, 1]))
    with pytest.raises(InvalidArgumentError) as from_eager:
        # (`.numpy()`: a device whose kernels run later reports the failure there)
        eager.math.floordiv(eager.constant([1, 2]), eager.constant([1, 0])).numpy()
    assert str(from_program.value) == str(from_eager.value)


def test_fold_skips_nodes_with_control_inputs_and_targets():
    c = eager.constant(np.float32([1, 2]))
    g = Graph(auto_control_deps=False)
    with g.as_default():
        x = g.placeholder(F32, [2], name="x")
        eager.print("first")
        with g.control_dependencies([first_op(g, "PrintV2")]):
            waits = c * 2.0
        target = c - 1.0
        out = x + waits + target
    printer, sub = first_op(g, "PrintV2"), first_op(g, "Sub")
    p = program_of(g, fetches=[out], targets=[printer, sub])
    q = fold_constants(p)
    assert types(q) == types(p)  # the Mul waits for the print; the Sub must run
    assert_same_run(p, q, np.float32([0, 0]))


def test_fold_drops_control_edges_to_folded_nodes():
    c = eager.constant(np.float32([1, 2]))
    g = Graph(auto_control_deps=False)
    with g.as_default():
        x = g.placeholder(F32, [2], name="x")
        folded = c * 3.0
        with g.control_dependencies([folded]):
            out = x + 1.0
    p = program_of(g, fetches=[out, folded])
    assert p.node("AddV2").control_inputs == ("Mul",)
    q = fold_constants(p)
    assert types(q) == ["AddV2"] and q.node("AddV2").control_inputs == ()
    assert q.fetches[1] in q.constants
    assert_same_run(p, q, np.float32([1, 1]))


def test_fold_respects_max_bytes():
    def f(x):
        return x + eager.zeros([1000]) * 2.0

    g = trace(f, TensorSpec([1000]))
    p = program_of(g)
    assert types(p) == ["Zeros", "Mul", "AddV2"]
    assert types(fold_constants(p, max_bytes=3999)) == types(p)  # 4000 bytes each
    assert types(fold_constants(p, max_bytes=4000)) == ["AddV2"]
    small = optimize(p, options=PassOptions(fold_max_bytes=100))
    assert "Zeros" in types(small)
    assert_same_run(p, small, np.ones(1000, np.float32))


def test_fold_shape_ops_from_static_shapes():
    def f(x, y):
        e = eager.math.exp(x)
        return eager.shape(e), eager.size(x), eager.rank(y), eager.shape(y), eager.size(y)

    g = trace(f, TensorSpec([2, 3]), TensorSpec([None, 4]))
    p = program_of(g)
    q = prune(fold_constants(p))
    # y's shape and size depend on its first dim; its rank does not; Exp was needed only for
    # its (static) shape
    assert types(q) == ["Shape", "Size"]
    xv, yv = np.ones((2, 3), np.float32), np.ones((5, 4), np.float32)
    values = assert_same_run(p, q, xv, yv)
    expected = [np.int32([2, 3]), np.int32(6), np.int32(2), np.int32([5, 4]), np.int32(20)]
    for got, want in zip(values, expected):
        np.testing.assert_array_equal(got, want)
    eager_values = f(eager.constant(xv), eager.constant(yv))
    for got, want in zip(values, eager_values):
        np.testing.assert_array_equal(got, want.numpy())


def test_fold_ones_like_and_zeros_like_of_static_shapes_and_what_follows():
    def f(x, y):
        seed = eager.ones_like(eager.reduce_mean(x)) / 4.0  # a gradient seed: folds whole
        return seed * x, eager.zeros_like(y, dtype=eager.int32), eager.ones_like(x * 2.0)

    g = trace(f, TensorSpec([2, 3]), TensorSpec([None]))
    p = program_of(g)
    q = prune(fold_constants(p))
    # y's dims are unknown: ZerosLike stays; everything else about the seed is a constant
    assert sorted(types(q)) == ["Mul", "ZerosLike"]
    xv, yv = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(5, np.float32)
    values = assert_same_run(p, q, xv, yv)
    np.testing.assert_array_equal(values[0], xv / 4.0)
    np.testing.assert_array_equal(values[1], np.zeros(5, np.int32))
    np.testing.assert_array_equal(values[2], np.ones((2, 3), np.float32))
    big = trace(lambda x: eager.ones_like(x), TensorSpec([1024, 1024]))
    assert types(fold_constants(program_of(big), max_bytes=1024)) == ["OnesLike"]


def test_fold_shape_of_unfed_placeholder_keeps_missing_feed_error():
    g = Graph()
    with g.as_default():
        x = g.placeholder(F32, [2, 3], name="x")
        s = eager.shape(x)
    q = optimize(program_of(g, feeds=[], fetches=[s]))
    assert types(q) == ["Placeholder", "Shape"]
    with pytest.raises(InvalidArgumentError, match="You must feed a value for placeholder"):
        run(q)


def test_fold_concrete_function_captures():
    w = eager.constant(np.float32([[1, 2], [3, 4]]))

    @eager.function
    def f(x):
        return eager.matmul(x, eager.transpose(w) * 0.5)

    cf = f.get_concrete_function(TensorSpec([1, 2]))
    p = Program.from_graph(cf.graph, constants={ph: v for v, ph in cf.graph.captures})
    q = fold_constants(p)
    assert types(q) == ["MatMul"]
    feed = np.float32([[1, -1]])
    (value,) = assert_same_run(p, q, feed)
    np.testing.assert_array_equal(value, f(eager.constant(feed)).numpy())


# -- common-subexpression elimination --------------------------------------------------------------
def test_cse_merges_duplicates_and_collapses_chains():
    def f(x):
        a = eager.math.exp(x + 1.0)
        b = eager.math.exp(x + 1.0)
        return a * b, a, b

    g = trace(f, TensorSpec([3]))
    p = program_of(g)
    assert types(p) == ["AddV2", "Exp", "AddV2", "Exp", "Mul"]
    q = eliminate_common_subexpressions(p)
    assert types(q) == ["AddV2", "Exp", "Mul"]
    mul = q.node("Mul")
    assert mul.inputs[0] == mul.inputs[1] == q.fetches[1] == q.fetches[2]
    assert len(q.constants) == 1  # the two 1.0 captures are one value now
    feed = np.float32([0, 1, 2])
    values = assert_same_run(p, q, feed)
    for got, want in zip(values, f(eager.constant(feed))):
        np.testing.assert_array_equal(got, want.numpy())


def test_cse_distinguishes_attrs_and_devices(logical_cpus):
    logical_cpus(2)

    def f(x):
        a = eager.cast(x, eager.float64)
        b = eager.cast(x, eager.float64)
        c = eager.cast(x, eager.int32)
        with eager.device("CPU:1"):
            d = eager.cast(x, eager.float64)
        return a, b, c, d

    g = trace(f, TensorSpec([2]))
    p = program_of(g)
    q = eliminate_common_subexpressions(p)
    assert types(q) == ["Cast", "Cast", "Cast"]
    assert q.fetches[0] == q.fetches[1] and len(set(q.fetches)) == 3
    assert_same_run(p, q, np.float32([1.5, -2]))
    assert run_program(q, [eager.constant(np.float32([1, 2]))])[3].device.endswith("CPU:1")


def test_cse_distinguishes_control_inputs_and_redirects_edges_to_kept_node(capsys):
    g = Graph(auto_control_deps=False)
    with g.as_default():
        x = g.placeholder(F32, [2], name="x")
        a1 = x + 1.0
        a2 = x + 1.0
        with g.control_dependencies([a2]):
            eager.print("after a2")
            a3 = x + 1.0  # same inputs, but waits for a2: a distinct node
    printer = first_op(g, "PrintV2")
    p = program_of(g, fetches=[a1, a2, a3], targets=[printer, a2.op])
    q = eliminate_common_subexpressions(p)
    assert types(q) == ["AddV2", "PrintV2", "AddV2"]
    assert q.node("PrintV2").control_inputs == ("AddV2",)  # was AddV2_1, merged into AddV2
    assert q.node("AddV2_2").control_inputs == ("AddV2",)
    assert q.targets == ("PrintV2", "AddV2")
    assert q.fetches[0] == q.fetches[1] != q.fetches[2]
    assert_same_run(p, q, np.float32([1, 2]))


def _attr_op():
    """An unregistered op `x + k` with `k` an attribute (any value numpy can add)."""
    return OpDef("AddAttr", lambda xp, x, k: x + xp.asarray(k, x.dtype),
                 lambda x, k: Spec(x.shape, x.dtype))


def _attr_program(*ks):
    """A hand-built program adding each of `ks` (as an attribute) to the fed value."""
    op = _attr_op()
    nodes = [Node(f"add{i}", op, {"k": k}, (0,), (i + 1,)) for i, k in enumerate(ks)]
    specs = {v: Spec([2], F32) for v in range(len(ks) + 1)}
    return Program(nodes, feeds=(0,), fetches=tuple(range(1, len(ks) + 1)), specs=specs)


def test_cse_compares_attrs_exactly(cpu_only):  # (signed zeros: numpy's arithmetic)
    p = _attr_program(0.0, -0.0, 0.0, 1, 1.0, True, (1, 2), (1, 2), [1, 2],
                      np.array([1.0, 2.0]), np.array([1.0, 2.0]), float("nan"))
    q = eliminate_common_subexpressions(p)
    # merged: the second 0.0 into the first, the second (1, 2) tuple; arrays are never compared
    assert [n.name for n in q.nodes] == ["add0", "add1", "add3", "add4", "add5", "add6",
                                         "add8", "add9", "add10", "add11"]
    values = assert_same_run(p, q, np.float32([-0.0, 1]))
    assert not np.signbit(values[0][0]) and np.signbit(values[1][0])  # -0 + 0 vs -0 + -0


def test_cse_never_merges_random_ops():
    def f():
        return eager.random.uniform([8]), eager.random.uniform([8])

    g = trace(f)
    p = program_of(g)
    q = optimize(p)
    assert types(q).count("RandomUniform") == 2
    a, b = run(q)
    assert not np.array_equal(a, b)


def test_cse_never_merges_prints_and_both_print(capsys):
    def f(x):
        eager.print("tick", x)
        eager.print("tick", x)
        return x + 1.0

    g = trace(f, TensorSpec([]))
    q = optimize(program_of(g))
    assert types(q).count("PrintV2") == 2
    capsys.readouterr()
    (value,) = run(q, np.float32(2))
    assert value == 3
    printed = capsys.readouterr()
    assert (printed.out + printed.err).splitlines() == ["tick 2", "tick 2"]


def test_cse_keeps_reads_of_a_variable_apart():
    def make():
        v = eager.Variable(np.float32(1))

        def f():
            r1 = v.read_value()
            r2 = v.read_value()
            v.assign_add(10.0)
            r3 = v.read_value()
            return r1 + 1.0, r2 + 1.0, r3 + 1.0

        return v, f

    v, f = make()
    g = trace(f)
    p = program_of(g)
    q = optimize(p)
    assert types(q).count("ReadVariableOp") == 3
    assert types(q).count("AssignAddVariableOp") == 1
    assert [float(t) for t in run(q)] == [2.0, 2.0, 12.0]
    assert float(v.numpy()) == 11.0
    v2, f2 = make()
    assert [float(t) for t in f2()] == [2.0, 2.0, 12.0]  # eagerly: the same


# Expressions over one fed vector, with duplicates drawn on purpose.
_CSE_UNARY = {"neg": (eager.math.negative, np.negative), "tanh": (eager.math.tanh, np.tanh),
              "square": (eager.math.square, np.square), "abs": (eager.math.abs, np.abs)}
_CSE_BINARY = {"add": (eager.math.add, np.add), "mul": (eager.math.multiply, np.multiply),
               "sub": (eager.math.subtract, np.subtract),
               "max": (eager.math.maximum, np.maximum)}


@st.composite
def _expressions(draw):
    """Steps (op name, operand indices) over values [x, 0.5]; about a third repeat an earlier
    step exactly."""
    steps = []
    for _ in range(draw(st.integers(1, 12))):
        if steps and draw(st.integers(0, 2)) == 0:
            steps.append(draw(st.sampled_from(steps)))
            continue
        count = 2 + len(steps)
        name = draw(st.sampled_from(sorted(_CSE_UNARY) + sorted(_CSE_BINARY)))
        arity = 1 if name in _CSE_UNARY else 2
        steps.append((name, tuple(draw(st.integers(0, count - 1)) for _ in range(arity))))
    return steps


def _evaluate_steps(steps, x, half, table_index):
    values = [x, half]
    for name, operands in steps:
        table = _CSE_UNARY if name in _CSE_UNARY else _CSE_BINARY
        values.append(table[name][table_index](*(values[i] for i in operands)))
    return values[2:]


@given(_expressions(), st.lists(st.floats(-3, 3, width=32), min_size=3, max_size=3))
def test_cse_random_expressions_match_numpy_and_count_distinct(steps, xs):
    g = trace(lambda x: _evaluate_steps(steps, x, eager.constant(np.float32(0.5)), 0),
              TensorSpec([3]))
    p = program_of(g)
    q = eliminate_common_subexpressions(p)
    # Each distinct expression (by structure, after merging duplicates) is one node.
    canonical, distinct = {0: "x", 1: "half"}, set()
    for i, (name, operands) in enumerate(steps):
        args = tuple(canonical[j] for j in operands)
        if name in ("add", "mul"):  # commutative: either order is one computation
            args = tuple(sorted(args, key=repr))
        key = (name, args)
        canonical[i + 2] = key
        distinct.add(key)
    assert len(q.nodes) == len(distinct)
    feed = np.float32(xs)
    values = assert_same_run(p, q, feed)
    for got, want in zip(values, _evaluate_steps(steps, feed, np.float32(0.5), 1)):
        # (the runs agree exactly above; numpy's own ufuncs and a GPU's differ in the last bit)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


def test_cse_merges_real_sums_and_products_in_either_order_but_not_complex_ones():
    """`x * y` and `y * x` are one product for real dtypes (IEEE multiplication and addition are
    commutative); complex ones stay apart (a fused multiply-add may round them differently)."""
    def f(x, y):
        return x * y + y * x, (x + y) * (y + x), x - y, y - x

    for dtype, merged in ((eager.float32, True), (eager.int32, True), (eager.complex64, False)):
        g = trace(f, TensorSpec([3], dtype), TensorSpec([3], dtype))
        p = program_of(g)
        q = eliminate_common_subexpressions(p)
        expected = ["Mul", "AddV2", "AddV2", "Mul", "Sub", "Sub"] if merged else types(p)
        assert types(q) == expected, dtype
        feeds = [np.array([1.5, -2.0, 3.25]), np.array([0.5, 4.0, -1.0])]
        assert_same_run(p, q, *(a.astype(dtype.as_numpy_dtype) for a in feeds))


# -- broadcast folding -----------------------------------------------------------------------------
def test_fold_broadcasts_bypasses_broadcasts_their_readers_would_do_themselves():
    def f(x, s):
        b = eager.broadcast_to(s, [3, 4])
        return x * b - b / (x + 2.0)

    g = trace(f, TensorSpec([3, 4]), TensorSpec([4]))
    p = program_of(g)
    q = prune(fold_broadcasts(p))
    assert "BroadcastTo" in types(p) and "BroadcastTo" not in types(q)
    rng = np.random.default_rng(1)
    assert_same_run(p, q, rng.standard_normal((3, 4)).astype(np.float32),
                    rng.standard_normal(4).astype(np.float32))


@pytest.mark.parametrize("case", ["fetched", "both operands", "unary reader", "smaller other",
                                  "unknown other"])
def test_fold_broadcasts_keeps_broadcasts_that_change_something(case):
    """Kept where bypassing would change a value or a shape: the broadcast is fetched, it is
    both operands (the product would keep the small shape), a reader does not broadcast, or
    the other operand is smaller than (or not known to be) the broadcast shape."""
    def f(x, s):
        b = eager.broadcast_to(s, [3, 4])
        if case == "fetched":
            return x * b, b
        if case == "both operands":
            return b * b
        if case == "unary reader":
            return x * eager.math.exp(b)
        return b * x  # x is [4], or [None, 4]

    x_spec = {"smaller other": TensorSpec([4]), "unknown other": TensorSpec([None, 4])}.get(
        case, TensorSpec([3, 4]))
    g = trace(f, x_spec, TensorSpec([4]))
    p = program_of(g)
    q = fold_broadcasts(p)
    assert q is p
    if case != "unknown other":
        shape = (4,) if case == "smaller other" else (3, 4)
        assert_same_run(p, optimize(p), np.ones(shape, np.float32), np.arange(4, dtype=np.float32))


@given(big=st.lists(st.integers(1, 3), min_size=0, max_size=3), data=st.data(),
       name=st.sampled_from(["add", "sub", "mul", "div", "maximum", "minimum", "pow"]))
def test_fold_broadcasts_random_shapes_give_the_same_values(big, data, name):
    """A source of any shape that broadcasts to `big`, broadcast and combined with a tensor of
    `big` (in either operand order): the optimised program's values are bit-identical."""
    small = [data.draw(st.sampled_from([1, d])) for d in big][data.draw(st.integers(0, len(big))):]
    swap = data.draw(st.booleans())
    op = {"add": eager.math.add, "sub": eager.math.subtract, "mul": eager.math.multiply,
          "div": eager.math.divide, "maximum": eager.math.maximum,
          "minimum": eager.math.minimum, "pow": eager.math.pow}[name]

    def f(x, s):
        b = eager.broadcast_to(s, big)
        return op(b, x) if swap else op(x, b)

    g = trace(f, TensorSpec(big), TensorSpec(small))
    p = program_of(g)
    q = optimize(p)
    assert "BroadcastTo" not in types(q)
    rng = np.random.default_rng(len(big) + 7 * len(small))
    x = (rng.random(big) + 0.5).astype(np.float32)
    s = (rng.random(small) + 0.5).astype(np.float32)
    assert_same_run(p, q, x, s)


# -- multiplicative identities ---------------------------------------------------------------------
_SPECIAL = [1.5, -0.0, 0.0, np.inf, -np.inf, np.nan, -3e38, 1e-45]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_bypass_identities_reads_products_and_quotients_by_ones_as_the_operand(dtype):
    """x * 1, 1 * x and x / 1 (a constant of ones, however it was made) read as x: the values
    are bit-identical, signed zeros, infinities and NaNs included."""
    is_float = np.issubdtype(dtype, np.floating)
    n = len(_SPECIAL) if is_float else 4
    ones = np.ones(n, dtype)

    def f(x):
        one = eager.constant(ones)
        a = (x * one) * one  # a chain of them reads the first operand
        b = eager.ones([n], dtype=eager.as_dtype(dtype)) * x  # folded into a constant first
        q = x / one if is_float else x
        return a - b + q

    g = trace(f, TensorSpec([n], eager.as_dtype(dtype)))
    p = program_of(g)
    folded = fold_constants(p)
    q = prune(bypass_identities(folded))
    q.validate()
    assert "Mul" in types(folded) and "Mul" not in types(q) and "RealDiv" not in types(q)
    x = np.array(_SPECIAL, dtype) if is_float else np.array([3, -7, 0, 2**31 - 1], dtype)
    expected, got = run(p, x)[0], run(q, x)[0]
    np.testing.assert_array_equal(got, expected)
    if is_float:
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("case", ["complex", "not all ones", "broadcasts x", "fetched",
                                  "ones divided by x", "unknown shape"])
def test_bypass_identities_keeps_what_is_no_identity(case):
    """Kept where reading x would change a value, a shape or a fetch: complex products (not
    exact: (inf + 0j) * (1 + 0j) has a NaN part), a constant with another value, ones that
    broadcast x to a larger shape, a fetched product (it would return x itself), 1 / x, and
    an output shape not known to be x's."""
    dtype = eager.complex64 if case == "complex" else eager.float32
    shape = [None] if case == "unknown shape" else [3]
    value = {"not all ones": [1.0, 2.0, 1.0], "broadcasts x": [[1.0] * 3] * 2}.get(case,
                                                                                  [1.0] * 3)

    def f(x):
        one = eager.cast(eager.constant(np.array(value, np.float32)), dtype)
        if case == "ones divided by x":
            return one / x + 1.0
        if case == "fetched":
            return x * one
        return x * one + eager.cast(2.0, dtype)

    g = trace(f, TensorSpec(shape, dtype))
    p = fold_constants(program_of(g))
    assert bypass_identities(p) is p


def test_bypass_identities_in_the_default_pipeline():
    """`optimize` bypasses ones made by folding after broadcasts are folded too."""
    def f(x):
        ones = eager.broadcast_to(eager.reshape(eager.constant(1.0), [1]), [4])
        return eager.math.exp(ones * x) + x

    g = trace(f, TensorSpec([4]))
    p = program_of(g)
    q = optimize(p, options=PassOptions(validate=True))
    assert types(q) == ["Fused[Exp,AddV2]"]
    x = np.array([0.5, -0.0, np.inf, np.nan], np.float32)
    assert_same_run(p, q, x)


# -- elementwise fusion ----------------------------------------------------------------------------
def _chain(x):
    for _ in range(50):
        x = x * 1.0001 + 0.5
    return x


def test_fuse_long_chain_into_one_bit_identical_node():
    g = trace(_chain, TensorSpec([4]))
    p = program_of(g)
    assert len(p.nodes) == 100
    q = fuse_elementwise(p)
    (node,) = q.nodes
    assert node.type.startswith("Fused[Mul,AddV2") and node.name == "AddV2_49"
    assert node.outputs == p.nodes[-1].outputs and not node.op_def.stateful
    feed = np.float32([0, 1, -2.5, 1e6])
    (value,) = assert_same_run(p, q, feed)
    np.testing.assert_array_equal(value, _chain(eager.constant(feed)).numpy())
    expected = feed
    for _ in range(50):
        expected = expected * np.float32(1.0001) + np.float32(0.5)
    np.testing.assert_array_equal(value, expected)


def test_fuse_does_not_fuse_away_fetched_or_shared_intermediates():
    def f(x):
        a = x * 2.0  # fetched
        b = eager.math.exp(a + 1.0)
        c = eager.math.sin(b)  # read by two nodes
        return b * 3.0, c + 1.0, eager.math.cos(c), a

    g = trace(f, TensorSpec([3]))
    p = program_of(g)
    q = fuse_elementwise(p)
    fused = fused_nodes(q)
    assert [n.type for n in fused] == ["Fused[AddV2,Exp]"]
    assert types(q) == ["Mul", "Fused[AddV2,Exp]", "Sin", "Mul", "AddV2", "Cos"]
    feed = np.float32([0, 0.5, -1])
    values = assert_same_run(p, q, feed)
    for got, want in zip(values, f(eager.constant(feed))):
        np.testing.assert_array_equal(got, want.numpy())


def test_fuse_expression_tree_with_shared_external_input():
    def f(x, y):
        return eager.nn.relu(x * y + (x - y))

    g = trace(f, TensorSpec([2, 3]), TensorSpec([3]))
    p = program_of(g)
    q = fuse_elementwise(p)
    (node,) = q.nodes
    assert node.type == "Fused[Mul,Sub,AddV2,Relu]" and len(node.inputs) == 2
    spec = node.op_def.infer(Spec([None, 3], F32), Spec([3], F32))
    assert spec.dtype is F32 and spec.shape.as_list() == [None, 3]
    xv = np.float32([[1, -2, 3], [0.5, 4, -1]])
    yv = np.float32([2, 1, -3])
    (value,) = assert_same_run(p, q, xv, yv)
    np.testing.assert_array_equal(value, np.maximum(xv * yv + (xv - yv), 0))


def test_fuse_tree_with_an_intermediate_read_twice_by_one_node():
    def f(x):
        doubled = eager.math.exp(x) + eager.math.exp(x)  # CSE makes this one Exp read twice
        return doubled * eager.math.sin(x) - eager.math.cos(x)

    g = trace(f, TensorSpec([3]))
    p = eliminate_common_subexpressions(program_of(g))
    q = fuse_elementwise(p)
    assert types(q) == ["Fused[Exp,AddV2,Sin,Mul,Cos,Sub]"]
    feed = np.float32([0.25, -1, 2])
    (value,) = assert_same_run(p, q, feed)
    np.testing.assert_array_equal(value, f(eager.constant(feed)).numpy())


def test_fuse_respects_devices_targets_control_edges_and_stateful_ops(logical_cpus):
    logical_cpus(2)
    g = Graph(auto_control_deps=False)
    with g.as_default():
        x = g.placeholder(F32, [2], name="x")
        r = eager.random.uniform([2])
        a = eager.math.exp(r * x)  # Mul, Exp: fused (the random op is not)
        with eager.device("CPU:1"):
            b = a + 1.0  # another device: not fused with a
            c = eager.math.tanh(b)  # fused with b
        waited = c * 2.0  # waited for by d: must stay a node
        with g.control_dependencies([waited]):
            d = eager.math.sqrt(x)
        out = eager.math.abs(waited) + d
        t = eager.math.cos(x)  # a target: must stay a node
        eager.math.sin(t)
    target = first_op(g, "Cos")
    p = program_of(g, fetches=[out], targets=[target, r.op])
    q = fuse_elementwise(p)
    assert types(q) == ["RandomUniform", "Fused[Mul,Exp]", "Fused[AddV2,Tanh]", "Mul",
                        "Fused[Sqrt,Abs,AddV2]", "Cos", "Sin"]
    assert q.node("Tanh").device.endswith("CPU:1") and q.node("Exp").device == ""
    # the Sqrt's control input moves to its fused node, which takes the root's name
    assert q.node(out.op.name).control_inputs == (waited.op.name,)
    q.validate()
    # the random draw differs per run: compare both programs with the op's output fed over
    fixed = program_of(g, feeds=[x, r], fetches=[out], targets=[target])
    assert_same_run(fixed, fuse_elementwise(fixed), np.float32([1, 2]), np.float32([0.25, 0.5]))
    assert run_program(q, [eager.constant(np.float32([1, 2]))])[0].shape == (2,)


def test_fuse_unions_members_control_inputs():
    g = Graph(auto_control_deps=False)
    with g.as_default():
        x = g.placeholder(F32, [2], name="x")
        p1 = eager.math.sin(x)
        p2 = eager.math.cos(x)
        with g.control_dependencies([p1]):
            a = x * 2.0
        with g.control_dependencies([p2]):
            b = a + 1.0
    p = program_of(g, fetches=[b], targets=[p1.op, p2.op])
    q = fuse_elementwise(p)
    (fused,) = fused_nodes(q)
    assert fused.type == "Fused[Mul,AddV2]" and fused.control_inputs == ("Sin", "Cos")
    assert_same_run(p, q, np.float32([1, 2]))


def test_fuse_ops_with_attributes():
    def f(x):
        y = eager.nn.gelu(eager.cast(x, eager.float64) * 3.0, approximate=True)
        return eager.cast(eager.nn.gelu(y), eager.int32)

    g = trace(f, TensorSpec([4]))
    p = program_of(g)
    q = fuse_elementwise(p)
    assert types(q) == ["Fused[Cast,Mul,Gelu,Gelu,Cast]"]
    spec = q.nodes[0].op_def.infer(Spec([4], F32), Spec([], eager.float64))
    assert spec.dtype is eager.int32
    feed = np.float32([-3, 0.5, 2, 7.25])
    (value,) = assert_same_run(p, q, feed)
    assert value.dtype == np.int32
    np.testing.assert_array_equal(value, f(eager.constant(feed)).numpy())


def test_fused_kernel_error_surfaces_like_unfused():
    def f(x, y):
        return eager.math.floordiv(x, y) + 1

    g = trace(f, TensorSpec([2], eager.int32), TensorSpec([2], eager.int32))
    p = program_of(g)
    q = fuse_elementwise(p)
    assert types(q) == ["Fused[FloorDiv,AddV2]"]
    feeds = (np.int32([1, 2]), np.int32([1, 0]))
    with pytest.raises(InvalidArgumentError) as unfused:
        run(p, *feeds)
    with pytest.raises(InvalidArgumentError) as fused:
        run(q, *feeds)
    assert str(fused.value) == str(unfused.value)
    assert "Integer division by zero" in str(fused.value)


class _TracingXp:
    """Stands in for CuPy where there is no GPU: numpy's functions, plus a `fuse` that records
    what it was given (and, when `refuse` is set, returns functions that raise, as cupy.fuse's
    tracer does for a kernel it cannot take)."""

    def __init__(self, refuse=False):
        self.fused_names, self.fused_calls, self.refuse = [], 0, refuse

    def __getattr__(self, name):
        return getattr(np, name)

    def fuse(self, kernel_name):
        self.fused_names.append(kernel_name)

        def decorate(fn):
            def call(*arrays):
                self.fused_calls += 1
                if self.refuse:
                    raise NotImplementedError("`shape` is not supported, currently.")
                return fn(*arrays)
            return call
        return decorate


@pytest.mark.parametrize("refuse", [False, True], ids=["traced", "refused"])
def test_fused_kernels_on_a_gpu_run_as_one_device_kernel_or_fall_back(refuse):
    # Given a GPU's array module, a fused node's kernel hands the whole cluster to the module's
    # `fuse` once (one device kernel per dtype signature); a cluster the tracer refuses runs its
    # kernels one by one from then on. Either way the values are the unfused ones.
    def f(x, y):
        return eager.nn.relu(eager.math.tanh(x * y + x) * y - x)

    g = trace(f, TensorSpec([4]), TensorSpec([4]))
    (node,) = fuse_elementwise(program_of(g)).nodes
    assert node.type == "Fused[Mul,AddV2,Tanh,Mul,Sub,Relu]"
    kernel = node.op_def.kernel
    feed = np.float32([0, 1, -2.5, 1e6]), np.float32([0.5, -1, 2, 3])
    expected = f(*map(eager.constant, feed)).numpy()
    xp = _TracingXp(refuse)
    for _ in range(3):
        np.testing.assert_array_equal(kernel(xp, *feed), expected)
    assert len(xp.fused_names) == 1 and xp.fused_names[0].startswith("eager_fused_")
    assert xp.fused_names[0].isidentifier()  # (CUDA source names the kernel after it)
    # The same cluster traced again (a function made again) names its device kernel the same,
    # so CuPy compiles it once; another cluster gets another name.
    (again,) = fuse_elementwise(program_of(trace(f, TensorSpec([4]), TensorSpec([4])))).nodes
    assert again.op_def.kernel.on_device._name == kernel.on_device._name
    (other,) = fuse_elementwise(program_of(trace(lambda x, y: eager.nn.relu(x * y - x),
                                                 TensorSpec([4]), TensorSpec([4])))).nodes
    assert other.op_def.kernel.on_device._name != kernel.on_device._name
    assert xp.fused_calls == (1 if refuse else 3)
    assert kernel.on_device.fused is not refuse
    np.testing.assert_array_equal(kernel(np, *feed), expected)  # the CPU never goes there
    assert xp.fused_calls == (1 if refuse else 3)


class _KernelObjectXp(_TracingXp):
    """`_TracingXp` with CuPy's `ElementwiseKernel` (the numpy stand-in of `cupy_stand_in`),
    counting the kernel objects made and called."""

    def __init__(self):
        super().__init__()
        self.made, self.called = [], 0
        outer = self

        class Counting(ElementwiseKernel):
            def __init__(self, *args, **kwargs):
                outer.made.append(args[3])
                super().__init__(*args, **kwargs)

            def __call__(self, *args):
                outer.called += 1
                return super().__call__(*args)

        self.ElementwiseKernel = Counting


def test_a_cluster_of_the_kernel_layers_ops_runs_as_one_kernel_object_per_dtype():
    def f(x, y):
        return eager.nn.relu(eager.math.tanh(x * y + x) * y - x)

    def g(x, y):
        return eager.math.log(x * y) - y  # `Log` has no source in the kernel layer

    xp = _KernelObjectXp()
    for fn, dtype in ((f, np.float32), (f, np.float64), (g, np.float32)):
        (node,) = fuse_elementwise(program_of(trace(fn, TensorSpec([4], eager.as_dtype(dtype)),
                                                    TensorSpec([4], eager.as_dtype(dtype))))).nodes
        feed = np.array([0, 1, -2.5, 1e6], dtype), np.array([0.5, -1, 2, 3], dtype)
        expected = fn(*map(eager.constant, feed)).numpy()
        for _ in range(2):
            np.testing.assert_array_equal(node.op_def.kernel(xp, *feed), expected)
        assert node.op_def.kernel.on_device.fused
    assert [name.rsplit("_", 1)[1] for name in xp.made] == ["float32", "float64"]
    assert xp.called == 4  # f's calls; g's cluster went to `fuse`
    assert len(xp.fused_names) == 1 and xp.fused_calls == 2


def test_a_fused_kernels_own_error_is_raised_after_the_device_attempt():
    def f(x, y):
        return eager.math.floordiv(x, y) + 1

    g = trace(f, TensorSpec([2], eager.int32), TensorSpec([2], eager.int32))
    (node,) = fuse_elementwise(program_of(g)).nodes
    one = next(value for value in program_of(g).constants.values())
    with pytest.raises(InvalidArgumentError, match="Integer division by zero"):
        node.op_def.kernel(_TracingXp(), np.int32([1, 2]), np.int32([1, 0]), one._value)


def test_fused_kernel_source_is_registered_for_tracebacks():
    g = trace(lambda x: eager.math.exp(x) * 2.0, TensorSpec([2]))
    (node,) = fuse_elementwise(program_of(g)).nodes
    code = node.op_def.kernel.__code__
    lines = linecache.getlines(code.co_filename)
    assert lines[0].startswith("def fused_kernel(xp, a0, a1)")
    assert "if xp is not _np" in lines[1]  # (a GPU's arrays go to one device kernel)
    assert "# Exp (node 'Exp')" in lines[3] and "# Mul (node 'Mul')" in lines[4]


def test_elementwise_ops_are_the_registered_math_ops():
    names = {op.name for op in registered_ops() if op.elementwise}
    assert {"AddV2", "Mul", "Sub", "RealDiv", "Exp", "Tanh", "Relu", "Cast", "SelectV2",
            "ReluGrad"} <= names
    assert not names & {"MatMul", "Sum", "Reshape", "RandomUniform", "Identity"}


_FUSE_UNARY = {
    "neg": eager.math.negative, "abs": eager.math.abs, "square": eager.math.square,
    "sqrt": eager.math.sqrt, "exp": eager.math.exp, "log": eager.math.log,
    "log1p": eager.math.log1p, "sin": eager.math.sin, "tanh": eager.math.tanh,
    "sigmoid": eager.math.sigmoid, "relu": eager.nn.relu, "rsqrt": eager.math.rsqrt,
    "sign": eager.math.sign,
}
_FUSE_BINARY = {
    "add": eager.math.add, "sub": eager.math.subtract, "mul": eager.math.multiply,
    "div": eager.math.divide, "max": eager.math.maximum, "min": eager.math.minimum,
    "pow": eager.math.pow,
}
_OPERAND_SHAPES = {"scalar": (), "row": (3,), "column": (2, 1), "full": (2, 3)}


@st.composite
def _elementwise_chains(draw):
    """A chain of steps; a binary step's other operand is the feed, the step's own input or a
    constant of a shape that broadcasts against (2, 3)."""
    steps = []
    for _ in range(draw(st.integers(1, 10))):
        if draw(st.booleans()):
            steps.append((draw(st.sampled_from(sorted(_FUSE_UNARY))), None))
        else:
            name = draw(st.sampled_from(sorted(_FUSE_BINARY)))
            shape = _OPERAND_SHAPES[draw(st.sampled_from(sorted(_OPERAND_SHAPES)))]
            value = draw(st.lists(st.floats(-4, 4, allow_nan=False, width=32),
                                  min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
            other = draw(st.sampled_from([None, "self", np.array(value).reshape(shape)]))
            steps.append((name, other))
    return steps


def _apply_chain(steps, x, dtype):
    y = x
    for name, other in steps:
        if other is None and name in _FUSE_UNARY:
            y = _FUSE_UNARY[name](y)
        elif isinstance(other, str):  # "self": the previous result read twice by one node
            y = _FUSE_BINARY[name](y, y)
        else:
            operand = x if other is None else eager.constant(other.astype(dtype))
            y = _FUSE_BINARY[name](y, operand)
    return y


@given(_elementwise_chains(), st.sampled_from([np.float32, np.float64]),
       st.lists(st.floats(-5, 5, width=32) | st.sampled_from([0.0, -0.0, np.inf, np.nan]),
                min_size=6, max_size=6))
def test_fusion_random_chains_are_bit_identical(steps, dtype, xs):
    g = trace(lambda x: _apply_chain(steps, x, dtype), TensorSpec([2, 3], eager.as_dtype(dtype)))
    p = program_of(g)
    q = fuse_elementwise(p)
    if len(p.nodes) >= 2:
        assert len(q.nodes) == 1 and fused_nodes(q)
    else:
        assert q is p
    feed = np.array(xs, dtype).reshape(2, 3)
    (value,) = assert_same_run(p, q, feed)
    np.testing.assert_array_equal(value, _apply_chain(steps, eager.constant(feed), dtype).numpy())
    (optimised,) = assert_same_run(p, optimize(p), feed)
    np.testing.assert_array_equal(optimised, value)


def test_fold_and_fuse_on_a_simulated_gpu(simulated_gpu):
    c = eager.constant(np.float32([1, 2, 3]))
    assert c.device.endswith("GPU:0")

    def f(x):
        return eager.math.tanh(x * eager.math.exp(c) + 0.5)

    g = trace(f, TensorSpec([3]))
    p = program_of(g)
    q = optimize(p, options=PassOptions(validate=True))
    assert types(q) == ["Fused[Mul,AddV2,Tanh]"]
    (folded,) = [t for v, t in q.constants.items() if v == q.nodes[0].inputs[1]]
    assert folded._meta.device is simulated_gpu  # computed on the CPU, kept where it would be
    feed = np.float32([0.5, -1, 2])
    (value,) = assert_same_run(p, q, feed)
    np.testing.assert_array_equal(value, f(eager.constant(feed)).numpy())
    assert run_program(q, [eager.constant(feed)])[0]._meta.device is simulated_gpu


# -- scaled updates ------------------------------------------------------------------------------
def _update_program(update, *variables, specs=None):
    specs = (TensorSpec([2, 3]),) if specs is None else specs
    cf = eager.function(update).get_concrete_function(*specs)
    return Program.from_graph(cf.graph, constants={ph: val for val, ph in cf.graph.captures})


def _run_twice_on_copies(program, start, *feeds):
    """The variables' values after running `program` twice from `start` (variables reset)."""
    variables, values = start
    for v, value in zip(variables, values):
        v.assign(value)
    for _ in range(2):
        run_program(program, [eager.constant(f) for f in feeds])
    return [v.numpy() for v in variables]


def test_assign_sub_of_a_scaled_value_becomes_one_gradient_descent_update(simulated_gpu):
    rng = np.random.default_rng(5)
    start = rng.standard_normal((2, 3)).astype(np.float32)
    v, w = eager.Variable(start), eager.Variable(start[0])

    def update(g):
        v.assign_sub(0.1 * g)  # scalar first
        w.assign_sub(g[1] * eager.constant(0.3))  # scalar second
        return v.read_value()

    p = _update_program(update, v, w)
    q = prune(fold_scaled_updates(p))
    q.validate()
    assert types(p).count("Mul") == 2 and "ResourceApplyGradientDescent" not in types(p)
    assert types(q).count("ResourceApplyGradientDescent") == 2 and "Mul" not in types(q)
    assert "AssignSubVariableOp" not in types(q)
    assert [n.name for n in q.nodes if n.type == "ResourceApplyGradientDescent"] == [
        n.name for n in p.nodes if n.type == "AssignSubVariableOp"]  # names and places kept
    g = rng.standard_normal((2, 3)).astype(np.float32) * 1e3
    g[0, 0] = np.inf
    expected = _run_twice_on_copies(p, ([v, w], [start, start[0]]), g)
    got = _run_twice_on_copies(q, ([v, w], [start, start[0]]), g)
    for e, actual in zip(expected, got):
        np.testing.assert_array_equal(actual, e)  # bit for bit: one rounding each, as before
    np.testing.assert_array_equal(got[0], start - np.float32(0.1) * g - np.float32(0.1) * g)
    assert optimize(p, options=PassOptions(validate=True)).nodes[-1].type == "Identity"


def test_scaled_updates_of_variables_on_the_cpu_are_left_alone():
    """There the compiled program scales the gradient in place already (module doc)."""
    v = eager.Variable(np.zeros((2, 3), np.float32))
    with eager.device("CPU:0"):
        w = eager.Variable(np.zeros((2, 3), np.float32))
    for variable in (v, w):
        if variable.device.endswith("CPU:0"):
            p = _update_program(lambda g, variable=variable: variable.assign_sub(0.1 * g))
            assert fold_scaled_updates(p) is p


def test_scaled_updates_are_left_alone_where_the_product_is_seen_broadcast_or_unknown(
        simulated_gpu):
    v = eager.Variable(np.zeros((2, 3), np.float32))
    s = eager.Variable(np.float32(1.0))
    loose = eager.Variable(np.zeros((2, 3), np.float32), shape=eager.TensorShape(None))

    def shared(g):
        scaled = 0.1 * g
        v.assign_sub(scaled)
        return scaled  # the product is fetched: it must exist

    def broadcast(g):
        v.assign_sub(g * eager.ones([2, 1]))  # no scalar operand: the product broadcasts
        s.assign_sub(2.0 * g[0, 0])  # a scalar variable and delta: that one is folded
        return v.read_value()

    def unknown_shape(g):
        loose.assign_sub(0.5 * g)  # the variable's shape is not known
        return g

    for fn, folded in ((shared, 0), (broadcast, 1), (unknown_shape, 0)):
        p = _update_program(fn, v)
        q = fold_scaled_updates(p)
        assert types(q).count("ResourceApplyGradientDescent") == folded, fn.__name__
        if not folded:
            assert q is p
    p = _update_program(lambda g: v.assign_sub(0.1 * g), v, specs=(TensorSpec([None, 3]),))
    assert fold_scaled_updates(p) is p  # delta's shape unknown


def test_a_traced_training_step_runs_its_scaled_updates_as_before(simulated_gpu):
    """The traced step of TensorFlow's guides (`assign_sub(lr * g)`), against eager."""
    rng = np.random.default_rng(2)
    start = [rng.standard_normal((4, 3)).astype(np.float32), np.zeros(3, np.float32)]
    x = rng.standard_normal((8, 4)).astype(np.float32)

    def step(params):
        with eager.GradientTape() as tape:
            loss = eager.reduce_mean(eager.square(eager.matmul(x, params[0]) + params[1]))
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(0.05 * g)
        return loss

    eager_params = [eager.Variable(a) for a in start]
    traced_params = [eager.Variable(a) for a in start]
    traced = eager.function(lambda: step(traced_params))
    for _ in range(3):
        assert float(traced()) == float(step(eager_params))
    for e, t in zip(eager_params, traced_params):
        np.testing.assert_array_equal(t.numpy(), e.numpy())
    kinds = [n.type for n in traced.experimental_get_program().nodes]
    assert kinds.count("ResourceApplyGradientDescent") == 2 and "AssignSubVariableOp" not in kinds


# -- grouped updates -----------------------------------------------------------------------------
def _gd(variable, lr, g):
    execute(training_ops.APPLY_GRADIENT_DESCENT, (variable.handle, lr, g))


def _everywhere(device):  # as if every device ran grouped updates (the CUDA backend does)
    return True


def _grouped(program, kind="_GroupedResourceApplyGradientDescent"):
    return [n for n in program.nodes if n.type == kind]


def test_gradient_descent_updates_of_one_learning_rate_become_one_grouped_update():
    rng = np.random.default_rng(8)
    starts = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3)]
    with eager.device("CPU:0"):  # (whatever the default device: the CPU never groups)
        variables = [eager.Variable(a) for a in starts]

    def update(g):
        for i, v in enumerate(variables):  # each update captures its own equal 0.1
            _gd(v, eager.constant(0.1), g * float(i + 1))
        return g

    p = _update_program(update)
    assert group_updates(p) is p  # the CPU runs one update per variable
    q = group_updates(p, groups=_everywhere)
    q.validate()
    (node,) = _grouped(q)
    assert "ResourceApplyGradientDescent" not in types(q)
    assert node.name == [n.name for n in p.nodes if n.type == "ResourceApplyGradientDescent"][-1]
    assert set(q.targets) <= {n.name for n in q.nodes} and node.name in q.targets
    g = rng.standard_normal((2, 3)).astype(np.float32)
    expected = _run_twice_on_copies(p, (variables, starts), g)
    got = _run_twice_on_copies(q, (variables, starts), g)
    for e, actual in zip(expected, got):
        np.testing.assert_array_equal(actual, e)


def test_a_group_closes_before_a_node_that_waits_for_a_member():
    """Program order and edges are kept: a read of an updated variable sees its update, and a
    variable's second update comes after its first."""
    rng = np.random.default_rng(9)
    starts = [rng.standard_normal(4).astype(np.float32) for _ in range(3)]
    a, b, c = variables = [eager.Variable(s) for s in starts]
    lr, other = eager.constant(0.5), eager.constant(0.25)

    def update(g):
        _gd(a, lr, g)
        seen = a.read_value() * 2.0  # waits for a's update: the group {a} closes here
        _gd(b, lr, g)
        _gd(c, lr, seen)
        _gd(b, lr, g * 3.0)  # b again: after its first update, so in a new group
        _gd(a, other, g)  # another learning rate: a group of its own
        return seen

    p = _update_program(update, specs=(TensorSpec([4]),))
    q = group_updates(p, groups=_everywhere)
    q.validate()
    assert [len(n.inputs) // 2 for n in _grouped(q)] == [2]  # {b, c}; the rest stay alone
    assert types(q).count("ResourceApplyGradientDescent") == 3
    g = rng.standard_normal(4).astype(np.float32)
    for v, s in zip(variables, starts):
        v.assign(s)
    (expected_seen,) = run(p, g)
    expected = [v.numpy() for v in variables]
    for v, s in zip(variables, starts):
        v.assign(s)
    (seen,) = run(q, g)
    np.testing.assert_array_equal(seen, expected_seen)
    for v, e in zip(variables, expected):
        np.testing.assert_array_equal(v.numpy(), e)


@pytest.mark.parametrize(("make", "grouped_type", "width"), [
    (lambda: eager.optimizers.Adam(0.01), "_GroupedResourceApplyAdam", 3 * 3 + 6 + 3),
    (lambda: eager.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
     "_GroupedResourceApplyKerasMomentum", 3 * 2 + 2 + 3)])
def test_an_optimizers_updates_of_one_step_become_one_grouped_update(make, grouped_type, width):
    """An optimizer's traced step: its update nodes share the step's scalars (and attributes:
    Nesterov's)."""
    rng = np.random.default_rng(4)
    starts = [rng.standard_normal(s).astype(np.float32) for s in [(2, 3), (3,), (2, 3)]]
    variables = [eager.Variable(a) for a in starts]
    optimizer = make()
    optimizer.build(variables)

    def update(g):
        optimizer.apply_gradients([(g, variables[0]), (g[0] * 2.0, variables[1]),
                                   (-g, variables[2])])
        return g

    p = _update_program(update)
    q = group_updates(p, groups=_everywhere)
    q.validate()
    (node,) = _grouped(q, grouped_type)
    assert len(node.inputs) == width and grouped_type[len("_Grouped"):] not in types(q)
    assert node.attrs == p.node(node.name).attrs
    g = rng.standard_normal((2, 3)).astype(np.float32)
    slots = list(optimizer.variables)  # the step counter too: the bias corrections read it
    start_slots = [s.numpy() for s in slots]
    expected = _run_twice_on_copies(p, (variables + slots, starts + start_slots), g)
    got = _run_twice_on_copies(q, (variables + slots, starts + start_slots), g)
    for e, actual in zip(expected, got):
        np.testing.assert_array_equal(actual, e)


# -- the pipeline ----------------------------------------------------------------------------------
def _mlp_like(x, w, b):
    h = eager.nn.relu(eager.matmul(x, w) + b)
    h2 = eager.nn.relu(eager.matmul(x, w) + b)  # a duplicate for CSE
    scale = eager.math.sqrt(eager.cast(eager.size(x), eager.float32))  # static: folds
    eager.math.exp(h) * 7.0  # unused: pruned
    return (h + h2) / scale * 0.5 - 1.0


def test_optimize_default_pipeline():
    assert DEFAULT_PASSES == ("prune", "fold_constants", "cse", "fold_broadcasts",
                              "bypass_identities", "fold_scaled_updates", "group_updates",
                              "prune", "fuse_elementwise", "overlap_collectives")
    g = trace(_mlp_like, TensorSpec([4, 3]), TensorSpec([3, 2]), TensorSpec([2]))
    p = program_of(g)
    q = optimize(p, options=PassOptions(validate=True))
    assert types(q) == ["MatMul", "Fused[AddV2,Relu,AddV2,RealDiv,Mul,Sub]"]
    rng = np.random.default_rng(0)
    feeds = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3, 2), (2,)]]
    (value,) = assert_same_run(p, q, *feeds)
    np.testing.assert_array_equal(value, _mlp_like(*map(eager.constant, feeds)).numpy())


def test_optimize_passes_can_be_switched_off_or_chosen():
    g = trace(_mlp_like, TensorSpec([4, 3]), TensorSpec([3, 2]), TensorSpec([2]))
    p = program_of(g)
    no_fusion = optimize(p, options=PassOptions(fuse_elementwise=False))
    assert not fused_nodes(no_fusion) and types(no_fusion).count("MatMul") == 1
    no_cse = optimize(p, options=PassOptions(cse=False, fuse_elementwise=False))
    assert types(no_cse).count("MatMul") == 2 and "Exp" not in types(no_cse)
    nothing = optimize(p, options=PassOptions(prune=False, fold_constants=False, cse=False,
                                              bypass_identities=False, fold_broadcasts=False,
                                              fuse_elementwise=False))
    assert nothing is p
    only_prune = optimize(p, passes=("prune",))
    assert "Exp" not in types(only_prune) and "Size" in types(only_prune)
    feeds = [np.ones(s, np.float32) for s in [(4, 3), (3, 2), (2,)]]
    for q in (no_fusion, no_cse, only_prune):
        assert_same_run(p, q, *feeds)
    with pytest.raises(ValueError, match="unknown pass 'inline'"):
        optimize(p, passes=("prune", "inline"))
    with pytest.raises(ValueError, match="unknown pass bogus"):
        PassOptions(bogus=False)


def test_optimize_keeps_every_side_effect(capsys):
    v = eager.Variable(np.float32(0))

    @eager.function
    def step(x):
        eager.print("step")
        eager.print("step")
        v.assign_add(x * 2.0)
        v.assign_add(x * 2.0)
        return eager.random.uniform([2]) + 0.0 * x

    cf = step.get_concrete_function(TensorSpec([]))
    p = Program.from_graph(cf.graph, constants={ph: val for val, ph in cf.graph.captures})
    q = optimize(p, options=PassOptions(validate=True))
    kinds = types(q)
    assert kinds.count("PrintV2") == 2 and kinds.count("AssignAddVariableOp") == 2
    assert kinds.count("RandomUniform") == 1
    assert set(q.targets) == set(p.targets)
    capsys.readouterr()
    run(q, np.float32(1.5))
    assert float(v.numpy()) == 6.0
    printed = capsys.readouterr()
    assert (printed.out + printed.err).splitlines() == ["step", "step"]
