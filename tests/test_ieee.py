"""IEEE results, never a warning turned error (eager.base.ieee): `1/0`, `log(0)`, `sqrt(-1)`,
`exp` overflow, the mean of nothing and float16 overflow give TensorFlow's inf/nan, value and
dtype, under `warnings.simplefilter("error")` and under the user's `np.seterr(all="raise")`, in
every way an op runs: eagerly through dispatch, through the operators' fast path (with buffer
reuse), in compiled programs' tensor and array forms, fused, asynchronously, on a simulated GPU,
and in stateful kernels (applied once, never half applied). `enable_check_numerics` is the way
to ask for errors."""

import gc
import threading
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eager
from eager import TensorSpec
from eager.base.ieee import quietly
from eager.core import dispatch
from eager.core.context import FAST_PATH
from eager.core.registry import registered_ops
from eager.errors import InvalidArgumentError
from eager.runtime import run_program
from eager.runtime.compiler import compile_program
from eager.runtime.passes import optimize
from tests.test_compiler import _count_array_runs, _program

F32 = np.float32


@pytest.fixture(params=["warnings-error", "seterr-raise"])
def hostile(request):
    """numpy's floating-point signals made exceptions, as a user's settings make them: every
    warning an error (`python -W error`, pytest's `filterwarnings = error`), or numpy's error
    state set to raise (restored afterwards)."""
    with warnings.catch_warnings():
        if request.param == "warnings-error":
            warnings.simplefilter("error")
            yield request.param
        else:
            old = np.seterr(all="raise")
            try:
                yield request.param
            finally:
                np.seterr(**old)


def _ieee(fn, *args):
    with np.errstate(all="ignore"):
        return fn(*args)


#: (name, eager function of tensors, numpy function, inputs): each gives inf or nan.
CASES = [
    ("1/0", lambda x, y: x / y, np.divide, (F32(1), F32(0))),
    ("0/0", lambda x, y: eager.math.divide(x, y), np.divide, (F32(0), F32(0))),
    ("log(0)", eager.math.log, np.log, (F32(0),)),
    ("sqrt(-1)", eager.sqrt, np.sqrt, (F32(-1),)),
    ("exp overflow", eager.exp, np.exp, (F32(1000),)),
    ("mean of nothing", eager.reduce_mean, lambda a: F32(np.nan), (np.zeros(0, F32),)),
    ("float16 overflow", lambda x: eager.cast(x, eager.float16), lambda a: a.astype(np.float16),
     (F32(7e4),)),
    ("inf - inf", lambda x, y: x - y, np.subtract, (F32(np.inf), F32(np.inf))),
    ("float16 sum overflow", eager.reduce_sum, lambda a: np.float16(np.inf),
     (np.full(4, 6e4, np.float16),)),
]
CASE_IDS = [c[0] for c in CASES]


def _expected(case):
    _, _, reference, inputs = case
    return np.asarray(_ieee(reference, *inputs))


def _same(got, expected):
    got = got.numpy() if hasattr(got, "numpy") else got
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_eager_ops_give_ieee_values(hostile, case):
    _, fn, _, inputs = case
    _same(fn(*[eager.constant(a) for a in inputs]), _expected(case))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_fast_paths_give_ieee_values(hostile, case, cpu_only, no_inference_check):
    _, fn, _, inputs = case
    assert FAST_PATH.kernel_only
    _same(fn(*[eager.constant(a) for a in inputs]), _expected(case))


def test_conversions_give_ieee_values(hostile):
    """TensorFlow converts a value beyond the dtype's range to inf."""
    _same(eager.constant(7e4, eager.float16), np.float16(np.inf))
    _same(eager.constant([7e4, 1.0], eager.float16), np.array([np.inf, 1], np.float16))
    _same(eager.constant(np.array([7e4]), eager.float16), np.array([np.inf], np.float16))
    _same(eager.constant(1e40, eager.float32), F32(np.inf))
    _same(eager.convert_to_tensor(-1e300, eager.float32), F32(-np.inf))
    _same(eager.constant([2 ** 70], eager.float16), np.array([np.inf], np.float16))
    _same(eager.constant(2.0, eager.float16) * 1e5, np.float16(np.inf))


