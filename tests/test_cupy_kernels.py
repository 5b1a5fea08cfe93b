"""The CuPy kernel layer (`eager.ops.cupy_kernels`) without CUDA: the table, the per-(op, dtype)
cache, the fallback rules, the CUDA backend's choice of kernel, and every kernel source's
semantics, evaluated by a numpy stand-in of CuPy's kernel objects (`tests/cupy_stand_in.py`)
and compared with the op's own kernel on numpy. `tests/test_cuda.py` runs the real kernels."""

import contextlib
import itertools

import numpy as np
import pytest

import eager  # noqa: F401 - registers the ops and installs the table
from eager.core.registry import get_op
from eager.devices.cuda import CUDAStream
from eager.ops import cupy_kernels, training_ops
from eager.ops.cupy_kernels import TABLE, UPDATES, DirectLaunch, ReductionSource

from cupy_stand_in import ElementwiseKernel, StandIn

_SPECIAL = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1.0, -1.0, 2.5, -3.75, 1e-3, 88.0,
            -90.0, 700.0, 1e30, -1e-30, 65504.0, 7e4]
_DTYPES = [np.float16, np.float32, np.float64, np.int32, np.int64, np.complex64, np.uint8]


def _values(dtype, n=None):
    with np.errstate(all="ignore"):
        if np.dtype(dtype).kind == "f":
            return np.array(_SPECIAL, np.float64).astype(dtype)
        return np.array([0, 1, -1, 7, -8, 100, 2**31 - 1, -2**31], np.int64).astype(dtype)


def _same(got, expected):
    """Bit for bit: values, NaN positions, signs of zeros, dtype and shape."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(got)]),
                                      np.signbit(expected[~np.isnan(expected)]))


def _stand_in_launch(op_name):
    op = get_op(op_name)
    return DirectLaunch(op_name, TABLE[op_name], op.kernel)


# -- the table and its installation ------------------------------------------------------------

def test_the_table_covers_the_ops_whose_launches_gain_and_each_op_has_its_direct_kernel():
    assert set(TABLE) == {"AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Neg",
                          "Square", "Relu", "ReluGrad", "Exp", "Tanh", "Sigmoid", "Mean"}
    assert set(UPDATES) == {"gradient_descent", "momentum", "nesterov", "adam", "amsgrad",
                            "sparse_momentum", "sparse_nesterov", "sparse_adam",
                            "sparse_amsgrad"}
    names = [s.name for s in itertools.chain(TABLE.values(), UPDATES.values())]
    assert len(set(names)) == len(names)  # one cache key per source
    for op_name, source in TABLE.items():
        op = get_op(op_name)
        assert isinstance(op.cupy_kernel, DirectLaunch)
        assert op.cupy_kernel.source is source and op.cupy_kernel.fallback is op.kernel
        assert op.elementwise == (not isinstance(source, ReductionSource)), op_name
        assert source.dtypes <= {np.dtype(d) for d in op.dtypes}, op_name  # never widens
    assert get_op("Log").cupy_kernel is None and get_op("Prod").cupy_kernel is None


def test_half_precision_transcendentals_and_half_reductions_are_left_to_cupy():
    """Their float16 results round after every step, which one C expression would not."""
    for op_name in ("Exp", "Tanh", "Sigmoid", "Mean"):
        assert not TABLE[op_name].covers(np.dtype(np.float16))
        assert TABLE[op_name].covers(np.dtype(np.float32))
    for op_name in ("AddV2", "Mul", "RealDiv", "Maximum", "Relu", "ReluGrad", "Neg"):
        assert TABLE[op_name].covers(np.dtype(np.float16))


def test_kernel_objects_are_built_once_per_op_and_dtype():
    built = []

    class Counting:
        class ElementwiseKernel(ElementwiseKernel):
            def __init__(self, *args, **kwargs):
                built.append(args[3])
                super().__init__(*args, **kwargs)

    source = TABLE["AddV2"]
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    first = cupy_kernels.build(Counting, source, f32)
    assert cupy_kernels.build(Counting, source, f32) is first
    assert cupy_kernels.build(Counting, source, f64) is not first
    assert cupy_kernels.build(Counting, source, np.dtype(np.complex64)) is None
    assert built == ["eager_add", "eager_add"]
    assert (Counting, "eager_add", f32) in cupy_kernels._BUILT
    assert all(k[0] is not Counting for k in cupy_kernels._BUILT if k[2] == np.complex64)
    assert cupy_kernels.build(Counting, source, f32)(np.float32([1]), np.float32([2])) == 3
    assert cupy_kernels.update_kernel(Counting, "adam", f32) is cupy_kernels.build(
        Counting, UPDATES["adam"], f32)
    assert built == ["eager_add", "eager_add", "eager_adam"]


# -- fallbacks ---------------------------------------------------------------------------------

class _Recording:
    """A stand-in module whose kernel objects say they ran (`ran`: their names, in order), with
    the few plain functions the composite launches call (numpy's)."""

    def __init__(self):
        self.ran = []
        recording = self

        class Elementwise(ElementwiseKernel):
            def __call__(self, *args):
                recording.ran.append(self.name)
                return super().__call__(*args)

        class Reduction(StandIn.ReductionKernel):
            def __call__(self, *args, **kwargs):
                recording.ran.append(self.name)
                return super().__call__(*args, **kwargs)

        self.ElementwiseKernel, self.ReductionKernel = Elementwise, Reduction
        self.empty, self.arange, self.take_along_axis = np.empty, np.arange, np.take_along_axis
        self.asarray = np.asarray


def _fallback_recorder(calls):
    def fallback(xp, *arrays, **attrs):
        calls.append((xp, len(arrays), attrs))
        return "fallback"
    return fallback


def test_a_launch_never_hands_one_modules_kernel_to_another():
    """The installed launches are shared by the whole process: a kernel object built for one
    array module (a stand-in here, CuPy on a GPU) must not be called for another. (On the H200,
    a test launching `Sum` and `Sigmoid` through a stand-in left them cached for CuPy, and
    every later float32 sum and sigmoid on that worker failed.)"""
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    launch = get_op("Sigmoid").cupy_kernel
    first, second = _Recording(), _Recording()
    for xp in (first, second, first):
        _same(launch(xp, x), get_op("Sigmoid").kernel(np, x))
    assert first.ran == ["eager_sigmoid", "eager_sigmoid"] and second.ran == ["eager_sigmoid"]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.uint8, np.bool_])
