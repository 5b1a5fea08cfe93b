"""DType, TensorShape, TensorSpec and the errors module (≈ tf.dtypes, tf.TensorShape,
tf.TensorSpec, tf.errors)."""

import pickle
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager
from eager import errors
from eager.base.tensor_shape import TensorShape, as_shape

NUMPY_BACKED = {
    "float16": np.float16, "float32": np.float32, "float64": np.float64, "int8": np.int8,
    "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
    "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bool": np.bool_,
    "complex64": np.complex64, "complex128": np.complex128,
}

# TensorFlow's DataType enum values (types.proto).
TF_ENUMS = {
    "float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "complex64": 8,
    "int64": 9, "bool": 10, "uint16": 17, "complex128": 18, "float16": 19, "resource": 20,
    "variant": 21, "uint32": 22, "uint64": 23,
}


# -----------------------------------------------------------------------------------------------
# DType
# -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(NUMPY_BACKED))
def test_dtype_equals_numpy_forms_and_name(name):
    d = getattr(eager, name)
    np_type = NUMPY_BACKED[name]
    assert d == np_type
    assert np_type == d
    assert d == np.dtype(np_type)
    assert np.dtype(np_type) == d
    assert d == name
    assert not (d != np_type)
    assert d.name == name
    assert d.as_numpy_dtype is np_type
    assert d.dtype == np.dtype(np_type)
    assert repr(d) == f"eager.{name}"
    assert d.as_datatype_enum == TF_ENUMS[name]
    assert d.base_dtype is d
    assert d.size == np.dtype(np_type).itemsize
    assert d.is_numpy_compatible


@pytest.mark.parametrize("name", sorted(NUMPY_BACKED))
def test_dtype_differs_from_every_other_dtype(name):
    d = getattr(eager, name)
    for other_name, np_type in NUMPY_BACKED.items():
        if other_name != name:
            assert d != getattr(eager, other_name)
            assert d != np_type
            assert d != other_name
    assert d != eager.resource and d != eager.variant
    assert d != None  # noqa: E711 - TF: comparing with None is False, not an error
    assert d != "no_such_dtype"
    assert d != object()


def test_numpy_accepts_dtypes_anywhere_it_accepts_a_dtype():
    z = np.zeros(2, eager.int8)
    assert z.dtype == np.int8
    assert np.ones((2, 3), dtype=eager.float16).dtype == np.float16
    assert np.arange(3).astype(eager.complex64).dtype == np.complex64
    assert np.dtype(eager.bool) == np.bool_


@pytest.mark.parametrize("name", sorted(NUMPY_BACKED))
def test_as_dtype_all_forms(name):
    d = getattr(eager, name)
    np_type = NUMPY_BACKED[name]
    assert eager.as_dtype(d) is d
    assert eager.as_dtype(name) is d
    assert eager.as_dtype(np_type) is d
    assert eager.as_dtype(np.dtype(np_type)) is d
    assert eager.dtypes.as_dtype(np.dtype(np_type)) is d


def test_as_dtype_aliases_and_python_types():
    assert eager.as_dtype("half") is eager.float16
    assert eager.as_dtype("double") is eager.float64
    assert eager.as_dtype("float") is eager.float32  # TF's name for float32
    assert eager.half is eager.float16 and eager.double is eager.float64
    assert eager.as_dtype(float) is eager.float32  # TF maps Python float to float32
    assert eager.as_dtype(bool) is eager.bool
    assert eager.as_dtype("resource") is eager.resource
    assert eager.as_dtype("variant") is eager.variant


@pytest.mark.parametrize("junk", [None, "float33", "", object(), str, bytes, [1], 1.5])
def test_as_dtype_rejects_junk_with_typeerror(junk):
    with pytest.raises(TypeError, match="DType"):
        eager.as_dtype(junk)


