"""Graphs and the tracing interpreter (eager.graph): structure, placeholders, captures, shape
inference against eager execution, errors, fast-path and thread isolation."""

import contextlib
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager
from eager import TensorSpec
from eager.core import context as _context
from eager.core.registry import get_op
from eager.graph import Graph, Operation, SymbolicTensor, building, get_default_graph, trace
from eager.graph import drawing as drawing_module


def _types(graph):
    return [op.type for op in graph.get_operations()]


def _names(graph):
    return [op.name for op in graph.get_operations()]


# -- structure ------------------------------------------------------------------------------------
def test_ops_in_program_order_with_wiring():
    def f(x, y):
        return eager.matmul(x + y, y) * 2.0

    g = trace(f, TensorSpec([2, 2]), TensorSpec([2, 2]))
    # the Python 2.0 becomes a constant of the trace: a Const added just before its use
    assert _types(g) == ["Placeholder", "Placeholder", "AddV2", "MatMul", "Const", "Mul"]
    assert _names(g) == ["args_0", "args_1", "AddV2", "MatMul", "Const", "Mul"]
    assert len(g.inputs) == 2 and g.captures == []
    x, y = g.inputs[:2]
    add = g.get_operation_by_name("AddV2")
    assert add.inputs == (x, y)
    assert isinstance(add, Operation) and add.graph is g and add.op_def.name == "AddV2"
    mm = g.get_operation_by_name("MatMul")
    assert mm.inputs[0] is add.outputs[0] and mm.inputs[1] is y
    mul = g.get_operations()[-1]
    assert mul.inputs[0] is mm.outputs[0]
    assert g.outputs == [mul.outputs[0]]
    assert g.outputs[0].op is mul and g.outputs[0].value_index == 0
    assert g.outputs[0].graph is g


def test_unique_names_tensorflow_style():
    def f(x):
        return x + x + x + x

    g = trace(f, TensorSpec([3]))
    assert _names(g) == ["args_0", "AddV2", "AddV2_1", "AddV2_2"]
    assert len(set(_names(g))) == len(_names(g))
    assert g.get_tensor_by_name("AddV2_1:0") is g.get_operation_by_name("AddV2_1").outputs[0]
    assert g.get_tensor_by_name("AddV2_2:0").name == "AddV2_2:0"


def test_unique_names_skip_names_already_taken():
    g = Graph()
    a = g.placeholder(eager.float32, [], name="add_1")
    b = g.placeholder(eager.float32, [], name="add")
    c = g.placeholder(eager.float32, [], name="add")
    assert (a.op.name, b.op.name, c.op.name) == ("add_1", "add", "add_2")


def test_name_scope_prefixes_op_names():
    def f(x):
        with eager.name_scope("layer"):
            y = x * 2.0
            with eager.name_scope("inner"):
                return y + 1.0

    g = trace(f, TensorSpec([2]))
    names = _names(g)
    assert "layer/Mul" in names and "layer/inner/AddV2" in names
    # captures are graph-level inputs, never under a scope
    assert all(op.name.startswith("capture") for op in g.get_operations()
               if op.type == "Placeholder" and op not in [g.inputs[0].op])


def test_get_by_name_errors():
    g = trace(lambda x: x + 1.0, TensorSpec([2]))
    with pytest.raises(KeyError):
        g.get_operation_by_name("nope")
    with pytest.raises(ValueError, match="tensor name"):
        g.get_tensor_by_name("AddV2")
    with pytest.raises(KeyError, match="does not exist"):
        g.get_tensor_by_name("AddV2:1")


def test_multi_output_op_returns_tuple():
    g = trace(lambda x: eager.unstack(x), TensorSpec([3, 2]))
    op = g.get_operations()[-1]
    assert op.type == "Unpack" and len(op.outputs) == 3
    assert [t.name for t in g.outputs] == [f"{op.name}:{i}" for i in range(3)]
    assert all(t.shape == (2,) for t in g.outputs)
    assert g.get_tensor_by_name(f"{op.name}:2") is op.outputs[2]


def test_control_inputs():
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        a = x + 1.0
        with g.control_dependencies([a]):
            b = x * 3.0
        c = x - 1.0
    assert b.op.control_inputs == [a.op]
    assert c.op.control_inputs == [] and a.op.control_inputs == []
    c.op._add_control_input(b.op)
    c.op._add_control_input(b.op)  # no duplicate edge
    assert c.op.control_inputs == [b.op]
    g.control_outputs.append(c.op)
    assert g.control_outputs == [c.op]
    with pytest.raises(ValueError):
        c.op._add_control_input(c.op)
    other = Graph()
    p = other.placeholder(eager.float32, [], name="p")
    with pytest.raises(ValueError, match="different graph"):
        c.op._add_control_input(p.op)
    op = g.add_op(get_op("AddV2"), (x, x), {}, control_inputs=[a.op, b.op])
    assert op.control_inputs == [a.op, b.op]
    assert g.get_operations()[-1] is op


