"""Compiled programs (eager.runtime.compiler): straight-line code that agrees with the reference
runner and with eager execution, frees values after their last use, reports failures at the
user's line, and refuses to run with an unfed placeholder before doing anything."""

import gc
import linecache
import traceback
import tracemalloc
import warnings
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eager
from eager import TensorSpec
from eager.graph import Graph
from eager.runtime import Program, run_program
from eager.runtime.compiler import compile_program
from eager.runtime.passes import optimize


def _program(fn, *specs):
    cf = eager.function(fn).get_concrete_function(*specs)
    g = cf.graph
    n_args = len(g.inputs) - len(cf.captured_inputs)
    return Program.from_graph(g, feeds=g.inputs[:n_args],
                              constants=dict(zip(g.inputs[n_args:], cf.captured_inputs)))


def _numpy(values):
    return [v.numpy() for v in values]


_UNARY = [("tanh", np.tanh), ("exp", lambda a: np.exp(np.clip(a, -20, 20))), ("abs", np.abs),
          ("square", np.square), ("neg", np.negative)]
_EAGER_UNARY = {"tanh": eager.tanh, "exp": lambda a: eager.exp(eager.clip_by_value(a, -20, 20)),
                "abs": eager.abs, "square": eager.square, "neg": eager.negative}


def _chain(ops, x, y):
    """acc = unary_i(acc) + y for each op index in `ops`, from acc = x."""
    acc = x
    for i in ops:
        acc = _EAGER_UNARY[_UNARY[i][0]](acc) + y
    return acc


#: Random `_chain`s: op indices, a shape, a seed for the inputs.
_CHAINS = given(ops=st.lists(st.sampled_from(range(len(_UNARY))), min_size=1, max_size=8),
                shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
                seed=st.integers(0, 2**16))


@settings(max_examples=25, deadline=None)
@_CHAINS
def test_compiled_matches_reference_runner_and_numpy(ops, shape, seed):
    def f(x, y):
        acc = _chain(ops, x, y)
        return acc, acc * x

    rng = np.random.default_rng(seed)
    xn = rng.standard_normal(shape).astype(np.float32)
    yn = rng.standard_normal(shape).astype(np.float32)
    program = _program(f, TensorSpec(shape), TensorSpec(shape))
    feeds = [eager.constant(xn), eager.constant(yn)]
    compiled = _numpy(compile_program(program)(feeds))
    reference = _numpy(run_program(program, feeds))
    eager_values = _numpy(f(*feeds))
    acc = xn
    for i in ops:
        acc = _UNARY[i][1](acc) + yn
    for got, ref, eag in zip(compiled, reference, eager_values):
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(got, eag)
    np.testing.assert_allclose(compiled[0], acc, rtol=1e-5, atol=1e-5)


def test_multi_output_and_zero_output_ops_and_fetching_a_feed():
    v = eager.Variable(np.zeros(2, np.float32))

    def f(x):
        a, b = eager.unstack(x)  # two outputs
        v.assign(b)  # no outputs, must run
        return a, x, v.read_value()

    program = _program(f, TensorSpec([2, 2]))
    x = eager.constant([[1.0, 2.0], [3.0, 4.0]])
    a, x_back, read = compile_program(program)([x])
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(x_back.numpy(), x.numpy())  # through finalize's Identity
    np.testing.assert_array_equal(read.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])


def test_a_fetch_may_be_a_feed_or_a_constant():
    g = Graph("g")
    c = eager.constant(5.0)
    with g.as_default():
        x = g.placeholder(eager.float32, [], name="x")
        captured = g.capture(c)
        y = x * captured
    program = Program.from_graph(g, feeds=[x], fetches=[x, captured, y],
                                 constants={captured: c})
    fed = eager.constant(2.0)
    got = compile_program(program)([fed])
    assert got[0] is fed and got[1] is c and got[2].numpy() == 10.0


def test_source_is_one_statement_per_node_with_the_users_line():
    def f(x):
        y = x * 3.0  # the multiply
        return y + 1.0

    program = _program(f, TensorSpec([2]))
    compiled = compile_program(program)
    lines = compiled.source.splitlines()
    assert sum("run(" in line for line in lines) == len(program.nodes)
    mul_line = next(line for line in lines if "(Mul)" in line)
    assert "test_compiler.py" in mul_line and "y = x * 3.0  # the multiply" in mul_line
    # registered: tools reading source through linecache see it
    assert linecache.getline(compiled.filename, 1).startswith("def ")


