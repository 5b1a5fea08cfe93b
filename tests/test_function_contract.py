"""The rest of `tf.function`'s contract, against TensorFlow 2.21's behaviour recorded here:
results are tensors; concrete functions bind Python arguments at trace time, accept their flat
signature and print TF's signatures; `run_functions_eagerly`; `init_scope`; unused stateless
ops are pruned while stateful ones run; `.numpy()` on a symbolic tensor is an AttributeError;
a tape target that is a source itself has the gradient ones."""

import collections
import io
import re

import numpy as np
import pytest

import eager
from eager import TensorSpec
from eager.experimental import async_scope
from eager.functions import lifting


def _value(t):
    return np.asarray(t.numpy()).tolist()


def _golden(text):
    """A TensorFlow 2.21 golden with TF's dtype prefix written as eager's."""
    return text.replace("tf.", "eager.")


@pytest.fixture
def run_eagerly():
    """Turns `run_functions_eagerly` on for the test, and off after it whatever happens."""
    eager.config.run_functions_eagerly(True)
    try:
        yield
    finally:
        eager.config.run_functions_eagerly(False)


# -- results are tensors ---------------------------------------------------------------------------
P = collections.namedtuple("P", "a b")

# (returned value, TF 2.21's result as (dtype name, value) per leaf; None where TF keeps None)
RESULTS = [
    (1, ("int32", 1)),
    (1.5, ("float32", 1.5)),
    (True, ("bool", True)),
    (np.arange(3), ("int64", [0, 1, 2])),
    (np.float64(2.0), ("float64", 2.0)),
    (2 ** 40, ("int64", 2 ** 40)),
    (1 + 2j, ("complex128", 1 + 2j)),
]


@pytest.mark.parametrize("returned,expected", RESULTS)
def test_a_returned_python_value_is_a_tensor(returned, expected):
    f = eager.function(lambda: returned)
    for _ in range(2):  # the first call (op by op) and the compiled one
        out = f()
        assert isinstance(out, eager.EagerTensor)
        assert (out.dtype.name, _value(out)) == expected


def test_structures_of_python_values_become_structures_of_tensors_and_none_stays():
    x = eager.constant(1.0)
    f = eager.function(lambda x: {"a": 1.5, "b": None, "c": (True, [None, 2]), "d": x,
                                  "p": P(1, 2.0)})
    out = f(x)
    assert out["b"] is None and out["c"][1][0] is None
    leaves = {"a": out["a"], "c0": out["c"][0], "c1": out["c"][1][1], "d": out["d"],
              "pa": out["p"].a, "pb": out["p"].b}
    assert {k: (t.dtype.name, _value(t)) for k, t in leaves.items()} == {
        "a": ("float32", 1.5), "c0": ("bool", True), "c1": ("int32", 2), "d": ("float32", 1.0),
        "pa": ("int32", 1), "pb": ("float32", 2.0)}
    assert type(out["p"]) is P
    # TF 2.21: `structured_outputs` holds the graph's tensors in their place, None as None
    concrete = eager.function(lambda: (1, None)).get_concrete_function()
    first, second = concrete.structured_outputs
    assert first.is_symbolic and first.dtype == eager.int32 and second is None
    assert len(concrete.outputs) == 1
    assert eager.function(lambda: None)() is None


def test_a_string_stays_python_since_there_is_no_string_dtype():
    assert eager.function(lambda: ("hi", 1))()[0] == "hi"


class _Thing:
    pass


@pytest.mark.parametrize("returned,type_name", [(_Thing(), "_Thing"), (eager.float32, "DType"),
                                                (TensorSpec([1]), "TensorSpec"),
                                                (2 ** 70, "int"), (Ellipsis, "ellipsis")])
def test_an_unconvertible_result_is_tensorflows_type_error(returned, type_name):
    def returns():
        return returned

    with pytest.raises(TypeError) as info:
        eager.function(returns)()
    # TF 2.21's words
    assert str(info.value) == (
        "To be compatible with tf.function, Python functions must return zero or more Tensors "
        f"or ExtensionTypes or None values; in compilation of {returns!r}, found return value "
        f"of type {type_name}, which is not a Tensor or ExtensionType.")


