"""eager.function: traced results equal eager ones, cache keys and retracing, input_signature,
reduce_retracing, concrete functions, methods, side effects, prints, captures, tapes."""

import gc
import io
import os
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager
from eager.graph import Graph
from eager import TensorSpec
from eager.function import ConcreteFunction, Function, run_graph
from eager.graph import trace
from eager.functions import concrete, polymorphic
from gradcheck import derivatives


def _np(t):
    return np.asarray(t.numpy())


def _assert_same(traced, eager_result):
    flat_t = eager.nest.flatten(traced)
    flat_e = eager.nest.flatten(eager_result)
    assert len(flat_t) == len(flat_e)
    for a, b in zip(flat_t, flat_e):
        if isinstance(b, eager.Tensor):
            assert isinstance(a, eager.EagerTensor)
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6)
        elif isinstance(b, (bool, int, float)):  # a returned Python number: a scalar tensor
            assert isinstance(a, eager.EagerTensor) and a.shape == ()
            assert a.numpy() == b
        elif isinstance(b, str):  # a returned Python string: a string tensor, as TF 2.21's
            assert isinstance(a, eager.EagerTensor) and a.dtype == eager.string
            assert a.numpy() == b.encode()
        else:
            assert a == b and type(a) is type(b)


rng = np.random.default_rng(0)
A = eager.constant(rng.standard_normal((3, 4)).astype(np.float32))
B = eager.constant(rng.standard_normal((4, 2)).astype(np.float32))


def elementwise(x, y):
    return eager.tanh(x) * 2.0 + eager.exp(-y) - x / (1.0 + eager.abs(y))


def matmul_chain(a, b):
    return eager.matmul(eager.nn.relu(a), b) + 1.0


def reductions(x):
    return eager.reduce_sum(x, axis=0), eager.reduce_max(x), eager.reduce_mean(x, axis=1,
                                                                               keepdims=True)


def slicing(x):
    return x[1:, ::2], x[0], x[:, -1]


def nested(d, pair):
    return {"sum": d["a"] + d["b"], "list": [pair[0] * pair[1], "tag", None], "n": 3}


def with_defaults(x, scale=2.0, *, shift=1.0):
    return x * scale + shift


@pytest.mark.parametrize("fn,args", [
    (elementwise, (A, A * 0.5)),
    (matmul_chain, (A, B)),
    (reductions, (A,)),
    (slicing, (A,)),
    (nested, ({"a": A, "b": A}, (A, 2.0))),
    (with_defaults, (A,)),
])
def test_traced_equals_eager(fn, args):
    f = eager.function(fn)
    _assert_same(f(*args), fn(*args))
    _assert_same(f(*args), fn(*args))  # the cached trace
    assert f.experimental_get_tracing_count() == 1


