"""The file datasets TensorFlow exposes as classes: `TextLineDataset` and `TFRecordDataset`
(their nodes are `eager.data.files.TextLines` and `TFRecords`)."""

from __future__ import annotations

from . import files
from .dataset import Dataset

__all__ = ["TextLineDataset", "TFRecordDataset"]


class TextLineDataset(Dataset):
    """≈ `tf.data.TextLineDataset(filenames, compression_type=None, buffer_size=None,
    num_parallel_reads=None)`: one scalar string per line of each file, without its newline
    (see `eager.data.files` for lines, compression and parallel reads). `filenames` is a string,
    a list or tensor of strings, or a dataset of scalar strings."""

    __slots__ = ()

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        node = files.filenames_node(filenames._node if isinstance(filenames, Dataset)
                                    else filenames)
        super().__init__(files.TextLines(node, compression_type, buffer_size,
                                         num_parallel_reads))


class TFRecordDataset(Dataset):
    """≈ `tf.data.TFRecordDataset(filenames, compression_type=None, buffer_size=None,
    num_parallel_reads=None)`: one scalar string per record of each TFRecord file (written by
    TensorFlow or `eager.io.TFRecordWriter`); a record failing its CRC is DataLossError."""

    __slots__ = ()

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        node = files.filenames_node(filenames._node if isinstance(filenames, Dataset)
                                    else filenames)
        super().__init__(files.TFRecords(node, compression_type, buffer_size,
                                         num_parallel_reads))