@pytest.mark.cpu_only(reason="asserts how a kernel failing during the call is attributed to "
                              "its node; a device whose kernels run later (a simulated GPU) "
                              "reports the failure at the next synchronization instead")
def test_failure_names_the_node_and_the_user_line_in_the_traceback():
    def f(i):
        table = eager.constant([1.0, 2.0])
        return eager.gather(table, i)  # out of range at run time

    compiled = compile_program(_program(f, TensorSpec([], eager.int32)))
    np.testing.assert_array_equal(compiled([eager.constant(1)])[0].numpy(), 2.0)
    with pytest.raises(eager.errors.InvalidArgumentError) as info:
        compiled([eager.constant(7)])
    notes = getattr(info.value, "__notes__", [])
    assert any("GatherV2" in n and "test_compiler.py" in n and "eager.gather(table, i)" in n
               for n in notes)
    text = "".join(traceback.format_exception(info.value))
    assert compiled.filename in text
    assert "# GatherV2 (GatherV2)" in text  # the generated line is shown


def test_unfed_placeholder_raises_before_any_side_effect():
    v = eager.Variable(0.0)
    g = Graph("g")
    with g.as_default():
        x = g.placeholder(eager.float32, [], name="x")
        y = g.placeholder(eager.float32, [], name="y")
        v.assign_add(1.0)
        out = x + y
    program = Program.from_graph(g, feeds=[x], fetches=[out],
                                 constants={ph: val for val, ph in g.captures})
    compiled = compile_program(program)
    with pytest.raises(eager.errors.InvalidArgumentError,
                       match="You must feed a value for placeholder tensor 'y' with dtype "
                             "float32"):
        compiled([eager.constant(1.0)])
    assert v.numpy() == 0.0  # nothing ran


def test_intermediates_are_freed_after_their_last_use():
    def f(x):
        a = x * 2.0
        b = a + 1.0
        return b * 3.0

    program = _program(f, TensorSpec([1000]))
    compiled = compile_program(program)
    # `del` of each value right after its last reader: every intermediate name is deleted
    body = compiled.source
    for node in program.nodes[:-1]:
        for v in node.outputs:
            if v not in program.fetches:
                assert f"del v{v}" in body or f"del v{v}," in body or f", v{v}" in body
    x = eager.constant(np.ones(1000, np.float32))
    refs = []
    original = eager.core.dispatch.run_kernel

    def spy(op, inputs, attrs, device):
        out = original(op, inputs, attrs, device)
        if op.name == "Mul" and not refs:
            refs.append(weakref.ref(out))
        return out

    compiled._fn.__globals__["run"] = spy
    result = compiled([x])[0]
    gc.collect()
    assert refs and refs[0]() is None  # `a` did not outlive the call
    np.testing.assert_array_equal(result.numpy(), np.full(1000, 9.0, np.float32))


def test_device_requests_are_honoured(logical_cpus):
    logical_cpus(2)
    def f(x):
        with eager.device("CPU:1"):
            y = x + 1.0
        return y, x * 2.0

    compiled = compile_program(_program(f, TensorSpec([2])))
    y, z = compiled([eager.constant([1.0, 2.0])])
    assert y.device.endswith("CPU:1") and z.device.endswith("CPU:0")


def test_function_calls_use_the_compiled_program_from_the_second_call():
    @eager.function
    def f(x):
        return eager.reduce_sum(x * x)

    x = eager.constant([1.0, 2.0])
    cf = f.get_concrete_function(x)
    assert f(x).numpy() == 5.0
    assert cf._executable is None  # one call: not worth compiling
    assert f(x).numpy() == 5.0
    assert cf._executable is not None
    assert f(eager.constant([3.0, 4.0])).numpy() == 25.0


def test_linecache_entry_goes_with_the_compiled_program():
    compiled = compile_program(_program(lambda x: x + 1.0, TensorSpec([])))
    name = compiled.filename
    assert name in linecache.cache
    del compiled
    gc.collect()
    assert name not in linecache.cache