def test_kwargs_and_defaults_share_a_trace():
    f = eager.function(with_defaults)
    r1 = f(A)
    r2 = f(A, 2.0)
    r3 = f(A, scale=2.0, shift=1.0)
    assert f.experimental_get_tracing_count() == 1
    for r in (r1, r2, r3):
        np.testing.assert_allclose(_np(r), _np(A) * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(_np(f(A, shift=5.0)), _np(A) * 2 + 5, rtol=1e-6)
    assert f.experimental_get_tracing_count() == 2


@pytest.mark.filterwarnings("ignore:.*retracing")
def test_python_scalar_args_are_keyed_by_type_and_value():
    f = eager.function(lambda x, n: x * n)
    x = eager.constant([1.0, 2.0])
    np.testing.assert_allclose(_np(f(x, 2.0)), [2.0, 4.0])
    f(x, 2.0)
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(_np(f(x, 3.0)), [3.0, 6.0])
    assert f.experimental_get_tracing_count() == 2
    f(x, 1)
    f(x, 1.0)
    f(x, True)
    assert f.experimental_get_tracing_count() == 5


def test_retrace_on_new_shape_or_dtype_only():
    f = eager.function(lambda x: x + 1)
    f(eager.constant([1.0, 2.0]))
    f(eager.constant([5.0, 6.0]))  # same shape/dtype: the value never matters
    assert f.experimental_get_tracing_count() == 1
    f(eager.constant([1.0, 2.0, 3.0]))
    assert f.experimental_get_tracing_count() == 2
    np.testing.assert_array_equal(_np(f(eager.constant([1, 2]))), [2, 3])
    assert f.experimental_get_tracing_count() == 3


def test_numpy_arguments_are_tensors():
    f = eager.function(lambda x: x * 2)
    np.testing.assert_allclose(_np(f(np.ones(3, np.float32))), [2, 2, 2])
    f(np.zeros(3, np.float32))
    assert f.experimental_get_tracing_count() == 1


def test_input_signature_none_dim_one_trace():
    @eager.function(input_signature=[TensorSpec([None, 2], eager.float32)])
    def f(x):
        return eager.reduce_sum(x, axis=1)

    for n in (1, 3, 7):
        x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
        np.testing.assert_allclose(_np(f(eager.constant(x))), x.sum(1))
    assert f.experimental_get_tracing_count() == 1
    assert f.input_signature == (TensorSpec([None, 2], eager.float32),)
    with pytest.raises(TypeError, match="dtype"):
        f(eager.constant([[1, 2]]))
    with pytest.raises(TypeError, match="shape"):
        f(eager.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="shape"):
        f(eager.ones([2, 3]))
    assert f.experimental_get_tracing_count() == 1
    cf = f.get_concrete_function()
    assert cf.inputs[0].shape.as_list() == [None, 2]


def test_reduce_retracing_generalizes_differing_dims():
    f = eager.function(lambda x: x * 2.0, reduce_retracing=True)
    f(eager.ones([2, 3]))
    f(eager.ones([4, 3]))
    assert f.experimental_get_tracing_count() == 2
    for n in (5, 9, 1):
        np.testing.assert_allclose(_np(f(eager.ones([n, 3]))), np.full((n, 3), 2.0))
    assert f.experimental_get_tracing_count() == 2
    cf = f.get_concrete_function(TensorSpec([None, 3]))
    assert cf.inputs[0].shape.as_list() == [None, 3]
    f(eager.ones([2, 5]))  # a new trailing dim: generalized again
    assert f.experimental_get_tracing_count() == 3


def test_concrete_function_from_specs_is_inspectable_and_callable():
    f = eager.function(matmul_chain)
    cf = f.get_concrete_function(TensorSpec([None, 4]), TensorSpec([4, 2]))
    assert isinstance(cf, ConcreteFunction) and isinstance(f, Function)
    types = [op.type for op in cf.graph.get_operations()]
    assert types[:2] == ["Placeholder", "Placeholder"] and "MatMul" in types and "Relu" in types
    assert [t.shape.as_list() for t in cf.inputs[:2]] == [[None, 4], [4, 2]]
    assert len(cf.outputs) == 1 and cf.outputs[0].shape.as_list() == [None, 2]
    assert cf.structured_outputs is cf.outputs[0]
    args, kwargs = cf.structured_input_signature
    assert args == (TensorSpec([None, 4], eager.float32, "a"),
                    TensorSpec([4, 2], eager.float32, "b"))
    assert kwargs == {}
    _assert_same(cf(A, B), matmul_chain(A, B))
    # a call the specs fit reuses the trace
    f(A, B)
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError):
        cf(B, B)


def test_run_graph_directly():
    g = trace(lambda x, y: (x * y, x - y), TensorSpec([3]), TensorSpec([3]))
    x, y = eager.constant([1.0, 2.0, 3.0]), eager.constant([4.0, 5.0, 6.0])
    feeds = [x, y] + [value for value, _ in g.captures]
    prod, diff = run_graph(g, feeds)
    np.testing.assert_allclose(_np(prod), [4, 10, 18])
    np.testing.assert_allclose(_np(diff), [-3, -3, -3])


class Model:
    def __init__(self, scale):
        self.scale = eager.constant(scale)

    @eager.function
    def apply(self, x):
        return x * self.scale


def test_methods_have_per_instance_caches_and_do_not_keep_instances():
    m1, m2 = Model(2.0), Model(3.0)
    x = eager.constant([1.0, 2.0])
    np.testing.assert_allclose(_np(m1.apply(x)), [2, 4])
    np.testing.assert_allclose(_np(m2.apply(x)), [3, 6])
    m1.apply(x)
    assert m1.apply is m1.apply
    assert m1.apply.experimental_get_tracing_count() == 1
    assert m2.apply.experimental_get_tracing_count() == 1
    assert Model.apply.experimental_get_tracing_count() == 0
    assert m1.apply.python_function.__self__ is m1
    ref = weakref.ref(m1)
    del m1
    gc.collect()
    assert ref() is None
    assert len(Model.apply._bound) >= 1  # m2's entry survives
    np.testing.assert_allclose(_np(m2.apply(x)), [3, 6])


def test_python_side_effects_at_trace_time_only():
    log = []

    @eager.function
    def f(x):
        log.append("traced")
        return x + 1

    for _ in range(3):
        f(eager.constant(1.0))
    assert log == ["traced"]
    f(eager.constant([1.0]))
    assert log == ["traced", "traced"]


def test_eager_print_runs_on_every_call():
    stream = io.StringIO()

    @eager.function
    def f(x):
        eager.print("x =", x, output_stream=stream)
        return x * 2

    f(eager.constant(1))
    f(eager.constant(2))
    f(eager.constant(3))
    assert f.experimental_get_tracing_count() == 1
    assert stream.getvalue() == "x = 1\nx = 2\nx = 3\n"


