"""CSV files as datasets: `CsvDataset` (one tuple of scalars per record) and
`make_csv_dataset` (batches of `{column name: values}`, with an optional label), with
TensorFlow 2.21's element structures, defaults and column type inference.

Both are pipelines of existing steps: each file's lines (`TextLineDataset`, its header line
skipped), an empty line dropped, each line parsed by `eager.io.decode_csv`'s op, and for
`make_csv_dataset` shuffling, repetition and batching. Local files only.
"""

from __future__ import annotations

import collections
import glob
import os

import numpy as np

from ..base import dtypes as _dt
from ..ops.parsing_ops import _split_csv, decode_csv
from ..tensor import Tensor
from .dataset import Dataset
from .file_datasets import TextLineDataset

__all__ = ["CsvDataset", "make_csv_dataset"]


def _filenames(filenames) -> list:
    if isinstance(filenames, Tensor):
        filenames = np.asarray(filenames.numpy(), object).reshape(-1).tolist()
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    return [f.decode() if isinstance(f, bytes) else os.fspath(f) for f in filenames]


def _records(filenames, header, compression_type):
    """The non-empty lines of every file, in order, each file's first line skipped with
    `header`."""
    per_file = [TextLineDataset(f, compression_type).skip(1 if header else 0)
                for f in _filenames(filenames)]
    if not per_file:
        raise ValueError("CsvDataset: no files given.")
    lines = per_file[0]
    for more in per_file[1:]:
        lines = lines.concatenate(more)
    return lines.filter(lambda line: line != "")


class CsvDataset(Dataset):
    """≈ `tf.data.experimental.CsvDataset(filenames, record_defaults, ...)`: one tuple of scalar
    tensors per CSV record, a column's dtype its default's (a dtype: required). `select_cols`
    (sorted column indices) keeps some columns; `record_defaults` then lists only those."""

    __slots__ = ()

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None, exclude_cols=None, name=None):
        if select_cols is not None and exclude_cols is not None:
            raise ValueError("Either select_cols or exclude_cols should be empty")
        lines = _records(filenames, header, compression_type)
        defaults = list(record_defaults)
        if select_cols is None:
            picked, width = None, len(defaults)
        else:
            picked = [int(c) for c in select_cols]
            if picked != sorted(set(picked)):
                raise ValueError("select_cols is not strictly increasing.")
            if len(picked) != len(defaults):
                raise ValueError("Length of select_cols and record_defaults do not match.")
            width = max(picked[-1] + 1, _first_width(filenames, header, field_delim))
            full = [[""]] * width
            for i, d in zip(picked, defaults):
                full[i] = d
            defaults = full

        def parse(line):
            columns = decode_csv(line, defaults, field_delim, use_quote_delim, na_value)
            if picked is not None:
                columns = [columns[i] for i in picked]
            return tuple(columns)
        super().__init__(lines.map(parse)._node)


def _first_width(filenames, header, field_delim):
    """The number of fields of the first record (0 when there is none): the columns that
    `select_cols` leaves out are still parsed."""
    rows = _sample(_filenames(filenames), header, field_delim, 1)
    return len(rows[0]) if rows else 0


def _infer_type(texts):
    """TensorFlow's inference from sample values: int32, else int64, else float32, else
    string (empty fields say nothing)."""
    kinds = [_dt.int32, _dt.int64, _dt.float32, _dt.string]
    best = 0
    for text in texts:
        if text == "":
            continue
        while best < 3:
            try:
                if best < 2:
                    value = int(text)
                    if best == 0 and not -2**31 <= value < 2**31:
                        raise ValueError(text)
                    if not -2**63 <= value < 2**63:
                        raise ValueError(text)
                else:
                    float(text)
                break
            except ValueError:
                best += 1
    return kinds[best]


def _header(path, field_delim):
    with open(path, encoding="utf-8") as f:
        return _split_csv(f.readline().rstrip("\r\n"), field_delim)


def _sample(paths, header, field_delim, count):
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()[1 if header else 0:]
        rows += [_split_csv(line, field_delim) for line in lines if line]
        if len(rows) >= count:
            break
    return rows[:count]


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name=None, select_columns=None, field_delim=",",
                     use_quote_delim=True, na_value="", header=True, num_epochs=None,
                     shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False,
                     num_rows_for_inference=100, compression_type=None, ignore_errors=False,
                     encoding="utf-8"):
    """≈ `tf.data.experimental.make_csv_dataset`: batches of an OrderedDict {column: [batch]}
    (and the `label_name` column as a separate tensor: `(features, label)`), the columns named
    by the header or `column_names`, typed by `column_defaults` or inferred from the first
    `num_rows_for_inference` rows; shuffled (`shuffle_buffer_size`, `shuffle_seed`) and
    repeated `num_epochs` times (None: forever) before batching."""
    patterns = _filenames(file_pattern)
    paths = [p for pattern in patterns for p in sorted(glob.glob(pattern))]
    if not paths:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    if column_names is None:
        if not header:
            raise ValueError("Expected file header names to be provided, or `header=True`.")
        column_names = _header(paths[0], field_delim)
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError("Expected `column_names` to be unique.")
    if select_columns is not None:
        indices = sorted(c if isinstance(c, int) else column_names.index(c)
                         if c in column_names else _missing(c, column_names)
                         for c in select_columns)
    else:
        indices = list(range(len(column_names)))
    names = [column_names[i] for i in indices]
    if label_name is not None and label_name not in names:
        raise ValueError(f"`label_name` provided must be one of the columns: {names}. "
                         f"Received: {label_name}.")
    if column_defaults is not None:
        defaults = list(column_defaults)
        if len(defaults) == len(column_names) and len(indices) != len(column_names):
            defaults = [defaults[i] for i in indices]
        if len(defaults) != len(indices):
            raise ValueError("The number of `column_defaults` must equal the number of "
                             "columns (or of `select_columns`).")
        defaults = [d if isinstance(d, (list, tuple, _dt.DType)) else [d] for d in defaults]
    else:
        rows = _sample(paths, header, field_delim, num_rows_for_inference)
        defaults = []
        for i in indices:
            dtype = _infer_type([r[i] if i < len(r) else "" for r in rows])
            defaults.append([b"" if dtype is _dt.string else
                             np.array(0, dtype.as_numpy_dtype)])
    dataset = CsvDataset(paths, defaults, compression_type=compression_type, header=header,
                         field_delim=field_delim, use_quote_delim=use_quote_delim,
                         na_value=na_value, select_cols=indices)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size)

    def as_dict(*columns):
        features = collections.OrderedDict(zip(names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label
    dataset = dataset.map(as_dict)
    return dataset.prefetch(-1 if prefetch_buffer_size is None else prefetch_buffer_size)


def _missing(column, names):
    raise ValueError(f"Column {column} in `select_columns` is not one of the columns: {names}.")
