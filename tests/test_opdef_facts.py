"""Per-op facts on the `OpDef` that the compiler and its passes read: `elementwise` (fusion,
vectorisation), `infix` (generated code writes the operator), `ufunc` and `donatable_inputs`
(buffer donation). Each fact is declared where its op is registered; these tests check that
every declaration is true of the op's kernel, that the passes read the fact (an unregistered op
declaring it is treated like the registered ones), and pin which ops declare each."""

import inspect

import numpy as np
import pytest

import eager
from eager.core.registry import OpDef, get_op, registered_ops
from eager.core.specs import TensorSpec as Spec
from eager.runtime import Node, Program, run_program
from eager.runtime.compiler import MIN_DONATED_ELEMENTS, compile_program
from eager.runtime.passes import fuse_elementwise
from eager.runtime.vectorize import vectorize

from test_compiler import _program

ELEMENTWISE = [op for op in registered_ops() if op.elementwise]
WITH_UFUNC = [op for op in registered_ops() if op.ufunc is not None]
WITH_INFIX = [op for op in registered_ops() if op.infix is not None]

#: Attributes an elementwise kernel needs (it has no default for them).
_ATTRS = {"Cast": {"dtype": eager.float32}}
#: Input dtypes other than the op's main type parameter.
_INPUT_DTYPES = {"SelectV2": (eager.bool, None, None)}


def _array_params(kernel, attrs=()):
    """The names of the array inputs of `kernel(xp, *arrays, **attrs)`: its positional
    parameters after `xp` with no default, less the attributes given."""
    params = list(inspect.signature(kernel).parameters.values())[1:]
    return [p.name for p in params
            if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD and p.name not in attrs]


def _dtypes(op):
    """The dtypes `op` accepts (float64 for an op that takes any), in a fixed order."""
    return sorted(op.dtypes or {eager.float64}, key=lambda d: d.name)


def _preferred_dtype(op):
    for dtype in (eager.float64, eager.int64, eager.int32, eager.bool):
        if dtype in _dtypes(op):
            return dtype
    return _dtypes(op)[0]


def _random(rng, dtype, shape):
    """Values every kernel here accepts: nonzero, positive for real dtypes (no integer division
    by zero, no negative power of an integer)."""
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    if np_dtype.kind == "b":
        return rng.random(shape) < 0.5
    if np_dtype.kind in "iu":
        return rng.integers(1, 6, shape).astype(np_dtype)
    values = rng.uniform(0.25, 2.0, shape)
    if np_dtype.kind == "c":
        values = values + 1j * rng.uniform(-2.0, 2.0, shape)
    return values.astype(np_dtype)


def _elementwise_inputs(op, rng, shape):
    attrs = _ATTRS.get(op.name, {})
    n = len(_array_params(op.kernel, attrs))
    dtypes = _INPUT_DTYPES.get(op.name, (None,) * n)
    main = _preferred_dtype(op)
    return [_random(rng, d or main, shape) for d in dtypes], attrs


# -- elementwise ---------------------------------------------------------------------------------
def test_elementwise_ops_are_the_math_and_activation_ops():
    names = {op.name for op in ELEMENTWISE}
    assert {"AddV2", "Sub", "Mul", "RealDiv", "FloorMod", "Pow", "Maximum", "Less", "Equal",
            "NotEqual", "LogicalAnd", "LogicalNot", "BitwiseXor", "Invert", "Neg", "Abs", "Exp",
            "Log1p", "Tanh", "Sigmoid", "Real", "Conj", "Cast", "SelectV2", "ClipByValue",
            "Relu", "Gelu", "ReluGrad", "GeluGrad"} <= names
    assert not names & {"MatMul", "Sum", "Mean", "Max", "ArgMax", "Reshape", "Transpose",
                        "Softmax", "Identity", "Where", "Tile", "ConcatV2", "Pack",
                        "Unpack", "RandomUniform", "ReadVariableOp", "AssignAddVariableOp"}