def test_dtypes_the_table_does_not_cover_run_the_ops_own_kernel(dtype):
    xp, calls = _Recording(), []
    launch = DirectLaunch("AddV2", TABLE["AddV2"], _fallback_recorder(calls))
    x = np.ones(3, dtype)
    assert launch(xp, x, x) == "fallback" and calls == [(xp, 2, {})] and xp.ran == []


def test_operands_of_two_dtypes_empty_reductions_and_reductions_over_no_axis_fall_back():
    xp, calls = _Recording(), []
    add = DirectLaunch("AddV2", TABLE["AddV2"], _fallback_recorder(calls))
    assert add(xp, np.ones(2, np.float32), np.ones(2, np.float64)) == "fallback"
    total = DirectLaunch("Mean", TABLE["Mean"], _fallback_recorder(calls))
    assert total(xp, np.ones((0, 3), np.float32), axes=(0,), keepdims=False) == "fallback"
    assert total(xp, np.ones((2, 3), np.float32), axes=(), keepdims=True) == "fallback"
    assert total(xp, np.ones((2, 3), np.float16), axes=None) == "fallback"
    assert [c[1:] for c in calls] == [(2, {}), (1, {"axes": (0,), "keepdims": False}),
                                      (1, {"axes": (), "keepdims": True}), (1, {"axes": None})]
    np.testing.assert_array_equal(total(xp, np.ones((2, 3), np.float32), axes=(1,)), [1, 1])
    assert add(xp, np.ones(2, np.float32), np.ones((3, 1), np.float32)).shape == (3, 2)
    assert xp.ran == ["eager_mean", "eager_add"] and len(calls) == 4