# -- concrete functions: binding, flat signature, text ---------------------------------------------
def _p(a, b, c=3):
    return a * b + c


def test_get_concrete_function_binds_python_arguments_and_takes_the_tensors_alone():
    f = eager.function(_p)
    concrete = f.get_concrete_function(a=TensorSpec([None], eager.float32), b=2)
    x = eager.constant([1.0, 2.0])
    # TF 2.21: the tensor alone, positionally or by name (its flat signature) -> [5, 7]
    assert _value(concrete(x)) == [5.0, 7.0]
    assert _value(concrete(a=x)) == [5.0, 7.0]
    # every argument, the Python ones equal to the traced values (eager applies defaults too)
    assert _value(concrete(x, 2)) == [5.0, 7.0]
    assert _value(concrete(a=x, b=2, c=3)) == [5.0, 7.0]
    for _ in range(3):  # the fast call of a flat call
        assert _value(concrete(x)) == [5.0, 7.0]
    assert f.experimental_get_tracing_count() == 1
    # positional mixes: a spec, a Python value, another spec
    mixed = f.get_concrete_function(TensorSpec([2]), TensorSpec([], eager.float32))
    assert _value(mixed(x, eager.constant(3.0))) == [6.0, 9.0]
    assert _value(mixed(x, b=eager.constant(3.0))) == [6.0, 9.0]
    assert _value(mixed(x, eager.constant(3.0), 3)) == [6.0, 9.0]
    by_value = f.get_concrete_function(TensorSpec([2]), 5, c=TensorSpec([], eager.float32))
    assert _value(by_value(x, eager.constant(1.0))) == [6.0, 11.0]


def _binding_error(concrete, *args, **kwargs):
    with pytest.raises(TypeError) as info:
        concrete(*args, **kwargs)
    text = str(info.value)
    assert text.startswith("Binding inputs to tf.function failed due to `"), text
    head, _, flat = text.partition("\nFallback to flat signature also failed due to: ")
    assert flat, text
    return head, flat


def test_a_call_that_fits_neither_signature_is_tensorflows_type_error():
    concrete = eager.function(_p).get_concrete_function(a=TensorSpec([None]), b=2)
    x = eager.constant([1.0, 2.0])
    signature = _golden("(a: TensorSpec(shape=(None,), dtype=tf.float32, name=None), "
                        "b: Literal[2], c: Literal[3]) -> TensorSpec(shape=(None,), "
                        "dtype=tf.float32, name=None)")
    head, flat = _binding_error(concrete, x, 3)
    assert f"for signature: {signature}." in head
    assert "Received args: (" in head and "and kwargs: {}" in head
    # TF 2.21's flat-signature messages (TF's function was named `p`)
    assert flat == "_p(a) takes 1 positional arguments, got 2."
    _, flat = _binding_error(concrete, x, c=3)
    assert flat.endswith("(a) got unexpected keyword arguments: c.")
    _, flat = _binding_error(concrete, [1.0, 2.0])
    assert flat.endswith("(a): expected argument #0(zero-based) to be a Tensor; got list "
                         "([1.0, 2.0]).")
    two = eager.function(_p).get_concrete_function(TensorSpec([2]), TensorSpec([]))
    head, flat = _binding_error(two, x)
    assert "missing a required argument: 'b'" in head
    assert flat.endswith("(a, b) missing required arguments: b.")
    # a tensor of the wrong dtype or shape: refused, in TF's words for a spec that does not
    # fit ("Can not cast <given> to <expected>")
    _, flat = _binding_error(concrete, eager.constant([1, 2]))
    cast = _golden("Can not cast TensorSpec(shape=(2,), dtype=tf.int32, name=None) to "
                   "TensorSpec(shape=(None,), dtype=tf.float32, name=None)")
    assert cast in flat
    _, flat = _binding_error(concrete, eager.constant([[1.0, 2.0]]))
    assert _golden("Can not cast TensorSpec(shape=(1, 2), dtype=tf.float32, name=None) to "
                   "TensorSpec(shape=(None,), dtype=tf.float32, name=None)") in flat


V = eager.Variable(2.0)
W = eager.Variable([1, 2])