def _donations(compiled):
    return [line for line in compiled.source.splitlines() if "donate(" in line]


def test_a_dying_large_intermediate_is_written_in_place_and_results_are_unchanged(cpu_only):
    n = 1 << 15

    def f(x, g):
        t = g * 3.0  # an intermediate read once, below: donated to the multiply
        return x - t * 0.5

    program = _program(f, TensorSpec([n]), TensorSpec([n]))
    compiled = compile_program(program)
    assert len(_donations(compiled)) >= 1
    xv = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    gv = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    x, g = eager.constant(xv), eager.constant(gv)
    seen = []
    original = compiled._fn.__globals__["donate"]

    def spy(op, inputs, attrs, device, position, ufunc):
        before = id(inputs[position]._value)  # no reference kept: it would block the reuse
        out = original(op, inputs, attrs, device, position, ufunc)
        seen.append(id(out._value) == before)  # the input is alive: equal ids, same array
        return out

    compiled._fn.__globals__["donate"] = spy
    got = compiled([x, g])[0].numpy()
    np.testing.assert_array_equal(got, xv - (gv * np.float32(3.0)) * np.float32(0.5))
    np.testing.assert_array_equal(got, run_program(program, [x, g])[0].numpy())
    assert any(seen)  # a buffer really was reused
    np.testing.assert_array_equal(g.numpy(), gv)  # feeds are never written
    np.testing.assert_array_equal(x.numpy(), xv)


def test_a_shared_buffer_is_never_donated():
    n = 1 << 15
    v = eager.Variable(np.zeros(n, np.float32))

    def f(g):
        t = g * 2.0
        v.assign(t)  # the variable may now hold t's array: t must not be written
        return t * 3.0

    program = _program(f, TensorSpec([n]))
    compiled = compile_program(program)
    g = eager.constant(np.ones(n, np.float32))
    out = compiled([g])[0].numpy()
    np.testing.assert_array_equal(out, np.full(n, 6.0, np.float32))
    np.testing.assert_array_equal(v.numpy(), np.full(n, 2.0, np.float32))

    def h(x):
        y = eager.reshape(x * 2.0, [n])  # a view of the product may share its memory
        return y + 1.0, x * 2.0 + 0.0

    program = _program(h, TensorSpec([n]))
    got = compile_program(program)([g])
    np.testing.assert_array_equal(got[0].numpy(), np.full(n, 3.0, np.float32))
    np.testing.assert_array_equal(got[1].numpy(), np.full(n, 2.0, np.float32))


def test_small_or_integer_values_are_not_donated():
    program = _program(lambda x: (x * 2.0) * 3.0, TensorSpec([4]))
    assert not _donations(compile_program(program))
    program = _program(lambda x: (x * 2) * 3, TensorSpec([1 << 15], eager.int32))
    assert not _donations(compile_program(program))


def test_relu_gradient_donation_matches_eager():
    n = 1 << 15
    w = eager.Variable(np.linspace(-1, 1, n, dtype=np.float32))

    def f(x):
        with eager.GradientTape() as tape:
            h = eager.nn.relu(x * w * 2.0)
            loss = eager.reduce_sum(h * h)
        return tape.gradient(loss, w)

    program = _program(f, TensorSpec([n]))
    compiled = compile_program(program)
    assert any("(ReluGrad)" in line for line in _donations(compiled))
    x = eager.constant(np.cos(np.arange(n, dtype=np.float32)))
    np.testing.assert_array_equal(compiled([x])[0].numpy(), f(x).numpy())


# -- the array form: kernels on arrays, for the one-inline-device process --------------------------