# -- placeholders and captures -----------------------------------------------------------------
def test_placeholder_graph():
    g = Graph()
    x = g.placeholder("float32", [None, 4], name="x")
    y = g.placeholder(eager.int32, None)
    assert g.inputs == [x, y]
    assert x.shape.as_list() == [None, 4] and x.dtype is eager.float32
    assert y.shape.rank is None and y.dtype is eager.int32
    assert x.op.type == "Placeholder" and x.op.inputs == () and x.name == "x:0"
    assert y.op.name == "Placeholder"
    assert x.op.get_attr("shape") == x.shape
    with g.as_default():
        z = eager.nn.relu(x)
    assert z.shape.as_list() == [None, 4]
    with pytest.raises(eager.errors.InvalidArgumentError, match="must be fed"):
        x.op.op_def.kernel(np, **x.op.attrs)


def test_captures_one_placeholder_per_eager_tensor():
    c = eager.constant([1.0, 2.0])
    d = eager.constant([3.0, 4.0])

    def f(x):
        return x * c + c - d

    g = trace(f, TensorSpec([2]))
    caps = g.captures
    assert len(caps) == 2 and caps[0][0] is c and caps[1][0] is d
    pc, pd = caps[0][1], caps[1][1]
    assert pc is not pd
    assert pc.op.type == pd.op.type == "Placeholder"
    assert pc.shape == (2,) and pc.dtype is eager.float32
    mul = g.get_operation_by_name("Mul")
    add = g.get_operation_by_name("AddV2")
    assert mul.inputs[1] is pc and add.inputs[1] is pc  # same tensor, same placeholder
    assert g.get_operation_by_name("Sub").inputs[1] is pd
    assert g.inputs[0].name == "args_0:0" and g.inputs[1:] == [pc, pd]


def test_eager_arguments_become_placeholders_and_python_values_constants():
    g = trace(lambda x, k: (x * k, 3.0, None), eager.constant([[1, 2]]), 5)
    x = g.inputs[0]
    assert x.shape == (1, 2) and x.dtype is eager.int32
    assert len(g.outputs) == 2 and g.outputs[0].op.type == "Mul"
    # The Python 5 and 3.0 are baked into the trace (TensorFlow's Const), not inputs.
    assert g.outputs[0].op.inputs[1].op.type == "Const" and g.outputs[1].op.type == "Const"
    assert g.inputs == [x] and g.captures == []
    assert g.structured_outputs[2] is None


# -- shapes against eager execution --------------------------------------------------------------
def _model(x, w, b):
    h = eager.nn.relu(eager.matmul(x, w) + b)
    s = eager.nn.softmax(h)
    r = eager.reduce_sum(h, axis=1)
    t = eager.transpose(h)
    c = eager.concat([h, s], axis=1)
    rs = eager.reshape(c, [-1])
    sl = h[1:]
    ca = eager.cast(h, eager.int32)
    bc = x * eager.constant(2.0)  # broadcasting against a scalar capture
    return h, s, r, t, c, rs, sl, ca, bc


def _assert_same_types(fn, *args):
    eager_out = fn(*args)
    g = trace(fn, *[TensorSpec.from_tensor(a) for a in args])
    assert len(g.outputs) == len(eager_out)
    for sym, real in zip(g.outputs, eager_out):
        assert isinstance(sym, SymbolicTensor)
        assert sym.shape == real.shape, (sym, real.shape)
        assert sym.shape.is_fully_defined()
        assert sym.dtype is real.dtype, (sym, real.dtype)
    return g


def test_traced_shapes_equal_eager_shapes():
    rng = np.random.default_rng(0)
    x = eager.constant(rng.standard_normal((4, 3)).astype(np.float32))
    w = eager.constant(rng.standard_normal((3, 5)).astype(np.float32))
    b = eager.constant(rng.standard_normal((5,)).astype(np.float32))
    g = _assert_same_types(_model, x, w, b)
    assert {"MatMul", "AddV2", "Relu", "Softmax", "Sum", "Transpose", "ConcatV2", "Reshape",
            "StridedSlice", "Cast", "Mul"} <= set(_types(g))


