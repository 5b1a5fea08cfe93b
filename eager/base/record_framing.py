"""TFRecord framing: each record is its length (little-endian uint64), the masked CRC-32C of
those 8 bytes (uint32), the data, and the masked CRC-32C of the data, as TensorFlow writes
`.tfrecord` files. "GZIP" and "ZLIB" compress the whole framed stream.

CRC-32C (Castagnoli) is computed in Python from a 256-entry table (about 10 MB/s): TFRecord
files here are written and read a record at a time, and the checks cover every byte.
"""

from __future__ import annotations

import gzip
import io
import struct
import zlib

__all__ = ["crc32c", "masked_crc32c", "frame", "RecordReader", "RecordCorruptedError",
           "open_compressed_writer", "open_compressed_reader", "COMPRESSIONS"]

COMPRESSIONS = ("", "GZIP", "ZLIB")
_MASK_DELTA = 0xA282EAD8


def _table():
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TensorFlow's masked CRC: rotated right by 15 bits plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(record: bytes) -> bytes:
    length = struct.pack("<Q", len(record))
    return (length + struct.pack("<I", masked_crc32c(length)) + record
            + struct.pack("<I", masked_crc32c(record)))


class RecordCorruptedError(Exception):
    """A record that fails its checks: `truncated` (the file ends inside it) or not, and the
    offset where it starts."""

    def __init__(self, offset: int, truncated: bool):
        super().__init__(offset, truncated)
        self.offset = offset
        self.truncated = truncated


class RecordReader:
    """The records of a (decompressed) binary stream, checked; `offset` is where the next one
    starts."""

    __slots__ = ("_stream", "offset")

    def __init__(self, stream, offset: int = 0):
        self._stream = stream
        self.offset = offset

    def next_record(self):
        """The next record's bytes, None at the end; RecordCorruptedError for a bad one."""
        header = self._stream.read(12)
        if not header:
            return None
        if len(header) < 12:
            raise RecordCorruptedError(self.offset, True)
        length_bytes, length_crc = header[:8], struct.unpack("<I", header[8:])[0]
        if masked_crc32c(length_bytes) != length_crc:
            raise RecordCorruptedError(self.offset, False)
        (length,) = struct.unpack("<Q", length_bytes)
        body = self._stream.read(length + 4)
        if len(body) < length + 4:
            raise RecordCorruptedError(self.offset, True)
        data, data_crc = body[:length], struct.unpack("<I", body[length:])[0]
        if masked_crc32c(data) != data_crc:
            raise RecordCorruptedError(self.offset + 12, False)  # (TF names the data's offset)
        self.offset += 12 + length + 4
        return data


class _ZlibReader(io.RawIOBase):
    """A readable stream of zlib-compressed data (TensorFlow's "ZLIB": a zlib header)."""

    def __init__(self, raw):
        self._raw = raw
        self._inflate = zlib.decompressobj()
        self._pending = b""

    def readable(self):
        return True

    def readinto(self, buffer):
        while not self._pending:
            chunk = self._raw.read(64 * 1024)
            if not chunk:
                self._pending = self._inflate.flush()
                if not self._pending:
                    return 0
                break
            self._pending = self._inflate.decompress(chunk)
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self):
        self._raw.close()
        super().close()


class _ZlibWriter(io.RawIOBase):
    def __init__(self, raw):
        self._raw = raw
        self._deflate = zlib.compressobj()

    def writable(self):
        return True

    def write(self, data):
        self._raw.write(self._deflate.compress(bytes(data)))
        return len(data)

    def close(self):
        if not self.closed:
            self._raw.write(self._deflate.flush())
            self._raw.close()
        super().close()


def open_compressed_reader(raw, compression: str):
    """A binary stream of `raw`'s decompressed bytes (`compression` in COMPRESSIONS)."""
    if compression == "GZIP":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "ZLIB":
        return io.BufferedReader(_ZlibReader(raw))
    return raw


def open_compressed_writer(raw, compression: str):
    if compression == "GZIP":
        return gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)
    if compression == "ZLIB":
        return _ZlibWriter(raw)
    return raw
