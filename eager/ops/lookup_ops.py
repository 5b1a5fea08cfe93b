"""Static lookup tables (`eager.lookup` ≈ `tf.lookup`): `StaticHashTable` maps keys to values
with a default for missing keys; `StaticVocabularyTable` maps a vocabulary to ids and every
other key to one of `num_oov_buckets` extra ids by TensorFlow's Fingerprint64 of the key (of
its decimal text for integer keys), so ids agree with TensorFlow's. Tables are filled once, when
built, from a `KeyValueTensorInitializer` (two tensors) or a `TextFileInitializer` (a file's
lines or columns).

A table is a Python dict on the host, built eagerly. Looking keys up is one op,
`LookupTableFindV2`, whose attribute is the table (the table never changes after it is built,
so the op is pure): it runs eagerly, inside traced functions and in `Dataset.map`, on dense,
ragged (`with_values`) and sparse keys. Like TensorFlow's, the lookup runs on the CPU and has
no gradient.
"""

from __future__ import annotations

import os

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import (FailedPreconditionError, InvalidArgumentError, NotFoundError)
from ..core.dispatch import execute, named
from ..core.registry import register_op
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import Tensor
from .fingerprint import fingerprint64
from .ragged_tensor import RaggedTensor
from .sparse_tensor import SparseTensor

__all__ = ["KeyValueTensorInitializer", "TextFileInitializer", "TextFileIndex",
           "StaticHashTable", "StaticVocabularyTable"]


def _tf_dtype(dtype) -> str:
    return f"<dtype: '{dtype.name}'>"


def _host(value):
    """A numpy element as the Python value a dict keys on (bytes, int, float, bool)."""
    return value.item() if isinstance(value, np.generic) else value


# -- initializers ----------------------------------------------------------------------------------
class KeyValueTensorInitializer:
    """≈ `tf.lookup.KeyValueTensorInitializer(keys, values, key_dtype, value_dtype)`: the
    table's entries from two equally long vectors."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        self._keys = convert_to_tensor(keys, dtype=key_dtype)
        self._values = convert_to_tensor(values, dtype=value_dtype)
        self._name = name or "key_value_init"

    @property
    def key_dtype(self):
        return self._keys.dtype

    @property
    def value_dtype(self):
        return self._values.dtype

    def _entries(self):
        keys, values = self._keys.numpy(), self._values.numpy()
        if keys.shape != values.shape:
            raise InvalidArgumentError(
                None, "LookupTableImportV2",
                f"Expected shape [{','.join(str(d) for d in keys.shape)}] for value, got "
                f"[{','.join(str(d) for d in values.shape)}] [Op:LookupTableImportV2]")
        return zip(keys.reshape(-1).tolist(), values.reshape(-1).tolist())


class TextFileIndex:
    """≈ `tf.lookup.TextFileIndex`: the special column numbers of `TextFileInitializer`."""
    WHOLE_LINE = -2
    LINE_NUMBER = -1


def _column(text, index, line_number, dtype, where):
    if index == TextFileIndex.LINE_NUMBER:
        return line_number
    if index == TextFileIndex.WHOLE_LINE:
        field = text
    else:
        fields = text.split(where[1])
        if index >= len(fields):
            raise InvalidArgumentError(
                None, "InitializeTableFromTextFileV2",
                f"Invalid number of columns in {where[0]} line {line_number} ({text}) : "
                f"expected {index + 1} got {len(fields)} [Op:InitializeTableFromTextFileV2]")
        field = fields[index]
    if dtype is _dt.string:
        return field.encode("utf-8", "surrogateescape")
    try:
        return float(field) if dtype.is_floating else int(field)
    except ValueError:
        raise InvalidArgumentError(
            None, "InitializeTableFromTextFileV2",
            f"Field {field} in line {line_number} is not a valid {dtype.name}. "
            f"[Op:InitializeTableFromTextFileV2]") from None


class TextFileInitializer:
    """≈ `tf.lookup.TextFileInitializer`: entries from a text file, one per line; key and value
    are columns split at `delimiter`, or `TextFileIndex.WHOLE_LINE` (the line) or
    `TextFileIndex.LINE_NUMBER` (its 0-based number, int64)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None, value_index_offset=0):
        self._filename = os.fspath(filename.numpy().decode() if isinstance(filename, Tensor)
                                   else filename)
        self._key_dtype = _dt.as_dtype(key_dtype)
        self._value_dtype = _dt.as_dtype(value_dtype)
        for what, index, dtype in (("key", key_index, self._key_dtype),
                                   ("value", value_index, self._value_dtype)):
            if index < -2:
                raise ValueError(f"Invalid `{what}_index`: {index}.")
            if index == TextFileIndex.LINE_NUMBER and dtype is not _dt.int64:
                raise ValueError(f"`{what}_dtype` must be int64 for `{what}_index` "
                                 f"LINE_NUMBER, got {_tf_dtype(dtype)}.")
            if index == TextFileIndex.WHOLE_LINE and dtype is not _dt.string:
                raise ValueError(f"`{what}_dtype` must be string for `{what}_index` "
                                 f"WHOLE_LINE, got {_tf_dtype(dtype)}.")
        self._key_index, self._value_index = int(key_index), int(value_index)
        self._vocab_size = None if vocab_size is None else int(vocab_size)
        self._delimiter = delimiter
        self._offset = int(value_index_offset)

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)

    def _entries(self):
        try:
            with open(self._filename, "rb") as f:
                lines = f.read().decode("utf-8", "surrogateescape").split("\n")
        except FileNotFoundError:
            raise NotFoundError(None, "InitializeTableFromTextFileV2",
                                f"{self._filename}; No such file or directory "
                                f"[Op:InitializeTableFromTextFileV2]") from None
        if lines and lines[-1] == "":
            lines.pop()
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        if self._vocab_size is not None:
            if len(lines) < self._vocab_size:
                raise InvalidArgumentError(
                    None, "InitializeTableFromTextFileV2",
                    f"Invalid vocab_size in {self._filename}: expected {self._vocab_size} but "
                    f"got {len(lines)} [Op:InitializeTableFromTextFileV2]")
            lines = lines[:self._vocab_size]
        where = (self._filename, self._delimiter)
        entries = []
        for number, text in enumerate(lines):
            key = _column(text, self._key_index, number, self._key_dtype, where)
            value = _column(text, self._value_index, number, self._value_dtype, where)
            if self._value_index == TextFileIndex.LINE_NUMBER:
                value += self._offset
            entries.append((key, value))
        return entries