def test_dtype_classification():
    floats = (eager.float16, eager.float32, eager.float64)
    signed = (eager.int8, eager.int16, eager.int32, eager.int64)
    unsigned = (eager.uint8, eager.uint16, eager.uint32, eager.uint64)
    complexes = (eager.complex64, eager.complex128)
    for d in floats:
        assert d.is_floating and not d.is_integer and not d.is_complex and not d.is_bool
        assert d.is_numeric and not d.is_unsigned and d.real_dtype is d
    for d in signed:
        assert d.is_integer and not d.is_floating and not d.is_unsigned and d.is_numeric
    for d in unsigned:
        assert d.is_integer and d.is_unsigned and not d.is_floating
    for d in complexes:
        assert d.is_complex and not d.is_floating and not d.is_integer and d.is_numeric
    assert eager.complex64.real_dtype is eager.float32
    assert eager.complex128.real_dtype is eager.float64
    assert eager.bool.is_bool and not eager.bool.is_numeric and not eager.bool.is_integer
    assert not eager.float32.is_quantized


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_float_min_max(name):
    d = getattr(eager, name)
    assert d.min == np.finfo(NUMPY_BACKED[name]).min
    assert d.max == np.finfo(NUMPY_BACKED[name]).max
    assert d.min == -d.max


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                  "uint32", "uint64"])
def test_int_min_max(name):
    d = getattr(eager, name)
    info = np.iinfo(NUMPY_BACKED[name])
    assert (d.min, d.max) == (info.min, info.max)


def test_min_max_of_complex_and_special_dtypes_raise():
    for d in (eager.complex64, eager.complex128, eager.resource, eager.variant):
        with pytest.raises(TypeError):
            d.min  # noqa: B018
        with pytest.raises(TypeError):
            d.max  # noqa: B018


def test_resource_and_variant():
    r, v = eager.resource, eager.variant
    assert r.name == "resource" and v.name == "variant"
    assert r != v and r == r and v == "variant"
    assert not r.is_numpy_compatible and not v.is_numpy_compatible
    for d in (r, v):
        assert not (d.is_floating or d.is_integer or d.is_complex or d.is_bool or d.is_numeric)
        for name, np_type in NUMPY_BACKED.items():
            assert d != getattr(eager, name)
            assert d != np_type
        assert d != np.dtype(object) and d != object  # noqa: E721 - DType.__ne__ is tested


def test_dtypes_hash_pickle_and_compat():
    all_dtypes = [getattr(eager, n) for n in NUMPY_BACKED] + [eager.resource, eager.variant]
    assert len({hash(d) for d in all_dtypes}) == len(all_dtypes)
    assert len(set(all_dtypes)) == len(all_dtypes)
    for d in all_dtypes:
        assert pickle.loads(pickle.dumps(d)) is d
    assert eager.float32.is_compatible_with(np.float32)
    assert not eager.float32.is_compatible_with(eager.float64)


# -----------------------------------------------------------------------------------------------
# TensorShape
# -----------------------------------------------------------------------------------------------

dims = st.lists(st.one_of(st.none(), st.integers(0, 6)), max_size=5)


def test_tensor_shape_is_a_tuple_equal_to_lists_and_tuples():
    s = TensorShape([2, 3])
    assert isinstance(s, tuple) and isinstance(s, TensorShape)
    assert s == (2, 3) and s == [2, 3] and (2, 3) == s and [2, 3] == s
    assert s != (3, 2) and s != [2] and s != (2, 3, 1)
    assert hash(s) == hash((2, 3))
    assert {(2, 3): "x"}[s] == "x"
    a, b = s
    assert (a, b) == (2, 3) and len(s) == 2
    assert np.zeros(s).shape == (2, 3)
    assert TensorShape([]) == () and TensorShape([]) == []
    assert TensorShape(3) == (3,)
    assert TensorShape(np.array([4, 5])) == (4, 5)
    assert TensorShape([np.int64(2)]) == (2,) and type(TensorShape([np.int64(2)])[0]) is int
    assert as_shape([1, None]) == TensorShape([1, None])
    assert as_shape(s) is s
    assert eager.TensorShape is TensorShape


