"""String ops (`eager.strings`): lengths, substrings, joins, regular expressions, case,
stripping, number conversions, formatting and Unicode code points, with TensorFlow's op names,
attributes and errors.

Strings are numpy object arrays of `bytes` in host memory, so every kernel here is a loop over
elements in Python and every op runs on the CPU (`device_types`). None has a gradient, as in
TensorFlow (no gradient is registered for string ops: a tape sees None).

Regular expressions: TensorFlow uses RE2; these kernels use Python's `re` on the UTF-8 text
(decoded with `surrogateescape`, so invalid bytes pass through), which agrees with RE2 on the
syntax both share. Patterns using what RE2 refuses (backreferences such as `\\1`, lookaround
`(?=`, `(?!`, `(?<=`, `(?<!`, conditionals `(?(`) are refused with TensorFlow's
InvalidArgumentError, and RE2's Unicode classes `\\p{..}` / `\\P{..}`, which `re` lacks, are
refused too. In a rewrite, `\\0`..`\\9` name groups, as RE2's do.
"""

from __future__ import annotations

import builtins
import math
import re

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError, OutOfRangeError
from ..base.tensor_shape import TensorShape
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute, named
from ..core.registry import op_error, register_op
from ..core.shapes import broadcast_shapes
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from .logging_ops import summarize_array

__all__ = ["length", "substr", "join", "reduce_join", "regex_replace", "regex_full_match",
           "lower", "upper", "strip", "to_number", "as_string", "format", "unicode_decode",
           "unicode_encode"]

_STRING = frozenset({_dt.string})
_HOST = frozenset({"CPU"})
_UNITS = ("BYTE", "UTF8_CHAR")


def _register(name, kernel, infer, dtypes=_STRING, **facts):
    return register_op(name, kernel, infer, dtypes=dtypes, differentiable=False,
                       device_types=_HOST, **facts)


def _strings(value, op_name, what="input"):
    """`value` as a string tensor (Python strings convert; another dtype is the op's error)."""
    t = as_tensor(value) if not isinstance(value, (str, bytes, list, tuple, np.ndarray)) else \
        convert_to_tensor(value, _dt.string)
    if t.dtype is not _dt.string:
        raise op_error(op_name, f"{what} must be a string tensor, got {t.dtype.name}", [t])
    return t


def _map(fn, array, out_dtype=object):
    """`fn` of every element of `array`, as an array of its shape (a rank-0 array stays one)."""
    array = np.asarray(array, dtype=object)
    out = np.empty(array.shape, dtype=out_dtype)
    flat = out.reshape(-1)
    for i, item in enumerate(array.reshape(-1)):
        flat[i] = fn(item)
    return out


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _check_unit(op_name, unit):
    if unit not in _UNITS:
        raise InvalidArgumentError(None, op_name, f"Value for attr 'unit' of \"{unit}\" is not in "
                                                  f"the list of allowed values: \"BYTE\", "
                                                  f"\"UTF8_CHAR\" [Op:{op_name}]")
    return unit


def _utf8_chars(data: bytes) -> int:
    """TensorFlow's UTF8_CHAR count: bytes that do not continue a character."""
    return sum(1 for b in data if b & 0xC0 != 0x80)


def _same(x, **_):
    return TensorSpec(x.shape, _dt.string)


# -- length ----------------------------------------------------------------------------------------
def _length_kernel(xp, x, unit):
    count = len if unit == "BYTE" else _utf8_chars
    return _map(count, x, np.int32)


STRING_LENGTH = _register("StringLength", _length_kernel,
                          lambda x, unit: TensorSpec(x.shape, _dt.int32))


def length(input, unit="BYTE", name=None):  # noqa: A002 - TensorFlow's argument name
    """≈ `tf.strings.length`: bytes (`unit="BYTE"`) or UTF-8 characters (`"UTF8_CHAR"`)."""
    x = _strings(input, "StringLength")
    out = execute(STRING_LENGTH, (x,), {"unit": _check_unit("StringLength", unit)})
    return out if name is None else named(out, name)


# -- substr ----------------------------------------------------------------------------------------
def _char_starts(data: bytes) -> list:
    return [i for i, b in enumerate(data) if b & 0xC0 != 0x80] + [len(data)]


