"""eager.Session: TF1-style runs by feeds and fetches, pruning per request, the executable cache
(fast key, sorted key), errors as TensorFlow's."""

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager
from eager.graph import Graph
from eager.runtime.compiler import CompiledProgram


def _graph():
    g = Graph("g")
    with g.as_default():
        x = g.placeholder(eager.float32, [None], name="x")
        y = g.placeholder(eager.float32, [None], name="y")
        a = x * 2.0
        b = a + y
        c = eager.reduce_sum(a)
    return g, x, y, a, b, c


def test_fetch_structures_by_tensor_and_by_name():
    g, x, y, a, b, c = _graph()
    sess = eager.Session(g)
    xv, yv = np.array([1.0, 2.0], np.float32), np.array([0.5, -1.0], np.float32)
    np.testing.assert_array_equal(sess.run(a, {x: xv}), xv * 2)
    out = sess.run([b, "Sum:0"], {"x:0": xv, y: yv})
    np.testing.assert_array_equal(out[0], xv * 2 + yv)
    assert out[1] == pytest.approx(6.0)
    pair = collections.namedtuple("pair", "first second")
    got = sess.run({"p": pair(c, a), "q": (b,)}, {x: xv, y: yv})
    assert isinstance(got["p"], pair) and got["p"].first == pytest.approx(6.0)
    np.testing.assert_array_equal(got["q"][0], xv * 2 + yv)


def test_runs_only_what_the_fetches_need():
    g, x, y, a, b, c = _graph()
    sess = eager.Session(g)
    # y is not needed for a or c: it need not be fed
    assert sess.run(c, {x: [1.0, 1.0, 1.0]}) == pytest.approx(6.0)
    with pytest.raises(eager.errors.InvalidArgumentError,
                       match="You must feed a value for placeholder tensor 'y'"):
        sess.run(b, {x: [1.0]})


def test_feeding_an_intermediate_tensor_replaces_it():
    g, x, y, a, b, c = _graph()
    sess = eager.Session(g)
    # a is fed: x is then not needed at all
    np.testing.assert_array_equal(sess.run(b, {a: [10.0, 20.0], y: [1.0, 1.0]}), [11.0, 21.0])


def test_targets_run_side_effects_only_when_asked():
    v = eager.Variable(0.0)
    g = Graph("g", auto_control_deps=False)  # TF1 style: nothing runs unless asked for
    with g.as_default():
        x = g.placeholder(eager.float32, [], name="x")
        v.assign_add(x)
        bump = g.get_operations()[-1]
        doubled = x * 2.0
    sess = eager.Session(g)
    assert sess.run(doubled, {x: 3.0}) == 6.0
    assert v.numpy() == 0.0  # not fetched, not a target: pruned
    assert sess.run([doubled, bump], {x: 3.0})[1] is None
    assert v.numpy() == 3.0
    assert sess.run(bump.name, {x: 1.0}) is None
    assert v.numpy() == 4.0


def test_reordered_fetch_names_hit_the_cache():
    g, x, y, a, b, c = _graph()
    sess = eager.Session(g)
    feeds = {"x:0": [1.0, 2.0], "y:0": [3.0, 4.0]}
    first = sess.run(["AddV2:0", "Sum:0", "Mul:0"], feeds)
    assert sess.cache_stats == {"compiled": 1, "fast_hits": 0, "sorted_hits": 0}
    again = sess.run(["AddV2:0", "Sum:0", "Mul:0"], feeds)
    assert sess.cache_stats["fast_hits"] == 1
    reordered = sess.run(["Mul:0", "AddV2:0", "Sum:0"], {"y:0": [3.0, 4.0], "x:0": [1.0, 2.0]})
    assert sess.cache_stats == {"compiled": 1, "fast_hits": 1, "sorted_hits": 1}
    for got, want in zip(again, first):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(reordered[0], first[2])
    np.testing.assert_array_equal(reordered[1], first[0])
    assert reordered[2] == first[1]
    # the reordered request is now a fast key of its own
    sess.run(["Mul:0", "AddV2:0", "Sum:0"], {"y:0": [3.0, 4.0], "x:0": [1.0, 2.0]})
    assert sess.cache_stats == {"compiled": 1, "fast_hits": 2, "sorted_hits": 1}
    sess.run(["Mul:0"], feeds)  # another request: another executable
    assert sess.cache_stats["compiled"] == 2


@settings(max_examples=20, deadline=None)
@given(perm=st.permutations([0, 1, 2]), values=st.lists(st.floats(-10, 10, width=32),
                                                        min_size=2, max_size=2))
def test_any_fetch_order_gives_the_values_of_that_order(perm, values):
    g, x, y, a, b, c = _graph()
    sess = eager.Session(g)
    fetches = [a, b, c]
    xv = np.array(values, np.float32)
    yv = xv[::-1].copy()
    expected = [xv * 2, xv * 2 + yv, np.sum(xv * 2)]
    got = sess.run([fetches[i] for i in perm], {x: xv, y: yv})
    for value, i in zip(got, perm):
        np.testing.assert_allclose(value, expected[i], rtol=1e-6)