def test_closures_capture_eager_tensors_and_variables():
    w = eager.constant([1.0, 2.0])
    v = eager.Variable([10.0, 20.0])

    @eager.function
    def f(x):
        return x * w + v

    x = eager.constant([1.0, 1.0])
    np.testing.assert_allclose(_np(f(x)), [11, 22])
    assert any(value is w for value in f.get_concrete_function(x).captured_inputs)
    v.assign([0.0, 0.0])  # the variable is read when the function runs
    np.testing.assert_allclose(_np(f(x)), [1, 2])
    assert f.experimental_get_tracing_count() == 1


def test_returned_eager_tensor_and_python_values():
    c = eager.constant(7.0)
    f = eager.function(lambda x: (c, x, 5, "s", None))
    out = f(eager.constant(1.0))
    assert _np(out[0]) == 7.0 and _np(out[1]) == 1.0 and out[2:] == (5, "s", None)


def test_python_if_on_symbolic_tensor_names_cond():
    @eager.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="eager.cond"):
        f(eager.constant(1.0))


def test_autograph_false_converts_nothing():
    """`autograph=False` traces the function as written: Python control flow on a symbolic
    tensor raises, naming the ops to use instead. `autograph=True` (the default) converts it
    (tests/test_autograph*.py)."""
    def f(x):
        while x > 0:
            x = x - 1.0
        return x

    with pytest.raises(TypeError, match="eager.cond / eager.while_loop"):
        eager.function(f, autograph=False)(eager.constant(2.0))
    assert float(eager.function(f, autograph=True)(eager.constant(2.5))) == -0.5
    assert float(eager.function(lambda x: x * 2.0, autograph=False)(eager.constant(2.0))) == 4.0


def test_unguarded_variable_creation_raises_at_the_first_call():
    @eager.function
    def f(x):
        return eager.Variable(1.0) + x

    with pytest.raises(ValueError, match="singleton"):
        f(eager.constant(1.0))
    with pytest.raises(ValueError, match="singleton"):  # and on every later call
        f(eager.constant(1.0))


class Counter(eager.Module):
    def __init__(self):
        super().__init__()
        self.v = None
        self.created = 0

    @eager.function
    def __call__(self, x):
        if self.v is None:
            self.created += 1
            self.v = eager.Variable(0.0)
        self.v.assign_add(x)
        return self.v.read_value() * 2.0


def test_guarded_singleton_creates_one_variable_used_by_every_call():
    c = Counter()
    np.testing.assert_allclose(_np(c(eager.constant(1.0))), 2.0)  # the first call: two traces
    assert c.created == 1  # the second trace found the variable made by the first
    assert isinstance(c.v, eager.Variable) and not isinstance(c.v, eager.Tensor)
    np.testing.assert_allclose(c.v.numpy(), 1.0)  # one assign_add ran (the kept trace's)
    for _ in range(3):
        c(eager.constant(2.0))
    np.testing.assert_allclose(c.v.numpy(), 7.0)
    assert c.__call__.experimental_get_tracing_count() == 2  # TensorFlow counts both traces
    c.v.assign(0.5)  # an ordinary eager variable, shared with the graph
    np.testing.assert_allclose(_np(c(eager.constant(0.0))), 1.0)
    assert [v is c.v for v in c.__call__.variables] == [True]
    assert c.trainable_variables[0] is c.v  # the Module tracks it too


def test_initializer_is_lifted_and_runs_once_eagerly():
    calls = []
    holder = {}

    def init():
        calls.append(eager.executing_eagerly())
        return eager.constant([1.0, 2.0]) * 3.0

    @eager.function
    def f(x):
        if "v" not in holder:
            holder["v"] = eager.Variable(init)
        return holder["v"] * x

    for _ in range(3):
        np.testing.assert_allclose(_np(f(eager.constant(2.0))), [6.0, 12.0])
    assert calls == [True]  # once, eagerly, on the first trace
    v = holder["v"]
    assert isinstance(v.handle, eager.EagerTensor)
    v.assign_add([1.0, 1.0])  # usable outside
    np.testing.assert_allclose(_np(f(eager.constant(1.0))), [4.0, 7.0])


def test_tensor_initial_value_computed_inside_is_lifted_unless_it_needs_an_argument():
    holder = {}
    c = eager.constant([1.0, 2.0])

    @eager.function
    def f(x):
        if "v" not in holder:
            holder["v"] = eager.Variable(eager.zeros([2]) + c * 2.0)  # graph ops, lifted
        holder["v"].assign_add(x)
        return holder["v"].read_value()

    ones = eager.constant([1.0, 1.0])  # an update has the variable's shape, as in TensorFlow
    np.testing.assert_allclose(_np(f(ones)), [3.0, 5.0])
    np.testing.assert_allclose(_np(f(ones)), [4.0, 6.0])

    @eager.function
    def g(x):
        if "w" not in holder:
            holder["w"] = eager.Variable(x * 2.0)
        return holder["w"].read_value()

    with pytest.raises(ValueError, match="could not be lifted"):
        g(eager.constant(1.0))