def _substr_one(data, pos, size, unit, index):
    if unit == "BYTE":
        n = len(data)
    else:
        starts = _char_starts(data)
        n = len(starts) - 1
    if pos > n or pos < -n:
        shown = f" {data!r}" if unit == "BYTE" else ""
        raise op_error("Substr", f"pos {pos} out of range for string{shown} at index {index}")
    if pos < 0:
        pos += n
    end = min(n, pos + max(size, 0))
    if unit == "BYTE":
        return data[pos:end]
    return data[starts[pos]:starts[end]]


def _substr_kernel(xp, x, pos, size, unit):
    if np.shape(pos) != np.shape(size):
        raise op_error("Substr", f"pos and len should have the same shape, got: "
                                 f"{list(np.shape(pos))} vs. {list(np.shape(size))}")
    x, pos, size = np.broadcast_arrays(np.asarray(x, dtype=object), np.asarray(pos),
                                       np.asarray(size))
    out = np.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    for i, (s, p, n) in enumerate(zip(x.reshape(-1), pos.reshape(-1), size.reshape(-1))):
        flat[i] = _substr_one(s, int(p), int(n), unit, i)
    return out


def _substr_infer(x, pos, size, unit):
    if pos.shape.rank is not None and size.shape.rank is not None and \
            pos.shape.is_fully_defined() and size.shape.is_fully_defined() and \
            pos.shape != size.shape:
        raise op_error("Substr", f"pos and len should have the same shape, got: "
                                 f"{list(pos.shape)} vs. {list(size.shape)}")
    return TensorSpec(broadcast_shapes("Substr", x.shape, pos.shape), _dt.string)


SUBSTR = _register("Substr", _substr_kernel, _substr_infer)


def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002 - TensorFlow's names
    """≈ `tf.strings.substr`: `len` bytes or characters from `pos` (negative: from the end);
    `pos` beyond the string is TensorFlow's InvalidArgumentError, `len` is clipped."""
    x = _strings(input, "Substr")
    pos = as_tensor(pos) if isinstance(pos, np.ndarray) or hasattr(pos, "dtype") else \
        convert_to_tensor(pos, _dt.int32)
    size = convert_to_tensor(len, pos.dtype) if not hasattr(len, "dtype") else as_tensor(len)
    if pos.dtype not in (_dt.int32, _dt.int64) or size.dtype is not pos.dtype:
        raise op_error("Substr", "pos and len must be int32 or int64 tensors of one dtype",
                       [x, pos, size])
    out = execute(SUBSTR, (x, pos, size), {"unit": _check_unit("Substr", unit)})
    return out if name is None else named(out, name)


# -- join, reduce_join -----------------------------------------------------------------------------
def _join_shape(shapes):
    shape = None
    for s in shapes:
        if s.rank == 0:
            continue
        if shape is None:
            shape = s
        elif s.is_fully_defined() and shape.is_fully_defined() and s != shape:
            raise op_error("StringJoin", f"Input shapes do not match: {list(shape)} vs. "
                                         f"{list(s)}")
    return TensorShape([]) if shape is None else shape


def _join_kernel(xp, *inputs, separator):
    shape = _join_shape([TensorShape(np.shape(a)) for a in inputs])
    arrays = [np.broadcast_to(np.asarray(a, dtype=object), tuple(shape)) for a in inputs]
    out = np.empty(tuple(shape), dtype=object)
    flat = out.reshape(-1)
    columns = [a.reshape(-1) for a in arrays]
    sep = separator.encode() if isinstance(separator, str) else separator
    for i in range(flat.size):
        flat[i] = sep.join(c[i] for c in columns)
    return out


STRING_JOIN = _register("StringJoin", _join_kernel,
                        lambda *inputs, separator: TensorSpec(
                            _join_shape([t.shape for t in inputs]), _dt.string))


def join(inputs, separator="", name=None):
    """≈ `tf.strings.join`: elementwise concatenation of same-shaped (or scalar) strings."""
    tensors = tuple(_strings(t, "StringJoin") for t in inputs)
    if not tensors:
        tensors = (convert_to_tensor(b"", _dt.string),)  # TensorFlow: b''
    out = execute(STRING_JOIN, tensors, {"separator": str(separator)})
    return out if name is None else named(out, name)


def _reduce_axes(op_name, rank, axis):
    if axis is None:
        return tuple(range(rank))
    axes = []
    for a in axis:
        if not -rank <= a < rank:
            raise OutOfRangeError(None, op_name, f"Invalid reduction dimension {a} for input "
                                                 f"with {rank} dimension(s) [Op:{op_name}]")
        axes.append(a % rank)
    return tuple(sorted(set(axes)))