def _fill(initializer):
    """The dict of `initializer`'s entries, with TensorFlow's error for a key given two
    different values (a repeated key with the same value is allowed)."""
    table = {}
    for key, value in initializer._entries():
        old = table.setdefault(key, value)
        if old != value:
            shown = key.decode("utf-8", "replace") if isinstance(key, bytes) else key
            raise FailedPreconditionError(
                None, "LookupTableImportV2",
                f"HashTable has different value for same key. Key {shown} has {old} and trying "
                f"to add value {value} [Op:LookupTableImportV2]")
    return table


# -- the lookup op ---------------------------------------------------------------------------------
def _find_kernel(xp, keys, table):
    return table._find(np.asarray(keys))


def _find_infer(keys, table):
    return TensorSpec(keys.shape, table.value_dtype)


LOOKUP_TABLE_FIND = register_op(
    "LookupTableFindV2", _find_kernel, _find_infer, differentiable=False,
    device_types=frozenset({"CPU"}),
    doc="Looks keys up in a static table (the `table` attribute): eager.lookup.")


class _StaticTable:
    """What the static tables share: key checks, dense/ragged/sparse keys, `size`."""

    _default = None

    def __init__(self, key_dtype, value_dtype, name):
        self._key_dtype = key_dtype
        self._value_dtype = value_dtype
        self._name = name

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)
    name = property(lambda self: self._name)

    def lookup(self, keys, name=None):
        """The values of `keys` (a dense, ragged or sparse tensor of `key_dtype`), of their
        structure."""
        composite = isinstance(keys, (RaggedTensor, SparseTensor))
        flat = keys.values if composite else keys
        if isinstance(keys, RaggedTensor):
            flat = keys.flat_values
        if not isinstance(flat, Tensor):
            flat = convert_to_tensor(flat, dtype=self._key_dtype)
        if flat.dtype is not self._key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {_tf_dtype(self._key_dtype)}, "
                            f"received: {_tf_dtype(flat.dtype)}")
        values = execute(LOOKUP_TABLE_FIND, (flat,), {"table": self})
        if name is not None:
            values = named(values, name)
        if isinstance(keys, RaggedTensor):
            return keys.with_flat_values(values)
        if isinstance(keys, SparseTensor):
            return keys.with_values(values)
        return values

    __getitem__ = lambda self, keys: self.lookup(keys)  # noqa: E731 - TensorFlow's alias