def test_session_run_is_a_sync_point_for_queued_variable_updates():
    v = eager.Variable([1.0, 2.0])

    @eager.function
    def f(x):
        return x + v

    cf = f.get_concrete_function(eager.TensorSpec([2]))
    sess = eager.Session(cf.graph)
    with eager.experimental.async_scope():
        for step in range(3):
            v.assign([float(step), 10.0])  # queued
            out = sess.run(cf.outputs[0], {cf.inputs[0]: [1.0, 1.0]})
            np.testing.assert_array_equal(out, [step + 1.0, 11.0])


def test_traced_function_graph_with_captures_and_variables():
    v = eager.Variable([1.0, 2.0])
    scale = eager.constant(3.0)

    @eager.function
    def f(x):
        return x * scale + v

    cf = f.get_concrete_function(eager.TensorSpec([2]))
    sess = eager.Session(cf.graph)
    out = sess.run(cf.outputs[0], {cf.inputs[0]: [1.0, 1.0]})
    np.testing.assert_array_equal(out, [4.0, 5.0])
    v.assign([0.0, 0.0])  # the variable is read when the session runs
    np.testing.assert_array_equal(sess.run(cf.outputs[0], {cf.inputs[0]: [1.0, 1.0]}),
                                  [3.0, 3.0])
    # a capture may be fed like any tensor
    captured = [ph for value, ph in cf.graph.captures if value is scale][0]
    np.testing.assert_array_equal(
        sess.run(cf.outputs[0], {cf.inputs[0]: [1.0, 1.0], captured: 10.0}), [10.0, 10.0])


def test_bad_requests_raise_tensorflows_errors():
    g, x, y, a, b, c = _graph()
    other = Graph("other")
    with other.as_default():
        z = other.placeholder(eager.float32, [], name="z")
    sess = eager.Session(g)
    with pytest.raises(ValueError, match="Cannot feed value of shape \\(2, 2\\) for Tensor 'x:0'"):
        sess.run(a, {x: np.ones((2, 2), np.float32)})
    with pytest.raises(TypeError, match="Cannot feed value"):
        sess.run(a, {x: ["a", "b"]})
    with pytest.raises(ValueError, match="not an element of this session's graph"):
        sess.run(z)
    with pytest.raises(KeyError, match="Nope"):
        sess.run("Nope:0")
    with pytest.raises(TypeError, match="invalid type"):
        sess.run(3)
    with pytest.raises(ValueError, match="feed a tensor"):
        sess.run(a, {"x": [1.0]})
    with pytest.raises(TypeError, match="must be an eager Graph"):
        eager.Session(graph=object())
    with pytest.raises(ValueError, match="needs a graph"):
        eager.Session()


def test_default_graph_and_close():
    g, x, y, a, b, c = _graph()
    with g.as_default():
        sess = eager.Session()
    assert sess.graph is g
    with sess:
        np.testing.assert_array_equal(sess.run(a, {x: [1.0]}), [2.0])
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(a, {x: [1.0]})


@pytest.mark.cpu_only(reason="asserts how a kernel failing during the call is attributed to "
                              "its node; a device whose kernels run later (a simulated GPU) "
                              "reports the failure at the next synchronization instead")
def test_kernel_error_surfaces_with_its_class_and_node():
    g = Graph("g")
    with g.as_default():
        i = g.placeholder(eager.int32, [], name="i")
        out = eager.gather(eager.constant([1.0, 2.0]), i)
    sess = eager.Session(g)
    assert sess.run(out, {i: 1}) == 2.0
    with pytest.raises(eager.errors.InvalidArgumentError) as info:
        sess.run(out, {i: 5})
    assert any("GatherV2" in note for note in getattr(info.value, "__notes__", []))


def test_sessions_in_the_array_form_give_the_tensor_forms_results(cpu_only,
                                                                   no_inference_check):
    """Without the suite's inference cross-check, a one-device Session runs its compiled
    programs in their array form: same values, fed values fetched back, errors as before."""
    g, x, y, a, b, c = _graph()
    runs = []
    original = CompiledProgram.__init__

    def counting(self, *args, **kwargs):  # every compiled program counts its array-form runs
        original(self, *args, **kwargs)
        array_fn = self._array_fn
        if array_fn is not None:
            def counted(*call_args):
                runs.append(1)
                return array_fn(*call_args)
            self._array_fn = counted

    CompiledProgram.__init__ = counting
    try:
        sess = eager.Session(g)
        xv, yv = np.array([1.0, 2.0], np.float32), np.array([0.5, -1.0], np.float32)
        out = sess.run([b, c, x, "Sum:0"], {x: xv, y: yv})
        np.testing.assert_array_equal(out[0], xv * 2 + yv)
        assert out[1] == pytest.approx(6.0) and out[3] == pytest.approx(6.0)
        np.testing.assert_array_equal(out[2], xv)
        with pytest.raises(eager.errors.InvalidArgumentError):
            sess.run(b, {x: xv, y: np.ones(3, np.float32)})  # shapes [2] and [3]
    finally:
        CompiledProgram.__init__ = original
    assert len(runs) == 2