def _q(xs, d, *rest, k=1, flag=True, **kw):
    return {"s": xs[0] * V + xs[1], "n": d["m"], "none": None, "w": W}, k


def _nested_concrete():
    return eager.function(_q).get_concrete_function(
        [TensorSpec([3]), TensorSpec([3], name="second")], {"m": TensorSpec([], eager.int64)},
        TensorSpec([1]), 7, k=5, extra="hi")


def test_the_signature_prints_as_tensorflows():
    concrete = eager.function(_p).get_concrete_function(a=TensorSpec([None]), b=2)
    # TF 2.21: print(concrete_fn)
    assert str(concrete) == _golden(
        "ConcreteFunction Input Parameters:\n"
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None,), dtype=tf.float32, name=None)\n"
        "  b (POSITIONAL_OR_KEYWORD): Literal[2]\n"
        "  c (POSITIONAL_OR_KEYWORD): Literal[3]\n"
        "Output Type:\n"
        "  TensorSpec(shape=(None,), dtype=tf.float32, name=None)\n"
        "Captures:\n"
        "  None")
    assert repr(concrete) == _golden(
        "<ConcreteFunction (a: TensorSpec(shape=(None,), dtype=tf.float32, name=None), "
        "b: Literal[2], c: Literal[3]) -> TensorSpec(shape=(None,), dtype=tf.float32, "
        f"name=None) at 0x{id(concrete):X}>")
    nested = _nested_concrete()
    text = nested.pretty_printed_signature()
    head, _, captures = text.partition("Captures:\n")
    assert head == _golden(
        "Input Parameters:\n"
        "  xs (POSITIONAL_ONLY): List[TensorSpec(shape=(3,), dtype=tf.float32, name=None), "
        "TensorSpec(shape=(3,), dtype=tf.float32, name='second')]\n"
        "  d (POSITIONAL_ONLY): Dict[['m', TensorSpec(shape=(), dtype=tf.int64, name=None)]]\n"
        "  rest_0 (POSITIONAL_ONLY): TensorSpec(shape=(1,), dtype=tf.float32, name=None)\n"
        "  rest_1 (POSITIONAL_ONLY): Literal[7]\n"
        "  k (KEYWORD_ONLY): Literal[5]\n"
        "  flag (KEYWORD_ONLY): Literal[True]\n"
        "  extra (KEYWORD_ONLY): Literal['hi']\n"
        "Output Type:\n"
        "  Tuple[Dict[['s', TensorSpec(shape=(3,), dtype=tf.float32, name=None)], "
        "['n', TensorSpec(shape=(), dtype=tf.int64, name=None)], ['none', Literal[None]], "
        "['w', TensorSpec(shape=(2,), dtype=tf.int32, name=None)]], "
        "TensorSpec(shape=(), dtype=tf.int32, name=None)]\n")
    lines = captures.split("\n")
    assert len(lines) == 2 and all(
        re.fullmatch(r"  \d+: TensorSpec\(shape=\(\), dtype=eager\.resource, name=None\)", line)
        for line in lines), captures
    assert nested.pretty_printed_signature(verbose=False) == _golden(
        "(xs: List[TensorSpec(shape=(3,), dtype=tf.float32, name=None), TensorSpec(shape=(3,), "
        "dtype=tf.float32, name='second')], d: Dict[['m', TensorSpec(shape=(), dtype=tf.int64, "
        "name=None)]], rest_0: TensorSpec(shape=(1,), dtype=tf.float32, name=None), "
        "rest_1: Literal[7], /, *, k: Literal[5], flag: Literal[True], extra: Literal['hi']) -> "
        "Tuple[Dict[['s', TensorSpec(shape=(3,), dtype=tf.float32, name=None)], ['n', "
        "TensorSpec(shape=(), dtype=tf.int64, name=None)], ['none', Literal[None]], ['w', "
        "TensorSpec(shape=(2,), dtype=tf.int32, name=None)]], TensorSpec(shape=(), "
        "dtype=tf.int32, name=None)]")