def _reduce_join_kernel(xp, x, axis, keepdims, separator):
    x = np.asarray(x, dtype=object)
    axes = _reduce_axes("ReduceJoin", x.ndim, axis)
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, kept + list(axes))
    rows = moved.reshape(tuple(x.shape[d] for d in kept) + (-1,))
    sep = separator.encode()
    out = np.empty(rows.shape[:-1], dtype=object)
    flat = out.reshape(-1)
    for i, row in enumerate(rows.reshape(flat.size, -1)):
        flat[i] = sep.join(row)
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)))
    return out


def _reduce_join_infer(x, axis, keepdims, separator):
    if x.shape.rank is None:
        return TensorSpec(TensorShape(None), _dt.string)
    axes = _reduce_axes("ReduceJoin", x.shape.rank, axis)
    dims = [1 if d in axes else x.shape[d] for d in range(x.shape.rank)] if keepdims else \
        [x.shape[d] for d in range(x.shape.rank) if d not in axes]
    return TensorSpec(TensorShape(dims), _dt.string)


REDUCE_JOIN = _register("ReduceJoin", _reduce_join_kernel, _reduce_join_infer)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """≈ `tf.strings.reduce_join`: strings joined along `axis` (all axes when None)."""
    x = _strings(inputs, "ReduceJoin")
    if axis is not None:
        axis = tuple(int(a) for a in np.asarray(
            axis.numpy() if hasattr(axis, "numpy") else axis).reshape(-1))
    out = execute(REDUCE_JOIN, (x,), {"axis": axis, "keepdims": bool(keepdims),
                                      "separator": str(separator)})
    return out if name is None else named(out, name)


# -- regular expressions ---------------------------------------------------------------------------
_NOT_RE2 = re.compile(r"\\[1-9]|\(\?(?:=|!|<=|<!|\()|\\[pP]")
_COMPILED: dict = {}


def _compile(op_name, pattern):
    """`pattern` compiled by `re`, or TensorFlow's "Invalid pattern" error (what RE2 refuses,
    and RE2 syntax `re` lacks, included: see the module doc)."""
    key = (op_name, pattern)
    found = _COMPILED.get(key)
    if found is not None:
        return found
    text = _text(pattern) if isinstance(pattern, bytes) else str(pattern)
    bad = _NOT_RE2.search(text)
    try:
        if bad is not None:
            raise re.error(f"{bad.group(0)} is not supported (RE2 syntax: no backreferences, "
                           "lookaround or Unicode classes here)")
        compiled = re.compile(text)
    except re.error as exc:
        raise InvalidArgumentError(None, op_name, f"Invalid pattern: {text}, error: {exc} "
                                                  f"[Op:{op_name}]") from None
    if len(_COMPILED) > 256:
        _COMPILED.clear()
    _COMPILED[key] = compiled
    return compiled


def _rewrite(rewrite: str) -> str:
    """RE2's rewrite (`\\0`..`\\9`, `\\\\`) as Python's replacement template."""
    out = []
    i = 0
    while i < len(rewrite):
        c = rewrite[i]
        if c == "\\" and i + 1 < len(rewrite):
            nxt = rewrite[i + 1]
            if nxt.isdigit():
                out.append(f"\\g<{nxt}>")
            elif nxt == "\\":
                out.append("\\\\")
            else:
                raise InvalidArgumentError(None, "StaticRegexReplace",
                                           f"Invalid rewrite pattern: {rewrite} "
                                           "[Op:StaticRegexReplace]")
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _regex_replace_kernel(xp, x, pattern, rewrite, replace_global):
    compiled = _compile("StaticRegexReplace", pattern)
    template = _rewrite(rewrite)
    count = 0 if replace_global else 1
    return _map(lambda s: _bytes(compiled.sub(template, _text(s), count=count)), x)


REGEX_REPLACE = _register("StaticRegexReplace", _regex_replace_kernel, _same)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """≈ `tf.strings.regex_replace` (see the module doc for RE2 against `re`)."""
    x = _strings(input, "StaticRegexReplace")
    pattern, rewrite = _static_text(pattern), _static_text(rewrite)
    _compile("StaticRegexReplace", pattern)
    _rewrite(rewrite)
    out = execute(REGEX_REPLACE, (x,), {"pattern": pattern, "rewrite": rewrite,
                                        "replace_global": bool(replace_global)})
    return out if name is None else named(out, name)