@pytest.mark.parametrize("op", ELEMENTWISE, ids=lambda op: op.name)
def test_an_elementwise_op_has_one_output_no_state_and_no_resources(op):
    assert op.num_outputs == 1
    assert not op.stateful and not op.resource_inputs
    assert op.replay is None


@pytest.mark.parametrize("op", ELEMENTWISE, ids=lambda op: op.name)
def test_an_elementwise_kernel_computes_each_element_from_its_inputs_elements_alone(op):
    rng = np.random.default_rng(0)
    inputs, attrs = _elementwise_inputs(op, rng, (3, 4))
    with np.errstate(all="ignore"):
        out = np.asarray(op.kernel(np, *inputs, **attrs))
        assert out.shape == (3, 4)
        for i in range(3):
            for j in range(4):
                one = np.asarray(op.kernel(np, *(a[i:i + 1, j:j + 1] for a in inputs), **attrs))
                assert one.shape == (1, 1)
                np.testing.assert_array_equal(one, out[i:i + 1, j:j + 1])


def _twice(elementwise):
    """An unregistered op `2 x`, elementwise as told."""
    return OpDef("Twice", lambda xp, x: x * 2, lambda x: Spec(x.shape, x.dtype),
                 elementwise=elementwise)


def _unary_chain(*ops):
    """A hand-built program applying `ops` in turn to its one feed ([2, 3] float32)."""
    nodes = [Node(f"{op.name}_{i}", op, {}, (i,), (i + 1,)) for i, op in enumerate(ops)]
    specs = {v: Spec([2, 3], eager.float32) for v in range(len(ops) + 1)}
    return Program(nodes, feeds=(0,), fetches=(len(ops),), specs=specs)


def test_fusion_merges_an_op_by_its_elementwise_flag(cpu_only):
    exp, tanh = get_op("Exp"), get_op("Tanh")
    p = _unary_chain(exp, _twice(True), tanh)
    (fused,) = fuse_elementwise(p).nodes
    assert fused.type == "Fused[Exp,Twice,Tanh]"
    feed = eager.constant(np.float32([[0, 1, 2], [-1, 0.5, 3]]))
    np.testing.assert_array_equal(run_program(fuse_elementwise(p), [feed])[0].numpy(),
                                  run_program(p, [feed])[0].numpy())
    p = _unary_chain(exp, _twice(False), tanh)
    assert fuse_elementwise(p) is p  # nothing fuses around it


def test_fusion_stops_at_a_non_elementwise_op():
    def f(x):
        return eager.math.tanh(eager.reduce_sum(eager.math.exp(x) * 2.0, axis=1) + 1.0)

    p = _program(f, eager.TensorSpec([2, 3]))
    q = fuse_elementwise(p)
    assert [node.type for node in q.nodes] == ["Fused[Exp,Mul]", "Sum", "Fused[AddV2,Tanh]"]
    feed = eager.constant(np.float32([[0, 1, 2], [-1, 0.5, 3]]))
    np.testing.assert_array_equal(run_program(q, [feed])[0].numpy(), f(feed).numpy())


def test_vectorize_runs_an_op_by_its_elementwise_flag():
    result = vectorize(_unary_chain(_twice(True)), [0], 3)
    assert result is not None
    batched, batched_values = result
    assert batched.specs[1].shape.as_list() == [3, 2, 3] and 1 in batched_values
    feed = np.arange(18, dtype=np.float32).reshape(3, 2, 3)
    np.testing.assert_array_equal(run_program(batched, [eager.constant(feed)])[0].numpy(),
                                  feed * 2)
    assert vectorize(_unary_chain(_twice(False)), [0], 3) is None  # no batch rule