def test_the_cuda_backend_launches_the_ops_direct_kernel_and_others_their_own():
    """`CUDAStream.launch_kernel` (run with stand-ins for CuPy's device, stream and module)."""
    stream = object.__new__(CUDAStream)
    stream._device = stream._stream = contextlib.nullcontext()
    stream._only_device = False
    xp = _Recording()
    x = np.array([-1.0, 0.5, np.nan], np.float32)
    _same(stream.launch_kernel(get_op("Sigmoid"), xp, (x,), {}),
          get_op("Sigmoid").kernel(np, x))
    assert xp.ran == ["eager_sigmoid"]
    _same(stream.launch_kernel(get_op("Mean"), xp, (x[:2],), {"axes": (0,)}), np.float32(-0.25))
    assert stream.launch_kernel(get_op("Sqrt"), np, (np.float32([4.0]),), {}) == 2.0
    assert xp.ran == ["eager_sigmoid", "eager_mean"]


# -- the sources' semantics, on the stand-in ---------------------------------------------------

_ELEMENTWISE = sorted(n for n, s in TABLE.items() if not isinstance(s, ReductionSource))
_REDUCTIONS = sorted(n for n, s in TABLE.items() if isinstance(s, ReductionSource))


def _covered(names):
    return [(n, d) for n in names for d in _DTYPES if TABLE[n].covers(np.dtype(d))]


@pytest.mark.parametrize("op_name, dtype", _covered(_ELEMENTWISE))
def test_each_elementwise_source_equals_the_ops_cpu_kernel_bit_for_bit(op_name, dtype):
    """Every pair of special values (NaN, infinities, zeros of both signs, overflow) and
    broadcast and 0-d operands: the kernel source, evaluated with CUDA's typing, gives what the
    op's numpy kernel gives, signs of zeros included."""
    op, launch = get_op(op_name), _stand_in_launch(op_name)
    v = _values(dtype)
    if "y" in TABLE[op_name].in_params.replace("T x", ""):  # binary
        a, b = np.repeat(v, len(v)), np.tile(v, len(v))
        cases = [(a, b), (v[:, None], v[None, :]), (v[3:4].reshape(()), v), (v, v[6:7])]
    else:
        cases = [(v,), (v[:1].reshape(()),), (v.reshape(-1, 1)[::2],)]
    for args in cases:
        with np.errstate(all="ignore"):
            expected = op.kernel(np, *args)
            reference = TABLE[op_name].reference(*args)
        _same(launch(StandIn, *args), expected)
        if np.dtype(dtype).kind == "f":  # (integer references promote 0-d operands)
            _same(reference, expected)


@pytest.mark.parametrize("dtype, negative_zero_kept", [(np.float16, True), (np.float32, False),
                                                       (np.float64, False)])
def test_relu_of_negative_zero_and_nan_as_documented(dtype, negative_zero_kept):
    """The module doc's rule (numpy's tie rule, which eager's CPU kernels follow): NaN stays NaN;
    relu(-0.) keeps -0. only in float16; maximum/minimum ties keep the first operand only in
    float16."""
    relu = _stand_in_launch("Relu")
    out = relu(StandIn, np.array([-0.0, np.nan, -2.0, 3.0], dtype))
    assert np.signbit(out[0]) == negative_zero_kept and np.isnan(out[1])
    np.testing.assert_array_equal(out[2:], [0.0, 3.0])
    for name in ("Maximum", "Minimum"):
        got = _stand_in_launch(name)(StandIn, np.array([-0.0, 0.0, np.nan, 1.0], dtype),
                                     np.array([0.0, -0.0, 1.0, np.nan], dtype))
        assert list(np.signbit(got[:2])) == ([True, False] if negative_zero_kept
                                             else [False, True])
        assert np.isnan(got[2:]).all()


def test_a_wrong_operator_in_a_source_is_caught_by_the_comparison():
    """The harness is sharp: float32 maximum written with numpy's float16 tie rule differs on
    signed zeros, and a sigmoid with its branches swapped differs everywhere but 0."""
    wrong_max = cupy_kernels.ElementwiseSource("m", "T x, T y", "T z",
                                               "z = (isnan(x) || x >= y) ? x : y", None)
    x, y = np.float32([-0.0]), np.float32([0.0])
    assert np.signbit(wrong_max.make(StandIn, x.dtype)(x, y)) != np.signbit(np.maximum(x, y))
    wrong_sigmoid = cupy_kernels.ElementwiseSource(
        "s", "T x", "T y",
        "T e = exp(-fabs(x)); y = x < T(0) ? T(1) / (T(1) + e) : e / (T(1) + e)", None)
    v = np.float32([-2.0, 3.0])
    assert not np.allclose(wrong_sigmoid.make(StandIn, v.dtype)(v), 1 / (1 + np.exp(-v)))
    with pytest.raises(NameError, match="expf"):
        cupy_kernels.ElementwiseSource("e", "T x", "T y", "y = expf(x)", None).make(
            StandIn, v.dtype)(v)


