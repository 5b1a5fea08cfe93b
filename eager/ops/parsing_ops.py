"""`eager.io.parse_example` / `parse_single_example` with `FixedLenFeature`,
`VarLenFeature`, `RaggedFeature` and `SparseFeature`, and `eager.io.decode_csv`: TensorFlow's
parsing ops on string tensors (host kernels, so they run in traced functions and
`Dataset.map`).

`ParseExampleV2` reads serialized `tf.train.Example`s with `eager.base.example_proto` and
returns one dense tensor per fixed-length feature, TensorFlow's errors included ("Feature: z
(data type: float) is required but could not be found."). `ParseExampleVarLen` reads the
features of any length: each is returned as the components of a `SparseTensor` (indices,
values, dense shape) or of a `RaggedTensor` (flat values, row splits), which `parse_example`
assembles.
"""

from __future__ import annotations

import collections

import numpy as np

from ..base import dtypes as _dt
from ..base import example_proto
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.specs import TensorSpec
from .parsing_var_len import RaggedFeature, SparseFeature, VarLenFeature, parse_var_len

__all__ = ["FixedLenFeature", "VarLenFeature", "RaggedFeature", "SparseFeature",
           "parse_example", "parse_single_example", "decode_csv"]

_HOST = frozenset({"CPU"})
_TF_NAMES = {"float32": "float", "int64": "int64", "string": "string"}
_KIND_OF = {_dt.float32: "float_list", _dt.int64: "int64_list", _dt.string: "bytes_list"}


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """≈ `tf.io.FixedLenFeature`: a feature of a fixed `shape` and `dtype` (float32, int64 or
    string); `default_value` fills it when an example lacks it (else it is required)."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


def _value_error(key, message):
    return op_error("ParseExampleV2", f"Key: {key}.  {message}")


def _parse_one(data, keys, dtypes, shapes, defaults):
    try:
        example = example_proto.Example.FromString(bytes(data))
    except example_proto.ProtoError as exc:
        raise op_error("ParseExampleV2", f"Could not parse example input, value: "
                                         f"'{bytes(data)!r}' ({exc})") from None
    out = []
    for key, dtype, shape, default in zip(keys, dtypes, shapes, defaults):
        n = int(np.prod(shape, dtype=np.int64))
        feature = example.features.feature.get(key)
        kind = feature.WhichOneof("kind") if feature is not None else None
        if kind is None:
            if default is None:
                raise op_error("ParseExampleV2", f"Feature: {key} (data type: "
                                                 f"{_TF_NAMES[dtype.name]}) is required but "
                                                 f"could not be found.")
            out.append(np.broadcast_to(np.asarray(default, dtype.dtype if dtype != _dt.string
                                                  else object), shape))
            continue
        if kind != _KIND_OF[dtype]:
            found = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}[kind]
            raise _value_error(key, f"Data types don't match. Data type: {found} but expected "
                                    f"type: {_TF_NAMES[dtype.name]}")
        values = getattr(feature, kind).value
        if len(values) != n:
            what = kind.split("_")[0]
            raise _value_error(key, f"Can't parse serialized Example: Number of {what} values "
                                    f"!= expected.  Values size: {len(values)} but output "
                                    f"shape: {list(shape)}")
        arr = np.empty(n, object) if dtype == _dt.string else np.asarray(values, dtype.dtype)
        if dtype == _dt.string:
            arr[:] = values
        out.append(arr.reshape(shape))
    return out


def _parse_kernel(xp, serialized, keys, dtypes, shapes, defaults):
    flat = np.asarray(serialized, object).reshape(-1)
    rows = [_parse_one(s, keys, dtypes, shapes, defaults) for s in flat]
    outs = []
    for i, (dtype, shape) in enumerate(zip(dtypes, shapes)):
        np_dtype = object if dtype == _dt.string else dtype.dtype
        stacked = np.empty((len(rows), *shape), np_dtype)
        for r, row in enumerate(rows):
            stacked[r] = row[i]
        outs.append(stacked.reshape(serialized.shape + tuple(shape)))
    return tuple(outs)


def _parse_infer(serialized, keys, dtypes, shapes, defaults):
    if serialized.dtype != _dt.string:
        raise op_error("ParseExampleV2", f"serialized must be a string tensor, got "
                                         f"{serialized.dtype.name}")
    lead = list(serialized.shape) if serialized.shape.rank is not None else None
    return tuple(TensorSpec(None if lead is None else lead + list(s), d)
                 for d, s in zip(dtypes, shapes))


PARSE_EXAMPLE = register_op("ParseExampleV2", _parse_kernel, _parse_infer, num_outputs=None,
                            differentiable=False, device_types=_HOST,
                            doc="Dense features of serialized tf.train.Examples.")


def _specs(features):
    """The fixed-length features' attributes, sorted by key."""
    keys, dtypes, shapes, defaults = [], [], [], []
    for key in sorted(features):
        spec = features[key]
        if not isinstance(spec, FixedLenFeature):
            continue
        dtype = _dt.as_dtype(spec.dtype)
        if dtype not in _KIND_OF:
            raise TypeError(f"Value for attr 'Tdense' of {dtype.name} is not in the list of "
                            f"allowed values: float, int64, string")
        shape = tuple(int(d) for d in spec.shape) if spec.shape is not None else ()
        default = spec.default_value
        if default is not None:
            default = np.broadcast_to(np.asarray(default, object if dtype == _dt.string
                                                 else dtype.dtype), shape).copy()
            default = tuple(default.reshape(-1).tolist()) if shape else default.item()
        keys.append(key)
        dtypes.append(dtype)
        shapes.append(shape)
        defaults.append(default)
    return tuple(keys), tuple(dtypes), tuple(shapes), tuple(
        None if d is None else (np.asarray(d, object).reshape(s).tolist() if s else d)
        for d, s in zip(defaults, shapes))


