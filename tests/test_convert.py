"""eager.core.argument_conversion: the error class of a rejected dtype (InvalidArgumentError, or
NotFoundError for a dtype TensorFlow declares without a CPU kernel) and how each op converts
Python values it is given beside tensors. Every expectation here was verified against
TensorFlow 2.21 eagerly."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager
from eager import errors
from eager.base import dtypes
from eager.core import argument_conversion as convert
from eager.core.registry import OpDef, registered_ops
from eager.tensor import Tensor, TensorShape

T = eager.constant
I = T([1, 2])  # noqa: E741
F = T([1.0, 2.0])
B = T([True, False])
IM = T([[1, 2]])
FM = T([[1.0, 2.0]])

UNSIGNED = {dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64}
# Verified against TF 2.21: the dtypes each op's TensorFlow definition lists (or, with no type
# list, accepts) but has no CPU kernel for: `tf.math.floordiv` of complex, `tf.matmul` and
# `tf.tensordot` (which runs MatMul) of unsigned types, `tf.einsum` of anything but float,
# complex, int32 and int64, `tf.math.reciprocal` of signed integers. Every other rejected
# dtype is outside the op's type list.
TF_NO_CPU_KERNEL = {
    "FloorDiv": {dtypes.complex64, dtypes.complex128},
    "MatMul": UNSIGNED,
    "Tensordot": UNSIGNED,
    "Einsum": UNSIGNED | {dtypes.int8, dtypes.int16, dtypes.bool},
    "Reciprocal": {dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64},
}


def test_every_op_declares_exactly_tensorflows_no_kernel_dtypes():
    seen = set()
    for op in registered_ops():
        assert op.no_kernel_dtypes == TF_NO_CPU_KERNEL.get(op.name, set()), op.name
        assert isinstance(op.no_kernel_dtypes, frozenset)
        if op.no_kernel_dtypes:
            assert not op.no_kernel_dtypes & op.dtypes, op.name
            seen.add(op.name)
    assert seen == set(TF_NO_CPU_KERNEL)


@pytest.mark.parametrize("op_name,call", [
    ("FloorDiv", lambda d: eager.math.floordiv(T(np.ones(2, d)), T(np.ones(2, d)))),
    ("MatMul", lambda d: eager.matmul(T(np.ones((2, 2), d)), T(np.ones((2, 2), d)))),
    ("Tensordot", lambda d: eager.tensordot(T(np.ones((2, 2), d)), T(np.ones((2, 2), d)), 1)),
    ("Einsum", lambda d: eager.einsum("ij,jk->ik", T(np.ones((2, 2), d)),
                                      T(np.ones((2, 2), d))))])
def test_rejected_dtypes_raise_tensorflows_error_class(op_name, call):
    op = next(op for op in registered_ops() if op.name == op_name)
    every = [d for d in dtypes._NUMPY_TYPES if d not in op.dtypes]
    for dtype in every:
        with pytest.raises(errors.OpError, match=rf"{op_name}.*{dtype.name}") as info:
            call(dtype.dtype)
        expected = (errors.NotFoundError if dtype in TF_NO_CPU_KERNEL[op_name]
                    else errors.InvalidArgumentError)
        assert type(info.value) is expected, (dtype, info.value)


def test_range_keeps_its_not_found_dtypes():
    # Verified against TF 2.21: Range lists int8/int16/uint16/uint32/uint64 without a CPU
    # kernel (NotFoundError); uint8 is outside its list (InvalidArgumentError); with bool the
    # Python 0 does not even convert (TypeError).
    for dtype in (eager.int8, eager.int16, eager.uint16, eager.uint32, eager.uint64):
        with pytest.raises(errors.NotFoundError, match=f"Range.*{dtype.name}"):
            eager.range(3, dtype=dtype)
    with pytest.raises(errors.InvalidArgumentError, match="Range.*uint8"):
        eager.range(3, dtype=eager.uint8)
    with pytest.raises(TypeError):
        eager.range(3, dtype=eager.bool)


# An op record of our own (never registered) to test the conversion rules in isolation.
FAKE = OpDef("FakeOp", None, None, dtypes=frozenset({dtypes.float32, dtypes.float64}),
             no_kernel_dtypes={dtypes.int64})


def test_opdef_no_kernel_dtypes_defaults_to_empty_and_is_frozen():
    assert OpDef("X", None, None).no_kernel_dtypes == frozenset()
    assert FAKE.no_kernel_dtypes == frozenset({dtypes.int64})
    assert isinstance(FAKE.no_kernel_dtypes, frozenset)


def test_unsupported_dtype_message_names_op_dtypes_allowed_list_and_shapes():
    with pytest.raises(errors.InvalidArgumentError) as info:
        convert.check_dtype(FAKE, T(np.zeros((2, 3), np.int32)), FAKE.dtypes)
    text = str(info.value)
    for part in ("FakeOp", "int32", "not in the list of allowed values", "float32, float64",
                 "eager.cast", "int32[2,3]", "[Op:FakeOp]"):
        assert part in text, (part, text)
    assert info.value.op == "FakeOp"
    with pytest.raises(errors.NotFoundError) as info:
        convert.same_type(FAKE, T(np.zeros(4, np.int64)), 2)
    text = str(info.value)
    for part in ("FakeOp", "CPU kernel", "int64", "float32, float64", "eager.cast",
                 "int64[4], int64[]"):
        assert part in text, (part, text)


def test_no_kernel_dtypes_apply_to_the_main_input_only():
    with pytest.raises(errors.NotFoundError):
        convert.check_dtype(FAKE, T(np.zeros(2, np.int64)), FAKE.dtypes)
    with pytest.raises(errors.InvalidArgumentError, match="indices dtype int64"):
        convert.check_dtype(FAKE, T(np.zeros(2, np.int64)), {dtypes.int32}, "indices")


class _Symbolic(Tensor):
    """A stand-in for a tensor being traced: a dtype and shape, no value."""

    __slots__ = ("_dtype", "_shape")

    def __init__(self, dtype, shape):
        self._dtype, self._shape = dtype, TensorShape(shape)

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    @property
    def is_symbolic(self):
        return True


def test_while_tracing_dtype_errors_are_type_errors():
    # TensorFlow raises TypeError for dtype errors found while building a graph.
    with pytest.raises(TypeError, match=r"FakeOp.*int32.*int32\[2\]") as info:
        convert.check_dtype(FAKE, _Symbolic(dtypes.int32, [2]), FAKE.dtypes)
    assert not isinstance(info.value, errors.OpError)
    with pytest.raises(TypeError, match="FakeOp.*int64") as info:
        convert.same_type(FAKE, _Symbolic(dtypes.int64, [None]), _Symbolic(dtypes.int64, [3]))
    assert not isinstance(info.value, errors.OpError)
    with pytest.raises(TypeError, match="AddV2.*float32.*int32") as info:
        eager.math.add(_Symbolic(dtypes.float32, [2]), _Symbolic(dtypes.int32, [2]))
    assert not isinstance(info.value, errors.OpError)


IAE, TYPE = errors.InvalidArgumentError, TypeError

# (call, what TensorFlow 2.21 raises, or the dtype of its result). Verified against TF 2.21.
CONVERSIONS = [
    # add and matmul convert the second argument with the first's dtype only as a hint.
    ("add(I, 1.5)", lambda: eager.math.add(I, 1.5), IAE),
    ("I + 1.5", lambda: I + 1.5, IAE),
    ("I + [1.5, 2]", lambda: I + [1.5, 2], IAE),
    ("F + 1j", lambda: F + 1j, IAE),
    ("B + 1.5", lambda: B + 1.5, IAE),
    ("add(3, 2.5)", lambda: eager.math.add(3, 2.5), IAE),
    ("add([1, 2], [3.5, 4])", lambda: eager.math.add([1, 2], [3.5, 4]), IAE),
    ("add(2.5, 3)", lambda: eager.math.add(2.5, 3), eager.float32),
    ("I + 2", lambda: I + 2, eager.int32),
    ("F + 1", lambda: F + 1, eager.float32),
    ("1.5 + I", lambda: 1.5 + I, TYPE),  # reflected operators convert strictly
    ("matmul(IM, [[1.5], [2]])", lambda: eager.matmul(IM, [[1.5], [2]]), IAE),
    ("IM @ [[1.5], [2]]", lambda: IM @ [[1.5], [2]], IAE),
    ("matmul([[1, 2]], [[1.5], [2]])", lambda: eager.matmul([[1, 2]], [[1.5], [2]]), IAE),
    ("[[1.5, 2]] @ IM^T", lambda: [[1.5, 2]] @ eager.transpose(IM), TYPE),
    ("matmul(FM, [[1], [2]])", lambda: eager.matmul(FM, [[1], [2]]), eager.float32),
    # tensordot and sigmoid_cross_entropy_with_logits convert each argument by itself.
    ("tensordot(FM, [[1], [2]])", lambda: eager.tensordot(FM, [[1], [2]], 1), IAE),
    ("tensordot([[1.5, 2]], IM^T)", lambda: eager.tensordot([[1.5, 2]], eager.transpose(IM), 1),
     IAE),
    ("tensordot(FM, [[1.0], [2.0]])", lambda: eager.tensordot(FM, [[1.0], [2.0]], 1),
     eager.float32),
    ("sigmoid_xent(labels=[1, 0])",
     lambda: eager.nn.sigmoid_cross_entropy_with_logits(labels=[1, 0], logits=F), IAE),
    ("sigmoid_xent(logits=[1, 0])",
     lambda: eager.nn.sigmoid_cross_entropy_with_logits(labels=F, logits=[1, 0]), IAE),
    ("sigmoid_xent(labels=[1.0, 0.0])",
     lambda: eager.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=F),
     eager.float32),
    # clip_by_value converts t by itself, then the bounds (upper first) strictly.
    ("clip(1.5, I, 3)", lambda: eager.clip_by_value(1.5, I, 3), IAE),
    ("clip(I, 0.5, 3)", lambda: eager.clip_by_value(I, 0.5, 3), TYPE),
    ("clip([1.5, 2], 0, 3)", lambda: eager.clip_by_value([1.5, 2], 0, 3), eager.float32),
    ("clip(2, 0.5, 3.5)", lambda: eager.clip_by_value(2, 0.5, 3.5), TYPE),
    ("clip(I, T(0.5), 3.5)", lambda: eager.clip_by_value(I, T(0.5), 3.5), TYPE),
    # Everything else converts Python values strictly with the tensors' dtype.
    ("I * 1.5", lambda: I * 1.5, TYPE),
    ("I - 1.5", lambda: I - 1.5, TYPE),
    ("subtract(I, 1.5)", lambda: eager.math.subtract(I, 1.5), TYPE),
    ("multiply(3, 2.5)", lambda: eager.math.multiply(3, 2.5), TYPE),
    ("I < 1.5", lambda: I < 1.5, TYPE),
    ("I == 1.5", lambda: I == 1.5, TYPE),
    ("maximum(I, 1.5)", lambda: eager.maximum(I, 1.5), TYPE),
    ("where(B, I, 1.5)", lambda: eager.where(B, I, 1.5), TYPE),
    ("concat([I, [1.5]])", lambda: eager.concat([I, [1.5]], 0), TYPE),
    ("pad(I, constant_values=1.5)", lambda: eager.pad(I, [[1, 1]], constant_values=1.5), TYPE),
    ("constant(1.5, int32)", lambda: eager.constant(1.5, dtype=eager.int32), TYPE),
    ("convert_to_tensor(1.5, int32)", lambda: eager.convert_to_tensor(1.5, dtype=eager.int32),
     TYPE),
    # The logical ops' input is bool: Python values convert with bool first.
    ("logical_and(B, 1.5)", lambda: eager.math.logical_and(B, 1.5), TYPE),
    ("logical_and(F, 1.5)", lambda: eager.math.logical_and(F, 1.5), TYPE),
    ("logical_or(1, 0)", lambda: eager.math.logical_or(1, 0), TYPE),
    ("logical_and(I, 1)", lambda: eager.math.logical_and(I, 1), TYPE),
    ("logical_xor(B, 1.5)", lambda: eager.math.logical_xor(B, 1.5), TYPE),
    ("B & 1", lambda: B & 1, TYPE),
    ("logical_and(B, True)", lambda: eager.math.logical_and(B, True), eager.bool),
    ("logical_and(B, I)", lambda: eager.math.logical_and(B, I), IAE),
    ("logical_and(F, B)", lambda: eager.math.logical_and(F, B), IAE),
    ("logical_and(f16, np_f64)",
     lambda: eager.math.logical_and(T(np.ones(2, np.float16)), np.array([1.0, 2.0])), IAE),
]


@pytest.mark.parametrize("call,expected", [c[1:] for c in CONVERSIONS],
                         ids=[c[0] for c in CONVERSIONS])
def test_python_values_convert_as_in_tensorflow(call, expected):
    if isinstance(expected, type) and issubclass(expected, Exception):
        with pytest.raises(expected) as info:
            call()
        if expected is TypeError:
            assert not isinstance(info.value, errors.OpError)
    else:
        assert call().dtype == expected


def test_hint_conversion_errors_name_the_op_dtypes_and_shapes():
    with pytest.raises(errors.InvalidArgumentError) as info:
        I + 1.5
    text = str(info.value)
    for part in ("AddV2", "input #1", "int32 tensor", "float32 tensor", "int32[2], float32[]"):
        assert part in text, (part, text)
    with pytest.raises(errors.InvalidArgumentError, match=r"LogicalAnd.*bool.*int32\[2\]"):
        eager.math.logical_and(B, I)


def test_hint_conversion_keeps_out_of_range_ints_a_value_error():
    # eager's documented deviation (TF wraps 300 to int8): a value of the right kind that does
    # not fit is a ValueError, not a fallback to another dtype.
    with pytest.raises(ValueError):
        T(np.array([1], np.int8)) + 300
    with pytest.raises(ValueError):
        eager.math.add(T(np.array([1], np.uint8)), -1)


INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@given(dtype=st.sampled_from(INT_TYPES),
       value=st.floats(-100, 100).filter(lambda v: v != int(v)))
def test_a_fractional_float_beside_an_int_tensor(dtype, value):
    t = T(np.array([1, 2], dtype))
    with pytest.raises(errors.InvalidArgumentError, match=rf"AddV2.*{np.dtype(dtype).name}"):
        t + value
    for op in (lambda: t * value, lambda: t - value, lambda: value + t, lambda: t < value):
        with pytest.raises(TypeError):
            op()


@given(value=st.one_of(st.integers(-5, 5), st.floats(-5, 5), st.complex_numbers(max_magnitude=5),
                       st.lists(st.integers(0, 1), min_size=2, max_size=2)))
def test_non_bool_python_values_for_logical_ops_are_type_errors(value):
    for fn in (eager.math.logical_and, eager.math.logical_or, eager.math.logical_xor):
        for args in ((B, value), (value, B), (value, value)):
            with pytest.raises(TypeError) as info:
                fn(*args)
            assert not isinstance(info.value, errors.OpError)