def test_variable_creation_on_a_later_trace_raises():
    holder = []

    @eager.function
    def f(x):
        if x.shape.rank == 1 and not holder:  # only traces for vectors create
            holder.append(eager.Variable(1.0))
        return x * 2.0

    np.testing.assert_allclose(_np(f(eager.constant(1.0))), 2.0)  # the first call creates none
    with pytest.raises(ValueError, match="singleton"):
        f(eager.constant([1.0, 2.0]))  # a retrace that would create a variable
    assert f.experimental_get_tracing_count() == 1


def test_concrete_function_variables_lists_captured_variables():
    a = eager.Variable(1.0)
    b = eager.Variable([2.0], trainable=False)
    unused = eager.Variable(3.0)

    @eager.function
    def f(x):
        return a * x + b

    concrete = f.get_concrete_function(TensorSpec([1]))
    assert [v is a for v in concrete.variables] == [True, False]
    assert concrete.variables[1] is b
    assert [v is a for v in concrete.trainable_variables] == [True]
    assert all(v is not unused for v in f.variables)
    del concrete
    assert eager.function(lambda x: x + 1.0).get_concrete_function(
        TensorSpec([])).variables == ()


class Linear:
    def __init__(self):
        self.w = None

    @eager.function
    def step(self, x, y, lr):
        if self.w is None:
            self.w = eager.Variable(lambda: eager.constant([[0.5], [-0.5]]))
        with eager.GradientTape() as tape:
            loss = eager.reduce_mean((eager.matmul(x, self.w) - y) ** 2)
        g = tape.gradient(loss, self.w)
        self.w.assign_sub(lr * g)
        return loss


def test_training_loop_over_a_created_variable_matches_eager():
    x = eager.constant(rng.standard_normal((16, 2)).astype(np.float32))
    y = eager.matmul(x, eager.constant([[2.0], [-1.0]]))
    model = Linear()
    losses = [float(model.step(x, y, 0.1)) for _ in range(30)]
    assert model.step.experimental_get_tracing_count() == 2

    w = eager.Variable(eager.constant([[0.5], [-0.5]]))
    eager_losses = []
    for _ in range(30):
        with eager.GradientTape() as tape:
            loss = eager.reduce_mean((eager.matmul(x, w) - y) ** 2)
        w.assign_sub(0.1 * tape.gradient(loss, w))
        eager_losses.append(float(loss))
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(model.w.numpy(), w.numpy(), rtol=1e-5)
    assert losses[-1] < losses[0] * 1e-2


