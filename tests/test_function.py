"""eager.function: traced results equal eager ones, cache keys and retracing, input_signature,
reduce_retracing, concrete functions, methods, side effects, prints, captures, tapes."""

import gc
import io
import weakref

import numpy as np
import pytest

import eager
from eager import TensorSpec
from eager.function import ConcreteFunction, Function, run_graph
from eager.graph import trace


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
    assert args == (TensorSpec([None, 4], eager.float32, "a"), TensorSpec([4, 2], eager.float32, "b"))
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
    @eager.function
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="eager.cond"):
        f(eager.constant(1.0))


def test_variable_creation_and_variable_arguments_not_supported_yet():
    @eager.function
    def f(x):
        return eager.Variable(1.0) + x

    with pytest.raises(NotImplementedError, match="creating variables"):
        f(eager.constant(1.0))
    with pytest.raises(NotImplementedError):
        eager.function(lambda v: v + 1)(eager.Variable(1.0))


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