def test_reused_buffers_keep_the_ieee_result(hostile, cpu_only, no_inference_check):
    """The fast path writes `(a * 2) / b` into the temporary `a * 2`; numpy signals only after
    writing all of it, which is then the result (the slow path could not recompute it: its
    operand is gone)."""
    n = 1 << 15
    a = eager.constant(np.linspace(-1, 1, n).astype(F32))
    b = eager.constant(np.where(np.arange(n) % 3 == 0, 0.0, 2.0).astype(F32))
    expected = _ieee(lambda: (a.numpy() * 2) / b.numpy())
    _same((a * 2.0) / b, expected)
    _same(1.0 / ((a * 0.0) * b), _ieee(lambda: 1.0 / ((a.numpy() * 0.0) * b.numpy())))
    big = eager.constant(np.full(n, 6e4, np.float16))
    _same((big * 1.0) + big, np.full(n, np.inf, np.float16))


def _two_forms(compiled, feeds):
    """The compiled program's tensor form, then its array form (checked to have run)."""
    tensor_form = compiled._fn(feeds, eager.core.context.thread_state())
    dispatch.check_inference(False)
    try:
        runs = _count_array_runs(compiled)
        array_form = compiled(feeds)
    finally:
        dispatch.check_inference(True)
    assert runs  # (a program without effects runs it again, quietly, after a signal)
    return tensor_form, array_form


@pytest.mark.parametrize("fused", [False, True], ids=["plain", "fused"])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_compiled_programs_give_ieee_values_in_both_forms(hostile, case, fused, cpu_only):
    _, fn, _, inputs = case

    def f(*xs):
        return fn(*xs) * 2.0 + 1.0  # a chain for fusion to merge (with fn, if elementwise)

    program = _program(f, *[TensorSpec(np.shape(a), eager.as_dtype(np.asarray(a).dtype))
                            for a in inputs])
    if fused:
        program = optimize(program)
        assert any(n.type.startswith("Fused[") for n in program.nodes)
    compiled = compile_program(program)
    feeds = [eager.constant(a) for a in inputs]
    one = _expected(case)
    expected = _ieee(lambda: one * one.dtype.type(2) + one.dtype.type(1))
    for (out,) in (*_two_forms(compiled, feeds), run_program(program, feeds)):
        _same(out, expected)


def test_traced_functions_give_ieee_values_on_every_call(hostile, cpu_only):
    """`eager.function`: the first call (op by op), the second (compiled, tensor form) and
    later ones (the array form, for eager-only inputs), with a large donated intermediate."""
    n = 1 << 15

    @eager.function
    def f(x, y):
        big = (x * 2.0) / y  # donated into by the division
        return eager.math.log(x[:2] * 0.0) + eager.exp(y[:2] * 1000.0), big

    x = eager.constant(np.linspace(-1, 1, n).astype(F32))
    y = eager.constant(np.where(np.arange(n) % 2 == 0, 0.0, 3.0).astype(F32))
    expected = _ieee(lambda: (np.log(x.numpy()[:2] * 0.0) + np.exp(y.numpy()[:2] * 1000.0),
                              (x.numpy() * 2.0) / y.numpy()))
    dispatch.check_inference(False)
    try:
        runs = None
        for k in range(4):
            if k == 2:  # compiled at the second call: the array form from now on
                runs = _count_array_runs(f.get_concrete_function(x, y)._executable)
            small, big = f(x, y)
            _same(small, expected[0])
            _same(big, expected[1])
    finally:
        dispatch.check_inference(True)
    assert len(runs) >= 2


def test_array_form_with_effects_resumes_after_the_signalling_node(hostile, cpu_only):
    """A program without effects runs again, quietly, after a signal; one with effects must not
    run twice, so its generated code answers the signal at the node that raised it and runs
    on: the variable is updated once per call."""
    v = eager.Variable(0.0)

    def pure(x, y):
        return x / y, eager.math.log(y)

    def with_effects(x, y):
        v.assign_add(1.0)
        return x / y, eager.math.log(y)

    x, y = eager.constant([1.0, -1.0]), eager.constant([0.0, 0.0])
    sources = {}
    for fn in (pure, with_effects):
        traced = eager.function(fn)
        dispatch.check_inference(False)
        try:
            runs = None
            for k in range(4):
                if k == 2:
                    executable = traced.get_concrete_function(x, y)._executable
                    runs = _count_array_runs(executable)
                quotient, log = traced(x, y)
                _same(quotient, np.array([np.inf, -np.inf], F32))
                _same(log, np.array([-np.inf, -np.inf], F32))
        finally:
            dispatch.check_inference(True)
        assert runs == ([1, 1, 1, 1] if fn is pure else [1, 1])
        sources[fn.__name__] = executable.source.split("_arrays(")[1]
    assert v.numpy() == 4.0
    assert "except FP_SIGNALS" not in sources["pure"]
    assert "except FP_SIGNALS" in sources["with_effects"]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_async_ops_and_calls_give_ieee_values(hostile, case):
    _, fn, _, inputs = case
    traced = eager.function(lambda *xs: fn(*xs))
    feeds = [eager.constant(a) for a in inputs]
    with eager.experimental.async_scope():
        results = [fn(*feeds), traced(*feeds), traced(*feeds), traced(*feeds)]
    for r in results:
        _same(r, _expected(case))