def test_variable_arguments_share_a_trace_by_shape_and_dtype():
    @eager.function
    def bump(v, x):
        v.assign_add(x)
        return v.read_value() * 10.0

    a = eager.Variable([1.0, 2.0])
    b = eager.Variable([10.0, 20.0])
    x = eager.constant([1.0, 1.0])
    np.testing.assert_allclose(_np(bump(a, x)), [20.0, 30.0])
    np.testing.assert_allclose(_np(bump(b, x)), [110.0, 210.0])
    np.testing.assert_allclose(_np(bump(a, x)), [30.0, 40.0])
    np.testing.assert_allclose(a.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(b.numpy(), [11.0, 21.0])
    assert bump.experimental_get_tracing_count() == 1
    bump(eager.Variable([1.0, 2.0, 3.0]), eager.constant([1.0, 1.0, 1.0]))  # another shape
    bump(eager.Variable(np.array([1.0, 2.0])), eager.constant([1.0, 1.0], eager.float64))
    assert bump.experimental_get_tracing_count() == 3
    concrete = bump.get_concrete_function(a, x)
    concrete(b, x)
    np.testing.assert_allclose(b.numpy(), [12.0, 22.0])
    with pytest.raises(TypeError, match="Variable"):
        concrete(eager.Variable([1.0, 2.0, 3.0]), x)


def test_call_under_a_tape_watches_variable_arguments_and_captured_variables():
    w = eager.Variable(2.0)
    f = eager.function(lambda v, x: eager.reduce_sum(v * v * x) * w)
    v = eager.Variable([1.0, 2.0])
    x = eager.constant([3.0, 4.0])
    f(v, x)
    with eager.GradientTape() as tape:  # no explicit watch, as in TensorFlow
        y = f(v, x)
    gv, gw = tape.gradient(y, [v, w])
    np.testing.assert_allclose(_np(gv), [12.0, 32.0])
    np.testing.assert_allclose(_np(gw), 19.0)


def test_created_variable_can_be_closed_over_by_a_tape_inside_the_function():
    holder = []

    @eager.function
    def grad(x):
        if not holder:
            holder.append(eager.Variable(3.0))
        with eager.GradientTape() as tape:
            y = holder[0] * holder[0] * x
        return tape.gradient(y, holder[0])

    np.testing.assert_allclose(_np(grad(eager.constant(2.0))), 12.0)
    holder[0].assign(1.0)
    np.testing.assert_allclose(_np(grad(eager.constant(2.0))), 4.0)


def test_gradients_through_a_call_match_eager():
    x = eager.constant(rng.standard_normal((3, 4)).astype(np.float32))
    f = eager.function(lambda a, b: eager.reduce_sum(eager.tanh(eager.matmul(a, b)) ** 2))
    f(x, B)  # traced outside any tape
    results = []
    for fn in (f, f.python_function):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = fn(x, B)
        results.append(tape.gradient(y, x))
    np.testing.assert_allclose(_np(results[0]), _np(results[1]), rtol=1e-5)
    assert f.experimental_get_tracing_count() == 1


def test_trace_under_a_tape_does_not_record_symbolic_ops():
    x = eager.constant(2.0)
    f = eager.function(lambda a: a * a * a)
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = f(x)  # traced and run under the tape
    np.testing.assert_allclose(_np(tape.gradient(y, x)), 12.0)


def test_nested_function_call_is_inlined():
    inner = eager.function(lambda a: a * 2.0)
    outer = eager.function(lambda a: inner(a) + 1.0)
    np.testing.assert_allclose(_np(outer(eager.constant([1.0, 2.0]))), [3.0, 5.0])
    types = [op.type for op in outer.get_concrete_function(TensorSpec([2])).graph.get_operations()]
    assert "Mul" in types and "AddV2" in types


def test_decorator_forms_and_errors():
    @eager.function()
    def g(x):
        return x
    assert isinstance(g, Function) and g.__name__ == "g"
    f = eager.function(lambda x: x, experimental_relax_shapes=True)
    assert f._reduce_retracing
    with pytest.raises(TypeError):
        eager.function(lambda x: x)(x=[1, 2], y=3)
    with pytest.raises(TypeError, match="hashable"):
        eager.function(lambda x: x)({1, 2})


def test_retracing_warning():
    f = eager.function(lambda x, n: x + n)
    with pytest.warns(UserWarning, match="retracing"):
        for n in range(6):
            f(eager.constant(1.0), float(n))


def test_returned_tensors_wait_for_the_functions_stateful_ops():
    v = eager.Variable(1.0)

    @eager.function
    def f(x):
        v.assign_add(x)  # unused result: must still run, before the result is handed back
        return x * 2.0

    concrete = f.get_concrete_function(eager.constant(1.0))
    (out,) = concrete.graph.outputs
    assigns = [op for op in concrete.graph.get_operations() if op.type == "AssignAddVariableOp"]
    assert len(assigns) == 1 and assigns[0] in concrete.graph.control_outputs
    assert out.op.type == "Identity" and assigns[0] in out.op.control_inputs
    assert float(f(eager.constant(3.0))) == 6.0 and float(v) == 4.0


# -- the per-call fast lookup (positional EagerTensors) ------------------------------------------

def test_fast_lookup_hits_the_same_trace_and_retraces_on_new_shape_or_dtype():
    @eager.function
    def f(x):
        return x * 2

    a = eager.constant([1.0, 2.0])
    for _ in range(3):
        _assert_same(f(a), a * 2)
    assert f.experimental_get_tracing_count() == 1
    f(eager.constant([1.0, 2.0, 3.0]))
    f(eager.constant([1, 2]))
    assert f.experimental_get_tracing_count() == 3
    _assert_same(f(a), a * 2)  # the first trace, through the fast lookup again
    assert f.experimental_get_tracing_count() == 3


def test_fast_lookup_respects_signature_device_scope_and_python_arguments():
    @eager.function(input_signature=[TensorSpec([None], eager.float32)])
    def g(x):
        return x + 1

    g(eager.constant([1.0]))
    g(eager.constant([1.0]))  # hit: recorded after the signature check passed
    with pytest.raises(TypeError):
        g(eager.constant([1, 2]))  # int32: still refused on the second call
    with pytest.raises(TypeError):
        g(eager.constant([1, 2]))

    @eager.function
    def h(x, n):
        return x * n

    x = eager.constant([1.0, 2.0])
    _assert_same(h(x, 2), x * 2)
    _assert_same(h(x, 3), x * 3)  # a Python value is no EagerTensor: the full path keys it
    assert h.experimental_get_tracing_count() == 2

    @eager.function
    def k(x):
        return x + 1

    k(x)
    with eager.device("CPU:0"):
        k(x)  # a device scope is part of the key: the full path, a trace of its own
    assert k.experimental_get_tracing_count() == 2


def test_single_output_and_structures_still_pack():
    @eager.function
    def f(x):
        return {"a": x, "b": (x + 1, 3)}

    out = f(eager.constant([1.0]))
    assert set(out) == {"a", "b"} and out["b"][1] == 3
    np.testing.assert_allclose(out["b"][0].numpy(), [2.0])


# -- optimizers inside functions -------------------------------------------------------------------

def _train(make_optimizer, traced, steps=6):
    rng = np.random.default_rng(0)
    w = eager.Variable(rng.standard_normal((3, 2)).astype(np.float32))
    b = eager.Variable(np.zeros(2, np.float32))
    opt = make_optimizer()
    x = eager.constant(rng.standard_normal((4, 3)).astype(np.float32))
    y = eager.constant(rng.standard_normal((4, 2)).astype(np.float32))

    def step(x, y):
        with eager.GradientTape() as tape:
            loss = eager.reduce_mean((eager.matmul(x, w) + b - y) ** 2)
        grads = tape.gradient(loss, [w, b])
        opt.apply_gradients(zip(grads, [w, b]))
        return loss

    f = eager.function(step) if traced else step
    counts = []
    for _ in range(steps):
        f(x, y)
        counts.append(len(opt.variables))
    return w.numpy(), b.numpy(), opt, f, counts


@pytest.mark.parametrize("make_optimizer", [
    lambda: eager.optimizers.SGD(0.1, momentum=0.9),
    lambda: eager.optimizers.SGD(0.1),
    lambda: eager.optimizers.Adam(0.01),
    lambda: eager.optimizers.Adam(0.01, amsgrad=True),
], ids=["sgd-momentum", "sgd", "adam", "adam-amsgrad"])
def test_apply_gradients_inside_a_function_trains_like_the_eager_loop(make_optimizer):
    w_e, b_e, opt_e, _, counts_e = _train(make_optimizer, traced=False)
    w_t, b_t, opt_t, f, counts_t = _train(make_optimizer, traced=True)
    np.testing.assert_allclose(w_t, w_e, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(b_t, b_e, rtol=1e-5, atol=1e-7)
    assert int(opt_t.iterations.numpy()) == 6
    # Slots made on the first call (eagerly, through the function's creator), none later; the
    # first trace made variables, so it was traced again once (TensorFlow's rule), no more.
    # (Plain SGD has no slots: iterations and the learning rate are its only variables.)
    assert counts_t == counts_e and len(set(counts_t)) == 1
    assert f.experimental_get_tracing_count() == (2 if counts_t[0] > 2 else 1)


def test_learning_rate_is_read_on_every_call_of_a_traced_step():
    v = eager.Variable([1.0, 2.0])
    opt = eager.optimizers.SGD(0.5)

    @eager.function
    def step():
        opt.apply_gradients([(eager.constant([1.0, 1.0]), v)])

    step()
    np.testing.assert_allclose(v.numpy(), [0.5, 1.5])
    opt.learning_rate = 0.25  # a variable assignment: the trace reads it, no retrace
    step()
    np.testing.assert_allclose(v.numpy(), [0.25, 1.25])
    assert step.experimental_get_tracing_count() == 1


# -- the example --------------------------------------------------------------------------------

def test_function_tracing_example_runs_and_shows_what_it_claims():
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, str(root / "examples" / "function_tracing.py")],
                         capture_output=True, text=True, check=True, env=env, timeout=120).stdout
    assert out.count("tracing scale for shape") == 2
    assert "traces after 3 calls, 2 shapes: 2" in out
    assert out.count("tracing scale_any") == 1
    assert "traces after 3 lengths with input_signature: 1" in out
    assert "traces: 2 (the first call made Adam's slots" in out
    lines = [line.strip() for line in out.splitlines()]
    start = lines.index("3. eager.print inside a function")
    assert lines[start + 1:start + 5] == ["before: 0", "after:  1", "before: 1", "after:  2"]
    if hasattr(eager, "cond") and hasattr(eager, "while_loop"):
        assert "Collatz steps {6: 8, 7: 16, 27: 111}; traces: 1" in out