def test_variables_namedtuples_and_literals_print_as_tensorflows():
    v = eager.Variable(1.0)

    @eager.function
    def f(p, var, t=(1, 2), n=None, fl=1.5):
        return p.a, var

    text = str(f.get_concrete_function(P(TensorSpec([2]), 3), v))
    assert text == _golden(
        "ConcreteFunction Input Parameters:\n"
        "  p (POSITIONAL_OR_KEYWORD): P[['a', TensorSpec(shape=(2,), dtype=tf.float32, "
        "name=None)], ['b', Literal[3]]]\n"
        "  var (POSITIONAL_OR_KEYWORD): VariableSpec(shape=(), dtype=tf.float32, "
        "trainable=True, alias_id=0)\n"
        "  t (POSITIONAL_OR_KEYWORD): Tuple[Literal[1], Literal[2]]\n"
        "  n (POSITIONAL_OR_KEYWORD): Literal[None]\n"
        "  fl (POSITIONAL_OR_KEYWORD): Literal[1.5]\n"
        "Output Type:\n"
        "  Tuple[TensorSpec(shape=(2,), dtype=tf.float32, name=None), TensorSpec(shape=(), "
        "dtype=tf.float32, name=None)]\n"
        "Captures:\n"
        "  None")
    nothing = eager.function(lambda x: None).get_concrete_function(eager.constant(1))
    assert str(nothing).endswith("Output Type:\n  Literal[None]\nCaptures:\n  None")


def test_structured_input_signature_outputs_shapes_and_dtypes_are_tensorflows():
    nested = _nested_concrete()
    # TF 2.21: leaves named by their path, a name the user gave kept
    assert nested.structured_input_signature == (
        ([TensorSpec([3], eager.float32, "xs_0"), TensorSpec([3], eager.float32, "second")],
         {"m": TensorSpec([], eager.int64, "d_m")}, TensorSpec([1], eager.float32, "rest_0"), 7),
        {"k": 5, "flag": True, "extra": "hi"})
    assert nested.output_shapes == (
        {"s": eager.TensorShape([3]), "n": eager.TensorShape([]),
         "none": eager.TensorShape(None), "w": eager.TensorShape([2])}, eager.TensorShape([]))
    assert nested.output_dtypes == (
        {"s": eager.float32, "n": eager.int64, "none": None, "w": eager.int32}, eager.int32)
    # TF 2.21: the flat call feeds the tensor leaves in order
    ones = eager.ones([3])
    out, k = nested(ones, ones, eager.constant(1, eager.int64), eager.ones([1]))
    assert _value(out["s"]) == [3.0, 3.0, 3.0] and _value(k) == 5 and out["none"] is None
    assert _value(out["w"]) == [1, 2]


def test_pretty_printed_concrete_signatures_lists_every_trace():
    f = eager.function(_p)
    assert f.pretty_printed_concrete_signatures() == ""
    f.get_concrete_function(a=TensorSpec([None]), b=2)
    f.get_concrete_function(TensorSpec([2]), TensorSpec([]))
    # TF 2.21's text (verbose: blocks apart; not verbose: one line each)
    assert f.pretty_printed_concrete_signatures(verbose=False) == _golden(
        "(a: TensorSpec(shape=(None,), dtype=tf.float32, name=None), b: Literal[2], "
        "c: Literal[3]) -> TensorSpec(shape=(None,), dtype=tf.float32, name=None)\n"
        "(a: TensorSpec(shape=(2,), dtype=tf.float32, name=None), b: TensorSpec(shape=(), "
        "dtype=tf.float32, name=None), c: Literal[3]) -> TensorSpec(shape=(2,), "
        "dtype=tf.float32, name=None)")
    blocks = f.pretty_printed_concrete_signatures().split("\n\n")
    assert len(blocks) == 2 and blocks[1].startswith(_golden(
        "Input Parameters:\n"
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=tf.float32, name=None)\n"))
    signed = eager.function(lambda x: (x, eager.shape(x)),
                            input_signature=[TensorSpec([None, 2], name="inp")])
    signed.get_concrete_function()
    assert signed.pretty_printed_concrete_signatures() == _golden(
        "Input Parameters:\n"
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None, 2), dtype=tf.float32, "
        "name='inp')\n"
        "Output Type:\n"
        "  Tuple[TensorSpec(shape=(None, 2), dtype=tf.float32, name=None), "
        "TensorSpec(shape=(2,), dtype=tf.int32, name=None)]\n"
        "Captures:\n"
        "  None")


