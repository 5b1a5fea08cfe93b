"""`TFRecordWriter` and `TFRecordOptions`: TFRecord files (`eager.base.record_framing`) that
TensorFlow's `TFRecordDataset` reads; `eager.data.TFRecordDataset` reads them back."""

from __future__ import annotations

from ..base import record_framing as _framing
from ..base.errors import InvalidArgumentError
from ..ops.io_ops import as_path, file_error

__all__ = ["TFRecordWriter", "TFRecordOptions", "TFRecordCompressionType"]


class TFRecordCompressionType:
    NONE = 0
    ZLIB = 1
    GZIP = 2


_BY_NUMBER = {0: "", 1: "ZLIB", 2: "GZIP"}


class TFRecordOptions:
    """≈ `tf.io.TFRecordOptions(compression_type=...)` ("", "GZIP" or "ZLIB"; other fields
    are accepted and not used)."""

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        self.compression_type = compression_type_of(compression_type)


def compression_type_of(value) -> str:
    """A compression given as None, a name, a TFRecordCompressionType number or options."""
    if value is None:
        return ""
    if isinstance(value, TFRecordOptions):
        return value.compression_type
    if isinstance(value, int):
        return _BY_NUMBER.get(value, str(value))
    if isinstance(value, bytes):
        value = value.decode()
    value = str(value)
    if value not in _framing.COMPRESSIONS:
        raise ValueError(f"Unsupported compression_type: {value!r} (\"\", \"GZIP\" or "
                         f"\"ZLIB\")")
    return value


class TFRecordWriter:
    """≈ `tf.io.TFRecordWriter(path, options=None)`: writes records (bytes or str) framed as
    TensorFlow's, compressed as `options` says."""

    def __init__(self, path, options=None):
        self._path = as_path(path.numpy() if hasattr(path, "numpy") else path)
        compression = compression_type_of(options)
        try:
            self._raw = open(self._path, "wb")
        except OSError as exc:
            raise file_error("TFRecordWriter", exc, self._path) from None
        self._stream = _framing.open_compressed_writer(self._raw, compression)

    def write(self, record):
        if hasattr(record, "numpy"):
            record = record.numpy()
        if isinstance(record, str):
            record = record.encode("utf-8")
        if not isinstance(record, bytes):
            raise InvalidArgumentError(None, None, f"TFRecordWriter.write takes bytes, got "
                                                   f"{type(record).__name__}")
        self._stream.write(_framing.frame(record))

    def flush(self):
        self._stream.flush()
        if self._stream is not self._raw:
            self._raw.flush()

    def close(self):
        if self._raw.closed:
            return
        self._stream.close()
        if not self._raw.closed:
            self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        raw = getattr(self, "_raw", None)
        if raw is not None and not raw.closed:
            self.close()