# -- a call recorded as one op -----------------------------------------------------------------
def _names(tape):
    return [e.name for e in tape._tape.as_recorded_ops()]


def test_call_under_tape_is_one_entry_with_eager_gradients():
    v = eager.Variable([0.5, -1.0])

    def body(x, y):
        h = eager.math.sin(x) * y + v
        return h * h, eager.reduce_sum(h), eager.cast(x > 0, eager.int32)

    f = eager.function(body)
    x = eager.constant([0.3, 1.2])
    y = eager.constant([2.0, -0.7])
    results = []
    for fn in (f, body):
        with eager.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            a, _, _ = fn(x, y)  # the sum output and the int output go unused
        results.append(tape.gradient(a, [x, y, v]))
        if fn is f:
            assert _names(tape) == ["PartitionedCall"]
    for g, e in zip(*results):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6)


def test_nested_function_and_variable_gradient():
    v = eager.Variable(3.0)
    inner = eager.function(lambda x: x * v)
    outer = eager.function(lambda x: inner(x) ** 2 + x)
    x = eager.constant(2.0)
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = outer(x)
    assert _names(tape) == ["PartitionedCall"]
    gx, gv = tape.gradient(y, [x, v])
    assert gx.numpy() == pytest.approx(2 * 6 * 3 + 1)
    assert gv.numpy() == pytest.approx(2 * 6 * 2)