# -- ufunc and donatable_inputs ------------------------------------------------------------------
def test_donating_ops_and_their_inputs():
    assert {op.name: op.donatable_inputs for op in WITH_UFUNC} == {
        "AddV2": (0, 1), "Sub": (0, 1), "Mul": (0, 1), "ReluGrad": (0,)}
    assert all(op.donatable_inputs == () for op in registered_ops() if op.ufunc is None)
    with pytest.raises(ValueError, match="donatable_inputs need the ufunc"):
        OpDef("Bad", None, None, donatable_inputs=(0,))


def _ufunc_arity(ufunc) -> int:
    """A ufunc's `nin`; for a function called like one, its parameters other than `out`."""
    nin = getattr(ufunc, "nin", None)
    if nin is not None:
        return nin
    return len([p for p in inspect.signature(ufunc).parameters if p != "out"])


@pytest.mark.parametrize("op", WITH_UFUNC, ids=lambda op: op.name)
def test_a_donating_ufunc_is_the_kernel_written_into_any_donatable_input(op):
    assert _ufunc_arity(op.ufunc) == len(_array_params(op.kernel)) == 2  # the compiler's shape
    assert op.elementwise and op.donatable_inputs
    assert set(op.donatable_inputs) <= {0, 1}
    rng = np.random.default_rng(1)
    for dtype in _dtypes(op):
        x, y = _random(rng, dtype, (6,)), _random(rng, dtype, (6,)) - _random(rng, dtype, (6,))
        y[:2] = 0  # both signs and zero (ReluGrad's edge)
        expected = op.kernel(np, x, y)
        for position in op.donatable_inputs:
            arrays = [x.copy(), y.copy()]
            donated = arrays[position]
            result = op.ufunc(*arrays, out=donated)
            assert result is donated, dtype
            assert donated.dtype == expected.dtype, dtype
            np.testing.assert_array_equal(donated, expected, err_msg=dtype.name)


def _add_into_one(donatable):
    """An unregistered op `x + y` donating as told."""
    return OpDef("AddInto", lambda xp, x, y: x + y, lambda x, y: Spec(x.shape, x.dtype),
                 ufunc=np.add if donatable else None, donatable_inputs=donatable)


def test_the_compiler_donates_by_the_ops_ufunc(cpu_only):
    n = MIN_DONATED_ELEMENTS
    for donatable, donated in (((0,), True), ((1,), False), ((), False)):
        op = _add_into_one(donatable)
        nodes = [Node("t", get_op("Neg"), {}, (0,), (2,)),  # an intermediate, dead after "sum"
                 Node("sum", op, {}, (2, 1), (3,))]
        specs = {v: Spec([n], eager.float32) for v in range(4)}
        program = Program(nodes, feeds=(0, 1), fetches=(3,), specs=specs)
        compiled = compile_program(program)
        lines = [line for line in compiled.source.splitlines() if "(AddInto)" in line]
        assert any("donate(" in line for line in lines) is donated, donatable
        x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
        out = compiled([eager.constant(x), eager.constant(y)])[0].numpy()
        np.testing.assert_array_equal(out, -x + y)


# -- infix ---------------------------------------------------------------------------------------
def test_infix_ops():
    assert {op.name: op.infix for op in WITH_INFIX} == {
        "AddV2": "+", "Sub": "-", "Mul": "*", "RealDiv": "/"}


@pytest.mark.parametrize("op", WITH_INFIX, ids=lambda op: op.name)
def test_an_infix_kernel_is_its_python_operator(op):
    assert len(_array_params(op.kernel)) == 2
    rng = np.random.default_rng(2)
    for dtype in _dtypes(op):
        x, y = _random(rng, dtype, (2, 3)), _random(rng, dtype, (3,))
        with np.errstate(all="ignore"):
            expected = op.kernel(np, x, y)
            # As generated code writes it (the operator is the OpDef's own: hence S307's noqa).
            got = eval(f"x {op.infix} y", {}, {"x": x, "y": y})  # noqa: S307
        assert got.dtype == expected.dtype, dtype
        np.testing.assert_array_equal(got, expected, err_msg=dtype.name)