class StaticHashTable(_StaticTable):
    """≈ `tf.lookup.StaticHashTable(initializer, default_value)`: a key-value map filled once
    from `initializer`; missing keys give `default_value`."""

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        super().__init__(initializer.key_dtype, initializer.value_dtype, name or "hash_table")
        self._default_tensor = convert_to_tensor(default_value, dtype=self._value_dtype)
        self._default = _host(self._default_tensor.numpy()[()]) \
            if self._default_tensor.shape.rank == 0 else None
        if self._default is None:
            raise ValueError(f"`default_value` must be a scalar, got shape "
                             f"{self._default_tensor.shape}.")
        self._initializer = initializer
        self._table = _fill(initializer)

    @property
    def default_value(self):
        return self._default_tensor

    def size(self, name=None):
        """The number of entries (int64 scalar)."""
        return convert_to_tensor(len(self._table), dtype=_dt.int64)

    def export(self, name=None):
        """(keys, values): every entry, in the order they were added (TensorFlow's order is
        its hash table's)."""
        keys = list(self._table)
        np_keys = np.array(keys, dtype=object if self._key_dtype is _dt.string else
                           self._key_dtype.as_numpy_dtype).reshape(len(keys))
        values = np.array([self._table[k] for k in keys],
                          dtype=object if self._value_dtype is _dt.string else
                          self._value_dtype.as_numpy_dtype).reshape(len(keys))
        return (convert_to_tensor(np_keys, dtype=self._key_dtype),
                convert_to_tensor(values, dtype=self._value_dtype))

    def _find(self, keys):
        get, default = self._table.get, self._default
        out = np.empty(keys.shape, dtype=object if self._value_dtype is _dt.string else
                       self._value_dtype.as_numpy_dtype)
        flat = out.reshape(-1)
        for i, key in enumerate(keys.reshape(-1).tolist()):
            flat[i] = get(key, default)
        return out


class StaticVocabularyTable(_StaticTable):
    """≈ `tf.lookup.StaticVocabularyTable(initializer, num_oov_buckets)`: the vocabulary's ids
    (int64 values of `initializer`), and for any other key `vocab_size + Fingerprint64(key) %
    num_oov_buckets` (see the module doc)."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        if initializer is not None:
            key_dtype = initializer.key_dtype
            if key_dtype not in (_dt.int64, _dt.string):
                raise TypeError(f"Invalid `key_dtype`, expected one of (tf.int64, tf.string), "
                                f"but got {_tf_dtype(key_dtype)}.")
            if lookup_key_dtype is not None and \
                    _dt.as_dtype(lookup_key_dtype).is_integer != key_dtype.is_integer:
                raise TypeError(f"Invalid `key_dtype`, expected "
                                f"{'integer' if key_dtype.is_integer else 'non-integer'} but "
                                f"got {_tf_dtype(_dt.as_dtype(lookup_key_dtype))}.")
            if initializer.value_dtype is not _dt.int64:
                raise TypeError(f"Invalid `value_dtype`, expected <dtype: 'int64'> but got "
                                f"{_tf_dtype(initializer.value_dtype)}.")
            self._table = _fill(initializer)
        else:
            key_dtype = _dt.string
            self._table = {}
        key_dtype = _dt.as_dtype(lookup_key_dtype) if lookup_key_dtype is not None else key_dtype
        if key_dtype is not _dt.string and not key_dtype.is_integer:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got "
                            f"{_tf_dtype(key_dtype)}")
        super().__init__(key_dtype, _dt.int64, name or "vocab_table")
        self._initializer = initializer
        self._num_oov_buckets = int(num_oov_buckets)

    def size(self, name=None):
        """Vocabulary size plus `num_oov_buckets` (int64 scalar)."""
        return convert_to_tensor(len(self._table) + self._num_oov_buckets, dtype=_dt.int64)

    def _find(self, keys):
        table, base, buckets = self._table, len(self._table), self._num_oov_buckets
        text = self._key_dtype is not _dt.string
        out = np.empty(keys.shape, dtype=np.int64)
        flat = out.reshape(-1)
        for i, key in enumerate(keys.reshape(-1).tolist()):
            value = table.get(key)
            if value is None:
                value = base + fingerprint64(str(key).encode() if text else key) % buckets
            flat[i] = value
        return out
