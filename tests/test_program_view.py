"""`fn.experimental_get_program(...)`: the optimised program a call runs, as readable code (one
line per node: outputs with dtypes and shapes, the op, its inputs, devices, the user's line),
its generated source and its picture; and it is the very program the call runs."""

import inspect
import os
import re

import numpy as np
import pytest

import eager
from eager import TensorSpec

FILE = os.path.basename(__file__)

bias = eager.Variable([0.5, -0.5, 1.0], name="bias")


@eager.function
def affine(x):
    y = x * 2.0 + bias
    unused = x - 1.0  # noqa: F841 - pruned
    return eager.nn.relu(y * 3.0 - 1.0) + eager.reduce_sum(y)


@eager.function
def chain(x):
    for _ in range(50):
        x = x * 1.0001 + 0.5
    return x


def _line(fn, text):
    source, first = inspect.getsourcelines(fn.python_function)
    return first + next(i for i, line in enumerate(source) if text in line)


def test_printed_program_of_a_known_function():
    view = affine.experimental_get_program(TensorSpec([3]))
    y_line, ret_line = _line(affine, "y = x * 2.0"), _line(affine, "return eager.nn.relu")
    assert str(view) == f"""\
def affine(x: float32[3]) -> (float32[3]):
    bias: resource[] = variable 'bias'
    Const: float32[] = 2.0
    Const_2: float32[] = 3.0
    Const_3: float32[] = 1.0
    ReadVariableOp: float32[3] = ReadVariableOp(bias)  # {FILE}:{y_line}
    AddV2: float32[3] = Fused[Mul,AddV2](x, Const, ReadVariableOp)  # 2 fused ops; {FILE}:{y_line}
    Sum: float32[] = Sum(AddV2, keepdims=False)  # {FILE}:{ret_line}
    AddV2_1: float32[3] = Fused[Mul,Sub,Relu,AddV2](AddV2, Const_2, Const_3, Sum)  # 4 fused ops; {FILE}:{ret_line}
    return AddV2_1
"""  # noqa: E501


def test_a_chain_of_a_hundred_ops_is_one_fused_node():
    view = chain.experimental_get_program(eager.constant(np.arange(4, dtype=np.float32)))
    line = _line(chain, "x = x * 1.0001")
    assert str(view) == f"""\
def chain(x: float32[4]) -> (float32[4]):
    Const: float32[] = 1.0001
    Const_1: float32[] = 0.5
    AddV2_49: float32[4] = Fused[Mul,AddV2,Mul,AddV2,...,Mul,AddV2](100 ops)(x, Const, Const_1)  # 100 fused ops; {FILE}:{line}
    return AddV2_49
"""  # noqa: E501


def test_the_view_is_the_program_that_runs():
    @eager.function
    def f(x, v):
        v.assign_add(x)
        return eager.reduce_mean(x * x) + eager.reduce_mean(x * x)  # CSE: one product

    v = eager.Variable([0.0, 0.0])
    x = eager.constant([1.0, 2.0])
    f(x, v)
    f(x, v)  # the second call compiles
    concrete = f.get_concrete_function(x, v)
    view = f.experimental_get_program(x, v)
    runs = concrete._executable.program
    assert view.program is runs and len(view.nodes) == len(runs.nodes)
    text = str(view).splitlines()
    body = [line for line in text[1:] if " = " in line and not line.lstrip().startswith("#")
            and "(" in line.split(" = ", 1)[1] and not line.strip().startswith("return")]
    assert len(body) == len(runs.nodes)
    assert any("# must run:" in line for line in text)
    # the generated source runs one statement per node
    first_form = view.source.split("\ndef ")[0]
    assert len(re.findall(r"\b(?:run|donate)\(k\d+,", first_form)) == len(runs.nodes)
    assert view.source == concrete._executable.source
    np.testing.assert_allclose(f(x, v).numpy(), 5.0)


def test_concrete_functions_have_it_and_asking_compiles_once():
    concrete = affine.get_concrete_function(TensorSpec([3]))
    first = concrete.experimental_get_program()
    assert concrete.experimental_get_program().program is first.program
    out = concrete(eager.constant([1.0, 2.0, 3.0]))  # runs that compiled program
    assert out.shape == (3,)
    assert repr(first) == "<eager.runtime.ProgramView 'affine': 4 nodes, 1 feeds, 1 fetches>"


def test_print_readable_and_notebook_bundle(capsys):
    view = affine.experimental_get_program(TensorSpec([3]))
    text = view.print_readable()
    assert capsys.readouterr().out == text == str(view)
    bundle = view._repr_mimebundle_()
    assert bundle["text/plain"] == str(view)
    assert bundle["image/svg+xml"].startswith("<svg")
    assert view._repr_svg_().startswith("<svg")


def test_devices_show_in_the_listing():
    @eager.function
    def f(x):
        with eager.device("/CPU:0"):
            return x + 1.0

    view = f.experimental_get_program(TensorSpec([2]))
    assert "AddV2(x, Const)  # on /device:CPU:0; " in str(view)


@pytest.mark.skipif(not eager.config.list_logical_devices("GPU"),
                    reason="needs a GPU (CI runs the suite with EAGER_SIMULATED_GPUS=1)")
def test_a_program_spanning_devices_is_listed_placed_with_one_source_per_partition():
    @eager.function
    def f(x):
        with eager.device("/GPU:0"):
            y = x * 2.0
        with eager.device("/CPU:0"):
            return eager.reduce_sum(y)

    view = f.experimental_get_program(TensorSpec([2]))
    text = str(view)
    assert "device:GPU:0" in text and "device:CPU:0" in text
    assert view.source.count("# partition on ") == 2
    assert view.to_svg(engine="builtin").startswith("<svg")


def test_experimental_get_program_binds_like_a_call():
    with pytest.raises(TypeError):
        affine.experimental_get_program(TensorSpec([3]), TensorSpec([3]))