def _regex_full_match_kernel(xp, x, pattern):
    compiled = _compile("StaticRegexFullMatch", pattern)
    return _map(lambda s: compiled.fullmatch(_text(s)) is not None, x, np.bool_)


REGEX_FULL_MATCH = _register("StaticRegexFullMatch", _regex_full_match_kernel,
                             lambda x, pattern: TensorSpec(x.shape, _dt.bool))


def regex_full_match(input, pattern, name=None):  # noqa: A002
    """≈ `tf.strings.regex_full_match`: whether the whole string matches `pattern`."""
    x = _strings(input, "StaticRegexFullMatch")
    pattern = _static_text(pattern)
    _compile("StaticRegexFullMatch", pattern)
    out = execute(REGEX_FULL_MATCH, (x,), {"pattern": pattern})
    return out if name is None else named(out, name)


def _static_text(value) -> str:
    """A pattern or rewrite: a Python string, or an eager scalar string tensor's text."""
    if hasattr(value, "numpy"):
        value = value.numpy()
    return _text(value) if isinstance(value, bytes) else str(value)


# -- case, strip -----------------------------------------------------------------------------------
def _case_kernel(upper):
    def kernel(xp, x, encoding):
        if encoding:  # Unicode case mapping of the UTF-8 text
            change = (lambda s: _bytes(_text(s).upper())) if upper else (
                lambda s: _bytes(_text(s).lower()))
        else:  # ASCII letters only, as TensorFlow without an encoding
            change = bytes.upper if upper else bytes.lower
        return _map(change, x)
    return kernel


STRING_LOWER = _register("StringLower", _case_kernel(False), _same)
STRING_UPPER = _register("StringUpper", _case_kernel(True), _same)


def _encoding(op_name, encoding):
    if encoding not in ("", "utf-8", "UTF-8"):
        raise InvalidArgumentError(None, op_name, f"encoding must be '' or 'utf-8', got "
                                                  f"{encoding!r} [Op:{op_name}]")
    return "utf-8" if encoding else ""


def lower(input, encoding="", name=None):  # noqa: A002
    """≈ `tf.strings.lower`: ASCII letters, or all of Unicode with `encoding="utf-8"`."""
    out = execute(STRING_LOWER, (_strings(input, "StringLower"),),
                  {"encoding": _encoding("StringLower", encoding)})
    return out if name is None else named(out, name)


def upper(input, encoding="", name=None):  # noqa: A002
    """≈ `tf.strings.upper`: ASCII letters, or all of Unicode with `encoding="utf-8"`."""
    out = execute(STRING_UPPER, (_strings(input, "StringUpper"),),
                  {"encoding": _encoding("StringUpper", encoding)})
    return out if name is None else named(out, name)


STRING_STRIP = _register("StringStrip", lambda xp, x: _map(bytes.strip, x), _same)


def strip(input, name=None):  # noqa: A002
    """≈ `tf.strings.strip`: leading and trailing ASCII whitespace removed."""
    out = execute(STRING_STRIP, (_strings(input, "StringStrip"),))
    return out if name is None else named(out, name)


# -- numbers ---------------------------------------------------------------------------------------
_NUMBER_TYPES = (_dt.float32, _dt.float64, _dt.int32, _dt.int64, _dt.uint32, _dt.uint64)
_INTEGER_TEXT = re.compile(r"\s*[+-]?[0-9]+\s*")


def _to_number_one(data, dtype):
    text = data.decode("ascii", "replace")
    try:
        if dtype.is_floating:
            try:
                value = float(text)
            except ValueError:
                stripped = text.strip().lower()
                if not stripped.lstrip("+-").startswith("0x"):
                    raise
                value = float.fromhex(stripped)
            if "_" in text:
                raise ValueError(text)
            return value
        if not _INTEGER_TEXT.fullmatch(text):
            raise ValueError(text)
        value = int(text)
        info = np.iinfo(dtype.dtype)
        if not info.min <= value <= info.max:
            raise ValueError(text)
        return value
    except ValueError:
        raise op_error("StringToNumber", f"StringToNumberOp could not correctly convert "
                                         f"string: {text}") from None


def _to_number_kernel(xp, x, out_type):
    values = _map(lambda s: _to_number_one(s, out_type), x)
    return values.astype(out_type.dtype) if values.size else np.zeros(values.shape,
                                                                       out_type.dtype)


STRING_TO_NUMBER = _register("StringToNumber", _to_number_kernel,
                             lambda x, out_type: TensorSpec(x.shape, out_type))