@given(dims)
def test_tensor_shape_properties(ds):
    s = TensorShape(ds)
    assert s.rank == len(ds) and s.ndims == len(ds)
    assert s.as_list() == ds and s.dims == ds
    assert s == ds and s == tuple(ds)
    defined = None not in ds
    assert s.is_fully_defined() == defined
    assert s.num_elements() == (int(np.prod(ds, dtype=np.int64)) if defined else None)
    assert s.is_compatible_with(s)
    assert s.is_compatible_with(TensorShape(None))
    assert s.is_compatible_with([None] * len(ds))
    assert not s.is_compatible_with([None] * (len(ds) + 1))
    assert s.merge_with(s) == s
    assert s.merge_with(TensorShape(None)) == s
    assert TensorShape(None).merge_with(s) == s
    assert s.most_specific_compatible_shape(s) == s
    assert s[1:] == ds[1:] and isinstance(s[1:], TensorShape)
    assert s.concatenate([7]) == ds + [7]
    assert s + [7] == ds + [7]
    assert pickle.loads(pickle.dumps(s)) == s


def test_tensor_shape_none_dims_and_string_forms():
    s = TensorShape([None, 3])
    assert s[0] is None and s[1] == 3
    assert s == [None, 3] and s != [1, 3]
    assert not s.is_fully_defined() and s.num_elements() is None
    assert s.is_compatible_with([5, 3]) and not s.is_compatible_with([5, 4])
    assert str(s) == "(None, 3)"
    assert repr(s) == "TensorShape([None, 3])"
    assert str(TensorShape([2])) == "(2,)"
    assert str(TensorShape([])) == "()"
    assert TensorShape([]).num_elements() == 1 and TensorShape([]).rank == 0
    assert TensorShape([0, 4]).num_elements() == 0


def test_tensor_shape_merge_concatenate_most_specific():
    assert TensorShape([None, 3]).merge_with([2, None]) == [2, 3]
    with pytest.raises(ValueError):
        TensorShape([2, 3]).merge_with([2, 4])
    with pytest.raises(ValueError):
        TensorShape([2, 3]).merge_with([2])
    assert TensorShape([1, 2]).most_specific_compatible_shape([1, 3]) == [1, None]
    assert TensorShape([1, 2]).most_specific_compatible_shape([1]).rank is None
    assert TensorShape([1]).concatenate(TensorShape([None, 2])) == [1, None, 2]
    assert (1,) + TensorShape([2]) == TensorShape([1, 2])
    assert TensorShape([1]).concatenate(TensorShape(None)).rank is None
    TensorShape([2, None]).assert_is_compatible_with([2, 5])
    with pytest.raises(ValueError):
        TensorShape([2]).assert_is_compatible_with([3])
    assert TensorShape([None, None]).with_rank(2) == [None, None]
    assert TensorShape(None).with_rank(2) == [None, None]
    with pytest.raises(ValueError):
        TensorShape([1]).with_rank(2)
    with pytest.raises(ValueError):
        TensorShape([1]).with_rank_at_least(2)
    assert TensorShape([1, 2]).with_rank_at_least(1) == [1, 2]
    with pytest.raises(ValueError):
        TensorShape([1]).assert_has_rank(2)


def test_tensor_shape_unknown_rank():
    u = TensorShape(None)
    assert u.rank is None and u.ndims is None and u.dims is None
    assert not u.is_fully_defined() and u.num_elements() is None
    with pytest.raises(ValueError):
        u.as_list()
    with pytest.raises(ValueError):
        len(u)
    with pytest.raises(ValueError):
        list(u)
    assert u == TensorShape(None)
    assert u != TensorShape([]) and u != () and u != []
    assert TensorShape([]) != u
    assert u.is_compatible_with([1, 2, 3]) and u.is_compatible_with([])
    assert u[0] is None
    assert u[1:].rank is None
    assert str(u) == "<unknown>" and repr(u) == "TensorShape(None)"
    assert hash(u) == hash(TensorShape(None))
    assert bool(u)
    assert pickle.loads(pickle.dumps(u)).rank is None