# -- run_functions_eagerly, init_scope -------------------------------------------------------------
def test_run_functions_eagerly_runs_the_python_function_each_call(run_eagerly):
    calls = []

    @eager.function
    def f(x):
        calls.append(eager.executing_eagerly())
        return x + 1

    assert eager.config.functions_run_eagerly() is True
    assert _value(f(eager.constant(1))) == 2 and _value(f(eager.constant(2))) == 3
    # TF 2.21: the body ran eagerly each time, and nothing was traced
    assert calls == [True, True] and f.experimental_get_tracing_count() == 0
    concrete = f.get_concrete_function(eager.constant(3))  # still traces
    assert f.experimental_get_tracing_count() == 1 and calls[-1] is False
    assert _value(concrete(eager.constant(5))) == 6
    assert eager.function(lambda: 1)() == 1  # the Python result as it is
    signed = eager.function(lambda x: x * 2, input_signature=[TensorSpec([2])])
    assert _value(signed(eager.constant([1.0, 2.0, 3.0]))) == [2.0, 4.0, 6.0]  # not checked
    assert signed([1, 2]) == [1, 2, 1, 2]

    @eager.function
    def outer(x):
        calls.append(("outer", eager.executing_eagerly()))
        return f(x)

    assert _value(outer(eager.constant(1))) == 2 and calls[-2:] == [("outer", True), True]
    eager.config.run_functions_eagerly(False)
    assert eager.config.functions_run_eagerly() is False
    before = len(calls)
    assert _value(f(eager.constant(1))) == 2  # the trace get_concrete_function made
    assert len(calls) == before and f.experimental_get_tracing_count() == 1


def test_run_functions_eagerly_takes_any_truth_value():
    try:
        eager.config.run_functions_eagerly(1)
        assert eager.config.functions_run_eagerly() is True
    finally:
        eager.config.run_functions_eagerly(False)


def test_init_scope_is_public_and_runs_eagerly_inside_a_trace():
    assert eager.init_scope is lifting.init_scope
    seen = []

    @eager.function
    def f(x):
        with eager.init_scope():
            c = eager.constant(2.0) * 3
            seen.append((eager.executing_eagerly(), type(c).__name__))
        return x * c

    assert _value(f(eager.constant(1.0))) == 6.0 and seen == [(True, "EagerTensor")]
    x = eager.constant(1.0)
    with eager.GradientTape() as tape:
        tape.watch(x)
        with eager.init_scope():
            y = x * 2
    assert tape.gradient(y, x) is None  # TF 2.21: the tape is set aside too


# -- pruning ---------------------------------------------------------------------------------------
def _unused_gather(x):
    eager.gather(x, 10)
    return x * 2


def _unused_gather_in_cond(x, p):
    def yes():
        eager.gather(x, 10)
        return x + 1
    return eager.cond(p, yes, lambda: x - 1)


def _unused_gather_in_loop(x):
    def body(i, x):
        eager.gather(x, 10)
        return i + 1, x * 2
    return eager.while_loop(lambda i, x: i < 2, body, [eager.constant(0), x])[1]


X = [1.0, 2.0]


@pytest.mark.parametrize("fn,args,expected", [
    (_unused_gather, (), [2.0, 4.0]),
    (_unused_gather_in_cond, (True,), [2.0, 3.0]),
    (_unused_gather_in_loop, (), [4.0, 8.0]),
])
@pytest.mark.parametrize("jit", [False, True])
def test_an_unused_stateless_op_is_pruned(fn, args, expected, jit):
    f = eager.function(fn, jit_compile=jit)
    x = eager.constant(X)
    args = tuple(eager.constant(a) for a in args)
    for _ in range(3):  # op by op, then compiled
        assert _value(f(x, *args)) == expected
    with eager.GradientTape() as tape:  # TF 2.21: [2, 2] for the first
        tape.watch(x)
        y = f(x, *args)
    assert tape.gradient(y, x) is not None
    with async_scope():
        assert _value(f(x, *args)) == expected