@given(n=st.integers(1, 5), k=st.integers(1, 4), m=st.integers(1, 4))
def test_traced_shapes_equal_eager_shapes_hypothesis(n, k, m):
    x = eager.ones([n, k])
    w = eager.ones([k, m])
    b = eager.zeros([m])
    _assert_same_types(_model, x, w, b)


def test_broadcasting_shapes_equal_eager():
    def f(a, b):
        return a + b, a * b, eager.maximum(a, b)

    _assert_same_types(f, eager.ones([3, 1, 4]), eager.ones([5, 1]))


def test_none_batch_dim():
    def f(x, w, y):
        return x + y, x * 2.0, eager.matmul(x, w), eager.reduce_sum(x, axis=1), \
            eager.reduce_sum(x, axis=0), eager.reduce_sum(x)

    g = trace(f, TensorSpec([None, 3]), TensorSpec([3, 7]), TensorSpec([None, 1]))
    shapes = [t.shape.as_list() for t in g.outputs]
    assert shapes == [[None, 3], [None, 3], [None, 7], [None], [3], []]
    assert all(t.dtype is eager.float32 for t in g.outputs)


def test_unknown_rank_input():
    g = trace(lambda x: x + 1.0, TensorSpec(None))
    assert g.outputs[0].shape.rank is None


# -- errors -----------------------------------------------------------------------------------
def test_symbolic_tensor_value_errors():
    seen = {}

    def f(x):
        with pytest.raises(TypeError, match="eager.cond"):
            bool(x > 0.0)
        with pytest.raises(TypeError, match="eager.cond"):
            if x:
                pass
        with pytest.raises(AttributeError, match="symbolic"):
            x.numpy()
        with pytest.raises(TypeError, match="len is not well defined for symbolic"):
            len(x)
        with pytest.raises(TypeError, match="unknown first dimension"):
            iter(x).__next__()
        seen["ok"] = True
        return x

    trace(f, TensorSpec([None, 2]))
    assert seen["ok"]


def test_known_first_dim_len_and_iter():
    parts = {}

    def f(x):
        parts["len"] = len(x)
        parts["rows"] = list(x)
        return x

    trace(f, TensorSpec([3, 2]))
    assert parts["len"] == 3
    assert [r.shape for r in parts["rows"]] == [(2,), (2,), (2,)]
    assert all(isinstance(r, SymbolicTensor) for r in parts["rows"])


def test_symbolic_tensor_hash_and_repr():
    g = Graph()
    x = g.placeholder(eager.float32, [None, 2], name="x")
    assert hash(x) == id(x) and {x: 1}[x] == 1
    assert repr(x) == "<eager.Tensor 'x:0' shape=(None, 2) dtype=float32>"
    assert x.is_symbolic and x.device == ""


def test_a_tensor_leaked_from_a_trace_is_tensorflows_out_of_scope_type_error():
    # TF 2.21 (the "Better performance with tf.function" guide catches exactly TypeError):
    # "<tf.Tensor 'add:0' shape=() dtype=int32> is out of scope and cannot be used here. Use
    # return values, explicit Python locals or TensorFlow collections to access it."
    leaked = []

    @eager.function
    def leaky(a):
        leaked.append(a + 1)
        return a + 2

    @eager.function
    def uses_leaked(b):
        return b + leaked[0]

    assert int(leaky(eager.constant(1))) == 3
    with pytest.raises(TypeError, match="is out of scope and cannot be used here. Use return "
                                        "values, explicit Python locals or TensorFlow "
                                        "collections to access it."):
        uses_leaked(eager.constant(2))


def test_foreign_graph_tensor_raises():
    outer = Graph("outer")
    with outer.as_default():
        x = outer.placeholder(eager.float32, [2], name="x")
        inner = Graph("inner")
        with inner.as_default():
            assert get_default_graph() is inner
            with pytest.raises(ValueError, match="another graph"):
                x + 1.0
            assert inner.get_operations() == []  # nothing half-added, not even a capture
        assert get_default_graph() is outer
        y = x + 1.0  # the outer graph is restored
    assert y.graph is outer and get_default_graph() is None