def _count_array_runs(compiled):
    """Wraps the compiled program's array form; returns the list each run appends to."""
    runs = []
    array_fn = compiled._array_fn
    assert array_fn is not None

    def counted(feeds, xp, device):
        runs.append(1)
        return array_fn(feeds, xp, device)

    compiled._array_fn = counted
    return runs


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # (cpu_only: set once)
@_CHAINS
def test_array_form_matches_tensor_form_and_reference_runner(cpu_only, ops, shape, seed):
    def f(x, y):
        acc = _chain(ops, x, y)
        return acc, eager.reduce_sum(acc * x, axis=-1) if shape else acc * x, x

    rng = np.random.default_rng(seed)
    feeds = [eager.constant(rng.standard_normal(shape).astype(np.float32)),
             eager.constant(rng.standard_normal(shape).astype(np.float32))]
    program = _program(f, TensorSpec(shape), TensorSpec(shape))
    compiled = compile_program(program)
    tensor_form = compiled._fn(feeds, eager.core.context.thread_state())
    reference = run_program(program, feeds)
    eager.core.dispatch.check_inference(False)
    try:
        runs = _count_array_runs(compiled)
        array_form = compiled(feeds)
    finally:
        eager.core.dispatch.check_inference(True)
    assert runs == [1]
    for a, t, r in zip(array_form, tensor_form, reference):
        assert a.dtype == t.dtype and a.shape == t.shape and a.device == t.device
        np.testing.assert_array_equal(a.numpy(), t.numpy())
        np.testing.assert_array_equal(a.numpy(), r.numpy())


def test_operator_kernels_are_written_as_their_expressions(cpu_only, no_inference_check):
    """An op whose kernel is a Python operator (`OpDef.infix`) is that expression in the
    array form and in fused kernels, with the kernel's values; a floating-point warning from a
    generated line is eager's, which eager silences as TensorFlow does (here every other
    warning is an error)."""
    def f(x, y):
        return x / y, eager.math.exp(x * y - x) / y

    program = _program(f, TensorSpec([4]), TensorSpec([4]))
    plain, fused = compile_program(program), compile_program(optimize(program))
    array_source = plain.source.split("_arrays(")[1]
    assert " / " in array_source and " * " in array_source and " - " in array_source
    (kernel_node,) = [n for n in fused.program.nodes if n.type.startswith("Fused[")]
    kernel_source = "".join(linecache.getlines(kernel_node.op_def.kernel.__code__.co_filename))
    assert " * " in kernel_source and " - " in kernel_source and " / " in kernel_source
    xn = np.array([1.0, 0.0, -1.0, 2.0], np.float32)
    yn = np.array([0.0, 0.0, 0.0, 4.0], np.float32)
    with np.errstate(all="ignore"):
        expected = [xn / yn, np.exp(xn * yn - xn) / yn]
    for compiled in (plain, fused):
        runs = _count_array_runs(compiled)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"eager(\..*)?$")
            got = compiled([eager.constant(xn), eager.constant(yn)])
        assert runs == [1]
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g.numpy(), e)


def test_array_form_failure_is_the_ops_error_with_the_node_noted(cpu_only, no_inference_check):
    def f(i):
        table = eager.constant([1.0, 2.0])
        return eager.gather(table, i)  # out of range at run time

    compiled = compile_program(_program(f, TensorSpec([], eager.int32)))
    runs = _count_array_runs(compiled)
    np.testing.assert_array_equal(compiled([eager.constant(1)])[0].numpy(), 2.0)
    with pytest.raises(eager.errors.InvalidArgumentError) as in_arrays:
        compiled([eager.constant(7)])
    assert len(runs) == 2
    with pytest.raises(eager.errors.InvalidArgumentError) as in_tensors:
        compiled._fn([eager.constant(7)], eager.core.context.thread_state())
    assert str(in_arrays.value) == str(in_tensors.value)
    assert "GatherV2" in str(in_arrays.value)
    notes = getattr(in_arrays.value, "__notes__", [])
    assert any("GatherV2" in n and "eager.gather(table, i)" in n for n in notes)


def test_array_form_kernel_exception_becomes_an_op_error(cpu_only, no_inference_check):
    def f(a, b):
        return eager.matmul(a, b)

    compiled = compile_program(_program(f, TensorSpec([None, 3]), TensorSpec([3, None])))
    runs = _count_array_runs(compiled)
    with pytest.raises(eager.errors.InvalidArgumentError, match="MatMul") as failed:
        # shapes the signature allows but the kernel refuses (3 != 4)
        compiled([eager.constant(np.ones((2, 3), np.float32)),
                  eager.constant(np.ones((4, 2), np.float32))])
    assert runs == [1]
    # The node is noted from the frames the kernel's own exception passed through.
    notes = getattr(failed.value, "__notes__", [])
    assert any(n.startswith("Detected at node 'MatMul' (MatMul)") for n in notes), notes