def test_stateful_ops_run_although_nothing_uses_them():
    v = eager.Variable(0.0)
    ran = []
    stream = io.StringIO()

    @eager.function
    def f(x):
        eager.gather(x, 10)
        v.assign_add(1.0)
        eager.print("printed", x, output_stream=stream)
        eager.py_function(lambda: ran.append(1) or 0.0, [], eager.float32)
        return None

    for _ in range(2):
        assert f(eager.constant(X)) is None
    assert v.numpy() == 2.0 and len(ran) == 2
    assert stream.getvalue() == "printed [1 2]\nprinted [1 2]\n"


# -- leaked symbolic tensors -----------------------------------------------------------------------
def test_numpy_of_a_symbolic_tensor_is_an_attribute_error_as_in_tensorflow():
    leaked, inside = [], []

    @eager.function
    def f(x):
        y = x * 2
        leaked.append(y)
        try:
            y.numpy()
        except AttributeError as exc:
            inside.append(str(exc))
        return y

    f(eager.constant(1.0))
    # TF 2.21: "'SymbolicTensor' object has no attribute 'numpy'", inside the trace and after
    assert inside[0].startswith("'SymbolicTensor' object has no attribute 'numpy'")
    with pytest.raises(AttributeError, match="^'SymbolicTensor' object has no attribute 'numpy'"):
        leaked[0].numpy()
    with pytest.raises(TypeError, match="used outside that function. Return it"):
        leaked[0] + 1
    with pytest.raises(TypeError, match="symbolic"):
        np.array(leaked[0])


# -- a tape target that is a source ----------------------------------------------------------------
def _tape_cases():
    v = eager.Variable([1.0, 2.0])
    w = eager.Variable(3.0)
    fixed = eager.Variable(3.0, trainable=False)

    def itself():
        with eager.GradientTape() as t:
            r = v
        return t.gradient(r, v)

    def unwatched():
        with eager.GradientTape(watch_accessed_variables=False) as t:
            r = v
        return t.gradient(r, v)

    def non_trainable():
        with eager.GradientTape() as t:
            r = fixed
        return t.gradient(r, fixed)

    def with_a_computed_target():
        with eager.GradientTape() as t:
            y = w * 2
        return t.gradient([w, y], w)

    def among_sources():
        with eager.GradientTape() as t:
            r = v
        return t.gradient(r, [v, w])

    def tensor_watched():
        x = eager.constant([1.0, 2.0])
        with eager.GradientTape() as t:
            t.watch(x)
        return t.gradient(x, x)

    def tensor_unwatched():
        x = eager.constant([1.0, 2.0])
        with eager.GradientTape() as t:
            pass
        return t.gradient(x, x)

    def with_a_seed():
        with eager.GradientTape() as t:
            r = v
        return t.gradient(r, v, output_gradients=eager.constant([3.0, 4.0]))

    def zero_unconnected():
        with eager.GradientTape() as t:
            r = v
        return t.gradient(r, v, unconnected_gradients="zero")

    @eager.function
    def traced_variable():
        with eager.GradientTape() as t:
            r = v
        return t.gradient(r, v)

    @eager.function
    def traced_tensor(x):
        with eager.GradientTape() as t:
            t.watch(x)
        return t.gradient(x, x)

    # TF 2.21's results
    return [
        (itself, [1.0, 1.0]), (unwatched, [1.0, 1.0]), (non_trainable, 1.0),
        (with_a_computed_target, 3.0), (among_sources, [[1.0, 1.0], None]),
        (tensor_watched, [1.0, 1.0]), (tensor_unwatched, [1.0, 1.0]), (with_a_seed, [3.0, 4.0]),
        (zero_unconnected, [1.0, 1.0]), (traced_variable, [1.0, 1.0]),
        (lambda: traced_tensor(eager.constant(3.0)), 1.0),
    ]


def test_the_gradient_of_a_target_that_is_the_source_is_ones():
    for case, expected in _tape_cases():
        got = case()
        if isinstance(got, list):
            got = [None if g is None else _value(g) for g in got]
        else:
            got = _value(got)
        assert got == expected, case.__name__