def _freeze(value):
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


def parse_example(serialized, features, example_names=None, name=None):
    """≈ `tf.io.parse_example`: a dict with, per feature, a dense tensor [batch, *shape]
    (`FixedLenFeature`), a `SparseTensor` [batch, max length] (`VarLenFeature`,
    `SparseFeature`) or a `RaggedTensor` [batch, None] (`RaggedFeature`), from a vector of
    serialized `tf.train.Example`s."""
    serialized = as_tensor(serialized, _dt.string) if not hasattr(serialized, "dtype") else \
        serialized
    if serialized.shape.rank is not None and serialized.shape.rank > 1:
        raise op_error("ParseExampleV2", f"Expected serialized to be a scalar or vector, got "
                                         f"shape: [{','.join(str(d) for d in serialized.shape)}]")
    out = {}
    keys, dtypes, shapes, defaults = _specs(features)
    if keys:
        outs = execute(PARSE_EXAMPLE, (serialized,),
                       {"keys": keys, "dtypes": dtypes, "shapes": shapes,
                        "defaults": tuple(_freeze(d) for d in defaults)})
        out.update(zip(keys, outs))
    out.update(parse_var_len(serialized, features))
    return out


def parse_single_example(serialized, features, name=None, example_names=None):
    """≈ `tf.io.parse_single_example`: `parse_example` of one scalar serialized Example
    (sparse features lose the batch dimension; ragged ones are dense vectors)."""
    return parse_example(serialized, features)


# -----------------------------------------------------------------------------------------------
# decode_csv
# -----------------------------------------------------------------------------------------------

_CSV_TYPES = {_dt.float32, _dt.float64, _dt.int32, _dt.int64, _dt.string}


def _csv_kernel(xp, records, *defaults, field_delim, na_value, dtypes):
    flat = np.asarray(records, object).reshape(-1)
    cols = [np.empty(len(flat), object if d == _dt.string else d.dtype) for d in dtypes]
    for r, rec in enumerate(flat):
        text = bytes(rec).decode("utf-8")
        parts = _split_csv(text, field_delim)
        if len(parts) != len(dtypes):
            raise op_error("DecodeCSV", f"Expect {len(dtypes)} fields but have {len(parts)} in "
                                        f"record {r}")
        for c, (part, dtype, default) in enumerate(zip(parts, dtypes, defaults)):
            if part == "" or part == na_value:
                if default.size == 0:
                    raise op_error("DecodeCSV", f"Field {c} is required but missing in record "
                                                f"{r}!")
                cols[c][r] = default.reshape(-1)[0]
                continue
            try:
                cols[c][r] = part.encode() if dtype == _dt.string else (
                    float(part) if dtype.is_floating else int(part))
            except ValueError:
                kind = "float" if dtype.is_floating else "int32" if dtype == _dt.int32 else \
                    "int64"
                raise op_error("DecodeCSV", f"Field {c} in record {r} is not a valid "
                                            f"{kind}: {part}") from None
    return tuple(c.reshape(records.shape) for c in cols)


def _split_csv(text, delim):
    """Fields of one record, with double-quoted fields (quotes doubled inside) as TF's."""
    fields, cur, i, quoted = [], [], 0, False
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == '"' and i + 1 < len(text) and text[i + 1] == '"':
                cur.append('"')
                i += 1
            elif ch == '"':
                quoted = False
            else:
                cur.append(ch)
        elif ch == '"' and not cur:
            quoted = True
        elif ch == delim:
            fields.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    fields.append("".join(cur))
    return fields


def _csv_infer(records, *defaults, field_delim, na_value, dtypes):
    return tuple(TensorSpec(records.shape, d) for d in dtypes)


DECODE_CSV = register_op("DecodeCSV", _csv_kernel, _csv_infer, num_outputs=None,
                         differentiable=False, device_types=_HOST,
                         doc="The columns of CSV records.")


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, na_value="",
               select_cols=None, name=None):
    """≈ `tf.io.decode_csv`: one tensor per column of the CSV strings `records`; each column's
    dtype is its default's (a one-element list, or an empty list or a dtype for a required
    column); empty fields take the default."""
    if len(field_delim) != 1:
        raise ValueError("field_delim should be only 1 char")
    defaults, dtypes = [], []
    for d in record_defaults:
        if isinstance(d, _dt.DType) or (isinstance(d, type) and d is not list):
            dtype = _dt.as_dtype(d)
            t = as_tensor(np.zeros([0], object if dtype == _dt.string else dtype.dtype), dtype)
        else:
            t = as_tensor(d)
            if isinstance(d, (list, tuple)) and len(d) == 0:
                raise ValueError("decode_csv: an empty default needs a dtype; give the dtype "
                                 "itself (eager.float32) for a required column.")
            dtype = t.dtype
        if dtype not in _CSV_TYPES:
            raise TypeError(f"decode_csv: column dtype must be one of float32, float64, int32, "
                            f"int64, string; got {dtype.name}.")
        defaults.append(t)
        dtypes.append(dtype)
    records = as_tensor(records, _dt.string) if not hasattr(records, "dtype") else records
    return list(execute(DECODE_CSV, (records, *defaults),
                        {"field_delim": field_delim, "na_value": na_value,
                         "dtypes": tuple(dtypes)}))