def to_number(input, out_type=_dt.float32, name=None):  # noqa: A002
    """≈ `tf.strings.to_number`: numbers of `out_type` parsed from the strings; text that is
    not one is TensorFlow's InvalidArgumentError naming it."""
    out_type = _dt.as_dtype(out_type)
    if out_type not in _NUMBER_TYPES:
        names = "float, double, int32, int64, uint32, uint64"
        raise InvalidArgumentError(None, "StringToNumber", f"Value for attr 'out_type' of "
                                                           f"{out_type.name} is not in the list "
                                                           f"of allowed values: {names} "
                                                           f"[Op:StringToNumber]")
    out = execute(STRING_TO_NUMBER, (_strings(input, "StringToNumber"),), {"out_type": out_type})
    return out if name is None else named(out, name)


def _as_string_format(dtype, precision, scientific, shortest, width, fill):
    if len(fill) > 1:
        raise op_error("AsString", "Fill string must be one or fewer characters")
    if scientific and shortest:
        raise op_error("AsString", "Cannot select both scientific and shortest notation")
    spec = "%"
    if fill:
        if fill not in " +-0#":
            raise op_error("AsString", f"Fill argument not supported: \"{fill}\"")
        spec += fill
    if width > -1:
        spec += str(width)
    if precision > -1:
        if not (dtype.is_floating or dtype.is_complex):
            raise op_error("AsString", f"precision not supported for datatype "
                                       f"{dtype.name}")
        spec += f".{precision}"
    if dtype.is_floating or dtype.is_complex:
        return spec + ("g" if shortest else "e" if scientific else "f")
    if dtype.is_integer:
        return spec + "d"
    return spec + "s"


def _as_string_kernel(xp, x, precision, scientific, shortest, width, fill):
    dtype = _dt.BY_NUMPY[np.asarray(x).dtype]
    spec = _as_string_format(dtype, precision, scientific, shortest, width, fill)
    if dtype.is_bool:
        return _map(lambda v: b"true" if v else b"false", np.asarray(x, dtype=object))
    if dtype.is_string:
        return _map(lambda v: (spec % _text(v)).encode("utf-8", "surrogateescape"), x)
    if dtype.is_complex:
        return _map(lambda v: f"({_c_format(spec, v.real)},{_c_format(spec, v.imag)})"
                    .encode(), np.asarray(x).astype(object))
    if dtype.is_floating:
        return _map(lambda v: _c_format(spec, v).encode(), np.asarray(x).astype(object))
    return _map(lambda v: (spec % int(v)).encode(), np.asarray(x).astype(object))


def _c_format(spec, value) -> str:
    """printf's text for a float (nan and inf as C prints them)."""
    value = float(value)
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return spec % value


AS_STRING = _register("AsString", _as_string_kernel,
                      lambda x, **attrs: TensorSpec(x.shape, _dt.string),
                      dtypes=_dt.ALL_AND_STRING)


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1,  # noqa: A002
              fill="", name=None):
    """≈ `tf.strings.as_string`: numbers (and bools, as "true"/"false") as text, formatted as
    TensorFlow's printf format made from `precision`, `scientific`, `shortest`, `width` and
    `fill`."""
    x = as_tensor(input)
    attrs = {"precision": int(precision), "scientific": bool(scientific),
             "shortest": bool(shortest), "width": int(width), "fill": str(fill)}
    _as_string_format(x.dtype, **attrs)
    out = execute(AS_STRING, (x,), attrs)
    return out if name is None else named(out, name)


# -- format ----------------------------------------------------------------------------------------
def _format_kernel(xp, *inputs, template, placeholder, summarize):
    pieces = template.split(placeholder)
    parts = [pieces[0]]
    for array, piece in zip(inputs, pieces[1:]):
        parts.append(summarize_array(array, summarize))
        parts.append(piece)
    out = np.empty((), dtype=object)
    out[()] = "".join(parts).encode("utf-8", "surrogateescape")
    return out


STRING_FORMAT = _register("StringFormat", _format_kernel,
                          lambda *inputs, **attrs: TensorSpec([], _dt.string),
                          dtypes=_dt.ALL_AND_STRING)