@pytest.mark.parametrize("dispatch", ["sync", "async"])
def test_symbolic_tensor_used_eagerly_after_tracing(dispatch):
    g = trace(lambda x: x * 2.0, TensorSpec([2]))
    out = g.outputs[0]
    # Under async dispatch too the error comes at the call, not at a later sync point.
    with eager.experimental.async_scope() if dispatch == "async" else contextlib.nullcontext():
        with pytest.raises(TypeError, match="AddV2: an input is a symbolic tensor of a traced"):
            out + 1.0
        with pytest.raises(TypeError, match="Relu: an input is a symbolic tensor of a traced"):
            eager.nn.relu(out)
        with pytest.raises(TypeError, match="Reshape: an input is a symbolic tensor of a trace"):
            eager.matmul(eager.ones([1, 2]), eager.reshape(out, [2, 1]))


def test_inference_error_is_raised_at_trace_time():
    def f(a, b):
        return eager.matmul(a, b)

    with pytest.raises(eager.errors.InvalidArgumentError, match="MatMul"):
        trace(f, TensorSpec([2, 3]), TensorSpec([4, 5]))
    assert _context.thread_state().interpreter is None


def test_failed_op_adds_nothing():
    g = Graph()
    b = eager.ones([4, 5])  # made eagerly: inside the graph it is captured
    with g.as_default():
        a = g.placeholder(eager.float32, [2, 3], name="a")
        with pytest.raises(eager.errors.InvalidArgumentError):
            eager.matmul(a, b)
    assert _names(g) == ["a"] and g.captures == []


def test_dtype_mismatch_is_type_error_while_tracing():
    with pytest.raises(TypeError):
        trace(lambda a, b: a + b, TensorSpec([2]), TensorSpec([2], eager.int32))


# -- interpreter installation ----------------------------------------------------------------------
def test_building_restores_interpreter_and_fast_path(no_inference_check):
    before = _context.FAST_PATH.reasons
    was_on = _context.FAST_PATH.kernel_only
    g = Graph()
    with building(g) as built:
        assert built is g
        assert _context.FAST_PATH.reasons == before + 1 and not _context.FAST_PATH.kernel_only
        assert not eager.executing_eagerly()
        c = eager.constant([1.0, 2.0])
        assert type(c).__name__ == "EagerTensor"
        y = c + 1.0  # an EagerTensor operator: must be traced, not computed
        assert isinstance(y, SymbolicTensor) and y.op.type == "AddV2"
    assert _context.FAST_PATH.reasons == before and _context.FAST_PATH.kernel_only == was_on
    assert _context.thread_state().interpreter is None and eager.executing_eagerly()
    # made inside the trace: a Const holding it, not a capture (TensorFlow's tf.constant)
    assert g.captures == [] and y.op.inputs[0].op.attrs["value"].tensor is c


def test_exception_inside_building_restores_state():
    before = _context.FAST_PATH.reasons
    with pytest.raises(RuntimeError):
        with Graph().as_default():
            raise RuntimeError("boom")
    assert _context.FAST_PATH.reasons == before and _context.thread_state().interpreter is None
    with pytest.raises(ZeroDivisionError):
        trace(lambda x: 1 / 0, TensorSpec([2]))
    assert _context.FAST_PATH.reasons == before and _context.thread_state().interpreter is None


def test_building_requires_a_graph():
    with pytest.raises(TypeError):
        building(object())


def test_thread_isolation():
    g = Graph()
    results = {}
    started, traced = threading.Event(), threading.Event()

    def other():
        started.wait(5)
        r = eager.constant([1.0, 2.0]) * 3.0
        results["type"] = type(r).__name__
        results["value"] = r.numpy().tolist()
        results["default"] = get_default_graph()
        traced.set()

    t = threading.Thread(target=other)
    t.start()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        started.set()
        assert traced.wait(5)
        y = x * 3.0
    t.join(5)
    assert results == {"type": "EagerTensor", "value": [3.0, 6.0], "default": None}
    assert _names(g) == ["x", "Const", "Mul"]  # nothing from the other thread
    assert y.op.type == "Mul"


def test_device_scope_is_recorded():
    g = Graph()
    with g.as_default():
        x = g.placeholder(eager.float32, [2], name="x")
        with eager.device("CPU:0"):
            y = x + 1.0
    assert x.op.device == ""
    assert y.op.device == "/device:CPU:0" and y.device == "/device:CPU:0"


def test_graph_inside_gradient_tape_does_not_corrupt_it():
    v = eager.constant([1.0, 2.0])
    with eager.GradientTape() as tape:
        tape.watch(v)
        with Graph().as_default():
            s = v * 2.0  # a captured watched tensor feeding a symbolic op
            assert isinstance(s, SymbolicTensor)
        loss = eager.reduce_sum(v * v)
    grad = tape.gradient(loss, v)
    np.testing.assert_allclose(grad.numpy(), [2.0, 4.0])


