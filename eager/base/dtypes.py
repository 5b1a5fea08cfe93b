"""Element types.

Every dtype is a `DType` that compares equal to the matching numpy dtype and numpy scalar type
(`eager.float32 == numpy.float32`), so code written against TensorFlow's `tf.float32` and code
passing numpy types both work. A `DType` also exposes `.dtype` (the numpy dtype), which lets
numpy accept it anywhere it accepts a dtype: `numpy.zeros(3, eager.float32)`.

`string` is TensorFlow's byte string: its arrays are numpy object arrays holding `bytes`, so it
is the dtype numpy's object dtype (and its `str_`/`bytes_` types) converts to, as in TensorFlow.
String tensors always live in host memory (see `eager.core.dispatch.place`).

`resource` and `variant` have no numpy equivalent: they type handles to resources (variables)
and opaque values (tensor lists). Their arrays hold Python objects.
"""

from __future__ import annotations

import builtins

import numpy as np

__all__ = [
    "DType", "as_dtype",
    "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128",
    "string", "resource", "variant", "half", "double",
]


class DType:
    """An element type: a numpy dtype plus the classification TensorFlow code asks about."""

    __slots__ = ("name", "dtype", "_kind", "size", "is_floating", "is_integer", "is_complex",
                 "is_bool", "is_unsigned", "is_numpy_compatible", "_enum", "_arith", "_inexact")

    def __init__(self, name: str, np_dtype, enum: int, numpy_compatible: builtins.bool = True):
        self.name = name
        self.dtype = np.dtype(np_dtype)
        self._enum = enum
        self.is_numpy_compatible = numpy_compatible
        kind = self.dtype.kind if numpy_compatible else "V"
        self._kind = kind
        self.size = self.dtype.itemsize if numpy_compatible and kind != "O" else 0
        self.is_floating = kind == "f"
        self.is_integer = kind in "iu"
        self.is_unsigned = kind == "u"
        self.is_complex = kind == "c"
        self.is_bool = kind == "b"
        # Read by the eager fast path (plain attributes: cheaper than set membership).
        self._arith = kind in "iufc"
        self._inexact = kind in "fc"

    # -- TensorFlow's DType surface ------------------------------------------------------------
    @property
    def as_numpy_dtype(self):
        """The numpy scalar type (`numpy.float32`), as TensorFlow returns it (`object` for
        strings)."""
        return object if self._kind == "O" else self.dtype.type

    @property
    def as_datatype_enum(self) -> int:
        return self._enum

    @property
    def base_dtype(self) -> "DType":
        return self

    @property
    def real_dtype(self) -> "DType":
        if self is complex64:
            return float32
        if self is complex128:
            return float64
        return self

    @property
    def is_quantized(self) -> builtins.bool:
        return False

    @property
    def is_string(self) -> builtins.bool:
        """Whether this is `string` (byte strings in object arrays; host memory only)."""
        return self._kind == "O"

    @property
    def is_numeric(self) -> builtins.bool:
        return self.is_floating or self.is_integer or self.is_complex

    @property
    def min(self):
        if self.is_floating:
            return np.finfo(self.dtype).min
        if self.is_integer:
            return np.iinfo(self.dtype).min
        if self.is_bool:
            return False
        raise TypeError(f"Cannot find minimum value of {self.name}.")

    @property
    def max(self):
        if self.is_floating:
            return np.finfo(self.dtype).max
        if self.is_integer:
            return np.iinfo(self.dtype).max
        if self.is_bool:
            return True
        raise TypeError(f"Cannot find maximum value of {self.name}.")

    def is_compatible_with(self, other) -> builtins.bool:
        return self == other

    # -- equality with numpy and strings ------------------------------------------------------
    def __eq__(self, other):
        if other is self:
            return True
        if isinstance(other, DType):
            return False
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    # Identity hash, computed in C: `dtype in frozenset(...)` runs on every op's slow path, and a
    # Python-level __hash__ costs three times as much. (Like TensorFlow's DType, the hash does
    # not match numpy's even though `==` does.)
    __hash__ = object.__hash__

    def __repr__(self):
        return f"eager.{self.name}"

    def __reduce__(self):
        return as_dtype, (self.name,)


def _make(name, np_dtype, enum, numpy_compatible=True):
    return DType(name, np_dtype, enum, numpy_compatible)


float16 = _make("float16", np.float16, 19)
float32 = _make("float32", np.float32, 1)
float64 = _make("float64", np.float64, 2)
int8 = _make("int8", np.int8, 6)
int16 = _make("int16", np.int16, 5)
int32 = _make("int32", np.int32, 3)
int64 = _make("int64", np.int64, 9)
uint8 = _make("uint8", np.uint8, 4)
uint16 = _make("uint16", np.uint16, 17)
uint32 = _make("uint32", np.uint32, 22)
uint64 = _make("uint64", np.uint64, 23)
bool = _make("bool", np.bool_, 10)  # noqa: A001 - TensorFlow's name
complex64 = _make("complex64", np.complex64, 8)
complex128 = _make("complex128", np.complex128, 18)
string = _make("string", object, 7)
resource = _make("resource", object, 20, numpy_compatible=False)
variant = _make("variant", object, 21, numpy_compatible=False)
half = float16
double = float64

_NUMPY_TYPES = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32,
                uint64, bool, complex64, complex128)

#: numpy dtype -> DType. Hot: every eager op result is typed through this table.
BY_NUMPY: dict = {d.dtype: d for d in _NUMPY_TYPES + (string,)}
_BY_NAME: dict = {d.name: d for d in _NUMPY_TYPES + (string, resource, variant)}
_BY_NAME.update(half=float16, double=float64, float=float32)
# TensorFlow maps the Python types this way (float -> float32, unlike numpy).
_BY_PYTHON_TYPE = {builtins.float: float32, builtins.int: int32, builtins.bool: bool,
                   builtins.complex: complex128}

FLOATING = frozenset({float16, float32, float64})
COMPLEX = frozenset({complex64, complex128})
SIGNED_INTEGER = frozenset({int8, int16, int32, int64})
UNSIGNED_INTEGER = frozenset({uint8, uint16, uint32, uint64})
INTEGER = SIGNED_INTEGER | UNSIGNED_INTEGER
REAL = FLOATING | INTEGER
NUMERIC = REAL | COMPLEX
INEXACT = FLOATING | COMPLEX
ALL = NUMERIC | {bool}
#: What TensorFlow's type-generic ops (reshape, concat, gather, where, equal, ...) also take.
ALL_AND_STRING = ALL | {string}


def as_dtype(type_value) -> DType:
    """Converts a DType, numpy dtype or type, Python type or name to a `DType` (TF's `as_dtype`)."""
    if type_value.__class__ is DType:
        return type_value
    if isinstance(type_value, np.dtype):
        found = BY_NUMPY.get(type_value)
        if found is not None:
            return found
        if type_value.kind in "SU":  # numpy's fixed-width strings: TensorFlow's string
            return string
    elif isinstance(type_value, str):
        found = _BY_NAME.get(type_value)
        if found is not None:
            return found
    elif isinstance(type_value, type):
        found = _BY_PYTHON_TYPE.get(type_value)
        if found is not None:
            return found
        if issubclass(type_value, np.generic):
            if issubclass(type_value, (np.str_, np.bytes_)):
                return string
            found = BY_NUMPY.get(np.dtype(type_value))
            if found is not None:
                return found
    elif isinstance(type_value, DType):
        return type_value
    raise TypeError(f"Cannot convert {type_value!r} to an eager.DType.")