def test_simulated_gpu_kernels_never_signal(hostile, simulated_gpu):
    with eager.device("GPU:0"):
        x = eager.constant(np.array([0.0, 1.0, -1.0], F32))
        _same(eager.math.log(x) / x, _ieee(lambda: np.log(x.numpy()) / x.numpy()))
        v = eager.Variable(np.array([6e4], np.float16))
        v.assign_add(eager.constant(np.array([6e4], np.float16)))
        _same(v.read_value(), np.array([np.inf], np.float16))


# -- stateful kernels: never run twice, never half applied --------------------------------------

#: Every stateful op, by why its kernel gives IEEE results without being run again: it does no
#: floating-point arithmetic (handles, reads, assignments, draws from numpy's generators, print,
#: transfers, the checks, the Python of py_function and numpy_function: their conversions are
#: eager's, the arithmetic the user's; the dataset iterator ops, whose elements' arithmetic ran
#: in eager's own kernels), or it deals with its own signals (`eager.base.ieee`),
#: each tested below. A new stateful op must be added here, having been checked.
NO_ARITHMETIC = {"VarHandleOp", "CollectiveReduceNDone", "AssignVariableOp", "DestroyResourceOp",
                 "ResourceScatterUpdate",
                 "PrintV2", "RandomShuffle", "RandomStandardNormal", "RandomUniform",
                 "RandomUniformInt", "TruncatedNormal", "StatefulStandardNormalV2",
                 "StatefulTruncatedNormal", "StatefulUniform", "StatefulUniformFullInt",
                 "StatefulUniformInt", "Multinomial", "_Send", "_Recv", "CheckNumericsV2",
                 "CheckNumerics",
                 "EagerPyFunc", "PyFunc", "Assert", "AnonymousIteratorV3", "IteratorGetNext",
                 "IteratorGetNextAsOptional", "MatchingFiles", "ReadFile", "WriteFile",
                 "FlushSummaryWriter"}
HANDLES_ITS_SIGNALS = {"AssignAddVariableOp", "AssignSubVariableOp", "ResourceScatterAdd",
                       "WriteSummary", "CollectiveReduceV2", "CollectiveReduceN",
                       "CollectiveReduceNStart", "NcclAllReduce",
                       "ResourceApplyGradientDescent", "ResourceSparseApplyGradientDescent",
                       "ResourceApplyKerasMomentum", "ResourceSparseApplyKerasMomentum",
                       "ResourceApplyAdam", "ResourceApplyAdamWithAmsgrad",
                       "ResourceSparseApplyAdam", "ResourceSparseApplyAdamWithAmsgrad",
                       "ResourceApplyKerasWeightDecay", "ResourceApplyKerasMovingAverage",
                       *(f"Resource{kind}ApplyKeras{name}" for kind in ("", "Sparse")
                         for name in ("RMSProp", "RMSPropWithMomentum", "CenteredRMSProp",
                                      "CenteredRMSPropWithMomentum", "Adagrad", "Adadelta",
                                      "Adamax", "Nadam", "Lion", "Ftrl"))}


def test_every_stateful_op_is_classified():
    stateful = {op.name for op in registered_ops() if op.stateful}
    assert stateful == NO_ARITHMETIC | HANDLES_ITS_SIGNALS