@pytest.mark.parametrize("op_name, dtype", _covered(_REDUCTIONS))
@pytest.mark.parametrize("axes, keepdims", [(None, False), ((0,), False), ((1,), True),
                                            ((0, 1), False), ((0, 1), True), ((1,), False)])
def test_each_reduction_source_equals_the_ops_cpu_kernel_within_rounding(op_name, dtype, axes,
                                                                          keepdims):
    op, launch = get_op(op_name), _stand_in_launch(op_name)
    rng = np.random.default_rng(0)
    blocks = [rng.standard_normal((5, 7)).astype(dtype)]
    special = rng.standard_normal((4, 6)).astype(dtype)
    special[0, 1], special[1, 2], special[2, 0], special[3, 3] = np.nan, np.inf, -np.inf, -0.0
    blocks.append(special)
    blocks.append(np.full((3, 2), -np.inf, dtype))
    for x in blocks:
        attrs = {"axes": axes, "keepdims": keepdims}
        with np.errstate(all="ignore"):
            expected = op.kernel(np, x, **attrs)
        got = launch(StandIn, x, **attrs)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype == np.float32 else 1e-13,
                                   equal_nan=True)


# -- the fused optimizer updates -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(n for n in UPDATES if not n.startswith("sparse_")))
def test_each_optimizer_update_source_equals_training_ops_numpy_arithmetic(name, dtype):
    rng = np.random.default_rng(1)
    shape = (4, 3)
    var, m, v, vhat, grad = (rng.standard_normal(shape).astype(dtype) for _ in range(5))
    v, vhat = np.abs(v), np.abs(vhat)
    grad[0, 0], var[1, 1] = np.nan, -0.0
    scalars = [np.asarray(s, dtype) for s in (0.9 ** 3, 0.999 ** 3, 0.01, 0.1, 0.001, 1e-7)]
    lr, momentum = np.asarray(0.1, dtype), np.asarray(0.9, dtype)
    kernel = cupy_kernels.update_kernel(StandIn, name, np.dtype(dtype))
    got = [a.copy() for a in (var, m, v, vhat)]
    expected = [a.copy() for a in (var, m, v, vhat)]
    with np.errstate(all="ignore"):
        if name == "gradient_descent":
            kernel(lr, grad, got[0])
            np.subtract(expected[0], np.multiply(grad, lr), out=expected[0])
        elif name in ("momentum", "nesterov"):
            kernel(grad, lr, momentum, got[0], got[1])
            training_ops._momentum_math(np, expected[0], expected[1], np.multiply(grad, lr),
                                        momentum, name == "nesterov")
        else:
            amsgrad = name == "amsgrad"
            kernel(grad, *scalars, *got[:4 if amsgrad else 3])
            training_ops._adam_math(np, *expected[:3], expected[3] if amsgrad else None,
                                    *scalars, grad)
    for g, e in zip(got, expected):
        _same(g, e)


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(n for n in UPDATES if n.startswith("sparse_")))
def test_each_sparse_update_source_equals_numpy_arithmetic_or_writes_nothing(name, dtype, skip):
    # The sparse forms take the densified gradient (and Adam the densified squares of the
    # slices, which differ from the square of the sum where rows repeat) and a `skip` flag:
    # set, the indices' check failed, and every array must be left bit for bit as it was.
    rng = np.random.default_rng(2)
    shape = (4, 3)
    var, m, v, vhat, grad, grad_sq = (rng.standard_normal(shape).astype(dtype)
                                      for _ in range(6))
    v, vhat, grad_sq = np.abs(v), np.abs(vhat), np.abs(grad_sq)
    grad[0, 0], var[1, 1], m[2, 2] = np.nan, -0.0, -0.0
    scalars = [np.asarray(s, dtype) for s in (0.9 ** 3, 0.999 ** 3, 0.01, 0.1, 0.001, 1e-7)]
    momentum = np.asarray(0.9, dtype)
    kernel = cupy_kernels.update_kernel(StandIn, name, np.dtype(dtype))
    amsgrad = name == "sparse_amsgrad"
    momentum_form = name in ("sparse_momentum", "sparse_nesterov")
    n = 2 if momentum_form else 4 if amsgrad else 3
    before = [a.copy() for a in (var, m, v, vhat)][:n]
    got = [a.copy() for a in before]
    expected = [a.copy() for a in before]
    flag = np.asarray(skip)
    with np.errstate(all="ignore"):
        if momentum_form:
            kernel(grad, momentum, flag, *got)
            training_ops._momentum_math(np, *expected, grad, momentum,
                                        name == "sparse_nesterov")
        else:
            kernel(grad, grad_sq, *scalars, flag, *got)
            training_ops._adam_math(np, *expected[:3], expected[3] if amsgrad else None,
                                    *scalars, grad, grad_sq)
    for g, e, b in zip(got, expected, before):
        _same(g, b if skip else e)
    if not skip:
        assert any((g != b).any() for g, b in zip(got, before))  # the update did change them


