"""String ops whose results are ragged (`eager.strings.split`, `bytes_split`,
`unicode_split`, `unicode_decode` and `unicode_decode_with_offsets` of string tensors of any
rank), with TensorFlow's names and splitting rules.

Two kernels do the work on the flattened strings, each returning the row splits beside the
pieces (as TensorFlow's own ops do): `StringSplitRows` (on a separator, on runs of ASCII
whitespace, or into bytes) and `UnicodeDecodeWithOffsets` (code points and the byte offset of
each). The API functions wrap the result as a RaggedTensor with one ragged level per input
dimension (a scalar input gives a dense vector, as in TensorFlow). Like every string op they
run on the CPU and have no gradient.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..core.dispatch import execute
from ..core.registry import register_op
from ..core.specs import TensorSpec
from .array_ops import expand_dims, range as _range, reshape, shape as _shape
from .math_ops import multiply
from .ragged_tensor import RaggedTensor
from .string_ops import _codec, _strings, unicode_encode
from .string_ops import unicode_decode as decode_scalar

__all__ = ["split", "bytes_split", "unicode_split", "unicode_decode",
           "unicode_decode_with_offsets"]

_HOST = frozenset({"CPU"})


def _split_one(data: bytes, mode, sep, maxsplit):
    if mode == "bytes":
        return [data[i:i + 1] for i in range(len(data))]
    if mode == "whitespace":  # runs of ASCII whitespace; none at either end
        return data.split(None, maxsplit)
    return data.split(sep, maxsplit)


def _split_kernel(xp, x, mode, sep, maxsplit):
    pieces, lengths = [], []
    for data in np.asarray(x, dtype=object).reshape(-1):
        parts = _split_one(data, mode, sep, maxsplit)
        pieces.extend(parts)
        lengths.append(len(parts))
    splits = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)
    values = np.empty(len(pieces), dtype=object)
    values[:] = pieces
    return splits, values


STRING_SPLIT_ROWS = register_op(
    "StringSplitRows", _split_kernel,
    lambda x, **attrs: (TensorSpec([None], _dt.int64), TensorSpec([None], _dt.string)),
    dtypes=frozenset({_dt.string}), differentiable=False, device_types=_HOST, num_outputs=2)


def _decode_kernel(xp, x, codec, errors, replacement_char):
    points, offsets, lengths = [], [], []
    for data in np.asarray(x, dtype=object).reshape(-1):
        n = 0
        for start, point in _code_points(data, codec, errors, replacement_char):
            points.append(point)
            offsets.append(start)
            n += 1
        lengths.append(n)
    splits = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)
    return splits, np.asarray(points, np.int32), np.asarray(offsets, np.int64)


def _code_points(data: bytes, codec, errors, replacement_char):
    """(byte offset, code point) of each character; an invalid byte is `replacement_char`
    ("replace"), skipped ("ignore"), or TensorFlow's error ("strict")."""
    if codec != "utf-8":  # fixed-width encodings: decode, offsets by width
        width = 2 if codec == "utf-16-be" else 4
        text = data.decode(codec, "replace" if errors != "strict" else "strict")
        return [(i * width, ord(c)) for i, c in enumerate(text)]
    out, i, n = [], 0, len(data)
    while i < n:
        for size in (1, 2, 3, 4):
            try:
                char = data[i:i + size].decode("utf-8")
            except UnicodeDecodeError:
                continue
            out.append((i, ord(char)))
            i += size
            break
        else:
            if errors == "strict":
                from ..core.registry import op_error  # noqa: PLC0415 - error path only
                raise op_error("UnicodeDecodeWithOffsets", "Invalid formatting on input string")
            if errors == "replace":
                out.append((i, int(replacement_char)))
            i += 1
    return out


UNICODE_DECODE_WITH_OFFSETS = register_op(
    "UnicodeDecodeWithOffsets", _decode_kernel,
    lambda x, **attrs: (TensorSpec([None], _dt.int64), TensorSpec([None], _dt.int32),
                        TensorSpec([None], _dt.int64)),
    dtypes=frozenset({_dt.string}), differentiable=False, device_types=_HOST, num_outputs=3)