@pytest.mark.parametrize("bad", [[-1], [2, -3]])
def test_tensor_shape_rejects_negative_dims(bad):
    with pytest.raises(ValueError):
        TensorShape(bad)


@pytest.mark.parametrize("bad", [[1.5], ["a"], [object()]])
def test_tensor_shape_rejects_non_integer_dims(bad):
    with pytest.raises(TypeError):
        TensorShape(bad)


def test_eager_tensor_shape_is_a_tensorshape():
    t = eager.constant(np.zeros((2, 0, 3), np.float32))
    assert isinstance(t.shape, TensorShape)
    assert t.shape == (2, 0, 3) and t.shape.num_elements() == 0
    assert t.get_shape() == t.shape


# -----------------------------------------------------------------------------------------------
# TensorSpec
# -----------------------------------------------------------------------------------------------

def test_tensor_spec_equality_and_hash():
    a = eager.TensorSpec([None, 3], eager.float32)
    assert a.shape == [None, 3] and isinstance(a.shape, TensorShape)
    assert a.dtype is eager.float32 and a.name is None
    assert eager.TensorSpec([2]).dtype is eager.float32  # TF's default dtype
    b = eager.TensorSpec((None, 3), "float32")
    assert a == b and not (a != b) and hash(a) == hash(b)
    assert a != eager.TensorSpec([None, 3], eager.float64)
    assert a != eager.TensorSpec([2, 3], eager.float32)
    assert a != eager.TensorSpec([None, 3], eager.float32, name="x")
    assert a != (None, 3)
    assert len({a, b, eager.TensorSpec([None, 3], eager.int32)}) == 2
    assert pickle.loads(pickle.dumps(a)) == a
    unknown = eager.TensorSpec(None, eager.int32)
    assert unknown.shape.rank is None
    assert pickle.loads(pickle.dumps(unknown)) == unknown
    assert "float32" in repr(a) and "None" in repr(a)


def test_tensor_spec_is_compatible_with():
    spec = eager.TensorSpec([None, 3], eager.float32)
    assert spec.is_compatible_with(eager.constant(np.zeros((5, 3), np.float32)))
    assert not spec.is_compatible_with(eager.constant(np.zeros((5, 3), np.float64)))
    assert not spec.is_compatible_with(eager.constant(np.zeros((5, 4), np.float32)))
    assert spec.is_compatible_with(eager.TensorSpec([2, 3]))
    assert spec.is_compatible_with(eager.TensorSpec(None))
    assert not spec.is_compatible_with(eager.TensorSpec([2, 3], eager.int32))
    assert eager.TensorSpec(None).is_compatible_with(eager.TensorSpec([1, 2, 3]))
    merged = eager.TensorSpec([2, 3]).most_specific_compatible_type(eager.TensorSpec([4, 3]))
    assert merged == eager.TensorSpec([None, 3])
    with pytest.raises(ValueError):
        eager.TensorSpec([2]).most_specific_compatible_type(eager.TensorSpec([2], eager.int32))


def test_tensor_spec_from_tensor_and_spec():
    t = eager.constant([[1, 2]])
    spec = eager.TensorSpec.from_tensor(t, name="t")
    assert spec == eager.TensorSpec([1, 2], eager.int32, name="t")
    assert eager.TensorSpec.from_spec(spec) == spec
    assert eager.TensorSpec.from_spec(spec, name="u").name == "u"


# -----------------------------------------------------------------------------------------------
# errors
# -----------------------------------------------------------------------------------------------