def test_returned_input_and_repeated_output():
    f = eager.function(lambda x: (x, x * 2.0, x * 2.0))
    x = eager.constant(1.5)
    with eager.GradientTape() as tape:
        tape.watch(x)
        a, b, c = f(x)
        y = a + b + c
    assert tape.gradient(y, x).numpy() == pytest.approx(5.0)


def test_second_order_equals_eager():
    def body(x):
        return eager.math.exp(x) * eager.math.sin(x)

    f = eager.function(body)
    x = eager.constant(0.7)
    results = []
    for fn in (f, body):
        _, g, gg = derivatives(fn, x, 2)
        results.append((g.numpy(), gg.numpy()))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_stateful_function_under_nested_tapes_matches_eager():
    v = eager.Variable(2.0)

    def body(x):
        v.assign_add(1.0)
        return x * x * v

    f = eager.function(body)
    f(eager.constant(0.0))  # trace (and add one)
    x = eager.constant(1.5)
    with eager.GradientTape() as t2:
        t2.watch(x)
        with eager.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        g = t1.gradient(y, x)
    assert v.numpy() == pytest.approx(4.0)  # the forward ran once
    assert g.numpy() == pytest.approx(2 * 1.5 * 4.0)
    assert t2.gradient(g, x).numpy() == pytest.approx(2 * 4.0)


def test_concrete_function_direct_calls_check_new_kinds_of_arguments():
    """A ConcreteFunction called directly remembers the (dtype, shape) kinds it accepted and
    skips binding for them; any other kind is still bound and checked."""
    f = eager.function(lambda x, y: x * y)
    cf = f.get_concrete_function(eager.TensorSpec([None], eager.float32),
                                 eager.TensorSpec([None], eager.float32))
    a = eager.constant([1.0, 2.0])
    b = eager.constant([3.0, 4.0])
    for _ in range(3):
        np.testing.assert_array_equal(cf(a, b).numpy(), [3.0, 8.0])
    np.testing.assert_array_equal(cf(eager.constant([2.0]), eager.constant([5.0])).numpy(), [10.0])
    with pytest.raises(TypeError):
        cf(eager.constant([[1.0]]), b)  # rank 2 for a rank-1 signature
    with pytest.raises(TypeError):
        cf(eager.constant([1, 2]), eager.constant([1, 2]))  # int32
    np.testing.assert_array_equal(cf(a, y=b).numpy(), [3.0, 8.0])  # keywords: the full path
    np.testing.assert_array_equal(cf([1.0, 2.0], b).numpy(), [3.0, 8.0])  # converted

    g = eager.function(lambda x, scale: x * scale)
    cg = g.get_concrete_function(eager.TensorSpec([2], eager.float32), 3.0)
    for _ in range(2):
        np.testing.assert_array_equal(cg(a, 3.0).numpy(), [3.0, 6.0])
    assert not cg._accepted  # a Python parameter: always bound and checked
    with pytest.raises(TypeError):
        cg(a, 4.0)


def test_fast_lookups_stay_bounded_for_shapes_that_keep_changing():
    f = eager.function(lambda x: x * 2.0,
                       input_signature=[eager.TensorSpec([None], eager.float32)])
    cf = f.get_concrete_function()
    for n in range(1, 300):
        x = eager.constant(np.ones(n, np.float32))
        np.testing.assert_array_equal(f(x).numpy(), np.full(n, 2.0, np.float32))
        np.testing.assert_array_equal(cf(x).numpy(), np.full(n, 2.0, np.float32))
    assert len(f._fast) <= polymorphic._MAX_FAST_KEYS
    assert len(cf._accepted) <= concrete._MAX_ACCEPTED