@pytest.mark.parametrize("shared", [False, True], ids=["in place", "copy-on-write"])
def test_variable_updates_overflow_once(hostile, shared):
    v = eager.Variable(np.array([6e4, 1.0], np.float16))
    held = v.read_value() if shared else None
    v.assign_add(np.array([6e4, 1.0], np.float16))
    _same(v.read_value(), np.array([np.inf, 2.0], np.float16))
    v.assign_sub(np.array([-np.inf, np.inf], np.float16))
    _same(v.read_value(), np.array([np.inf, -np.inf], np.float16))
    v.assign(np.array([1.0, 2.0], np.float16))
    v.scatter_add(eager.IndexedSlices(eager.constant(np.array([6e4, 6e4], np.float16)),
                                      eager.constant([0, 0])))
    _same(v.read_value(), np.array([np.inf, 2.0], np.float16))
    if held is not None:
        _same(held, np.array([6e4, 1.0], np.float16))


def test_variable_update_fast_path_overflows_once(hostile, cpu_only, no_inference_check):
    v = eager.Variable(np.array([3e38, 1.0], F32))
    v.assign_add(eager.constant(np.array([3e38, 1.0], F32)))
    _same(v.read_value(), np.array([np.inf, 2.0], F32))


def _apply(optimizer, var, grad):
    optimizer.apply_gradients([(grad, var)])


@pytest.mark.parametrize("make", [
    lambda: eager.optimizers.SGD(10.0),
    lambda: eager.optimizers.SGD(10.0, momentum=0.9),
    lambda: eager.optimizers.SGD(10.0, momentum=0.9, nesterov=True),
    lambda: eager.optimizers.Adam(10.0),
    lambda: eager.optimizers.Adam(10.0, amsgrad=True),
    lambda: eager.optimizers.RMSprop(10.0, momentum=0.5, centered=True),
    lambda: eager.optimizers.Adagrad(10.0),
    lambda: eager.optimizers.Adadelta(10.0),
    lambda: eager.optimizers.Adamax(10.0),
    lambda: eager.optimizers.Nadam(10.0),
    lambda: eager.optimizers.Lion(10.0),
    lambda: eager.optimizers.Ftrl(10.0),
    lambda: eager.optimizers.AdamW(10.0, weight_decay=0.5, use_ema=True),
], ids=["sgd", "momentum", "nesterov", "adam", "amsgrad", "rmsprop", "adagrad", "adadelta",
        "adamax", "nadam", "lion", "ftrl", "adamw_ema"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_optimizer_steps_with_inf_gradients_are_applied_once_and_whole(hostile, make, sparse):
    """Each variable gets the update numpy computes quietly, from the same step run without
    hostile settings: every slot updated exactly once."""
    init = np.array([[1.0, 2.0], [3e38, -1.0], [np.inf, 0.25]], F32)
    # Overflow (3e38 * 10), inf - inf and inf * 0 on the way: every kind of signal.
    grad_values = np.array([[1.0, 1.0], [3e38, np.nan], [np.inf, -1.0]], F32)

    def run():
        var = eager.Variable(init)
        opt = make()
        if sparse:
            grad = eager.IndexedSlices(eager.constant(grad_values[1:]), eager.constant([1, 2]),
                                       eager.constant([3, 2]))
        else:
            grad = eager.constant(grad_values)
        for _ in range(2):
            _apply(opt, var, grad)
        return var.numpy(), [s.numpy() for s in opt.variables]

    got = run()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            quiet = run()
    np.testing.assert_array_equal(got[0], quiet[0])
    for a, b in zip(got[1], quiet[1]):
        np.testing.assert_array_equal(a, b)


def test_large_gradient_descent_updates_in_blocks_are_whole(hostile):
    n = (1 << 23) + 5  # beyond the scratch buffer: updated block by block
    var = eager.Variable(np.ones(n, F32))
    grad = np.zeros(n, F32)
    grad[-1] = np.inf
    grad[0] = -3e38
    eager.optimizers.SGD(10.0).apply_gradients([(eager.constant(grad), var)])
    value = var.numpy()
    assert value[0] == np.inf and value[-1] == -np.inf and (value[1:-1] == 1).all()


# -- the numpy behaviour the design rests on --------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 1 << 16])
def test_numpy_signals_only_after_writing_the_whole_result(dtype, n):
    big = np.finfo(dtype).max
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = np.full(n, big, dtype)
        with pytest.raises(RuntimeWarning):
            np.add(a, a, out=a)
        assert np.isinf(a).all()
        a = np.full((n, 2), big, dtype)
        with pytest.raises(RuntimeWarning):
            np.multiply(a, np.array([2, 1], dtype), out=a)  # broadcast
        assert np.isinf(a[:, 0]).all() and (a[:, 1] == big).all()
        a = np.full(n, big, dtype)
        with pytest.raises(RuntimeWarning):
            np.add.at(a, np.arange(n), a.copy())
        assert np.isinf(a).all()
    with np.errstate(all="raise"):
        a = np.full(n, big, dtype)
        with pytest.raises(FloatingPointError):
            np.subtract(a, -a, out=a)
        assert np.isinf(a).all()


def test_quietly_runs_a_warnings_module_runtime_warning_away():
    def noisy():
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
        return 1

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert quietly(noisy) == 1
        with pytest.raises(RuntimeWarning):
            noisy()  # the filters are the caller's again


# -- adversarial: random values with inf, nan, zeros and extremes -------------------------------

_SPECIAL = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 1e38, -1e38, 3.4e38, 1e-45,
                            1.0, -1.0, 88.8, 700.0, 65504.0, 7e4])