def test_tensor_form_runs_under_scopes_logging_and_other_devices(cpu_only, no_inference_check,
                                                                 capfd, logical_cpus):
    compiled = compile_program(_program(lambda x: x * 2.0 + 1.0, TensorSpec([2])))
    runs = _count_array_runs(compiled)
    x = eager.constant([1.0, 2.0])
    np.testing.assert_array_equal(compiled([x])[0].numpy(), [3.0, 5.0])
    assert runs == [1]
    with eager.device("CPU:0"):
        np.testing.assert_array_equal(compiled([x])[0].numpy(), [3.0, 5.0])
    eager.debugging.set_log_device_placement(True)
    try:
        compiled([x])
    finally:
        eager.debugging.set_log_device_placement(False)
    assert "Executing op Mul" in capfd.readouterr().err
    assert runs == [1]  # neither ran the array form
    logical_cpus(2)  # two devices: placement decides per op
    with eager.device("CPU:1"):
        y = compiled([eager.constant([1.0, 2.0])])[0]
    assert y.device.endswith("CPU:1") and runs == [1]


def test_array_form_donates_a_dying_intermediate(cpu_only, no_inference_check):
    n = 1 << 15

    def f(x, g):
        t = g * 3.0
        return x - t * 0.5

    program = _program(f, TensorSpec([n]), TensorSpec([n]))
    compiled = compile_program(program)
    assert "donate_arrays(" in compiled.source
    xv = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    gv = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    x, g = eager.constant(xv), eager.constant(gv)
    expected = run_program(program, [x, g])[0].numpy()
    compiled([x, g])
    # One buffer for t, t * 0.5 and the difference: numpy's allocations are traced, and the
    # peak stays under two arrays (three allocations without donation, two alive at once).
    tracemalloc.start()
    try:
        got = compiled([x, g])[0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * n * 4
    np.testing.assert_array_equal(got.numpy(), expected)
    runs = _count_array_runs(compiled)
    compiled([x, g])
    assert runs == [1]
    np.testing.assert_array_equal(g.numpy(), gv)  # feeds are never written
    np.testing.assert_array_equal(x.numpy(), xv)


def test_functions_in_array_form_match_eager(cpu_only, no_inference_check):
    """Traced functions called from the third time on run the array form of their compiled
    plan: variables, control flow, integer ops and several outputs agree with eager runs."""
    v = eager.Variable(np.arange(3.0, dtype=np.float32))

    def body(x, n):
        v.assign_add(x)
        total = eager.cond(eager.reduce_sum(x) > 0.0, lambda: v * 2.0, lambda: v - 1.0)
        i, acc = eager.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 1.5),
                                  (eager.constant(0), total))
        return acc, eager.argmax(acc), i * 3

    traced = eager.function(body)
    rng = np.random.default_rng(0)
    inputs = [(eager.constant(rng.standard_normal(3).astype(np.float32)), eager.constant(k))
              for k in (2, 0, 3, 1, 2)]
    start = v.numpy().copy()
    eager_results = [[t.numpy() for t in body(x, n)] for x, n in inputs]
    v.assign(start)
    cf = traced.get_concrete_function(*inputs[0])
    runs = None
    for k, ((x, n), expected) in enumerate(zip(inputs, eager_results)):
        if k == 2:  # compiled at the second call
            runs = _count_array_runs(cf._executable)
        got = traced(x, n)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g.numpy(), e)
    assert runs == [1, 1, 1]


@pytest.mark.parametrize("name", ["run", "place", "donate", "wrap", "c1", "u3", "feeds", "st",
                                  "xp", "f_arrays", "quietly"])
def test_a_function_named_like_a_helper_of_the_generated_code_runs_every_call(name):
    """The generated function takes the user's function name; it must not hide the helpers
    (`run`, `donate`, ...) or the bindings (`c1`, `u3`, ...) its own lines call."""
    def body(x):
        return eager.random.uniform([2], seed=1) * x + 1.0
    body.__name__ = body.__qualname__ = name
    f = eager.function(body)
    for v in (2.0, 3.0, 4.0):
        assert f(eager.constant(v)).shape == (2,)