def test_a_python_scalar_is_a_constant_of_the_trace_not_an_input():
    """TensorFlow bakes Python values into the trace: `graph.inputs` lists the tensor
    arguments' placeholders and the captures of values made outside, nothing for `n` or for a
    constant made inside; another Python value is another trace."""
    outside = eager.constant(10.0)

    @eager.function
    def f(x, n):
        return x * n + eager.constant(1.0) + outside

    x = eager.constant([1.0, 2.0])
    concrete = f.get_concrete_function(x, 3)
    graph = concrete.graph
    assert [t.name for t in graph.inputs] == ["x:0", "capture:0"]  # x, then `outside`
    assert concrete.captured_inputs == [outside]
    assert concrete.structured_input_signature == (
        (eager.TensorSpec([2], eager.float32, name="x"), 3), {})
    assert sorted(op.type for op in graph.get_operations()
                  if op.type in ("Placeholder", "Const")) == ["Const", "Const", "Placeholder",
                                                               "Placeholder"]
    np.testing.assert_allclose(_np(concrete(x, 3)), [14.0, 17.0])
    np.testing.assert_allclose(_np(f(x, 3)), [14.0, 17.0])
    np.testing.assert_allclose(_np(f(x, 4)), [15.0, 19.0])  # a new value: a new trace
    assert f.experimental_get_tracing_count() == 2
    assert len(f.get_concrete_function(x, 4).graph.inputs) == 2


def test_trace_constants_survive_gradients_control_flow_and_the_compiled_program():
    """A Const reaches every runtime as a capture did: the compiled program (second call), the
    op-by-op plan (first call), a tape through the call, and a loop body's constant."""
    @eager.function
    def f(x):
        y = eager.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0), (0, x))[1]
        return y * 0.5 + 1.0

    x = eager.constant([1.0, 2.0])
    for _ in range(3):
        np.testing.assert_allclose(_np(f(x)), [5.0, 9.0])
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(_np(tape.gradient(y, x)), [4.0, 4.0])
    assert f.get_concrete_function(x).captured_inputs == []


_UNHASHABLE = "Tensor is unhashable. Instead, use tensor.ref() as the key."  # TF 2.21's words


def test_tensors_inside_a_trace_are_unhashable_as_in_tensorflow():
    """A symbolic tensor used as a dict key or set member inside `eager.function` (or a branch)
    fails loudly, as TensorFlow's, instead of silently keying by identity; `ref()` and
    `experimental_ref()` are the hashable stand-ins."""
    seen = {}

    @eager.function
    def f(x):
        y = x + 1.0
        for t in (x, y):
            with pytest.raises(TypeError) as raised:
                hash(t)
            assert str(raised.value) == _UNHASHABLE
            with pytest.raises(TypeError, match="unhashable"):
                {t: 1}  # noqa: B018 - the dict display is what raises
            with pytest.raises(TypeError, match="unhashable"):
                t in set()  # noqa: B015
        keyed = {x.ref(): "x", y.experimental_ref(): "y"}
        seen["keys"] = (keyed[x.ref()], keyed[y.ref()], x.ref().deref() is x)

        def branch():
            with pytest.raises(TypeError, match="unhashable"):
                hash(y)  # an enclosing function's tensor, inside the branch's trace
            return y * 2.0

        return eager.cond(x > 0.0, branch, lambda: y)

    np.testing.assert_allclose(_np(f(eager.constant(1.0))), 4.0)
    assert seen["keys"] == ("x", "y", True)
    with pytest.raises(TypeError) as raised:
        hash(eager.constant(1.0))
    assert str(raised.value) == _UNHASHABLE
    with pytest.raises(TypeError) as raised:
        hash(eager.Variable(1.0))
    assert str(raised.value) == "Variable is unhashable. Instead, use variable.ref() as the key."


def test_hand_built_graph_tensors_still_hash_by_identity():
    """TF1-style graph mode (a Graph built by hand, fed through a Session) keys feeds by its
    tensors, as TensorFlow's graph mode does."""
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        y = x * 2.0
    assert {x: 1, y: 2}[y] == 2


@settings(max_examples=30, deadline=None)
@given(scalars=st.lists(st.one_of(st.integers(-5, 5), st.floats(-3.0, 3.0, width=32)),
                        min_size=1, max_size=4))
def test_python_values_are_baked_into_the_trace_whatever_they_are(scalars):
    """Random Python scalars as arguments: none is an input or a capture of the trace, the
    results equal numpy's, and a call with the same values reuses the trace."""
    @eager.function
    def f(x, *ks):
        out = x
        for k in ks:
            out = out * k + k
        return out

    x = eager.constant([1.0, 2.0])
    concrete = f.get_concrete_function(x, *scalars)
    assert len(concrete.graph.inputs) == 1 and concrete.captured_inputs == []
    expected = np.float32([1.0, 2.0])
    for k in scalars:
        expected = expected * np.float32(k) + np.float32(k)
    np.testing.assert_allclose(_np(f(x, *scalars)), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(f(x, *scalars)), expected, rtol=1e-5, atol=1e-6)
    assert f.experimental_get_tracing_count() == 1