_VALUES = st.lists(st.one_of(_SPECIAL, st.floats(allow_nan=True, allow_infinity=True,
                                                 width=32)), min_size=1, max_size=6)
_UNARY = {"log": (eager.math.log, np.log), "exp": (eager.exp, np.exp),
          "sqrt": (eager.sqrt, np.sqrt), "rsqrt": (eager.math.rsqrt, lambda a: 1 / np.sqrt(a)),
          "log1p": (eager.math.log1p, np.log1p), "square": (eager.square, np.square),
          "reciprocal": (lambda x: 1.0 / x, lambda a: 1 / a),
          "sigmoid": (eager.sigmoid, None), "tanh": (eager.tanh, np.tanh),
          "mean": (eager.reduce_mean, lambda a: np.mean(a, dtype=a.dtype)),
          "prod": (eager.reduce_prod, lambda a: np.prod(a, dtype=a.dtype)),
          "logsumexp": (eager.reduce_logsumexp, None)}
_BINARY = {"add": (eager.add, np.add), "sub": (eager.subtract, np.subtract),
           "mul": (eager.multiply, np.multiply), "div": (eager.divide, np.divide),
           "pow": (eager.pow, np.power), "maximum": (eager.maximum, np.maximum),
           "operators": (lambda x, y: (x * y - x) / y, lambda a, b: (a * b - a) / b)}


