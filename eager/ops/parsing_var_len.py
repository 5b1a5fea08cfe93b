"""The features of any length of `eager.io.parse_example`: `VarLenFeature` (a `SparseTensor`
per batch), `SparseFeature` (a `SparseTensor` from an index and a value feature) and
`RaggedFeature` (a `RaggedTensor`), with TensorFlow's values and errors.

One host op, `ParseExampleVarLen`, parses each serialized Example once and returns every such
feature as its composite's components, computed in numpy: a sparse feature's indices, values
and dense shape; a ragged feature's flat values and row splits. `parse_var_len` rebuilds the
composites, so they are ordinary components inside traced functions and `Dataset.map`.
"""

from __future__ import annotations

import collections

import numpy as np

from ..base import dtypes as _dt
from ..base import example_proto
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.specs import TensorSpec
from .ragged_tensor import RaggedTensor
from .sparse_tensor import SparseTensor

__all__ = ["VarLenFeature", "RaggedFeature", "SparseFeature", "parse_var_len"]

_KIND_OF = {_dt.float32: "float_list", _dt.int64: "int64_list", _dt.string: "bytes_list"}
_TF_KIND = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}
_OP = "ParseExampleV2"


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """≈ `tf.io.VarLenFeature(dtype)`: a feature of any length, parsed into a `SparseTensor`
    (row = example, column = position in the feature's list)."""