def _nest(values, splits, input_shape_tensor, rank):
    """`values` cut by `splits` (one row per input string), then grouped by the input's outer
    dimensions (uniform row lengths), so the result has the input's shape plus one ragged
    dimension. A scalar input gives its single row, dense."""
    rows = RaggedTensor.from_row_splits(values, splits, validate=False)
    if rank == 0:
        return values
    for axis in range(rank - 1, 0, -1):
        width = input_shape_tensor[axis]
        count = _shape(rows.row_splits, out_type=_dt.int64)[0] - 1
        outer = count // width
        splits = multiply(_range(0, outer + 1, dtype=_dt.int64), width)
        rows = RaggedTensor.from_row_splits(rows, splits, validate=False)
    return rows


def _flat(input, op_name):  # noqa: A002 - TensorFlow's argument name
    x = _strings(input, op_name)
    rank = x.shape.rank
    if rank is None:
        raise ValueError(f"{op_name}: the input's rank must be known.")
    return reshape(x, [-1]), _shape(x, out_type=_dt.int64), rank


def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002 - TensorFlow's names
    """≈ `tf.strings.split`: each string cut at `sep` (every occurrence, or the first
    `maxsplit`); with `sep` None or empty, at runs of ASCII whitespace, leading and trailing
    whitespace giving no empty pieces. A RaggedTensor with one more dimension than `input`."""
    flat, dims, rank = _flat(input, "StringSplit")
    if sep is None or sep in ("", b""):
        mode, sep_bytes = "whitespace", b""
    else:
        mode = "sep"
        sep_bytes = sep.encode("utf-8") if isinstance(sep, str) else bytes(sep)
    splits, values = execute(STRING_SPLIT_ROWS, (flat,), {"mode": mode, "sep": sep_bytes,
                                                          "maxsplit": int(maxsplit)})
    return _nest(values, splits, dims, rank)


def bytes_split(input, name=None):  # noqa: A002
    """≈ `tf.strings.bytes_split`: each string as its single bytes."""
    flat, dims, rank = _flat(input, "BytesSplit")
    splits, values = execute(STRING_SPLIT_ROWS, (flat,), {"mode": "bytes", "sep": b"",
                                                          "maxsplit": -1})
    return _nest(values, splits, dims, rank)


def _decode(input, input_encoding, errors, replacement_char, op_name):  # noqa: A002
    if errors not in ("replace", "ignore", "strict"):
        raise ValueError(f"errors must be 'replace', 'ignore' or 'strict', got {errors!r}")
    flat, dims, rank = _flat(input, op_name)
    splits, points, offsets = execute(UNICODE_DECODE_WITH_OFFSETS, (flat,), {
        "codec": _codec(op_name, input_encoding), "errors": errors,
        "replacement_char": int(replacement_char)})
    return splits, points, offsets, dims, rank


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """≈ `tf.strings.unicode_decode`: the code points (int32) of each string, a RaggedTensor
    with one more dimension than `input` (a dense vector for a scalar)."""
    _no_control_replacement(replace_control_characters)
    if _strings(input, "UnicodeDecode").shape.rank == 0:  # one string: the UnicodeDecode op
        return decode_scalar(input, input_encoding, errors, replacement_char)
    splits, points, _, dims, rank = _decode(input, input_encoding, errors, replacement_char,
                                            "UnicodeDecode")
    return _nest(points, splits, dims, rank)


def unicode_decode_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                                replacement_char=65533, replace_control_characters=False,
                                name=None):
    """≈ `tf.strings.unicode_decode_with_offsets`: `unicode_decode`'s code points and the
    byte offset (int64) where each character starts."""
    _no_control_replacement(replace_control_characters)
    splits, points, offsets, dims, rank = _decode(input, input_encoding, errors,
                                                  replacement_char, "UnicodeDecodeWithOffsets")
    return _nest(points, splits, dims, rank), _nest(offsets, splits, dims, rank)


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                  name=None):
    """≈ `tf.strings.unicode_split`: each string as its characters (each re-encoded, so an
    invalid byte becomes the encoded replacement character)."""
    splits, points, _, dims, rank = _decode(input, input_encoding, errors, replacement_char,
                                            "UnicodeSplit")
    chars = unicode_encode(expand_dims(points, 1), input_encoding)
    return _nest(chars, splits, dims, rank)


def _no_control_replacement(flag):
    if flag:
        raise NotImplementedError("unicode_decode: replace_control_characters=True is not "
                                  "supported.")