def _quiet_eager(fn, *args):
    """What eager computes with every signal ignored: the reference for hostile runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(*args).numpy()


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(_UNARY)), values=_VALUES,
       dtype=st.sampled_from([np.float16, np.float32, np.float64]),
       regime=st.sampled_from(["warnings-error", "seterr-raise"]))
def test_random_unary_values_match_numpy_under_hostile_settings(name, values, dtype, regime):
    fn, reference = _UNARY[name]
    with np.errstate(all="ignore"):
        a = np.array(values, np.float64).astype(dtype)
    quiet = _quiet_eager(fn, eager.constant(a))
    if reference is not None:
        with np.errstate(all="ignore"):
            expected = np.asarray(reference(a)).astype(dtype)
        np.testing.assert_allclose(quiet.astype(np.float64), expected.astype(np.float64),
                                   rtol=1e-2 if dtype == np.float16 else 1e-5, equal_nan=True)
    with warnings.catch_warnings():
        if regime == "warnings-error":
            warnings.simplefilter("error")
        with np.errstate(all="raise" if regime == "seterr-raise" else "warn"):
            got = fn(eager.constant(a))
    assert got.dtype == eager.as_dtype(dtype)
    np.testing.assert_array_equal(got.numpy(), quiet)


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(_BINARY)), xs=_VALUES, ys=_VALUES,
       dtype=st.sampled_from([np.float16, np.float32, np.float64]),
       regime=st.sampled_from(["warnings-error", "seterr-raise"]),
       traced=st.booleans())
def test_random_binary_values_match_numpy_under_hostile_settings(name, xs, ys, dtype, regime,
                                                                 traced):
    fn, reference = _BINARY[name]
    n = min(len(xs), len(ys))
    with np.errstate(all="ignore"):
        a = np.array(xs[:n], np.float64).astype(dtype)
        b = np.array(ys[:n], np.float64).astype(dtype)
        expected = np.asarray(reference(a, b)).astype(dtype)
    run = eager.function(fn) if traced else fn
    with warnings.catch_warnings():
        if regime == "warnings-error":
            warnings.simplefilter("error")
        with np.errstate(all="raise" if regime == "seterr-raise" else "warn"):
            results = [run(eager.constant(a), eager.constant(b)) for _ in range(3)]
    for got in results:
        assert got.dtype == eager.as_dtype(dtype)
        np.testing.assert_array_equal(got.numpy(), expected)


# -- enable_check_numerics: the way to ask for errors -----------------------------------------

@pytest.fixture
def checking():
    eager.debugging.enable_check_numerics()
    try:
        yield
    finally:
        eager.debugging.disable_check_numerics()


def test_check_numerics_raises_naming_the_op(checking, cpu_only):
    x = eager.constant(np.array([0.0, 1.0, -1.0], F32))
    with pytest.raises(InvalidArgumentError) as log0:
        eager.math.log(x)
    message = str(log0.value)
    assert 'output 0 of eagerly-executing op "Log"' in message
    assert "dtype: <dtype: 'float32'>" in message and "shape: (3,)" in message
    assert "# of -Inf elements: 1" in message and "# of +NaN elements: 1" in message
    assert message.endswith(" : Tensor had -Inf and NaN values [Op:CheckNumericsV2]")
    with pytest.raises(InvalidArgumentError,
                       match='(?s)op "RealDiv".* : Tensor had \\+Inf values'):
        eager.constant(1.0) / eager.constant(0.0)  # the operators too
    with pytest.raises(InvalidArgumentError, match='(?s)op "Sqrt".*Tensor had NaN values'):
        eager.sqrt(eager.constant(-1.0))
    with pytest.raises(InvalidArgumentError, match='(?s)op "Mean".*Tensor had NaN values'):
        eager.reduce_mean(eager.zeros([0]))
    with pytest.raises(InvalidArgumentError, match='(?s)op "Exp".*Tensor had \\+Inf values'):
        eager.exp(eager.constant(1000.0))
    np.testing.assert_array_equal(eager.math.log(x * x + 1.0).numpy(),
                                  np.log(x.numpy() ** 2 + 1.0))
    assert eager.reshape(eager.constant([np.inf]), [1, 1]).shape == (1, 1)  # moves only
    assert eager.cast(eager.constant(1.0), eager.int32).numpy() == 1  # not a float output


def test_check_numerics_in_functions_and_async(checking, cpu_only):
    def f(a):
        return eager.sqrt(a) * 2.0

    traced_now = eager.function(f)
    for _ in range(3):  # op by op, compiled, array form
        with pytest.raises(InvalidArgumentError, match='(?s)graph op "Sqrt".*Graph name.*'
                                                       '-> \\|   return eager.sqrt'):
            traced_now(eager.constant([-1.0, 4.0]))
        np.testing.assert_array_equal(traced_now(eager.constant([1.0, 4.0])).numpy(), [2, 4])
    with pytest.raises(InvalidArgumentError, match='(?s)op "Log".*Tensor had -Inf values'):
        with eager.experimental.async_scope():
            eager.math.log(eager.constant(0.0))
    eager.experimental.async_clear_error()


def test_check_numerics_is_per_thread_idempotent_and_off_again(cpu_only):
    fast = FAST_PATH.kernel_only
    traced_before = eager.function(lambda a: eager.math.log(a))
    traced_before(eager.constant(1.0))
    eager.debugging.enable_check_numerics()
    eager.debugging.enable_check_numerics()
    try:
        assert not FAST_PATH.kernel_only
        # A function traced before checking was on keeps its unchecked graph.
        assert traced_before(eager.constant(0.0)).numpy() == -np.inf
        seen = []
        thread = threading.Thread(target=lambda: seen.append(eager.math.log(
            eager.constant(0.0)).numpy()))
        thread.start()
        thread.join(60)
        assert seen == [-np.inf]  # another thread is not checked
    finally:
        eager.debugging.disable_check_numerics()
    eager.debugging.disable_check_numerics()
    assert FAST_PATH.kernel_only == fast
    assert eager.math.log(eager.constant(0.0)).numpy() == -np.inf


def test_a_thread_ending_with_checking_on_gives_the_fast_path_back(cpu_only):
    fast = FAST_PATH.kernel_only
    thread = threading.Thread(target=eager.debugging.enable_check_numerics)
    thread.start()
    thread.join(60)
    gc.collect()
    assert FAST_PATH.kernel_only == fast
    assert dispatch.hooks.check_outputs is None