TF_ERROR_CODES = {
    "CancelledError": 1, "UnknownError": 2, "InvalidArgumentError": 3,
    "DeadlineExceededError": 4, "NotFoundError": 5, "AlreadyExistsError": 6,
    "PermissionDeniedError": 7, "ResourceExhaustedError": 8, "FailedPreconditionError": 9,
    "AbortedError": 10, "OutOfRangeError": 11, "UnimplementedError": 12, "InternalError": 13,
    "UnavailableError": 14, "DataLossError": 15, "UnauthenticatedError": 16,
}
TF_CODE_NAMES = {
    "OK": 0, "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5, "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9, "ABORTED": 10, "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12,
    "INTERNAL": 13, "UNAVAILABLE": 14, "DATA_LOSS": 15, "UNAUTHENTICATED": 16,
}


def _contract_error_names():
    shared = Path(__file__).resolve().parents[2] / "shared" / "API.md"
    repo_copy = Path(__file__).resolve().parents[1] / "docs" / "contract" / "API.md"
    path = shared if shared.exists() else repo_copy
    text = path.read_text()
    section = text.split("## Errors", 1)[1].split("\n## ", 1)[0]
    return sorted(set(re.findall(r"\b([A-Z][A-Za-z]*Error)\b", section)))


def test_contract_error_names_are_known_tf_errors():
    names = _contract_error_names()
    assert "OpError" in names and "InvalidArgumentError" in names and len(names) >= 10
    assert set(names) - {"OpError"} <= set(TF_ERROR_CODES)


@pytest.mark.parametrize("name", sorted(TF_ERROR_CODES))
def test_error_class_has_tf_code_and_attributes(name):
    cls = getattr(errors, name)
    assert issubclass(cls, errors.OpError) and issubclass(cls, Exception)
    assert cls.__name__ == name
    e = cls("node", "MatMul", "it broke")
    assert e.node_def == "node"
    assert e.op == "MatMul"
    assert e.message == "it broke"
    assert str(e) == "it broke"
    assert e.error_code == TF_ERROR_CODES[name]
    assert errors.exception_type_from_error_code(TF_ERROR_CODES[name]) is cls
    with pytest.raises(errors.OpError):
        raise e
    copy = pickle.loads(pickle.dumps(e))
    assert type(copy) is cls
    assert (copy.node_def, copy.op, copy.message, copy.error_code) == (
        "node", "MatMul", "it broke", TF_ERROR_CODES[name])


def test_op_error_base_class():
    e = errors.OpError(None, "Add", "bad", errors.INVALID_ARGUMENT)
    assert (e.op, e.message, e.node_def, e.error_code) == ("Add", "bad", None, 3)
    copy = pickle.loads(pickle.dumps(e))
    assert type(copy) is errors.OpError
    assert (copy.op, copy.message, copy.error_code) == ("Add", "bad", 3)
    assert errors.OpError(None, None, "x").error_code == errors.UNKNOWN
    # An OpError is not a ValueError or TypeError (as in TensorFlow).
    assert not issubclass(errors.OpError, (ValueError, TypeError))


@pytest.mark.parametrize("name", sorted(TF_CODE_NAMES))
def test_error_code_constants(name):
    assert getattr(errors, name) == TF_CODE_NAMES[name]


def test_raised_op_errors_carry_the_op_name():
    with pytest.raises(errors.InvalidArgumentError) as info:
        eager.add(eager.constant([1.0, 2.0]), eager.constant([1.0, 2.0, 3.0]))
    assert info.value.op == "AddV2"
    assert info.value.error_code == errors.INVALID_ARGUMENT
    assert "AddV2" in info.value.message and "[Op:AddV2]" in str(info.value)
    with pytest.raises(errors.InvalidArgumentError) as info:  # TF 2.21: int32 not in the list
        eager.sqrt(eager.constant(4))
    assert info.value.op == "Sqrt" and info.value.error_code == errors.INVALID_ARGUMENT
    with pytest.raises(errors.NotFoundError) as info:  # TF 2.21: listed, no CPU kernel
        eager.matmul(eager.constant([[1]], eager.uint8), eager.constant([[1]], eager.uint8))
    assert info.value.op == "MatMul" and info.value.error_code == errors.NOT_FOUND