def test_gradient_descent_on_float16_rounds_the_product_as_numpy_does():
    """Plain gradient descent runs fused for float16 variables too: the product must round to
    float16 before the subtraction (one float32 expression would round once, and differ)."""
    rng = np.random.default_rng(5)
    var = rng.standard_normal(4096).astype(np.float16)
    grad = rng.standard_normal(4096).astype(np.float16)
    lr = np.asarray(0.3, np.float16)
    got = var.copy()
    cupy_kernels.update_kernel(StandIn, "gradient_descent", np.dtype(np.float16))(lr, grad, got)
    expected = var - np.multiply(grad, lr)
    np.testing.assert_array_equal(got, expected)
    once = (var.astype(np.float32) - grad.astype(np.float32) * np.float32(lr)).astype(np.float16)
    assert (once != expected).any()  # the values tell the two roundings apart


# -- softmax cross-entropy in four launches ------------------------------------------------------

def _assert_same_within_rounding(got, expected, dtype):
    """(loss, backprop) pairs equal in shape and dtype, and in value to within the rounding of
    a reduction summed in another order."""
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=2e-6 if dtype == np.float32 else 1e-14,
                                   atol=1e-7 if dtype == np.float32 else 1e-16, equal_nan=True)


def _xent_cases(dtype):
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((6, 5)).astype(dtype) * 4
    logits[1] = [1e30, -1e30, 0.0, 3.0, -0.0] if dtype == np.float64 else [3e38, -3e38, 0, 3, -0.]
    logits[2] = -np.inf
    logits[2, 3] = 0.0
    logits[3, 0] = np.nan
    soft = rng.dirichlet(np.ones(5), 6).astype(dtype)
    onehot = np.eye(5, dtype=dtype)[rng.integers(0, 5, 6)]
    return [(logits, soft, -1), (logits, onehot, -1), (logits.T.copy(), soft.T.copy(), 0),
            (rng.standard_normal((2, 3, 4)).astype(dtype),
             rng.dirichlet(np.ones(3), (2, 4)).transpose(0, 2, 1).astype(dtype), 1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_xent_in_four_launches_equals_the_cpu_kernel_within_rounding(dtype):
    op = get_op("SoftmaxCrossEntropyWithLogits")
    assert isinstance(op.cupy_kernel, cupy_kernels.SoftmaxXent)
    launch = cupy_kernels.SoftmaxXent(op.kernel)
    for logits, labels, axis in _xent_cases(dtype):
        xp = _Recording()
        with np.errstate(all="ignore"):
            expected = op.kernel(np, logits, labels, axis=axis)
            got = launch(xp, logits, labels, axis=axis)
        # the row maximum is CuPy's own reduction; the rest three kernel objects
        assert xp.ran == ["eager_xent_exp_sum", "eager_xent_loss", "eager_xent_backprop"]
        _assert_same_within_rounding(got, expected, dtype)


def test_softmax_xent_falls_back_where_the_cpu_kernel_converts_broadcasts_or_has_no_classes():
    calls = []
    launch = cupy_kernels.SoftmaxXent(_fallback_recorder(calls))
    xp = _Recording()
    f32 = np.ones((2, 3), np.float32)
    assert launch(xp, f32.astype(np.float16), f32.astype(np.float16)) == "fallback"  # upcast
    assert launch(xp, f32, f32.astype(np.float64)) == "fallback"  # labels converted
    assert launch(xp, f32, np.ones(3, np.float32)) == "fallback"  # labels broadcast
    assert launch(xp, np.ones((2, 0), np.float32), np.ones((2, 0), np.float32),
                  axis=1) == "fallback"  # no classes
    assert [c[1:] for c in calls] == [(2, {"axis": -1})] * 3 + [(2, {"axis": 1})]
    assert xp.ran == []


# -- fused elementwise clusters as one kernel object ---------------------------------------------

_CHAINS = [
    # (members as (op name, args)), number of inputs
    ([("Mul", (("a", 0), ("a", 1))), ("AddV2", (("t", 0), ("a", 2))), ("Relu", (("t", 1),))], 3),
    ([("Sigmoid", (("a", 0),)), ("Sigmoid", (("t", 0),)), ("Sub", (("t", 1), ("a", 1)))], 2),
    ([("Square", (("a", 0),)), ("AddV2", (("t", 0), ("t", 0))), ("Maximum", (("t", 1), ("a", 1))),
      ("Neg", (("t", 2),)), ("RealDiv", (("t", 3), ("a", 2)))], 3),
    ([("ReluGrad", (("a", 0), ("a", 1))), ("Mul", (("a", 2), ("t", 0))), ("Tanh", (("t", 1),)),
      ("Exp", (("t", 2),)), ("Minimum", (("a", 0), ("t", 3)))], 3),
]


def _run_members(members, arrays):
    values = []
    for op_name, args in members:
        operands = [arrays[i] if kind == "a" else values[i] for kind, i in args]
        values.append(get_op(op_name).kernel(np, *operands))
    return values[-1]


@pytest.mark.parametrize("chain", range(len(_CHAINS)))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
def test_a_fused_source_computes_its_members_in_turn_bit_for_bit(chain, dtype):
    members, n = _CHAINS[chain]
    steps = [(op_name, args, {}) for op_name, args in members]
    source = cupy_kernels.fused_source("fused", steps, n, np.dtype(dtype))
    covered = all(TABLE[op_name].covers(np.dtype(dtype)) for op_name, _ in members)
    assert (source is not None) == covered
    if source is None:
        return
    rng = np.random.default_rng(chain)
    arrays = [_values(dtype), rng.permutation(_values(dtype)),
              np.asarray(rng.uniform(0.5, 3), dtype)][:n]  # a 0-d operand broadcasts
    with np.errstate(all="ignore"):
        expected = _run_members(members, arrays)
        got = source.make(StandIn, np.dtype(dtype))(*arrays)
    _same(got, expected)


def test_a_fused_source_needs_every_member_in_the_table_and_no_attributes():
    f32 = np.dtype(np.float32)
    assert cupy_kernels.fused_source("f", [("Exp", (("a", 0),), {}),
                                           ("Log", (("t", 0),), {})], 1, f32) is None
    assert cupy_kernels.fused_source("f", [("Mul", (("a", 0), ("a", 0)), {"x": 1})], 1,
                                     f32) is None
    assert cupy_kernels.fused_source("f", [("Exp", (("a", 0),), {})], 1,
                                     np.dtype(np.float16)) is None  # Exp leaves float16 to CuPy


# -- float -> integer casts in one launch --------------------------------------------------------

_INT_TARGETS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32]


@pytest.mark.parametrize("target", _INT_TARGETS)
@pytest.mark.parametrize("source", [np.float16, np.float32, np.float64])
def test_a_float_to_int_cast_in_one_launch_gives_tensorflows_cpu_values(source, target):
    """Against `math_ops._float_to_int` on numpy (itself checked against TensorFlow's values in
    test_cast_backends): NaN, infinities, values beyond the target and beyond the width."""
    from eager.ops import math_ops  # noqa: PLC0415

    values = np.array([0.0, -0.0, 0.5, -0.5, 1.9, -1.9, 127.5, 128.0, -129.0, 255.0, 256.0,
                       65535.9, 65536.0, -32769.0, 2.0**31 - 1, 2.0**31, -2.0**31 - 0.5,
                       -2.0**31 - 1, 2.0**32, 2.0**63, -2.0**63, 1e19, -1e19, 3e38, np.nan,
                       np.inf, -np.inf, 1e-40], np.float64)
    with np.errstate(all="ignore"):
        x = values.astype(source)
    xp = _Recording()
    launch = cupy_kernels.CastLaunch(get_op("Cast").kernel)
    got = launch(xp, x, dtype=eager.as_dtype(target))
    with np.errstate(all="ignore"):
        expected = math_ops._float_to_int(np, x, np.dtype(target))
    _same(got, expected)
    assert xp.ran == ["eager_float_to_int"]


def test_other_casts_run_the_ops_own_kernel():
    calls = []
    launch = cupy_kernels.CastLaunch(_fallback_recorder(calls))
    xp = _Recording()
    f32 = np.ones(3, np.float32)
    for x, target in ((f32, np.uint64), (f32, np.float64), (f32, np.bool_),
                      (np.ones(3, np.int64), np.int32), (np.ones(0, np.float32), np.int32)):
        assert launch(xp, x, dtype=eager.as_dtype(target)) == "fallback"
    assert len(calls) == 5 and xp.ran == []


# -- sparse softmax cross-entropy ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_xent_in_seven_launches_equals_the_cpu_kernel_within_rounding(dtype, label_dtype):
    op = get_op("SparseSoftmaxCrossEntropyWithLogits")
    assert isinstance(op.cupy_kernel, cupy_kernels.SparseXent)
    launch = cupy_kernels.SparseXent(op.kernel, op.cupy_kernel.check_labels)
    rng = np.random.default_rng(4)
    logits, _, _ = _xent_cases(dtype)[0]
    cases = [(logits, rng.integers(0, 5, 6)),
             (rng.standard_normal((2, 3, 4)).astype(dtype) * 3, rng.integers(0, 4, (2, 3))),
             (np.zeros((1, 1), dtype), np.zeros(1))]
    for x, labels in cases:
        labels = labels.astype(label_dtype)
        xp = _Recording()
        with np.errstate(all="ignore"):
            expected = op.kernel(np, x, labels)
            got = launch(xp, x, labels)
        assert xp.ran == ["eager_xent_exp_sum", "eager_sparse_xent_loss",
                            "eager_sparse_xent_backprop"]
        _assert_same_within_rounding(got, expected, dtype)


def test_sparse_xent_checks_labels_as_the_cpu_and_falls_back_for_half_and_no_classes():
    op = get_op("SparseSoftmaxCrossEntropyWithLogits")
    launch = cupy_kernels.SparseXent(op.kernel, op.cupy_kernel.check_labels)
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(eager.errors.InvalidArgumentError) as on_cpu:
        op.kernel(np, x, np.int64([0, 3]))
    xp = _Recording()
    with pytest.raises(eager.errors.InvalidArgumentError) as here:
        launch(xp, x, np.int64([0, 3]))
    assert str(here.value) == str(on_cpu.value) and "label value of 3" in str(here.value)
    assert xp.ran == []  # nothing launched before the check
    calls = []
    fallback = cupy_kernels.SparseXent(_fallback_recorder(calls), op.cupy_kernel.check_labels)
    assert fallback(xp, x.astype(np.float16), np.int64([0, 1])) == "fallback"
    assert fallback(xp, np.zeros((2, 0), np.float32), np.int64([0, 0])) == "fallback"
    assert len(calls) == 2 and xp.ran == []


# -- a sparse write's rows -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_index_rows_clamps_each_index_into_the_variable_and_flags_those_out_of_range(dtype):
    # `resource_ops.checked_rows` on CuPy: one launch gives rows a write may touch and the
    # per-index flags its gate reads; in-range indices are kept as they are.
    info = np.iinfo(dtype)
    indices = np.array([0, 4, 5, -1, 3, info.min, info.max, 2], dtype)
    rows, bad = cupy_kernels.index_rows(StandIn, indices, 5)
    assert rows.dtype == indices.dtype and bad.dtype == np.bool_
    np.testing.assert_array_equal(bad, (indices < 0) | (indices >= 5))
    np.testing.assert_array_equal(rows, [0, 4, 4, 0, 3, 0, 4, 2])
    assert cupy_kernels.index_rows(StandIn, indices.astype(np.uint8), 5) is None  # not covered