def test_to_dot_mentions_every_op_and_edge():
    def f(x):
        with eager.name_scope("s"):
            return eager.nn.relu(x * 2.0)

    g = trace(f, TensorSpec([None, 2]))
    g.get_operations()[-1]._add_control_input(g.get_operations()[0])
    dot = g.to_dot()
    assert dot.startswith('digraph "f" {') and dot.rstrip().endswith("}")
    for op in g.get_operations():
        assert f'"{op.name}"' in dot and op.type in dot
    assert '"args_0" -> "s/Mul" [label="float32[?,2]"]' in dot
    assert '"s/Mul" -> "s/Relu"' in dot
    assert "style=dashed" in dot


def test_svg_through_graphviz_or_a_clear_message(tmp_path, monkeypatch):
    g = trace(lambda x: x * 2.0, TensorSpec([2]))
    monkeypatch.setenv("PATH", str(tmp_path))  # no Graphviz here
    with pytest.raises(RuntimeError, match="Graphviz needs its `dot` program, which is not on"):
        g.to_svg(engine="graphviz")
    assert g.to_svg().startswith("<svg")  # auto: eager's own layout
    assert g._repr_svg_().startswith("<svg")
    with pytest.warns(drawing_module.GraphDrawingWarning, match="Graphviz"):
        assert g.draw(engine="graphviz").engine == "builtin"
    # A stand-in `dot` that checks it was given the picture's dot text on stdin.
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\n[ \"$1\" = -Tsvg ] || exit 3\nread first\n"
                    "case \"$first\" in digraph*) echo '<svg>drawn</svg>';; *) exit 4;; esac\n")
    fake.chmod(0o755)
    assert g.to_svg().strip() == "<svg>drawn</svg>"
    assert g._repr_svg_().strip() == "<svg>drawn</svg>"
    assert g.to_svg(engine="builtin").startswith("<svg")
    fake.write_text("#!/bin/sh\necho 'syntax error' >&2\nexit 1\n")
    with pytest.raises(RuntimeError, match="exit 1.*syntax error"):
        g.to_svg()
    with pytest.warns(drawing_module.GraphDrawingWarning, match="syntax error"):
        assert g._repr_svg_().startswith("<svg")  # a notebook still shows the graph


def test_building_inside_async_scope_restores_the_executor():
    with eager.experimental.async_scope():
        executor = _context.thread_state().interpreter
        p = eager.constant([1.0, 2.0]) * 2.0  # pending
        g = Graph()
        with g.as_default():
            y = p + 1.0  # the pending value is waited for and captured
        assert _context.thread_state().interpreter is executor
        z = p + 1.0
    assert isinstance(y, SymbolicTensor)
    assert type(g.captures[0][0]).__name__ == "EagerTensor"
    np.testing.assert_allclose(g.captures[0][0].numpy(), [2.0, 4.0])
    np.testing.assert_allclose(z.numpy(), [3.0, 5.0])


def test_op_name_arguments_name_graph_ops_as_tensorflow():
    g = Graph("g")
    with g.as_default():
        x = g.placeholder(eager.float32, [None, 3], name="x")
        h = eager.matmul(x, eager.ones([3, 2]), name="hidden")
        t = eager.reduce_sum(h, name="total")
        again = eager.reduce_sum(h, name="total")  # taken: made unique
        with eager.name_scope("head"):
            out = eager.identity(t, name="out")
        r = eager.reshape(x, [-1], name="flat")
        c = eager.cast(r, eager.int32, name="as_int")
        s = eager.add(c, c, name="twice")
        n = eager.negative(s, name="neg")
        same = eager.cast(x, eager.float32, name="unchanged")  # no op made: nothing renamed
    assert [h.op.name, t.op.name, again.op.name, out.op.name] == [
        "hidden", "total", "total_1", "head/out"]
    assert [r.op.name, c.op.name, s.op.name, n.op.name] == ["flat", "as_int", "twice", "neg"]
    assert same is x and x.op.name == "x"
    assert g.get_tensor_by_name("head/out:0") is out
    sess = eager.Session(g)
    got = sess.run(["total:0", "head/out:0", "neg:0"], {"x:0": np.ones((2, 3), np.float32)})
    assert got[0] == got[1] == 12.0
    np.testing.assert_array_equal(got[2], np.full(6, -2, np.int32))
    # eagerly a name changes nothing
    assert eager.reduce_sum(eager.ones([2]), name="total").numpy() == 2.0