class RaggedFeature(collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])):
    """≈ `tf.io.RaggedFeature(dtype, value_key=None, ...)`: a feature of any length, parsed
    into a `RaggedTensor` (one row per example); `value_key` defaults to the feature's key.
    Only the unpartitioned form (`partitions=()`) is provided."""

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=_dt.int32,
                validate=False):
        if partitions:
            raise NotImplementedError("RaggedFeature: `partitions` are not supported; parse "
                                      "the values and build the nested RaggedTensor from its "
                                      "row lengths.")
        splits = _dt.as_dtype(row_splits_dtype)
        if splits not in (_dt.int32, _dt.int64):
            raise ValueError(f"row_splits_dtype must be int32 or int64, got {splits.name}.")
        return super().__new__(cls, _dt.as_dtype(dtype), value_key, tuple(partitions), splits,
                               validate)


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """≈ `tf.io.SparseFeature(index_key, value_key, dtype, size)`: a `SparseTensor` [batch,
    size] whose column indices are the int64 feature `index_key` and values the feature
    `value_key` (one index key only)."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def _check_dtype(dtype, attr):
    dtype = _dt.as_dtype(dtype)
    if dtype not in _KIND_OF:
        raise op_error(_OP, f"Value for attr '{attr}' of {dtype.name} is not in the list of "
                            f"allowed values: float, int64, string")
    return dtype


def _plan(features):
    """(kind, keys, dtype, extra) per feature of any length, in key order: the op's attribute
    (kind "varlen", "ragged" or "sparse")."""
    plan = []
    for key in sorted(features):
        spec = features[key]
        if isinstance(spec, VarLenFeature):
            plan.append(("varlen", (key,), _check_dtype(spec.dtype, "sparse_types"), None))
        elif isinstance(spec, RaggedFeature):
            plan.append(("ragged", (spec.value_key or key,),
                         _check_dtype(spec.dtype, "ragged_value_types"), spec.row_splits_dtype))
        elif isinstance(spec, SparseFeature):
            if not isinstance(spec.index_key, str):
                raise NotImplementedError("SparseFeature: only one `index_key` (a string) is "
                                          "supported.")
            plan.append(("sparse", (spec.index_key, spec.value_key),
                         _check_dtype(spec.dtype, "sparse_types"), int(spec.size)))
        elif not type(spec).__name__ == "FixedLenFeature":
            raise TypeError(f"parse_example: unsupported feature {type(spec).__name__} for key "
                            f"{key!r}; use FixedLenFeature, VarLenFeature, RaggedFeature or "
                            f"SparseFeature.")
    return tuple(plan)


def _values(example, key, dtype, index):
    """The list of feature `key` of one Example ([] when absent), type-checked."""
    feature = example.features.feature.get(key)
    kind = feature.WhichOneof("kind") if feature is not None else None
    if kind is None:
        return []
    if kind != _KIND_OF[dtype]:
        raise op_error(_OP, f"Name: <unknown>, Key: {key}, Index: {index}.  Data types don't "
                            f"match. Expected type: {_TF_KIND[_KIND_OF[dtype]]}, Actual type: "
                            f"{_TF_KIND[kind]}")
    return list(getattr(feature, kind).value)


def _array(values, dtype):
    if dtype is _dt.string:
        out = np.empty(len(values), object)
        out[:] = values
        return out
    return np.asarray(values, dtype.dtype).reshape(len(values))


def _kernel(xp, serialized, plan):
    batched = serialized.ndim == 1
    examples = []
    for data in np.asarray(serialized, object).reshape(-1):
        try:
            examples.append(example_proto.Example.FromString(bytes(data)))
        except example_proto.ProtoError as exc:
            raise op_error(_OP, f"Could not parse example input, value: '{bytes(data)!r}' "
                                f"({exc})") from None
    outs = []
    for kind, keys, dtype, extra in plan:
        rows = [_values(e, keys[-1], dtype, i) for i, e in enumerate(examples)]
        lengths = np.array([len(r) for r in rows], np.int64)
        values = _array([v for r in rows for v in r], dtype)
        if kind == "ragged":
            splits = np.concatenate([[0], np.cumsum(lengths)]).astype(extra.dtype)
            outs += [values, splits]
            continue
        row_ids = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
        if kind == "varlen":
            columns = np.arange(len(values), dtype=np.int64) - np.repeat(
                np.cumsum(lengths) - lengths, lengths)
            width = int(lengths.max()) if len(rows) else 0
        else:
            index_rows = [_values(e, keys[0], _dt.int64, i) for i, e in enumerate(examples)]
            for i, (ix, vals) in enumerate(zip(index_rows, rows)):
                if len(ix) != len(vals):
                    raise op_error(_OP, f"Name: <unknown>, Key: {keys[0]}, Index: {i}.  Number "
                                        f"of indices ({len(ix)}) and values ({len(vals)}) of "
                                        f"SparseFeature differ")
            columns = np.array([c for r in index_rows for c in r], np.int64)
            order = np.lexsort((columns, row_ids))  # row-major, as TF sorts them
            row_ids, columns, values = row_ids[order], columns[order], values[order]
            width = extra
        if batched:
            indices = np.stack([row_ids, columns], axis=1)
            shape = np.array([len(rows), width], np.int64)
        else:
            indices = columns.reshape(-1, 1)
            shape = np.array([width], np.int64)
        outs += [indices, values, shape]
    return tuple(outs)


def _infer(serialized, plan):
    if serialized.dtype != _dt.string:
        raise op_error(_OP, f"serialized must be a string tensor, got {serialized.dtype.name}")
    rank = serialized.shape.rank
    batch = serialized.shape[0] if rank == 1 else None
    specs = []
    for kind, _keys, dtype, extra in plan:
        if kind == "ragged":
            specs += [TensorSpec([None], dtype),
                      TensorSpec([None if batch is None else batch + 1], extra)]
        else:
            width = 2 if rank == 1 else 1
            specs += [TensorSpec([None, width], _dt.int64), TensorSpec([None], dtype),
                      TensorSpec([width], _dt.int64)]
    return tuple(specs)


PARSE_EXAMPLE_VAR_LEN = register_op(
    "ParseExampleVarLen", _kernel, _infer, num_outputs=None, differentiable=False,
    device_types=frozenset({"CPU"}),
    doc="Sparse and ragged features of serialized tf.train.Examples (eager.io.parse_example).")


def parse_var_len(serialized, features) -> dict:
    """The features of any length of `features`, parsed from the string scalar or vector
    `serialized` (see the module doc): {key: SparseTensor or RaggedTensor}."""
    plan = _plan(features)
    if not plan:
        return {}
    parts = list(execute(PARSE_EXAMPLE_VAR_LEN, (serialized,), {"plan": plan}))
    batched = serialized.shape.rank == 1
    out = {}
    for key, (kind, _keys, _dtype, _extra) in zip(sorted(k for k in features if isinstance(
            features[k], (VarLenFeature, RaggedFeature, SparseFeature))), plan):
        if kind == "ragged":
            values, splits = parts.pop(0), parts.pop(0)
            out[key] = RaggedTensor.from_row_splits(values, splits, validate=False) \
                if batched else values
        else:
            out[key] = SparseTensor(parts.pop(0), parts.pop(0), parts.pop(0))
    return out