def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001
    """≈ `tf.strings.format`: `template` with each `placeholder` replaced by a tensor, printed
    as `eager.print` prints it (`summarize` entries at each end of every dimension)."""
    if isinstance(inputs, (list, tuple)):
        tensors = tuple(as_tensor(t) for t in inputs)
    else:
        tensors = (as_tensor(inputs),)
    count = template.count(placeholder)
    if count != builtins.len(tensors):
        raise ValueError(f"The template expects {count} tensors, but the inputs only has "
                         f"{builtins.len(tensors)}. Please ensure the number of placeholders in "
                         "template matches inputs length.")
    out = execute(STRING_FORMAT, tensors, {"template": template, "placeholder": placeholder,
                                           "summarize": int(summarize)})
    return out if name is None else named(out, name)


# -- Unicode ---------------------------------------------------------------------------------------
_CODECS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}


def _codec(op_name, encoding):
    codec = _CODECS.get(str(encoding).upper())
    if codec is None:
        raise InvalidArgumentError(None, op_name, f"Could not create converter for input "
                                                  f"encoding: {encoding} [Op:{op_name}]")
    return codec


def _decode_kernel(xp, x, codec, errors, replacement_char):
    data = np.asarray(x, dtype=object)[()]
    if errors == "strict":
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            raise op_error("UnicodeDecode", "Invalid formatting on input string") from None
    else:
        text = data.decode(codec, "ignore" if errors == "ignore" else "replace")
        if errors == "replace" and replacement_char != 0xFFFD:
            text = text.replace("\ufffd", chr(replacement_char))
    return np.array([ord(c) for c in text], dtype=np.int32)


UNICODE_DECODE = _register("UnicodeDecode", _decode_kernel,
                           lambda x, **attrs: TensorSpec([None], _dt.int32))


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """≈ `tf.strings.unicode_decode` of a scalar string: its code points (int32). (String
    tensors of rank 1 or more, whose results are ragged: `string_split_ops.unicode_decode`,
    which is `eager.strings.unicode_decode`.)"""
    x = _strings(input, "UnicodeDecode")
    if x.shape.rank != 0:
        raise ValueError("UnicodeDecode: this kernel decodes one string; "
                         "eager.strings.unicode_decode takes any rank.")
    if errors not in ("replace", "ignore", "strict"):
        raise ValueError(f"errors must be 'replace', 'ignore' or 'strict', got {errors!r}")
    if replace_control_characters:
        raise NotImplementedError("unicode_decode: replace_control_characters=True is not "
                                  "supported.")
    out = execute(UNICODE_DECODE, (x,), {"codec": _codec("UnicodeDecode", input_encoding),
                                         "errors": errors,
                                         "replacement_char": int(replacement_char)})
    return out if name is None else named(out, name)


def _encode_kernel(xp, codepoints, codec, errors, replacement_char):
    points = np.asarray(codepoints)
    rows = points.reshape(-1, points.shape[-1]) if points.ndim else points.reshape(1, 1)
    out = np.empty(rows.shape[0], dtype=object)
    for i, row in enumerate(rows):
        chars = []
        for c in row.tolist():
            if 0 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF:
                chars.append(chr(c))
            elif errors == "strict":
                raise op_error("UnicodeEncode", f"Invalid code point {c}")
            elif errors == "replace":
                chars.append(chr(replacement_char))
        out[i] = "".join(chars).encode(codec)
    return out.reshape(points.shape[:-1])


def _encode_infer(codepoints, **attrs):
    if codepoints.shape.rank == 0:
        raise op_error("UnicodeEncode", "input must have rank 1 or more", [codepoints])
    return TensorSpec(codepoints.shape[:-1], _dt.string)


UNICODE_ENCODE = _register("UnicodeEncode", _encode_kernel, _encode_infer,
                           dtypes=frozenset({_dt.int32}))


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   name=None):
    """≈ `tf.strings.unicode_encode` of a dense int32 tensor of code points: one string per
    row of the last axis (a RaggedTensor input needs eager's missing RaggedTensor)."""
    x = convert_to_tensor(input, _dt.int32) if not hasattr(input, "dtype") else as_tensor(input)
    if x.dtype is not _dt.int32:
        raise op_error("UnicodeEncode", f"input must be int32 code points, got {x.dtype.name}",
                       [x])
    if errors not in ("replace", "ignore", "strict"):
        raise ValueError(f"errors must be 'replace', 'ignore' or 'strict', got {errors!r}")
    out = execute(UNICODE_ENCODE, (x,), {"codec": _codec("UnicodeEncode", output_encoding),
                                         "errors": errors,
                                         "replacement_char": int(replacement_char)})
    return out if name is None else named(out, name)
